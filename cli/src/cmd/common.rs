//! Helpers several subcommands share: seed and shard arguments, `--jobs`,
//! exit codes, shell quoting, a record's repro `choices` and the wall clock.
//! They live apart from any one command so that the commands depend on them,
//! not on each other: `shrink`, `coverage` and `report` once imported them
//! from `check`, which imports those commands back, and `find` imported the
//! clock from `bench`, which runs `find`.

use idemsim::catalog::UsageError;
pub use idemsim::shell::shell_word;
use sim::{Outcome, SeedRange};
use std::path::Path;
use std::time::Instant;

/// Parses `--seeds A..B` (B exclusive, at most 2^64) or `--seeds A..=B`
/// (B inclusive, at most 2^64 − 1): at least one and at most [`MAX_RUNS`]
/// seeds. Both spellings reach the last seed, `u64::MAX`.
pub fn parse_seeds(s: &str) -> Result<SeedRange, String> {
    let (a, b) = s.split_once("..").ok_or_else(|| {
        format!("`{s}` is not a range A..B (B exclusive) or A..=B (B inclusive), e.g. 0..1000")
    })?;
    let start: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("`{a}` is not a seed (0 to {})", u64::MAX))?;
    let (inclusive, b) = match b.strip_prefix('=') {
        Some(last) => (true, last),
        None => (false, b),
    };
    let n: u128 = b
        .trim()
        .parse()
        .map_err(|_| format!("`{b}` is not a seed (0 to {})", u64::MAX))?;
    // Exclusive, 2^64 is the end of a range holding the last seed; past
    // it, or inclusive past u64::MAX, there is no seed.
    let end = if inclusive { n.saturating_add(1) } else { n };
    if end > 1 << 64 {
        return Err(format!(
            "`{b}` is past the last seed, {max}: end the range there with {start}..={max}",
            max = u64::MAX
        ));
    }
    let range = SeedRange { start, end };
    if range.is_empty() {
        let (op, why) = if inclusive {
            ("..=", "the end is inclusive and must be at least the start")
        } else {
            ("..", "the end is exclusive and must be above the start")
        };
        return Err(format!(
            "empty seed range {start}{op}{n}: {why}, e.g. {start}..={start} for seed {start} alone"
        ));
    }
    // The bound of --runs: a longer range would not end in any lifetime.
    let len = end - u128::from(start);
    if len > u128::from(MAX_RUNS) {
        // The example keeps the spelling given; it stays below 2^64, since
        // a range this long starts at least MAX_RUNS seeds below the top.
        let example = if inclusive {
            format!("{start}..={}", u128::from(start) + u128::from(MAX_RUNS) - 1)
        } else {
            format!("{start}..{}", u128::from(start) + u128::from(MAX_RUNS))
        };
        return Err(format!(
            "seed range {start}{op}{n} holds {len} seeds, more than {MAX_RUNS} (the bound of --runs); \
give a range of at most {MAX_RUNS} seeds, e.g. {example}",
            op = if inclusive { "..=" } else { ".." }
        ));
    }
    Ok(range)
}

/// `--seeds A..B`, `--seeds A..=B` and `--seed N` as `check` takes them,
/// for the commands that otherwise take `--runs` alone (`sweep`, `verify`,
/// `advise`): the same parser, so the same errors, and either one refused
/// beside the command's `--runs`, which must be an argument of its own.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct SeedFlags {
    /// Seed range A..B (B exclusive) or A..=B (B inclusive), at most 10^12
    /// seeds, instead of --runs; A..=18446744073709551615 ends at the last seed.
    #[arg(long, value_parser = parse_seeds, conflicts_with = "runs")]
    pub seeds: Option<SeedRange>,
    /// One seed alone: the range N..=N, instead of --runs.
    #[arg(long, value_name = "N", conflicts_with_all = ["runs", "seeds"])]
    pub seed: Option<u64>,
}

