//! The observation list checked kind by kind: which kinds are bookkeeping,
//! how they are numbered, how traces write them.

use super::*;
use crate::contention::{RESOURCE_LAYER, UPDATE, WRITE};
use crate::payment::TRANSFER;

/// One observation of every kind, in the order of the list.
pub(crate) fn one_of_each() -> Vec<Obs> {
    let op = Op::new(&WRITE, 1);
    let key = Key::Op { op, n: 1 };
    let layer = &RESOURCE_LAYER;
    let mut all = vec![
        Obs::Intent {
            op,
            payload: 5,
            window_ms: 0,
        },
        Obs::AttemptSent { op, attempt: 1 },
        Obs::Received { layer, op, key },
        Obs::Effect {
            site: &UPDATE,
            op,
            payload: 5,
        },
        Obs::StateHeld {
            op,
            attempt: 1,
            entity: op,
            version: 1,
        },
        Obs::Attempt {
            op,
            attempt: 1,
            outcome: AttemptOutcome::Ok,
        },
        Obs::ToldDone { op, payload: 5 },
        Obs::Ended {
            op,
            ending: Ending::Done,
        },
    ];
    all.extend(event_kinds(op));
    all.extend([
        Obs::ExecStart { key },
        Obs::ExecEnd { key },
        Obs::ExecutorsLost,
        Obs::DedupStore { keys: 1, bound: 0 },
        Obs::Work {
            layer,
            op,
            attempt: 1,
            recover_ms: 0,
        },
        Obs::Shed {
            layer,
            op,
            recover_ms: 0,
        },
        Obs::RetryDenied { op },
        Obs::FastFailed { op },
        Obs::Deployed { version: 2 },
        Obs::Reversal {
            site: &TRANSFER,
            op,
            payload: 5,
        },
        Obs::Handled {
            op,
            attempt: 1,
            version: 2,
        },
        Obs::EffectBy { op, version: 2 },
    ]);
    all
}

/// One observation of each kind about an event owed by a commit, or a
/// resource's versions.
fn event_kinds(op: Op) -> [Obs; 6] {
    [
        Obs::Committed {
            op,
            entity: op,
            value: 5,
            version: 1,
        },
        Obs::Accepted { op },
        Obs::DeadLettered { op },
        Obs::ValueWritten {
            op,
            entity: op,
            value: 5,
            version: 1,
        },
        Obs::Superseded { op },
        Obs::NewVersion {
            op,
            entity: op,
            version: 1,
            value: 5,
            change: Change::Set,
        },
    ]
}

#[test]
fn the_kinds_marked_bookkeeping_are_the_ones_diff_hides() {
    let hidden: Vec<String> = one_of_each()
        .iter()
        .filter(|o| o.is_bookkeeping())
        .map(|o| {
            format!("{o:?}")
                .split([' ', '{'])
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        hidden,
        [
            "AttemptSent",
            "Received",
            "ExecStart",
            "ExecEnd",
            "ExecutorsLost",
            "DedupStore",
            "Work",
            "Shed",
            "Deployed",
            "Handled",
            "EffectBy"
        ]
    );
}

/// `ObsKind` (and so `ALL_KINDS`, which the declaration makes) names the
/// variants of `Obs` in the order of the list, each numbered by its place.
#[test]
fn every_kind_is_numbered_in_the_order_of_the_list() {
    let kinds = ALL_KINDS;
    let names: Vec<String> = kinds.iter().map(|k| format!("{k:?}")).collect();
    let variants: Vec<String> = one_of_each()
        .iter()
        .map(|o| {
            format!("{o:?}")
                .split([' ', '{'])
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, variants, "ObsKind names the variants of Obs");
    for (i, k) in kinds.iter().enumerate() {
        assert_eq!(*k as usize, i, "{k:?} is numbered by its place in the list");
    }
}

#[test]
fn every_kind_reads_as_traces_write_it() {
    let lines: Vec<String> = one_of_each().iter().map(|o| o.to_string()).collect();
    assert_eq!(lines.len(), 26);
    assert_eq!(
        lines[22],
        "v2 deployed: it handles what arrives from now on"
    );
    assert_eq!(lines[16], "every execution of this process died with it");
    assert_eq!(lines[17], "dedup store holds 1 key (bound 0)");
    assert!(lines[3].starts_with("EFFECT update of "), "{}", lines[3]);
}
