//! `--format chrome`: valid trace-event JSON with one lane per actor, and a
//! flow arrow from every send to each of its deliveries, bound to slices.

use crate::support;

use serde_json::Value;
use support::run;

fn events(args: &[&str], code: i32) -> Vec<Value> {
    let (out, _) = run(args, code);
    let doc: Value = serde_json::from_str(&out).expect("a chrome trace is one JSON document");
    doc["traceEvents"].as_array().expect("traceEvents").clone()
}

/// The X slice of `tid` that encloses `ts`.
fn enclosing<'a>(ev: &'a [Value], tid: &Value, ts: f64) -> Option<&'a Value> {
    ev.iter().find(|e| {
        e["ph"] == "X"
            && &e["tid"] == tid
            && e["ts"].as_f64().unwrap() <= ts
            && ts < e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()
    })
}

fn check_flows(ev: &[Value]) -> usize {
    let starts: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "s").collect();
    let ends: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "f").collect();
    assert_eq!(starts.len(), ends.len(), "every flow starts and ends");
    for s in &starts {
        let f = ends
            .iter()
            .find(|f| f["id"] == s["id"])
            .unwrap_or_else(|| panic!("no end for flow {}", s["id"]));
        assert_eq!(f["bp"], "e", "a flow ends in the enclosing slice");
        for e in [s, f] {
            let ts = e["ts"].as_f64().unwrap();
            assert!(
                enclosing(ev, &e["tid"], ts).is_some(),
                "flow event {e} is not inside a slice of its lane"
            );
        }
        assert!(
            f["ts"].as_f64() > s["ts"].as_f64(),
            "a message arrives after it is sent"
        );
    }
    // Slices of one lane never overlap: viewers nest or drop overlapping ones.
    let mut lanes: std::collections::BTreeMap<i64, Vec<(f64, f64)>> = Default::default();
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        let ts = e["ts"].as_f64().unwrap();
        lanes
            .entry(e["tid"].as_i64().unwrap())
            .or_default()
            .push((ts, ts + e["dur"].as_f64().unwrap()));
    }
    for spans in lanes.values_mut() {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "overlapping slices {w:?}");
        }
    }
    starts.len()
}

#[test]
fn a_network_duplicate_is_two_flows_from_one_send() {
    let ev = events(
        &[
            "shrink",
            "payment-duplicated-transfers",
            "--format",
            "chrome",
        ],
        1,
    );
    let flows = check_flows(&ev);
    assert!(flows >= 3, "request, transfer and its duplicate: {flows}");
    let transfers: Vec<&Value> = ev
        .iter()
        .filter(|e| e["ph"] == "s" && e["name"].as_str().unwrap().starts_with("transfer"))
        .collect();
    assert_eq!(transfers.len(), 2, "one transfer, delivered twice");
    assert_eq!(
        transfers[0]["ts"], transfers[1]["ts"],
        "from one sending slice"
    );
    let tids: std::collections::BTreeSet<i64> =
        ev.iter().filter_map(|e| e["tid"].as_i64()).collect();
    assert_eq!(
        tids,
        [0, 1, 2, 3].into(),
        "one lane per actor (and the process)"
    );
}

#[test]
fn a_long_run_has_one_lane_per_actor_not_one_per_message() {
    let ev = events(
        &[
            "replay",
            "payment-uncapped-retries",
            "--seed",
            "0",
            "--set",
            "run.max_steps=2000",
            "--format",
            "chrome",
        ],
        3,
    );
    let lanes: std::collections::BTreeSet<(i64, i64)> = ev
        .iter()
        .map(|e| (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
        .collect();
    assert_eq!(lanes.len(), 4, "the process and three actors: {lanes:?}");
    let flows = check_flows(&ev);
    assert!(flows > 500, "a retry storm sends many messages: {flows}");
    // A crash leaves a "down" slice on the crashed actor's lane.
    let ev = events(
        &[
            "shrink",
            "payment-split-booking-first",
            "--format",
            "chrome",
        ],
        1,
    );
    assert!(ev.iter().any(|e| e["name"] == "down (crashed)"));
    check_flows(&ev);
}
