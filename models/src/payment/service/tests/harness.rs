//! A payment service driven handler by handler through detached contexts,
//! its bank and clients played by a unit test: what the tests of the bank
//! calls, the key table, the steps, the load handling and the recovery share.

use super::super::{
    Concurrent, Idempotency, KeyRow, KeyState, Mode, Msg, Service, ServiceConfig, ServiceState,
    ServiceStorage, ServiceTimer,
};
use crate::core::{Carries, Key, Obs, Op};
use crate::payment::msg::{PayStatus, TransferResult};
use crate::payment::CLAIM;
use crate::registry::Msg as World;
use sim::{Actor, ActorId, Choices, Command, Context, TimeUs};

pub(in crate::payment::service) type Cmd = Command<World, Obs, ServiceTimer>;

/// The bank's actor id.
pub(in crate::payment::service) const BANK: ActorId = 9;

/// One key claimed in the booking's transaction and passed on to the bank,
/// one bank attempt of 5 s, no lease, no workers: the tests change what
/// they are about.
pub(in crate::payment::service) fn config() -> ServiceConfig {
    ServiceConfig {
        bank: BANK,
        idempotency: Idempotency::ClaimSameTx,
        retention_us: 0,
        fingerprint_check: true,
        pass_key_to_bank: true,
        bank_timeout_us: 5_000_000,
        bank_max_attempts: 1,
        lease_us: 0,
        concurrent: Concurrent::Reject,
        processing_us: 0,
        max_keys: 0,
        workers: 0,
        queue_max: 0,
        drop_expired: false,
        recover_ms: 0,
        mode: Mode::Action,
        query_before_retry: false,
        query_on_recovery: true,
        delete_key_on_bank_timeout: false,
        version: 0,
    }
}

/// One service, started at 0 as in a run.
pub(in crate::payment::service) struct Bench {
    pub service: Service<World>,
    pub state: ServiceState,
    pub storage: ServiceStorage,
    choices: Choices,
}

impl Bench {
    pub fn new(cfg: ServiceConfig) -> Bench {
        let service = Service::new(cfg);
        let (mut storage, mut state) = (None, None);
        service.reset_storage(&mut storage);
        service.reset_state(&mut state);
        let mut choices = Choices::new();
        choices.start_random(0, 1, false);
        let mut b = Bench {
            service,
            state: state.expect("a state"),
            storage: storage.expect("a storage"),
            choices,
        };
        let mut out = Vec::new();
        let mut ctx = Context::detached(0, 0, &mut b.choices, &mut out);
        b.service.on_start(&mut b.state, &mut b.storage, &mut ctx);
        b
    }

    /// `msg` from actor `from` at `now_us`; the commands it gave.
    pub fn msg(&mut self, now_us: TimeUs, from: ActorId, msg: Msg) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
        let (st, s) = (&mut self.state, &mut self.storage);
        self.service.on_msg(st, s, from, World::wrap(msg), &mut ctx);
        out
    }

    /// `timer` fires at `now_us`.
    pub fn fire(&mut self, now_us: TimeUs, timer: ServiceTimer) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
        let (st, s) = (&mut self.state, &mut self.storage);
        self.service.on_timer(st, s, timer, &mut ctx);
        out
    }

    /// A crash and a restart at `now_us`: the state reset in its
    /// allocations, the storage kept.
    pub fn restart(&mut self, now_us: TimeUs) -> Vec<Cmd> {
        let mut out = Vec::new();
        let mut ctx = Context::detached_restart(now_us, 0, &mut self.choices, &mut out);
        let mut kept = Some(self.state.clone());
        self.service.reset_state(&mut kept);
        self.state = kept.expect("a state");
        let (st, s) = (&mut self.state, &mut self.storage);
        self.service.on_start(st, s, &mut ctx);
        out
    }

    /// What a handler's output and the steps it continues with at once
    /// (`continue_with`) gave, those steps run as the engine runs them.
    pub fn continued(&mut self, now_us: TimeUs, mut out: Vec<Cmd>) -> Vec<Cmd> {
        let mut i = 0;
        while i < out.len() {
            if let Command::SetTimer {
                timer, after_us: 0, ..
            } = out[i]
            {
                let more = self.fire(now_us, timer);
                out.extend(more);
            }
            i += 1;
        }
        out
    }

    /// Claims 6000, 6001, ... (`claims` of them), each left "in progress" at
    /// 0 by an execution a crash cut short.
    pub fn left_in_progress(&mut self, claims: u32) {
        for id in 0..claims {
            let op = Op::new(&CLAIM, 6000 + id);
            let row = KeyRow {
                op,
                amount_eur: 1200,
                state: KeyState::InProgress,
                locked_us: 0,
            };
            self.storage.keys.insert(Key::Op { op, n: 1 }, row, 0);
        }
    }
}

/// The claims whose transfers a handler sent.
pub(in crate::payment::service) fn transfers_sent(out: &[Cmd]) -> Vec<Op> {
    Cmd::sent(out)
        .filter_map(|m| match m.peek() {
            Some(&Msg::Transfer { op, .. }) => Some(op),
            _ => None,
        })
        .collect()
}

/// Attempt `attempt` to pay `op` 1,200 EUR, under its first key.
pub(in crate::payment::service) fn pay_msg(op: Op, attempt: u32) -> Msg {
    Msg::Pay {
        op,
        attempt,
        key: Key::Op { op, n: 1 },
        amount_eur: 1200,
        timeout_ms: 0,
    }
}

/// The statuses a handler answered clients with.
pub(in crate::payment::service) fn pay_replies(out: &[Cmd]) -> Vec<PayStatus> {
    Cmd::sent(out)
        .filter_map(|m| match m.peek() {
            Some(&Msg::PayReply { status, .. }) => Some(status),
            _ => None,
        })
        .collect()
}

/// The bank confirms the transfer of `op` under its first key.
pub(in crate::payment::service) fn confirm(b: &mut Bench, now_us: sim::TimeUs, op: Op) -> Vec<Cmd> {
    let done = Msg::TransferDone {
        op,
        key: Key::Op { op, n: 1 },
        key_passed: true,
        result: TransferResult::Done,
    };
    b.msg(now_us, BANK, done)
}

/// The timer of the step a handler scheduled after its processing.
pub(in crate::payment::service) fn step_timer(out: &[Cmd]) -> ServiceTimer {
    out.iter()
        .find_map(|c| match c {
            Command::SetTimer {
                timer: timer @ ServiceTimer::Step { .. },
                ..
            } => Some(*timer),
            _ => None,
        })
        .expect("a step scheduled")
}

/// What `f` did through a detached context of a service at `now_us`: for
/// the parts' own tests, which call one part's method at a time.
pub(in crate::payment::service) fn commands(
    now_us: TimeUs,
    f: impl FnOnce(&mut Context<'_, Service<World>>),
) -> Vec<Cmd> {
    let mut choices = Choices::new();
    choices.start_random(0, 1, false);
    let mut out = Vec::new();
    f(&mut Context::detached(now_us, 0, &mut choices, &mut out));
    out
}

/// The timers a handler set, with their delays.
pub(in crate::payment::service) fn timers(out: &[Cmd]) -> Vec<(ServiceTimer, TimeUs)> {
    out.iter()
        .filter_map(|c| match c {
            Command::SetTimer {
                timer, after_us, ..
            } => Some((*timer, *after_us)),
            _ => None,
        })
        .collect()
}