impl SeedFlags {
    /// The range given, if one was (`--seed N` is `N..=N`).
    pub fn range(&self) -> Option<SeedRange> {
        self.seeds.or(self.seed.map(|n| SeedRange::inclusive(n, n)))
    }

    /// The range given, else seeds `0..runs`.
    pub fn or_first(&self, runs: u64) -> SeedRange {
        self.range().unwrap_or(SeedRange {
            start: 0,
            end: runs.into(),
        })
    }
}

/// Parses `--shard I/N` (0-based, I below N).
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/N, e.g. 0/4 for the first of four shards"))?;
    let index: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("`{a}` is not a shard index"))?;
    let count: u64 = b
        .trim()
        .parse()
        .map_err(|_| format!("`{b}` is not a shard count"))?;
    if count == 0 || index >= count {
        return Err(format!(
            "shard {index}/{count} does not exist: shards are numbered 0 to N-1 (e.g. JOB_COMPLETION_INDEX)"
        ));
    }
    Ok((index, count))
}

/// The exit code of one run's outcome.
pub fn exit_code(o: &Outcome) -> u8 {
    match o {
        Outcome::Holds => idemsim::exit::HOLDS,
        Outcome::Violation(_) | Outcome::Panicked(_) => idemsim::exit::VIOLATION,
        Outcome::Inconclusive(_) => idemsim::exit::INCONCLUSIVE,
    }
}

/// One worker thread per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads `--jobs` accepts: far above any core count that
/// helps, far below what would exhaust the process's threads or memory.
pub const MAX_JOBS: usize = 1024;

/// `--jobs` as given, checked, or one per core.
pub fn jobs(given: Option<usize>) -> Result<usize, UsageError> {
    match given {
        None => Ok(default_jobs()),
        Some(0) => Err(UsageError(
            "error: --jobs must be at least 1\nhelp: leave it out to use one worker per core\n"
                .into(),
        )),
        Some(n) if n > MAX_JOBS => Err(UsageError(format!(
            "error: --jobs {n} is more than {MAX_JOBS} worker threads\nhelp: give at most {MAX_JOBS}; more threads than cores ({}) do not make a sweep faster\n",
            default_jobs()
        ))),
        Some(n) => Ok(n),
    }
}

/// The most seeds `--runs` asks for, as for `run.runs` in a file and the
/// length of a `--seeds A..B` range: past it a run would not end in any
/// lifetime (a range may start anywhere in the 64-bit seeds).
pub const MAX_RUNS: u64 = 1_000_000_000_000;

/// `--runs` (or the flag `flag`), checked: at least 1, at most [`MAX_RUNS`].
pub fn runs(flag: &str, given: Option<u64>) -> Result<(), UsageError> {
    match given {
        Some(0) => Err(UsageError(format!(
            "error: {flag} must be at least 1\nhelp: give the number of seeds to run, e.g. {flag} 1000\n"
        ))),
        Some(n) if n > MAX_RUNS => Err(UsageError(format!(
            "error: {flag} {n} is more than {MAX_RUNS}\nhelp: give at most {MAX_RUNS} seeds, or a range with --seeds A..B\n"
        ))),
        _ => Ok(()),
    }
}

/// The one wall clock in idemsim: a benchmark measures real time by definition,
/// and nothing it reads flows into a run.
#[allow(clippy::disallowed_methods)]
pub fn wall_clock() -> Instant {
    Instant::now()
}

/// The "faults fired" line every summary prints (sweep, search, enumeration).
pub fn faults_line(lost: u64, duplicated: u64, partitioned: u64, crashed: u64) -> String {
    format!("faults fired: {lost} lost, {duplicated} duplicated, {partitioned} partitioned, {crashed} crashes")
}

/// What a warning without a catalog example says of the runs: it is
/// `setting-without-effect`, a key no run reads.
const NO_RUN_READS_IT: &str = "no run reads it";

