//! The summary line of a sweep (`SweepLine`): built from a `sim::Summary`,
//! merged across shards and judged; `text.rs` prints it.

use idemsim::progress;
use idemsim::render;
use models::registry;
use serde::{Deserialize, Serialize};
use sim::{Outcome, SeedRange};
use std::collections::BTreeMap;

use super::operations::{Load, Operations};
pub use crate::cmd::common::WarningLine;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
/// Faults fired over a sweep, as the JSON summary writes them.
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Messages lost.
    pub lost: u64,
    /// Messages duplicated.
    pub duplicated: u64,
    /// Messages a partition dropped.
    pub partitioned: u64,
    /// Crashes.
    pub crashed: u64,
    /// Messages dropped because their receiver was down.
    pub dropped_at_down_actor: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
/// A seed range, end exclusive.
#[serde(deny_unknown_fields)]
pub struct Seeds {
    /// The first seed.
    pub start: u64,
    /// One past the last: 2^64 for a range that holds the last seed, which
    /// JSON writes as null (no `u64` reader could take it as a number; its
    /// `end_decimal` twin says `18446744073709551616`).
    #[serde(with = "end_or_null")]
    pub end: u128,
}

impl From<SeedRange> for Seeds {
    fn from(SeedRange { start, end }: SeedRange) -> Seeds {
        Seeds { start, end }
    }
}

impl From<Seeds> for SeedRange {
    fn from(Seeds { start, end }: Seeds) -> SeedRange {
        SeedRange { start, end }
    }
}

/// A range's exclusive end in JSON: a number when it is a `u64`, and null
/// for 2^64, the end of a range that holds the last seed.
mod end_or_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(end: &u128, s: S) -> Result<S::Ok, S::Error> {
        u64::try_from(*end).ok().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map_or(1 << 64, u128::from))
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
/// The lowest failing seed and what it gave.
#[serde(deny_unknown_fields)]
pub struct FailureLine {
    /// The seed.
    pub seed: u64,
    /// The invariant it broke (`model-panic` for a panic).
    pub invariant: String,
    /// The outcome in one sentence.
    pub sentence: String,
    /// Engine events of its run.
    pub events: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
/// The lowest seed that hit a limit.
#[serde(deny_unknown_fields)]
pub struct InconclusiveLine {
    /// The seed.
    pub seed: u64,
    /// The limit (`max_steps`, `max_time`, `max_queue`).
    pub limit: String,
}

/// Which shard of which range a summary is, so a merge can tell a missing shard.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ShardLine {
    /// This shard's index, from 0.
    pub index: u64,
    /// How many shards.
    pub count: u64,
    /// The whole range the shards split.
    pub of: Seeds,
}

/// A sweep's verdict, as `check` reports it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SweepVerdict {
    #[default]
    /// No run failed or hit a limit.
    Holds,
    /// Some run broke an invariant (or a model panicked).
    Violation,
    /// No violation, but some run hit a limit.
    Inconclusive,
    /// Stopped by Ctrl-C before every seed ran, with no violation found.
    Interrupted,
    /// A shard that no seed fell to (more shards than seeds).
    NoSeeds,
}

impl SweepVerdict {
    /// The JSON and text spelling: `holds`, `violation`, `inconclusive`, `interrupted`, `no-seeds`.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepVerdict::Holds => "holds",
            SweepVerdict::Violation => "violation",
            SweepVerdict::Inconclusive => "inconclusive",
            SweepVerdict::Interrupted => "interrupted",
            SweepVerdict::NoSeeds => "no-seeds",
        }
    }
}

