//! The event queue's unit tests and laws.

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
                let e = q.pop().expect("pending");
                let EventKind::Restart { actor } = e.kind else {
                    panic!("the payload comes back");
                };
                popped.push((e.time_us, u64::from(actor)));
            }
        }
        while let Some(e) = q.pop() {
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
            let e = q.pop().expect("pending");
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
        let e = q.pop().expect("pending");
        assert_eq!(e.time_us, want.0);
    }
    assert!(q.pop().is_none() && q.peek_time().is_none());
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
        while let Some(e) = q.pop_before(limit) {
            popped.push(e.time_us);
        }
        let expected: Vec<u64> = (0..limit).collect();
        assert_eq!(popped, expected, "n = {n}");
        assert_eq!(q.len() as u64, n - limit);
        assert_eq!(q.peek_time(), Some(limit));
        assert!(q.pop_before(0).is_none() && q.len() as u64 == n - limit);
        assert_eq!(q.pop().map(|e| e.time_us), Some(limit));
    }
    let mut empty: EventQueue<u32, ()> = EventQueue::with_capacity(4);
    assert!(empty.pop_before(TimeUs::MAX).is_none());
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
        q.retain(|_, _, k| matches!(k, EventKind::Restart { actor } if actor % 3 != 0));
        let kept = (0..n).filter(|i| i % 3 != 0).count();
        assert_eq!(q.len(), kept, "n = {n}");
        assert_eq!(q.free.len(), n as usize - kept, "dropped slots are free");
        let mut popped = Vec::new();
        while let Some(e) = q.pop() {
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

/// One step of the law below: a delivery `d` µs from now, a timer set in a
/// slot `d` µs from now, a slot cancelled, a pop of the next live event (a
/// step; none left ends the run, as in the engine), or a crash that voids
/// every slot.
#[derive(Clone, Copy, Debug)]
enum Op {
    Deliver(u64),
    Set(u32, u64),
    Cancel(u32),
    Pop,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    // More pushes than pops: longer runs reach the heap's 64 pending events.
    prop_oneof![
        3 => (0u64..40).prop_map(Op::Deliver),
        3 => (0u32..SLOTS, 0u64..40).prop_map(|(s, d)| Op::Set(s, d)),
        1 => (0u32..SLOTS).prop_map(Op::Cancel),
        2 => Just(Op::Pop),
        1 => Just(Op::Crash),
    ]
}

const SLOTS: u32 = 4;

/// What a run sees of its queue: each live event popped, with the clock a
/// stop at it (the step limit) would report, and the events pending, which
/// the queue limit counts.
#[derive(Debug, PartialEq)]
enum Seen {
    Live {
        time_us: TimeUs,
        seq: u64,
        payload: u32,
        clock_us: TimeUs,
    },
    Pending(usize),
    End(TimeUs),
}

/// The old queue: a timer set again or cancelled stays queued, skipped when
/// it comes up, moving the clock to its time within `max_time_us`.
fn push_new_and_skip_void(ops: &[Op], max_time_us: TimeUs) -> Vec<Seen> {
    let mut q: EventQueue<u32, u32> = EventQueue::with_capacity(4);
    let mut live = [u64::MAX; SLOTS as usize];
    let (mut seq, mut now, mut seen) = (0u64, 0u64, Vec::new());
    for (n, &o) in ops.iter().enumerate() {
        match o {
            Op::Deliver(d) => q.push(now + d, seq, deliver(n)),
            Op::Set(s, d) => {
                live[s as usize] = seq;
                q.push(now + d, seq, timer(s, n));
            }
            Op::Cancel(s) => live[s as usize] = u64::MAX,
            Op::Crash => live = [u64::MAX; SLOTS as usize],
            Op::Pop => {
                let mut popped = false;
                while let Some(e) = q.pop() {
                    if let EventKind::Timer { slot, .. } = e.kind {
                        if live[slot as usize] != e.seq {
                            if e.time_us <= max_time_us {
                                now = e.time_us;
                            }
                            continue;
                        }
                        live[slot as usize] = u64::MAX;
                    }
                    seen.push(Seen::Live {
                        time_us: e.time_us,
                        seq: e.seq,
                        payload: payload(&e.kind),
                        clock_us: now,
                    });
                    now = e.time_us;
                    popped = true;
                    break;
                }
                if !popped {
                    // Dry: the run ends here.
                    seen.push(Seen::End(now));
                    return seen;
                }
            }
        }
        if matches!(o, Op::Set(..) | Op::Deliver(_)) {
            seq += 1;
        }
        seen.push(Seen::Pending(q.len()));
    }
    let live = |seq, slot: u32| live[slot as usize] == seq;
    seen.push(Seen::End(drain(&mut q, live, now, max_time_us)));
    seen
}

/// The clock once the queue has run dry, `live` telling the timers that
/// still fire from the void ones.
fn drain(
    q: &mut EventQueue<u32, u32>,
    live: impl Fn(u64, u32) -> bool,
    mut now: TimeUs,
    max_time_us: TimeUs,
) -> TimeUs {
    while let Some(e) = q.pop() {
        let void = matches!(e.kind, EventKind::Timer { slot, .. } if !live(e.seq, slot));
        if !(void && e.time_us > max_time_us) {
            now = e.time_us;
        }
    }
    now
}

/// The queue as the engine uses it: a timer set again is moved in place
/// (one cancelled stays, void), and the ghosts answer for the clock and
/// the count.
fn rearm_in_place(ops: &[Op], max_time_us: TimeUs) -> Vec<Seen> {
    let mut q: EventQueue<u32, u32> = EventQueue::with_capacity(4);
    let mut slots = [Pending::NONE; SLOTS as usize];
    let (mut seq, mut now, mut seen) = (0u64, 0u64, Vec::new());
    for (n, &o) in ops.iter().enumerate() {
        match o {
            Op::Deliver(d) => q.push(now + d, seq, deliver(n)),
            Op::Set(s, d) => {
                let old = slots[s as usize].key();
                slots[s as usize] = Pending {
                    seq,
                    time_us: now + d,
                };
                match old {
                    None => q.push(now + d, seq, timer(s, n)),
                    Some(old) => q.rearm(old, now + d, seq, timer(s, n), now),
                }
            }
            Op::Cancel(s) => slots[s as usize] = Pending::NONE,
            Op::Crash => slots = [Pending::NONE; SLOTS as usize],
            Op::Pop => {
                let mut popped = false;
                while let Some(e) = q.pop() {
                    if let EventKind::Timer { slot, .. } = e.kind {
                        if slots[slot as usize].seq != e.seq {
                            if e.time_us <= max_time_us {
                                now = e.time_us;
                            }
                            continue;
                        }
                        slots[slot as usize] = Pending::NONE;
                    }
                    let ghosts_us = q.ghosts.clock_before(q.last_key(), max_time_us);
                    seen.push(Seen::Live {
                        time_us: e.time_us,
                        seq: e.seq,
                        payload: payload(&e.kind),
                        clock_us: now.max(ghosts_us),
                    });
                    now = e.time_us;
                    popped = true;
                    break;
                }
                if !popped {
                    let ghosts_us = q
                        .ghosts
                        .clock_before(Some((TimeUs::MAX, u64::MAX)), max_time_us);
                    seen.push(Seen::End(now.max(ghosts_us)));
                    return seen;
                }
            }
        }
        if matches!(o, Op::Set(..) | Op::Deliver(_)) {
            seq += 1;
        }
        seen.push(Seen::Pending(
            q.len() + q.ghosts.pending_after(q.last_key()),
        ));
    }
    let live = |seq, slot: u32| slots[slot as usize].seq == seq;
    let now = drain(&mut q, live, now, max_time_us);
    let ghosts_us = q
        .ghosts
        .clock_before(Some((TimeUs::MAX, u64::MAX)), max_time_us);
    seen.push(Seen::End(now.max(ghosts_us)));
    seen
}

fn deliver(n: usize) -> EventKind<u32, u32> {
    EventKind::Deliver {
        from: 0,
        to: 0,
        msg: n as u32,
        msg_id: 0,
        duplicate: false,
    }
}

fn timer(slot: u32, n: usize) -> EventKind<u32, u32> {
    EventKind::Timer {
        actor: 0,
        timer: n as u32,
        slot,
    }
}

fn payload(kind: &EventKind<u32, u32>) -> u32 {
    match *kind {
        EventKind::Deliver { msg, .. } => msg,
        EventKind::Timer { timer, .. } => 1_000_000 + timer,
        _ => unreachable!("only deliveries and timers are queued here"),
    }
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A queue that moves a timer set again in place pops the same live
    /// events in the same order as one that
    /// queues every setting and skips the void ones, with the same clock
    /// at every event (what a stop at the step or time limit reports), the
    /// same count of pending events (what the queue limit counts) and the
    /// same clock at the end. Up to 300 operations: past 64 pending events
    /// the queue turns into a heap, where both push.
    #[test]
    fn rearming_in_place_pops_as_pushing_new_and_skipping_void(
        ops in proptest::collection::vec(op(), 0..300),
        max_time_us in prop_oneof![Just(TimeUs::MAX), 0u64..400],
    ) {
        prop_assert_eq!(
            rearm_in_place(&ops, max_time_us),
            push_new_and_skip_void(&ops, max_time_us)
        );
    }
}
