//! Determinism is tested, not assumed: for a sample of seeds of every scenario,
//! two runs give the same trace, and a replay of the recorded choices gives it too.

use models::Scenario;
use sim::{Recorder, Sim, Source};
use std::path::Path;

#[test]
fn every_scenario_is_a_pure_function_of_its_seed_and_of_its_record() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2);
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let s = Scenario::load(&path.display().to_string(), &text).unwrap();
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
