//! `idemsim shrink`: cut a failing seed down to a locally minimal run, print
//! it in any trace format and write it as a repro file. Also the shared code
//! `check` and `replay` use for shrinking, traces and repro files.

use crate::render::formats::{self, Format};
use crate::render::items::{ShrinkInfo, Trace};
use crate::scenarios::{self, UsageError};
use models::Scenario;
use sim::shrink::{self as shr, ShrinkLimits, Shrunk};
use sim::{Outcome, Record, RunReport, SeedRange, Sim};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
/// The arguments of `idemsim shrink`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    #[arg(required_unless_present = "all")]
    scenario: Option<String>,
    /// The failing seed [default: the lowest failing seed of the scenario's runs].
    #[arg(long)]
    seed: Option<u64>,
    /// Trace format of the shrunk run.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the shrunk run as a repro file (JSON) for `idemsim replay --repro`.
    #[arg(long, value_name = "FILE")]
    out: Option<String>,
    /// Override a scenario key before validation, e.g. client.key=stable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Shrink the lowest failing seed of every scenario that expects a violation.
    #[arg(long, conflicts_with_all = ["scenario", "seed", "out"])]
    all: bool,
    /// Print a table of events before and after shrinking and the time it took,
    /// instead of traces (the numbers in docs/shrinking.md come from `--all --stats`).
    #[arg(long)]
    stats: bool,
    /// Most candidate reruns shrinking may spend [default: 20000].
    #[arg(long, value_name = "N")]
    shrink_max_runs: Option<u32>,
    /// Most wall-clock milliseconds shrinking may take [default: 30000].
    #[arg(long, value_name = "MS")]
    shrink_budget_ms: Option<u64>,
}

/// Seeds searched for a failure when none is given.
pub const SEARCH_CAP: u64 = 100_000;

/// What shrinking may spend: reruns (deterministic) and wall time (enforced
/// here, since `sim` reads no clock; a result cut by it depends on the
/// machine's speed, and the trace's header says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Candidate reruns, at most.
    pub max_runs: u32,
    /// Wall-clock time, at most.
    pub time: Duration,
}

impl Budget {
    /// Reruns when `--shrink-max-runs` is not given.
    pub const DEFAULT_RUNS: u32 = 20_000;
    /// Milliseconds when `--shrink-budget-ms` is not given.
    pub const DEFAULT_MS: u64 = 30_000;

    /// From `--shrink-max-runs` and `--shrink-budget-ms`, each defaulted.
    pub fn from_flags(max_runs: Option<u32>, ms: Option<u64>) -> Result<Budget, UsageError> {
        if max_runs == Some(0) || ms == Some(0) {
            return Err(UsageError(
                "error: --shrink-max-runs and --shrink-budget-ms must be at least 1\nhelp: to skip shrinking, give --no-shrink\n".into(),
            ));
        }
        Ok(Budget {
            max_runs: max_runs.unwrap_or(Budget::DEFAULT_RUNS),
            time: Duration::from_millis(ms.unwrap_or(Budget::DEFAULT_MS)),
        })
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_runs: Budget::DEFAULT_RUNS,
            time: Duration::from_millis(Budget::DEFAULT_MS),
        }
    }
}

/// Why a shrink stopped before it was locally minimal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The rerun budget ran out.
    Runs,
    /// The time budget ran out.
    Time,
    /// Ctrl-C.
    Interrupted,
}

impl Cut {
    /// Words for the trace's header and the JSON `run` record.
    pub fn as_str(self) -> &'static str {
        match self {
            Cut::Runs => "rerun budget hit (--shrink-max-runs)",
            Cut::Time => "time budget hit (--shrink-budget-ms)",
            Cut::Interrupted => "interrupted (Ctrl-C)",
        }
    }
}