/// A sweep's summary as `check --json` prints it (docs/json-output.md). It
/// carries everything a merge needs (counts, the seed range, the shard, the
/// lowest failure and inconclusive seed, the situations reached), so N shards
/// merge into the line one machine would have printed; the derived fields are
/// recomputed by [`SweepLine::derive`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SweepLine {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario's file, when it was given by path rather than by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_file: Option<String>,
    /// The replay command without its seed: scenario and overrides.
    pub replay: String,
    /// The --set overrides, so a merge can load the same scenario to shrink.
    pub sets: Vec<String>,
    /// FNV-1a of the scenario's effective text, as in repro files: a merge
    /// refuses shards of different texts and a scenario changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_hash: Option<String>,
    /// The seeds the counts cover: the range asked for, or on an interrupt
    /// the part of it that ran (always its beginning).
    pub seeds: Option<Seeds>,
    /// The range asked for, when an interrupt left part of it unrun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<Seeds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Which shard of which range this is, for `--shard`.
    pub shard: Option<ShardLine>,
    /// Runs counted.
    pub schedules: u64,
    /// Engine events over all runs.
    pub events: u64,
    /// Runs that held.
    pub holds: u64,
    /// Runs that broke an invariant.
    pub violations: u64,
    /// Runs in which a model panicked.
    pub panics: u64,
    /// Runs that hit a limit.
    pub inconclusive: u64,
    /// Faults fired over all runs.
    pub faults: Faults,
    /// Runs that reached each situation, by name; `situations` lists the names.
    pub situation_runs: BTreeMap<String, u64>,
    /// What the clients finally knew, over all runs (the effect ledger's counts).
    #[serde(default)]
    pub operations: Operations,
    /// The work the operations caused: attempts, and what each layer received.
    #[serde(default)]
    pub load: Load,
    /// Gaps the design's settings show (docs/design-warnings.md); absent
    /// when there are none. Whether runs reached them is derived.
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "hazards")]
    pub design_warnings: Vec<WarningLine>,
    /// The lowest failing seed, if any.
    pub failure: Option<FailureLine>,
    /// The lowest seed that hit a limit, if any.
    pub first_inconclusive: Option<InconclusiveLine>,
    /// Ctrl-C stopped the sweep before every seed ran.
    pub interrupted: bool,
    // Derived from the fields above.
    /// The verdict.
    pub verdict: SweepVerdict,
    /// The lowest failure's invariant.
    pub invariant: Option<String>,
    /// The lowest failing seed.
    pub lowest_failing_seed: Option<u64>,
    #[serde(default)]
    /// Names of the situations reached, in id order.
    pub situations: Vec<String>,
    /// Share of started operations that ended unknown (for a person to reconcile).
    #[serde(default)]
    pub unknown_rate: Option<f64>,
    /// The command that replays the lowest failing (else inconclusive) seed.
    pub repro: Option<String>,
    /// Events of the lowest failing run and of its shrunk version, only when
    /// it was shrunk (docs/shrinking.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_events: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Events of the shrunk run, when shrunk.
    pub shrunk_events: Option<u64>,
    /// A recorded regression that still fails, which makes the exit code 1
    /// whatever the verdict of the seeds; absent when none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_regression: Option<idemsim::regressions::sweep::FailingRegression>,
    /// The search parts of the default portfolio (exhaustive and
    /// coverage-guided search), when `check` ran it; absent for an explicit
    /// strategy and in every shard but shard 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub portfolio: Option<super::portfolio::PortfolioLine>,
    /// The protections the file's `[expect]` names, which `check` does not
    /// remove: only when the sweep of a file as written holds, its
    /// `[expect]` says it holds and no regression still fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protections: Option<super::protections::ProtectionsLine>,
}

