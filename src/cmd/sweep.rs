//! `idemsim sweep`: which design, with which parameters?
//!
//! Runs the cross product of `--set KEY=V1,V2,...` values on the same seeds
//! (0..N for every variant), so that a difference between two rows comes from
//! the design and not from luck, and prints one row per variant.

mod metrics;
mod plot;
pub mod stats;

use crate::scenarios::{self, UsageError};
use metrics::{failure_name, MetricsTracer};
use models::node::{Node, NodeStorage};
use models::scenario::Override;
use models::System;
use sim::{Outcome, Sim, Source};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// Scenario name (from `idemsim list`) or path to a .toml file.
    scenario: String,
    /// A scenario key and the values to try, e.g. client.retry.max_attempts=1,3,5.
    /// Repeat for a cross product; a single value fixes the key for every variant.
    /// Commas inside [ ] or quotes belong to the value: network.loss_per_mille=[0,100],50.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", required = true)]
    set: Vec<String>,
    /// Seeds 0..N, the same for every variant [default: the scenario's run.runs].
    #[arg(long)]
    runs: Option<u64>,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Output format; json is JSON Lines.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also draw the violation rate against the first swept key as a self-contained SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// One `--set`: a key path and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<String>,
}

pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (k, v) = s.split_once('=').ok_or_else(|| {
        format!("`{s}` is not KEY=V1,V2,..., e.g. client.retry.max_attempts=1,3,5")
    })?;
    let key = k.trim();
    if key.is_empty() {
        return Err(format!("`{s}` has an empty key"));
    }
    let values = split_values(v).map_err(|m| format!("{key}: {m}"))?;
    Ok(Axis {
        key: key.to_string(),
        values,
    })
}

/// Splits on commas outside brackets, braces and quotes, so TOML arrays and
/// strings stay whole: `[0,100],50` is two values.
pub fn split_values(s: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut current = String::new();
    let mut depth = 0u32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if let Some(q) = quote {
            current.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                current.push(c);
            }
            '[' | '{' => {
                depth += 1;
                current.push(c);
            }
            ']' | '}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("`{s}` closes a bracket it never opened"))?;
                current.push(c);
            }
            ',' if depth == 0 => values.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("`{s}` has an unterminated string"));
    }
    if depth != 0 {
        return Err(format!("`{s}` leaves a bracket open"));
    }
    values.push(current);
    let values: Vec<String> = values.iter().map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "`{s}` has an empty value; separate values with single commas"
        ));
    }
    Ok(values)
}

/// Every combination of the axes' values, the first axis varying slowest.
fn cross_product(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..axis.values.len()).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

/// A variant's numbers over all its seeds. Merging is order-independent, so
/// the result does not depend on how seeds were spread over threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantStats {
    pub runs: u64,
    pub violations: u64,
    pub panics: u64,
    pub inconclusive: u64,
    /// Lowest failing seed and its invariant.
    pub first_failure: Option<(u64, &'static str)>,
    pub duplicate_runs: u64,
    pub lost_runs: u64,
    pub unknown_runs: u64,
    pub operations: u64,
    pub attempts: u64,
    /// Sorted once every seed has run.
    pub times_to_effect_us: Vec<u64>,
    pub peak_dedup_keys: u64,
    /// Sum over runs of each run's peak requests per second at the service.
    pub peak_requests_sum: u64,
}

impl VariantStats {
    fn merge(&mut self, o: VariantStats) {
        self.runs += o.runs;
        self.violations += o.violations;
        self.panics += o.panics;
        self.inconclusive += o.inconclusive;
        if let Some(f) = o.first_failure {
            if self.first_failure.is_none_or(|m| f.0 < m.0) {
                self.first_failure = Some(f);
            }
        }
        self.duplicate_runs += o.duplicate_runs;
        self.lost_runs += o.lost_runs;
        self.unknown_runs += o.unknown_runs;
        self.operations += o.operations;
        self.attempts += o.attempts;
        self.times_to_effect_us.extend(o.times_to_effect_us);
        self.peak_dedup_keys = self.peak_dedup_keys.max(o.peak_dedup_keys);
        self.peak_requests_sum += o.peak_requests_sum;
    }

    /// The mean over runs of each run's busiest second at the service.
    pub fn peak_requests_per_s(&self) -> Option<f64> {
        (self.runs > 0).then(|| self.peak_requests_sum as f64 / self.runs as f64)
    }

