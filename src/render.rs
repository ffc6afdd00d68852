//! Turning traces and summaries into text and JSON for people and programs.

mod chrome;
mod fold;
pub mod formats;
pub mod html;
pub mod items;
pub mod json;
pub mod run;
pub mod units;

pub use json::json_line;

use models::{Msg, NodeTimer, Obs};
use sim::{Outcome, TraceEntry};

/// A trace entry of the built-in models.
pub type Entry = TraceEntry<Msg, Obs, NodeTimer>;

/// A trace entry of a world with message type `M` and timer type `T`: the
/// built-in models' ([`Entry`]) or a user's own.
pub type EntryOf<M, T> = TraceEntry<M, Obs, T>;

/// Virtual time for people: seconds below an hour, clock time above.
pub fn time(us: u64) -> String {
    let s = us / 1_000_000;
    let ms = (us % 1_000_000) / 1000;
    if s >= 86_400 {
        format!(
            "{}d {:02}:{:02}:{:02}.{ms:03}",
            s / 86_400,
            s % 86_400 / 3600,
            s % 3600 / 60,
            s % 60
        )
    } else if s >= 3600 {
        format!("{:02}:{:02}:{:02}.{ms:03}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{s}.{ms:03} s")
    }
}

/// The outcome in one sentence, with the invariant's name first.
pub fn outcome_sentence(o: &Outcome) -> String {
    match o {
        Outcome::Holds => "every invariant holds".into(),
        Outcome::Violation(v) => format!("violation of {}: {}", v.invariant, v.message),
        Outcome::Inconclusive(l) => format!("inconclusive: the run hit its {} limit", l.as_str()),
        Outcome::Panicked(m) => match models::external::protocol_error(m) {
            Some(report) => format!("an external program broke the protocol: {report}"),
            None => format!("a model panicked: {m}"),
        },
    }
}

/// Entries `diff` leaves out: timer settings, and the service's bookkeeping
/// observations, which exist in one design and not the other and would make
/// two runs look parted before their behaviour differs.
pub fn diff_hides(e: &Entry) -> bool {
    match &e.kind {
        sim::TraceKind::TimerSet { .. } => true,
        // A link from an actor to itself carries no message.
        sim::TraceKind::LinkMix { from, to, .. } => from == to,
        sim::TraceKind::Observe { obs, .. } => obs.is_bookkeeping(),
        _ => false,
    }
}

/// One line per trace entry (see [`diff_hides`]), without step numbers or an
/// ending: the shape `diff` puts side by side.
pub fn text(world: &sim::World, entries: &[Entry]) -> String {
    use std::fmt::Write;
    let width = world.actor_names.iter().map(|n| n.len()).max().unwrap_or(6);
    let mut out = String::new();
    let shown: Vec<Entry> = entries.iter().filter(|e| !diff_hides(e)).cloned().collect();
    for it in items::items(world, &shown) {
        let _ = writeln!(
            out,
            "{:>14}  {:<width$}  {}",
            time(it.time_us),
            it.actor,
            items::describe(&it)
        );
    }
    out
}
