//! The effect ledger: the oracle that judges every run.
//!
//! It counts effects in the outside world (transfers at the bank, events
//! handled at a consumer) per business operation, and compares them with what
//! clients were told. A service's own belief is never evidence: services do not
//! report effects, only the places where effects land do.

use crate::msg::Key;
use sim::{ActorId, TimeUs, Violation};
use std::fmt;

/// Business operation id (a claim number, an order id).
pub type OpId = u32;

/// Where an effect lands in the outside world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Site {
    /// A transfer executed at the bank.
    BankTransfer,
    /// An event handled by a consumer.
    ConsumerEffect,
}

impl Site {
    pub fn as_str(self) -> &'static str {
        match self {
            Site::BankTransfer => "transfer",
            Site::ConsumerEffect => "consumer effect",
        }
    }
}

/// What a client concluded from one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    Ok,
    Fail,
    /// A timeout is unknown, not fail: the effect may or may not have happened.
    Unknown,
    /// A final error (422, rejected input): retrying it cannot succeed.
    Rejected,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Ok => "ok",
            AttemptOutcome::Fail => "fail",
            AttemptOutcome::Unknown => "unknown",
            AttemptOutcome::Rejected => "rejected (final)",
        }
    }
}

/// How a business operation ended at its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Success,
    /// A final error (rejected input): no effect is owed.
    FinalFailure,
    /// Given up and recorded visibly for a person or a redrive.
    DeadLetter,
    /// Given up without a trace: the mistake the articles warn about.
    Abandoned,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Success => "success",
            Ending::FinalFailure => "final failure",
            Ending::DeadLetter => "dead letter",
            Ending::Abandoned => "given up silently",
        }
    }
}

/// Observations actors push; the ledger judges them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Obs {
    /// A client starts a business operation; `amount` is what it owes in total.
    Intent {
        op: OpId,
        amount: u32,
        window_ms: u64,
    },
    /// An effect in the outside world. `amount` is the payload's fingerprint.
    Effect { site: Site, op: OpId, amount: u32 },
    /// A client finished one attempt and concluded this.
    Attempt {
        op: OpId,
        attempt: u32,
        outcome: AttemptOutcome,
    },
    /// A client was told the operation succeeded (synchronously: the effect is owed now).
    /// `amount` is what this attempt asked for; `result_op`/`result_amount` name
    /// the payment the answer stands for.
    ToldSuccess {
        op: OpId,
        amount: u32,
        result_op: OpId,
        result_amount: u32,
    },
    /// The operation ended at its client.
    Ended { op: OpId, ending: Ending },
    /// A producer committed a state change that owes an event (observed in its database).
    EventCommitted { op: OpId, value: u32, version: u32 },
    /// A broker stored an event in its queue.
    Accepted { op: OpId, id: u32, version: u32 },
    /// A broker moved an event to its dead-letter queue: visible, not lost.
    DeadLettered { op: OpId, id: u32, version: u32 },
    /// A set-value write landed in the consumer's database.
    ValueWritten { op: OpId, value: u32, version: u32 },
    /// A service instance starts executing the request bound to `key` (it
    /// passed the dedup check, claimed the key or took it over).
    ExecStart { key: Key },
    /// That execution finished or gave up.
    ExecEnd { key: Key },
    /// The reporting actor restarted: every execution it ran died with it.
    ExecutorsLost,
    /// The dedup store holds `keys` live records; `bound` is its capacity (0: none).
    DedupStore { keys: u32, bound: u32 },
}

