//! The step slots, a part that owns its state: the later steps of the
//! requests workers took (a second transaction, a bank call or an answer
//! due after the request's processing), each waiting in a slot for its
//! timer. A crash loses them. The service decides what a taken request's
//! steps are and runs each when its timer fires.

use super::timers::{ServiceTimer, MAX_STEPS};
use crate::core::slots::Slots;
use crate::core::{Key, Op};
use crate::payment::msg::PayStatus;
use sim::{Actor, ActorId, Ctx, TimeUs};

/// What a pending step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum StepKind {
    /// Call the bank (after `processing_ms`).
    CallBank,
    /// Book and call the bank, without looking at the key again.
    BookAndCall,
    /// Record the key "in progress" after the booking (split-booking-first).
    InsertKey,
    /// Answer without calling the bank, once the request's processing is done.
    Answer(PayStatus),
}

/// The second step of an operation that is two steps (two transactions, or a
/// check and a later act).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Step {
    /// What it does.
    pub kind: StepKind,
    /// The claim of its request.
    pub op: Op,
    /// The key of its request.
    pub key: Key,
    /// The amount it pays or answers.
    pub amount_eur: u32,
    /// The client and attempt its request answers.
    pub client: (ActorId, u32),
}

/// The pending steps, one slot each: the state panel shows them as their
/// slots.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct Steps {
    slots: Slots<Step>,
}

impl Default for Steps {
    fn default() -> Self {
        Steps {
            slots: Slots::new(MAX_STEPS),
        }
    }
}

impl Steps {
    /// None pending, in its allocation.
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// Steps pending.
    pub fn busy(&self) -> usize {
        self.slots.busy()
    }

    /// Whether every slot is taken.
    pub fn is_full(&self) -> bool {
        self.slots.is_full()
    }

    /// Takes pending step `slot` out to run it; none if it is gone.
    pub fn take(&mut self, slot: usize) -> Option<Step> {
        self.slots.take(slot)
    }

    /// Runs `step` after `processing_us`, as its own step; false when no
    /// slot is free.
    pub fn schedule<A>(&mut self, step: Step, processing_us: TimeUs, ctx: &mut impl Ctx<A>) -> bool
    where
        A: Actor<Timer = ServiceTimer>,
    {
        let Some(slot) = self.slots.insert(step) else {
            return false;
        };
        ctx.set_timer(ServiceTimer::Step { slot: slot as u32 }, processing_us);
        true
    }

    /// Whether a step of work on `key` is pending (an answer only is not
    /// work on the key).
    pub fn works_on(&self, key: Key) -> bool {
        self.slots
            .find(|p| p.key == key && !matches!(p.kind, StepKind::Answer(_)))
            .is_some()
    }

    /// Pending steps that will call the bank: each admitted request's call
    /// still to come.
    pub fn calls_due(&self) -> usize {
        self.slots
            .iter()
            .filter(|(_, p)| matches!(p.kind, StepKind::CallBank | StepKind::BookAndCall))
            .count()
    }

    /// Every pending step with its slot (a redeploy cancels their timers).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Step)> {
        self.slots.iter()
    }

    /// The pending key inserts (split-booking-first's second transaction),
    /// in slot order, each with its slot.
    pub fn inserts(&self) -> impl Iterator<Item = (usize, &Step)> {
        self.slots
            .iter()
            .filter(|(_, p)| p.kind == StepKind::InsertKey)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::harness::{commands, timers};
    use super::*;
    use crate::payment::CLAIM;

    fn step(kind: StepKind, n: u32) -> Step {
        let op = Op::new(&CLAIM, 4711);
        Step {
            kind,
            op,
            key: Key::Op { op, n },
            amount_eur: 1200,
            client: (1, n),
        }
    }

    /// A step waits in its slot for its processing; slots run out at the
    /// bound, and a step taken out is gone.
    #[test]
    fn a_step_waits_its_processing_in_a_slot_until_the_slots_run_out() {
        let mut steps = Steps::default();
        let out = commands(0, |ctx| {
            assert!(steps.schedule(step(StepKind::CallBank, 1), 100_000, ctx));
        });
        assert_eq!(timers(&out), [(ServiceTimer::Step { slot: 0 }, 100_000)]);
        commands(0, |ctx| {
            for n in 1..MAX_STEPS as u32 {
                assert!(steps.schedule(step(StepKind::InsertKey, n), 1, ctx));
            }
            assert!(!steps.schedule(step(StepKind::CallBank, 0), 1, ctx));
        });
        assert!(steps.is_full());
        assert_eq!(steps.take(0).map(|s| s.kind), Some(StepKind::CallBank));
        assert!(steps.take(0).is_none());
        assert_eq!(steps.busy(), MAX_STEPS - 1);
    }

    /// What the service asks of the pending steps: which are work on a key
    /// (an answer is not), which bank calls are still due, which are key
    /// inserts.
    #[test]
    fn pending_steps_tell_work_on_a_key_calls_due_and_inserts() {
        let mut steps = Steps::default();
        let kinds = [
            StepKind::Answer(PayStatus::Paid),
            StepKind::CallBank,
            StepKind::BookAndCall,
            StepKind::InsertKey,
        ];
        commands(0, |ctx| {
            for (n, kind) in (1..).zip(kinds) {
                steps.schedule(step(kind, n), 1, ctx);
            }
        });
        let key = |n| step(StepKind::CallBank, n).key;
        assert!(!steps.works_on(key(1)), "an answer is no work on its key");
        assert!(steps.works_on(key(2)) && steps.works_on(key(4)));
        assert_eq!(steps.calls_due(), 2);
        let inserts: Vec<usize> = steps.inserts().map(|(slot, _)| slot).collect();
        assert_eq!(inserts, [3]);
    }
}
