//! Grading one answer: the shortcuts refused before anything runs, then the
//! exercise's seeds, then what the runs say (faults, silent give-ups,
//! violations), then the design warnings the right answer does not have.

use super::{Exercise, Fault, Kind, Section, FAULTS_SECTION, GIVE_UP_SECTION};
use crate::catalog::{self, UsageError};
use crate::minimize::{self, Budget};
use models::core::ledger::counter::ABANDONED;
use models::scenario::Override;
use models::Scenario;
use sim::{FaultCounts, Outcome, SeedRange, Summary};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A learner's answer.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    /// Overrides, `key=value` each, as `check --set` takes them.
    pub sets: Vec<String>,
    /// The command of their own program (words split at spaces), for a
    /// [`Kind::Program`] exercise.
    pub program: Option<String>,
}

/// Why an answer is wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// It changes a fault, a limit, the expectation or the workload.
    NotTheDesign {
        /// The key it changes.
        key: String,
    },
    /// It changes a key the exercise does not ask about.
    Outside {
        /// The key (and value) it changes.
        set: String,
    },
    /// It holds here, and is wrong for a reason the table states.
    Refused {
        /// The override.
        set: String,
        /// Why.
        why: &'static str,
    },
    /// A fault the exercise needs stopped firing.
    FaultsStopped {
        /// Which kind.
        fault: Fault,
    },
    /// Operations were given up without a dead letter: nobody is told.
    GaveUpSilently {
        /// How many, over all seeds.
        operations: u64,
    },
    /// The design still breaks an invariant (or a model panicked).
    Violation {
        /// The invariant, or `model-panic`.
        invariant: String,
        /// The lowest failing seed.
        seed: u64,
        /// The violation's sentence.
        message: String,
    },
    /// A run hit a limit: nothing is proven.
    Inconclusive {
        /// The lowest such seed.
        seed: u64,
    },
    /// The design carries a warning the right answer does not: a gap these
    /// seeds did not reach.
    DesignWarning {
        /// The warning's id.
        id: &'static str,
        /// Its text.
        text: String,
    },
}

impl Reason {
    /// A stable name for JSON and tests.
    pub fn as_str(&self) -> &'static str {
        match self {
            Reason::NotTheDesign { .. } => "not-the-design",
            Reason::Outside { .. } => "outside-the-exercise",
            Reason::Refused { .. } => "refused",
            Reason::FaultsStopped { .. } => "faults-stopped",
            Reason::GaveUpSilently { .. } => "gave-up-silently",
            Reason::Violation { .. } => "violation",
            Reason::Inconclusive { .. } => "inconclusive",
            Reason::DesignWarning { .. } => "design-warning",
        }
    }
}

/// What the grader says about one answer.
#[derive(Clone, Debug)]
pub struct Grade {
    /// The exercise's number.
    pub exercise: u32,
    /// The answer's overrides as given.
    pub sets: Vec<String>,
    /// `None` when the answer is right.
    pub reason: Option<Reason>,
    /// Where to read on, for a wrong answer.
    pub hint: Option<Section>,
    /// Seeds that ran (0 when the answer was refused before running).
    pub seeds: u64,
    /// Faults that fired over them.
    pub faults: FaultCounts,
    /// The shrunk trace of the lowest failing seed, for a violation.
    pub trace: Option<String>,
    /// The command that replays that seed, where one exists.
    pub replay: Option<String>,
}

impl Grade {
    /// Whether the answer is right.
    pub fn passed(&self) -> bool {
        self.reason.is_none()
    }

    fn wrong(ex: &Exercise, sets: &[String], reason: Reason, hint: Section) -> Grade {
        Grade {
            exercise: ex.id,
            sets: sets.to_vec(),
            reason: Some(reason),
            hint: Some(hint),
            seeds: 0,
            faults: FaultCounts::default(),
            trace: None,
            replay: None,
        }
    }
}

