//! The proptest laws: determinism, replay, a sweep's run against the traced
//! run, time, delivery, and what a crash keeps and reports.

use super::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn same_seed_gives_an_identical_trace((seed, n, loss, dup, crash, delay) in params()) {
        let m = toy(n, loss, dup, crash, delay);
        let a = traced(&m, Source::Seed { seed, record: false });
        let b = traced(&m, Source::Seed { seed, record: true });
        prop_assert_eq!(a, b);
    }

    #[test]
    fn replay_from_recorded_choices_gives_an_identical_trace((seed, n, loss, dup, crash, delay) in params()) {
        let m = toy(n, loss, dup, crash, delay);
        let mut sim = Sim::new(&m);
        let mut rec = Recorder::default();
        let first = sim.run(&m, Source::Seed { seed, record: true }, &mut rec);
        let record = sim.choices.take_recorded();
        let (again, report) = traced(&m, Source::Replay { record: &record, log_points: false });
        prop_assert_eq!(rec.entries, again);
        prop_assert_eq!(first, report);
    }

    /// A sweep's run applies each command where the handler gives it, a
    /// traced run buffers them until the handler returns: the two agree, also
    /// when a violation falls in the middle of a handler and the commands
    /// after it must not take effect.
    #[test]
    fn a_sweeps_run_is_the_traced_run((seed, n, loss, dup, crash, delay) in params(), at in proptest::option::of(1u64..12)) {
        let mut m = toy(n, loss, dup, crash, delay);
        m.violate_at = at;
        let (_, traced) = traced(&m, Source::Seed { seed, record: false });
        let mut sim = Sim::new(&m);
        let untraced = sim.run(&m, Source::Seed { seed, record: false }, &mut crate::NoTrace);
        prop_assert_eq!(&untraced, &traced);
        prop_assert_eq!(&sim.run_seed(&m, seed), &traced);
    }

    /// A sweep's run on a warm simulator, whose streams got their first
    /// blocks computed ahead from the last run (the swarm mix then takes its
    /// links' rates from the buffer in one pass), is the traced run too.
    #[test]
    fn a_warm_sweeps_run_is_the_traced_run((seed, n, loss, dup, crash, delay) in params(), before in any::<u64>()) {
        let m = toy(n, loss, dup, crash, delay);
        let (_, traced) = traced(&m, Source::Seed { seed, record: false });
        let mut sim = Sim::new(&m);
        sim.run_seed(&m, before);
        sim.run_seed(&m, seed);
        prop_assert_eq!(&sim.run_seed(&m, seed), &traced);
    }

    /// The same in a world with more swarm rates than a stream's buffer
    /// holds (chain's and messaging's have over a hundred): the sweep's run
    /// takes them a buffer at a time, across refills, and is still the
    /// traced run, value for value.
    #[test]
    fn a_warm_sweeps_run_takes_a_larger_swarm_mix_as_the_traced_run(
        (seed, _n, loss, dup, crash, delay) in params(), n in 6u32..9, before in any::<u64>(),
    ) {
        let mut m = toy(n, loss.max(1), dup, crash, delay);
        for l in &mut m.world.links {
            l.duplicate_per_mille = PerMilleRange { lo: 0, hi: dup.max(1) };
        }
        let rates = 2 * m.world.links.len();
        prop_assert!(rates > 2 * crate::chacha::REFILL_MAX, "{rates} rates span refills");
        let (_, traced) = traced(&m, Source::Seed { seed, record: false });
        let mut sim = Sim::new(&m);
        sim.run_seed(&m, before);
        sim.run_seed(&m, seed);
        prop_assert_eq!(&sim.run_seed(&m, seed), &traced);
    }

    #[test]
    fn virtual_time_never_goes_backwards((seed, n, loss, dup, crash, delay) in params()) {
        let (trace, _) = traced(&toy(n, loss, dup, crash, delay), Source::Seed { seed, record: false });
        for w in trace.windows(2) {
            prop_assert!(w[0].time_us <= w[1].time_us, "{:?} then {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn every_delivered_message_was_sent((seed, n, loss, dup, crash, delay) in params()) {
        let (trace, _) = traced(&toy(n, loss, dup, crash, delay), Source::Seed { seed, record: false });
        let mut sent: Vec<(u32, ActorId, ActorId, Token, u8)> = Vec::new();
        let mut delivered: Vec<u32> = Vec::new();
        for e in &trace {
            match e.kind {
                TraceKind::Send { from, to, msg, msg_id, copies, .. } => sent.push((msg_id, from, to, msg, copies)),
                TraceKind::Deliver { from, to, msg, msg_id, duplicate } => {
                    let s = sent.iter().find(|s| s.0 == msg_id);
                    prop_assert!(s.is_some(), "message {} delivered but never sent", msg_id);
                    let s = s.unwrap();
                    prop_assert_eq!((s.1, s.2, s.3), (from, to, msg));
                    // A copy beyond the first exists only if the network duplicated the send.
                    let copies = delivered.iter().filter(|&&d| d == msg_id).count() + 1;
                    prop_assert!(copies <= usize::from(s.4));
                    // The copy may overtake the original (delays reorder), so only its existence is checked.
                    if duplicate {
                        prop_assert_eq!(s.4, 2);
                    }
                    delivered.push(msg_id);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_crash_loses_volatile_state_and_keeps_durable_storage((seed, n, loss, dup, _c, delay) in params()) {
        let (trace, report) = traced(&toy(n, loss, dup, 120, delay), Source::Seed { seed, record: false });
        let mut last: Vec<Counted> = vec![Counted { durable: 0, volatile: 0 }; n as usize];
        let mut crashed = vec![false; n as usize];
        for e in &trace {
            match e.kind {
                TraceKind::Crash { actor } => crashed[actor as usize] = true,
                TraceKind::Observe { actor, obs } => {
                    let prev = last[actor as usize];
                    prop_assert_eq!(obs.durable, prev.durable + 1, "storage survives every crash");
                    if crashed[actor as usize] {
                        prop_assert_eq!(obs.volatile, 1, "state starts afresh after a crash");
                        crashed[actor as usize] = false;
                    } else {
                        prop_assert_eq!(obs.volatile, prev.volatile + 1);
                    }
                    last[actor as usize] = obs;
                }
                _ => {}
            }
        }
        prop_assert_eq!(report.faults.crashed as usize, trace.iter().filter(|e| matches!(e.kind, TraceKind::Crash { .. })).count());
    }

    #[test]
    fn a_crash_reports_what_the_state_it_drops_tells((seed, n, loss, dup, _c, delay) in params()) {
        let (trace, report) = traced(&toy(n, loss, dup, 120, delay), Source::Seed { seed, record: false });
        // Steps since the last start, from what each actor observed.
        let mut steps = vec![0u64; n as usize];
        let mut odd_crash = false;
        for (i, e) in trace.iter().enumerate() {
            match e.kind {
                TraceKind::Observe { actor, obs } => steps[actor as usize] = obs.volatile,
                TraceKind::Crash { actor } => {
                    let odd = steps[actor as usize] % 2 == 1;
                    let next = trace.get(i + 1).map(|n| &n.kind);
                    let said = matches!(next, Some(TraceKind::Reached { actor: a, situation: ODD_CRASH }) if *a == actor);
                    // Reported once per run, at the first such crash.
                    prop_assert_eq!(said, odd && !odd_crash, "crash of {} at step {}", actor, e.step);
                    odd_crash |= odd;
                    steps[actor as usize] = 0;
                }
                TraceKind::Reached { situation: ODD_CRASH, .. } => {
                    prop_assert!(i > 0 && matches!(trace[i - 1].kind, TraceKind::Crash { .. }), "only at a crash");
                }
                _ => {}
            }
        }
        prop_assert_eq!(report.situations.contains(ODD_CRASH), odd_crash);
    }
}

/// A toy world of `n` actors whose links mix fixed and ranged rates (from
/// `shape`, one entry per link), with kinds with faults of their own (from
/// `kinds`, at most one per link) and ranged crash rates on every other actor.
fn mixed_world(
    n: u32,
    shape: &[(u32, u32, u32, u32)],
    kinds: &[(u32, u32, u32, u32)],
    crash: u32,
    delay: u64,
) -> Toy {
    let rate = |how: u32, hi: u32| match how {
        0 => PerMilleRange::fixed(hi / 2),
        1 => PerMilleRange { lo: 0, hi },
        _ => PerMilleRange { lo: hi / 3, hi },
    };
    let mut m = toy(n, 0, 0, 0, delay);
    for (l, &(lk, lhi, dk, dhi)) in m.world.links.iter_mut().zip(shape) {
        l.loss_per_mille = rate(lk, lhi);
        l.duplicate_per_mille = rate(dk, dhi);
    }
    for (a, c) in m.world.crashes.iter_mut().enumerate() {
        c.crash_per_mille = if a % 2 == 0 {
            PerMilleRange { lo: 0, hi: crash }
        } else {
            PerMilleRange::fixed(crash / 2)
        };
    }
    for &(from, to, how, hi) in kinds {
        let (from, to) = (from % n, to % n);
        if m.world
            .kind_faults
            .iter()
            .any(|k| (k.from, k.to) == (from, to))
        {
            continue;
        }
        let own = Some(PerMilleRange { lo: 0, hi });
        m.world.kind_faults.push(crate::world::KindFault {
            from,
            to,
            kind: 0,
            // Each of the four: both rates the link's, one of them, or neither.
            loss_per_mille: if how & 1 == 1 { own } else { None },
            duplicate_per_mille: if how & 2 == 2 { own } else { None },
            delay_us_min: None,
            delay_us_max: (how == 0).then_some(2 * delay * US_PER_MS),
        });
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A sweep's run draws each link's rates at the link's first use (a
    /// send, or a kind with faults of its own that leaves a rate to it), or
    /// at its start for the links earlier runs used, from the swarm stream's
    /// words copied at the run's start. Over many seeds run
    /// one after another on one warm simulator, a traced run among them, with
    /// the stamps far from or just before their wrap, every report (outcome,
    /// events, end time, fault counts, situations) is the traced run's of
    /// the same seed, which draws every link up front.
    #[test]
    fn a_sweeps_runs_draw_each_link_at_first_use_as_the_traced_runs(
        n in 2u32..7,
        shape in proptest::collection::vec((0u32..3, 0u32..400, 0u32..3, 0u32..200), 36),
        kinds in proptest::collection::vec((0u32..6, 0u32..6, 0u32..4, 0u32..300), 0..4),
        crash in 0u32..150,
        delay in 1u64..40,
        seeds in proptest::collection::vec(any::<u64>(), 2..8),
        traced_at in 0usize..8,
        stamps_from in prop_oneof![Just(0u32), Just(u32::MAX - 4)],
    ) {
        let m = mixed_world(n, &shape, &kinds, crash, delay);
        let mut sim = Sim::new(&m);
        // A thread's first run draws one by one; the next ones at first use.
        sim.run_seed(&m, seeds[0]);
        sim.set_mix_runs(stamps_from);
        for (i, &seed) in seeds.iter().enumerate() {
            let (_, expected) = traced(&m, Source::Seed { seed, record: false });
            let report = if i == traced_at {
                sim.run(&m, Source::Seed { seed, record: false }, &mut Recorder::default())
            } else {
                sim.run_seed(&m, seed)
            };
            prop_assert_eq!(&report, &expected, "seed {} ({} of {})", seed, i, seeds.len());
        }
    }
}
