//! `idemsim advise`: the smallest sets of settings that make a failing
//! design hold, ranked by cost (`idemsim::advise`). Thin: flags, printing,
//! the exit code.

use idemsim::advise::{self, Budget};
use idemsim::catalog::{self, UsageError};

#[derive(clap::Args)]
/// The arguments of `idemsim advise`.
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    scenario: String,
    /// A change to the scenario before advice, as `check --set` takes it (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seeds 0..N for the design and every candidate [default: the scenario's run.runs].
    #[arg(long)]
    runs: Option<u64>,
    #[command(flatten)]
    seeds: super::common::SeedFlags,
    /// The most designs judged, single changes included; the rest is reported as not tried.
    #[arg(long, default_value_t = Budget::default().max_candidates)]
    max_candidates: usize,
    /// The most changes in one set, 1 to 3.
    #[arg(long, default_value_t = Budget::default().max_changes)]
    max_changes: usize,
    /// The exhaustive run of each candidate that holds on the seeds: at most this many faults per schedule.
    #[arg(long, default_value_t = Budget::default().max_faults)]
    max_faults: u32,
    /// The exhaustive run's most schedules.
    #[arg(long, default_value_t = Budget::default().max_schedules)]
    max_schedules: u64,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// JSON Lines on stdout: `advise`, one `advise_fix` per fix, then `advise_summary`.
    #[arg(long)]
    json: bool,
    /// Also write the cost front as an HTML page, in the sweep report's look.
    #[arg(long, value_name = "FILE.html")]
    html: Option<std::path::PathBuf>,
}

/// Runs `idemsim advise`: 0 when a fix was found (or nothing needs one), 1
/// when no set of settings within the budget makes the design hold, 2 for
/// bad input, 130 when Ctrl-C cut it short.
pub fn run(a: Args) -> Result<u8, UsageError> {
    let jobs = super::common::jobs(a.jobs)?;
    super::common::runs("--runs", a.runs)?;
    if !(1..=3).contains(&a.max_changes) {
        return Err(UsageError(
            "error: --max-changes must be 1, 2 or 3\nhelp: leave it out for sets of up to 3 changes\n".into(),
        ));
    }
    if a.max_candidates == 0 || a.max_schedules == 0 {
        return Err(UsageError(
            "error: --max-candidates and --max-schedules must be at least 1\nhelp: leave them out for the defaults\n".into(),
        ));
    }
    // Checked before anything runs: a search that cannot write its page would run for nothing.
    if let Some(path) = &a.html {
        super::common::output_file("--html", path, true)?;
    }
    let base = catalog::parse_overrides(&a.set)?;
    let entry = catalog::locate(&a.scenario)?;
    let budget = Budget {
        runs: a.runs,
        seeds: a.seeds.range(),
        max_changes: a.max_changes,
        max_candidates: a.max_candidates,
        max_faults: a.max_faults,
        max_schedules: a.max_schedules,
        ..Budget::default()
    };
    idemsim::progress::install_ctrl_c();
    let advice = advise::advise(&entry, &base, budget, jobs, &idemsim::progress::STOP)?;
    if a.json {
        idemsim::out!("{}", advise::render::json_lines(&advice));
    } else {
        idemsim::out!("{}", advise::render::text(&advice));
    }
    if let Some(path) = &a.html {
        std::fs::write(path, advise::render::html(&advice)).map_err(|e| {
            UsageError(format!(
                "error: cannot write {}: {e}\nhelp: check that its folder exists and is writable\n",
                path.display()
            ))
        })?;
        idemsim::eout!("wrote {}\n", path.display());
    }
    Ok(if advice.interrupted {
        idemsim::progress::INTERRUPTED
    } else if advice.fails() && advice.fixes.is_empty() {
        idemsim::exit::VIOLATION
    } else {
        idemsim::exit::HOLDS
    })
}
