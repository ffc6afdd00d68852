//! Single runs that guard the laws against vacuity and check the engine's
//! rules: crashes happen, a panic is a failure of its seed, partitions and
//! the fault phase cut where they say, snapshots show what a crash drops.

use super::*;

#[test]
fn crashes_do_happen_in_the_crash_law() {
    // Guards the law above against vacuity: with these parameters crashes fire.
    let m = toy(3, 0, 0, 120, 5);
    let crashes: u64 = (0..50)
        .map(|seed| {
            traced(
                &m,
                Source::Seed {
                    seed,
                    record: false,
                },
            )
            .1
            .faults
            .crashed
        })
        .sum();
    assert!(crashes > 10, "only {crashes} crashes in 50 seeds");
}

#[test]
fn crashes_after_odd_and_after_even_steps_both_happen_in_the_report_law() {
    // Guards the law above against vacuity: some runs report the situation
    // at a crash, others crash and report nothing.
    let m = toy(3, 0, 0, 120, 5);
    let (mut said, mut silent) = (0, 0);
    for seed in 0..50 {
        let (_, r) = traced(
            &m,
            Source::Seed {
                seed,
                record: false,
            },
        );
        if r.situations.contains(ODD_CRASH) {
            said += 1;
        } else if r.faults.crashed > 0 {
            silent += 1;
        }
    }
    assert!(
        said > 5 && silent > 0,
        "{said} runs reported, {silent} crashed silently"
    );
}

#[test]
fn hitting_the_step_limit_is_inconclusive_not_a_hang() {
    let mut m = toy(3, 0, 0, 0, 5);
    m.world.limits.max_steps = 10;
    let (_, report) = traced(
        &m,
        Source::Seed {
            seed: 1,
            record: false,
        },
    );
    assert_eq!(
        report.outcome,
        crate::Outcome::Inconclusive(crate::Limit::Steps)
    );
}

#[test]
fn healing_restarts_every_crashed_actor_and_the_run_ends_quiet() {
    let m = toy(3, 100, 50, 150, 5);
    for seed in 0..30 {
        let (trace, report) = traced(
            &m,
            Source::Seed {
                seed,
                record: false,
            },
        );
        assert_eq!(report.outcome, crate::Outcome::Holds);
        let heal = trace
            .iter()
            .position(|e| matches!(e.kind, TraceKind::HealingStarts))
            .expect("every run reaches the healing phase");
        // No faults after healing starts.
        assert!(!trace[heal..].iter().any(|e| matches!(
            e.kind,
            TraceKind::Crash { .. }
                | TraceKind::Drop {
                    reason: crate::DropReason::Lost | crate::DropReason::Partitioned,
                    ..
                }
        )));
    }
}

/// `fault_phase_us` says until when faults happen: with 0 there is no fault
/// phase, so what the actors send as they start (at time 0) is not lost.
#[test]
fn a_zero_fault_phase_has_no_faults_not_even_at_the_starts() {
    let mut m = toy(2, 0, 0, 0, 5);
    for l in &mut m.world.links {
        l.loss_per_mille = PerMilleRange::fixed(1000);
    }
    m.world.fault_phase_us = 0;
    for (sweep, seed) in [(false, 1), (true, 2)] {
        let report = if sweep {
            Sim::new(&m).run_seed(&m, seed)
        } else {
            traced(
                &m,
                Source::Seed {
                    seed,
                    record: false,
                },
            )
            .1
        };
        assert_eq!(report.outcome, crate::Outcome::Holds);
        assert_eq!(
            report.faults,
            crate::FaultCounts::default(),
            "sweep={sweep}"
        );
    }
    let (trace, _) = traced(
        &m,
        Source::Seed {
            seed: 1,
            record: false,
        },
    );
    let heal = trace
        .iter()
        .position(|e| matches!(e.kind, TraceKind::HealingStarts))
        .expect("the run heals");
    let first_start = trace
        .iter()
        .position(|e| matches!(e.kind, TraceKind::Start { .. }))
        .expect("actors start");
    assert!(heal < first_start, "healing starts before the actors do");
}

