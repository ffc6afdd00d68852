//! Events owed by committed state changes: delivered or visibly dead-lettered, never invented, and the consumer converging on the newest value.

use super::ledger::{
    claim, ended, entity, event, fires, intent, paid_once, published, silent, transfer,
};
use models::core::{Ending, Obs};
use models::messaging::CONSUMER_WRITE;

#[test]
fn no_lost_effect() {
    let a = claim(4711);
    fires(
        "no-lost-effect",
        &[(0, 0, intent(a, 1200)), (1, 0, ended(a, Ending::Abandoned))],
    );
    // Unknown but recorded for a person: not lost.
    silent(&[(0, 0, intent(a, 1200)), (1, 0, ended(a, Ending::Unknown))]);
    // Given up silently, but an attempt still in flight paid after all:
    // nothing is lost, and the paid claim nobody is told of is the other
    // cell of a silent give-up (no-untold-effect, with effects.rs).
    fires(
        "no-untold-effect",
        &[
            (0, 0, intent(a, 1200)),
            (1, 0, ended(a, Ending::Abandoned)),
            (2, 2, transfer(a, 1200)),
        ],
    );
    let committed = Obs::Committed {
        op: event(1),
        entity: entity(7),
        value: 1,
        version: 1,
    };
    fires("no-lost-effect", &[(0, 0, committed)]);
    // The same seen from a consumer that acked and then gave its commit up
    // (no answer to its last attempt): nothing landed and nothing was
    // dead-lettered, with no crash anywhere. Had one attempt committed
    // before its answer was lost, the effect would be there: silent.
    silent(&published(&[
        (0, 0, committed),
        (
            1,
            3,
            Obs::Effect {
                site: &CONSUMER_WRITE,
                op: event(1),
                payload: 1,
            },
        ),
    ]));
    silent(&[
        (0, 0, committed),
        (1, 1, Obs::DeadLettered { op: event(1) }),
    ]);
    // One event handled does not cover another event of the same entity.
    let second = Obs::Committed {
        op: event(2),
        entity: entity(7),
        value: 2,
        version: 2,
    };
    fires(
        "no-lost-effect",
        &published(&[
            (0, 0, committed),
            (0, 0, second),
            (
                1,
                2,
                Obs::Effect {
                    site: &CONSUMER_WRITE,
                    op: event(2),
                    payload: 2,
                },
            ),
        ]),
    );
    // A set-value event made moot by a newer version was handled.
    silent(&published(&[
        (0, 0, committed),
        (0, 0, second),
        (
            1,
            2,
            Obs::ValueWritten {
                op: event(2),
                entity: entity(7),
                value: 2,
                version: 2,
            },
        ),
        (2, 2, Obs::Superseded { op: event(1) }),
    ]));
}

#[test]
fn no_phantom_event() {
    fires(
        "no-phantom-event",
        &[(0, 1, Obs::Accepted { op: event(1) })],
    );
    silent(&[
        (
            0,
            0,
            Obs::Committed {
                op: event(1),
                entity: entity(7),
                value: 1,
                version: 1,
            },
        ),
        (0, 1, Obs::Accepted { op: event(1) }),
        (1, 1, Obs::DeadLettered { op: event(1) }),
    ]);
    // A consumer writes for an event no broker ever stored (a program that
    // made its id up): the moment it lands, before anything is owed or
    // repeated, and whether or not some producer committed that id.
    let write = |id| Obs::Effect {
        site: &CONSUMER_WRITE,
        op: event(id),
        payload: 1,
    };
    let committed = Obs::Committed {
        op: event(1),
        entity: entity(7),
        value: 1,
        version: 1,
    };
    let handled = [
        (0, 0, committed),
        (0, 1, Obs::Accepted { op: event(1) }),
        (1, 3, write(1)),
    ];
    silent(&handled);
    let mut invented = handled.to_vec();
    invented.extend([(1, 3, write(1001)), (2, 3, write(1001))]);
    fires("no-phantom-event", &invented);
    let v = super::ledger::violation(&invented).expect("a violation");
    assert_eq!(v.operation, event(1001).key(), "{v:?}");
    fires("no-phantom-event", &[(0, 0, committed), (1, 3, write(1))]);
    // A set-value write is an effect of its event the same way.
    let set = |id| Obs::ValueWritten {
        op: event(id),
        entity: entity(7),
        value: 1,
        version: 1,
    };
    silent(&[handled[0], handled[1], (1, 3, set(1))]);
    let set_invented = [handled[0], handled[1], (1, 3, set(1)), (2, 3, set(1001))];
    fires("no-phantom-event", &set_invented);
    let v = super::ledger::violation(&set_invented).expect("a violation");
    assert_eq!(v.operation, event(1001).key(), "{v:?}");
    fires("no-phantom-event", &[(0, 0, committed), (1, 3, set(1))]);
    // A claim is never published: its transfer needs no broker.
    silent(&paid_once(claim(4711)));
}

#[test]
fn state_converges() {
    let committed = |id, version| Obs::Committed {
        op: event(id),
        entity: entity(7),
        value: id * 10,
        version,
    };
    let written = |id, version| Obs::ValueWritten {
        op: event(id),
        entity: entity(7),
        value: id * 10,
        version,
    };
    // v2 then the late v1 overwrites it.
    fires(
        "state-converges",
        &published(&[
            (0, 0, committed(1, 1)),
            (0, 0, committed(2, 2)),
            (1, 2, written(2, 2)),
            (2, 2, written(1, 1)),
        ]),
    );
    silent(&published(&[
        (0, 0, committed(1, 1)),
        (0, 0, committed(2, 2)),
        (1, 2, written(1, 1)),
        (2, 2, written(2, 2)),
    ]));
    // The newest write's event in a dead-letter queue: visible, for a
    // person to replay, whether the broker gave it up after its commit or,
    // published first, before the commit was observed.
    let dead = (2, 1, Obs::DeadLettered { op: event(2) });
    let after_commit = [
        (0, 0, committed(1, 1)),
        (1, 2, written(1, 1)),
        (1, 0, committed(2, 2)),
        dead,
    ];
    silent(&published(&after_commit));
    silent(&published(&[
        (0, 0, committed(1, 1)),
        (1, 2, written(1, 1)),
        dead,
        (3, 0, committed(2, 2)),
    ]));
    // A newer write committed since is owed again: the late v1 overwrites it.
    let mut newer = after_commit.to_vec();
    newer.extend([
        (4, 0, committed(3, 3)),
        (5, 2, written(3, 3)),
        (6, 2, written(1, 1)),
    ]);
    fires("state-converges", &published(&newer));
}
