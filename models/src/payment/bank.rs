//! The bank (the payment provider): the outside world where money leaves.
//! Its transfers are the effects the ledger counts, never the service's
//! bookings.

use super::msg::{wire, Msg, TransferResult};
use super::situations as sit;
use super::{BANK_LAYER, TRANSFER};
use crate::core::dedup::{DedupStore, Lookup};
use crate::core::{Carries, Key, Obs, Op};
use sim::{Actor, ActorId, Ctx, NoTimer, TimeUs, US_PER_S};
use std::marker::PhantomData;

/// The bank's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankConfig {
    /// The bank deduplicates transfers on the key it is given.
    pub accepts_key: bool,
    /// How long the bank remembers a key; 0: forever.
    pub key_retention_us: TimeUs,
    /// The bank answers "how much is paid for claim X?".
    pub status_query: bool,
    /// Its status answers, and a conditional transfer's check, count what
    /// is paid for the payment asked about, not for its whole claim (all
    /// payments of the claim, which reads an earlier payment as this one).
    pub status_by_payment: bool,
    /// Its status answers come from a read replica that shows a transfer
    /// only this long after it was executed; 0: they read the ledger itself.
    /// A conditional transfer always checks the ledger itself.
    pub status_lag_us: TimeUs,
    /// Requests (transfers and status queries) it takes in each second of
    /// virtual time; one over that is dropped unanswered, as an overloaded
    /// provider's connection times out. 0: no limit.
    pub capacity_per_s: u32,
    /// How long after the faults stop it promises to take every request
    /// again, judged by `load-recovers`; 0: no promise.
    pub recover_ms: u32,
    /// It refuses a refund of more than is paid for the payment, net of
    /// the refunds before it (Stripe's `charge_already_refunded`); false: it
    /// refunds whatever it is asked (`refund.rs`).
    pub refuse_refund_beyond_paid: bool,
}

/// The bank's volatile state: what it has taken in the current second.
/// A restart forgets it, as a rate limiter in memory does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BankState {
    /// The second of virtual time being counted (`now / 1 s`).
    pub second: TimeUs,
    /// Requests taken in it.
    pub taken: u32,
}

/// The bank's ledger: every executed transfer and refund, and the keys it
/// remembers.
#[derive(Clone, Debug)]
pub struct BankStorage {
    /// Every transfer executed: the claim, the amount, and when.
    pub transfers: Vec<(Op, u32, TimeUs)>,
    /// The keys it deduplicates on.
    pub keys: DedupStore<Key, ()>,
    /// Every refund executed: the claim, the amount, and when.
    pub refunds: Vec<(Op, u32, TimeUs)>,
    /// The refunds' own keys, kept for good: a refund is deduplicated
    /// apart from the transfer it takes back.
    pub refund_keys: DedupStore<Key, ()>,
}

/// The state panel's fields: a bank that refunded nothing shows its
/// storage as it always has, the refunds appear once there are any.
impl serde::Serialize for BankStorage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let refunded = !self.refunds.is_empty() || !self.refund_keys.is_empty();
        let mut st = s.serialize_struct("BankStorage", if refunded { 4 } else { 2 })?;
        st.serialize_field("transfers", &self.transfers)?;
        st.serialize_field("keys", &self.keys)?;
        if refunded {
            st.serialize_field("refunds", &self.refunds)?;
            st.serialize_field("refund_keys", &self.refund_keys)?;
        }
        st.end()
    }
}

/// A bank that has counted nothing (every bank without a capacity) keeps
/// nothing in memory: the state panel shows no rows, as it always has.
impl serde::Serialize for BankState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        if *self == BankState::default() {
            return s.serialize_unit();
        }
        let mut d = s.serialize_struct("BankState", 2)?;
        d.serialize_field("second", &self.second)?;
        d.serialize_field("taken", &self.taken)?;
        d.end()
    }
}

impl BankStorage {
    /// What it has paid for payment `op` in all, or with `by_payment`
    /// false for every payment of its claim.
    pub fn paid_eur(&self, op: Op, by_payment: bool) -> u32 {
        let paid: u32 = self
            .transfers
            .iter()
            .filter(|t| counts_for(t.0, op, by_payment))
            .map(|t| t.1)
            .sum();
        paid.saturating_sub(self.refunded_eur(op, by_payment))
    }