impl fmt::Display for Obs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Obs::Intent { op, amount, .. } => write!(f, "intent: pay {amount} EUR for claim {op}"),
            Obs::Effect { site, op, amount } => {
                write!(f, "EFFECT {} of {amount} EUR for claim {op}", site.as_str())
            }
            Obs::Attempt {
                op,
                attempt,
                outcome,
            } => write!(f, "attempt {attempt} for claim {op}: {}", outcome.as_str()),
            Obs::ToldSuccess {
                op,
                amount,
                result_op,
                result_amount,
            } if (result_op, result_amount) != (op, amount) => write!(
                f,
                "told: claim {op} ({amount} EUR) is paid, with the result of claim {result_op} ({result_amount} EUR)"
            ),
            Obs::ToldSuccess { op, .. } => write!(f, "told: claim {op} is paid"),
            Obs::Ended { op, ending } => write!(f, "claim {op} ended: {}", ending.as_str()),
            Obs::EventCommitted { op, value, version } => {
                write!(f, "committed: {op} = {value} (v{version}), event owed")
            }
            Obs::Accepted { op, id, version } => {
                write!(f, "queued: event #{id} for {op} (v{version})")
            }
            Obs::DeadLettered { op, id, .. } => {
                write!(f, "DEAD LETTER: event #{id} for {op}")
            }
            Obs::ValueWritten { op, value, version } => {
                write!(f, "WRITE at consumer: {op} = {value} (v{version})")
            }
            Obs::ExecStart { key } => write!(f, "executing the request of key {key}"),
            Obs::ExecEnd { key } => write!(f, "execution of key {key} finished"),
            Obs::ExecutorsLost => write!(f, "every execution of this process died with it"),
            Obs::DedupStore { keys, bound } => {
                let s = if keys == 1 { "" } else { "s" };
                write!(f, "dedup store holds {keys} key{s} (bound {bound})")
            }
        }
    }
}

/// Invariant names, stable: scenario files and JSON refer to them.
pub mod inv {
    pub const NO_DUPLICATE_EFFECT: &str = "no-duplicate-effect";
    pub const NO_LOST_EFFECT: &str = "no-lost-effect";
    pub const NO_FALSE_SUCCESS: &str = "no-false-success";
    pub const OPERATION_ENDS: &str = "operation-ends";
    pub const NO_PHANTOM_EVENT: &str = "no-phantom-event";
    pub const STATE_CONVERGES: &str = "state-converges";
    pub const NO_MISMATCHED_PAYLOAD: &str = "no-mismatched-payload";
    pub const AT_MOST_ONE_EXECUTOR: &str = "at-most-one-executor";
    pub const DEDUP_STORE_BOUNDED: &str = "dedup-store-bounded";
    pub const ALL: &[&str] = &[
        NO_DUPLICATE_EFFECT,
        NO_LOST_EFFECT,
        NO_FALSE_SUCCESS,
        OPERATION_ENDS,
        NO_PHANTOM_EVENT,
        STATE_CONVERGES,
        NO_MISMATCHED_PAYLOAD,
        AT_MOST_ONE_EXECUTOR,
        DEDUP_STORE_BOUNDED,
    ];
}

#[derive(Clone, Copy, Debug, Default)]
struct OpRecord {
    intended: bool,
    amount: u32,
    window_ms: u64,
    started_us: TimeUs,
    effects: u32,
    effect_amount: u64,
    first_effect_us: Option<TimeUs>,
    told_success: bool,
    /// A final error (422) was answered; any later attempt is a retry of a rejected input.
    rejected: bool,
    ending: Option<Ending>,
    ended_us: TimeUs,
    // Messaging: bit v is version v of the entity.
    committed_versions: u64,
    accepted_versions: u64,
    dead_versions: u64,
    newest_version: u32,
    newest_value: u32,
    written: bool,
    current_value: u32,
}

fn version_bit(version: u32) -> u64 {
    assert!(version < 64, "entity versions fit a u64 bit set");
    1 << version
}

/// Per-operation counts; operations are small dense ids, so a Vec indexed by a
/// slot keeps it allocation-free across runs.
#[derive(Debug, Default)]
pub struct Ledger {
    ops: Vec<(OpId, OpRecord)>,
    /// Executions running now: the key and the actor (service process) running it.
    executors: Vec<(Key, ActorId)>,
}

impl Ledger {
    fn slot(&mut self, op: OpId) -> &mut OpRecord {
        let i = match self.ops.iter().position(|(id, _)| *id == op) {
            Some(i) => i,
            None => {
                self.ops.push((op, OpRecord::default()));
                self.ops.len() - 1
            }
        };
        &mut self.ops[i].1
    }

    pub fn effects(&self, op: OpId) -> u32 {
        self.ops
            .iter()
            .find(|(id, _)| *id == op)
            .map_or(0, |(_, r)| r.effects)
    }
}

