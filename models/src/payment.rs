//! The payment chain of the source articles: the claims system (client) asks
//! the payment service to pay claim 4711; the service books it and asks the
//! bank (provider) to transfer. Each actor's design variants live in its config.

use crate::ledger::{AttemptOutcome, Ending, Obs, OpId, Site};
use crate::msg::{Key, Msg, PayStatus};
use crate::situation as sit;
use sim::{ActorId, Ctx, TimeUs, US_PER_MS};

type Cx<'a, 'b> = &'a mut Ctx<'b, Msg, Obs>;

// ---------------------------------------------------------------- client

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPolicy {
    /// One key per business operation, reused on every retry.
    Stable,
    /// A fresh key per attempt: the key protects nothing.
    PerAttempt,
    /// Derived from the clock, bucketed: operations started together collide.
    Timestamp {
        bucket_ms: u64,
    },
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first; 0 means no cap (a mistake).
    pub max_attempts: u32,
    pub base_ms: u64,
    pub cap_ms: u64,
    /// 1 = fixed interval, 2 = exponential.
    pub multiplier: u64,
    pub jitter: Jitter,
    /// The operation must end within this time from its start; 0 = unbounded.
    pub window_ms: u64,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    pub op: OpId,
    pub amount_eur: u32,
    pub start_ms: u64,
    /// A retry that sends another amount under the same key (a client bug).
    pub retry_amount_eur: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub service: ActorId,
    pub timeout_ms: u64,
    pub key: KeyPolicy,
    pub retry: RetryPolicy,
    pub ops: Vec<OpSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpStatus {
    NotStarted,
    Pending,
    Done,
}

/// The claims system's own database: survives its crashes.
#[derive(Clone, Debug, Default)]
pub struct ClientStorage {
    pub ops: Vec<ClientOp>,
}

#[derive(Clone, Copy, Debug)]
pub struct ClientOp {
    pub status: OpStatus,
    pub attempts: u32,
    pub started_us: TimeUs,
    pub last_backoff_ms: u64,
}

/// Most operations one client runs; scenario validation enforces it.
pub const MAX_CLIENT_OPS: usize = 16;

/// Volatile: which attempt each operation waits on (its open connection).
/// A fixed array, so a (re)start allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct ClientState {
    pub awaiting: [Option<u32>; MAX_CLIENT_OPS],
}

pub struct Client {
    pub cfg: ClientConfig,
}

// Timer tags: 2*i is operation i's reply timeout, 2*i+1 its next attempt.
fn timeout_tag(i: usize) -> u32 {
    (2 * i) as u32
}
fn attempt_tag(i: usize) -> u32 {
    (2 * i + 1) as u32
}

impl Client {
    pub fn reset_storage(&self, s: &mut ClientStorage) {
        s.ops.clear();
        s.ops.extend(self.cfg.ops.iter().map(|_| ClientOp {
            status: OpStatus::NotStarted,
            attempts: 0,
            started_us: 0,
            last_backoff_ms: 0,
        }));
    }

    pub fn on_start(&self, s: &mut ClientStorage, ctx: Cx) -> ClientState {
        assert_eq!(s.ops.len(), self.cfg.ops.len());
        for (i, (spec, op)) in self.cfg.ops.iter().zip(&s.ops).enumerate() {
            match op.status {
                OpStatus::NotStarted => {
                    let at_us = spec.start_ms * US_PER_MS;
                    ctx.set_timer(attempt_tag(i), at_us.saturating_sub(ctx.now_us()));
                }
                // After a restart the open connection is gone: the outcome is unknown, try again.
                OpStatus::Pending => {
                    ctx.reached(sit::RECOVERED_AFTER_RESTART);
                    ctx.set_timer(attempt_tag(i), 0);
                }
                OpStatus::Done => {}
            }
        }
        assert!(self.cfg.ops.len() <= MAX_CLIENT_OPS, "too many operations");
        ClientState::default()
    }

    fn key_for(&self, i: usize, attempt: u32, started_us: TimeUs) -> Key {
        let op = self.cfg.ops[i].op;
        match self.cfg.key {
            KeyPolicy::Stable => Key::Op { op, n: 1 },
            KeyPolicy::PerAttempt => Key::Op { op, n: attempt },
            KeyPolicy::Timestamp { bucket_ms } => Key::Time {
                bucket: started_us / (bucket_ms.max(1) * US_PER_MS),
            },
            KeyPolicy::None => Key::None,
        }
    }

