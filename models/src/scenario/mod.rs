//! Scenario files: TOML, one design variant each, validated once.
//!
//! TOML → the shared tables (this module) and the model's own tables (the
//! model's loader, found in the registry by `model = "..."`) → the engine's
//! configuration. `--set key.path=value` overrides edit the TOML tree before
//! validation, so an override gets exactly the checks of the file, and a
//! mistake in one is blamed on the `--set` argument, not on a line of the file.

mod common;
mod error;
pub mod format;
mod locate;
mod network;
mod preset;
mod routes;
mod unused;

pub use error::ScenarioError;
pub use locate::Override;

use crate::core::input::{did_you_mean, invalid, Invalid};
use crate::core::wire::ActorEnds;
use crate::core::BuildInput;
use crate::registry::{self, System};
use locate::{apply_overrides, Locator};
use sim::SituationId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
/// What a scenario expects of its runs, or what a sweep found.
pub enum Verdict {
    /// Every run holds.
    Holds,
    /// Some run breaks an invariant.
    Violation,
    /// No violation, but some run hit a limit.
    Inconclusive,
}

impl Verdict {
    /// `holds`, `violation` or `inconclusive`, as scenario files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violation => "violation",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// How `check` and `verify` look for a failure within a scenario's `runs`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Seeds 0..runs, each drawing its own fault mix (swarm testing).
    #[default]
    Seeds,
    /// Coverage-guided mutation of records ([`sim::coverage`]), `runs`
    /// schedules at most: for bugs that need several rare faults at once.
    Coverage,
}

impl Strategy {
    /// The name of its scenario key, `max_steps`, `max_time` or `max_queue`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Seeds => "seeds",
            Strategy::Coverage => "coverage",
        }
    }
}

/// One protection of a holding scenario: the overrides that remove it
/// (several when layers back each other up), and the invariant their
/// removal must break, if the scenario names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protection {
    /// The overrides that remove it, applied together.
    pub overrides: Vec<Override>,
    /// The invariant the removal must break, if one is named.
    pub breaks: Option<&'static str>,
}

impl Protection {
    /// As people read it: `client.key=none + bank.accepts_key=false`.
    pub fn describe(&self) -> String {
        self.overrides
            .iter()
            .map(|o| format!("{}={}", o.key, o.value))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

#[derive(Clone, Debug, PartialEq)]
/// A scenario's `[expect]` table, validated.
pub struct Expect {
    /// The verdict it must get.
    pub verdict: Verdict,
    /// For a violation: the invariant that must break.
    pub invariant: Option<&'static str>,
    /// Situations a run of this scenario must reach for "holds" to count.
    pub situations: Vec<SituationId>,
    /// Each must turn "holds" into a violation when removed.
    pub protections: Vec<Protection>,
    /// Most work per operation a holding sweep may take: a design that holds
    /// only by doing its work many times over does not match.
    pub max_load: Vec<LoadBound>,
    /// The design warnings its settings are meant to carry: a holding
    /// scenario with a warning it does not list, or whose runs never reach
    /// one it lists, holds by luck, and a listed warning its settings no
    /// longer break is stale.
    pub warnings: Vec<&'static str>,
}

/// One `[expect].max_load` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadBound {
    /// As written: `attempts`, `consumer`, `bank`.
    pub name: &'static str,
    /// What it counts.
    pub of: crate::core::LoadOf,
    /// The most per operation (1.0 = no retry, no redelivery).
    pub max: f64,
}

/// A validated scenario: what to run and what it must give.
pub struct Scenario {
    /// Its name: the file name without `.toml`.
    pub name: String,
    /// The file as shown in messages (and the overrides, if any).
    pub file: String,
    /// The text as written, before overrides: ablations reload it.
    pub text: String,
    /// The `--set` overrides applied.
    pub overrides: Vec<Override>,
    /// Its one-line summary.
    pub summary: String,
    /// FNV-1a of the effective text (after overrides): repro files check it.
    pub hash: u64,
    /// What its runs must give; `None` for a design being explored, whose
    /// file states no `[expect]` yet (only `verify` needs one).
    pub expect: Option<Expect>,
    /// Seeds a check runs by default (`run.runs`).
    pub runs: u64,
    /// How `check` searches by default: seeds, or the coverage-guided search.
    pub strategy: Strategy,
    /// Gaps in the design its settings show, reached by a run or not
    /// (docs/design-warnings.md).
    pub hazards: Vec<crate::core::Hazard>,
    /// The model to run: world and actors.
    pub system: System,
    /// The folder of the scenario's file, where its relative paths point.
    pub dir: Option<std::path::PathBuf>,
}

/// FNV-1a, the hash of scenario texts in repro files.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Top-level keys neither shared nor the model's.
fn check_top_level(
    effective: &str,
    model_tables: &[&'static str],
    model: &str,
) -> Result<(), Invalid> {
    let Ok(doc) = effective.parse::<toml::Table>() else {
        return Ok(()); // the parse error is reported by the typed parse
    };
    let known: Vec<&str> = common::KEYS.iter().chain(model_tables).copied().collect();
    for key in doc.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        let help = match did_you_mean(key, known.iter().copied()) {
            Some(b) => format!("did you mean `{b}`?"),
            None => format!(
                "a {model} scenario has the keys {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        return Err(invalid(
            vec![crate::core::input::Seg::Name(key.clone())],
            format!("unknown key `{key}` for the {model} model"),
            help,
        ));
    }
    Ok(())
}

impl Scenario {
    /// Loads a scenario from its text; `file` names it in errors.
    pub fn load(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(file, text, &[])
    }

