//! Determinism is tested, not assumed: for a sample of seeds of every scenario,
//! two runs give the same trace, and a replay of the recorded choices gives it too.

use models::Scenario;
use sim::{Recorder, Sim, Source};
use std::path::Path;

/// Every shipped scenario, loaded, in file order.
fn shipped() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            Scenario::load(&path.display().to_string(), &text).unwrap()
        })
        .collect()
}

#[test]
fn every_scenario_is_a_pure_function_of_its_seed_and_of_its_record() {
    let all = shipped();
    assert!(all.len() >= 2);
    for s in all {
        let m = &s.system;
        let mut sim = Sim::new(m);
        for seed in 0..40 {
            let mut a = Recorder::default();
            let ra = sim.run(m, Source::Seed { seed, record: true }, &mut a);
            let record = sim.choices.take_recorded();
            let mut b = Recorder::default();
            let rb = sim.run(
                m,
                Source::Seed {
                    seed,
                    record: false,
                },
                &mut b,
            );
            assert!(
                a.entries == b.entries,
                "{}: seed {seed} ran twice differently",
                s.name
            );
            assert_eq!(ra, rb);
            let mut c = Recorder::default();
            let rc = sim.run(
                m,
                Source::Replay {
                    record: &record,
                    log_points: false,
                },
                &mut c,
            );
            assert!(
                a.entries == c.entries,
                "{}: seed {seed} replays differently",
                s.name
            );
            assert_eq!(ra, rc);
            // The sweep's untraced run agrees with the traced one.
            assert_eq!(sim.run_seed(m, seed), ra);
        }
    }
}

/// Everything a run shows, with what each actor holds after every
/// `every`-th step (a leaked value stays in the state, so sampling still sees it).
#[derive(PartialEq, Debug)]
struct Shown {
    every: u64,
    entries: Vec<String>,
    snapshots: Vec<String>,
}

impl Shown {
    fn every(every: u64) -> Shown {
        Shown {
            every,
            entries: Vec::new(),
            snapshots: Vec::new(),
        }
    }
}

impl<M: std::fmt::Debug, O: std::fmt::Debug, T: std::fmt::Debug> sim::Tracer<M, O, T> for Shown {
    const ENABLED: bool = true;
    const SNAPSHOTS: bool = true;
    fn record(&mut self, entry: sim::TraceEntry<M, O, T>) {
        self.entries.push(format!("{entry:?}"));
    }
    fn snapshot(
        &mut self,
        step: u64,
        actor: sim::ActorId,
        state: Option<&dyn sim::Held>,
        storage: &dyn sim::Held,
    ) {
        if step.is_multiple_of(self.every) {
            self.snapshots
                .push(format!("{step} {actor} {state:?} {storage:?}"));
        }
    }
}

/// A warm simulator reuses the actors' state and storage, the queue and the
/// oracle's tables from run to run (that is how it allocates nothing): a run
/// on it must show exactly what the same seed shows on a new simulator, state
/// by state, or something of an earlier run (or of a process before its
/// crash) leaked into it.
#[test]
fn a_reused_simulator_runs_a_seed_as_a_new_one_does() {
    for s in shipped() {
        let m = &s.system;
        let mut warm = Sim::new(m);
        // Formatting every actor after every step costs time in proportion
        // to the run: a long run (a load scenario, 100 clients) gets fewer
        // seeds, still more than one so that a warm run follows another, and
        // a snapshot every 64th step.
        let events = warm
            .run(
                m,
                Source::Seed {
                    seed: 0,
                    record: false,
                },
                &mut sim::NoTrace,
            )
            .events;
        let (seeds, every) = if events > 5_000 { (3, 64) } else { (30, 1) };
        // Descending, so each run follows a different seed's run.
        for seed in (0..seeds).rev() {
            let source = || Source::Seed {
                seed,
                record: false,
            };
            let mut a = Shown::every(every);
            let ra = warm.run(m, source(), &mut a);
            let mut b = Shown::every(every);
            let rb = Sim::new(m).run(m, source(), &mut b);
            assert_eq!(ra, rb, "{}: seed {seed}", s.name);
            assert!(
                a == b,
                "{}: seed {seed} shows another run on a warm simulator",
                s.name
            );
        }
    }
}
