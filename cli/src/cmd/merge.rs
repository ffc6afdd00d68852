//! `idemsim merge`: combines the `check --json --shard I/N` outputs of several
//! machines into the summary one machine would have printed for the whole range.

use super::check::{Seeds, ShardLine, SweepLine};

use idemsim::catalog::UsageError;
use sim::SeedRange;

#[derive(clap::Args)]
/// The arguments of `idemsim merge`.
pub struct Args {
    /// JSON Lines files written by `idemsim check --json --shard I/N`; `-` reads stdin.
    #[arg(required = true)]
    files: Vec<String>,
    /// JSON Lines on stdout; human text goes to stderr.
    #[arg(long)]
    json: bool,
    /// Do not shrink the lowest failing seed (as `check --no-shrink`).
    #[arg(long)]
    no_shrink: bool,
    /// Write the lowest failing run as a repro file (as `check --repro-out`).
    #[arg(long, value_name = "FILE")]
    repro_out: Option<String>,
    /// Most reruns shrinking may spend (as `check --shrink-max-runs`).
    #[arg(long, value_name = "N")]
    shrink_max_runs: Option<u32>,
    /// Most wall-clock milliseconds shrinking may take (as `check --shrink-budget-ms`).
    #[arg(long, value_name = "MS")]
    shrink_budget_ms: Option<u64>,
    /// The scenario the shards ran, for shrinking [default: the one they
    /// name, if a built-in or a file in the current folder or below it].
    #[arg(long, value_name = "SCENARIO")]
    scenario: Option<String>,
}

/// Most bytes `merge` reads from one input. A shard's JSON Lines take a few
/// KB (a summary line, and a trace only with a failure), so this leaves room
/// for any real one while a runaway pipe ends in an error, not in memory
/// exhaustion.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// One input's text, at most [`MAX_INPUT_BYTES`]: a file, or stdin for `-`.
fn read(file: &str) -> Result<String, UsageError> {
    use std::io::Read;
    let (name, source): (&str, Box<dyn Read>) = if file == "-" {
        ("stdin", Box::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(file).map_err(|e| UsageError(format!(
            "error: cannot read {file}: {e}\nhelp: give the files that `idemsim check --json --shard I/N` wrote\n"
        )))?;
        (file, Box::new(f))
    };
    let mut text = String::new();
    source
        .take(MAX_INPUT_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| UsageError(format!(
            "error: cannot read {name}: {e}\nhelp: pipe or name the JSON Lines that `idemsim check --json --shard I/N` wrote\n"
        )))?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(UsageError(format!(
            "error: {name} holds more than {} MiB, more than any shard summary\nhelp: give the JSON Lines that `idemsim check --json --shard I/N` wrote, one file per shard\n",
            MAX_INPUT_BYTES >> 20
        )));
    }
    Ok(text)
}

/// Every `summary` line of every file, with the place it came from, each
/// checked on its own: a file that contradicts itself is refused, not merged.
fn summaries(files: &[String]) -> Result<Vec<(String, SweepLine)>, UsageError> {
    let mut out = Vec::new();
    for file in files {
        let text = read(file)?;
        for (n, line) in text.lines().enumerate() {
            let at = format!("{file}:{}", n + 1);
            if line.trim().is_empty() {
                continue;
            }
            let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                UsageError(format!(
                    "error: {at}:{}: not a JSON line: {e}\nhelp: give the stdout of `idemsim check --json --shard I/N`\n",
                    e.column()
                ))
            })?;
            if value.get("type").and_then(|t| t.as_str()) != Some("summary") {
                continue;
            }
            let ours = idemsim::render::json::schema_of("summary");
            if let Some(theirs) = value.get("schema").filter(|s| **s != ours) {
                return Err(UsageError(format!(
                    "error: {at}: a summary of schema {theirs}; this idemsim reads schema {ours} (docs/json-output.md, Compatibility)\nhelp: merge shards with the idemsim version that wrote them\n"
                )));
            }
            let mut data = value.get("data").cloned().unwrap_or_default();
            // The seeds' decimal twins repeat the numbers the summary is read from.
            idemsim::render::json::strip_decimal_twins(&mut data);
            // A coverage-guided search is one sequence: it has no shards.
            if data.get("search_seed").is_some() && data.get("budget").is_some() {
                return Err(UsageError(format!(
                    "error: {at}: the summary of a coverage-guided search (`--strategy coverage`), which runs as one sequence and is never split into shards\nhelp: merge the shards of a seed sweep: `idemsim check SCENARIO --strategy seeds --shard I/N --json`\n"
                )));
            }
            let sweep: SweepLine = serde_json::from_value(data).map_err(|e| {
                UsageError(format!(
                    "error: {at}: not a summary line `idemsim check --json --shard I/N` writes: {e}\nhelp: give the unedited stdout of `idemsim check --json --shard I/N`, with the shards made by the same idemsim version\n"
                ))
            })?;
            sweep
                .check_situation_names()
                .map_err(|m| corrupt(&at, &m))?;
            consistent(&sweep).map_err(|m| corrupt(&at, &m))?;
            out.push((at, sweep));
        }
    }
    Ok(out)
}