    /// What it has refunded for `op`, counted as [`paid_eur`](Self::paid_eur)
    /// counts: a refund is seen at once, on the replica too, since it is
    /// the job that looks which makes it.
    fn refunded_eur(&self, op: Op, by_payment: bool) -> u32 {
        self.refunds
            .iter()
            .filter(|t| counts_for(t.0, op, by_payment))
            .map(|t| t.1)
            .sum()
    }

    /// What a read replica `lag_us` behind the ledger shows paid for `op`
    /// (as [`paid_eur`](Self::paid_eur) counts it) at `now_us` (the
    /// transfers executed at least `lag_us` ago), and what the ledger itself
    /// holds: one pass over the transfers for both.
    pub fn paid_eur_seen(
        &self,
        op: Op,
        by_payment: bool,
        now_us: TimeUs,
        lag_us: TimeUs,
    ) -> (u32, u32) {
        let (seen, all) = self
            .transfers
            .iter()
            .filter(|t| counts_for(t.0, op, by_payment))
            .fold((0, 0), |(seen, all): (u32, u32), t| {
                let shown = t.2.saturating_add(lag_us) <= now_us;
                (seen + if shown { t.1 } else { 0 }, all + t.1)
            });
        let back = self.refunded_eur(op, by_payment);
        (seen.saturating_sub(back), all.saturating_sub(back))
    }
}

/// A transfer for `paid` counts for a question about `asked`: the same
/// payment, or by claim any payment of the same claim.
fn counts_for(paid: Op, asked: Op, by_payment: bool) -> bool {
    match by_payment {
        true => paid == asked,
        false => paid.same_id(asked),
    }
}

/// The bank: executes transfers, where the effect of a payment lands.
pub struct Bank<W> {
    /// Its configuration.
    pub cfg: BankConfig,
    wire: PhantomData<fn() -> W>,
}

impl<W> Bank<W> {
    /// A bank configured by `cfg`.
    pub fn new(cfg: BankConfig) -> Self {
        Bank {
            cfg,
            wire: PhantomData,
        }
    }
}

impl<W: Carries<Msg>> Bank<W> {
    /// Whether the bank takes a request for `op` now: within its capacity
    /// for the current second. One over it is shed (reported, unanswered).
    pub(super) fn admit(&self, st: &mut BankState, op: Op, ctx: &mut impl Ctx<Self>) -> bool {
        if self.cfg.capacity_per_s == 0 {
            return true;
        }
        let second = ctx.now_us() / US_PER_S;
        if second != st.second {
            *st = BankState { second, taken: 0 };
        }
        if st.taken < self.cfg.capacity_per_s {
            st.taken += 1;
            return true;
        }
        ctx.reached(sit::BANK_OVERLOADED);
        ctx.observe(Obs::Shed {
            layer: &BANK_LAYER,
            op,
            recover_ms: self.cfg.recover_ms,
        });
        false
    }

    fn pay(
        &self,
        s: &mut BankStorage,
        op: Op,
        key: Key,
        amount_eur: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        s.transfers.push((op, amount_eur, ctx.now_us()));
        if self.cfg.accepts_key && key.is_some() {
            s.keys.insert(key, (), ctx.now_us());
        }
        ctx.observe(Obs::Effect {
            site: &TRANSFER,
            op,
            payload: amount_eur,
        });
    }

    fn on_transfer(
        &self,
        st: &mut BankState,
        s: &mut BankStorage,
        from: ActorId,
        order: TransferOrder,
        ctx: &mut impl Ctx<Self>,
    ) {
        let TransferOrder {
            op,
            reference,
            key_passed,
            amount_eur,
            if_paid_eur,
            version,
        } = order;
        let key = wire(reference, key_passed);
        ctx.observe(Obs::Received {
            layer: &BANK_LAYER,
            op,
            key,
        });
        if !self.admit(st, op, ctx) {
            return;
        }
        let now = ctx.now_us();
        let keyed = self.cfg.accepts_key && key.is_some();
        let known = keyed
            && match s.keys.lookup(&key, now) {
                Lookup::Live(_) => true,
                Lookup::Expired => {
                    ctx.reached(sit::BANK_KEY_EXPIRED);
                    false
                }
                Lookup::Absent => false,
            };
        let paid_eur = s.paid_eur(op, self.cfg.status_by_payment);
        let result = if known {
            ctx.reached(sit::BANK_DEDUP_HIT);
            TransferResult::Done
        } else if if_paid_eur.is_some_and(|expected| expected != paid_eur) {
            TransferResult::Refused { paid_eur }
        } else {
            if version != 0 {
                ctx.observe(Obs::EffectBy { op, version });
            }
            self.pay(s, op, key, amount_eur, ctx);
            TransferResult::Done
        };
        // The answer names the transfer it answers, whether or not the bank
        // deduplicates on that name.
        let done = Msg::TransferDone {
            op,
            key: reference,
            key_passed,
            result,
        };
        ctx.send(from, W::wrap(done));
    }
}

