//! Scenario files: TOML, one design variant each, validated once.
//!
//! TOML → the shared tables (this module) and the model's own tables (the
//! model's loader, found in the registry by `model = "..."`) → the engine's
//! configuration. `--set key.path=value` overrides edit the TOML tree before
//! validation, so an override gets exactly the checks of the file, and a
//! mistake in one is blamed on the `--set` argument, not on a line of the file.

mod common;
mod dto;
mod error;
pub mod format;
mod judge;
mod links;
mod locate;
mod network;
mod preset;
mod routes;
mod unused;

pub use error::ScenarioError;
pub use judge::{Ablation, Expect, Judgement, LoadBound, Protection, Verdict};
pub use locate::Override;

use crate::core::input::{did_you_mean, invalid, Invalid};
use crate::core::wire::ActorEnds;
use crate::core::{BuildInput, ModelSpec};
use crate::registry::{self, System};
use locate::{apply_overrides, Locator};

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
    /// The file (or a `--set`) names `run.strategy`; when neither does,
    /// `check` runs its portfolio (`idemsim::testing::portfolio`).
    pub strategy_stated: bool,
    /// The scenario format the file names (`format = N`), or `None`: then
    /// it is read as the current one ([`format::FORMAT`]), which the CLI notes.
    pub format: Option<u64>,
    /// Gaps in the design its settings show, reached by a run or not
    /// (docs/design-warnings.md).
    pub design_warnings: Vec<crate::core::DesignWarning>,
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

/// The model a scenario names.
fn model_of(name: &str) -> Result<&'static dyn ModelSpec<registry::Node>, Invalid> {
    registry::model(name).ok_or_else(|| {
        let names = registry::model_names();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(b) => format!("did you mean \"{b}\"? The models are {}", names.join(", ")),
            None => format!("the models are {}", names.join(", ")),
        };
        invalid(
            vec![crate::core::input::Seg::Key("model")],
            format!("unknown model \"{name}\""),
            help,
        )
    })
}

/// What the shared tables say before the model builds its actors.
struct Shared {
    expect: Option<Expect>,
    fault_phase_us: sim::TimeUs,
    limits: sim::Limits,
    strategy: Strategy,
    delays: crate::core::design_warning::Delays,
}

impl Shared {
    /// The shared tables of `dto` (with presets applied: `expanded`), checked
    /// in the order their errors have always come in.
    fn of(
        dto: &dto::CommonDto,
        expanded: &str,
        model: &'static dyn ModelSpec<registry::Node>,
    ) -> Result<Shared, Invalid> {
        check_top_level(expanded, model.tables(), model.name())?;
        // `list` and every report show the summary as one line of a table.
        if dto.summary.trim().contains(char::is_control) {
            return Err(invalid(
                vec![crate::core::input::Seg::Key("summary")],
                "the summary holds a line break or another control character",
                "write it on one line; longer explanations go in # comments above it",
            ));
        }
        let situations: Vec<_> = model.situations().iter().collect();
        let expect = dto
            .expect
            .as_ref()
            .map(|e| common::expect(e, &situations, model.metrics()))
            .transpose()?;
        let (fault_phase_us, limits) = common::limits(&dto.run)?;
        Ok(Shared {
            expect,
            fault_phase_us,
            limits,
            strategy: common::strategy(&dto.run)?,
            delays: network::delays(&dto.network)?,
        })
    }
}

/// A scenario's name: its file's stem.
fn name_of(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(file)
        .to_string()
}

/// The file as reports name it: with the overrides it was loaded with.
fn shown_as(file: &str, overrides: &[Override]) -> String {
    if overrides.is_empty() {
        file.to_string()
    } else {
        let sets: Vec<String> = overrides.iter().map(Override::shown).collect();
        format!("{file} with {}", sets.join(" "))
    }
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
            .map_err(|e| locate::made_by_overrides(e, written.is_some(), overrides))?;
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

    /// Its text with its `--set` overrides written in: what its runs read.
    /// The overrides were applied once when it loaded, so they apply again.
    pub fn effective_text(&self) -> String {
        apply_overrides(&self.file, &self.text, &self.overrides)
            .unwrap_or_else(|_| self.text.clone())
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
            Some(e) => e.judge(sum, &self.design_warnings),
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
        let dto: dto::CommonDto = toml::from_str(&effective).map_err(|e| loc.toml(&e))?;
        let model = model_of(&dto.model).map_err(|i| loc.invalid(i))?;
        // A system's preset writes its settings beneath the file's own; the
        // model reads the result, so the system's rules apply to both alike.
        let expanded = preset::expand(&effective, model.presets()).map_err(|i| loc.invalid(i))?;
        let loc =
            Locator::new(file, text, &expanded.text, overrides).with_presets(&expanded.applied);
        let shared = Shared::of(&dto, &expanded.text, model).map_err(|i| loc.invalid(i))?;
        let built = model
            .build(&BuildInput {
                text: &expanded.text,
                fault_phase_us: shared.fault_phase_us,
                max_time_us: shared.limits.max_time_us,
                dir,
                delays: &shared.delays,
            })
            .map_err(|e| loc.load(e))?;
        let mut design_warnings = built.design_warnings;
        // Read from the text the file and `--set` wrote, before presets.
        design_warnings.extend(
            format::check(text, &effective, dto.format, model.meaning_changes())
                .map_err(|i| loc.invalid(i))?,
        );
        unused::placed(&loc, &mut design_warnings);
        let mut unread = built.unused;
        unread.extend(network::unused(&dto.network));
        design_warnings.extend(unused::reported(&loc, &effective, overrides, &unread));
        let (names, nodes): (Vec<String>, Vec<_>) = built.actors.into_iter().unzip();
        let kinds = model.message_kinds();
        let ends: Vec<_> = nodes.iter().map(registry::Node::ends).collect();
        // `--set network.<key>`, the changes a user asked of every link.
        let set: Vec<&str> = overrides
            .iter()
            .filter_map(|o| o.key.strip_prefix("network."))
            .filter(|k| !k.contains('.'))
            .collect();
        let actors = network::Actors {
            names: &names,
            hint: built.actors_hint,
            model: model.name(),
            own_kinds: &kinds,
            ends: &ends,
            written,
            set: &set,
        };
        let world = network::world(&dto, &actors, shared.fault_phase_us, shared.limits)
            .map_err(|i| loc.invalid(i))?;
        let scenario = Scenario {
            name: name_of(file),
            file: shown_as(file, overrides),
            text: text.to_string(),
            overrides: overrides.to_vec(),
            summary: dto.summary.trim().to_string(),
            hash: fnv1a(effective.as_bytes()),
            expect: shared.expect,
            runs: dto.run.runs,
            strategy: shared.strategy,
            strategy_stated: dto.run.strategy.is_some(),
            format: dto.format,
            design_warnings,
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

    /// The scenario's own search: every seed of `seeds` on `jobs` threads,
    /// or, for a file that states `run.strategy = "coverage"`, a
    /// coverage-guided search of at most `seeds.len()` schedules seeded by
    /// `seeds.start`, which ends at its first failure (its `seed` is then
    /// the schedule's index in the search). Nothing runs after the seeds:
    /// the searches `check` runs after them by default are
    /// `idemsim::testing::shown`'s, which judges a file as `check` does.
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
