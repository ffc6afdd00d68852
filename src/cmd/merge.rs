//! `idemsim merge`: combines the `check --json --shard I/N` outputs of several
//! machines into the summary one machine would have printed for the whole range.

use super::check::{Seeds, SweepLine};
use crate::scenarios::UsageError;

#[derive(clap::Args)]
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
}

fn read(file: &str) -> Result<String, UsageError> {
    if file == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| UsageError(format!("error: cannot read stdin: {e}\n")))
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| UsageError(format!("error: cannot read {file}: {e}\n")))
    }
}

/// Every `summary` line of every file, with the place it came from.
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
            let data = value.get("data").cloned().unwrap_or_default();
            let sweep: SweepLine = serde_json::from_value(data).map_err(|e| {
                UsageError(format!(
                    "error: {at}:1: summary line lacks what a merge needs: {e}\nhelp: produce the shards with the same idemsim version\n"
                ))
            })?;
            out.push((at, sweep));
        }
    }
    Ok(out)
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    let mut lines = summaries(&a.files)?;
    if lines.is_empty() {
        return Err(UsageError(
            "error: no summary line in the given files\nhelp: run the shards as `idemsim check --json --shard I/N > shard-I.jsonl`\n".into(),
        ));
    }
    let (first_at, first) = &lines[0];
    for (at, l) in &lines[1..] {
        if l.replay != first.replay {
            return Err(UsageError(format!(
                "error: {at}: shard of `{}`, but {first_at} is a shard of `{}`\nhelp: merge only shards of one scenario with the same --set overrides\n",
                l.replay, first.replay
            )));
        }
    }
    let mut missing = Vec::new();
    for (at, l) in &lines {
        if l.seeds.is_none() {
            missing.push(at.clone());
        }
    }
    if !missing.is_empty() {
        return Err(UsageError(format!(
            "error: {}: summary without a seed range\n",
            missing.join(", ")
        )));
    }
    lines.sort_by_key(|(_, l)| l.seeds.map(|s| (s.start, s.end)));
    // The shards must tile one range: a gap or an overlap would make the counts lie.
    for w in lines.windows(2) {
        let (a_at, a) = &w[0];
        let (b_at, b) = &w[1];
        let (ra, rb) = (a.seeds.expect("checked"), b.seeds.expect("checked"));
        if rb.start != ra.end {
            let what = if rb.start > ra.end {
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
    let start = lines[0].1.seeds.expect("checked").start;
    let end = lines[lines.len() - 1].1.seeds.expect("checked").end;
    let mut merged = lines[0].1.clone();
    for (_, l) in &lines[1..] {
        merged.absorb(l);
    }
    merged.seeds = Some(Seeds { start, end });
    merged.derive();
    // The shrink step of `check`, on the merged lowest failing seed, so the
    // output is the one machine's; it needs the scenario, the shards do not.
    let mut shrunk_text = None;
    if merged.failure.is_some() && !(a.no_shrink && a.repro_out.is_none()) {
        let overrides = crate::scenarios::parse_overrides(&merged.sets)?;
        let s = crate::scenarios::load(&merged.scenario, &overrides)?;
        shrunk_text = merged.shrink(&s, a.no_shrink, a.repro_out.as_deref())?;
    }
    merged.print(a.json, shrunk_text.as_deref());
    Ok(merged.exit_code())
}
