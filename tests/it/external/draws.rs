//! A program's own random choices, drawn through idemsim (`draw`): recorded
//! in the run's record, handed back by a replay, lowered by shrinking; and
//! the protocol version a program says it speaks (`hello`).

use super::python_available;
use crate::support::{run, scratch};
use std::path::PathBuf;

/// A consumer that dedups on a stored id, except when its own draw (one of
/// four values) comes out 3: a failure that depends on the program's draw.
const DRAWER: &str = r#"import json, sys
hello = int(sys.argv[1]) if len(sys.argv) > 1 else 2
stored = {}
for line in sys.stdin:
    m = json.loads(line)
    out = []
    if m["type"] == "start":
        stored = dict(m["storage"])
        out.append({"type": "hello", "protocol": hello})
    elif m["type"] == "msg" and m["payload"]["type"] == "deliver":
        d = m["payload"]
        ev = d["event"]
        sys.stdout.write(json.dumps({"type": "draw", "name": "skip-dedup", "bound": 4}) + "\n")
        sys.stdout.flush()
        drawn = json.loads(sys.stdin.readline())
        key = "processed:%d" % ev["id"]
        if key not in stored or drawn["value"] == 3:
            out.append({"type": "effect", "op": ev["id"], "payload": ev["value"]})
            out.append({"type": "store", "key": key, "value": True})
            stored[key] = True
        out.append({"type": "send", "to": "broker", "payload": {"type": "ack", "id": ev["id"], "receipt": d["receipt"]}})
    for o in out:
        sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()
"#;

const SCENARIO: &str = r#"summary = "a consumer whose own draw skips its dedup"
model = "messaging"

[expect]
verdict = "violation"
invariant = "no-duplicate-effect"

[run]
runs = 40

[producer]
write = "outbox"

[broker]
visibility_timeout_ms = 2000
consumers = 1

[consumer]
program = ["python3", "drawer.py"]

[network]
loss_per_mille = [100, 300]
delay_ms_min = 1
delay_ms_max = 50

[[events]]
entity = 4711
value = 1200
start_ms = 0

[[events]]
entity = 4712
value = 800
start_ms = 500

[[events]]
entity = 4711
value = 1300
start_ms = 1000
"#;

/// The drawing consumer and its scenario in a folder of their own.
fn drawer(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("drawer.py"), DRAWER).unwrap();
    std::fs::write(dir.join("draws.toml"), SCENARIO).unwrap();
    dir.join("draws.toml")
}

#[test]
fn a_programs_draws_are_recorded_replayed_and_shrunk() {
    if !python_available() {
        return;
    }
    let scenario = drawer("external/draws");
    let repro = scenario.with_file_name("draws.repro.json");
    let (s, r) = (scenario.to_str().unwrap(), repro.to_str().unwrap());
    let (out, _) = run(&["check", s, "--jobs", "1", "--repro-out", r], 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    // Recorded: the program's draws are the stream of its actor's own
    // decisions, and shrinking lowered every one the failure does not need
    // to zero, keeping the one 3 that skips the dedup.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&repro).unwrap()).unwrap();
    let draws: Vec<u64> = file["choices"]["actor:consumer-1"]
        .as_array()
        .expect("the program's draws are recorded")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(
        draws.iter().filter(|v| **v != 0).collect::<Vec<_>>(),
        vec![&3],
        "{draws:?}"
    );
    let header = out
        .lines()
        .find(|l| l.contains("· shrunk from seed"))
        .unwrap();
    let (before, after) = decisions(header);
    assert!(after < before, "{header}");
    // Replayed: the program is handed the recorded value again.
    let (text, _) = run(&["replay", s, "--repro", r, "--transcript"], 1);
    assert!(
        text.contains(r#"→ {"type":"drawn","name":"skip-dedup","value":3}"#),
        "{text}"
    );
}

/// `N → M decisions` of a shrunk trace's header.
fn decisions(header: &str) -> (u64, u64) {
    let part = header.split("; ").nth(1).unwrap();
    let mut words = part.split_whitespace();
    let before = words.next().unwrap().parse().unwrap();
    words.next(); // →
    (before, words.next().unwrap().parse().unwrap())
}

#[test]
fn a_program_of_an_older_protocol_cannot_draw() {
    if !python_available() {
        return;
    }
    let scenario = drawer("external/old-protocol");
    let s = scenario.to_str().unwrap();
    let set = r#"consumer.program=["python3","drawer.py","1"]"#;
    let (_, err) = run(&["check", s, "--set", set, "--runs", "5"], 2);
    assert!(
        err.contains("a `draw` from a program that said it speaks protocol 1, which has no draws"),
        "{err}"
    );
    let set = r#"consumer.program=["python3","drawer.py","4"]"#;
    let (_, err) = run(&["check", s, "--set", set, "--runs", "5"], 2);
    assert!(
        err.contains("the program speaks protocol 4, and this idemsim speaks 1 to 3"),
        "{err}"
    );
}
