//! What a scenario promises and how a sweep is held to it: the verdict,
//! `[expect]` with its protections and load bounds, and the judgements of
//! a sweep (`Judgement`) and of one protection removed (`Ablation`).

use super::Override;
use crate::registry;
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
    pub(super) fn unstated(sum: &sim::Summary) -> Judgement {
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
        design_warnings: &[crate::core::DesignWarning],
    ) -> Option<String> {
        design_warnings.iter().find_map(|h| {
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
    fn stale_warning(&self, design_warnings: &[crate::core::DesignWarning]) -> Option<String> {
        self.warnings
            .iter()
            .find(|w| !design_warnings.iter().any(|h| h.id == **w))
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
    pub fn judge(
        &self,
        sum: &sim::Summary,
        design_warnings: &[crate::core::DesignWarning],
    ) -> Judgement {
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
                .or_else(|| self.unearned_warning(sum, design_warnings))
        } else {
            None
        };
        let mismatch = mismatch.or_else(|| self.stale_warning(design_warnings));
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
