//! Traces of any model's runs, built-in or a user's own: replay a record (or
//! a seed) with an item recorder, find the point of no return, and build the
//! [`Trace`] every format in [`formats`](super::formats) prints.
//!
//! What a model needs for this: its actors observe the effect ledger's
//! [`Obs`], and its world message implements [`WorldMessage`] (an empty
//! `impl` will do). Its messages need not be `Copy`.

use super::items::{self, Header, ItemRecorder, ShrinkInfo, Trace};
use models::core::wire::WorldMessage;
use models::Obs;
use sim::shrink as shr;
use sim::shrink::Signature;
use sim::{Actor, Model, MsgOf, Outcome, Record, RunReport, Sim, Source, TimerOf};

/// The trace type of model `M`.
pub type TraceOf<M> = Trace<MsgOf<M>, TimerOf<M>>;

/// A model whose runs can be traced: its actors report to the effect ledger
/// ([`Obs`]) and its world message implements [`WorldMessage`]. Every such
/// [`Model`] is one; the trait only names the bounds once.
pub trait LedgerModel: Model<Node: Actor<Obs = Obs, Msg: WorldMessage>> {}

impl<M: Model<Node: Actor<Obs = Obs, Msg: WorldMessage>>> LedgerModel for M {}

/// Events the search for the point of no return may replay in all. Each
/// decision costs up to four replays of the whole run, so a long run is only
/// searched from its end: a 100,000-event run gets its last few decisions
/// tried, a catalog scenario every one of them.
pub const POINT_OF_NO_RETURN_EVENTS: u64 = 2_000_000;

/// Replays `record` on `model` and builds its whole trace: the items, the
/// ending with its one-sentence explanation and, for a violation, the step
/// after which it could no longer be avoided. `name` and `source` go into the
/// header ("shrunk from seed 2"); `shrink` adds the shrink's figures to it.
///
/// ```
/// # use idemsim::render::{formats, run};
/// let s = idemsim::catalog::load("payment-stable-key", &[]).unwrap();
/// let record = run::record_of_seed(&s.system, 0).unwrap();
/// let (trace, report) = run::trace_of_record(&s.system, "payment-stable-key", &record, "seed 0".into(), None);
/// assert!(!report.outcome.is_failure());
/// assert!(formats::text(&trace).starts_with("# payment-stable-key · seed 0 · "));
/// assert!(formats::mermaid(&trace).starts_with("sequenceDiagram"));
/// ```
pub fn trace_of_record<M: LedgerModel>(
    model: &M,
    name: &str,
    record: &Record,
    source: String,
    shrink: Option<ShrinkInfo>,
) -> (TraceOf<M>, RunReport) {
    let run = |sim: &mut Sim<M>, rec: &mut ItemRecorder<MsgOf<M>, TimerOf<M>>| {
        shr::replay_unrecorded(sim, model, record, false, rec)
    };
    trace_with(model, name, source, shrink, run, || Some(record.clone()))
}