/// A shrunk failure with everything needed to show it.
pub struct Done {
    /// The seed it came from; for a failure a search found, the schedule's
    /// index in the search (`searched`).
    pub seed: u64,
    /// Found by a coverage-guided search, not by a seed.
    pub searched: bool,
    /// The shrink: the original and the shrunk record and their runs.
    pub shrunk: Shrunk,
    /// The shrunk run's trace.
    pub trace: Trace,
    /// Lines of the original run's text trace, for before/after figures.
    pub original_lines: usize,
    /// How long shrinking took.
    pub elapsed: Duration,
    /// What stopped it early, if anything did.
    pub cut: Option<Cut>,
}

/// Runs `record` with a trace and builds the full trace, with its point of no
/// return (see [`render::run::trace_of_record`](crate::render::run::trace_of_record)).
pub fn traced(
    s: &Scenario,
    record: &Record,
    source: String,
    shrink: Option<ShrinkInfo>,
) -> (Trace, RunReport) {
    crate::render::run::trace_of_record(&s.system, &s.name, record, source, shrink)
}

pub use crate::render::run::POINT_OF_NO_RETURN_EVENTS;

/// Lines of the text trace between its header and its last line.
pub fn body_lines(t: &Trace) -> usize {
    formats::text(t).lines().count().saturating_sub(2)
}

/// Wall-clock time, only to report how long shrinking took: it never reaches
/// a run, which sees virtual time alone.
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

/// After this long, a shrink says on stderr what it is doing, and again every
/// [`REPORT_EVERY`], so it never runs silently.
const QUIET_FOR: Duration = Duration::from_secs(2);
const REPORT_EVERY: Duration = Duration::from_secs(5);

/// Shrinks `seed` of `s` within `budget`; `None` if the seed does not fail.
pub fn shrink_seed(s: &Scenario, seed: u64, budget: Budget) -> Option<Done> {
    let what = format!("seed {seed}");
    shrink_within(s, seed, false, &what, budget, |sim, limits, should_stop| {
        shr::shrink_seed_with(sim, &s.system, seed, limits, should_stop)
    })
}

/// Shrinks the failing `record` of `s` (found by a search, not by a seed),
/// named `what` in messages and in the trace ("coverage-guided schedule #7");
/// `index` stands in for the seed in [`Done::seed`].
pub fn shrink_record(
    s: &Scenario,
    record: &Record,
    index: u64,
    what: &str,
    budget: Budget,
) -> Option<Done> {
    shrink_within(s, index, true, what, budget, |sim, limits, should_stop| {
        Some(shr::shrink_with(
            sim,
            &s.system,
            record,
            limits,
            should_stop,
        ))
    })
}

type ShrinkFn<'f> = dyn FnMut(&shr::ShrinkProgress) -> bool + 'f;

/// Runs `shrink` within `budget`: progress on stderr when it takes long, a
/// note when it is cut short, and the shrunk and the original trace.
fn shrink_within(
    s: &Scenario,
    seed: u64,
    searched: bool,
    what: &str,
    budget: Budget,
    shrink: impl FnOnce(&mut Sim<models::System>, ShrinkLimits, &mut ShrinkFn<'_>) -> Option<Shrunk>,
) -> Option<Done> {
    let started = stopwatch();
    let mut sim = Sim::new(&s.system);
    let mut cut = None;
    let mut reported = Duration::ZERO;
    let mut should_stop = |p: &shr::ShrinkProgress| {
        let elapsed = started.elapsed();
        if crate::progress::STOP.load(std::sync::atomic::Ordering::Relaxed) {
            cut = Some(Cut::Interrupted);
        } else if elapsed >= budget.time {
            cut = Some(Cut::Time);
        }
        if elapsed >= QUIET_FOR && (reported.is_zero() || elapsed >= reported + REPORT_EVERY) {
            reported = elapsed;
            crate::eoutln!(
                "shrinking {} {what}: {} reruns, {} events, {} decisions so far ({:.0} s of {:.0} s, {} reruns allowed; see --shrink-budget-ms, --shrink-max-runs)",
                s.name,
                p.runs,
                p.events,
                p.nonzero,
                elapsed.as_secs_f64(),
                budget.time.as_secs_f64(),
                budget.max_runs
            );
        }
        cut.is_some()
    };
    let limits = ShrinkLimits {
        max_runs: budget.max_runs,
    };
    let shrunk = shrink(&mut sim, limits, &mut should_stop)?;
    let cut = match shrunk.stopped {
        None => None,
        Some(shr::Stopped::MaxRuns) => Some(Cut::Runs),
        Some(shr::Stopped::Caller) => cut,
    };
    if let Some(c) = cut {
        crate::eoutln!(
            "shrinking {} {what} stopped after {} reruns: {}; the trace is the smallest failing run found, not a minimal one",
            s.name,
            shrunk.runs,
            c.as_str()
        );
    }
    let info = crate::render::run::shrink_info(&shrunk, cut.map(Cut::as_str));
    let (trace, _) = traced(s, &shrunk.record, format!("shrunk from {what}"), Some(info));
    let elapsed = started.elapsed();
    // Counted like the shrunk trace: the lines `replay --format text` prints.
    let (original, _) = traced(s, &shrunk.original, what.to_string(), None);
    let original_lines = body_lines(&original);
    Some(Done {
        seed,
        searched,
        shrunk,
        trace,
        original_lines,
        elapsed,
        cut,
    })
}

/// The lowest failing seed among the first `cap` seeds of the scenario's runs.
pub fn lowest_failing_seed(s: &Scenario, cap: u64) -> Option<u64> {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: s.runs.min(cap),
    };
    // Stops at the first failing chunk of seeds: a scenario that fails on
    // seed 0 is not run over all its seeds first.
    let sum = sim::find_failure(&s.system, seeds, 1, &stop);
    sum.first_failure.map(|f| f.seed)
}