/// A refund the bank is asked for, as the client's message carries it
/// (the bank's refunds are in `refund.rs`).
#[derive(Clone, Copy)]
pub(super) struct RefundOrder {
    pub(super) op: Op,
    pub(super) key: Key,
    pub(super) amount_eur: u32,
    pub(super) round: u32,
}

/// A transfer the bank is asked for, as the service's message carries it.
#[derive(Clone, Copy)]
struct TransferOrder {
    op: Op,
    /// The service's key: the reference the answer names.
    reference: Key,
    /// The reference is also the key the bank may deduplicate on.
    key_passed: bool,
    amount_eur: u32,
    /// The service version that sent it (0: a service without rollouts).
    version: u8,
    /// A conditional transfer's condition: paid so far.
    if_paid_eur: Option<u32>,
}

impl<W> crate::core::Ends for Bank<W> {
    const ROLES: &'static [&'static str] = &["bank"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        ("transfer-done", "service"),
        ("status-reply", "service"),
        ("status-reply", "client"),
        ("refund-done", "client"),
    ];
    const ANSWERS: &'static [(&'static str, &'static str)] = &[
        ("transfer-done", "transfer"),
        ("status-reply", "status-query"),
        ("refund-done", "refund"),
    ];

    /// A bank without a status endpoint ignores queries.
    fn sends(&self, kind: &str, _role: &str) -> bool {
        kind != "status-reply" || self.cfg.status_query
    }
}

impl<W: Carries<Msg>> Actor for Bank<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = NoTimer;
    /// Only what its rate limit counted in the current second.
    type State = BankState;
    type Storage = BankStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, BankState>,
        storage: Option<sim::Fresh<'_, BankStorage>>,
    ) {
        state.set(BankState::default());
        if let Some(s) = storage {
            let s = s.or_insert_with(|| BankStorage {
                transfers: Vec::new(),
                keys: DedupStore::new(self.cfg.key_retention_us),
                refunds: Vec::new(),
                refund_keys: DedupStore::new(0),
            });
            s.transfers.clear();
            s.keys.reset(self.cfg.key_retention_us);
            s.refunds.clear();
            s.refund_keys.reset(0);
        }
    }

    fn on_start(&self, _: &mut BankState, _: &mut BankStorage, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        st: &mut BankState,
        s: &mut BankStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        match msg.peek() {
            Some(&Msg::Transfer {
                op,
                key,
                key_passed,
                amount_eur,
                if_paid_eur,
                version,
            }) => {
                let order = TransferOrder {
                    op,
                    reference: key,
                    key_passed,
                    amount_eur,
                    if_paid_eur,
                    version,
                };
                self.on_transfer(st, s, from, order, ctx)
            }
            Some(&Msg::StatusQuery { op, question }) if self.cfg.status_query => {
                if !self.admit(st, op, ctx) {
                    return;
                }
                let now = ctx.now_us();
                let (paid_eur, in_ledger_eur) =
                    s.paid_eur_seen(op, self.cfg.status_by_payment, now, self.cfg.status_lag_us);
                if paid_eur < in_ledger_eur {
                    ctx.reached(sit::STATUS_READ_STALE);
                }
                let reply = Msg::StatusReply {
                    op,
                    question,
                    paid_eur,
                };
                ctx.send(from, W::wrap(reply));
            }
            Some(&Msg::Refund {
                op,
                key,
                amount_eur,
                round,
            }) => {
                let order = RefundOrder {
                    op,
                    key,
                    amount_eur,
                    round,
                };
                self.on_refund(st, s, from, order, ctx);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BankState;

    #[test]
    fn a_bank_that_counted_nothing_shows_its_state_as_before() {
        let shown = |st: &BankState| serde_json::to_string(st).expect("json");
        assert_eq!(shown(&BankState::default()), "null");
        let counting = BankState {
            second: 20,
            taken: 13,
        };
        assert_eq!(shown(&counting), r#"{"second":20,"taken":13}"#);
    }
}
