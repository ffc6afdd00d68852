//! The effect ledger of one run, per business operation: what was asked,
//! what landed in the outside world, and what the client was told. It is
//! read off the observations the actors reported (the ledger's own
//! vocabulary), never off a service's records.

use super::super::Entry;
use models::core::Ending;
use models::Obs;
use serde::Serialize;
use sim::TraceKind;

/// One observation about an operation, at the step that reported it.
#[derive(Clone, Debug, Serialize)]
pub struct Mention {
    /// The step that reported it.
    pub step: u64,
    /// What it says.
    pub text: String,
}

/// One row of the ledger: the two facts that meet at the end of a run.
#[derive(Clone, Debug, Serialize)]
pub struct OpRow {
    /// The operation's name.
    pub operation: String,
    /// The intent (payload asked) or the committed change that owes an event.
    pub asked: Vec<Mention>,
    /// Effects and writes that landed.
    pub landed: Vec<Mention>,
    /// Attempt outcomes, "told done", the ending, dead letters.
    pub told: Vec<Mention>,
    /// "no effect", "one effect, as asked", "2 effects", …
    pub landed_summary: String,
    /// What the client finally knows: "told done", "still waiting", …
    pub known: String,
    /// The operation the run's violation is about.
    pub violated: bool,
}

struct Building {
    key: u64,
    row: OpRow,
    asked_payload: Option<u32>,
    effects: Vec<u32>,
    /// The versions rolled-out actors named for the effects, in order
    /// (`Obs::EffectBy`); empty without rollouts.
    versions: Vec<u8>,
    writes: u32,
    /// Reversals (refunds) that took its effects back.
    reversals: u32,
    /// What it asks was seen holding already (a DELETE that found nothing).
    held: bool,
    ending: Option<Ending>,
    told_done: bool,
    dead_lettered: bool,
    event: bool,
}

impl Building {
    /// An operation's row before any of its observations.
    fn new(operation: String, key: u64, violated: bool) -> Self {
        Building {
            key,
            row: OpRow {
                operation,
                asked: Vec::new(),
                landed: Vec::new(),
                told: Vec::new(),
                landed_summary: String::new(),
                known: String::new(),
                violated,
            },
            asked_payload: None,
            effects: Vec::new(),
            versions: Vec::new(),
            writes: 0,
            reversals: 0,
            held: false,
            ending: None,
            told_done: false,
            dead_lettered: false,
            event: false,
        }
    }
}

/// The ledger of a run's entries; `violated` is the violation's operation key.
pub fn ledger(entries: &[Entry], violated: Option<u64>) -> Vec<OpRow> {
    let mut rows: Vec<Building> = Vec::new();
    for e in entries {
        let TraceKind::Observe { obs, .. } = &e.kind else {
            continue;
        };
        let Some(op) = obs.op() else { continue };
        let part = match obs {
            Obs::Intent { .. } | Obs::Committed { .. } => 0,
            Obs::Effect { .. }
            | Obs::EffectBy { .. }
            | Obs::ValueWritten { .. }
            | Obs::StateHeld { .. }
            | Obs::Reversal { .. } => 1,
            Obs::Handled { .. }
            | Obs::Attempt { .. }
            | Obs::ToldDone { .. }
            | Obs::Ended { .. }
            | Obs::DeadLettered { .. }
            | Obs::Superseded { .. } => 2,
            _ => continue,
        };
        let key = op.key();
        let i = match rows.iter().position(|r| r.key == key) {
            Some(i) => i,
            None => {
                rows.push(Building::new(op.to_string(), key, Some(key) == violated));
                rows.len() - 1
            }
        };
        let b = &mut rows[i];
        match *obs {
            Obs::Intent { payload, .. } => b.asked_payload = Some(payload),
            Obs::Committed { .. } => b.event = true,
            Obs::Effect { payload, .. } => b.effects.push(payload),
            Obs::EffectBy { version, .. } => b.versions.push(version),
            Obs::ValueWritten { .. } => b.writes += 1,
            Obs::Reversal { .. } => b.reversals += 1,
            Obs::StateHeld { .. } => b.held = true,
            Obs::ToldDone { .. } => b.told_done = true,
            Obs::Ended { ending, .. } => b.ending = Some(ending),
            Obs::DeadLettered { .. } => b.dead_lettered = true,
            _ => {}
        }
        let m = Mention {
            step: e.step,
            text: obs.to_string(),
        };
        match part {
            0 => b.row.asked.push(m),
            1 => b.row.landed.push(m),
            _ => b.row.told.push(m),
        }
    }
    rows.into_iter()
        .map(|mut b| {
            b.row.landed_summary = landed(&b);
            b.row.known = known(&b);
            b.row
        })
        .collect()
}

/// What landed, and, under rollouts, which versions' requests made it.
fn landed(b: &Building) -> String {
    let what = landed_count(b);
    if b.versions.is_empty() {
        return what;
    }
    let by: Vec<String> = b.versions.iter().map(|v| format!("v{v}")).collect();
    format!("{what}, from {}", by.join(", "))
}

fn landed_count(b: &Building) -> String {
    let n = b.effects.len() as u32 + b.writes;
    // Only a compensation reverses: every other run's rows read as before.
    if b.reversals > 0 {
        let s = |k: u32| if k == 1 { "" } else { "s" };
        return format!("{n} effect{}, {} taken back", s(n), b.reversals);
    }
    match (n, b.effects.first(), b.asked_payload) {
        (0, _, _) if b.held => "no effect; what it asks already held".into(),
        (0, _, _) => "no effect".into(),
        (1, Some(p), Some(asked)) if *p != asked => "one effect, of another payload".into(),
        (1, _, _) => "one effect".into(),
        (n, _, _) => format!("{n} effects"),
    }
}

fn known(b: &Building) -> String {
    match b.ending {
        Some(Ending::Done) => "told done".into(),
        Some(Ending::Failed) => "told failed (dead letter)".into(),
        Some(Ending::Unknown) => "unknown (dead letter, for a person)".into(),
        Some(Ending::Abandoned) => "given up silently".into(),
        Some(Ending::Cancelled) => "told cancelled (taken back)".into(),
        None if b.told_done => "told done".into(),
        None if b.dead_lettered => "dead-lettered (visible)".into(),
        None if b.event => "owed: no client waits".into(),
        None => "still waiting".into(),
    }
}