// ------------------------------------------------------------ repro files

pub use crate::repro::{hash_hex, Repro};

/// A repro of `record`; `from` is where the scenario was found, so a file
/// scenario is replayed from its path, not by a name another file may have.
pub fn repro_of(
    s: &Scenario,
    from: &scenarios::Entry,
    sets: &[String],
    seed: Option<u64>,
    record: &Record,
    outcome: &Outcome,
) -> Repro {
    let mut r = Repro::new(&s.name, s.hash, &s.system.world, seed, record, outcome);
    if !from.is_built_in() {
        r.file = from.arg();
    }
    r.sets = sets.to_vec();
    r
}

/// What lets a user replay a run found without a seed (a search's failure,
/// an enumerated schedule): its decisions as a `record:` line, and the repro
/// file `--repro-out` asks for, or how to ask for one. Returns the decisions.
pub fn record_lines(
    s: &Scenario,
    from: &scenarios::Entry,
    sets: &[String],
    record: &Record,
    outcome: &Outcome,
    repro_out: Option<&str>,
    lines: &mut Vec<String>,
) -> Result<serde_json::Value, UsageError> {
    let json = crate::cmd::common::record_choices(&s.system.world, record);
    lines.push(format!("record: {json}"));
    match repro_out {
        Some(path) => {
            let explicit = write_repro(path, &repro_of(s, from, sets, None, record, outcome))?;
            lines.push(format!(
                "repro: {}",
                replay_command(path, explicit.as_deref())
            ));
        }
        None => lines.push(
            "repro: add --repro-out FILE to write it, then idemsim replay --repro FILE".to_string(),
        ),
    }
    Ok(json)
}

/// A repro file's text, as `write_repro` writes it.
pub fn repro_text(r: &Repro) -> String {
    r.to_json()
}

/// Writes `r` to `path`, its scenario file named as `replay --repro` finds
/// it (see `placed`). Returns the scenario argument a replay must be given,
/// when the repro cannot name its scenario itself.
pub fn write_repro(path: &str, r: &Repro) -> Result<Option<String>, UsageError> {
    let (r, explicit) = placed(r.clone(), path);
    r.write(std::path::Path::new(path)).map_err(|e| {
        UsageError(format!(
            "error: cannot write repro file {path}: {e}\nhelp: check that its folder exists and is writable\n"
        ))
    })?;
    Ok(explicit)
}

