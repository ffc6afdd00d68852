//! Which version of a rolled-out actor handled what: each attempt it took
//! (`Obs::Handled`) and each effect its request made (`Obs::EffectBy`).
//! Only actors with rollouts report these, so in any other run the list
//! stays empty: nothing is stored, nothing is cleared but an empty `Vec`.

use super::Ledger;
use crate::core::op::Op;

/// One attribution: version `version` (counted from 1) of a rolled-out
/// actor handled `op`'s attempt `attempt`, or made its effect number `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attribution {
    /// The operation.
    pub op: Op,
    /// What was attributed.
    pub what: Attributed,
    /// The version, counted from 1.
    pub version: u8,
}

/// What an [`Attribution`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attributed {
    /// The client's attempt this version took (0: a consumer's delivery).
    Attempt(u32),
    /// The operation's effect with this number (from 1), which landed from
    /// this version's request.
    Effect(u32),
}

impl Ledger {
    /// Records that `version` took attempt `attempt` of `op`.
    pub(super) fn handled(&mut self, op: Op, attempt: u32, version: u8) {
        self.attributions.push(Attribution {
            op,
            what: Attributed::Attempt(attempt),
            version,
        });
    }

    /// Records that the next effect of `op` comes from `version`: said
    /// before the effect, since a duplicate effect ends the run.
    pub(super) fn effect_by(&mut self, op: Op, version: u8) {
        let n = self.effects(op) + 1;
        self.attributions.push(Attribution {
            op,
            what: Attributed::Effect(n),
            version,
        });
    }

    /// Every attribution of the run, in the order observed; empty in a
    /// run without rollouts.
    pub fn attributions(&self) -> &[Attribution] {
        &self.attributions
    }

    /// The versions whose requests made `op`'s effects, effect by effect
    /// (`None` for an effect no version was named for).
    pub fn effect_versions(&self, op: Op) -> Vec<Option<u8>> {
        (1..=self.effects(op))
            .map(|n| {
                self.attributions
                    .iter()
                    .find(|a| a.op == op && a.what == Attributed::Effect(n))
                    .map(|a| a.version)
            })
            .collect()
    }

    /// The versions that took `op`'s attempts, in the order they did.
    pub fn attempt_versions(&self, op: Op) -> Vec<(u32, u8)> {
        self.attributions
            .iter()
            .filter_map(|a| match a.what {
                Attributed::Attempt(n) if a.op == op => Some((n, a.version)),
                _ => None,
            })
            .collect()
    }
}