    pub fn failing(&self) -> u64 {
        self.violations + self.panics
    }

    pub fn verdict(&self) -> &'static str {
        if self.failing() > 0 {
            "violation"
        } else if self.inconclusive > 0 {
            "inconclusive"
        } else {
            "holds"
        }
    }

    fn share(&self, n: u64) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            n as f64 / self.runs as f64
        }
    }

    pub fn violation_rate(&self) -> f64 {
        self.share(self.failing())
    }

    pub fn interval(&self) -> (f64, f64) {
        stats::wilson(self.failing(), self.runs, stats::Z95)
    }

    pub fn amplification(&self) -> Option<f64> {
        (self.operations > 0).then(|| self.attempts as f64 / self.operations as f64)
    }

    pub fn time_to_effect_us(&self, q: f64) -> Option<u64> {
        stats::quantile_sorted(&self.times_to_effect_us, q)
    }
}

const CHUNK: u64 = 64;

/// Runs seeds `0..runs` of one variant on `jobs` threads. `stop` (Ctrl-C)
/// ends it between chunks; every chunk handed out runs to its end, so the
/// seeds that ran are always `0..stats.runs`.
fn run_variant(system: &System, runs: u64, jobs: usize, stop: &AtomicBool) -> VariantStats {
    let service = system
        .nodes
        .iter()
        .position(|n| matches!(n, Node::Service(_)))
        .map(|i| i as sim::ActorId);
    let next = AtomicU64::new(0);
    let total = Mutex::new(VariantStats::default());
    let worker = || {
        let mut sim = Sim::new(system);
        let mut tracer = MetricsTracer::default();
        let mut local = VariantStats::default();
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let claimed = next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < runs).then(|| n.saturating_add(CHUNK).min(runs))
            });
            let Ok(lo) = claimed else {
                break;
            };
            for seed in lo..lo.saturating_add(CHUNK).min(runs) {
                tracer.reset();
                let source = Source::Seed {
                    seed,
                    record: false,
                };
                let outcome = sim::guarded(|| sim.run(system, source, &mut tracer))
                    .map_or_else(Outcome::Panicked, |report| report.outcome);
                let m = tracer.finish(&outcome, &mut local.times_to_effect_us);
                local.runs += 1;
                match &outcome {
                    Outcome::Holds => {}
                    Outcome::Inconclusive(_) => local.inconclusive += 1,
                    Outcome::Violation(_) => local.violations += 1,
                    Outcome::Panicked(_) => local.panics += 1,
                }
                if let Some(name) = failure_name(&outcome) {
                    if local.first_failure.is_none_or(|f| seed < f.0) {
                        local.first_failure = Some((seed, name));
                    }
                }
                local.duplicate_runs += u64::from(m.duplicate);
                local.lost_runs += u64::from(m.lost);
                local.unknown_runs += u64::from(m.unknown);
                local.operations += u64::from(m.operations);
                local.attempts += u64::from(m.attempts);
                local.peak_requests_sum += u64::from(m.peak_requests_per_s);
                // The service only drops a key to replace an expired one with the
                // same key in one step, so its size at the end of a run is the peak.
                if let Some(NodeStorage::Service(s)) = service.and_then(|a| sim.storage(a)) {
                    local.peak_dedup_keys = local.peak_dedup_keys.max(s.keys.len() as u64);
                }
            }
        }
        total.lock().expect("workers do not panic").merge(local);
    };
    if jobs <= 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(worker);
            }
        });
    }
    let mut stats = total.into_inner().expect("workers finished");
    stats.times_to_effect_us.sort_unstable();
    debug_assert_eq!(
        stats.runs,
        next.load(Ordering::Relaxed),
        "seeds 0..next ran"
    );
    stats
}

