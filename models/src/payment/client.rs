//! The claims system: it starts each payment once, retries it within its
//! policy, and records what it finally knows: paid, failed, or unknown (a dead
//! letter a person reconciles), never more than it was told. A
//! reconciliation job may take an unknown dead letter up (`reconcile.rs`).

use super::msg::{Msg, PayStatus};
use super::reconcile::ReconcileConfig;
use super::situations as sit;
use super::CLAIM;
use crate::core::breaker::{Breaker, BreakerConfig, CallResult, Verdict};
use crate::core::budget::{BudgetConfig, TokenBucket};
use crate::core::client_op::{self, ClientSituations, OpTimer, OpTimerKind, Persistence};
pub use crate::core::client_op::{ClientOp, ClientStorage, OpStatus};
use crate::core::retry::RetryPolicy;
use crate::core::{AttemptOutcome, Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, TimeUs, US_PER_MS};
use std::marker::PhantomData;

const SITUATIONS: ClientSituations = ClientSituations {
    retried: sit::CLIENT_RETRIED,
    dead_lettered: sit::CLIENT_DEAD_LETTERED,
    recovered: sit::CLIENT_RECOVERED_AFTER_RESTART,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Which idempotency key the client sends.
pub enum KeyPolicy {
    /// One key per business operation, reused on every retry.
    Stable,
    /// A fresh key per attempt: the key protects nothing.
    PerAttempt,
    /// Derived from the clock, bucketed: operations started together collide.
    Timestamp {
        /// The bucket's width: keys of operations started within it collide.
        bucket_ms: u64,
    },
    /// No key: the service cannot tell a retry from a new request.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// One business operation the client is asked to run: pay a claim.
pub struct OpSpec {
    /// The claim's number.
    pub claim: u32,
    /// Which payment of the claim, 1 to 99 (`zahl-4711-02` is payment 2):
    /// each payment is a business operation of its own.
    pub payment: u8,
    /// The amount to pay.
    pub amount_eur: u32,
    /// When the claims system asks for it.
    pub start_ms: u64,
    /// A retry that sends another amount under the same key (a client bug).
    pub retry_amount_eur: Option<u32>,
}

impl OpSpec {
    /// The business operation.
    pub fn op(&self) -> Op {
        Op::part(&CLAIM, self.claim, self.payment.saturating_sub(1))
    }

    /// What attempt `attempt` asks to pay.
    pub fn amount_for(&self, attempt: u32) -> u32 {
        match self.retry_amount_eur {
            Some(a) if attempt > 1 => a,
            _ => self.amount_eur,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// The client's configuration.
pub struct ClientConfig {
    /// The payment service's actor id.
    pub service: ActorId,
    /// How long it waits for an answer to an attempt.
    pub timeout_ms: u64,
    /// Which key it sends.
    pub key: KeyPolicy,
    /// When it retries, and when it gives up.
    pub retry: RetryPolicy,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
    /// Read a timeout as "failed, nothing happened" (a mistake: the request
    /// may have been executed and only the answer lost).
    pub timeout_means_failed: bool,
    /// Read a 503 as "outcome unknown": the shed copy was not executed, but
    /// a twin of it (a network duplicate) may be queued or still on its way.
    pub overloaded_means_unknown: bool,
    /// A retry budget shared by all of this client's operations.
    pub budget: Option<BudgetConfig>,
    /// A circuit breaker in front of all of this client's calls.
    pub breaker: Option<BreakerConfig>,
    /// The operations it runs.
    pub ops: Vec<OpSpec>,
    /// A job that takes up its unknown dead letters (none: a person does).
    pub reconcile: Option<ReconcileConfig>,
}

/// Volatile: which attempt each operation waits on (its open connection),
/// and the client's budget and breaker, which live in its memory: a restart
/// starts them afresh (a full bucket, a closed breaker).
#[derive(Clone, Default)]
pub struct ClientState {
    /// Per operation, the attempt whose answer it is waiting for.
    pub awaiting: Vec<Option<u32>>,
    /// The retry budget shared by all operations (none: unbounded retries).
    pub tokens: Option<TokenBucket>,
    /// What each operation's last retry took from the bucket (0: none), which
    /// its success puts back.
    pub retry_cost: Vec<u32>,
    /// The circuit breaker in front of every call.
    pub breaker: Breaker,
}

/// The state panel of a report shows the budget and the breaker only where
/// they are in play: a client without a budget has no tokens to show, and a
/// closed breaker without recent failures is every breaker's start.
impl std::fmt::Debug for ClientState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ClientState");
        d.field("awaiting", &self.awaiting);
        if let Some(t) = &self.tokens {
            d.field("tokens", &t.tokens());
            d.field("retry_cost", &self.retry_cost);
        }
        if self.breaker != Breaker::new() {
            d.field("breaker", &self.breaker);
        }
        d.finish()
    }
}

client_op::client_timers!(
    /// The client's timers, one pair per operation.
    ClientTimer,
    Claims,
    CLAIM
);

/// The claims system: runs operations, retries them, tells the ledger what it concluded.
pub struct Client<W> {
    /// Its configuration.
    pub cfg: ClientConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Client<W> {
    /// A client configured by `cfg`.
    pub fn new(cfg: ClientConfig) -> Self {
        Client {
            cfg,
            wire: PhantomData,
        }
    }

    fn timeout(&self, i: usize) -> ClientTimer {
        let op = self.cfg.ops[i].op();
        OpTimer::timeout(i, op.id).of_part(op.part)
    }

    /// The key attempt `attempt` of operation `i` carries, under the configured policy.
    pub fn key_for(&self, i: usize, attempt: u32, started_us: TimeUs) -> Key {
        let op = self.cfg.ops[i].op();
        match self.cfg.key {
            KeyPolicy::Stable => Key::Op { op, n: 1 },
            KeyPolicy::PerAttempt => Key::Op { op, n: attempt },
            KeyPolicy::Timestamp { bucket_ms } => Key::Time {
                bucket: started_us / bucket_ms.max(1).saturating_mul(US_PER_MS),
            },
            KeyPolicy::None => Key::None,
        }
    }
}

impl<W: Carries<Msg>> Client<W> {
    fn persistence(&self) -> Persistence {
        Persistence {
            retry: self.cfg.retry,
            timeout_ms: self.cfg.timeout_ms,
            dead_letter: self.cfg.dead_letter,
        }
    }

    fn send_attempt(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        let spec = self.cfg.ops[i];
        let window_ms = self.cfg.retry.window_ms;
        if self.cfg.breaker.is_some() && st.breaker.allow(ctx.now_us()) == Verdict::Refuse {
            // Fail fast: the struggling service never sees this attempt.
            ctx.reached(sit::BREAKER_FAST_FAIL);
            let (op, amount) = (spec.op(), spec.amount_eur);
            let dead_letter = self.cfg.dead_letter;
            s.ops[i].fail_fast(op, amount, window_ms, dead_letter, &SITUATIONS, ctx);
            self.take_up(s, i, ctx);
            return;
        }
        let op = &mut s.ops[i];
        let attempt = op.begin_attempt(spec.op(), spec.amount_eur, window_ms, &SITUATIONS, ctx);
        let key = self.key_for(i, attempt, op.started_us);
        st.awaiting[i] = Some(attempt);
        let pay = Msg::Pay {
            op: spec.op(),
            attempt,
            key,
            amount_eur: spec.amount_for(attempt),
            // Validated to at most a day.
            timeout_ms: u32::try_from(self.cfg.timeout_ms).unwrap_or(u32::MAX),
        };
        ctx.send(self.cfg.service, W::wrap(pay));
        ctx.set_timer(
            self.timeout(i),
            self.cfg.timeout_ms.saturating_mul(US_PER_MS),
        );
    }

    fn give_up(&self, s: &mut ClientStorage, i: usize, ctx: &mut impl Ctx<Self>) {
        let op = self.cfg.ops[i].op();
        s.ops[i].give_up(op, self.cfg.dead_letter, &SITUATIONS, ctx);
        self.take_up(s, i, ctx);
    }

    /// After an attempt that may be retried: retry within the policy, if the
    /// budget pays for it, or give up (and the job, if any, takes it up).
    fn retry_or_give_up(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        after_timeout: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        self.retry_or_end(st, s, i, after_timeout, ctx);
        if s.ops[i].status == OpStatus::Done {
            self.take_up(s, i, ctx);
        }
    }

    fn retry_or_end(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        after_timeout: bool,
        ctx: &mut impl Ctx<Self>,
    ) {
        let op = self.cfg.ops[i].op();
        let p = self.persistence();
        let (Some(budget), Some(tokens)) = (&self.cfg.budget, &mut st.tokens) else {
            return s.ops[i].retry_or_give_up(i, op, &p, &SITUATIONS, ctx);
        };
        let cost = &mut st.retry_cost[i];
        s.ops[i].retry_or_give_up_if(i, op, &p, &SITUATIONS, ctx, |ctx| {
            match tokens.try_retry(budget, after_timeout) {
                Some(c) => {
                    *cost = c;
                    true
                }
                None => {
                    ctx.reached(sit::RETRY_DENIED);
                    ctx.observe(Obs::RetryDenied { op });
                    false
                }
            }
        });
    }

    /// What the breaker makes of an attempt's end.
    fn breaker_saw(&self, st: &mut ClientState, result: CallResult, ctx: &mut impl Ctx<Self>) {
        let Some(cfg) = &self.cfg.breaker else {
            return;
        };
        let was_closed = st.breaker.state() == crate::core::breaker::State::Closed;
        if st.breaker.record(cfg, result, ctx.now_us()) {
            ctx.reached(sit::BREAKER_OPENED);
        } else if !was_closed && st.breaker.state() == crate::core::breaker::State::Closed {
            ctx.reached(sit::BREAKER_CLOSED);
        }
    }

    fn attempt_ended(
        &self,
        s: &mut ClientStorage,
        i: usize,
        attempt: u32,
        outcome: AttemptOutcome,
        ctx: &mut impl Ctx<Self>,
    ) {
        s.ops[i].attempt_ended(self.cfg.ops[i].op(), attempt, outcome, ctx);
    }

    fn on_reply(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        i: usize,
        attempt: u32,
        status: PayStatus,
        ctx: &mut impl Ctx<Self>,
    ) {
        st.awaiting[i] = None;
        ctx.cancel_timer(self.timeout(i));
        let health = match status {
            PayStatus::Paid => CallResult::Success,
            PayStatus::Overloaded | PayStatus::GatewayTimeout => CallResult::Failure,
            PayStatus::InProgress | PayStatus::Mismatch => CallResult::Neutral,
        };
        self.breaker_saw(st, health, ctx);
        match status {
            PayStatus::Paid => {
                if let (Some(budget), Some(tokens)) = (&self.cfg.budget, &mut st.tokens) {
                    tokens.on_success(budget, st.retry_cost[i]);
                }
                let spec = self.cfg.ops[i];
                let paid = spec.amount_for(attempt);
                s.ops[i].done(spec.op(), attempt, paid, &SITUATIONS, ctx);
            }
            PayStatus::Overloaded => {
                let outcome = if self.cfg.overloaded_means_unknown {
                    AttemptOutcome::Unknown
                } else {
                    AttemptOutcome::Fail
                };
                self.attempt_ended(s, i, attempt, outcome, ctx);
                self.retry_or_give_up(st, s, i, false, ctx);
            }
            PayStatus::InProgress | PayStatus::GatewayTimeout => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Unknown, ctx);
                self.retry_or_give_up(st, s, i, false, ctx);
            }
            PayStatus::Mismatch => {
                self.attempt_ended(s, i, attempt, AttemptOutcome::Rejected, ctx);
                if self.cfg.retry_final_errors {
                    self.retry_or_give_up(st, s, i, false, ctx);
                } else {
                    // The key stands for an earlier request that may have
                    // been executed: a person has to look.
                    s.ops[i].uncertain = true;
                    self.give_up(s, i, ctx);
                }
            }
        }
    }
}

impl<W> crate::core::Ends for Client<W> {
    const ROLES: &'static [&'static str] = &["client"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("pay", "service"),
        ("status-query", "service"),
        // Reconciliation may ask the bank itself (chapter 14).
        ("status-query", "bank"),
    ];

    /// Status queries come only from the reconciliation job, to whom it asks.
    fn sends(&self, kind: &str, role: &str) -> bool {
        use super::reconcile::Ask;
        match (kind, role) {
            ("status-query", "service") => {
                self.cfg.reconcile.is_some_and(|r| r.ask == Ask::Service)
            }
            ("status-query", "bank") => self.cfg.reconcile.is_some_and(|r| r.ask == Ask::Bank),
            _ => true,
        }
    }
}

impl<W: Carries<Msg>> Actor for Client<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ClientTimer;
    type State = ClientState;
    type Storage = ClientStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, ClientState>,
        storage: Option<sim::Fresh<'_, ClientStorage>>,
    ) {
        let n = self.cfg.ops.len();
        if let Some(s) = storage {
            s.or_default().clear(n);
        }
        let st = state.or_default();
        st.awaiting.clear();
        st.awaiting.resize(n, None);
        st.tokens = self.cfg.budget.as_ref().map(TokenBucket::full);
        st.retry_cost.clear();
        // Only a budget refunds, so only a budget needs the costs.
        if self.cfg.budget.is_some() {
            st.retry_cost.resize(n, 0);
        }
        st.breaker.reset();
    }

    fn on_start(&self, _: &mut ClientState, s: &mut ClientStorage, ctx: &mut impl Ctx<Self>) {
        debug_assert_eq!(s.ops.len(), self.cfg.ops.len());
        let spec = |i: usize| (self.cfg.ops[i].op(), self.cfg.ops[i].start_ms);
        if self.cfg.reconcile.is_none() {
            client_op::start_ops(&mut s.ops, spec, &self.persistence(), &SITUATIONS, ctx);
            return;
        }
        // The job's timers died with the process; its records did not.
        self.resume_jobs(&s.followups, ctx);
        // A restart gives some pending operations up: the job takes those up too.
        let pending: Vec<usize> = (0..s.ops.len())
            .filter(|&i| s.ops[i].status == OpStatus::Pending)
            .collect();
        client_op::start_ops(&mut s.ops, spec, &self.persistence(), &SITUATIONS, ctx);
        for i in pending {
            if s.ops[i].status == OpStatus::Done {
                self.take_up(s, i, ctx);
            }
        }
    }

    fn on_msg(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        _from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let (op, attempt, status) = match msg.peek() {
            Some(&Msg::PayReply {
                op,
                attempt,
                status,
                ..
            }) => (op, attempt, status),
            Some(&Msg::StatusReply {
                op,
                question,
                paid_eur,
            }) if self.cfg.reconcile.is_some() => {
                if let Some(i) = self.cfg.ops.iter().position(|o| o.op() == op) {
                    self.on_status(s, (i, question), paid_eur, ctx);
                }
                return;
            }
            _ => return,
        };
        let Some(i) = self.cfg.ops.iter().position(|o| o.op() == op) else {
            return;
        };
        // A reply to an attempt we stopped waiting for arrives on a closed connection.
        if st.awaiting[i] != Some(attempt) || s.ops[i].status != OpStatus::Pending {
            return;
        }
        self.on_reply(st, s, i, attempt, status, ctx);
    }

    fn on_timer(
        &self,
        st: &mut ClientState,
        s: &mut ClientStorage,
        timer: ClientTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        let i = timer.i as usize;
        match timer.kind {
            OpTimerKind::Reconcile => self.reconcile_round(&mut s.followups, i, ctx),
            OpTimerKind::NextAttempt => {
                if s.ops[i].status != OpStatus::Done {
                    self.send_attempt(st, s, i, ctx);
                }
            }
            OpTimerKind::Timeout => {
                if s.ops[i].status == OpStatus::Done {
                    return;
                }
                // No answer within the timeout: the outcome is unknown, not failed.
                let attempt = st.awaiting[i]
                    .take()
                    .expect("a timeout belongs to an attempt");
                let outcome = if self.cfg.timeout_means_failed {
                    AttemptOutcome::Fail
                } else {
                    AttemptOutcome::Unknown
                };
                self.attempt_ended(s, i, attempt, outcome, ctx);
                self.breaker_saw(st, CallResult::Failure, ctx);
                self.retry_or_give_up(st, s, i, true, ctx);
            }
        }
    }
}

