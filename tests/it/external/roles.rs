//! Programs in other roles than the consumer's: a Python bank in the
//! payment model (examples/python/bank.py), judged by the transfers it
//! reports, with its protocol errors and its nondeterminism reported as for
//! the consumer, naming the role's actor.

use super::python_available;
use crate::support::{run, scratch};

const BANK_DEDUP: &str = "examples/python/external-bank-dedup-by-key.toml";
const BANK_NO_DEDUP: &str = "examples/python/external-bank-no-dedup.toml";

#[test]
fn a_python_bank_that_dedups_on_the_passed_key_holds_and_one_that_does_not_pays_twice() {
    if !python_available() {
        return;
    }
    let (out, _) = run(&["verify", BANK_DEDUP, "--jobs", "2", "--runs", "60"], 0);
    assert!(out.contains("2 of 2 protections are load-bearing"), "{out}");
    let (out, _) = run(&["check", BANK_NO_DEDUP, "--jobs", "2", "--runs", "60"], 1);
    assert!(out.contains("violation of no-duplicate-effect"), "{out}");
    assert!(out.contains("EUR in total for one operation"), "{out}");
}

/// A bank that answers a transfer with `answer` (Python, the transfer as `t`),
/// in a scenario of its own.
fn inline_bank(name: &str, answer: &str) -> String {
    let dir = scratch(name);
    let program = format!(
        r#"import json, random, sys
for line in sys.stdin:
    m = json.loads(line)
    out = []
    if m["type"] == "msg" and m["payload"]["type"] == "transfer":
        t = m["payload"]
        out.append({answer})
    for o in out:
        print(json.dumps(o))
    print('{{"type":"done"}}', flush=True)
"#
    );
    std::fs::write(dir.join("bank.py"), program).unwrap();
    let scenario = std::fs::read_to_string(BANK_DEDUP).unwrap();
    let file = dir.join("bank.toml");
    std::fs::write(&file, scenario).unwrap();
    file.to_string_lossy().into_owned()
}

#[test]
fn a_bank_program_that_breaks_the_protocol_is_named_with_the_fix() {
    if !python_available() {
        return;
    }
    let bad = r#"{"type": "send", "to": "service", "payload": {"type": "transfer-done", "claim": t["claim"], "part": 0, "reference": t["reference"], "result": "ok"}}"#;
    let file = inline_bank("external/bank-bad", bad);
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(err.contains("the program of bank"), "{err}");
    assert!(
        err.contains("`result` must be \"done\" or \"refused\""),
        "{err}"
    );
    assert!(
        err.contains(r#"help: a bank answers a transfer with {"type":"transfer-done""#),
        "{err}"
    );
    assert!(err.contains("repro: idemsim replay"), "{err}");
}

#[test]
fn a_bank_program_that_answers_by_chance_fails_the_determinism_check() {
    if !python_available() {
        return;
    }
    // Its own random numbers, not idemsim's draws: a seed gives two runs.
    let chance = r#"{"type": "effect", "op": t["claim"], "payload": t["amount_eur"] + random.randrange(1000)}"#;
    let file = inline_bank("external/bank-random", chance);
    let (_, err) = run(&["check", &file, "--runs", "3"], 2);
    assert!(
        err.contains("the program of bank does not behave the same way when the seed runs twice"),
        "{err}"
    );
}

#[test]
fn the_banks_program_keys_are_refused_where_they_mean_nothing() {
    use crate::support::load_error;
    let payment = "model = \"payment\"\nsummary = \"x\"\n";
    for (table, words) in [
        // A built-in key beside the program: the program decides.
        (
            "[bank]\nprogram = [\"python3\", \"bank.py\"]\naccepts_key = false\n",
            "bank.accepts_key belongs to the built-in bank",
        ),
        // A program's setting without a program.
        (
            "[bank]\nstate_folder = true\n",
            "state_folder is a setting of an external program, and no bank.program is given",
        ),
        // The protocol has no refund message: a compensation's refunds
        // would never reach the program.
        (
            "[client.compensate]\nrefund_when = \"timeout\"\n[bank]\nprogram = [\"sh\", \"-c\", \"exit\"]\n",
            "s.toml:3:1: the compensation job refunds at the bank, and a bank program (bank.program) is never told of refunds",
        ),
    ] {
        let e = load_error("s.toml", &format!("{payment}{table}"));
        assert!(e.to_string().contains(words), "{table}: {e}");
    }
    // A composed model runs its built-in bank.
    let e = load_error(
        "s.toml",
        "model = \"chain\"\nsummary = \"x\"\n[bank]\nprogram = [\"python3\", \"bank.py\"]\n",
    );
    assert!(
        e.to_string().contains("this model runs its built-in bank"),
        "{e}"
    );
}
