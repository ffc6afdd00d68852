//! Programs as the payment service, the HTTP server and the outbox relay:
//! the Python examples (examples/python/service.py, http_server.py, relay.py) hold and fail as
//! their scenarios say, a program's own draw makes a failure that shrinks
//! and replays, and protocol errors and nondeterminism are reported naming
//! the role's actor, as for the consumer and the bank.

use crate::support::tools::{require, PYTHON3};
use crate::support::{load_error, run, scratch};

const SERVICE_SAME_TX: &str = "examples/python/external-service-claim-same-tx.toml";
const SERVICE_CHECK_THEN_ACT: &str = "examples/python/external-service-check-then-act.toml";
const SERVER_KEY_STORED: &str = "examples/python/external-http-server-key-stored.toml";
const SERVER_KEY_IGNORED: &str = "examples/python/external-http-server-key-ignored.toml";
const SERVER_KEY_ON_REPLICA: &str = "examples/python/external-http-server-key-on-replica.toml";
const RELAY_AFTER_CONFIRM: &str = "examples/python/external-relay-mark-after-confirm.toml";
const RELAY_BEFORE_PUBLISH: &str = "examples/python/external-relay-mark-before-publish.toml";

fn python(check: &str) -> bool {
    require(check, &[&PYTHON3])
}

