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
