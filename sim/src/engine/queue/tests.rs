//! The queue's tests: pop order in both forms (sorted buffer and heap) and
//! every insert mode, compaction, `pop_before`, `retain`, the window's
//! search and the choice of mode.

use super::insert::{not_later_than, DEEP_MEAN_PENDING, MEASURED_PUSHES};
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
    /// In every insert mode.
    #[test]
    fn every_pop_is_the_least_pending_key(
        ops in proptest::collection::vec((0u64..40, 0u8..4), 1..400),
        mode in any_mode(),
    ) {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        q.mode = mode;
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
    /// A new run on the same queue: whatever the last one left in the
    /// buffers stays there. With a mode, the run takes it (a switch between
    /// runs); without, the one `clear` chose.
    Clear(Option<Mode>),
    Push(u64),
}

fn any_mode() -> impl proptest::strategy::Strategy<Value = Mode> {
    use proptest::prelude::*;
    prop_oneof![Just(Mode::Measure), Just(Mode::Shallow), Just(Mode::Deep)]
}

fn law_op() -> impl proptest::strategy::Strategy<Value = LawOp> {
    use proptest::prelude::*;
    // Small times, for many ties; pushes about as often as pops, so the
    // queue moves between a few keys, more than `WINDOW` and the heap.
    prop_oneof![
        7 => Just(LawOp::Pop),
        1 => (0u64..200).prop_map(LawOp::PopBefore),
        1 => Just(LawOp::Retain),
        1 => proptest::option::of(any_mode()).prop_map(LawOp::Clear),
        10 => (0u64..200).prop_map(LawOp::Push),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// As [`every_pop_is_the_least_pending_key`], with any times (earlier
    /// than keys popped before too), `pop_before`, `retain`, and new runs
    /// on the same queue after `clear`: a push counts the later keys among
    /// slots below the head, which must never hold a time later than the
    /// new key's, whatever a pop, a compaction or an earlier run left there,
    /// in whichever mode the run before took.
    #[test]
    fn every_pop_is_the_least_pending_key_across_runs_and_any_times(
        ops in proptest::collection::vec(law_op(), 1..800),
        mode in any_mode(),
    ) {
        let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
        q.mode = mode;
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
                LawOp::Clear(mode) => {
                    q.clear();
                    if let Some(mode) = mode {
                        q.mode = mode;
                    }
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
            // What a deep push relies on, checked where it is kept, not only
            // where a wrong count would show: with no key pending, the
            // search reads all `WINDOW` slots below the head.
            proptest::prop_assert!(
                q.in_heap || q.times[q.head - WINDOW..q.head].iter().all(|&t| t == 0),
                "the slots below the head hold time 0"
            );
        }
    }
}

/// The search a push makes in the last `WINDOW` slots counts what a scan
/// counts, for every sorted window of 8 keys over five values (ties, zeros,
/// the new time before, among and after them) and every time around them.
#[test]
fn the_windows_search_counts_the_keys_not_later_as_a_scan_does() {
    // Every non-decreasing window of values from 0 to 4, built as the
    // positions where the value steps up.
    let mut windows = Vec::new();
    for a in 0..=WINDOW {
        for b in a..=WINDOW {
            for c in b..=WINDOW {
                for d in c..=WINDOW {
                    let mut w = [0u64; WINDOW];
                    for (i, v) in w.iter_mut().enumerate() {
                        *v = [a, b, c, d].iter().filter(|&&s| i >= s).count() as u64;
                    }
                    windows.push(w);
                }
            }
        }
    }
    assert_eq!(windows.len(), 495, "every multiset of 8 of 5 values");
    for w in &windows {
        for t in 0..=5u64 {
            let scan = w.iter().filter(|&&k| k <= t).count();
            assert_eq!(not_later_than(w, t), scan, "{w:?} at {t}");
        }
    }
}

/// Runs of `pending` keys each, pushing then popping them all, until the
/// queue leaves [`Mode::Measure`]; returns the mode it took and the runs
/// it counted, and checks that the mode then stays.
fn mode_after_runs_of(pending: u64) -> (Mode, u64) {
    let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
    let mut runs = 0;
    let run = |q: &mut EventQueue<u32, ()>| {
        q.clear();
        for seq in 0..pending {
            // Every other key earlier than the last: not all appended.
            q.push((seq * 7) % 5 + seq, seq, EventKind::Restart { actor: 0 });
        }
        while q.pop_event().is_some() {}
    };
    while q.mode == Mode::Measure {
        run(&mut q);
        runs += 1;
        assert!(runs <= MEASURED_PUSHES, "the queue chooses a mode");
    }
    let chosen = q.mode;
    for _ in 0..3 {
        run(&mut q);
        assert_eq!(q.mode, chosen, "the mode stays once chosen");
    }
    (chosen, runs)
}

/// A queue that runs shallow (payment's, HTTP's, messaging's depths) keeps
/// the loops, one that runs deep (chain's, contention's) takes the search,
/// each after the pushes it counts; a fresh queue counts.
#[test]
fn a_queue_takes_the_search_only_after_it_has_run_deep() {
    assert_eq!(EventQueue::<u32, ()>::with_capacity(4).mode, Mode::Measure);
    // Pushing `pending` keys one after the other, the mean pending at a
    // push is (`pending` - 1) / 2.
    let deepest_shallow = 2 * DEEP_MEAN_PENDING + 1;
    let (mode, runs) = mode_after_runs_of(deepest_shallow);
    assert_eq!(mode, Mode::Shallow, "a mean of exactly {DEEP_MEAN_PENDING}");
    // The run that reaches the count ends the measure, at the next `clear`.
    assert_eq!(runs, MEASURED_PUSHES.div_ceil(deepest_shallow) + 1);
    assert_eq!(mode_after_runs_of(4).0, Mode::Shallow);
    assert_eq!(mode_after_runs_of(deepest_shallow + 2).0, Mode::Deep);
    assert_eq!(mode_after_runs_of(40).0, Mode::Deep);
}

/// A push whose sequence number does not grow breaks what the buffer relies
/// on (a tie goes after the keys pending; a switch to the heap numbers the
/// keys by rank): debug builds stop it at the push. A new run numbers its
/// pushes from 0 again, which passes.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "sequence numbers grow with every push: 4 after Some(4)")]
fn a_push_whose_sequence_number_does_not_grow_fails_in_a_debug_build() {
    let mut q: EventQueue<u32, ()> = EventQueue::with_capacity(4);
    q.mode = Mode::Deep;
    for seq in 0..5 {
        q.push(10 - seq, seq, EventKind::Restart { actor: 0 });
    }
    q.clear();
    q.push(1, 0, EventKind::Restart { actor: 0 });
    q.push(2, 4, EventKind::Restart { actor: 0 });
    q.push(3, 4, EventKind::Restart { actor: 0 });
}
