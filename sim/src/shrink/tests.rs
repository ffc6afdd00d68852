use super::*;
use crate::choice::Record;

fn rec(streams: &[&[u64]]) -> Record {
    Record {
        streams: streams.iter().map(|s| s.to_vec()).collect(),
    }
}

#[test]
fn zeroing_or_lowering_a_value_is_always_smaller() {
    let base = rec(&[&[3, 0, 7], &[1]]);
    assert!(smaller(&rec(&[&[0, 0, 7], &[1]]), &base));
    assert!(smaller(&rec(&[&[3, 0, 6], &[1]]), &base));
    // Fewer faults win over a shorter record.
    assert!(smaller(&rec(&[&[0, 0, 0, 0, 9], &[]]), &base));
    assert!(!smaller(&base, &base));
}

#[test]
fn stream_names_are_the_repro_keys() {
    let w = World::new(vec!["client".into(), "service".into()]);
    let l = StreamLayout { actors: 2 };
    assert_eq!(stream_name(&w, StreamLayout::SWARM), "swarm");
    assert_eq!(stream_name(&w, l.link(1, 0)), "link:service->client");
    assert_eq!(stream_name(&w, l.crash(1)), "crash:service");
    assert_eq!(stream_name(&w, l.actor(0)), "actor:client");
    for s in 0..l.count() as StreamId {
        assert_eq!(stream_by_name(&w, &stream_name(&w, s)), Some(s));
    }
    assert_eq!(stream_by_name(&w, "link:bank->client"), None);
}

/// A failing seed of the exhaustive tests' toy (a resending sender and a
/// receiver without deduplication), its record and how many values it holds.
fn toy_failure() -> (crate::exhaustive::tests::ToyModel, Record, usize) {
    let model = crate::exhaustive::tests::toy();
    let mut sim = crate::engine::Sim::new(&model);
    for seed in 0..10_000 {
        let (record, report) = record_seed(&mut sim, &model, seed);
        if report.outcome.is_failure() && record.nonzero_count() > 1 {
            // What its replay records, zeros included.
            replay(&mut sim, &model, &record, false, &mut crate::trace::NoTrace);
            let values = sim.choices.recorded().streams.iter().map(Vec::len).sum();
            return (model, record, values);
        }
    }
    panic!("the toy fails on some seed");
}

fn with_max_recorded<T>(max: usize, f: impl FnOnce() -> T) -> T {
    crate::choice::TEST_MAX_RECORDED_VALUES.with(|m| m.set(max));
    let out = f();
    crate::choice::TEST_MAX_RECORDED_VALUES.with(|m| m.set(crate::choice::MAX_RECORDED_VALUES));
    out
}

/// A failing run too long to record is handed back as it came, not
/// shrunk from a record cut short (which would replay another run).
#[test]
fn a_failure_too_long_to_record_is_returned_unshrunk() {
    let (model, record, values) = toy_failure();
    let mut sim = crate::engine::Sim::new(&model);
    let shrunk = with_max_recorded(values - 1, || {
        shrink(&mut sim, &model, &record, ShrinkLimits::default())
    });
    let mut original = record.clone();
    original.normalize();
    assert_eq!(shrunk.record, original);
    assert_eq!(shrunk.report, shrunk.original_report);
    assert!(!shrunk.complete);
    assert_eq!(shrunk.stopped, Some(Stopped::TooLong));
    assert_eq!(shrunk.runs, 0);
}

/// A candidate whose run outgrows the record bound is never kept, even
/// when it fails the same way: what it read is cut short and would replay
/// another run. The bound drops to one value once the original is recorded,
/// so every candidate overflows and the shrink keeps the original.
#[test]
fn a_candidate_too_long_to_record_is_not_kept() {
    let (model, record, _) = toy_failure();
    let mut sim = crate::engine::Sim::new(&model);
    let shrunk = with_max_recorded(crate::choice::MAX_RECORDED_VALUES, || {
        let mut tighten = |_: &ShrinkProgress| {
            crate::choice::TEST_MAX_RECORDED_VALUES.with(|m| m.set(1));
            false
        };
        shrink_with(
            &mut sim,
            &model,
            &record,
            ShrinkLimits::default(),
            &mut tighten,
        )
    });
    assert!(shrunk.runs > 0, "candidates were tried");
    let mut original = record.clone();
    original.normalize();
    assert_eq!(shrunk.record, original, "no candidate kept");
    let again = replay(
        &mut sim,
        &model,
        &shrunk.record,
        false,
        &mut crate::trace::NoTrace,
    );
    assert_eq!(again, shrunk.report, "the shrunk record replays its run");
}
