//! The queue's tests: pop order in both forms (sorted buffer and heap),
//! compaction, `pop_before` and `retain`.

use super::*;

/// The queue pops in (time, seq) order, below and beyond the switch to a heap.
#[test]
fn pops_in_time_then_sequence_order_in_both_forms() {
    for n in [5usize, SORTED_MAX, 3 * SORTED_MAX] {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        let mut expected = Vec::new();
        let mut seq = 0;
        // A fixed scramble of times with ties, pushed and popped interleaved.
        let mut x = 7u64;
        let mut popped = Vec::new();
        for round in 0..3 {
            for _ in 0..n {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = 1000 * round + (x >> 59);
                q.push(
                    t,
                    seq,
                    EventKind::Restart {
                        actor: seq as ActorId,
                    },
                );
                expected.push((t, seq));
                seq += 1;
            }
            for _ in 0..n / 2 {
                let e = q.pop_event().expect("pending");
                let EventKind::Restart { actor } = e.kind else {
                    panic!("the payload comes back");
                };
                popped.push((e.time_us, u64::from(actor)));
            }
        }
        while let Some(e) = q.pop_event() {
            let EventKind::Restart { actor } = e.kind else {
                panic!("the payload comes back");
            };
            popped.push((e.time_us, u64::from(actor)));
        }
        assert_eq!(q.len(), 0);
        // Popping interleaved with pushing: each pop is the least pending key.
        let mut pending: Vec<(u64, u64)> = Vec::new();
        let mut pushed = expected.iter();
        let mut check = popped.iter();
        for _round in 0..3 {
            for _ in 0..n {
                pending.push(*pushed.next().expect("pushed"));
            }
            for _ in 0..n / 2 {
                pending.sort();
                assert_eq!(Some(&pending.remove(0)), check.next(), "n = {n}");
            }
        }
        pending.sort();
        assert_eq!(pending, check.copied().collect::<Vec<_>>(), "n = {n}");
    }
}

/// A long run of pushes and pops with many events pending walks the
/// sorted buffer's head and tail past its end again and again: each
/// compaction keeps every key, and pops stay in (time, seq) order, ties
/// in the order they were pushed.
#[test]
fn the_sorted_buffer_compacts_without_losing_or_reordering_keys() {
    let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
    let mut pending: Vec<(u64, u64)> = Vec::new();
    let mut x = 11u64;
    let mut now = 0u64;
    for seq in 0..5_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Times from now on, with ties, some earlier than pending ones.
        let t = now + (x >> 60);
        q.push(
            t,
            seq,
            EventKind::Restart {
                actor: seq as ActorId,
            },
        );
        pending.push((t, seq));
        // Keep 20 to 40 pending: below the switch to a heap.
        if pending.len() > 20 + (seq % 21) as usize {
            pending.sort();
            let want = pending.remove(0);
            let e = q.pop_event().expect("pending");
            let EventKind::Restart { actor } = e.kind else {
                panic!("the payload comes back");
            };
            assert_eq!((e.time_us, u64::from(actor)), want, "push {seq}");
            now = e.time_us;
        }
        assert!(!q.in_heap, "never more than SORTED_MAX pending");
        assert_eq!(q.len(), pending.len());
    }
    pending.sort();
    for want in pending {
        let e = q.pop_event().expect("pending");
        assert_eq!(e.time_us, want.0);
    }
    assert!(q.pop_event().is_none() && q.peek_time().is_none());
}

/// `pop_before` takes the next event only when it is due before the
/// limit, in both forms, and leaves the queue as it was otherwise.
#[test]
fn pop_before_takes_only_what_is_due_before_the_limit_in_both_forms() {
    for n in [10u64, 3 * SORTED_MAX as u64] {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        for i in 0..n {
            q.push((i * 7) % n, i, EventKind::Restart { actor: i as u32 });
        }
        let limit = n / 2;
        let mut popped = Vec::new();
        while let Some(e) = q.pop_event_before(limit) {
            popped.push(e.time_us);
        }
        let expected: Vec<u64> = (0..limit).collect();
        assert_eq!(popped, expected, "n = {n}");
        assert_eq!(q.len() as u64, n - limit);
        assert_eq!(q.peek_time(), Some(limit));
        assert!(q.pop_event_before(0).is_none() && q.len() as u64 == n - limit);
        assert_eq!(q.pop_event().map(|e| e.time_us), Some(limit));
    }
    let mut empty: EventQueue<u32, ()> = EventQueue::with_capacity(4);
    assert!(empty.pop_event_before(TimeUs::MAX).is_none());
}