/// Says on stderr how to replay a repro file that cannot name its scenario.
fn note_explicit(path: &str, explicit: Option<&str>) {
    if let Some(arg) = explicit {
        crate::eoutln!(
            "note: the scenario file {arg} is not in the folder of {path} or below it, so the repro cannot name it: replay it with `{}`",
            replay_command(path, explicit)
        );
    }
}

/// The command that replays the repro file `path`, as [`write_repro`] left it.
pub fn replay_command(path: &str, explicit: Option<&str>) -> String {
    match explicit {
        Some(arg) => format!("idemsim replay {arg} --repro {path}"),
        None => format!("idemsim replay --repro {path}"),
    }
}

/// The folder a repro file at `path` is in (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `r` as the file `path` carries it: a scenario file in the repro's folder
/// or below it is named relative to that folder, which is all `replay
/// --repro` opens; one elsewhere whose text is a built-in's (same name, same
/// hash) is named as that built-in. Otherwise `file` keeps the path it was
/// given by, for messages, and the second value is that path: a replay must
/// name the scenario itself.
fn placed(mut r: Repro, path: &str) -> (Repro, Option<String>) {
    if r.file.is_empty() {
        return (r, None);
    }
    let canonical = std::fs::canonicalize(&r.file).ok();
    let below = canonical.as_ref().and_then(|file| {
        let dir = std::fs::canonicalize(folder_of(Path::new(path))).ok()?;
        let rel = file.strip_prefix(&dir).ok()?;
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        Some(parts?.join("/"))
    });
    if let Some(rel) = below.filter(|rel| !rel.is_empty()) {
        r.file = rel;
        return (r, None);
    }
    let same_built_in = scenarios::built_in(&r.scenario).is_some_and(|e| {
        scenarios::parse_overrides(&r.sets)
            .and_then(|o| scenarios::load_entry(&e, &o))
            .is_ok_and(|b| hash_hex(b.hash) == r.scenario_hash)
    });
    if same_built_in {
        r.file.clear();
        return (r, None);
    }
    // Kept for messages, absolute: a relative path here would be read from
    // the repro's folder and could name another file there.
    let arg = r.file.clone();
    if let Some(abs) = canonical.and_then(|c| c.to_str().map(str::to_string)) {
        r.file = abs;
    }
    (r, Some(arg))
}

/// `text` as a word of a shell command shown in a fix, or `or` when it is
/// not plainly one (a repro's names may hold anything).
fn shell_word(text: &str, or: &str) -> String {
    let plain = !text.is_empty()
        && text.len() <= 200
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+=,:@[]".contains(c));
    if plain {
        text.to_string()
    } else {
        or.to_string()
    }
}

/// An error of the overrides a file recorded (`error: --set …`), told as the file's.
fn recorded_sets(file: &str, e: UsageError) -> UsageError {
    match e.0.strip_prefix("error: --set ") {
        Some(rest) => UsageError(format!("error: {file}: its recorded --set {rest}")),
        None => e,
    }
}

/// Where a repro's scenario is, if the repro may name it: a name from the
/// catalog, or a file in the repro's folder or below it. Anything else (an
/// absolute path, one that leaves the folder, a device) is refused: a repro
/// is data that may come from anywhere, and it must not make idemsim open
/// and quote whatever file it names. The user can always name the scenario.
fn repro_scenario(path: &str, r: &Repro, cmd: &str) -> Result<scenarios::Entry, UsageError> {
    let named = if r.file.is_empty() {
        &r.scenario
    } else {
        &r.file
    };
    let shown = named.escape_debug().to_string();
    let suggest = shell_word(named, "SCENARIO");
    let out = if cmd == "report" {
        " -o REPORT.html"
    } else {
        ""
    };
    let refuse = |why: String| {
        UsageError(format!(
            "error: {path}: {why}\nhelp: give the scenario on the command line (a name from `idemsim list` or a path to its .toml file): `idemsim {cmd} {suggest} --repro {path}{out}`\n"
        ))
    };
    if r.file.is_empty() {
        if r.scenario.is_empty() || scenarios::is_path_arg(&r.scenario) {
            return Err(refuse(format!(
                "the repro's scenario `{shown}` is not a scenario name; a repro names a built-in scenario, or its file in `file`"
            )));
        }
        return scenarios::locate_name(&r.scenario).map_err(|_| {
            refuse(format!(
                "the repro's scenario `{shown}` is neither built in nor in a --scenarios folder"
            ))
        });
    }
    inside(folder_of(Path::new(path)), &r.file, "the repro's folder").map_err(refuse)
}

