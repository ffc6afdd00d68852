//! The vocabulary `tests/invariants/` writes its cases in: operations,
//! observations, and a fresh ledger that judges a sequence of them. A module of
//! `invariants` alone: no other test writes observations by hand.

use models::core::invariants;
use models::core::{Ending, Key, Ledger, Obs, Op};
use models::messaging::{ENTITY, EVENT};
use models::payment::{CLAIM, TRANSFER};
use sim::{Oracle, TimeUs, Violation, US_PER_S};

pub fn claim(id: u32) -> Op {
    Op::new(&CLAIM, id)
}

pub fn event(id: u32) -> Op {
    Op::new(&EVENT, id)
}

pub fn entity(id: u32) -> Op {
    Op::new(&ENTITY, id)
}

pub fn key(op: Op) -> Key {
    Key::Op { op, n: 1 }
}

/// Feeds `steps` (time in seconds, actor, observation) to a fresh ledger and
/// finishes the run; returns the invariant that fired, if any.
pub fn judge(steps: &[(u64, u32, Obs)]) -> Option<&'static str> {
    violation(steps).map(|v| v.invariant)
}

/// The violation `judge` finds, with the operation it names.
pub fn violation(steps: &[(u64, u32, Obs)]) -> Option<Violation> {
    let mut l = Ledger::default();
    l.reset();
    let mut now: TimeUs = 0;
    for &(s, actor, obs) in steps {
        now = s * US_PER_S;
        if let Some(v) = l.observe(now, actor, &obs) {
            return Some(v);
        }
    }
    l.finish(now)
}

#[track_caller]
pub fn fires(name: &str, steps: &[(u64, u32, Obs)]) {
    assert!(invariants::by_name(name).is_some(), "no invariant {name}");
    assert_eq!(judge(steps), Some(name), "{steps:#?}");
}

#[track_caller]
pub fn silent(steps: &[(u64, u32, Obs)]) {
    assert_eq!(judge(steps), None, "{steps:#?}");
}

pub fn intent(op: Op, payload: u32) -> Obs {
    Obs::Intent {
        op,
        payload,
        window_ms: 0,
    }
}

pub fn transfer(op: Op, payload: u32) -> Obs {
    Obs::Effect {
        site: &TRANSFER,
        op,
        payload,
    }
}

pub fn told(op: Op, payload: u32) -> Obs {
    Obs::ToldDone { op, payload }
}

pub fn ended(op: Op, ending: Ending) -> Obs {
    Obs::Ended { op, ending }
}

/// A claim paid once and its client told so: the correct run every case varies.
pub fn paid_once(op: Op) -> Vec<(u64, u32, Obs)> {
    vec![
        (0, 0, intent(op, 1200)),
        (1, 2, transfer(op, 1200)),
        (2, 0, told(op, 1200)),
        (2, 0, ended(op, Ending::Done)),
    ]
}

/// Judged against the end of the fault phase, which the ledger is told:
/// here the faults stop at 100 s and the service promises to recover within
/// 30 s of that.
pub fn judge_load(steps: &[(u64, u32, Obs)]) -> Option<&'static str> {
    let mut l = Ledger::healing_from(100 * US_PER_S);
    l.reset();
    let mut now: TimeUs = 0;
    for &(s, actor, obs) in steps {
        now = s * US_PER_S;
        if let Some(v) = l.observe(now, actor, &obs) {
            return Some(v.invariant);
        }
    }
    l.finish(now).map(|v| v.invariant)
}

/// `steps` as a run with a broker has them: every event a broker accepted
/// right before its first effect or set-value write, since a consumer only gets an event the
/// broker stored. Cases about other invariants need not spell it out.
pub fn published(steps: &[(u64, u32, Obs)]) -> Vec<(u64, u32, Obs)> {
    let mut out: Vec<(u64, u32, Obs)> = Vec::with_capacity(steps.len() * 2);
    for &(s, actor, obs) in steps {
        if let Obs::Effect { op, .. } | Obs::ValueWritten { op, .. } = obs {
            let seen = out.iter().any(|&(_, _, o)| o == Obs::Accepted { op });
            if op.space.published && !seen {
                out.push((s, 1, Obs::Accepted { op }));
            }
        }
        out.push((s, actor, obs));
    }
    out
}