#[test]
fn a_panic_in_a_model_is_a_failure_of_its_seed_not_a_crash_of_the_sweep() {
    let mut m = toy(2, 0, 300, 0, 30);
    for n in &mut m.nodes {
        n.buggy = true;
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let sum = crate::explore(
        &m,
        crate::SeedRange { start: 0, end: 200 },
        2,
        &stop,
        &|_| {},
    );
    let mut sim = Sim::new(&m);
    let f = sum.first_failure.clone().expect("a failing seed");
    let below: Vec<bool> = (0..=f.seed)
        .map(|seed| crate::run_guarded(&mut sim, &m, seed).outcome.is_failure())
        .collect();
    // A panic leaves the simulator fit for the next seed: the seeds after it
    // run as on a simulator that never saw a panic.
    let later = f.seed + 1..f.seed + 40;
    let after: Vec<_> = later
        .clone()
        .map(|seed| crate::run_guarded(&mut sim, &m, seed))
        .collect();
    let fresh: Vec<_> = later
        .map(|seed| crate::run_guarded(&mut Sim::new(&m), &m, seed))
        .collect();
    std::panic::set_hook(hook);
    assert_eq!(after, fresh);
    assert_eq!(sum.tally.schedules, 200, "the sweep finished every seed");
    assert!(
        sum.tally.panics > 0 && sum.tally.panics < 200,
        "{} panics",
        sum.tally.panics
    );
    assert!(matches!(&f.outcome, crate::Outcome::Panicked(m) if m.contains("model bug")));

    // It is the lowest seed that panics, whichever thread found it.
    assert_eq!(below.iter().position(|&b| b), Some(f.seed as usize));
}

#[test]
fn partitions_cut_one_way_or_both_ways_only_inside_their_window() {
    let window_us = 100 * US_PER_MS;
    for both_ways in [false, true] {
        let mut m = toy(2, 0, 0, 0, 5);
        // Cuts a1 -> a0, and with both_ways a0 -> a1 too.
        m.world.partitions.push(crate::Partition {
            a: 1,
            b: 0,
            both_ways,
            start_us: 0,
            end_us: window_us,
        });
        let (trace, report) = traced(
            &m,
            Source::Seed {
                seed: 3,
                record: false,
            },
        );
        assert!(report.faults.partitioned > 0, "both_ways={both_ways}");
        let mut forward_in_window = 0;
        for e in &trace {
            let inside = e.time_us < window_us;
            match e.kind {
                TraceKind::Send { from, to, .. } if inside && from != to => {
                    assert!(!both_ways && from == 0, "{e:?} crossed the partition");
                    forward_in_window += 1;
                }
                TraceKind::Drop {
                    from,
                    reason: crate::DropReason::Partitioned,
                    ..
                } => {
                    assert!(inside, "{e:?} dropped outside the window");
                    assert!(
                        both_ways || from == 1,
                        "{e:?} dropped in the open direction"
                    );
                }
                _ => {}
            }
        }
        assert_eq!(forward_in_window > 0, !both_ways);
    }
}

/// A tracer that asks for snapshots and keeps them.
#[derive(Default)]
struct Snapshots {
    taken: Vec<(u64, ActorId, Option<String>, String)>,
}

impl crate::Tracer<Token, Counted, Tick> for Snapshots {
    const ENABLED: bool = true;
    const SNAPSHOTS: bool = true;
    fn record(&mut self, _: TraceEntry<Token, Counted, Tick>) {}
    fn snapshot(
        &mut self,
        step: u64,
        actor: ActorId,
        state: Option<&dyn crate::Held>,
        storage: &dyn crate::Held,
    ) {
        self.taken.push((
            step,
            actor,
            state.map(|s| format!("{s:?}")),
            format!("{storage:?}"),
        ));
    }
}

#[test]
fn snapshots_show_volatile_state_gone_after_a_crash_and_storage_kept() {
    let m = toy(3, 0, 0, 120, 5);
    let mut saw_crash = false;
    for seed in 0..20 {
        let mut sim = Sim::new(&m);
        let mut snaps = Snapshots::default();
        let plain = sim.run_seed(&m, seed);
        let r = sim.run(
            &m,
            Source::Seed {
                seed,
                record: false,
            },
            &mut snaps,
        );
        assert_eq!(r, plain, "asking for snapshots changes nothing");
        for (i, (_, actor, state, storage)) in snaps.taken.iter().enumerate() {
            if state.is_none() {
                saw_crash = true;
                // The storage a crash leaves is the storage the actor had.
                let before = snaps.taken[..i].iter().rev().find(|t| t.1 == *actor);
                if let Some(b) = before {
                    assert_eq!(&b.3, storage);
                }
            }
        }
    }
    assert!(saw_crash, "crashes happen with these parameters");
}

#[test]
fn a_sweeps_run_leaves_the_links_it_never_uses_undrawn() {
    // Guards the law of links drawn at first use against vacuity: a sweep's
    // run on a simulator that has seen no link drawn at first use (its one
    // run before drew every link one by one) uses some of the toy's 25
    // links and leaves others undrawn, while a traced run draws every one
    // up front.
    let m = toy(5, 300, 100, 0, 5);
    let (mut behind, mut drawn) = (0, 0);
    let warm = |seed| {
        let mut sim = Sim::new(&m);
        sim.run_seed(&m, 0);
        sim.run_seed(&m, seed);
        sim
    };
    for seed in 1..20 {
        let sim = warm(seed);
        behind += sim.links_behind();
        drawn += 25 - sim.links_behind();
    }
    assert!(
        behind > 19 && drawn > 19,
        "{behind} left behind, {drawn} drawn"
    );
    let mut sim = warm(1);
    let seed = Source::Seed {
        seed: 20,
        record: false,
    };
    sim.run(&m, seed, &mut Recorder::default());
    assert_eq!(sim.links_behind(), 0);
}

#[test]
fn a_sweeps_run_draws_at_its_start_every_link_an_earlier_run_used() {
    // The links a warm simulator's earlier sweep's runs drew at their first
    // use are drawn at the next run's start, whether it uses them or not:
    // the law of links drawn at first use then covers both ways a link is
    // drawn (it fails when they are drawn before the run's words are taken).
    let m = toy(5, 300, 100, 0, 5);
    let mut sim = Sim::new(&m);
    sim.run_seed(&m, 0);
    let mut used: Vec<usize> = Vec::new();
    let mut first = None;
    for seed in 1..30 {
        sim.run_seed(&m, seed);
        // What a run draws: the links earlier runs used, and its own.
        let drawn = sim.links_drawn();
        assert!(
            used.iter().all(|l| drawn.contains(l)),
            "seed {seed}: {used:?} not all in {drawn:?}"
        );
        first.get_or_insert(drawn.len());
        used = drawn;
    }
    // Later runs used links the first one did not, and kept them.
    let first = first.unwrap();
    assert!(used.len() > first, "{first} links, then {}", used.len());
}

#[test]
fn a_kind_with_faults_of_its_own_rules_every_send_on_a_link_drawn_per_seed() {
    // The link from actor 0 to 1 draws its loss per seed; its one kind loses
    // every message, so actor 0's three tokens are lost at once and the run
    // is the one of a link that loses everything, in a traced run (every
    // link drawn up front) and in warm sweep's runs (the link drawn at its
    // first send) alike.
    let mut m = toy(2, 300, 0, 0, 5);
    m.world.kind_faults.push(crate::world::KindFault {
        from: 0,
        to: 1,
        kind: 0,
        loss_per_mille: Some(PerMilleRange::fixed(1000)),
        duplicate_per_mille: None,
        delay_us_min: None,
        delay_us_max: None,
    });
    let mut cut = toy(2, 300, 0, 0, 5);
    cut.world.links[1].loss_per_mille = PerMilleRange::fixed(1000);
    let mut sim = Sim::new(&m);
    for seed in 0..8 {
        let source = || Source::Seed {
            seed,
            record: false,
        };
        let (_, expected) = traced(&cut, source());
        assert_eq!(expected.faults.lost, 3);
        assert_eq!(traced(&m, source()).1, expected, "traced, seed {seed}");
        assert_eq!(sim.run_seed(&m, seed), expected, "sweep's, seed {seed}");
    }
}