/// The scenario file `rel` (as a file of data recorded it) in `dir` or below
/// it; anything else is refused with the reason, `dir` named as `place`.
/// Data may come from anywhere, and it must not make idemsim open and quote
/// whatever file it names.
pub fn inside(dir: &Path, rel: &str, place: &str) -> Result<scenarios::Entry, String> {
    let shown = rel.escape_debug().to_string();
    let plain = Path::new(rel).components().all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    if !plain {
        return Err(format!(
            "the scenario file `{shown}` is not a path inside {place}: idemsim opens a recorded scenario file only there or below it"
        ));
    }
    let file = dir.join(rel);
    let within = match (std::fs::canonicalize(&file), std::fs::canonicalize(dir)) {
        (Ok(f), Ok(d)) => f.starts_with(&d) && f.is_file(),
        _ => {
            return Err(format!(
                "the scenario file `{shown}` is not there ({})",
                file.display()
            ))
        }
    };
    if !within {
        return Err(format!(
            "the scenario file `{shown}` leads out of {place} or is not a regular file: idemsim opens a recorded scenario file only there or below it"
        ));
    }
    Ok(scenarios::file_entry(&file))
}

/// A repro file read and its scenario loaded.
pub struct LoadedRepro {
    /// The file's contents.
    pub repro: Repro,
    /// Where the scenario was found.
    pub entry: scenarios::Entry,
    /// The scenario, with the repro's overrides.
    pub scenario: Scenario,
    /// The decisions to replay.
    pub record: Record,
}

/// Reads a repro file and loads its scenario: the one given on the command
/// line, else the one the repro names (see `repro_scenario`); refuses one
/// whose scenario text has changed since. `cmd` (`replay`, `report`) is the
/// command the fixes name.
pub fn load_repro(
    path: &str,
    scenario: Option<&str>,
    cmd: &str,
) -> Result<LoadedRepro, UsageError> {
    let r = Repro::read(std::path::Path::new(path))?;
    let ours = crate::repro::VERSION;
    if !r.same_version() {
        return Err(UsageError(format!(
            "error: {path}: the repro was written by idemsim {}, and this is idemsim {ours}\n\
             help: decisions are recorded per version and may mean another run in this one; \
             replay it with idemsim {}, or make a new repro with `idemsim shrink {}{} --seed {} --out {path}`\n",
            r.idemsim.escape_debug(),
            shell_word(&r.idemsim, "VERSION"),
            shell_word(if r.file.is_empty() { &r.scenario } else { &r.file }, "SCENARIO"),
            r.sets.iter().map(|x| format!(" --set {}", shell_word(x, "KEY=VALUE"))).collect::<String>(),
            r.seed.map_or("S".to_string(), |x| x.to_string()),
        )));
    }
    let overrides = scenarios::parse_overrides(&r.sets).map_err(|e| recorded_sets(path, e))?;
    // An explicit scenario, else the one the repro may name.
    let entry = match scenario {
        Some(given) => scenarios::locate(given)?,
        None => repro_scenario(path, &r, cmd)?,
    };
    let s = scenarios::load_entry(&entry, &overrides).map_err(|e| recorded_sets(path, e))?;
    if hash_hex(s.hash) != r.scenario_hash {
        return Err(UsageError(format!(
            "error: {path}: the repro was recorded against scenario `{}` with hash {}, but {} now hashes to {}\n\
             help: the scenario changed since, so these choices would make a different run; \
             restore that version of the scenario, or make a new repro with `idemsim shrink {}{} --seed {} --out {path}`\n",
            r.scenario.escape_debug(),
            r.scenario_hash.escape_debug(),
            s.file,
            hash_hex(s.hash),
            shell_word(&entry.arg(), "SCENARIO"),
            r.sets.iter().map(|x| format!(" --set {}", shell_word(x, "KEY=VALUE"))).collect::<String>(),
            r.seed.map_or("S".to_string(), |x| x.to_string()),
        )));
    }
    let record = r.record(&s.system.world).map_err(|e| {
        UsageError(format!(
            "error: {path}: {e}\nhelp: streams are named swarm, link:A->B, crash:A, actor:A after the scenario's actors\n"
        ))
    })?;
    Ok(LoadedRepro {
        repro: r,
        entry,
        scenario: s,
        record,
    })
}