    /// Loads a scenario with `--set` overrides applied; its relative paths
    /// (an external program) point into the folder of `file`, the name it has
    /// in messages.
    pub fn load_with(
        file: &str,
        text: &str,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let dir = std::path::Path::new(file).parent().map(|d| {
            if d.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                d
            }
        });
        Scenario::load_at(file, dir, text, overrides)
    }

    /// Loads a scenario whose relative paths point into `dir` (`None`: a
    /// scenario that is no file, such as a built-in one), and checks that
    /// each of its protections can be removed from the file as written (its
    /// overrides make a valid scenario), so `verify` never meets a broken
    /// protection late. The protections describe the file, not a variant
    /// the user made with `--set`: `check --set` explores a design the
    /// file's expectations may not fit, and must not be refused for them
    /// (`verify`, which judges the expectations, takes no overrides).
    pub fn load_at(
        file: &str,
        dir: Option<&std::path::Path>,
        text: &str,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        // A variant (`--set`, a protection removed) keeps the fault entries
        // of the file as written even where its settings no longer send what
        // they name: they were meaningful in the design it varies.
        let written = if overrides.is_empty() {
            None
        } else {
            Scenario::build(file, dir, text, &[], &[])
                .ok()
                .map(|(s, _)| s)
        };
        let written_ends = written.as_ref().map(Scenario::ends).unwrap_or_default();
        let (scenario, _) = Scenario::build(file, dir, text, overrides, &written_ends)
            .map_err(|e| error::made_by_overrides(e, written.is_some(), overrides))?;
        let (protections, ends) = match &written {
            Some(w) => (w.protections(), written_ends),
            None if overrides.is_empty() => (scenario.protections(), scenario.ends()),
            // Only its overrides make the file valid: as written it has
            // no protections to check.
            None => return Ok(scenario),
        };
        let loc = Locator::new(file, text, text, &[]);
        for (i, p) in protections.iter().enumerate() {
            if let Err(e) = Scenario::build(file, dir, text, &p.overrides, &ends) {
                use crate::core::input::Seg::{Index, Key};
                return Err(loc.invalid(invalid(
                    vec![Key("expect"), Key("protections"), Index(i)],
                    format!(
                        "the protection `{}` cannot be removed: {}",
                        p.describe(),
                        e.message
                    ),
                    match e.help {
                        // A mistake in the override's own value has its fix.
                        Some(h) if e.file.starts_with("--set ") => h,
                        // One the file's other settings refuse beside it
                        // does not: the file has what that fix asks for.
                        Some(h) => format!(
                            "verify removes a protection by loading the file with its overrides, so each must leave a design the model can build; name another protection, or drop this one (the variant alone would need: {h})"
                        ),
                        None => "write each override as key=value with a key and value the scenario format allows".into(),
                    },
                )));
            }
        }
        Ok(scenario)
    }