/// The files as a message names them: all of a few, else the first few.
fn shown_files(files: &[String]) -> String {
    let names: Vec<String> = files
        .iter()
        .take(4)
        .map(|f| {
            if f == "-" {
                "stdin".to_string()
            } else {
                f.clone()
            }
        })
        .collect();
    let more = if files.len() > 4 { ", …" } else { "" };
    format!("{}{more}", names.join(", "))
}

/// What makes `l` a summary of another run than `first`, if anything: the
/// counts of two scenarios, or of one under other overrides, must not add up.
fn other_run(first: &SweepLine, l: &SweepLine) -> Option<String> {
    let differ = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        let cut = |x: &dyn std::fmt::Debug| {
            let t = format!("{x:?}");
            match t.char_indices().nth(120) {
                Some((i, _)) => format!("{}…", &t[..i]),
                None => t,
            }
        };
        Some(format!("{what} {} instead of {}", cut(b), cut(a)))
    };
    if l.scenario != first.scenario {
        return differ("scenario", &first.scenario, &l.scenario);
    }
    if l.scenario_file != first.scenario_file {
        return differ("scenario file", &first.scenario_file, &l.scenario_file);
    }
    if l.sets != first.sets {
        return differ("--set overrides", &first.sets, &l.sets);
    }
    if l.scenario_hash.is_some() != first.scenario_hash.is_some() {
        return differ("scenario hash", &first.scenario_hash, &l.scenario_hash);
    }
    let warnings = |x: &SweepLine| -> Vec<(String, Option<String>)> {
        x.design_warnings
            .iter()
            .map(|h| (h.id.clone(), h.situation.clone()))
            .collect()
    };
    if warnings(l) != warnings(first) {
        return differ("design warnings", &warnings(first), &warnings(l));
    }
    let layers = |x: &SweepLine| -> (bool, Vec<(String, models::core::Per)>) {
        let received = x.load.received.iter().map(|r| (r.layer.clone(), r.per));
        (x.load.attempts.is_some(), received.collect())
    };
    if layers(l) != layers(first) {
        return differ(
            "load (attempts counted, layers)",
            &layers(first),
            &layers(l),
        );
    }
    None
}

fn corrupt(at: &str, what: &str) -> UsageError {
    UsageError(format!(
        "error: {at}: corrupt summary: {what}\nhelp: give the unedited stdout of `idemsim check --json --shard I/N`, or rerun that shard\n"
    ))
}

