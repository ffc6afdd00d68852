//! `idemsim report`: one run as a self-contained HTML page (see
//! `docs/report.md`), and the code `check --html` and `sweep --html` use to
//! write the report of a failing seed.

use idemsim::catalog::{self, UsageError};
use idemsim::minimize::Done;
use idemsim::render::html::run::{self as html_run, RunInput};
use idemsim::render::html::state::StateRecorder;
use idemsim::render::items::{self, Header, ShrinkInfo};
use models::Scenario;
use sim::shrink as shr;
use sim::{NoTrace, Outcome, Record, RunReport, Sim};

/// Most events of a run the report draws. Its page takes about 100 bytes an
/// event and building it about 5 KB an event (every step's state and storage
/// are kept), so a run allowed a billion events (`max_steps`) gets a short
/// page that says so and names the text trace, which keeps both ends of any
/// run in bounded memory.
pub const MAX_REPORT_EVENTS: u64 = 100_000;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
/// `idemsim report`'s arguments.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file; with
    /// --repro, the repro's scenario [default: the built-in it names, or its
    /// file in the repro's folder or below it].
    #[arg(required_unless_present = "repro")]
    scenario: Option<String>,
    /// The seed whose run the report shows.
    #[arg(long, required_unless_present = "repro", conflicts_with = "repro")]
    seed: Option<u64>,
    /// Show the run of a repro file written by `idemsim shrink --out` or `check --repro-out`.
    #[arg(long, value_name = "FILE")]
    repro: Option<String>,
    /// Shrink the seed's run first and show the minimal run, as `idemsim shrink` prints it.
    #[arg(long, conflicts_with = "repro")]
    shrink: bool,
    /// The HTML file to write (`-`: standard output).
    #[arg(short = 'o', long = "out", value_name = "FILE.html")]
    out: PathBuf,
    /// Override a scenario key before validation, e.g. client.key=stable.
    #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "repro")]
    set: Vec<String>,
    /// With --shrink: most candidate reruns shrinking may spend [default: 20000].
    #[arg(long, value_name = "N")]
    shrink_max_runs: Option<u32>,
    /// With --shrink: most wall-clock milliseconds shrinking may take [default: 30000].
    #[arg(long, value_name = "MS")]
    shrink_budget_ms: Option<u64>,
}

impl Args {
    fn shrink_budget(&self) -> Result<idemsim::minimize::Budget, UsageError> {
        idemsim::minimize::Budget::from_flags(self.shrink_max_runs, self.shrink_budget_ms)
    }
}

/// What a report is of, and the commands that reproduce it.
pub struct Subject<'a> {
    /// The scenario the run is of.
    pub scenario: &'a Scenario,
    /// Where the scenario came from: commands name its path when it is a file.
    pub from: &'a catalog::Entry,
    /// The `--set` overrides, for the commands shown.
    pub sets: &'a [String],
    /// The run's decisions.
    pub record: &'a Record,
    /// "seed 2", "shrunk from seed 2", "repro file r.json".
    pub source: String,
    /// The seed, when the run is one.
    pub seed: Option<u64>,
    /// How it was shrunk, when it was.
    pub shrink: Option<ShrinkInfo>,
    /// (what it does, command), the first one shown at the top.
    pub commands: Vec<(String, String)>,
    /// Offer the run as a repro file: for a run no seed command replays
    /// (a shrunk one, one from a repro file).
    pub repro_file: bool,
}