    /// The protections its `[expect]` names: none without one.
    pub fn protections(&self) -> &[Protection] {
        self.expect.as_ref().map_or(&[], |e| &e.protections)
    }

    /// The invariant its `[expect]` says must break, if it names one.
    pub fn expected_invariant(&self) -> Option<&'static str> {
        self.expect.as_ref().and_then(|e| e.invariant)
    }

    /// The verdict its `[expect]` states; `None` without one.
    pub fn expected_verdict(&self) -> Option<Verdict> {
        self.expect.as_ref().map(|e| e.verdict)
    }

    /// The expectation as people read it; `no [expect]` without one.
    pub fn describe_expect(&self) -> String {
        self.expect
            .as_ref()
            .map_or_else(|| "no [expect]".to_string(), Expect::describe)
    }

    /// Judges a sweep against its `[expect]`. Without one it never matches:
    /// the mismatch names the verdict found and the table to add, so an
    /// explored design becomes a scenario `verify` can hold to it.
    pub fn judge(&self, sum: &sim::Summary) -> Judgement {
        match &self.expect {
            Some(e) => e.judge(sum, &self.hazards),
            None => Judgement::unstated(sum),
        }
    }

    /// Parses, validates and builds; returns the text with overrides applied too.
    fn build(
        file: &str,
        dir: Option<&std::path::Path>,
        text: &str,
        overrides: &[Override],
        written: &[(String, ActorEnds)],
    ) -> Result<(Scenario, String), ScenarioError> {
        let effective = apply_overrides(file, text, overrides)?;
        let loc = Locator::new(file, text, &effective, overrides);
        let dto: common::CommonDto = toml::from_str(&effective).map_err(|e| loc.toml(&e))?;
        let model = registry::model(&dto.model).ok_or_else(|| {
            let names = registry::model_names();
            let help = match did_you_mean(&dto.model, names.iter().copied()) {
                Some(b) => format!("did you mean \"{b}\"? The models are {}", names.join(", ")),
                None => format!("the models are {}", names.join(", ")),
            };
            loc.invalid(invalid(
                vec![crate::core::input::Seg::Key("model")],
                format!("unknown model \"{}\"", dto.model),
                help,
            ))
        })?;
        // A system's preset writes its settings beneath the file's own; the
        // model reads the result, so the system's rules apply to both alike.
        let expanded = preset::expand(&effective, model.presets()).map_err(|i| loc.invalid(i))?;
        let loc =
            Locator::new(file, text, &expanded.text, overrides).with_presets(&expanded.applied);
        check_top_level(&expanded.text, model.tables(), model.name())
            .map_err(|i| loc.invalid(i))?;
        // `list` and every report show the summary as one line of a table.
        if dto.summary.trim().contains(char::is_control) {
            return Err(loc.invalid(invalid(
                vec![crate::core::input::Seg::Key("summary")],
                "the summary holds a line break or another control character",
                "write it on one line; longer explanations go in # comments above it",
            )));
        }
        let situations: Vec<_> = model.situations().iter().collect();
        let expect = dto
            .expect
            .as_ref()
            .map(|e| common::expect(e, &situations, model.metrics()))
            .transpose()
            .map_err(|i| loc.invalid(i))?;
        let (fault_phase_us, limits) = common::limits(&dto.run).map_err(|i| loc.invalid(i))?;
        let strategy = common::strategy(&dto.run).map_err(|i| loc.invalid(i))?;
        let delays = network::delays(&dto.network).map_err(|i| loc.invalid(i))?;
        let built = model
            .build(&BuildInput {
                text: &expanded.text,
                fault_phase_us,
                max_time_us: limits.max_time_us,
                dir,
                delays: &delays,
            })
            .map_err(|e| loc.load(e))?;
        let mut hazards = built.hazards;
        // Read from the text the file and `--set` wrote, before presets.
        hazards.extend(
            format::check(text, &effective, dto.format, model.meaning_changes())
                .map_err(|i| loc.invalid(i))?,
        );
        unused::placed(&loc, &mut hazards);
        let mut unread = built.unused;
        unread.extend(network::unused(&dto.network));
        hazards.extend(unused::reported(&loc, &effective, overrides, &unread));
        let (names, nodes): (Vec<String>, Vec<_>) = built.actors.into_iter().unzip();
        let kinds = model.message_kinds();
        let ends: Vec<_> = nodes.iter().map(registry::Node::ends).collect();
        // `--set network.<key>`, the changes a user asked of every link.
        let set: Vec<&str> = overrides
            .iter()
            .filter_map(|o| o.key.strip_prefix("network."))
            .filter(|k| !k.contains('.'))
            .collect();
        let world = network::world(
            &dto,
            &names,
            built.actors_hint,
            (model.name(), &kinds, &ends),
            (written, &set),
            fault_phase_us,
            limits,
        )
        .map_err(|i| loc.invalid(i))?;
        let name = std::path::Path::new(file)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(file)
            .to_string();
        let shown = if overrides.is_empty() {
            file.to_string()
        } else {
            let sets: Vec<String> = overrides.iter().map(Override::shown).collect();
            format!("{file} with {}", sets.join(" "))
        };
        let scenario = Scenario {
            name,
            file: shown,
            text: text.to_string(),
            overrides: overrides.to_vec(),
            summary: dto.summary.trim().to_string(),
            hash: fnv1a(effective.as_bytes()),
            expect,
            runs: dto.run.runs,
            strategy,
            hazards,
            system: System {
                world,
                nodes,
                model,
            },
            dir: dir.map(std::path::Path::to_path_buf),
        };
        Ok((scenario, effective))
    }

    /// The scenario with `protection` removed: its overrides applied on top
    /// of this scenario's own.
    pub fn ablated(&self, file: &str, protection: &Protection) -> Result<Scenario, ScenarioError> {
        let mut overrides = self.overrides.clone();
        overrides.extend(protection.overrides.iter().cloned());
        Scenario::build(
            file,
            self.dir.as_deref(),
            &self.text,
            &overrides,
            &self.ends(),
        )
        .map(|(s, _)| s)
    }

    /// Each actor's name and its ends as configured: which links carry
    /// which kinds of message in this scenario.
    fn ends(&self) -> Vec<(String, ActorEnds)> {
        let names = &sim::Model::world(&self.system).actor_names;
        names
            .iter()
            .cloned()
            .zip(self.system.nodes.iter().map(registry::Node::ends))
            .collect()
    }

    /// The scenario's own search, as `check` and `verify` run it: every seed
    /// of `seeds` on `jobs` threads, or a coverage-guided search of at most
    /// `seeds.len()` schedules seeded by `seeds.start`, which ends at its
    /// first failure (its `seed` is then the schedule's index in the search).
    pub fn search(
        &self,
        seeds: sim::SeedRange,
        jobs: usize,
        stop: &std::sync::atomic::AtomicBool,
    ) -> sim::Summary {
        match self.strategy {
            Strategy::Seeds => sim::explore(&self.system, seeds, jobs, stop, &|_| {}),
            Strategy::Coverage => self.coverage(seeds, stop).summary,
        }
    }

    /// Like [`search`](Scenario::search), but seeds stop at the lowest failing one.
    pub fn search_failure(
        &self,
        seeds: sim::SeedRange,
        jobs: usize,
        stop: &std::sync::atomic::AtomicBool,
    ) -> sim::Summary {
        match self.strategy {
            Strategy::Seeds => sim::find_failure(&self.system, seeds, jobs, stop),
            Strategy::Coverage => self.coverage(seeds, stop).summary,
        }
    }

    /// The coverage-guided search of `seeds.len()` schedules seeded by `seeds.start`.
    pub fn coverage(
        &self,
        seeds: sim::SeedRange,
        stop: &std::sync::atomic::AtomicBool,
    ) -> sim::CoverageReport {
        let cfg = sim::CoverageConfig::new(seeds.start, seeds.len());
        sim::coverage_search(&self.system, &cfg, stop)
    }
}