/// The operation a key belongs to, for a violation's signature (0 when the key names none).
fn key_operation(key: Key) -> u64 {
    match key {
        Key::Op { op, .. } => u64::from(op),
        Key::Time { .. } | Key::None => 0,
    }
}

impl sim::Oracle for Ledger {
    type Obs = Obs;

    fn reset(&mut self) {
        self.ops.clear();
        self.executors.clear();
    }

    fn observe(&mut self, now_us: TimeUs, actor: ActorId, obs: &Obs) -> Option<Violation> {
        match *obs {
            Obs::Intent {
                op,
                amount,
                window_ms,
            } => {
                let r = self.slot(op);
                if !r.intended {
                    r.intended = true;
                    r.amount = amount;
                    r.window_ms = window_ms;
                    r.started_us = now_us;
                }
                None
            }
            Obs::Effect { site, op, amount } => {
                let r = self.slot(op);
                r.effects += 1;
                r.effect_amount += u64::from(amount);
                r.first_effect_us.get_or_insert(now_us);
                if r.effects > 1 {
                    return Some(Violation {
                        invariant: inv::NO_DUPLICATE_EFFECT,
                        operation: u64::from(op),
                        message: match site {
                            Site::BankTransfer => format!(
                                "transfer #{} for claim {op}: {} EUR paid in total for one operation",
                                r.effects, r.effect_amount
                            ),
                            Site::ConsumerEffect => format!(
                                "the event for entity {op} took effect {} times at the consumer",
                                r.effects
                            ),
                        },
                    });
                }
                // The first transfer for a client's operation must carry that
                // operation's payload: a changed payload that got executed is
                // the other half of a mismatch (the first is a wrong answer).
                if site == Site::BankTransfer && r.intended && amount != r.amount {
                    return Some(Violation {
                        invariant: inv::NO_MISMATCHED_PAYLOAD,
                        operation: u64::from(op),
                        message: format!(
                            "claim {op} was paid {amount} EUR, but its operation is {} EUR: another payload was executed",
                            r.amount
                        ),
                    });
                }
                None
            }
            Obs::Attempt {
                op,
                attempt,
                outcome,
            } => {
                let r = self.slot(op);
                if r.rejected {
                    return Some(Violation {
                        invariant: inv::OPERATION_ENDS,
                        operation: u64::from(op),
                        message: format!(
                            "claim {op} was retried (attempt {attempt}) after a final error: a rejected input never becomes valid, the operation had to end as a final failure"
                        ),
                    });
                }
                r.rejected = outcome == AttemptOutcome::Rejected;
                None
            }
            Obs::ToldSuccess {
                op,
                amount,
                result_op,
                result_amount,
            } => {
                let r = self.slot(op);
                r.told_success = true;
                if r.effects == 0 {
                    return Some(Violation {
                        invariant: inv::NO_FALSE_SUCCESS,
                        operation: u64::from(op),
                        message: format!(
                            "the client was told claim {op} is paid, but nothing was paid"
                        ),
                    });
                }
                if (result_op, result_amount) != (op, amount) {
                    return Some(Violation {
                        invariant: inv::NO_MISMATCHED_PAYLOAD,
                        operation: u64::from(op),
                        message: format!(
                            "a request for {amount} EUR on claim {op} was answered \"paid\" with the stored result of another payload ({result_amount} EUR on claim {result_op})"
                        ),
                    });
                }
                None
            }
            Obs::ExecStart { key } => {
                if self.executors.iter().any(|(k, _)| *k == key) {
                    return Some(Violation {
                        invariant: inv::AT_MOST_ONE_EXECUTOR,
                        operation: key_operation(key),
                        message: format!(
                            "a second execution of key {key} started while the first still runs"
                        ),
                    });
                }
                self.executors.push((key, actor));
                None
            }
            Obs::ExecEnd { key } => {
                if let Some(i) = self.executors.iter().position(|e| *e == (key, actor)) {
                    self.executors.swap_remove(i);
                }
                None
            }
            Obs::ExecutorsLost => {
                self.executors.retain(|(_, a)| *a != actor);
                None
            }
            Obs::DedupStore { keys, bound } => {
                if bound != 0 && keys > bound {
                    return Some(Violation {
                        invariant: inv::DEDUP_STORE_BOUNDED,
                        operation: 0,
                        message: format!(
                            "the dedup store holds {keys} keys, over its bound of {bound}: keys that never expire grow without limit"
                        ),
                    });
                }
                None
            }
            Obs::Ended { op, ending } => {
                let r = self.slot(op);
                debug_assert!(r.ending.is_none(), "an operation ends once");
                r.ending = Some(ending);
                r.ended_us = now_us;
                None
            }
            Obs::EventCommitted { op, value, version } => {
                let r = self.slot(op);
                r.committed_versions |= version_bit(version);
                if version >= r.newest_version {
                    r.newest_version = version;
                    r.newest_value = value;
                }
                None
            }
            Obs::Accepted { op, version, .. } => {
                self.slot(op).accepted_versions |= version_bit(version);
                None
            }
            Obs::DeadLettered { op, version, .. } => {
                self.slot(op).dead_versions |= version_bit(version);
                None
            }
            Obs::ValueWritten { op, value, .. } => {
                let r = self.slot(op);
                r.written = true;
                r.current_value = value;
                None
            }
        }
    }