    fn send_attempt(&self, st: &mut ClientState, s: &mut ClientStorage, i: usize, ctx: Cx) {
        let spec = self.cfg.ops[i];
        let op = &mut s.ops[i];
        if op.status == OpStatus::NotStarted {
            op.status = OpStatus::Pending;
            op.started_us = ctx.now_us();
            ctx.observe(Obs::Intent {
                op: spec.op,
                amount: spec.amount_eur,
                window_ms: self.cfg.retry.window_ms,
            });
        } else {
            ctx.reached(sit::CLIENT_RETRIED);
        }
        debug_assert_eq!(op.status, OpStatus::Pending);
        op.attempts += 1;
        let attempt = op.attempts;
        let amount_eur = match spec.retry_amount_eur {
            Some(a) if attempt > 1 => a,
            _ => spec.amount_eur,
        };
        let key = self.key_for(i, attempt, op.started_us);
        st.awaiting[i] = Some(attempt);
        ctx.send(
            self.cfg.service,
            Msg::Pay {
                op: spec.op,
                attempt,
                key,
                amount_eur,
            },
        );
        ctx.set_timer(timeout_tag(i), self.cfg.timeout_ms * US_PER_MS);
    }

    fn backoff_ms(&self, op: &ClientOp, ctx: Cx) -> u64 {
        let r = &self.cfg.retry;
        let exp = r
            .base_ms
            .saturating_mul(
                r.multiplier
                    .max(1)
                    .saturating_pow(op.attempts.saturating_sub(1)),
            )
            .min(r.cap_ms.max(r.base_ms));
        match r.jitter {
            Jitter::None => exp,
            Jitter::Full => ctx.range(0, exp),
            Jitter::Equal => exp / 2 + ctx.range(0, exp - exp / 2),
            Jitter::Decorrelated => {
                let prev = op.last_backoff_ms.max(r.base_ms);
                ctx.range(
                    r.base_ms,
                    prev.saturating_mul(3).min(r.cap_ms.max(r.base_ms)),
                )
            }
        }
    }

    fn end(&self, s: &mut ClientStorage, i: usize, ending: Ending, ctx: Cx) {
        s.ops[i].status = OpStatus::Done;
        ctx.observe(Obs::Ended {
            op: self.cfg.ops[i].op,
            ending,
        });
    }

    /// After an attempt that may be retried: retry within the policy or give up.
    fn retry_or_give_up(&self, s: &mut ClientStorage, i: usize, ctx: Cx) {
        let r = self.cfg.retry;
        let op = s.ops[i];
        let capped = r.max_attempts != 0 && op.attempts >= r.max_attempts;
        let delay_ms = if capped { 0 } else { self.backoff_ms(&op, ctx) };
        let next_us = ctx.now_us() + delay_ms * US_PER_MS;
        let out_of_window = r.window_ms != 0 && next_us - op.started_us > r.window_ms * US_PER_MS;
        if capped || out_of_window {
            let ending = if r.dead_letter {
                Ending::DeadLetter
            } else {
                Ending::Abandoned
            };
            self.end(s, i, ending, ctx);
            return;
        }
        s.ops[i].last_backoff_ms = delay_ms;
        ctx.set_timer(attempt_tag(i), delay_ms * US_PER_MS);
    }

    pub fn on_msg(&self, st: &mut ClientState, s: &mut ClientStorage, msg: Msg, ctx: Cx) {
        let Msg::PayReply {
            op,
            attempt,
            status,
        } = msg
        else {
            return;
        };
        let Some(i) = self.cfg.ops.iter().position(|o| o.op == op) else {
            return;
        };
        // A reply to an attempt we stopped waiting for arrives on a closed connection.
        if st.awaiting[i] != Some(attempt) || s.ops[i].status != OpStatus::Pending {
            return;
        }
        st.awaiting[i] = None;
        ctx.cancel_timer(timeout_tag(i));
        match status {
            PayStatus::Paid => {
                ctx.observe(Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Ok,
                });
                ctx.observe(Obs::ToldSuccess { op });
                self.end(s, i, Ending::Success, ctx);
            }
            PayStatus::InProgress | PayStatus::ServerError => {
                ctx.observe(Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Fail,
                });
                self.retry_or_give_up(s, i, ctx);
            }
            PayStatus::Mismatch => {
                ctx.observe(Obs::Attempt {
                    op,
                    attempt,
                    outcome: AttemptOutcome::Fail,
                });
                if self.cfg.retry.retry_final_errors {
                    self.retry_or_give_up(s, i, ctx);
                } else {
                    self.end(s, i, Ending::FinalFailure, ctx);
                }
            }
        }
    }

    pub fn on_timer(&self, st: &mut ClientState, s: &mut ClientStorage, tag: u32, ctx: Cx) {
        let i = (tag / 2) as usize;
        assert!(i < self.cfg.ops.len(), "timer for an unknown operation");
        if s.ops[i].status == OpStatus::Done {
            return;
        }
        if tag % 2 == 1 {
            self.send_attempt(st, s, i, ctx);
            return;
        }
        // No answer within the timeout: the outcome is unknown, not failed.
        let attempt = st.awaiting[i]
            .take()
            .expect("a timeout belongs to an attempt");
        ctx.observe(Obs::Attempt {
            op: self.cfg.ops[i].op,
            attempt,
            outcome: AttemptOutcome::Unknown,
        });
        self.retry_or_give_up(s, i, ctx);
    }
}