/// One row of the result: the variant's values (one per axis) and its numbers.
pub struct Row {
    pub values: Vec<String>,
    pub stats: VariantStats,
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    let mut axes: Vec<Axis> = Vec::new();
    for s in &a.set {
        let axis = parse_axis(s).map_err(|m| UsageError(format!("error: --set {m}\n")))?;
        if axes.iter().any(|x| x.key == axis.key) {
            return Err(UsageError(format!(
                "error: --set {} is given twice\nhelp: list all its values in one --set, e.g. {}=1,3\n",
                axis.key, axis.key
            )));
        }
        axes.push(axis);
    }
    let jobs = super::check::jobs(a.jobs)?;
    // Load every variant before running any, so a bad value fails at once.
    let combos = cross_product(&axes);
    let mut variants = Vec::with_capacity(combos.len());
    for combo in &combos {
        let overrides: Vec<Override> = axes
            .iter()
            .zip(combo)
            .map(|(axis, &i)| Override {
                key: axis.key.clone(),
                value: axis.values[i].clone(),
            })
            .collect();
        let scenario = scenarios::load(&a.scenario, &overrides)?;
        variants.push((overrides, scenario));
    }
    let runs = a.runs.unwrap_or(variants[0].1.runs);
    if runs == 0 {
        return Err(UsageError("error: --runs must be at least 1\nhelp: give the number of seeds to run, e.g. --runs 1000\n".into()));
    }
    let name = variants[0].1.name.clone();
    crate::progress::install_ctrl_c();
    // Ctrl-C stops the variant that is running; the rows of what ran print.
    let mut rows: Vec<Row> = Vec::with_capacity(variants.len());
    for (overrides, scenario) in &variants {
        if crate::progress::STOP.load(Ordering::Relaxed) {
            break;
        }
        let stats = run_variant(&scenario.system, runs, jobs, &crate::progress::STOP);
        rows.push(Row {
            values: overrides.iter().map(|o| o.value.clone()).collect(),
            stats,
        });
    }
    let interrupted = rows.len() < variants.len() || rows.iter().any(|r| r.stats.runs < runs);
    let mut out = match a.format {
        Format::Table => table(&name, runs, &axes, &rows, false),
        Format::Markdown => table(&name, runs, &axes, &rows, true),
        Format::Csv => csv(&axes, &rows),
        Format::Json => json(&name, runs, &axes, &rows),
    };
    if interrupted {
        let partial: Vec<String> = rows
            .iter()
            .filter(|r| r.stats.runs < runs)
            .map(|r| format!("{} ran seeds 0..{}", r.values.join(" "), r.stats.runs))
            .collect();
        let note = format!(
            "interrupted (Ctrl-C): {} of {} variants ran{}{}; the rows cover only what ran",
            rows.len(),
            variants.len(),
            if partial.is_empty() { "" } else { ", " },
            partial.join(", ")
        );
        match a.format {
            Format::Table | Format::Markdown => out.push_str(&format!("\n{note}\n")),
            Format::Json => {
                out.push_str(&crate::render::json_line(
                    "interrupted",
                    serde_json::json!({
                        "variants_run": rows.len(),
                        "variants": variants.len(),
                        "note": note,
                    }),
                ));
                out.push('\n');
            }
            Format::Csv => crate::eoutln!("{note}"),
        }
    }
    crate::out!("{out}");
    if let Some(path) = &a.plot {
        let svg = plot::svg(&name, runs, &axes, &rows);
        std::fs::write(path, svg)
            .map_err(|e| UsageError(format!("error: cannot write {}: {e}\n", path.display())))?;
    }
    Ok(if interrupted {
        crate::progress::INTERRUPTED
    } else {
        crate::exit::HOLDS
    })
}

// ------------------------------------------------------------------ output

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A duration for people: the unit that keeps the number short.
fn human_time(us: u64) -> String {
    const MS: u64 = 1_000;
    const S: u64 = 1_000 * MS;
    if us < MS {
        format!("{us} µs")
    } else if us < S {
        format!("{} ms", us / MS)
    } else if us < 60 * S {
        format!("{:.1} s", us as f64 / S as f64)
    } else if us < 3600 * S {
        format!("{:.1} min", us as f64 / (60 * S) as f64)
    } else if us < 86_400 * S {
        format!("{:.1} h", us as f64 / (3600 * S) as f64)
    } else {
        format!("{:.1} d", us as f64 / (86_400 * S) as f64)
    }
}

fn verdict_text(s: &VariantStats) -> String {
    match s.first_failure {
        Some((_, invariant)) => format!("violation: {invariant}"),
        None => s.verdict().to_string(),
    }
}