#[cfg(test)]
impl ClientConfig {
    /// The unit tests' claims system: one claim of 1,200 EUR at time 0, a
    /// one-second timeout, dead letters kept, no budget, breaker or job.
    pub(crate) fn one_claim(
        service: ActorId,
        claim: u32,
        key: KeyPolicy,
        retry: RetryPolicy,
    ) -> ClientConfig {
        ClientConfig {
            service,
            timeout_ms: 1_000,
            key,
            retry,
            retry_final_errors: false,
            dead_letter: true,
            timeout_means_failed: false,
            overloaded_means_unknown: false,
            budget: None,
            breaker: None,
            ops: vec![OpSpec {
                claim,
                payment: 1,
                amount_eur: 1200,
                start_ms: 0,
                retry_amount_eur: None,
            }],
            reconcile: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::obs::Ending;
    use crate::registry::Msg as World;
    use sim::{Choices, Command, Context};

    type Cmd = Command<World, Obs, ClientTimer>;

    const SERVICE: ActorId = 2;
    const CLAIM_ID: u32 = 4711;

    /// A claims system with one claim, three attempts, and its database.
    struct Claims {
        client: Client<World>,
        state: ClientState,
        storage: ClientStorage,
        choices: Choices,
    }

    impl Claims {
        fn new() -> Claims {
            let client = Client::new(ClientConfig::one_claim(
                SERVICE,
                CLAIM_ID,
                KeyPolicy::Stable,
                RetryPolicy::immediate(3),
            ));
            let (mut state, mut storage) = (None, None);
            client.reset_state(&mut state);
            client.reset_storage(&mut storage);
            let mut choices = Choices::new();
            choices.start_random(0, 1, false);
            Claims {
                client,
                state: state.expect("a state"),
                storage: storage.expect("a storage"),
                choices,
            }
        }

        /// The next attempt's timer fires at `now_us`.
        fn attempt(&mut self, now_us: TimeUs) -> Vec<Cmd> {
            let mut out = Vec::new();
            let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
            let timer = OpTimer::next_attempt(0, CLAIM_ID);
            let (st, s) = (&mut self.state, &mut self.storage);
            self.client.on_timer(st, s, timer, &mut ctx);
            out
        }

        /// The service sheds attempt `attempt` with 503: nothing executed.
        fn shed(&mut self, now_us: TimeUs, attempt: u32) -> Vec<Cmd> {
            let reply = Msg::PayReply {
                op: Op::new(&CLAIM, CLAIM_ID),
                attempt,
                status: PayStatus::Overloaded,
                amount_eur: 0,
            };
            let mut out = Vec::new();
            let mut ctx = Context::detached(now_us, 0, &mut self.choices, &mut out);
            let (st, s) = (&mut self.state, &mut self.storage);
            self.client
                .on_msg(st, s, SERVICE, World::wrap(reply), &mut ctx);
            out
        }

        /// A crash and a restart at `now_us`: the database kept.
        fn restart(&mut self, now_us: TimeUs) -> Vec<Cmd> {
            let mut out = Vec::new();
            let mut ctx = Context::detached_restart(now_us, 0, &mut self.choices, &mut out);
            let mut fresh = Some(self.state.clone());
            self.client.reset_state(&mut fresh);
            self.state = fresh.expect("a state");
            let (st, s) = (&mut self.state, &mut self.storage);
            self.client.on_start(st, s, &mut ctx);
            out
        }
    }

    fn ending(out: &[Cmd]) -> Option<Ending> {
        out.iter().find_map(|c| match c {
            Command::Observe(Obs::Ended { ending, .. }) => Some(*ending),
            _ => None,
        })
    }

    /// Every attempt is shed with 503, which says nothing was executed;
    /// the client restarts while it waits to send the second. Its database
    /// recorded the first answer before the crash, so the restart changes
    /// nothing it knows: the claim is given up as failed, not unknown.
    #[test]
    fn a_restart_during_a_backoff_keeps_a_definite_answer_definite() {
        let mut c = Claims::new();
        c.attempt(0);
        c.shed(100, 1);
        c.restart(200);
        c.attempt(300);
        c.shed(400, 2);
        c.attempt(500);
        assert_eq!(ending(&c.shed(600, 3)), Some(Ending::Failed));
    }

    /// The same, with the restart while the first attempt is open: its
    /// connection died with the process, and whether the service paid is
    /// unknown whatever the later attempts hear.
    #[test]
    fn a_restart_during_an_attempt_makes_its_outcome_unknown() {
        let mut c = Claims::new();
        c.attempt(0);
        c.restart(200);
        c.attempt(300);
        c.shed(400, 2);
        c.attempt(500);
        assert_eq!(ending(&c.shed(600, 3)), Some(Ending::Unknown));
    }
}
