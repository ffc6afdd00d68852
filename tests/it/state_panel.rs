//! The report's state panel reads every actor's state and storage from the
//! model's own types through serde (`src/render/html/state_tree.rs`): every
//! actor kind of every model, the program roles among them, shows in it,
//! and none is left as "cannot be shown".

use crate::support::{load_path, par_map, root, scenario_files, toml_files_in, tools};
use idemsim::render::html::state::{apply, StateRecorder};
use models::{Msg, NodeTimer, Obs, ACTOR_KINDS};
use sim::{ActorId, Held, Sim, Source, TraceEntry, Tracer};
use std::collections::BTreeSet;

/// The report's recorder, asked after every step of a run's first
/// [`EVERY_STEP`] and after every 64th step later: a long run (a load
/// scenario's hundred clients) would otherwise take minutes, and every
/// actor steps early.
struct Sampled(StateRecorder);

const EVERY_STEP: u64 = 2_000;

impl Tracer<Msg, Obs, NodeTimer> for Sampled {
    const ENABLED: bool = true;
    const SNAPSHOTS: bool = true;
    fn record(&mut self, _: TraceEntry<Msg, Obs, NodeTimer>) {}
    fn snapshot(
        &mut self,
        step: u64,
        actor: ActorId,
        state: Option<&dyn Held>,
        storage: &dyn Held,
    ) {
        if step < EVERY_STEP || step.is_multiple_of(64) {
            self.0.snapshot(step, actor, state, storage);
        }
    }
}

/// The kinds whose actors held something in a run of `path` (seed 0), and
/// the ones whose state could not be shown.
fn shown_in(path: &std::path::Path) -> (BTreeSet<&'static str>, Vec<String>) {
    let mut shown = BTreeSet::new();
    let s = load_path(&path.to_string_lossy(), &[]);
    let mut sampled = Sampled(StateRecorder::default());
    Sim::new(&s.system).run(
        &s.system,
        Source::Seed {
            seed: 0,
            record: false,
        },
        &mut sampled,
    );
    let rec = sampled.0;
    let mut held = vec![(None, None); s.system.nodes.len()];
    for c in &rec.changes {
        let (state, storage) = &mut held[c.actor as usize];
        apply(state, &c.state);
        apply(storage, &c.storage);
    }
    for (node, (state, storage)) in s.system.nodes.iter().zip(&held) {
        let rows = state.iter().chain(storage).flatten().count();
        if rows > 0 {
            shown.insert(node.kind());
        }
    }
    let unshown = rec.unshown.iter();
    let unshown = unshown.map(|(a, why)| format!("{}: actor {a}: {why}", path.display()));
    (shown, unshown.collect())
}

/// [`shown_in`] of every file, a few at once (each its own simulator),
/// added up in the files' order.
fn shown_in_all(
    paths: &[std::path::PathBuf],
    shown: &mut BTreeSet<&'static str>,
    unshown: &mut Vec<String>,
) {
    for (kinds, not) in par_map(paths, 4, |p| shown_in(p)) {
        shown.extend(kinds);
        unshown.extend(not);
    }
}

#[test]
fn every_actor_kind_shows_what_it_holds_in_the_state_panel() {
    let mut shown = BTreeSet::new();
    let mut unshown = Vec::new();
    shown_in_all(&scenario_files(), &mut shown, &mut unshown);
    // The program roles run the examples' Python programs.
    let programs = tools::require("the state panel of the program roles", &[&tools::PYTHON3]);
    if programs {
        let paths = toml_files_in(&root().join("examples/python"));
        shown_in_all(&paths, &mut shown, &mut unshown);
    }
    assert!(unshown.is_empty(), "{unshown:#?}");
    let missing: Vec<&&str> = ACTOR_KINDS
        .iter()
        .filter(|k| !shown.contains(*k))
        .filter(|k| programs || !k.starts_with("Program") && **k != "External")
        .collect();
    assert!(missing.is_empty(), "never shown in the panel: {missing:?}");
}