/// The checks one summary line must pass on its own.
fn consistent(l: &SweepLine) -> Result<(), String> {
    let Some(r) = l.seeds else {
        return Err("no seed range (`seeds`)".into());
    };
    if u128::from(r.start) > r.end {
        return Err(format!("the seed range {}..{} is reversed", r.start, r.end));
    }
    // The end is at most 2^64 (null in JSON), so the length is a u128.
    let len = r.end - u128::from(r.start);
    if u128::from(l.schedules) != len {
        return Err(format!(
            "{} schedules for the {len} seeds {}..{}",
            l.schedules, r.start, r.end
        ));
    }
    let parts = [l.holds, l.violations, l.panics, l.inconclusive]
        .iter()
        .try_fold(0u64, |acc, &x| acc.checked_add(x));
    if parts != Some(l.schedules) {
        return Err(format!(
            "holds + violations + panics + inconclusive = {} + {} + {} + {}, not the {} schedules",
            l.holds, l.violations, l.panics, l.inconclusive, l.schedules
        ));
    }
    let within = |seed: u64| SeedRange::from(r).contains(seed);
    match (&l.failure, l.violations + l.panics) {
        (None, 0) => {}
        (Some(f), 1..) if within(f.seed) => {}
        (Some(f), 1..) => {
            return Err(format!(
                "the failing seed {} is outside its range {}..{}",
                f.seed, r.start, r.end
            ))
        }
        (Some(_), 0) => return Err("a failure, but no violations or panics counted".into()),
        (None, _) => return Err("violations or panics counted, but no failure given".into()),
    }
    match (&l.first_inconclusive, l.inconclusive) {
        (None, 0) => {}
        (Some(i), 1..) if within(i.seed) => {}
        (Some(i), 1..) => {
            return Err(format!(
                "the inconclusive seed {} is outside its range {}..{}",
                i.seed, r.start, r.end
            ))
        }
        (Some(_), 0) => return Err("an inconclusive seed, but no inconclusive runs counted".into()),
        (None, _) => return Err("inconclusive runs counted, but no seed given".into()),
    }
    if let Some((name, n)) = l.situation_runs.iter().find(|(_, n)| **n > l.schedules) {
        return Err(format!(
            "{n} runs reached {name}, more than the {} schedules",
            l.schedules
        ));
    }
    if let Some(sh) = l.shard {
        shard_consistent(l, r, sh)?;
    }
    Ok(())
}

/// A shard's line covers exactly its part of the shards' range, unless it
/// was interrupted, which `merge` refuses with the seeds left to run.
fn shard_consistent(l: &SweepLine, r: Seeds, sh: ShardLine) -> Result<(), String> {
    if sh.count == 0 || sh.index >= sh.count {
        return Err(format!("shard {}/{} does not exist", sh.index, sh.count));
    }
    if u128::from(sh.of.start) > sh.of.end {
        return Err(format!(
            "the shards' range {}..{} is reversed",
            sh.of.start, sh.of.end
        ));
    }
    let mine = SeedRange::from(sh.of).shard(sh.index, sh.count);
    let ran_all = (r.start, r.end) == (mine.start, mine.end);
    let ran_beginning = l.interrupted && r.start == mine.start && r.end <= mine.end;
    if ran_beginning && !ran_all {
        return Err(format!(
            "shard {}/{} was interrupted: seeds {}..{} ran, {}..{} did not; rerun that shard",
            sh.index, sh.count, r.start, r.end, r.end, mine.end
        ));
    }
    if !ran_all {
        return Err(format!(
            "shard {}/{} of {}..{} is seeds {}..{}, not {}..{}",
            sh.index, sh.count, sh.of.start, sh.of.end, mine.start, mine.end, r.start, r.end
        ));
    }
    Ok(())
}