// ------------------------------------------------------------ the command

/// Runs `idemsim shrink`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let budget = Budget::from_flags(a.shrink_max_runs, a.shrink_budget_ms)?;
    crate::progress::install_ctrl_c();
    if a.all {
        return run_all(&a, budget);
    }
    let name = a
        .scenario
        .as_deref()
        .expect("clap requires it without --all");
    let overrides = scenarios::parse_overrides(&a.set)?;
    let entry = scenarios::locate(name)?;
    let s = scenarios::load_entry(&entry, &overrides)?;
    let coverage = s.strategy == models::scenario::Strategy::Coverage;
    let done = match a.seed {
        Some(seed) => shrink_seed(&s, seed, budget),
        // A scenario searched coverage-guided: shrink what its search finds.
        None if coverage => shrink_searched(&s, budget),
        None => lowest_failing_seed(&s, SEARCH_CAP).and_then(|seed| shrink_seed(&s, seed, budget)),
    };
    let Some(done) = done else {
        let what = match a.seed {
            Some(seed) => format!("seed {seed} does not fail"),
            None if coverage => format!(
                "its coverage-guided search of {} schedules finds no failure",
                s.runs
            ),
            None => format!("no seed of {} fails", s.runs.min(SEARCH_CAP)),
        };
        crate::outln!("{}: {what}, nothing to shrink", s.name);
        return Ok(crate::exit::HOLDS);
    };
    let seed = done.seed;
    let seed = (!done.searched).then_some(seed);
    let seed_text = match seed {
        Some(seed) => format!("seed {seed}"),
        None => format!("coverage-guided schedule #{}", done.seed + 1),
    };
    crate::external::check_outcome(&s, &seed_text, &done.shrunk.original_report.outcome)?;
    if let Some(path) = &a.out {
        let r = repro_of(
            &s,
            &entry,
            &a.set,
            seed,
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        let explicit = write_repro(path, &r)?;
        crate::eoutln!(
            "wrote {path}: replay it with `{}`",
            replay_command(path, explicit.as_deref())
        );
    }
    if a.stats {
        crate::out!("{}", stats_header());
        crate::outln!("{}", stats_row(&s, &done));
    } else {
        crate::out!("{}", formats::render(a.format, &done.trace));
    }
    Ok(super::common::exit_code(&done.shrunk.report.outcome))
}

fn stats_header() -> String {
    "| scenario | seed | invariant | events before | events after | trace lines before | trace lines after | nonzero decisions before | after | reruns | time |\n\
     |---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        .to_string()
}

fn stats_row(s: &Scenario, d: &Done) -> String {
    let inv = match &d.shrunk.report.outcome {
        Outcome::Violation(v) => v.invariant.to_string(),
        other => crate::render::outcome_sentence(other),
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} ms{} |",
        s.name,
        if d.searched {
            format!("#{}", d.seed + 1)
        } else {
            d.seed.to_string()
        },
        inv,
        d.shrunk.original_report.events,
        d.shrunk.report.events,
        d.original_lines,
        body_lines(&d.trace),
        d.shrunk.original.nonzero_count(),
        d.shrunk.record.nonzero_count(),
        d.shrunk.runs,
        d.elapsed.as_secs_f64() * 1000.0,
        match d.cut {
            None if d.shrunk.complete => "",
            None => " (bound hit)",
            Some(Cut::Runs) => " (rerun budget hit)",
            Some(Cut::Time) => " (time budget hit)",
            Some(Cut::Interrupted) => " (interrupted)",
        }
    )
}