#[test]
fn a_python_service_that_claims_the_key_with_its_transfer_holds_and_check_then_act_pays_twice() {
    if !python("external::services python service") {
        return;
    }
    let (out, _) = run(
        &["verify", SERVICE_SAME_TX, "--jobs", "2", "--runs", "60"],
        0,
    );
    assert!(out.contains("1 of 1 protections are load-bearing"), "{out}");
    let (out, _) = run(&["check", SERVICE_CHECK_THEN_ACT, "--jobs", "2"], 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    assert!(out.contains("2400 EUR in total for one operation"), "{out}");
}

#[test]
fn a_python_http_server_that_stores_the_key_holds_and_one_that_ignores_it_creates_twice() {
    if !python("external::services python http server") {
        return;
    }
    let (out, _) = run(
        &["verify", SERVER_KEY_STORED, "--jobs", "2", "--runs", "60"],
        0,
    );
    assert!(out.contains("2 of 2 protections are load-bearing"), "{out}");
    let (out, _) = run(&["check", SERVER_KEY_IGNORED, "--jobs", "2"], 1);
    assert!(
        out.contains("violation of no-duplicate-effect: change #2 for request #"),
        "{out}"
    );
}

#[test]
fn a_python_relay_that_marks_rows_after_the_confirmation_holds_and_one_that_marks_first_loses() {
    if !python("external::services python relay") {
        return;
    }
    let (out, _) = run(
        &["verify", RELAY_AFTER_CONFIRM, "--jobs", "2", "--runs", "60"],
        0,
    );
    assert!(out.contains("1 of 1 protections are load-bearing"), "{out}");
    let (out, _) = run(&["check", RELAY_BEFORE_PUBLISH, "--jobs", "2"], 1);
    assert!(out.contains("violation of no-lost-effect"), "{out}");
}

#[test]
fn a_relay_program_that_breaks_the_protocol_or_answers_by_chance_is_named() {
    if !python("external::services relay protocol errors") {
        return;
    }
    // A publish without its event's fields: a wrong answer shape.
    let wrong = r#"{"type": "send", "to": "broker", "payload": {"type": "publish", "event": {"id": p["event"]["id"]}}}"#;
    let file = inline(
        "external/relay-bad",
        RELAY_AFTER_CONFIRM,
        "rel.py",
        "publish",
        wrong,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(err.contains("the program of relay"), "{err}");
    assert!(err.contains("`entity` must be a whole number"), "{err}");
    assert!(
        err.contains(r#"help: a relay publishes a row to the broker with {"type":"publish""#),
        "{err}"
    );
    let chance = r#"{"type": "send", "to": "producer", "payload": {"type": "publish-ack", "id": p["event"]["id"] + random.randrange(2)}}"#;
    let file = inline(
        "external/relay-random",
        RELAY_AFTER_CONFIRM,
        "rel.py",
        "publish",
        chance,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(
        err.contains("the program of relay does not behave the same way when the seed runs twice"),
        "{err}"
    );
}

/// A failure that needs the program's own draw (the lagging replica):
/// `shrink` keeps that one draw and lowers the others, and the repro file
/// it writes replays to the same violation, handing the program the value.
#[test]
fn a_failure_that_depends_on_a_programs_draw_shrinks_and_replays() {
    if !python("external::services draw shrinks") {
        return;
    }
    let dir = scratch("external/server-draw");
    let repro = dir.join("replica.repro.json");
    let r = repro.to_str().unwrap();
    let (out, _) = run(&["shrink", SERVER_KEY_ON_REPLICA, "--out", r], 1);
    let header = out
        .lines()
        .find(|l| l.contains("· shrunk from seed"))
        .unwrap();
    let decisions = header.split("; ").nth(1).unwrap();
    let mut words = decisions.split_whitespace();
    let before: u64 = words.next().unwrap().parse().unwrap();
    words.next();
    let after: u64 = words.next().unwrap().parse().unwrap();
    assert!(after < before, "{header}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&repro).unwrap()).unwrap();
    let draws: Vec<u64> = file["choices"]["actor:server"]
        .as_array()
        .expect("the program's draws are recorded")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // The follower, once: every other lookup went back to the primary.
    assert_eq!(draws.iter().filter(|v| **v == 1).count(), 1, "{draws:?}");
    let (text, _) = run(
        &[
            "replay",
            SERVER_KEY_ON_REPLICA,
            "--repro",
            r,
            "--transcript",
        ],
        1,
    );
    assert!(
        text.contains(r#"→ {"type":"drawn","name":"replica","value":1}"#),
        "{text}"
    );
    // And the run it replays is the shrunk violation.
    let (text, _) = run(&["replay", SERVER_KEY_ON_REPLICA, "--repro", r], 1);
    assert!(
        text.contains("=> Violation of no-duplicate-effect on request #"),
        "{text}"
    );
}

/// A scenario beside a program whose answer to a request is `answer`
/// (Python; the request's payload is `p`, its sender `m["from"]`).
fn inline(name: &str, scenario: &str, file: &str, kind: &str, answer: &str) -> String {
    let dir = scratch(name);
    let program = format!(
        r#"import json, random, sys
for line in sys.stdin:
    m = json.loads(line)
    out = []
    if m["type"] == "msg" and m["payload"]["type"] == "{kind}":
        p = m["payload"]
        out.append({answer})
    for o in out:
        print(json.dumps(o))
    print('{{"type":"done"}}', flush=True)
"#
    );
    std::fs::write(dir.join(file), program).unwrap();
    // Without the protections: they name the example's program.
    let text = std::fs::read_to_string(scenario).unwrap();
    let (before, after) = text.split_once("protections = [").unwrap();
    let text = format!("{before}{}", after.split_once("]\n").unwrap().1);
    let (_, tail) = text.split_once("program = [\"python3\", \"").unwrap();
    let (_, rest) = tail.split_once('\n').unwrap();
    let head = &text[..text.find("program = [\"python3\", \"").unwrap()];
    let toml = dir.join("scenario.toml");
    std::fs::write(
        &toml,
        format!("{head}program = [\"python3\", \"{file}\"]\n{rest}"),
    )
    .unwrap();
    toml.to_string_lossy().into_owned()
}

#[test]
fn a_service_program_that_breaks_the_protocol_is_named_with_the_fix() {
    if !python("external::services service protocol errors") {
        return;
    }
    // A wrong answer shape: a status the service cannot give.
    let wrong = r#"{"type": "send", "to": m["from"], "payload": {"type": "pay-reply", "claim": p["claim"], "part": 0, "attempt": p["attempt"], "status": "ok", "amount_eur": 1}}"#;
    let file = inline(
        "external/service-bad",
        SERVICE_SAME_TX,
        "svc.py",
        "pay",
        wrong,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(err.contains("scenario.toml"), "{err}");
    assert!(err.contains("the program of service"), "{err}");
    assert!(
        err.contains("`status` must be one of paid, in-progress"),
        "{err}"
    );
    assert!(
        err.contains(r#"help: a payment service answers a client with {"type":"pay-reply""#),
        "{err}"
    );
    assert!(err.contains("repro: idemsim replay"), "{err}");
    // The money leaves at the bank: a service's effect is refused.
    let effect = r#"{"type": "effect", "op": p["claim"], "payload": p["amount_eur"]}"#;
    let file = inline(
        "external/service-effect",
        SERVICE_SAME_TX,
        "svc.py",
        "pay",
        effect,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(
        err.contains("an `effect`, which the payment service role does not report"),
        "{err}"
    );
    // Bad JSON.
    let file = inline(
        "external/service-json",
        SERVICE_SAME_TX,
        "svc.py",
        "pay",
        r#"{"type": "log", "text": "x"}) ; print("{not json"); out.append({"type": "log", "text": "y"}"#,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(err.contains("the program of service"), "{err}");
    assert!(err.contains("{not json"), "{err}");
}

#[test]
fn a_server_program_that_breaks_the_protocol_or_exits_is_named() {
    if !python("external::services server protocol errors") {
        return;
    }
    let wrong = r#"{"type": "send", "to": m["from"], "payload": {"type": "response", "request": p["request"], "attempt": p["attempt"], "method": p["method"], "status": 500}}"#;
    let file = inline(
        "external/server-bad",
        SERVER_KEY_STORED,
        "srv.py",
        "request",
        wrong,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(err.contains("the program of server"), "{err}");
    assert!(
        err.contains("`status` must be 200, 201, 204, 404, 412 or 422"),
        "{err}"
    );
    assert!(
        err.contains(r#"help: an HTTP server answers a request with {"type":"response""#),
        "{err}"
    );
    // A program that exits mid-run.
    let exits = r#"sys.exit(3)"#;
    let file = inline(
        "external/server-exits",
        SERVER_KEY_STORED,
        "srv.py",
        "request",
        exits,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(err.contains("the program of server"), "{err}");
    assert!(err.contains("exit"), "{err}");
}

#[test]
fn service_and_server_programs_that_answer_by_chance_fail_the_determinism_check() {
    if !python("external::services determinism") {
        return;
    }
    let chance = r#"{"type": "send", "to": "bank", "payload": {"type": "transfer", "claim": p["claim"], "part": 0, "amount_eur": p["amount_eur"] + random.randrange(1000)}}"#;
    let file = inline(
        "external/service-random",
        SERVICE_SAME_TX,
        "svc.py",
        "pay",
        chance,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(
        err.contains(
            "the program of service does not behave the same way when the seed runs twice"
        ),
        "{err}"
    );
    let chance = r#"{"type": "effect", "op": p["request"], "payload": random.randrange(1000)}"#;
    let file = inline(
        "external/server-random",
        SERVER_KEY_STORED,
        "srv.py",
        "request",
        chance,
    );
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(
        err.contains("the program of server does not behave the same way when the seed runs twice"),
        "{err}"
    );
}

#[test]
fn the_service_and_server_program_keys_are_refused_where_they_mean_nothing() {
    for (text, words) in [
        (
            "model = \"payment\"\nsummary = \"x\"\n[service]\nprogram = [\"python3\", \"s.py\"]\nidempotency = \"none\"\n",
            "service.idempotency belongs to the built-in service",
        ),
        (
            "model = \"payment\"\nsummary = \"x\"\n[service]\nhandler_timeout_ms = 5\n",
            "handler_timeout_ms is a setting of an external program, and no service.program is given",
        ),
        (
            "model = \"http\"\nsummary = \"x\"\n[server]\nprogram = [\"python3\", \"s.py\"]\nput = \"add\"\n",
            "server.put belongs to the built-in server",
        ),
        (
            "model = \"chain\"\nsummary = \"x\"\n[service]\nprogram = [\"python3\", \"s.py\"]\n",
            "this model runs its built-in service",
        ),
        (
            "model = \"messaging\"\nsummary = \"x\"\n[producer]\nwrite = \"state-first\"\n[relay]\nprogram = [\"sh\"]\n",
            "a relay publishes the rows of an outbox, and this producer keeps none",
        ),
        (
            "model = \"messaging\"\nsummary = \"x\"\n[relay]\nstate_folder = true\n",
            "state_folder is a setting of an external program, and no relay.program is given",
        ),
    ] {
        let e = load_error("s.toml", text);
        assert!(e.to_string().contains(words), "{text}: {e}");
    }
}