// ------------------------------------------------------------------ judging

/// A sweep's result held against a scenario's `[expect]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// The verdict found.
    pub found: Verdict,
    /// The invariant of the lowest failing seed (`model-panic` for a panic).
    pub invariant: Option<&'static str>,
    /// The lowest failing seed, if any.
    pub lowest_failing_seed: Option<u64>,
    /// Situations the expectation names that no run reached.
    pub missing: Vec<&'static str>,
    /// Why it does not match; `None` when it does.
    pub mismatch: Option<String>,
}

impl Judgement {
    /// Whether the sweep gave what the scenario expects.
    pub fn matched(&self) -> bool {
        self.mismatch.is_none()
    }

    /// A sweep of a scenario that states no `[expect]`.
    fn unstated(sum: &sim::Summary) -> Judgement {
        let (found, invariant) = Judgement::found_in(sum);
        let table = match invariant {
            Some(i) => format!("verdict = \"{}\" and invariant = \"{i}\"", found.as_str()),
            None => format!("verdict = \"{}\"", found.as_str()),
        };
        let mismatch = if sum.tally.schedules == 0 {
            "no seed ran".to_string()
        } else {
            format!("the file states no [expect]; to hold it to what this sweep found, add an [expect] table with {table}")
        };
        Judgement {
            found,
            invariant,
            lowest_failing_seed: sum.first_failure.as_ref().map(|f| f.seed),
            missing: Vec::new(),
            mismatch: Some(mismatch),
        }
    }