/// Judges `answer` to `ex` on its seeds with `jobs` threads. `Err` is bad
/// input (a malformed override, a key the scenario does not have, a program
/// that breaks the protocol); a wrong answer is an `Ok` grade.
pub fn check(
    ex: &Exercise,
    answer: &Answer,
    jobs: usize,
    stop: &AtomicBool,
) -> Result<Grade, UsageError> {
    let overrides = shape(ex, answer)?;
    // A fault or the expectation switched off is no answer, even where the
    // loader would refuse the combination (`expect.verdict=holds`).
    if let Some(o) = overrides.iter().find(|o| super::is_not_the_design(&o.key)) {
        let reason = Reason::NotTheDesign { key: o.key.clone() };
        return Ok(Grade::wrong(ex, &answer.sets, reason, FAULTS_SECTION));
    }
    // Loaded next: a key the scenario does not have is bad input, with the
    // loader's did-you-mean, before it is judged as an answer.
    let s = load(ex, answer, &overrides)?;
    if let Some((reason, hint)) = shortcut(ex, &overrides) {
        return Ok(Grade::wrong(ex, &answer.sets, reason, hint));
    }
    let seeds = SeedRange {
        start: 0,
        end: ex.seeds.into(),
    };
    let replay = replay_line(ex, &answer.sets);
    if ex.kind == Kind::Program {
        crate::external::determinism_check_first(&s, seeds, 2, &replay)?;
    }
    // The exercise's seeds, nothing after them: a grade names a failing
    // seed to replay, which no search's schedule is (`check`'s portfolio
    // of the same file may search on).
    let sum = s.search(seeds, jobs, stop);
    if ex.kind == Kind::Program {
        crate::external::check_summary(&s, &replay, &sum)?;
    }
    let mut grade = Grade {
        seeds: sum.tally.schedules,
        faults: sum.tally.faults,
        ..Grade::wrong(
            ex,
            &answer.sets,
            Reason::Inconclusive { seed: 0 },
            ex.section,
        )
    };
    match judge(ex, &s, &sum)? {
        None => {
            grade.reason = None;
            grade.hint = None;
        }
        Some((reason, hint)) => {
            // A silent give-up that landed an effect fails a run too: its
            // trace shows the operation nobody was told about.
            let failing = match &reason {
                Reason::Violation { seed, .. } => Some(*seed),
                Reason::GaveUpSilently { .. } => sum.first_failure.as_ref().map(|f| f.seed),
                _ => None,
            };
            if let Some(seed) = failing {
                grade.trace = shrunk_trace(&s, seed);
                grade.replay =
                    (ex.kind == Kind::Settings).then(|| format!("{replay} --seed {seed}"));
            }
            grade.reason = Some(reason);
            grade.hint = Some(hint);
        }
    }
    Ok(grade)
}

/// The answer's overrides, or why it does not fit the exercise's kind.
fn shape(ex: &Exercise, answer: &Answer) -> Result<Vec<Override>, UsageError> {
    match (ex.kind, &answer.program) {
        (Kind::Rust(cmd), _) => Err(UsageError(format!(
            "error: exercise {} is answered in Rust ({}), which this binary cannot compile\nhelp: in a checkout of idemsim, edit that file and run `{cmd}`: it grades your code and prints a seed and a trace when it fails\n",
            ex.id, ex.scenario
        ))),
        (Kind::Program, None) => Err(UsageError(format!(
            "error: exercise {} is answered with a program of your own\nhelp: give it as --program \"python3 my_consumer.py\" (start from {}, a consumer that is wrong as it stands)\n",
            ex.id,
            ex.scenario.replace(".toml", ".py")
        ))),
        (Kind::Program, Some(_)) if !answer.sets.is_empty() => Err(UsageError(format!(
            "error: exercise {} is answered by the program alone, not by --set\nhelp: leave out --set\n",
            ex.id
        ))),
        (Kind::Settings, Some(_)) => Err(UsageError(format!(
            "error: exercise {} is answered with --set KEY=VALUE, not with a program\nhelp: leave out --program; `idemsim learn` shows which exercises take one\n",
            ex.id
        ))),
        _ => catalog::parse_overrides(&answer.sets),
    }
}

/// A change that is no answer whatever the runs say: a key the exercise
/// does not ask about, or an answer the table refuses.
fn shortcut(ex: &Exercise, overrides: &[Override]) -> Option<(Reason, Section)> {
    for o in overrides {
        let set = format!("{}={}", o.key, o.value.trim_matches('"'));
        if !ex.allows(&o.key, &o.value) {
            return Some((Reason::Outside { set }, ex.section));
        }
        if let Some(r) = ex.refusals.iter().find(|r| r.set == set) {
            return Some((Reason::Refused { set, why: r.why }, r.section));
        }
    }
    None
}