/// `retain` drops what it is told in both forms, frees the slots for
/// reuse, and the rest still pop in (time, seq) order.
#[test]
fn retain_drops_events_and_keeps_the_order_in_both_forms() {
    for n in [10u32, 3 * SORTED_MAX as u32] {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        for i in 0..n {
            // Times fall and rise, so neither form sees them in order.
            q.push(
                u64::from((i * 7) % 13),
                u64::from(i),
                EventKind::Restart { actor: i },
            );
        }
        q.retain(|_, k| matches!(k, EventKind::Restart { actor } if actor % 3 != 0));
        let kept = (0..n).filter(|i| i % 3 != 0).count();
        assert_eq!(q.len(), kept, "n = {n}");
        assert_eq!(q.free.len(), n as usize - kept, "dropped slots are free");
        let mut popped = Vec::new();
        while let Some(e) = q.pop_event() {
            let EventKind::Restart { actor } = e.kind else {
                panic!("only restarts were queued");
            };
            popped.push((e.time_us, actor));
        }
        let mut expected: Vec<(u64, u32)> = (0..n)
            .filter(|i| i % 3 != 0)
            .map(|i| (u64::from((i * 7) % 13), i))
            .collect();
        expected.sort();
        assert_eq!(popped, expected, "n = {n}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Whatever side an insertion takes (appended, moved to the front,
    /// moved at the back, after a compaction, past the switch to a heap),
    /// every pop is the least pending (time, seq), as a sorted set says.
    #[test]
    fn every_pop_is_the_least_pending_key(
        ops in proptest::collection::vec((0u64..40, 0u8..4), 1..400),
    ) {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        let mut pending = std::collections::BTreeSet::new();
        let (mut now_us, mut seq) = (0u64, 0u64);
        for (delay_us, op) in ops {
            // One pop in four: the queue grows past the heap's switch.
            if op == 0 {
                let got = q.pop_event().map(|e| match e.kind {
                    EventKind::Restart { actor } => (e.time_us, u64::from(actor)),
                    _ => unreachable!("only restarts are queued"),
                });
                let want = pending.pop_first();
                proptest::prop_assert_eq!(got, want);
                if let Some((t, _)) = got {
                    now_us = t;
                }
            } else {
                let t = now_us + delay_us;
                q.push(t, seq, EventKind::Restart { actor: seq as ActorId });
                pending.insert((t, seq));
                seq += 1;
            }
            proptest::prop_assert_eq!(q.len(), pending.len());
        }
    }
}

/// What a law run pops, by operation.
#[derive(Clone, Debug)]
enum LawOp {
    Pop,
    PopBefore(u64),
    /// Drops every third event pushed in the run.
    Retain,
    /// A new run on the same queue: whatever the last one left in the buffers stays there.
    Clear,
    Push(u64),
}

fn law_op() -> impl proptest::strategy::Strategy<Value = LawOp> {
    use proptest::prelude::*;
    // Small times, for many ties; pushes about as often as pops, so the
    // queue moves between a few keys, more than `WINDOW` and the heap.
    prop_oneof![
        7 => Just(LawOp::Pop),
        1 => (0u64..200).prop_map(LawOp::PopBefore),
        1 => Just(LawOp::Retain),
        1 => Just(LawOp::Clear),
        10 => (0u64..200).prop_map(LawOp::Push),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// As [`every_pop_is_the_least_pending_key`], with any times (earlier
    /// than keys popped before too), `pop_before`, `retain`, and new runs
    /// on the same queue after `clear`: a push counts the later keys among
    /// slots below the head, which must never hold a time later than the
    /// new key's, whatever a pop, a compaction or an earlier run left there.
    #[test]
    fn every_pop_is_the_least_pending_key_across_runs_and_any_times(
        ops in proptest::collection::vec(law_op(), 1..800),
    ) {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        let mut pending = std::collections::BTreeSet::new();
        let mut seq = 0u64;
        let key = |e: Event<u32, ()>| match e.kind {
            EventKind::Restart { actor } => (e.time_us, u64::from(actor)),
            _ => unreachable!("only restarts are queued"),
        };
        for op in ops {
            match op {
                LawOp::Pop => {
                    proptest::prop_assert_eq!(q.pop_event().map(key), pending.pop_first());
                }
                LawOp::PopBefore(limit_us) => {
                    let want = match pending.first() {
                        Some(&(t, _)) if t < limit_us => pending.pop_first(),
                        _ => None,
                    };
                    proptest::prop_assert_eq!(q.pop_event_before(limit_us).map(key), want);
                }
                LawOp::Retain => {
                    q.retain(|_, k| matches!(k, EventKind::Restart { actor } if actor % 3 != 0));
                    pending.retain(|&(_, s)| s % 3 != 0);
                }
                LawOp::Clear => {
                    q.clear();
                    pending.clear();
                    seq = 0;
                }
                LawOp::Push(t) => {
                    q.push(t, seq, EventKind::Restart { actor: seq as ActorId });
                    pending.insert((t, seq));
                    seq += 1;
                }
            }
            proptest::prop_assert_eq!(q.len(), pending.len());
            proptest::prop_assert_eq!(q.peek_time(), pending.first().map(|&(t, _)| t));
        }
    }
}