    /// The verdict and invariant of a sweep.
    pub fn found_in(sum: &sim::Summary) -> (Verdict, Option<&'static str>) {
        match &sum.first_failure {
            Some(f) => match &f.outcome {
                sim::Outcome::Violation(v) => (Verdict::Violation, Some(v.invariant)),
                _ => (Verdict::Violation, Some("model-panic")),
            },
            None if sum.tally.inconclusive > 0 => (Verdict::Inconclusive, None),
            None => (Verdict::Holds, None),
        }
    }
}

impl Expect {
    /// The expectation as people read it: `violation (no-duplicate-effect)`.
    pub fn describe(&self) -> String {
        match self.invariant {
            Some(i) => format!("{} ({i})", self.verdict.as_str()),
            None => self.verdict.as_str().to_string(),
        }
    }

    /// A design warning that makes "holds" a matter of luck: one the
    /// scenario does not list, or one it lists that no run reached.
    fn unearned_warning(
        &self,
        sum: &sim::Summary,
        hazards: &[crate::core::Hazard],
    ) -> Option<String> {
        hazards.iter().find_map(|h| {
            if !self.warnings.contains(&h.id) && h.id == crate::core::unused::SETTING_WITHOUT_EFFECT {
                return Some(format!(
                    "holds, but it writes a setting without effect (design warning {}): {}; or list it in [expect] warnings = [\"{}\"] if the file keeps it for the variants (--set) that read it",
                    h.id, h.text, h.id
                ));
            }
            if !self.warnings.contains(&h.id) {
                return Some(format!(
                    "holds, but its settings break a rule (design warning {}): change them, or list it in [expect] warnings = [\"{}\"] if the runs show the design surviving it",
                    h.id, h.id
                ));
            }
            let sit = h.shown_by?;
            (!sum.tally.situations.contains(sit)).then(|| {
                let like = match h.example {
                    "" => String::new(),
                    e => format!(", as {e} does"),
                };
                format!(
                    "holds, but no run reached the gap of design warning {} ({}: 0 runs), so the verdict says nothing about it: add a fault that reaches it{like}",
                    h.id,
                    registry::situation_name(sit),
                )
            })
        })
    }