/// A design warning as summaries carry it (docs/design-warnings.md): the
/// model's [`models::core::DesignWarning`] and whether the runs reached it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WarningLine {
    /// Stable: `key-retention-below-retry-span`.
    pub id: String,
    /// What is wrong and what it costs.
    pub text: String,
    /// The situation a run reports when it reaches the gap, if one marks it.
    pub situation: Option<String>,
    /// Runs that reached that situation; `None` when none marks the gap (or,
    /// outside a sweep's summary, when no count was taken).
    pub reached_runs: Option<u64>,
    /// The searches of `check`'s portfolio that reached that situation
    /// (`exhaustive`, `coverage`); absent when none did or none ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reached_by_searches: Vec<String>,
    /// A catalog scenario that shows the gap turning into a violation.
    pub example: String,
}

impl WarningLine {
    /// The scenario's design warnings, with no count of runs yet: what a search, an
    /// enumeration or a verification shows (they know which situations were
    /// reached, not how often), and what a sweep's summary fills in.
    pub fn of(design_warnings: &[models::core::DesignWarning]) -> Vec<WarningLine> {
        design_warnings
            .iter()
            .map(|h| WarningLine {
                id: h.id.to_string(),
                text: h.text.clone(),
                situation: h
                    .shown_by
                    .map(|id| models::registry::situation_name(id).to_string()),
                reached_runs: None,
                reached_by_searches: Vec::new(),
                example: h.example.to_string(),
            })
            .collect()
    }

    /// The scenario's design warnings, reached in the runs of a sweep's tally.
    pub fn of_tally(
        design_warnings: &[models::core::DesignWarning],
        t: &sim::Tally,
    ) -> Vec<WarningLine> {
        let mut lines = WarningLine::of(design_warnings);
        for (line, h) in lines.iter_mut().zip(design_warnings) {
            line.reached_runs = h
                .shown_by
                .map(|id| t.situation_runs.get(usize::from(id)).copied().unwrap_or(0));
        }
        lines
    }

    /// The scenario's design warnings as JSON for a search, an enumeration or a
    /// verification, which know the situations reached (`reached`) but not
    /// how often: `reached` is true or false, null when no situation marks it.
    pub fn json_in(
        design_warnings: &[models::core::DesignWarning],
        reached: &[&str],
    ) -> serde_json::Value {
        WarningLine::json_of(&WarningLine::of(design_warnings), reached)
    }

    /// [`json_in`](WarningLine::json_in) for lines whose
    /// `reached_by_searches` may be filled: `reached` is then true when a
    /// search reached the situation too, and `reached_by_searches` names
    /// the searches (absent when none).
    pub fn json_of(lines: &[WarningLine], reached: &[&str]) -> serde_json::Value {
        lines
            .iter()
            .map(|h| {
                let hit = (h.situation.as_deref())
                    .map(|n| reached.contains(&n) || !h.reached_by_searches.is_empty());
                let mut v = serde_json::json!({
                    "id": h.id,
                    "text": h.text,
                    "situation": h.situation,
                    "reached": hit,
                    "example": h.example,
                });
                if !h.reached_by_searches.is_empty() {
                    v["reached_by_searches"] = serde_json::json!(h.reached_by_searches);
                }
                v
            })
            .collect()
    }

    /// `no run reached it` or `reached in N runs`, for a table's footnote.
    pub fn reach_note(&self) -> String {
        if self.example.is_empty() {
            return NO_RUN_READS_IT.to_string();
        }
        let searched = searches_phrase(&self.reached_by_searches);
        match (&self.situation, self.reached_runs) {
            (Some(s), Some(0)) if !searched.is_empty() => {
                format!("reached by no seed but by {searched} ({s})")
            }
            (Some(s), Some(0)) => format!("no run reached it ({s})"),
            (Some(s), Some(n)) => format!("reached in {n} runs ({s})"),
            _ => "no situation marks it".to_string(),
        }
    }