fn table(name: &str, runs: u64, axes: &[Axis], rows: &[Row], markdown: bool) -> String {
    // Keys with one value are the same in every row: said once, above the table.
    let varying: Vec<usize> = (0..axes.len())
        .filter(|&i| axes[i].values.len() > 1)
        .collect();
    let fixed: Vec<String> = (0..axes.len())
        .filter(|&i| axes[i].values.len() == 1)
        .map(|i| format!("{}={}", axes[i].key, axes[i].values[0]))
        .collect();
    let mut header: Vec<String> = varying.iter().map(|&i| axes[i].key.clone()).collect();
    let key_columns = header.len();
    header.extend(
        [
            "verdict",
            "failing",
            "violation rate (95% CI)",
            "dup",
            "lost",
            "unknown",
            "attempts/op",
            "peak req/s",
            "effect p50",
            "effect p99",
            "dedup keys",
            "lowest failing seed",
        ]
        .map(String::from),
    );
    let mut cells: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let mut c: Vec<String> = varying.iter().map(|&i| r.values[i].clone()).collect();
        c.push(verdict_text(s));
        c.push(format!("{}/{}", s.failing(), s.runs));
        c.push(format!(
            "{} ({}–{})",
            pct(s.violation_rate()),
            pct(lo),
            pct(hi)
        ));
        c.push(pct(s.share(s.duplicate_runs)));
        c.push(pct(s.share(s.lost_runs)));
        c.push(pct(s.share(s.unknown_runs)));
        c.push(s.amplification().map_or("-".into(), |x| format!("{x:.2}")));
        c.push(
            s.peak_requests_per_s()
                .map_or("-".into(), |x| format!("{x:.1}")),
        );
        for q in [0.5, 0.99] {
            c.push(s.time_to_effect_us(q).map_or("-".into(), human_time));
        }
        c.push(s.peak_dedup_keys.to_string());
        c.push(s.first_failure.map_or("-".into(), |f| f.0.to_string()));
        cells.push(c);
    }
    let mut out = String::new();
    let fixed_text = if fixed.is_empty() {
        String::new()
    } else {
        format!("; fixed: {}", fixed.join(" "))
    };
    let each = if rows.iter().any(|r| r.stats.runs < runs) {
        format!("asked for seeds 0..{runs} each, interrupted (see below)")
    } else {
        format!("each on seeds 0..{runs}")
    };
    out.push_str(&format!(
        "{name}: {} variants, {each}{fixed_text}\n\n",
        rows.len()
    ));
    let width: Vec<usize> = (0..header.len())
        .map(|j| {
            cells
                .iter()
                .map(|c| c[j].chars().count())
                .chain([header[j].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Keys and verdicts read left to right; numbers line up on the right.
    let left = |j: usize| j <= key_columns;
    let pad = |text: &str, j: usize| {
        let fill = " ".repeat(width[j] - text.chars().count());
        if left(j) {
            format!("{text}{fill}")
        } else {
            format!("{fill}{text}")
        }
    };
    if markdown {
        let line = |c: &[String]| {
            let inner: Vec<String> = c.iter().enumerate().map(|(j, t)| pad(t, j)).collect();
            format!("| {} |\n", inner.join(" | "))
        };
        out.push_str(&line(&header));
        let rule: Vec<String> = (0..header.len())
            .map(|j| {
                let dashes = "-".repeat(width[j].max(3) - 1);
                if left(j) {
                    format!("{dashes}-")
                } else {
                    format!("{dashes}:")
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for c in &cells {
            out.push_str(&line(c));
        }
    } else {
        let line = |c: &[String]| {
            let inner: Vec<String> = c.iter().enumerate().map(|(j, t)| pad(t, j)).collect();
            format!("{}\n", inner.join("  ").trim_end())
        };
        out.push_str(&line(&header));
        let rule: Vec<String> = width.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&format!("{}\n", rule.join("  ")));
        for c in &cells {
            out.push_str(&line(c));
        }
    }
    out.push('\n');
    for item in LEGEND {
        let bullet = if markdown { "- " } else { "" };
        out.push_str(&format!("{bullet}{item}\n"));
    }
    out
}

/// What the columns mean, printed under the table (one item per line).
const LEGEND: &[&str] = &[
    "failing: runs that broke an invariant; the interval is Wilson's 95% score interval.",
    "dup, lost, unknown: share of runs in which an effect landed twice or more; in which an operation the client gave up on or was told was done, or an event whose change committed and that is in no dead-letter queue, had no effect when the run ended; in which the client saw an attempt end with an unknown outcome (a timeout).",
    "attempts/op: client attempts per business operation (1.00 = no retries).",
    "peak req/s: payment requests reaching the service in its busiest second of virtual time, averaged over runs (how synchronised the retries are).",
    "effect p50, p99: virtual time from an operation's intent to its first effect, over all operations of all runs that got one.",
    "dedup keys: the most idempotency keys the service held at once, over all runs.",
];

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

fn csv(axes: &[Axis], rows: &[Row]) -> String {
    let mut header: Vec<String> = axes.iter().map(|a| csv_field(&a.key)).collect();
    header.extend(
        [
            "verdict",
            "invariant",
            "lowest_failing_seed",
            "schedules",
            "failing",
            "inconclusive",
            "violation_rate",
            "ci95_low",
            "ci95_high",
            "duplicate_rate",
            "lost_rate",
            "unknown_rate",
            "attempts_per_operation",
            "peak_requests_per_sec",
            "effect_p50_us",
            "effect_p99_us",
            "peak_dedup_keys",
        ]
        .map(String::from),
    );
    let mut out = header.join(",") + "\n";
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let mut c: Vec<String> = r.values.iter().map(|v| csv_field(v)).collect();
        c.push(s.verdict().into());
        c.push(opt(s.first_failure.map(|f| f.1)));
        c.push(opt(s.first_failure.map(|f| f.0)));
        c.push(s.runs.to_string());
        c.push(s.failing().to_string());
        c.push(s.inconclusive.to_string());
        for x in [
            s.violation_rate(),
            lo,
            hi,
            s.share(s.duplicate_runs),
            s.share(s.lost_runs),
            s.share(s.unknown_runs),
        ] {
            c.push(format!("{x:.4}"));
        }
        c.push(opt(s.amplification().map(|x| format!("{x:.4}"))));
        c.push(opt(s.peak_requests_per_s().map(|x| format!("{x:.4}"))));
        c.push(opt(s.time_to_effect_us(0.5)));
        c.push(opt(s.time_to_effect_us(0.99)));
        c.push(s.peak_dedup_keys.to_string());
        out.push_str(&(c.join(",") + "\n"));
    }
    out
}

fn json(name: &str, runs: u64, axes: &[Axis], rows: &[Row]) -> String {
    use crate::render::json_line;
    let round = |x: f64| (x * 1e6).round() / 1e6;
    let mut out = json_line(
        "sweep",
        serde_json::json!({
            "scenario": name,
            "seeds": {"start": 0, "end": runs},
            "variants": rows.len(),
            "keys": axes.iter().map(|a| serde_json::json!({"key": a.key, "values": a.values})).collect::<Vec<_>>(),
        }),
    ) + "\n";
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let set: serde_json::Map<String, serde_json::Value> = axes
            .iter()
            .zip(&r.values)
            .map(|(a, v)| (a.key.clone(), serde_json::Value::from(v.as_str())))
            .collect();
        out.push_str(&json_line(
            "variant",
            serde_json::json!({
                "set": set,
                "verdict": s.verdict(),
                "invariant": s.first_failure.map(|f| f.1),
                "lowest_failing_seed": s.first_failure.map(|f| f.0),
                "schedules": s.runs,
                "failing": s.failing(),
                "inconclusive": s.inconclusive,
                "violation_rate": round(s.violation_rate()),
                "ci95": [round(lo), round(hi)],
                "duplicate_rate": round(s.share(s.duplicate_runs)),
                "lost_rate": round(s.share(s.lost_runs)),
                "unknown_rate": round(s.share(s.unknown_runs)),
                "attempts_per_operation": s.amplification().map(round),
                "peak_requests_per_sec": s.peak_requests_per_s().map(round),
                "effect_p50_us": s.time_to_effect_us(0.5),
                "effect_p99_us": s.time_to_effect_us(0.99),
                "peak_dedup_keys": s.peak_dedup_keys,
            }),
        ));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_on_top_level_commas_only() {
        assert_eq!(split_values("1,3, 5").unwrap(), ["1", "3", "5"]);
        assert_eq!(
            split_values("[0,100],50,[10, 20]").unwrap(),
            ["[0,100]", "50", "[10, 20]"]
        );
        assert_eq!(split_values(r#""a,b",none"#).unwrap(), [r#""a,b""#, "none"]);
        assert!(split_values("1,,2").is_err());
        assert!(split_values("[0,1").is_err());
        assert!(split_values("0]").is_err());
    }

    #[test]
    fn the_cross_product_varies_the_first_key_slowest() {
        let axes = [
            Axis {
                key: "a".into(),
                values: vec!["1".into(), "2".into()],
            },
            Axis {
                key: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
            },
        ];
        let c = cross_product(&axes);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], [0, 0]);
        assert_eq!(c[1], [0, 1]);
        assert_eq!(c[3], [1, 0]);
    }
}