/// The exercise's scenario with the answer applied.
fn load(ex: &Exercise, answer: &Answer, overrides: &[Override]) -> Result<Scenario, UsageError> {
    match &answer.program {
        None => catalog::load(ex.scenario, overrides),
        Some(cmd) => {
            // Words as a shell splits them, so a path with a space can be given.
            let argv: Vec<String> = crate::shell::split_words(cmd)
                .map_err(|e| {
                    UsageError(format!(
                        "error: --program {}: {}\nhelp: quote as in a shell: --program \"python3 'my dir/consumer.py'\"\n",
                        crate::shell::shell_word(cmd),
                        e.0
                    ))
                })?
                .iter()
                .map(|w| crate::shell::toml_string(w))
                .collect();
            if argv.is_empty() {
                return Err(UsageError(
                    "error: --program is empty\nhelp: give the command that starts your program, e.g. --program \"python3 my_consumer.py\"\n".into(),
                ));
            }
            let program = Override {
                key: "consumer.program".into(),
                value: format!("[{}]", argv.join(", ")),
            };
            // The program's words are paths from where the learner stands.
            Ok(Scenario::load_at(
                ex.scenario,
                Some(std::path::Path::new(".")),
                PROGRAM_SCENARIO,
                &[program],
            )?)
        }
    }
}

/// The scenario of the program exercise, compiled in so the binary needs no
/// checkout.
const PROGRAM_SCENARIO: &str = include_str!("../../examples/learn/python/consumer.toml");

/// What the runs say, in the order a learner should hear it.
fn judge(
    ex: &Exercise,
    s: &Scenario,
    sum: &Summary,
) -> Result<Option<(Reason, Section)>, UsageError> {
    if let Some(&fault) = ex.faults.iter().find(|f| f.count(&sum.tally.faults) == 0) {
        return Ok(Some((Reason::FaultsStopped { fault }, FAULTS_SECTION)));
    }
    let abandoned = sum.tally.counter(ABANDONED).map_or(0, |c| c[0]);
    if abandoned > 0 {
        return Ok(Some((
            Reason::GaveUpSilently {
                operations: abandoned,
            },
            GIVE_UP_SECTION,
        )));
    }
    if let Some(f) = &sum.first_failure {
        let (invariant, message) = match &f.outcome {
            Outcome::Violation(v) => (v.invariant.to_string(), v.message.clone()),
            other => (
                "model-panic".to_string(),
                crate::render::outcome_sentence(other),
            ),
        };
        let seed = f.seed;
        let reason = Reason::Violation {
            invariant,
            seed,
            message,
        };
        return Ok(Some((reason, ex.section)));
    }
    if let Some((seed, _)) = sum.first_inconclusive {
        return Ok(Some((Reason::Inconclusive { seed }, ex.section)));
    }
    Ok(new_warning(ex, s)?.map(|r| (r, ex.section)))
}

/// A design warning of the answer that the right answer does not carry.
fn new_warning(ex: &Exercise, s: &Scenario) -> Result<Option<Reason>, UsageError> {
    if ex.kind != Kind::Settings {
        return Ok(None);
    }
    let right: Vec<String> = ex.answer.iter().map(|a| (*a).to_string()).collect();
    let right = catalog::load(ex.scenario, &catalog::parse_overrides(&right)?)?;
    Ok(s.design_warnings
        .iter()
        .find(|w| !right.design_warnings.iter().any(|r| r.id == w.id))
        .map(|w| Reason::DesignWarning {
            id: w.id,
            text: w.text.clone(),
        }))
}

/// `idemsim replay SCENARIO --set ...` for the answer.
fn replay_line(ex: &Exercise, sets: &[String]) -> String {
    let mut line = format!("idemsim replay {}", crate::shell::shell_word(ex.scenario));
    for s in sets {
        line.push_str(&format!(" --set {}", crate::shell::shell_word(s)));
    }
    line
}

/// Reruns a shrink may take for the trace of a wrong answer: enough for the
/// exercises' short runs, and bounded so the grader answers in seconds.
const SHRINK: Budget = Budget {
    max_runs: 2_000,
    time: Duration::from_secs(10),
};

/// The shrunk trace of `seed`, as text.
fn shrunk_trace(s: &Scenario, seed: u64) -> Option<String> {
    minimize::shrink_seed(s, seed, SHRINK).map(|d| crate::render::formats::text(&d.trace))
}