// ---------------------------------------------------------------- service

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idempotency {
    /// Every request is booked and paid.
    None,
    /// Key claimed with an "in progress" state, in the same transaction as the
    /// booking, under a unique constraint: the articles' design.
    ClaimSameTx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceConfig {
    pub bank: ActorId,
    pub idempotency: Idempotency,
    /// Keys older than this are forgotten; 0 keeps them forever.
    pub retention_ms: u64,
    /// Same key with another amount is rejected (422) instead of answered.
    pub fingerprint_check: bool,
    /// Hand the key on to the bank, which may deduplicate on it.
    pub pass_key_to_bank: bool,
    pub bank_timeout_ms: u64,
    pub bank_max_attempts: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyState {
    InProgress,
    Paid,
}

#[derive(Clone, Copy, Debug)]
pub struct KeyRow {
    pub key: Key,
    pub op: OpId,
    pub amount_eur: u32,
    pub state: KeyState,
    pub created_us: TimeUs,
}

/// The payment database: key rows and bookings, committed atomically per step.
#[derive(Clone, Debug, Default)]
pub struct ServiceStorage {
    pub keys: Vec<KeyRow>,
    pub bookings: Vec<(OpId, u32)>,
}

/// One bank call in flight, with the client's open request it answers.
#[derive(Clone, Copy, Debug)]
pub struct BankCall {
    pub op: OpId,
    pub key: Key,
    pub amount_eur: u32,
    pub client: Option<(ActorId, u32)>,
    pub attempts: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ServiceState {
    /// Slot index is the bank-timeout timer tag.
    pub calls: Vec<Option<BankCall>>,
}

pub const MAX_BANK_CALLS: usize = 64;

pub struct Service {
    pub cfg: ServiceConfig,
}

impl Service {
    pub fn reset_storage(&self, s: &mut ServiceStorage) {
        s.keys.clear();
        s.bookings.clear();
    }

    pub fn on_start(&self, s: &mut ServiceStorage, ctx: Cx) -> ServiceState {
        let mut st = ServiceState::default();
        // Recovery: a key left "in progress" by a crash is driven to completion,
        // with the same key, so a bank that deduplicates pays once.
        for row in s.keys.iter().filter(|r| r.state == KeyState::InProgress) {
            ctx.reached(sit::RECOVERED_AFTER_RESTART);
            self.call_bank(&mut st, row.op, row.key, row.amount_eur, None, ctx);
        }
        st
    }

    fn call_bank(
        &self,
        st: &mut ServiceState,
        op: OpId,
        key: Key,
        amount_eur: u32,
        client: Option<(ActorId, u32)>,
        ctx: Cx,
    ) {
        let slot = match st.calls.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                st.calls.push(None);
                st.calls.len() - 1
            }
        };
        assert!(slot < MAX_BANK_CALLS, "too many bank calls in flight");
        st.calls[slot] = Some(BankCall {
            op,
            key,
            amount_eur,
            client,
            attempts: 1,
        });
        self.send_transfer(op, key, amount_eur, ctx);
        ctx.set_timer(slot as u32, self.cfg.bank_timeout_ms * US_PER_MS);
    }

    fn send_transfer(&self, op: OpId, key: Key, amount_eur: u32, ctx: Cx) {
        let key = if self.cfg.pass_key_to_bank {
            key
        } else {
            Key::None
        };
        ctx.send(
            self.cfg.bank,
            Msg::Transfer {
                op,
                key,
                amount_eur,
            },
        );
    }

    fn expired(&self, row: &KeyRow, now_us: TimeUs) -> bool {
        self.cfg.retention_ms != 0 && now_us - row.created_us >= self.cfg.retention_ms * US_PER_MS
    }

    pub fn on_msg(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        msg: Msg,
        ctx: Cx,
    ) {
        match msg {
            Msg::Pay {
                op,
                attempt,
                key,
                amount_eur,
            } => self.on_pay(st, s, from, op, attempt, key, amount_eur, ctx),
            Msg::TransferDone { op, key } => self.on_transfer_done(st, s, op, key, ctx),
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_pay(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        from: ActorId,
        op: OpId,
        attempt: u32,
        key: Key,
        amount_eur: u32,
        ctx: Cx,
    ) {
        let reply = |status, ctx: Cx| {
            ctx.send(
                from,
                Msg::PayReply {
                    op,
                    attempt,
                    status,
                },
            )
        };
        if self.cfg.idempotency == Idempotency::None || key == Key::None {
            s.bookings.push((op, amount_eur));
            self.call_bank(st, op, key, amount_eur, Some((from, attempt)), ctx);
            return;
        }
        // One transaction: look the key up and, if new, insert it "in progress"
        // together with the booking; the unique constraint makes two at once impossible.
        let now = ctx.now_us();
        if let Some(i) = s.keys.iter().position(|r| r.key == key) {
            let row = s.keys[i];
            if self.expired(&row, now) {
                ctx.reached(sit::RETRY_AFTER_KEY_EXPIRED);
                s.keys.remove(i);
            } else if self.cfg.fingerprint_check && row.amount_eur != amount_eur {
                reply(PayStatus::Mismatch, ctx);
                return;
            } else {
                match row.state {
                    KeyState::Paid => {
                        ctx.reached(sit::DUPLICATE_AFTER_COMMIT);
                        // The stored result is replayed; it answers the request, whatever it said.
                        reply(PayStatus::Paid, ctx);
                    }
                    KeyState::InProgress => {
                        ctx.reached(sit::CONCURRENT_DUPLICATE);
                        reply(PayStatus::InProgress, ctx);
                    }
                }
                return;
            }
        }
        s.keys.push(KeyRow {
            key,
            op,
            amount_eur,
            state: KeyState::InProgress,
            created_us: now,
        });
        s.bookings.push((op, amount_eur));
        self.call_bank(st, op, key, amount_eur, Some((from, attempt)), ctx);
    }

    fn on_transfer_done(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        op: OpId,
        key: Key,
        ctx: Cx,
    ) {
        let sent_key = |c: &BankCall| {
            if self.cfg.pass_key_to_bank {
                c.key
            } else {
                Key::None
            }
        };
        let Some(slot) = st
            .calls
            .iter()
            .position(|c| matches!(c, Some(c) if c.op == op && sent_key(c) == key))
        else {
            return; // a late or duplicated confirmation for a call already answered
        };
        let call = st.calls[slot].take().expect("slot is occupied");
        ctx.cancel_timer(slot as u32);
        if let Some(row) = s.keys.iter_mut().find(|r| r.key == call.key) {
            row.state = KeyState::Paid;
        }
        if let Some((client, attempt)) = call.client {
            ctx.send(
                client,
                Msg::PayReply {
                    op,
                    attempt,
                    status: PayStatus::Paid,
                },
            );
        }
    }

    pub fn on_timer(&self, st: &mut ServiceState, _s: &mut ServiceStorage, tag: u32, ctx: Cx) {
        let slot = tag as usize;
        let Some(call) = st.calls.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if call.attempts < self.cfg.bank_max_attempts {
            call.attempts += 1;
            let c = *call;
            self.send_transfer(c.op, c.key, c.amount_eur, ctx);
            ctx.set_timer(tag, self.cfg.bank_timeout_ms * US_PER_MS);
            return;
        }
        // The bank stays silent: answer 503 and leave the key "in progress";
        // recovery after a restart or the client's retry will find it.
        let c = st.calls[slot].take().expect("slot is occupied");
        if let Some((client, attempt)) = c.client {
            ctx.send(
                client,
                Msg::PayReply {
                    op: c.op,
                    attempt,
                    status: PayStatus::ServerError,
                },
            );
        }
    }
}

// ---------------------------------------------------------------- bank

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankConfig {
    /// The bank deduplicates transfers on the key it is given.
    pub accepts_key: bool,
}

/// The bank's ledger: every executed transfer. The oracle counts these, never the service's bookings.
#[derive(Clone, Debug, Default)]
pub struct BankStorage {
    pub transfers: Vec<(OpId, Key, u32)>,
}

pub struct Bank {
    pub cfg: BankConfig,
}

impl Bank {
    pub fn reset_storage(&self, s: &mut BankStorage) {
        s.transfers.clear();
    }

    pub fn on_msg(&self, s: &mut BankStorage, from: ActorId, msg: Msg, ctx: Cx) {
        let Msg::Transfer {
            op,
            key,
            amount_eur,
        } = msg
        else {
            return;
        };
        let known = self.cfg.accepts_key
            && key != Key::None
            && s.transfers.iter().any(|&(_, k, _)| k == key);
        if known {
            ctx.reached(sit::BANK_DEDUP_HIT);
        } else {
            s.transfers.push((op, key, amount_eur));
            ctx.observe(Obs::Effect {
                site: Site::BankTransfer,
                op,
                amount: amount_eur,
            });
        }
        ctx.send(from, Msg::TransferDone { op, key });
    }
}