/// The merged lowest failing seed, run again, breaks the invariant its
/// shard says: an edited failure is refused rather than shrunk, or written
/// as a repro file of a run that does not fail.
fn failure_fails_again(
    lines: &[(String, SweepLine)],
    merged: &SweepLine,
    s: &models::Scenario,
) -> Result<(), UsageError> {
    let Some(f) = &merged.failure else {
        return Ok(());
    };
    let mut sim = sim::Sim::new(&s.system);
    // Only the outcome is needed: unrecorded, a long run takes no memory.
    let report = sim::run_guarded(&mut sim, &s.system, f.seed);
    let found = match &report.outcome {
        sim::Outcome::Violation(v) => Some(v.invariant.to_string()),
        sim::Outcome::Panicked(_) => Some("model-panic".to_string()),
        sim::Outcome::Holds | sim::Outcome::Inconclusive(_) => None,
    };
    if found.as_deref() == Some(f.invariant.as_str()) {
        return Ok(());
    }
    let at = lines
        .iter()
        .find(|(_, l)| l.failure.as_ref() == Some(f))
        .map_or("the shards", |(at, _)| at.as_str());
    let now = found.map_or("does not fail".to_string(), |i| format!("breaks {i}"));
    Err(UsageError(format!(
        "error: {at}: its lowest failing seed {} broke {} in the shard, but run again it {now}\nhelp: give the unedited stdout of `idemsim check --json --shard I/N`, or rerun that shard; if the shards are unedited and the scenario unchanged, a model is not deterministic, which is a bug: please report it with this command line\n",
        f.seed,
        f.invariant.escape_debug()
    )))
}

/// Runs `idemsim merge`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let shrink_budget =
        idemsim::minimize::Budget::from_flags(a.shrink_max_runs, a.shrink_budget_ms)?;
    let mut lines = summaries(&a.files)?;
    if lines.is_empty() {
        return Err(UsageError(format!(
            "error: no summary line in {}\nhelp: run the shards as `idemsim check --json --shard I/N > shard-I.jsonl` and give those files\n",
            shown_files(&a.files)
        )));
    }
    let first_at = lines[0].0.clone();
    same_run(&lines)?;
    same_protections(&lines)?;
    lines.sort_by_key(|(_, l)| l.seeds.map(|s| (s.start, s.end)));
    every_shard_once(&lines)?;
    tile_one_range(&lines)?;
    let mut merged = merge_lines(&lines)?;
    let shrunk_text = shrink_merged(&a, &lines, &mut merged, &first_at, shrink_budget)?;
    merged.print(a.json, shrunk_text.as_deref());
    Ok(merged.exit_code())
}

/// Refuses lines of different runs: each must be a shard of the first's
/// run (same scenario text, overrides, idemsim and shard count).
fn same_run(lines: &[(String, SweepLine)]) -> Result<(), UsageError> {
    let (first_at, first) = &lines[0];
    for (at, l) in &lines[1..] {
        if let Some(what) = other_run(first, l) {
            return Err(UsageError(format!(
                "error: {at}: a summary of another run than {first_at}: {what}\nhelp: merge only the shards of one `idemsim check --json --shard I/N` run: one scenario, the same --set overrides, the same idemsim\n"
            )));
        }
        if l.replay != first.replay {
            return Err(UsageError(format!(
                "error: {at}: shard of `{}`, but {first_at} is a shard of `{}`\nhelp: merge only shards of one scenario with the same --set overrides\n",
                l.replay, first.replay
            )));
        }
        if l.scenario_hash.is_some()
            && first.scenario_hash.is_some()
            && l.scenario_hash != first.scenario_hash
        {
            return Err(UsageError(format!(
                "error: {at}: shard of scenario text {}, but {first_at} is of {}: the scenario file changed between the shards\nhelp: rerun every shard with the same scenario file\n",
                l.scenario_hash.as_deref().unwrap_or("?"),
                first.scenario_hash.as_deref().unwrap_or("?")
            )));
        }
        if l.shard.map(|s| (s.count, s.of)) != first.shard.map(|s| (s.count, s.of)) {
            let show = |s: Option<super::check::ShardLine>| {
                s.map_or("not a shard".to_string(), |s| {
                    format!("one of {} shards of {}..{}", s.count, s.of.start, s.of.end)
                })
            };
            return Err(UsageError(format!(
                "error: {at} is {}, but {first_at} is {}\nhelp: merge the shards of one run: the same --runs/--seeds and the same N in --shard I/N\n",
                show(l.shard),
                show(first.shard)
            )));
        }
    }
    Ok(())
}

