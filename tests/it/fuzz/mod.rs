//! The project's own fuzz test: seeded mutants of every shipped scenario go
//! through the loader (as an edited file or as `--set` arguments) and, when
//! accepted, through a few runs. Asserted for every mutant: no panic, no hang,
//! every rejection located (file:line:col with the user's own line, or the
//! `--set` argument) with a message in the user's words and a fix; and every
//! mutant of a nonsense class (a wrapping number, a reversed range, a base
//! above its cap, a link from an actor to itself, ...) rejected.
//!
//! `IDEMSIM_FUZZ_MUTANTS` raises the count (default 3000),
//! `IDEMSIM_FUZZ_SEED` changes the base seed, and `IDEMSIM_FUZZ_ONLY=SEED`
//! replays one mutant; a failure prints the line that replays it.

use crate::support;
mod mutants;

use models::scenario::{Override, Scenario, ScenarioError};
use mutants::{mutate, Mutant, Rng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const FILE: &str = "mutant.toml";

/// What is wrong with how `m` was handled, if anything.
fn judge(m: &Mutant) -> Result<(), String> {
    let overrides: Vec<Override> = match m.sets.iter().map(|s| Override::parse(s)).collect() {
        Ok(o) => o,
        Err(e) => return Err(format!("the test wrote a bad --set: {e}")),
    };
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        Scenario::load_with(FILE, &m.text, &overrides)
    }))
    .map_err(|_| "the loader panicked".to_string())?;
    match loaded {
        Err(e) => located(&e, m, &overrides),
        Ok(s) if m.must_reject => Err(format!("accepted nonsense ({})", s.file)),
        Ok(s) => {
            let stop = AtomicBool::new(false);
            let sum = catch_unwind(AssertUnwindSafe(|| {
                sim::explore(
                    &s.system,
                    sim::SeedRange { start: 0, end: 2 },
                    1,
                    &stop,
                    &|_| {},
                )
            }))
            .map_err(|_| "a run panicked outside the model".to_string())?;
            if sum.tally.panics > 0 {
                return Err(format!(
                    "a model panicked on an accepted scenario: {:?}",
                    sum.first_failure.map(|f| f.outcome)
                ));
            }
            Ok(())
        }
    }
}

/// The error names a place the user can find and says what to do.
fn located(e: &ScenarioError, m: &Mutant, overrides: &[Override]) -> Result<(), String> {
    let shown = e.to_string();
    if e.message.trim().is_empty() {
        return Err(format!("empty message:\n{shown}"));
    }
    let has_fix = matches!(e.help.as_deref(), Some(h) if !h.trim().is_empty());
    if !has_fix {
        return Err(format!("no fix offered:\n{shown}"));
    }
    for jargon in [
        "Dto", "u64", "u32", "u16", "usize", "i64", "Option<", "Vec<", "struct ",
    ] {
        if e.message.contains(jargon) || e.help.as_deref().unwrap_or("").contains(jargon) {
            return Err(format!("Rust words in the message ({jargon}):\n{shown}"));
        }
    }
    if e.file.starts_with("--set ") {
        let known = overrides
            .iter()
            .any(|o| e.file == format!("--set {}={}", o.key, o.value));
        return if known {
            Ok(())
        } else {
            Err(format!("blames an argument that was not given:\n{shown}"))
        };
    }
    if e.file != FILE {
        return Err(format!("names {} instead of the file:\n{shown}", e.file));
    }
    let line = m.text.lines().nth(e.line.wrapping_sub(1));
    match (line, &e.source_line) {
        (Some(l), Some(src)) if l == src && e.column >= 1 => Ok(()),
        (None, Some(src)) if src.is_empty() => Ok(()), // at the very end
        _ => Err(format!(
            "line {} of the file is {:?}, but the error shows {:?}:\n{shown}",
            e.line, line, e.source_line
        )),
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a whole number")),
    )
}

/// Ends the process when the mutant in `current` makes no progress (`done`
/// stays the same) for 120 s, naming the mutant. It stops when dropped,
/// however the test ends: the test binary runs other tests after this one,
/// which must not be aborted for the fuzz test's silence.
struct Watchdog {
    stop: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(current: Arc<AtomicU64>, done: Arc<AtomicU64>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut last = (u64::MAX, 0);
            let mut still_s = 0;
            while !stopped.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(1));
                let now = (current.load(Ordering::SeqCst), done.load(Ordering::SeqCst));
                still_s = if now == last { still_s + 1 } else { 0 };
                last = now;
                if still_s >= 120 && !stopped.load(Ordering::SeqCst) {
                    eprintln!(
                        "mutant {} hangs (no progress for 120 s); replay: IDEMSIM_FUZZ_ONLY={} cargo test --test it fuzz::",
                        now.0, now.0
                    );
                    std::process::abort();
                }
            }
        });
        Watchdog { stop }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[test]
fn mutated_scenarios_never_crash_hang_or_go_unlocated() {
    let base = env_u64("IDEMSIM_FUZZ_SEED").unwrap_or(0x1de5_0001);
    let count = env_u64("IDEMSIM_FUZZ_MUTANTS").unwrap_or(3000);
    let only = env_u64("IDEMSIM_FUZZ_ONLY");
    let files: Vec<(String, String)> = support::scenario_files()
        .iter()
        .map(|p| {
            (
                support::name_of(p),
                std::fs::read_to_string(p).expect("readable"),
            )
        })
        .collect();

    // A hang is reported with the mutant that caused it, then the process
    // ends: a test cannot otherwise stop a stuck call.
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let done = Arc::new(AtomicU64::new(0));
    let _watch = Watchdog::start(current.clone(), done.clone());

    let mut failures = Vec::new();
    let (mut rejected, mut other) = (0, 0);
    let seeds: Vec<u64> = match only {
        Some(s) => vec![s],
        None => (0..count).map(|i| base.wrapping_add(i)).collect(),
    };
    for seed in seeds {
        current.store(seed, Ordering::SeqCst);
        let mut rng = Rng(seed);
        let (name, text) = rng.pick(&files);
        let m = mutate(text, &mut rng);
        if let Err(why) = judge(&m) {
            failures.push(format!(
                "mutant {seed} of {name} ({}; --set {:?}): {why}\n  replay: IDEMSIM_FUZZ_ONLY={seed} cargo test --test it fuzz::",
                m.what, m.sets
            ));
        } else if m.must_reject {
            rejected += 1;
        } else {
            other += 1;
        }
        done.fetch_add(1, Ordering::SeqCst);
    }
    if let Some(seed) = only {
        let mut rng = Rng(seed);
        let (_, text) = rng.pick(&files);
        let m = mutate(text, &mut rng);
        eprintln!("the mutant:\n{}\n--set {:?}", m.text, m.sets);
    }
    assert!(
        failures.is_empty(),
        "{} of the mutants failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{rejected} nonsense mutants rejected, {other} damaged ones handled");
    // The nonsense classes were really exercised, not skipped.
    if only.is_none() {
        assert!(
            rejected > count / 5,
            "only {rejected} nonsense mutants were generated"
        );
    }
}
