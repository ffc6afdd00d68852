//! The payment service: it deduplicates requests by their key (or not, or
//! badly), books the payment and has the bank transfer the money. Every
//! handler call is one transaction; where the real design has two, the model
//! has two steps, so a crash can fall between them.
//!
//! The service is parts, each a module of its own: the key table
//! (`keys`), the bank calls (`bank_calls`), the workers and their queue
//! (`workers`), the requests' steps (`requests`), the recovery after a
//! crash (`recovery`); this module is the actor that wires them. Its
//! settings are in `config`, what a crash loses side by side in `state`
//! (one flat struct, as the reports' state panels show it), and `harness`
//! drives it handler by handler in the unit tests.

mod bank_calls;
mod config;
#[cfg(test)]
mod harness;
mod keys;
mod recovery;
mod requests;
mod rollout;
mod state;
mod workers;

use super::msg::{Msg, PayStatus, TransferResult};
use crate::core::dedup::DedupStore;
use crate::core::slots::Slots;
use crate::core::{Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx};
use std::collections::VecDeque;
use std::marker::PhantomData;

pub use config::{Concurrent, Idempotency, Mode, ServiceConfig};
pub use keys::{KeyRow, KeyState, ServiceStorage};
pub use rollout::MAX_VERSIONS;
pub use state::{
    ServiceState, ServiceTimer, MAX_BANK_CALLS, MAX_QUEUE, MAX_STEPS, MAX_WORKERS,
    SERVICE_TIMER_SLOTS,
};
pub use workers::Queued;

/// The payment service: books payments and has the bank transfer them.
pub struct Service<W> {
    /// Its configuration.
    pub cfg: ServiceConfig,
    /// Later versions, each from its time on (`[rollouts]`); none without.
    versions: Box<[rollout::Version<W>]>,
    wire: PhantomData<fn() -> W>,
}

impl<W> Service<W> {
    /// A service configured by `cfg`.
    pub fn new(cfg: ServiceConfig) -> Self {
        Service {
            cfg,
            versions: Box::default(),
            wire: PhantomData,
        }
    }

    /// Whether `key` is one the service deduplicates on.
    fn keyed(&self, key: Key) -> bool {
        self.cfg.idempotency != Idempotency::None && key.is_some()
    }
}

impl<W: Carries<Msg>> Service<W> {
    /// Answers the client's attempt `caller` about `op`.
    fn reply(
        caller: (ActorId, u32),
        op: Op,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let reply = Msg::PayReply {
            op,
            attempt: caller.1,
            status,
            amount_eur,
        };
        ctx.send(caller.0, W::wrap(reply));
    }
}

impl<W> crate::core::Ends for Service<W> {
    const ROLES: &'static [&'static str] = &["service"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("pay-reply", "client"),
        ("status-reply", "client"),
        ("transfer", "bank"),
        ("status-query", "bank"),
    ];
    const ANSWERS: &'static [(&'static str, &'static str)] =
        &[("pay-reply", "pay"), ("status-reply", "status-query")];

    /// It asks the bank what is paid only before a retry, on recovery, or
    /// as every call's first step in a "state" mode.
    /// Any version may.
    fn sends(&self, kind: &str, role: &str) -> bool {
        let queries = self.configs().any(|c| {
            c.query_before_retry
                || c.query_on_recovery
                || matches!(c.mode, Mode::State | Mode::StateConditional)
        });
        (kind, role) != ("status-query", "bank") || queries
    }
}

impl<W: Carries<Msg>> Actor for Service<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ServiceTimer;
    type State = ServiceState;
    type Storage = ServiceStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, ServiceState>,
        storage: Option<sim::Fresh<'_, ServiceStorage>>,
    ) {
        if let Some(s) = storage {
            let s = s.or_insert_with(|| ServiceStorage {
                keys: DedupStore::new(self.cfg.retention_us),
                bookings: Vec::new(),
                questions_asked: 0,
            });
            s.keys.reset(self.cfg.retention_us);
            s.bookings.clear();
            s.questions_asked = 0;
        }
        let st = state.or_insert_with(|| ServiceState {
            calls: Slots::new(MAX_BANK_CALLS),
            steps: Slots::new(MAX_STEPS),
            waiters: Vec::new(),
            queue: VecDeque::new(),
            recovering: VecDeque::new(),
            queued_before_recovery: 0,
            version: 0,
        });
        st.calls.clear();
        st.steps.clear();
        st.waiters.clear();
        st.queue.clear();
        st.recovering.clear();
        st.queued_before_recovery = 0;
        st.version = 0;
    }

    fn on_start(&self, st: &mut ServiceState, s: &mut ServiceStorage, ctx: &mut impl Ctx<Self>) {
        if self.versions.is_empty() {
            if ctx.restarted() {
                self.recover(st, s, ctx);
            }
            return;
        }
        let this = self.started(st, ctx.now_us());
        if ctx.restarted() {
            this.restarted(st, s, ctx);
        }
    }

    fn on_msg(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (this, _) = self.deployed(st, s, ctx);
        this.handle(st, s, from, msg, ctx);
    }

    fn on_timer(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        timer: ServiceTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (this, redeployed) = self.deployed(st, s, ctx);
        // The old version's timer: the work it was for died with it.
        if !redeployed {
            this.fire(st, s, timer, ctx);
        }
        this.pump(st, ctx);
    }
}

impl<W: Carries<Msg>> Service<W> {
    /// A message, handled by the version deployed.
    fn handle(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        match msg.peek() {
            Some(&Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
                timeout_ms,
            }) => {
                let q = self.queued((from, attempt), op, key, amount_eur, timeout_ms, ctx);
                self.admit(st, s, q, ctx);
            }
            Some(&Msg::TransferDone {
                op, key, result, ..
            }) => match result {
                TransferResult::Done => self.on_transfer_done(st, s, op, key, ctx),
                TransferResult::Refused { paid_eur } => {
                    self.on_refused(st, s, op, key, paid_eur, ctx)
                }
            },
            Some(&Msg::StatusReply {
                op,
                question,
                paid_eur,
            }) => self.on_status(st, s, (op, question), paid_eur, ctx),
            Some(&Msg::StatusQuery { op, question }) => {
                self.answer_status(s, from, (op, question), ctx)
            }
            _ => {}
        }
        self.pump(st, ctx);
    }

    /// A timer, fired for the version deployed.
    fn fire(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        timer: ServiceTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            ServiceTimer::Step { slot } => self.on_step(st, s, slot as usize, ctx),
            ServiceTimer::BankTimeout { slot } => self.on_bank_timeout(st, s, slot as usize, ctx),
            ServiceTimer::Recover => self.recover_next(st, s, ctx),
            ServiceTimer::Dequeue => self.dequeue(st, s, ctx),
        }
    }
}