    /// Two lines for people: the gap, then whether this sweep went there.
    pub fn text(&self) -> String {
        let reach = match (&self.situation, self.reached_runs) {
            (Some(s), Some(0)) if !self.reached_by_searches.is_empty() => self.searched_reach(s),
            (Some(s), Some(0)) => self.unreached(&format!("no run here reached it ({s}: 0 runs)")),
            (Some(s), Some(n)) => format!(
                "reached in {n} run{} ({s}): the verdict covers {}",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            ),
            _ => self.unmarked(),
        };
        self.lines(&reach)
    }

    /// The same for a search or an enumeration, which knows whether some
    /// schedule reached a situation but not how many: `reached` names those.
    pub fn text_in(&self, reached: &[&str]) -> String {
        let reach = match &self.situation {
            Some(s) if reached.contains(&s.as_str()) => {
                format!("a schedule here reached it ({s}): the verdict covers it")
            }
            // `verify`, whose seeds missed it, ran `check`'s searches.
            Some(s) if !self.reached_by_searches.is_empty() => self.searched_reach(s),
            Some(s) => self.unreached(&format!("no schedule here reached it ({s})")),
            None => self.unmarked(),
        };
        self.lines(&reach)
    }

    /// A search's schedule went to `situation`, though no seed did: the
    /// verdict, the searches' included, covers it.
    fn searched_reach(&self, situation: &str) -> String {
        let searched = searches_phrase(&self.reached_by_searches);
        format!("reached by no seed but by {searched} ({situation}): the verdict covers it")
    }

    fn lines(&self, reach: &str) -> String {
        format!("design warning ({}): {}\n  {reach}", self.id, self.text)
    }

    fn unreached(&self, what: &str) -> String {
        // A gap whose consequence is no violation (retries that never come
        // leave operations for a person, honestly reported) has no catalog
        // scenario that fails by it.
        if self.example.is_empty() {
            return format!("{what}, so the verdict says nothing about it");
        }
        format!(
            "{what}, so the verdict says nothing about it; {} shows it failing",
            self.example
        )
    }

    fn unmarked(&self) -> String {
        // A setting without effect: no catalog scenario shows it failing,
        // and nothing in a run marks it.
        if self.example.is_empty() {
            return format!(
                "{NO_RUN_READS_IT}: the runs are the same with this setting or without it"
            );
        }
        format!(
            "no situation marks a run that reached it; {} shows it failing",
            self.example
        )
    }
}

/// The searches of `check`'s portfolio named in `parts` (`exhaustive`,
/// `coverage`) as people read them; empty for none.
pub fn searches_phrase(parts: &[String]) -> String {
    let has = |p: &str| parts.iter().any(|x| x == p);
    match (has("exhaustive"), has("coverage")) {
        (true, true) => "both searches".to_string(),
        (true, false) => "exhaustive search".to_string(),
        (false, true) => "the coverage-guided search".to_string(),
        (false, false) => String::new(),
    }
}

/// The "situations reached" line every summary prints.
pub fn situations_line<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        return "situations reached: none".to_string();
    }
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    format!("situations reached: {}", names.join(", "))
}

/// Checks, before anything runs, that `path` (given to `flag`) can become an
/// output file: not `-`, not a folder, a device or a pipe, in a folder that
/// exists and can be written to (or, with `create_folders`, under one that
/// exists and can be, where the missing folders will be created).
pub fn output_file(flag: &str, path: &Path, create_folders: bool) -> Result<(), UsageError> {
    let shown = path.display();
    let refuse = |what: String| {
        Err(UsageError(format!(
            "error: {flag} {shown}: {what}\nhelp: give the path of a new or regular file in a folder you can write to, e.g. {flag} {}\n",
            example_name(flag)
        )))
    };
    let text = path.to_string_lossy();
    if text.is_empty() {
        return refuse("the path is empty".into());
    }
    if text == "-" {
        return refuse(
            "`-` is not a file here: this output is a file of its own, not stdout".into(),
        );
    }
    if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
        return refuse("the path ends in a separator, so it names a folder".into());
    }
    let own = std::fs::metadata(path);
    match &own {
        Ok(m) if m.is_dir() => return refuse("is a folder, not a file".into()),
        Ok(m) if !m.is_file() => {
            return refuse("is not a regular file (a device, a pipe or a socket)".into())
        }
        _ => {}
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The folder, or (when missing folders are created) its nearest ancestor that exists.
    let mut at = parent;
    loop {
        match std::fs::metadata(at) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => return refuse(format!("{} is not a folder", at.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create_folders => {
                at = at
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return refuse(format!("its folder {} does not exist", at.display()))
            }
            Err(e) => return refuse(format!("its folder {} cannot be used: {e}", at.display())),
        }
    }
    if let Err(e) = writable(at) {
        return refuse(format!("cannot write in the folder {}: {e}", at.display()));
    }
    match own {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            refuse(format!("cannot be used: {e}"))
        }
        _ => Ok(()),
    }
}