/// The trace of one run: `run` makes it into an [`ItemRecorder`] (items
/// straight from the run, so a long trace never exists twice), and
/// `record` gives its decisions for the point-of-no-return search, asked
/// only for a failing run the search's budget covers (`None`: the run makes
/// more decisions than a record holds, and is not searched).
fn trace_with<M: LedgerModel>(
    model: &M,
    name: &str,
    source: String,
    shrink: Option<ShrinkInfo>,
    run: impl FnOnce(&mut Sim<M>, &mut ItemRecorder<MsgOf<M>, TimerOf<M>>) -> RunReport,
    record: impl FnOnce() -> Option<Record>,
) -> (TraceOf<M>, RunReport) {
    let mut sim = Sim::new(model);
    let mut rec = ItemRecorder::new(model.world());
    let report = run(&mut sim, &mut rec);
    let unsearched = |too_long| shr::TurnSearch {
        turn: None,
        decisions: 0,
        searched: 0,
        too_long,
    };
    // A run an external program broke has no point of no return to find, and
    // each replay of it would wait for the program again.
    let search = if is_protocol_error(&report.outcome) || Signature::of(&report.outcome).is_none() {
        unsearched(false)
    } else if report.events > POINT_OF_NO_RETURN_EVENTS {
        unsearched(true)
    } else {
        match record() {
            Some(r) => {
                shr::point_of_no_return_within(&mut sim, model, &r, POINT_OF_NO_RETURN_EVENTS)
            }
            None => unsearched(true),
        }
    };
    let turn = search.turn.clone();
    let header = Header {
        scenario: name.to_string(),
        source,
        events: report.events,
        actors: model.world().actor_names.clone(),
        sets: Vec::new(),
        shrink,
    };
    let mut t = items::trace_of_items(header, rec.finish(), &report, turn.as_ref());
    if search.too_long {
        t.end.note_unsearched(POINT_OF_NO_RETURN_EVENTS);
    } else if !search.complete() {
        t.end.note_bounded_search(search.searched, search.decisions);
    }
    (t, report)
}

/// The decisions seed `seed` of `model` makes: replaying them is the same
/// run. A run making more than a record holds ([`sim::MAX_RECORDED_VALUES`])
/// has none to give: one cut there would replay another run.
pub fn record_of_seed<M: Model>(model: &M, seed: u64) -> Result<Record, TooLongToRecord> {
    let mut sim = Sim::new(model);
    let (record, report) = sim::shrink::record_seed(&mut sim, model, seed);
    if sim.choices.recorded_overflowed() {
        return Err(TooLongToRecord {
            seed,
            events: report.events,
        });
    }
    Ok(record)
}

/// Seed `seed`'s run made more decisions than one run's record holds
/// ([`sim::MAX_RECORDED_VALUES`]); `events` is how long it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLongToRecord {
    /// The seed.
    pub seed: u64,
    /// Events of its run.
    pub events: u64,
}

impl std::fmt::Display for TooLongToRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {}'s run ({} events) makes more decisions than a record holds ({} values), and one cut there would replay another run; the seed itself reproduces it",
            self.seed,
            self.events,
            sim::MAX_RECORDED_VALUES
        )
    }
}

impl std::error::Error for TooLongToRecord {}

/// The trace of seed `seed` of `model` (see [`trace_of_record`]), run from
/// the seed itself: a record takes about 20 bytes an event and `max_steps`
/// allows a billion, so only a failing run short enough for the search is
/// recorded (once more, the same run).
pub fn trace_of_seed<M: LedgerModel>(model: &M, name: &str, seed: u64) -> (TraceOf<M>, RunReport) {
    let run = |sim: &mut Sim<M>, rec: &mut ItemRecorder<MsgOf<M>, TimerOf<M>>| {
        let source = Source::Seed {
            seed,
            record: false,
        };
        sim::explore::guarded(|| sim.run(model, source, rec)).unwrap_or_else(RunReport::panicked)
    };
    trace_with(model, name, format!("seed {seed}"), None, run, || {
        record_of_seed(model, seed).ok()
    })
}

/// The figures a trace's header shows for a shrunk run.
pub fn shrink_info(shrunk: &shr::Shrunk, stopped: Option<&'static str>) -> ShrinkInfo {
    ShrinkInfo {
        original_events: shrunk.original_report.events,
        shrunk_events: shrunk.report.events,
        original_decisions: shrunk.original.nonzero_count(),
        shrunk_decisions: shrunk.record.nonzero_count(),
        runs: shrunk.runs,
        complete: shrunk.complete,
        stopped,
    }
}

/// Whether a run ended in an external program's protocol error: such a run
/// has no point of no return to search for. Asked of `models` directly, so
/// that rendering stays below `external`, which formats with it.
fn is_protocol_error(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Panicked(m) if models::external::protocol_error(m).is_some())
}
