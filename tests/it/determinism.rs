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

/// Everything a run shows (its trace entries, and what each actor holds
/// after every `every`-th step: a leaked value stays in the state, so
/// sampling still sees it), as one 64-bit SipHash of each entry's and each
/// snapshot's `Debug` text, formatted into one reused buffer: the same texts
/// as the strings this test once kept, but nothing allocated per step and one
/// number kept per item. Two different texts give the same number
/// with odds of about 2^-64; a mismatch is explained from the texts
/// ([`explain`]).
struct Digests {
    every: u64,
    digests: Vec<u64>,
    /// One item's text, the room kept from item to item.
    text: String,
    /// The texts as well, only when explaining a mismatch.
    texts: Option<Vec<String>>,
}

impl Digests {
    fn every(every: u64) -> Digests {
        Digests {
            every,
            digests: Vec::new(),
            text: String::new(),
            texts: None,
        }
    }

    /// Forgets the last run, keeping the room it took.
    fn clear(&mut self) {
        self.digests.clear();
    }

    /// Hashes one item, written by `show` into the one buffer, with fixed
    /// keys: the same text gives the same number in every run and thread.
    fn push(&mut self, show: std::fmt::Arguments<'_>) {
        use std::hash::Hasher;
        self.text.clear();
        std::fmt::Write::write_fmt(&mut self.text, show).expect("Debug never fails");
        let mut h = std::hash::DefaultHasher::new();
        h.write(self.text.as_bytes());
        self.digests.push(h.finish());
        if let Some(texts) = &mut self.texts {
            texts.push(self.text.clone());
        }
    }
}

impl<M: std::fmt::Debug, O: std::fmt::Debug, T: std::fmt::Debug> sim::Tracer<M, O, T> for Digests {
    const ENABLED: bool = true;
    const SNAPSHOTS: bool = true;
    fn record(&mut self, entry: sim::TraceEntry<M, O, T>) {
        self.push(format_args!("{entry:?}"));
    }
    fn snapshot(
        &mut self,
        step: u64,
        actor: sim::ActorId,
        state: Option<&dyn sim::Held>,
        storage: &dyn sim::Held,
    ) {
        if step.is_multiple_of(self.every) {
            self.push(format_args!("{step} {actor} {state:?} {storage:?}"));
        }
    }
}

fn seed(seed: u64) -> Source<'static> {
    Source::Seed {
        seed,
        record: false,
    }
}

/// The seeds a warm simulator runs of `m`, in the order it runs them, and
/// how often it snapshots. Formatting every actor after every step costs
/// time in proportion to the run: a long run (a load scenario, 100
/// clients) gets fewer seeds, still more than one so that a warm run
/// follows another, and a snapshot every 64th step. Descending, so each
/// run follows a different seed's run.
fn plan(m: &models::registry::System) -> (Vec<u64>, u64) {
    let events = Sim::new(m).run(m, seed(0), &mut sim::NoTrace).events;
    let (seeds, every) = if events > 5_000 { (3, 64) } else { (30, 1) };
    ((0..seeds).rev().collect(), every)
}

/// Runs the plan's seeds of `s` on one warm simulator, each against the same
/// seed on a new one: the first that differs, told.
fn warm_against_new(s: &Scenario) -> Result<(), String> {
    let m = &s.system;
    let (seeds, every) = plan(m);
    let mut warm = Sim::new(m);
    let (mut a, mut b) = (Digests::every(every), Digests::every(every));
    for (i, &n) in seeds.iter().enumerate() {
        a.clear();
        b.clear();
        let ra = warm.run(m, seed(n), &mut a);
        let rb = Sim::new(m).run(m, seed(n), &mut b);
        if ra != rb {
            return Err(format!("{}: seed {n}: {ra:?} != {rb:?}", s.name));
        }
        if a.digests != b.digests {
            return Err(explain(s, &seeds[..i], n, every));
        }
    }
    Ok(())
}

/// A mismatch in words: the warm simulator's runs up to seed `n` repeated
/// (a warm run depends on nothing else), with texts this time, and the
/// first item that differs from a new simulator's.
fn explain(s: &Scenario, before: &[u64], n: u64, every: u64) -> String {
    let m = &s.system;
    let mut warm = Sim::new(m);
    for &earlier in before {
        warm.run(m, seed(earlier), &mut sim::NoTrace);
    }
    let texts = |sim: &mut Sim<_>| {
        let mut d = Digests::every(every);
        d.texts = Some(Vec::new());
        sim.run(m, seed(n), &mut d);
        d.texts.unwrap_or_default()
    };
    let (a, b) = (texts(&mut warm), texts(&mut Sim::new(m)));
    let at = a.iter().zip(&b).position(|(x, y)| x != y);
    let at = at.unwrap_or(a.len().min(b.len()));
    let none = String::from("(nothing)");
    format!(
        "{}: seed {n} shows another run on a warm simulator (after seeds {before:?}); item {at}:\n  warm: {}\n  new:  {}",
        s.name,
        a.get(at).unwrap_or(&none),
        b.get(at).unwrap_or(&none)
    )
}

/// A warm simulator reuses the actors' state and storage, the queue and the
/// oracle's tables from run to run (that is how it allocates nothing): a run
/// on it must show exactly what the same seed shows on a new simulator, state
/// by state, or something of an earlier run (or of a process before its
/// crash) leaked into it. The scenarios are shared among up to four threads
/// (each scenario its own simulators, so no run sees another's); the first
/// scenario in file order that fails is the one reported.
#[test]
fn a_reused_simulator_runs_a_seed_as_a_new_one_does() {
    let all = shipped();
    let results = crate::support::par_map(&all, 4, warm_against_new);
    assert_eq!(results.len(), all.len(), "every scenario ran");
    if let Some(Err(first)) = results.iter().find(|r| r.is_err()) {
        panic!("{first}");
    }
}
