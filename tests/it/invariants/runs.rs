//! Keys, executions, endings and load: who runs a request, whether it ends, and whether the system recovers.

use super::ledger::{claim, ended, fires, intent, judge_load, key, paid_once, silent, transfer};
use models::core::{AttemptOutcome, Ending, Key, Obs};
use models::payment::{BANK_LAYER, SERVICE_LAYER};

#[test]
fn one_key_one_operation() {
    let (a, b) = (claim(4711), claim(4712));
    let ts = Key::Time { bucket: 0 };
    let received = |op, key| Obs::Received {
        layer: &SERVICE_LAYER,
        op,
        key,
    };
    fires(
        "one-key-one-operation",
        &[(0, 1, received(a, ts)), (0, 1, received(b, ts))],
    );
    // The same operation's retries reuse its key: that is the point of a key.
    silent(&[(0, 1, received(a, key(a))), (10, 1, received(a, key(a)))]);
    // Requests without a key name no operation by key.
    silent(&[
        (0, 1, received(a, Key::None)),
        (0, 1, received(b, Key::None)),
    ]);
    // Each layer may see the key; the bank seeing it for the same claim is fine.
    silent(&[
        (0, 1, received(a, key(a))),
        (
            0,
            2,
            Obs::Received {
                layer: &BANK_LAYER,
                op: a,
                key: key(a),
            },
        ),
    ]);
}

#[test]
fn operation_ends() {
    let a = claim(4711);
    // Never ended.
    fires("operation-ends", &[(0, 0, intent(a, 1200))]);
    // Retried after a final error.
    fires(
        "operation-ends",
        &[
            (0, 0, intent(a, 1200)),
            (0, 0, Obs::AttemptSent { op: a, attempt: 1 }),
            (
                1,
                0,
                Obs::Attempt {
                    op: a,
                    attempt: 1,
                    outcome: AttemptOutcome::Rejected,
                },
            ),
            (2, 0, Obs::AttemptSent { op: a, attempt: 2 }),
        ],
    );
    let windowed = Obs::Intent {
        op: a,
        payload: 1200,
        window_ms: 60_000,
    };
    // An attempt sent after the window closed.
    fires(
        "operation-ends",
        &[
            (0, 0, windowed),
            (61, 0, Obs::AttemptSent { op: a, attempt: 5 }),
            (62, 0, ended(a, Ending::Unknown)),
        ],
    );
    // The last attempt at the window's edge, ending after it: the window
    // bounds the attempts, so this is fine.
    silent(&[
        (0, 0, windowed),
        (60, 0, Obs::AttemptSent { op: a, attempt: 5 }),
        (70, 0, ended(a, Ending::Unknown)),
    ]);
    silent(&paid_once(a));
}

#[test]
fn at_most_one_executor() {
    let k = key(claim(4711));
    let start = Obs::ExecStart { key: k };
    fires("at-most-one-executor", &[(0, 1, start), (1, 1, start)]);
    silent(&[
        (0, 1, start),
        (1, 1, Obs::ExecEnd { key: k }),
        (2, 1, start),
    ]);
    // A crash ends the executions of the process that crashed.
    silent(&[(0, 1, start), (1, 1, Obs::ExecutorsLost), (2, 1, start)]);
}

#[test]
fn dedup_store_bounded() {
    let store = |keys, bound| Obs::DedupStore { keys, bound };
    fires("dedup-store-bounded", &[(0, 1, store(9, 8))]);
    silent(&[(0, 1, store(8, 8))]);
    silent(&[(0, 1, store(1_000_000, 0))]);
}

#[test]
fn load_recovers() {
    let a = claim(4711);
    let shed = |recover_ms| Obs::Shed {
        layer: &SERVICE_LAYER,
        op: a,
        recover_ms,
    };
    let work = |attempt| Obs::Work {
        layer: &SERVICE_LAYER,
        op: a,
        attempt,
        recover_ms: 30_000,
    };
    let sent = |attempt| Obs::AttemptSent { op: a, attempt };
    let timed_out = Obs::Attempt {
        op: a,
        attempt: 1,
        outcome: AttemptOutcome::Unknown,
    };
    let fires = |steps: &[(u64, u32, Obs)]| assert_eq!(judge_load(steps), Some("load-recovers"));
    // Every operation ends, or `operation-ends` would speak.
    let silent = |steps: &[(u64, u32, Obs)]| {
        let mut all = steps.to_vec();
        all.push((900, 0, ended(a, Ending::Unknown)));
        assert_eq!(judge_load(&all), None, "{all:#?}");
    };
    // Full 31 s after the faults stopped, with 30 s promised: still overloaded.
    fires(&[(0, 0, intent(a, 1200)), (131, 1, shed(30_000))]);
    // Shedding during the faults, or within the promise, is the trigger's doing.
    silent(&[
        (0, 0, intent(a, 1200)),
        (50, 1, shed(30_000)),
        (130, 1, shed(30_000)),
    ]);
    // A service that promises nothing is not judged.
    silent(&[(0, 0, intent(a, 1200)), (500, 1, shed(0))]);
    // Work on the attempt its client waits for is normal, however late.
    silent(&[
        (0, 0, intent(a, 1200)),
        (200, 0, sent(1)),
        (200, 1, work(1)),
    ]);
    // Work on an attempt its client gave up on is work for nobody: its
    // timeout was recorded, or it sent a later attempt, or the operation ended.
    fires(&[
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, timed_out),
        (201, 1, work(1)),
    ]);
    fires(&[
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, sent(2)),
        (201, 1, work(1)),
    ]);
    fires(&[
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, ended(a, Ending::Unknown)),
        (201, 1, work(1)),
    ]);
    // A reconciliation job re-drives an operation its client ended with an
    // unknown outcome: nobody reads that attempt's answer (the job asks the
    // bank next round), but the payment it asks for is the job's point, not
    // work for nobody. The attempts from before the ending still are, and
    // so is the re-drive still queued when the job found the claim paid
    // (by the first attempt, landed late).
    let given_up = [
        (0, 0, intent(a, 1200)),
        (199, 0, sent(1)),
        (200, 0, timed_out),
        (200, 0, ended(a, Ending::Unknown)),
        (300, 0, sent(2)),
    ];
    let mut redriven = given_up.to_vec();
    redriven.push((301, 1, work(2)));
    silent(&redriven);
    let mut stale = given_up.to_vec();
    stale.push((301, 1, work(1)));
    fires(&stale);
    let mut reconciled = given_up.to_vec();
    reconciled.extend([
        (302, 2, transfer(a, 1200)),
        (
            305,
            0,
            Obs::ToldDone {
                op: a,
                payload: 1200,
            },
        ),
        (305, 0, ended(a, Ending::Done)),
        (306, 1, work(2)),
    ]);
    fires(&reconciled);
    // The same waste before the promise ran out is not judged.
    silent(&[
        (0, 0, intent(a, 1200)),
        (119, 0, sent(1)),
        (120, 0, timed_out),
        (121, 1, work(1)),
    ]);
}