    /// A warning `[expect]` lists that the settings no longer produce.
    fn stale_warning(&self, hazards: &[crate::core::Hazard]) -> Option<String> {
        self.warnings
            .iter()
            .find(|w| !hazards.iter().any(|h| h.id == **w))
            .map(|w| {
                format!(
                    "[expect] warnings lists {w}, but the settings no longer break that rule: remove it from the list"
                )
            })
    }

    /// The first load bound the sweep went over, in words.
    fn over_load(&self, sum: &sim::Summary) -> Option<String> {
        self.max_load.iter().find_map(|b| {
            let found = b.of.ratio(&sum.tally)?;
            (found > b.max).then(|| {
                format!(
                    "holds, at {found:.2} {} per {}, above the {} its [expect] max_load allows",
                    b.name,
                    b.of.per().as_str(),
                    b.max
                )
            })
        })
    }

    /// Verdict must match; a violation must break the named invariant; a
    /// "holds" must have reached every situation it names, or it proves little.
    pub fn judge(&self, sum: &sim::Summary, hazards: &[crate::core::Hazard]) -> Judgement {
        let (found, invariant) = Judgement::found_in(sum);
        let missing: Vec<&'static str> = self
            .situations
            .iter()
            .filter(|&&id| !sum.tally.situations.contains(id))
            .map(|&id| registry::situation_name(id))
            .collect();
        let found_text = match invariant {
            Some(i) => format!("{} of {i}", found.as_str()),
            None => found.as_str().to_string(),
        };
        let mismatch = if sum.tally.schedules == 0 {
            Some("no seed ran".to_string())
        } else if found != self.verdict {
            Some(format!(
                "expected {}, found {found_text}",
                self.verdict.as_str()
            ))
        } else if self.verdict == Verdict::Violation && invariant != self.invariant {
            Some(format!("expected {}, found {found_text}", self.describe()))
        } else if self.verdict == Verdict::Holds && !missing.is_empty() {
            Some(format!("situations not reached: {}", missing.join(", ")))
        } else if self.verdict == Verdict::Holds {
            self.over_load(sum)
                .or_else(|| self.unearned_warning(sum, hazards))
        } else {
            None
        };
        let mismatch = mismatch.or_else(|| self.stale_warning(hazards));
        Judgement {
            found,
            invariant,
            lowest_failing_seed: sum.first_failure.as_ref().map(|f| f.seed),
            missing,
            mismatch,
        }
    }
}

/// What removing one protection gave on the same seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ablation {
    /// The protection removed.
    pub protection: Protection,
    /// The verdict found without it.
    pub found: Verdict,
    /// The invariant it broke, if it did.
    pub invariant: Option<&'static str>,
    /// The lowest failing seed without it.
    pub lowest_failing_seed: Option<u64>,
    /// Why it does not count as load-bearing; `None` when it does.
    pub mismatch: Option<String>,
}

impl Protection {
    /// Judges the sweep of the scenario with this protection removed: it must
    /// be a violation, of the named invariant if there is one.
    pub fn judge(&self, sum: &sim::Summary) -> Ablation {
        let (found, invariant) = Judgement::found_in(sum);
        let mismatch = match (found, invariant, self.breaks) {
            (Verdict::Violation, Some(i), Some(want)) if i != want => Some(format!(
                "removing it breaks {i}, not {want}"
            )),
            (Verdict::Violation, _, _) => None,
            (other, _, _) => Some(format!(
                "removing it still gives {}: the protection is not load-bearing, or the faults never reach the danger it guards against",
                other.as_str()
            )),
        };
        Ablation {
            protection: self.clone(),
            found,
            invariant,
            lowest_failing_seed: sum.first_failure.as_ref().map(|f| f.seed),
            mismatch,
        }
    }
}