/// Runs the subject's record with snapshots and renders its page; a run of
/// more than [`MAX_REPORT_EVENTS`] events gets a page that says so instead.
pub fn render(subject: &Subject) -> (String, RunReport) {
    let s = subject.scenario;
    let mut sim = Sim::new(&s.system);
    let first = shr::replay_unrecorded(&mut sim, &s.system, subject.record, false, &mut NoTrace);
    if first.events > MAX_REPORT_EVENTS {
        return (too_long_page(subject, &first), first);
    }

    let search = shr::point_of_no_return_within(
        &mut sim,
        &s.system,
        subject.record,
        idemsim::render::run::POINT_OF_NO_RETURN_EVENTS,
    );
    let turn = search.turn.clone();
    let mut rec = StateRecorder::default();
    let report = shr::replay_unrecorded(&mut sim, &s.system, subject.record, false, &mut rec);
    let header = Header {
        scenario: s.name.clone(),
        source: subject.source.clone(),
        events: report.events,
        actors: s.system.world.actor_names.clone(),
        sets: idemsim::minimize::set_words(s),
        shrink: subject.shrink,
    };
    let mut trace = items::trace(
        &s.system.world,
        header,
        &rec.entries,
        &report,
        turn.as_ref(),
    );
    if search.too_long {
        trace
            .end
            .note_unsearched(idemsim::render::run::POINT_OF_NO_RETURN_EVENTS);
    } else if !search.complete() {
        trace
            .end
            .note_bounded_search(search.searched, search.decisions);
    }
    let violated = match &report.outcome {
        Outcome::Violation(v) => Some(v.operation),
        _ => None,
    };
    let repro = idemsim::repro::repro_of(
        s,
        subject.from,
        subject.sets,
        subject.seed,
        subject.record,
        &report.outcome,
    );
    let html = html_run::page(&RunInput {
        trace: &trace,
        entries: &rec.entries,
        changes: &rec.changes,
        violated,
        commands: subject.commands.clone(),
        repro: subject.repro_file.then(|| {
            // A downloaded repro lands anywhere: a scenario file of the
            // user's is named on the command line, where replay looks first.
            let replay = match subject.from.is_built_in() {
                true => "idemsim replay --repro repro.json".to_string(),
                false => format!(
                    "idemsim replay {} --repro repro.json",
                    subject.from.shell_arg()
                ),
            };
            (idemsim::repro::repro_text(&repro), replay)
        }),
        warnings: warning_rows(s, &rec.entries),
    });
    (html, report)
}

/// The page of a run too long to draw: its verdict, and the commands that
/// show it as text or shrink it.
fn too_long_page(subject: &Subject, report: &RunReport) -> String {
    use idemsim::render::html::esc;
    use std::fmt::Write;
    let mut body = format!(
        "<header class=\"top\">\n<h1>{}</h1>\n<p class=\"sub\">{} · {} events</p>\n\
         <p class=\"verdict\"><b>{}</b></p>\n</header>\n<main>\n\
         <p>This run has {} events: the report draws runs of at most {MAX_REPORT_EVENTS}. \
         The text trace shows any run, keeping its first and last {} entries and its effects; \
         a failing run shrinks to a short one.</p>\n<ul>\n",
        esc(&subject.scenario.name),
        esc(&subject.source),
        report.events,
        esc(&idemsim::render::outcome_sentence(&report.outcome)),
        report.events,
        idemsim::render::items::TRACE_END_ITEMS,
    );
    let mut commands = subject.commands.clone();
    // A failing seed's run short enough to shrink gets the command that
    // turns it into a run this report can draw.
    let shrinkable = report.outcome.is_failure()
        && report.events <= idemsim::minimize::MAX_SHRINK_EVENTS
        && subject.shrink.is_none();
    if let (Some(seed), true) = (subject.seed, shrinkable) {
        let sets = sets_text(subject.sets);
        commands.push((
            "shrink it, then draw the shrunk run".into(),
            format!(
                "idemsim report {}{sets} --seed {seed} --shrink -o REPORT.html",
                subject.from.shell_arg()
            ),
        ));
    }
    for (what, cmd) in &commands {
        let _ = writeln!(body, "<li>{}: <code>{}</code></li>", esc(what), esc(cmd));
    }
    body.push_str("</ul>\n</main>");
    idemsim::render::html::page(
        &subject.scenario.name,
        "",
        &body,
        &serde_json::Value::Null,
        "",
    )
}

/// The scenario's design warnings, each with the first step of this run
/// that reported its situation.
fn warning_rows(s: &Scenario, entries: &[idemsim::render::Entry]) -> Vec<html_run::WarningRow> {
    s.design_warnings
        .iter()
        .map(|h| html_run::WarningRow {
            id: h.id,
            text: h.text.clone(),
            situation: h.shown_by.map(models::registry::situation_name),
            reached_step: h.shown_by.and_then(|sit| {
                entries.iter().find_map(|e| match e.kind {
                    sim::TraceKind::Reached { situation, .. } if situation == sit => Some(e.step),
                    _ => None,
                })
            }),
            example: h.example,
        })
        .collect()
}

