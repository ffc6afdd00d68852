//! How the ledger records idempotency keys: the operation each key was
//! first used for, the executions running per key, and the dedup store's
//! size.

use super::Ledger;
use crate::core::op::{Key, Op};
use sim::ActorId;

impl Ledger {
    /// A request for `op` carried `key`; `known` says whether the key was
    /// seen before. The first operation a key is used for stays its owner.
    #[inline]
    pub(super) fn key_used(&mut self, key: Key, op: Op, known: bool) {
        if key.is_some() && !known {
            self.keys.insert(key, op);
        }
    }

    /// `actor` starts executing the request bound to `key`.
    #[inline]
    pub(super) fn exec_start(&mut self, key: Key, actor: ActorId) {
        self.executors.push((key, actor));
    }

    /// The execution of `key` by `actor` finished or gave up.
    #[inline]
    pub(super) fn exec_end(&mut self, key: Key, actor: ActorId) {
        if let Some(i) = self.executors.iter().position(|e| *e == (key, actor)) {
            self.executors.swap_remove(i);
        }
    }

    /// `actor` restarted: every execution it ran died with it.
    #[inline]
    pub(super) fn executors_lost(&mut self, actor: ActorId) {
        self.executors.retain(|(_, a)| *a != actor);
    }

    /// A dedup store holds `keys` live records.
    #[inline]
    pub(super) fn dedup_store(&mut self, keys: u32) {
        self.peak_dedup_keys = self.peak_dedup_keys.max(keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::WRITE;

    #[test]
    fn a_key_keeps_its_first_operation_and_its_executions_end_per_actor() {
        let mut l = Ledger::default();
        let (first, second) = (Op::new(&WRITE, 1), Op::new(&WRITE, 2));
        let key = Key::Op { op: first, n: 1 };
        l.key_used(key, first, false);
        l.key_used(key, second, true);
        assert_eq!(l.keys.get(&key), Some(&first));
        let (a, b): (ActorId, ActorId) = (1, 2);
        l.exec_start(key, a);
        l.exec_start(key, b);
        l.exec_end(key, a);
        assert_eq!(l.executors, [(key, b)]);
        l.exec_start(key, b);
        l.executors_lost(b);
        assert!(
            l.executors.is_empty(),
            "a restart ends every execution it ran"
        );
    }
}