/// Refuses shards that name other protections. Each holding shard of one
/// file names the protections of that file (same scenario text, checked
/// above), so a difference comes only from an edited summary, and the merge
/// would otherwise print whichever shard came first. A shard that did not
/// hold names none by design (its verdict already decides the merge), so
/// only holding shards are compared.
fn same_protections(lines: &[(String, SweepLine)]) -> Result<(), UsageError> {
    let mut holding = lines.iter().filter(|(_, l)| l.verdict.as_str() == "holds");
    let Some((first_at, first)) = holding.next() else {
        return Ok(());
    };
    let named = |l: &SweepLine| match &l.protections {
        None => "no protections".to_string(),
        Some(p) if p.named.is_empty() => "an empty list of protections".to_string(),
        Some(p) => {
            let each = p.named.iter().map(|n| {
                let breaks = n.expected_invariant.as_deref().unwrap_or("any invariant");
                format!("`{}` (breaks {breaks})", n.protection)
            });
            format!("the protections {}", each.collect::<Vec<_>>().join(", "))
        }
    };
    // Where only the command differs, the lists read alike: name it too.
    let told = |l: &SweepLine, alike: bool| match &l.protections {
        Some(p) if alike => format!("{}, removed by `{}`", named(l), p.verify),
        _ => named(l),
    };
    for (at, l) in holding {
        if l.protections != first.protections {
            let alike = named(l) == named(first);
            return Err(UsageError(format!(
                "error: {at}: a holding shard that names {}, but {first_at} names {}: shards of one scenario file name the same ones, so one summary was edited\nhelp: give the unedited stdout of `idemsim check --json --shard I/N`, or rerun the shard whose summary was edited\n",
                told(l, alike),
                told(first, alike)
            )));
        }
    }
    Ok(())
}

/// Each shard once, and every shard there, when the lines say which they are.
fn every_shard_once(lines: &[(String, SweepLine)]) -> Result<(), UsageError> {
    if let Some(sh) = lines[0].1.shard {
        let mut seen: Vec<Option<&str>> = vec![
            None;
            usize::try_from(sh.count)
                .unwrap_or(usize::MAX)
                .min(lines.len() + 1)
        ];
        for (at, l) in lines {
            let i = l.shard.expect("checked above").index;
            if let Some(slot) = seen.get_mut(usize::try_from(i).unwrap_or(usize::MAX)) {
                if let Some(before) = slot {
                    return Err(UsageError(format!(
                        "error: {at}: shard {i}/{} is given twice (also {before})\nhelp: give every shard I/N of one run exactly once\n",
                        sh.count
                    )));
                }
                *slot = Some(at.as_str());
            }
        }
        let whole = SeedRange::from(sh.of);
        let present: Vec<u64> = lines
            .iter()
            .map(|(_, l)| l.shard.expect("checked").index)
            .collect();
        // The first missing shard that holds seeds (an empty shard adds nothing).
        let missing = (0..sh.count)
            .filter(|i| !present.contains(i))
            .map(|i| (i, whole.shard(i, sh.count)))
            .find(|(_, r)| !r.is_empty());
        if let Some((i, r)) = missing {
            let given: Vec<String> = lines
                .iter()
                .take(4)
                .map(|(at, l)| {
                    let sh = l.shard.expect("checked");
                    format!("{at} is shard {}/{}", sh.index, sh.count)
                })
                .collect();
            let more = if lines.len() > 4 { ", …" } else { "" };
            return Err(UsageError(format!(
                "error: shard {i}/{} is not among the files: seeds {}..{} are missing (given: {}{more})\nhelp: give every shard I/N of one run exactly once\n",
                sh.count,
                r.start,
                r.end,
                given.join(", ")
            )));
        }
    }
    Ok(())
}