    fn finish(&mut self, now_us: TimeUs) -> Option<Violation> {
        for &(op, r) in &self.ops {
            if r.told_success && r.effects == 0 {
                return Some(Violation {
                    invariant: inv::NO_LOST_EFFECT,
                    operation: u64::from(op),
                    message: format!(
                        "claim {op} was reported paid but no transfer exists at the end"
                    ),
                });
            }
            if !r.intended {
                continue;
            }
            match r.ending {
                None => {
                    return Some(Violation {
                        invariant: inv::OPERATION_ENDS,
                        operation: u64::from(op),
                        message: format!(
                            "claim {op} never ended: neither success, final failure nor dead letter after {} ms",
                            (now_us - r.started_us) / 1000
                        ),
                    })
                }
                Some(Ending::Abandoned) if r.effects == 0 => {
                    return Some(Violation {
                        invariant: inv::NO_LOST_EFFECT,
                        operation: u64::from(op),
                        message: format!(
                            "claim {op} was given up without a dead-letter record and nothing was paid"
                        ),
                    })
                }
                Some(_) => {}
            }
            let window_us = r.window_ms.saturating_mul(1000);
            if r.window_ms > 0 && r.ended_us.saturating_sub(r.started_us) > window_us {
                return Some(Violation {
                    invariant: inv::OPERATION_ENDS,
                    operation: u64::from(op),
                    message: format!(
                        "claim {op} ended after {} ms, outside its retry window of {} ms",
                        (r.ended_us - r.started_us) / 1000,
                        r.window_ms
                    ),
                });
            }
        }
        self.finish_messaging()
    }
}

impl Ledger {
    /// Messaging invariants, judged once the healing phase is quiet.
    fn finish_messaging(&self) -> Option<Violation> {
        for &(op, r) in &self.ops {
            let phantom = r.accepted_versions & !r.committed_versions;
            if phantom != 0 {
                return Some(Violation {
                    invariant: inv::NO_PHANTOM_EVENT,
                    operation: u64::from(op),
                    message: format!(
                        "an event for {op} (v{}) was published, but the state change it announces never committed",
                        phantom.trailing_zeros()
                    ),
                });
            }
            let owed = r.committed_versions | r.accepted_versions;
            if owed != 0 && r.effects == 0 && !r.written && r.dead_versions == 0 {
                return Some(Violation {
                    invariant: inv::NO_LOST_EFFECT,
                    operation: u64::from(op),
                    message: format!(
                        "the change to {op} committed, but no consumer handled its event and it is in no dead-letter queue"
                    ),
                });
            }
            let newest_dead = r.dead_versions & version_bit(r.newest_version) != 0;
            if r.written && !newest_dead && r.current_value != r.newest_value {
                return Some(Violation {
                    invariant: inv::STATE_CONVERGES,
                    operation: u64::from(op),
                    message: format!(
                        "after healing the consumer holds {op} = {}, but the newest committed write is {} (v{})",
                        r.current_value, r.newest_value, r.newest_version
                    ),
                });
            }
        }
        None
    }
}