impl SweepLine {
    /// The summary line of a sweep of scenario `name` over `seeds`.
    pub fn from_summary(
        name: &str,
        replay: String,
        sets: &[String],
        seeds: SeedRange,
        sum: &sim::Summary,
        metrics: &[models::core::Metric],
    ) -> Self {
        let t = &sum.tally;
        let failure = sum.first_failure.as_ref().map(|f| FailureLine {
            seed: f.seed,
            invariant: match &f.outcome {
                Outcome::Violation(v) => v.invariant.to_string(),
                _ => "model-panic".to_string(),
            },
            sentence: render::outcome_sentence(&f.outcome),
            events: f.events,
        });
        let situation_runs = t
            .situation_runs
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (registry::situation_name(i as u16).to_string(), *n))
            .collect();
        // Every chunk of seeds handed out runs to its end, so what ran of an
        // interrupted sweep is the beginning of its range (sim::explore).
        let ran = Seeds::from(seeds.first(t.schedules));
        let asked = Seeds::from(seeds);
        let mut line = SweepLine {
            scenario: name.to_string(),
            replay,
            sets: sets.to_vec(),
            seeds: Some(ran),
            requested: (ran != asked).then_some(asked),
            schedules: t.schedules,
            events: t.events,
            holds: t.holds,
            violations: t.violations,
            panics: t.panics,
            inconclusive: t.inconclusive,
            faults: Faults {
                lost: t.faults.lost,
                duplicated: t.faults.duplicated,
                partitioned: t.faults.partitioned,
                crashed: t.faults.crashed,
                dropped_at_down_actor: t.faults.dropped_at_down_actor,
            },
            situation_runs,
            operations: Operations::from_tally(t),
            load: Load::from_tally(t, metrics),
            failure,
            first_inconclusive: sum.first_inconclusive.map(|(seed, l)| InconclusiveLine {
                seed,
                limit: l.as_str().to_string(),
            }),
            interrupted: sum.interrupted,
            ..SweepLine::default()
        };
        line.derive();
        line
    }

    /// Recomputes verdict, invariant, lowest failing seed, situation names and repro.
    pub fn derive(&mut self) {
        // A search part's failure, when no seed failed: its part and invariant.
        let searched = self
            .portfolio
            .as_ref()
            .and_then(|p| p.found())
            .map(|(part, f)| (part, f.invariant.clone()));
        if let Some(p) = &mut self.portfolio {
            p.set_found_by(self.failure.is_some());
        }
        self.verdict = match (&self.failure, self.interrupted, self.inconclusive) {
            (Some(_), _, _) => SweepVerdict::Violation,
            (None, _, _) if searched.is_some() => SweepVerdict::Violation,
            (None, true, _) => SweepVerdict::Interrupted,
            (None, false, _) if self.schedules == 0 => SweepVerdict::NoSeeds,
            (None, false, 0) => SweepVerdict::Holds,
            (None, false, _) => SweepVerdict::Inconclusive,
        };
        self.invariant = self
            .failure
            .as_ref()
            .map(|f| f.invariant.clone())
            .or(searched.map(|(_, invariant)| invariant));
        self.lowest_failing_seed = self.failure.as_ref().map(|f| f.seed);
        // In id order, as the models declare them.
        let mut names: Vec<(u16, String)> = self
            .situation_runs
            .keys()
            .map(|n| {
                let id = registry::situations()
                    .into_iter()
                    .find(|s| s.name == n)
                    .map_or(u16::MAX, |s| s.id);
                (id, n.clone())
            })
            .collect();
        names.sort();
        self.situations = names.into_iter().map(|(_, n)| n).collect();
        let searches = self.portfolio.as_ref();
        super::portfolio::reach(&mut self.design_warnings, &self.situation_runs, searches);
        let ops = &self.operations;
        self.unknown_rate = (ops.started > 0).then(|| ops.unknown as f64 / ops.started as f64);
        // The run to replay: the lowest failing seed, else the lowest inconclusive one.
        self.repro = self
            .lowest_failing_seed
            .or(self.first_inconclusive.as_ref().map(|i| i.seed))
            .map(|seed| format!("{} --seed {seed}", self.replay));
        self.keep_protections_if_held();
    }

    /// Names the protections of the file (`None` for a variant or a file
    /// that does not expect to hold); a line that does not hold drops them.
    pub(super) fn name_protections(&mut self, p: Option<super::protections::ProtectionsLine>) {
        self.protections = p;
        self.keep_protections_if_held();
    }

    /// Only a "holds" is earned by protections: a failing line (a seed's
    /// or a search's violation, a limit, an interrupt, a regression that
    /// still fails) prints as it did before they were named.
    fn keep_protections_if_held(&mut self) {
        if self.verdict != SweepVerdict::Holds || self.failing_regression.is_some() {
            self.protections = None;
        }
    }

    /// Checks that every situation a JSON line names is one some model declares.
    pub fn check_situation_names(&self) -> Result<(), String> {
        let known = registry::situations();
        for name in self.situations.iter().chain(self.situation_runs.keys()) {
            if !known.iter().any(|s| s.name == name) {
                return Err(format!("unknown situation `{name}`"));
            }
        }
        Ok(())
    }

    /// Adds a disjoint sweep of the same scenario; the lower seed wins, as in
    /// one sweep. A count that would overflow is an error (a corrupt file).
    pub fn absorb(&mut self, o: &SweepLine) -> Result<(), String> {
        let add = |a: &mut u64, b: u64, what: &str| {
            *a = a
                .checked_add(b)
                .ok_or_else(|| format!("the {what} add up past 2^64"))?;
            Ok::<(), String>(())
        };
        add(&mut self.schedules, o.schedules, "schedules")?;
        add(&mut self.events, o.events, "events")?;
        add(&mut self.holds, o.holds, "holds")?;
        add(&mut self.violations, o.violations, "violations")?;
        add(&mut self.panics, o.panics, "panics")?;
        add(
            &mut self.inconclusive,
            o.inconclusive,
            "inconclusive counts",
        )?;
        add(&mut self.faults.lost, o.faults.lost, "fault counts")?;
        add(
            &mut self.faults.duplicated,
            o.faults.duplicated,
            "fault counts",
        )?;
        add(
            &mut self.faults.partitioned,
            o.faults.partitioned,
            "fault counts",
        )?;
        add(&mut self.faults.crashed, o.faults.crashed, "fault counts")?;
        add(
            &mut self.faults.dropped_at_down_actor,
            o.faults.dropped_at_down_actor,
            "fault counts",
        )?;
        self.operations.absorb(&o.operations)?;
        self.load.absorb(&o.load)?;
        for (k, v) in &o.situation_runs {
            add(
                self.situation_runs.entry(k.clone()).or_insert(0),
                *v,
                "situation counts",
            )?;
        }
        if let Some(f) = &o.failure {
            if self.failure.as_ref().is_none_or(|m| f.seed < m.seed) {
                self.failure = Some(f.clone());
            }
        }
        if let Some(i) = &o.first_inconclusive {
            if self
                .first_inconclusive
                .as_ref()
                .is_none_or(|m| i.seed < m.seed)
            {
                self.first_inconclusive = Some(i.clone());
            }
        }
        self.interrupted |= o.interrupted;
        // Shard 0 alone runs the portfolio's searches.
        if self.portfolio.is_none() {
            self.portfolio.clone_from(&o.portfolio);
        }
        // Shards of one file name the same protections (`merge` refuses
        // holding shards that differ); one that failed names none, and the
        // merged line then fails too.
        if self.protections.is_none() {
            self.protections.clone_from(&o.protections);
        }
        Ok(())
    }

    /// The exit code of this summary's verdict.
    pub fn exit_code(&self) -> u8 {
        match self.verdict {
            SweepVerdict::Violation => idemsim::exit::VIOLATION,
            SweepVerdict::Holds | SweepVerdict::NoSeeds => idemsim::exit::HOLDS,
            SweepVerdict::Interrupted => progress::INTERRUPTED,
            SweepVerdict::Inconclusive => idemsim::exit::INCONCLUSIVE,
        }
    }
}