/// The shards must tile one range: a gap or an overlap would make the counts lie.
fn tile_one_range(lines: &[(String, SweepLine)]) -> Result<(), UsageError> {
    for w in lines.windows(2) {
        let (a_at, a) = &w[0];
        let (b_at, b) = &w[1];
        let (ra, rb) = (a.seeds.expect("checked"), b.seeds.expect("checked"));
        if u128::from(rb.start) != ra.end {
            let what = if u128::from(rb.start) > ra.end {
                format!("seeds {}..{} are missing", ra.end, rb.start)
            } else {
                format!("seeds {}..{} appear twice", rb.start, ra.end.min(rb.end))
            };
            return Err(UsageError(format!(
                "error: {a_at} ({}..{}) and {b_at} ({}..{}) do not join: {what}\nhelp: give every shard I/N of one run exactly once\n",
                ra.start, ra.end, rb.start, rb.end
            )));
        }
    }
    Ok(())
}

/// The lines, sorted by seeds and tiling one range, as one summary of it.
fn merge_lines(lines: &[(String, SweepLine)]) -> Result<SweepLine, UsageError> {
    let start = lines[0].1.seeds.expect("checked").start;
    let end = lines[lines.len() - 1].1.seeds.expect("checked").end;
    let mut merged = lines[0].1.clone();
    for (at, l) in &lines[1..] {
        merged.absorb(l).map_err(|m| corrupt(at, &m))?;
    }
    merged.seeds = Some(Seeds { start, end });
    merged.shard = None;
    merged.requested = None;
    // Every shard ran its whole range (`consistent` refuses one cut short),
    // so the merged sweep is complete, even where a Ctrl-C came after a
    // shard's last seed and set its flag.
    merged.interrupted = false;
    merged.derive();
    Ok(merged)
}

/// The shrink step of `check`, on the merged lowest failing seed, so the
/// output is the one machine's; it needs the scenario, the shards do not.
fn shrink_merged(
    a: &Args,
    lines: &[(String, SweepLine)],
    merged: &mut SweepLine,
    first_at: &str,
    shrink_budget: idemsim::minimize::Budget,
) -> Result<Option<String>, UsageError> {
    let mut shrunk_text = None;
    if merged.failure.is_some() && !(a.no_shrink && a.repro_out.is_none()) {
        let recorded = |e: UsageError| match e.0.strip_prefix("error: --set ") {
            Some(rest) => UsageError(format!("error: {first_at}: its recorded --set {rest}")),
            None => e,
        };
        let overrides = idemsim::catalog::parse_overrides(&merged.sets).map_err(recorded)?;
        let entry = scenario_of(merged, a.scenario.as_deref(), first_at)?;
        let s = idemsim::catalog::load_entry(&entry, &overrides).map_err(recorded)?;
        let now = idemsim::repro::hash_hex(s.hash);
        if let Some(then) = &merged.scenario_hash {
            if *then != now {
                return Err(UsageError(format!(
                    "error: {first_at}: the shards ran scenario `{}` with hash {then}, but it now hashes to {now}: the scenario changed after the shards ran\nhelp: the failing seed may not fail any more; merge with --no-shrink to see the shards' summary, or rerun the shards\n",
                    merged.scenario
                )));
            }
        }
        failure_fails_again(lines, merged, &s)?;
        shrunk_text = merged.shrink(
            (&s, &entry),
            a.no_shrink,
            a.repro_out.as_deref(),
            shrink_budget,
        )?;
    }
    Ok(shrunk_text)
}

/// The scenario to shrink with: `given`, else the one the shards name. A
/// shard is data that may come from anywhere: a file it names is opened only
/// in the current folder or below it (where `check` ran, as `merge` usually
/// does), so an edited shard cannot make idemsim open and quote another file.
fn scenario_of(
    merged: &SweepLine,
    given: Option<&str>,
    first_at: &str,
) -> Result<idemsim::catalog::Entry, UsageError> {
    if let Some(arg) = given {
        return idemsim::catalog::locate(arg);
    }
    let Some(file) = &merged.scenario_file else {
        return idemsim::catalog::locate_name(&merged.scenario);
    };
    idemsim::repro::inside(std::path::Path::new("."), file, "the current folder").map_err(|why| {
        UsageError(format!(
            "error: {first_at}: {why}\nhelp: run merge in the folder `check` ran in, or give the scenario the shards ran: `idemsim merge --scenario SCENARIO FILE...`\n"
        ))
    })
}
