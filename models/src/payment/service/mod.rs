//! The payment service: it deduplicates requests by their key (or not, or
//! badly), books the payment and has the bank transfer the money. Every
//! handler call is one transaction; where the real design has two, the model
//! has two steps, so a crash can fall between them.
//!
//! The service is parts, each a small state machine that owns its state
//! and its tests and names no other part: the key table (`keys`), the
//! bank-call slots (`bank_calls`), the step slots (`requests`), the worker
//! pool and its queue (`workers`), the recovery job (`recovery`). Only the
//! service calls across them: this module is the actor, with what its
//! handlers share, and its handlers are the requests' way through
//! (`on_request`), the bank's answers (`on_bank`) and the restart
//! (`on_restart`). Its settings are in `config`, its timers and bounds in
//! `timers` (plain data every part may name), its parts' state side by side
//! in `state` (what a crash loses apart from what it keeps), and `tests`
//! drives it handler by handler through a harness.

mod bank_calls;
mod config;
mod keys;
mod on_bank;
mod on_request;
mod on_restart;
mod recovery;
mod requests;
mod rollout;
mod state;
#[cfg(test)]
mod tests;
mod timers;
mod workers;

use super::msg::{Msg, PayStatus, TransferResult};
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::situations as sit;
use keys::Waiter;
use requests::{Step, StepKind};
use sim::{Actor, ActorId, Ctx};
use std::marker::PhantomData;

pub use config::{Concurrent, Idempotency, Mode, ServiceConfig};
pub use keys::{KeyRow, KeyState};
pub use rollout::MAX_VERSIONS;
pub use state::{ServiceState, ServiceStorage};
pub use timers::{
    ServiceTimer, MAX_BANK_CALLS, MAX_QUEUE, MAX_STEPS, MAX_WORKERS, SERVICE_TIMER_SLOTS,
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

    /// Workers the service has.
    fn pool(&self) -> usize {
        workers::pool_size(self.cfg.workers)
    }
}

/// What the handlers share: answers, and the key table's changes with the
/// observations they owe.
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

    /// Inserts a key row, reaping expired rows first, and reports the store's size.
    fn insert_key(&self, s: &mut ServiceStorage, key: Key, row: KeyRow, ctx: &mut impl Ctx<Self>) {
        let inserted = s.keys.insert(key, row, ctx.now_us());
        self.report_insert(inserted, ctx);
    }

    fn report_insert(&self, inserted: keys::Inserted, ctx: &mut impl Ctx<Self>) {
        if inserted.reaped {
            ctx.reached(sit::KEY_REAPED);
        }
        ctx.observe(Obs::DedupStore {
            keys: inserted.keys,
            bound: self.cfg.max_keys,
        });
    }

    /// Books the payment; its key is due later in the designs that record it after the booking.
    fn book(&self, s: &mut ServiceStorage, op: Op, key: Key, amount_eur: u32) {
        let later_key = matches!(
            self.cfg.idempotency,
            Idempotency::SplitBookingFirst | Idempotency::CheckThenAct
        );
        s.keys.book(keys::Booking {
            op,
            key,
            amount_eur,
            key_due: later_key && self.cfg.keyed(key),
        });
    }

    /// The bank call that drives `key`'s row "in progress" to an end (a
    /// lease takeover's, answering `client`, or the recovery's, answering
    /// nobody): it asks the bank first with `query_on_recovery`.
    fn redrive(&self, key: Key, row: KeyRow, client: bank_calls::Caller) -> bank_calls::NewCall {
        bank_calls::NewCall {
            op: row.op,
            key,
            amount_eur: row.amount_eur,
            client,
            query_first: self.cfg.query_on_recovery,
        }
    }

    /// Refuses a request with 503 because the service is full.
    fn shed(&self, caller: (ActorId, u32), op: Op, ctx: &mut impl Ctx<Self>) {
        ctx.reached(sit::OVERLOADED);
        ctx.observe(Obs::Shed {
            layer: &crate::payment::SERVICE_LAYER,
            op,
            recover_ms: self.cfg.recover_ms,
        });
        Self::reply(caller, op, PayStatus::Overloaded, 0, ctx);
    }

    /// Answers a request without calling the bank (a stored result, 409,
    /// 422), once its processing is done: until then it holds its worker.
    fn answer(
        &self,
        st: &mut ServiceState,
        q: Queued,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (caller, op) = (q.caller, q.op);
        let step = Step {
            kind: StepKind::Answer(status),
            op,
            key: q.key,
            amount_eur,
            client: caller,
        };
        if self.cfg.processing_us == 0 || !st.steps.schedule(step, self.cfg.processing_us, ctx) {
            Self::reply(caller, op, status, amount_eur, ctx);
        }
    }

    /// Answers every duplicate held open for `key`'s execution.
    fn answer_waiters(
        st: &mut ServiceState,
        key: Key,
        status: PayStatus,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        st.waiters.release(key, |w: Waiter| {
            ctx.reached(sit::DUPLICATE_WAITED);
            Self::reply((w.client, w.attempt), w.op, status, amount_eur, ctx);
        });
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
        let queries = self
            .configs()
            .any(|c| c.query_before_retry || c.query_on_recovery || c.state_mode());
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
            let s = s.or_insert_with(|| ServiceStorage::new(self.cfg.retention_us));
            s.reset(self.cfg.retention_us);
        }
        let st = state.or_default();
        st.clear();
        // A crash does not undo a deploy: the start that follows reads the
        // version from the time (`started`).
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
            Some(pay @ Msg::Pay { .. }) => self.arrive(st, s, from, pay, ctx),
            Some(&Msg::TransferDone {
                op, key, result, ..
            }) => match result {
                TransferResult::Done => self.on_transfer_done(st, s, (op, key), ctx),
                TransferResult::Refused { paid_eur } => {
                    let done = st.calls.on_refused(&self.cfg, (op, key), paid_eur, ctx);
                    self.call_ended(st, s, done, ctx);
                }
            },
            Some(&Msg::StatusReply {
                op,
                question,
                paid_eur,
            }) => {
                let done = st.calls.on_status(&self.cfg, (op, question), paid_eur, ctx);
                self.call_ended(st, s, done, ctx);
            }
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