/// Tells where `check --html` wrote its report, on stdout with the text
/// summary, or on stderr when stdout carries JSON.
pub fn announce(path: Option<&Path>, json: bool) {
    let line = match path {
        Some(p) => format!("report: {}", p.display()),
        None => "report: none written, no seed failed".to_string(),
    };
    if json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// Writes the report of exhaustive mode's shortest counterexample into `dir`.
pub fn write_counterexample(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    record: &Record,
    max_faults: u32,
    dir: &Path,
) -> Result<PathBuf, UsageError> {
    let path = dir.join(format!("{}-exhaustive.html", s.name));
    let sets_text = sets_text(sets);
    let (html, _) = render(&Subject {
        scenario: s,
        from,
        sets,
        record,
        source: format!("shortest counterexample with at most {max_faults} faults"),
        seed: None,
        shrink: None,
        commands: vec![(
            "find it again".into(),
            format!(
                "idemsim check {}{sets_text} --exhaustive --max-faults {max_faults}",
                from.shell_arg()
            ),
        )],
        repro_file: true,
    });
    write(&path, &html)?;
    Ok(path)
}

/// Writes the page to `path`; `-` is standard output, as for other tools.
fn write(path: &Path, html: &str) -> Result<(), UsageError> {
    if path == Path::new("-") {
        idemsim::out!("{html}");
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            UsageError(format!(
                "error: cannot create the directory {}: {e}\nhelp: give a path in a directory you can write to\n",
                dir.display()
            ))
        })?;
    }
    std::fs::write(path, html).map_err(|e| {
        UsageError(format!(
            "error: cannot write {}: {e}\nhelp: give a path in a directory you can write to\n",
            path.display()
        ))
    })
}

fn sets_text(sets: &[String]) -> String {
    sets.iter()
        .map(|x| format!(" --set {}", super::common::shell_word(x)))
        .collect()
}

/// The commands for a seed's run, shrunk or as it ran.
pub fn seed_commands(
    name: &str,
    sets: &[String],
    seed: u64,
    shrunk: bool,
) -> Vec<(String, String)> {
    let sets = sets_text(sets);
    if shrunk {
        vec![
            (
                "print this shrunk run".into(),
                format!("idemsim shrink {name}{sets} --seed {seed}"),
            ),
            (
                "replay the seed as it ran, unshrunk".into(),
                format!("idemsim replay {name}{sets} --seed {seed}"),
            ),
            (
                "write this report".into(),
                format!("idemsim report {name}{sets} --seed {seed} --shrink -o REPORT.html"),
            ),
        ]
    } else {
        vec![
            (
                "replay this run".into(),
                format!("idemsim replay {name}{sets} --seed {seed}"),
            ),
            (
                "write this report".into(),
                format!("idemsim report {name}{sets} --seed {seed} -o REPORT.html"),
            ),
        ]
    }
}

/// The record of a seed's run: the shrunk one if `done` has it.
fn seed_run(s: &Scenario, seed: u64, done: Option<&Done>) -> (Record, String, Option<ShrinkInfo>) {
    match done {
        Some(d) => (
            d.shrunk.record.clone(),
            format!("shrunk from seed {seed}"),
            d.trace.header.shrink,
        ),
        None => {
            let mut sim = Sim::new(&s.system);
            let record = shr::record_seed(&mut sim, &s.system, seed).0;
            (record, format!("seed {seed}"), None)
        }
    }
}

/// Renders the report of a seed's run (the shrunk one if `done` has it).
/// The seed runs once unrecorded first: a run too long to draw is never
/// recorded, since a record takes about 20 bytes an event.
fn render_seed(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    seed: u64,
    done: Option<&Done>,
) -> (String, RunReport) {
    let subject = |record, source, shrink| Subject {
        scenario: s,
        from,
        sets,
        record,
        source,
        seed: Some(seed),
        shrink,
        commands: seed_commands(&from.shell_arg(), sets, seed, done.is_some()),
        repro_file: done.is_some(),
    };
    if done.is_none() {
        let first = idemsim::minimize::unrecorded_run(s, seed);
        if first.events > MAX_REPORT_EVENTS {
            let unrecorded = Record::default();
            let page = too_long_page(&subject(&unrecorded, format!("seed {seed}"), None), &first);
            return (page, first);
        }
    }
    let (record, source, shrink) = seed_run(s, seed, done);
    render(&subject(&record, source, shrink))
}