fn example_name(flag: &str) -> &'static str {
    match flag {
        "--plot" => "sweep.svg",
        _ => "sweep.html",
    }
}

/// Whether this process may create files in the folder `dir`.
#[cfg(unix)]
fn writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: access reads the NUL-terminated path it is given and nothing else.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn writable(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

pub use idemsim::minimize::shrink_found;

#[cfg(test)]
mod tests {
    use super::{parse_seeds, MAX_RUNS};
    use proptest::prelude::*;
    use sim::SeedRange;

    const TOP: u128 = 1 << 64;

    proptest! {
        /// `A..B` and `A..=B-1` are the same seeds, at the top of the
        /// seed space too, where B is 2^64.
        #[test]
        fn an_exclusive_end_and_the_inclusive_seed_below_it_are_one_range(
            start in prop_oneof![any::<u64>(), (u64::MAX - 2000)..=u64::MAX],
            len in 1..=MAX_RUNS,
        ) {
            let end = (u128::from(start) + u128::from(len)).min(TOP);
            prop_assume!(end > u128::from(start));
            let exclusive = parse_seeds(&format!("{start}..{end}")).unwrap();
            let inclusive = parse_seeds(&format!("{start}..={}", end - 1)).unwrap();
            prop_assert_eq!(exclusive, inclusive);
            prop_assert_eq!(exclusive.start, start);
            prop_assert_eq!(u128::from(exclusive.len()), end - u128::from(start));
            prop_assert_eq!(exclusive.last().map(u128::from), Some(end - 1));
        }
    }

    #[test]
    fn the_last_seed_ends_a_range_either_way() {
        let max = u64::MAX;
        let want = SeedRange::inclusive(max - 5, max);
        assert_eq!(parse_seeds(&format!("{}..={max}", max - 5)), Ok(want));
        assert_eq!(
            parse_seeds(&format!("{}..18446744073709551616", max - 5)),
            Ok(want)
        );
        assert_eq!(
            parse_seeds(&format!("{max}..={max}")),
            Ok(SeedRange::inclusive(max, max))
        );
    }

    #[test]
    fn ranges_past_the_last_seed_or_empty_or_too_long_are_refused_with_the_fix() {
        let max = u64::MAX;
        let err = |s: &str| parse_seeds(s).unwrap_err();
        let past = err("5..18446744073709551617");
        assert!(
            past.contains(&format!("end the range there with 5..={max}")),
            "{past}"
        );
        let past = err("5..=18446744073709551616");
        assert!(past.contains("is past the last seed"), "{past}");
        assert!(err("9..3").contains("empty seed range 9..3"));
        let empty = err("9..=8");
        assert!(empty.contains("empty seed range 9..=8"), "{empty}");
        assert!(empty.contains("9..=9 for seed 9 alone"), "{empty}");
        let long = err("0..=1000000000000");
        assert!(long.contains("e.g. 0..=999999999999"), "{long}");
        assert!(err("0..2000000000000").contains("e.g. 0..1000000000000"));
        assert!(err("3-9").contains("A..=B (B inclusive)"));
        assert!(err("x..=9").contains("`x` is not a seed"));
        assert!(err("1..=y").contains("`y` is not a seed"));
        assert!(err("1..=").contains("is not a seed"));
    }
}