fn run_all(a: &Args, budget: Budget) -> Result<u8, UsageError> {
    let overrides = scenarios::parse_overrides(&a.set)?;
    if a.stats {
        crate::out!("{}", stats_header());
    }
    for entry in scenarios::catalog()? {
        let s = scenarios::load_entry(&entry, &overrides)?;
        if s.expected_verdict() != Some(models::scenario::Verdict::Violation) {
            continue;
        }
        if s.strategy == models::scenario::Strategy::Coverage {
            // No seed fails within the budget: shrink what the scenario's own search finds.
            let Some(done) = shrink_searched(&s, budget) else {
                crate::eoutln!(
                    "{}: expects a violation, but its coverage-guided search of {} schedules finds none",
                    s.name,
                    s.runs
                );
                continue;
            };
            print_all(a, &s, &done);
            continue;
        }
        let Some(seed) = lowest_failing_seed(&s, SEARCH_CAP) else {
            crate::eoutln!(
                "{}: expects a violation, but no seed of {} fails",
                s.name,
                s.runs
            );
            continue;
        };
        let Some(done) = shrink_seed(&s, seed, budget) else {
            return Err(not_failing(&s, seed));
        };
        print_all(a, &s, &done);
    }
    Ok(crate::exit::HOLDS)
}

/// One scenario's part of `shrink --all`: a row of `--stats`, or the trace.
fn print_all(a: &Args, s: &Scenario, done: &Done) {
    if a.stats {
        crate::outln!("{}", stats_row(s, done));
    } else {
        crate::out!("{}", formats::render(a.format, &done.trace));
        crate::outln!();
    }
}

/// The coverage-guided search of `s` over its `run.runs` schedules, and its
/// failure shrunk; `None` if the search finds none.
pub fn shrink_searched(s: &Scenario, budget: Budget) -> Option<Done> {
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: 0,
        end: s.runs,
    };
    let r = s.coverage(seeds, &stop);
    let (record, f) = (r.failing.as_ref()?, r.summary.first_failure.as_ref()?);
    let what = format!("coverage-guided schedule #{}", f.seed + 1);
    shrink_record(s, record, f.seed, &what, budget)
}

// ------------------------------------------------------------ for `check`

/// A seed that failed in a sweep does not fail when rerun: the scenario
/// changed in between, or a model is not deterministic (a bug).
fn not_failing(s: &Scenario, seed: u64) -> UsageError {
    UsageError(format!(
        "error: seed {seed} of {} failed in the sweep but not when run again\nhelp: the scenario file changed since the sweep ran (rerun it); if it did not, a model is not deterministic, which is a bug: please report it with this command line\n",
        s.file
    ))
}

/// What `check` does after its sweep: shrink the lowest failing seed (unless
/// told not to), write the repro file if asked, and return the shrunk failure.
pub fn for_check(
    s: &Scenario,
    from: &scenarios::Entry,
    sets: &[String],
    failing_seed: Option<u64>,
    no_shrink: bool,
    repro_out: Option<&str>,
    budget: Budget,
) -> Result<Option<Done>, UsageError> {
    let Some(seed) = failing_seed else {
        return Ok(None);
    };
    if no_shrink {
        if let Some(path) = repro_out {
            // Unshrunk: the seed's own decisions, still exact.
            let mut sim = Sim::new(&s.system);
            let (record, report) = shr::record_seed(&mut sim, &s.system, seed);
            let explicit = write_repro(
                path,
                &repro_of(s, from, sets, Some(seed), &record, &report.outcome),
            )?;
            note_explicit(path, explicit.as_deref());
        }
        return Ok(None);
    }
    let Some(done) = shrink_seed(s, seed, budget) else {
        return Err(not_failing(s, seed));
    };
    if let Some(path) = repro_out {
        let r = repro_of(
            s,
            from,
            sets,
            Some(seed),
            &done.shrunk.record,
            &done.shrunk.report.outcome,
        );
        let explicit = write_repro(path, &r)?;
        note_explicit(path, explicit.as_deref());
    }
    Ok(Some(done))
}