/// Writes the report of a failing seed into `dir`, shrunk if `done` has the
/// shrunk run, and returns its path: `<scenario>-seed-<N>.html`, or
/// `<prefix>-seed-<N>.html` when a prefix is given.
pub fn write_failure(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    seed: u64,
    done: Option<&Done>,
    dir: &Path,
    prefix: Option<&str>,
) -> Result<PathBuf, UsageError> {
    let (name, html) = render_failure(s, from, sets, seed, done, prefix);
    let path = dir.join(name);
    write(&path, &html)?;
    Ok(path)
}

/// The report [`write_failure`] writes, not written: its file name and its page.
pub fn render_failure(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    seed: u64,
    done: Option<&Done>,
    prefix: Option<&str>,
) -> (String, String) {
    let name = format!("{}-seed-{seed}.html", prefix.unwrap_or(&s.name));
    let (html, _) = render_seed(s, from, sets, seed, done);
    (name, html)
}

/// Runs `idemsim report`: writes the page and returns the run's exit code.
pub fn run(a: Args) -> Result<u8, UsageError> {
    let (html, report) = match &a.repro {
        Some(path) => {
            let l = idemsim::repro::load_repro(path, a.scenario.as_deref(), "report")?;
            idemsim::signals::install_for(&l.scenario);
            let r = &l.repro;
            let given = a.scenario.as_deref().map_or(String::new(), |g| {
                format!(" {}", super::common::shell_word(g))
            });
            render(&Subject {
                scenario: &l.scenario,
                from: &l.entry,
                sets: &r.sets,
                record: &l.record,
                source: format!("repro file {path}"),
                seed: r.seed,
                shrink: None,
                commands: vec![
                    (
                        "replay this run".into(),
                        format!(
                            "idemsim replay{given} --repro {}",
                            super::common::shell_word(path)
                        ),
                    ),
                    (
                        "write this report".into(),
                        format!(
                            "idemsim report{given} --repro {} -o REPORT.html",
                            super::common::shell_word(path)
                        ),
                    ),
                ],
                repro_file: true,
            })
        }
        None => seed_page(&a)?,
    };
    if let Some(code) = idemsim::signals::broke_off("no page written") {
        return Ok(code);
    }
    write(&a.out, &html)?;
    let to = if a.out == Path::new("-") {
        "the page to stdout".to_string()
    } else {
        a.out.display().to_string()
    };
    let kb = html.len().div_ceil(1024);
    eprintln!("wrote {to} ({kb} KB): open it in a browser");
    Ok(super::common::exit_code(&report.outcome))
}

/// The page of one seed's run, shrunk first under `--shrink`.
fn seed_page(a: &Args) -> Result<(String, RunReport), UsageError> {
    let overrides = catalog::parse_overrides(&a.set)?;
    let name = a
        .scenario
        .as_deref()
        .expect("clap requires it without --repro");
    let s = catalog::load(name, &overrides)?;
    idemsim::signals::install_for(&s);
    let from = catalog::locate(name)?;
    let seed = a.seed.expect("clap requires it without --repro");
    let done = if a.shrink {
        match idemsim::minimize::shrink_seed_or_long(&s, seed, a.shrink_budget()?) {
            idemsim::minimize::SeedShrink::Done(d) => Some(*d),
            idemsim::minimize::SeedShrink::Holds => {
                eprintln!(
                    "{}: seed {seed} does not fail, so there is nothing to shrink: the report shows the run as it is",
                    s.name
                );
                None
            }
            idemsim::minimize::SeedShrink::TooLong(r) => {
                eprintln!("{}", idemsim::minimize::too_long_note(&s, seed, &r));
                None
            }
        }
    } else {
        None
    };
    Ok(render_seed(&s, &from, &a.set, seed, done.as_ref()))
}
