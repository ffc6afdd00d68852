//! `idemsim sweep`: which design, with which parameters?
//!
//! Runs the cross product of `--set KEY=V1,V2,...` values on the same seeds
//! (0..N for every variant), so that a difference between two rows comes from
//! the design and not from luck, and prints one row per variant.

mod html;
mod plot;
pub mod stats;

use crate::scenarios::{self, UsageError};
use models::core::hist;
use models::core::ledger::counter;
use models::core::{Layer, Metric};
use models::scenario::Override;
use models::System;
use sim::{explore, SeedRange, Summary};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
/// The output formats of `idemsim sweep`.
pub enum Format {
    /// An aligned table for a terminal.
    Table,
    /// A Markdown table.
    Markdown,
    /// Comma-separated values.
    Csv,
    /// JSON Lines: a `sweep` record, then one `variant` per row.
    Json,
}

#[derive(clap::Args)]
/// The arguments of `idemsim sweep`.
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
    /// What --plot draws: violation_rate, or metric fields as the CSV header
    /// names them (e.g. attempts_per_run,completion_us), one panel each.
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        default_value = "violation_rate",
        requires = "plot"
    )]
    plot_metric: Vec<String>,
    /// Also write an HTML report: every metric against the swept values, each
    /// variant linked to the report of its lowest failing seed (written next to it).
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
}

/// One `--set`: a key path and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// The scenario key path.
    pub key: String,
    /// Its values, as TOML.
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...` (commas inside brackets or quotes belong to a value).
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

/// A variant's numbers over all its seeds: the sweep's summary, with the
/// effect ledger's counters (constant memory, merged order-independently).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantStats {
    /// The sweep's summary over the variant's seeds.
    pub summary: Summary,
}

impl VariantStats {
    /// Seeds run.
    pub fn runs(&self) -> u64 {
        self.summary.tally.schedules
    }

    fn counter(&self, name: &str) -> u64 {
        self.summary
            .tally
            .counter(name)
            .and_then(|c| c.first())
            .copied()
            .unwrap_or(0)
    }

    fn slot(&self, name: &str, i: usize) -> u64 {
        self.summary
            .tally
            .counter(name)
            .and_then(|c| c.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// The lowest failing seed and its invariant.
    pub fn first_failure(&self) -> Option<(u64, &'static str)> {
        self.summary.first_failure.as_ref().map(|f| {
            let name = match &f.outcome {
                sim::Outcome::Violation(v) => v.invariant,
                _ => "model-panic",
            };
            (f.seed, name)
        })
    }

    /// Runs that failed (violations and panics).
    pub fn failing(&self) -> u64 {
        self.summary.tally.failing()
    }

    /// Runs that hit a limit.
    pub fn inconclusive(&self) -> u64 {
        self.summary.tally.inconclusive
    }

    /// `violation`, `inconclusive` or `holds`.
    pub fn verdict(&self) -> &'static str {
        if self.failing() > 0 {
            "violation"
        } else if self.inconclusive() > 0 {
            "inconclusive"
        } else {
            "holds"
        }
    }

    fn share(&self, n: u64, of: u64) -> Option<f64> {
        (of > 0).then(|| n as f64 / of as f64)
    }

    /// The share of runs that failed.
    pub fn violation_rate(&self) -> f64 {
        self.share(self.failing(), self.runs()).unwrap_or(0.0)
    }

    /// The 95% Wilson interval of that share.
    pub fn interval(&self) -> (f64, f64) {
        stats::wilson(self.failing(), self.runs(), stats::Z95)
    }

    /// Business operations: the clients' and the committed events.
    pub fn operations(&self) -> u64 {
        self.counter(counter::OPERATIONS) + self.counter(counter::EVENTS)
    }

    /// The value of one metric column; `None` when it has no meaning here.
    pub fn metric(&self, m: &Metric) -> Option<f64> {
        let runs = self.runs();
        match m {
            Metric::Duplicated => self.share(self.counter(counter::RUNS_DUPLICATED), runs),
            Metric::Lost => self.share(self.counter(counter::RUNS_LOST), runs),
            Metric::Unknown => self.share(
                self.counter(counter::UNKNOWN),
                self.counter(counter::OPERATIONS),
            ),
            Metric::AttemptsPerOperation => self.share(
                self.counter(counter::ATTEMPTS),
                self.counter(counter::OPERATIONS),
            ),
            Metric::ReceivedPerOperation(layer) => self.share(
                self.slot(counter::RECEIVED, usize::from(layer.index)),
                self.operations(),
            ),
            Metric::PeakPerSecond(layer) => self.share(
                self.slot(counter::PEAK_PER_S, usize::from(layer.index)),
                runs,
            ),
            Metric::TimeToEffect => self.time_to_effect_us(0.5).map(|x| x as f64),
            Metric::DedupKeys => Some(self.counter(counter::PEAK_DEDUP_KEYS) as f64),
            Metric::AttemptsPerRun => self.share(self.counter(counter::ATTEMPTS), runs),
            Metric::CompletionTime => self.share(
                self.counter(counter::COMPLETION_US),
                self.counter(counter::RUNS_COMPLETED),
            ),
            Metric::ShedPerOperation(layer) => self
                .loaded(layer)
                .then(|| {
                    self.share(
                        self.slot(counter::SHED, layer.index.into()),
                        self.operations(),
                    )
                })
                .flatten(),
            Metric::Wasted(layer) => {
                let i = usize::from(layer.index);
                self.share(self.slot(counter::WASTED, i), self.slot(counter::WORK, i))
            }
            Metric::OverloadAfterFaults(layer) => self
                .loaded(layer)
                .then(|| {
                    let i = usize::from(layer.index);
                    self.share(self.slot(counter::OVERLOAD_AFTER_FAULTS, i), runs)
                })
                .flatten(),
            Metric::RetriesDenied => self.nonzero_per_operation(counter::RETRIES_DENIED),
            Metric::FastFailed => self.nonzero_per_operation(counter::FAST_FAILED),
        }
    }

    /// Whether `layer` has a capacity that was ever busy or full: its load
    /// columns mean something.
    fn loaded(&self, layer: &Layer) -> bool {
        let i = usize::from(layer.index);
        self.slot(counter::WORK, i) + self.slot(counter::SHED, i) > 0
    }

    /// `name` per operation, or nothing when it never happened (no client
    /// has a budget or a breaker, or none was ever used).
    fn nonzero_per_operation(&self, name: &str) -> Option<f64> {
        let n = self.counter(name);
        (n > 0).then(|| self.share(n, self.operations())).flatten()
    }

    /// The `q` quantile (0..=1) of the time from intent (or commit) to first effect.
    pub fn time_to_effect_us(&self, q: f64) -> Option<u64> {
        hist::quantile(self.summary.tally.counter(counter::TIME_TO_EFFECT)?, q)
    }
}

/// Runs seeds `0..runs` of one variant on `jobs` threads. `stop` (Ctrl-C)
/// ends it between chunks; every chunk handed out runs to its end, so the
/// seeds that ran are always `0..stats.runs()`.
fn run_variant(system: &System, runs: u64, jobs: usize, stop: &AtomicBool) -> VariantStats {
    let seeds = SeedRange {
        start: 0,
        end: runs,
    };
    VariantStats {
        summary: explore(system, seeds, jobs, stop, &|_| {}),
    }
}

/// One row of the result: the variant's values (one per axis) and its numbers.
pub struct Row {
    /// The variant's value of each swept key, in the order of the axes.
    pub values: Vec<String>,
    /// Its numbers.
    pub stats: VariantStats,
}

/// Runs `idemsim sweep`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let mut axes: Vec<Axis> = Vec::new();
    for s in &a.set {
        let axis = parse_axis(s).map_err(|m| UsageError(format!(
                "error: --set {m}\nhelp: write --set KEY=V1,V2,..., e.g. --set client.retry.max_attempts=1,3,5\n"
            )))?;
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
        return Err(UsageError(
            "error: --runs must be at least 1\nhelp: give --runs 1 or more, or leave it out to use the scenario's run.runs\n".into(),
        ));
    }
    let name = variants[0].1.name.clone();
    let metrics = variants[0].1.system.model.metrics();
    let plot_fields = fields(metrics);
    let ys = plot::ys(&a.plot_metric, &plot_fields)?;
    crate::progress::install_ctrl_c();
    // Ctrl-C stops the variant that is running; the rows of what ran print.
    let mut rows: Vec<Row> = Vec::with_capacity(variants.len());
    for (overrides, scenario) in &variants {
        if crate::progress::STOP.load(Ordering::Relaxed) {
            break;
        }
        let sets: String = overrides
            .iter()
            .map(|o| {
                let set = format!("{}={}", o.key, o.value);
                format!(" --set {}", super::check::shell_word(&set))
            })
            .collect();
        let replay = format!("idemsim replay {}{sets}", a.scenario);
        let seeds = SeedRange {
            start: 0,
            end: runs,
        };
        let first = crate::external::DETERMINISM_SEEDS;
        crate::external::determinism_check_first(scenario, seeds, first, &replay)?;
        let stats = run_variant(&scenario.system, runs, jobs, &crate::progress::STOP);
        crate::external::check_summary(scenario, &replay, &stats.summary)?;
        rows.push(Row {
            values: overrides.iter().map(|o| o.value.clone()).collect(),
            stats,
        });
    }
    let interrupted = rows.len() < variants.len() || rows.iter().any(|r| r.stats.runs() < runs);
    let mut out = match a.format {
        Format::Table => table(&name, runs, &axes, &rows, metrics, false),
        Format::Markdown => table(&name, runs, &axes, &rows, metrics, true),
        Format::Csv => csv(&axes, &rows, metrics),
        Format::Json => json(&name, runs, &axes, &rows, metrics),
    };
    if interrupted {
        let partial: Vec<String> = rows
            .iter()
            .filter(|r| r.stats.runs() < runs)
            .map(|r| format!("{} ran seeds 0..{}", r.values.join(" "), r.stats.runs()))
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
        let svg = plot::svg(&name, runs, &axes, &rows, &ys);
        std::fs::write(path, svg).map_err(|e| {
            UsageError(format!(
                "error: cannot write {}: {e}\nhelp: check that its folder exists and is writable\n",
                path.display()
            ))
        })?;
    }
    if let Some(path) = &a.html {
        let from = scenarios::locate(&a.scenario)?;
        let budget = super::shrink::Budget::from_flags(None, None)?;
        let written = html::write(
            path,
            &html::Input {
                name: &name,
                runs,
                axes: &axes,
                rows: &rows,
                metrics,
                variants: &variants,
                from: &from,
                budget,
            },
        )?;
        crate::eout!(
            "wrote {} and {written} report(s) of failing seeds next to it\n",
            path.display()
        );
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
    match s.first_failure() {
        Some((_, invariant)) => format!("violation: {invariant}"),
        None => s.verdict().to_string(),
    }
}

/// How a metric's value reads in a table cell.
#[derive(Clone, Copy)]
enum Shape {
    Percent,
    Ratio,
    Rate,
    Time,
    Count,
}

/// Reads one column's value from a variant.
type Reader = Box<dyn Fn(&VariantStats) -> Option<f64>>;

/// One column a metric contributes: its machine name, its header, what it
/// means, and how to read its value from a variant.
struct Field {
    name: String,
    header: String,
    legend: String,
    shape: Shape,
    value: Reader,
    /// Left out of a table in which no variant has a value for it.
    optional: bool,
}

fn fields(metrics: &[Metric]) -> Vec<Field> {
    let mut out = Vec::new();
    for &m in metrics {
        let of = move |s: &VariantStats| s.metric(&m);
        let optional = matches!(
            m,
            Metric::ShedPerOperation(_)
                | Metric::Wasted(_)
                | Metric::OverloadAfterFaults(_)
                | Metric::RetriesDenied
                | Metric::FastFailed
        );
        let field = |name: &str, header: &str, legend: &str, shape| Field {
            name: name.to_string(),
            header: header.to_string(),
            legend: legend.to_string(),
            shape,
            value: Box::new(of),
            optional,
        };
        match m {
            Metric::Duplicated => out.push(field("duplicate_rate", "dup", "dup: share of runs in which some operation took effect twice or more.", Shape::Percent)),
            Metric::Lost => out.push(field("lost_rate", "lost", "lost: share of runs that reached their end with an owed effect missing (told done, given up silently, or a committed event neither handled nor dead-lettered).", Shape::Percent)),
            Metric::Unknown => out.push(field("unknown_rate", "unknown", "unknown: share of operations whose client finally knows nothing (a dead letter with an unknown outcome, for a person to reconcile).", Shape::Percent)),
            Metric::AttemptsPerOperation => out.push(field("attempts_per_operation", "attempts/op", "attempts/op: client attempts per business operation (1.00 = no retries).", Shape::Ratio)),
            Metric::ReceivedPerOperation(layer) => out.push(field(
                &format!("{}_requests_per_operation", layer.name),
                &format!("{}/op", layer.name),
                &format!("{0}/op: requests the {0} received per business operation: retries at every layer above it multiply here.", layer.name),
                Shape::Ratio,
            )),
            Metric::PeakPerSecond(layer) => out.push(field(
                &format!("peak_{}_requests_per_sec", layer.name),
                "peak req/s",
                &format!("peak req/s: requests reaching the {} in its busiest second of virtual time, averaged over runs (how synchronised the retries are).", layer.name),
                Shape::Rate,
            )),
            Metric::TimeToEffect => {
                for (q, name, header) in [(0.5, "effect_p50_us", "effect p50"), (0.99, "effect_p99_us", "effect p99")] {
                    out.push(Field {
                        name: name.into(),
                        header: header.into(),
                        legend: if q < 0.9 {
                            "effect p50, p99: virtual time from an operation's intent (or commit) to its first effect, over all operations that got one (a histogram, within 9%).".into()
                        } else {
                            String::new()
                        },
                        shape: Shape::Time,
                        value: Box::new(move |s: &VariantStats| s.time_to_effect_us(q).map(|x| x as f64)),
                        optional: false,
                    });
                }
            }
            Metric::DedupKeys => out.push(field("peak_dedup_keys", "dedup keys", "dedup keys: the most idempotency keys the service held at once, over all runs.", Shape::Count)),
            Metric::AttemptsPerRun => out.push(field("attempts_per_run", "attempts/run", "attempts/run: client attempts in a run, all operations together, mean over runs (the run's total work).", Shape::Count)),
            Metric::CompletionTime => out.push(field("completion_us", "completion", "completion: virtual time from a run's first intent to its last operation's end, mean over the runs in which every operation ended.", Shape::Time)),
            Metric::ShedPerOperation(layer) => out.push(field(
                &format!("{}_shed_per_operation", layer.name),
                "shed/op",
                &format!("shed/op: requests the {} refused with 503 because every worker was busy and its queue full, per business operation.", layer.name),
                Shape::Ratio,
            )),
            Metric::Wasted(layer) => out.push(field(
                &format!("{}_wasted_share", layer.name),
                "wasted",
                &format!("wasted: share of the requests the {}'s workers took whose client had already stopped waiting for them: work for nobody.", layer.name),
                Shape::Percent,
            )),
            Metric::OverloadAfterFaults(layer) => out.push(field(
                &format!("{}_overload_after_faults_us", layer.name),
                "overloaded after",
                &format!("overloaded after: how long after the faults stopped the {} still shed requests or worked for nobody, averaged over runs (0 µs: back to normal when they stopped).", layer.name),
                Shape::Time,
            )),
            Metric::RetriesDenied => out.push(field("retries_denied_per_operation", "denied/op", "denied/op: retries the clients' budgets refused (the operation was given up instead), per business operation.", Shape::Ratio)),
            Metric::FastFailed => out.push(field("fast_failed_per_operation", "fast-fail/op", "fast-fail/op: attempts the clients' open circuit breakers refused without sending them (the operation was given up), per business operation.", Shape::Ratio)),
        }
    }
    out
}

fn cell(f: &Field, s: &VariantStats) -> String {
    match ((f.value)(s), f.shape) {
        (None, _) => "-".into(),
        (Some(x), Shape::Percent) => pct(x),
        (Some(x), Shape::Ratio) => format!("{x:.2}"),
        (Some(x), Shape::Rate) => format!("{x:.1}"),
        (Some(x), Shape::Time) => human_time(x as u64),
        (Some(x), Shape::Count) => format!("{x:.0}"),
    }
}

fn table(
    name: &str,
    runs: u64,
    axes: &[Axis],
    rows: &[Row],
    metrics: &[Metric],
    markdown: bool,
) -> String {
    // Keys with one value are the same in every row: said once, above the table.
    let varying: Vec<usize> = (0..axes.len())
        .filter(|&i| axes[i].values.len() > 1)
        .collect();
    let fixed: Vec<String> = (0..axes.len())
        .filter(|&i| axes[i].values.len() == 1)
        .map(|i| format!("{}={}", axes[i].key, axes[i].values[0]))
        .collect();
    // A load column no variant has a value for (a service without a capacity,
    // clients without a budget) says nothing: the table leaves it out, CSV
    // and JSON keep it.
    let fields: Vec<Field> = fields(metrics)
        .into_iter()
        .filter(|f| !f.optional || rows.iter().any(|r| (f.value)(&r.stats).is_some()))
        .collect();
    let mut header: Vec<String> = varying.iter().map(|&i| axes[i].key.clone()).collect();
    let key_columns = header.len();
    header.extend(["verdict", "failing", "violation rate (95% CI)"].map(String::from));
    header.extend(fields.iter().map(|f| f.header.clone()));
    header.push("lowest failing seed".into());
    let mut cells: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let mut c: Vec<String> = varying.iter().map(|&i| r.values[i].clone()).collect();
        c.push(verdict_text(s));
        c.push(format!("{}/{}", s.failing(), s.runs()));
        c.push(format!(
            "{} ({}–{})",
            pct(s.violation_rate()),
            pct(lo),
            pct(hi)
        ));
        c.extend(fields.iter().map(|f| cell(f, s)));
        c.push(s.first_failure().map_or("-".into(), |f| f.0.to_string()));
        cells.push(c);
    }
    let mut out = String::new();
    let fixed_text = if fixed.is_empty() {
        String::new()
    } else {
        format!("; fixed: {}", fixed.join(" "))
    };
    let each = if rows.iter().any(|r| r.stats.runs() < runs) {
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
    let legend = std::iter::once(
        "failing: runs that broke an invariant; the interval is Wilson's 95% score interval."
            .to_string(),
    )
    .chain(
        fields
            .iter()
            .map(|f| f.legend.clone())
            .filter(|l| !l.is_empty()),
    );
    for item in legend {
        let bullet = if markdown { "- " } else { "" };
        out.push_str(&format!("{bullet}{item}\n"));
    }
    out
}

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

/// A metric's value for CSV and JSON: whole numbers for times and counts.
fn raw(f: &Field, s: &VariantStats) -> serde_json::Value {
    match ((f.value)(s), f.shape) {
        (None, _) => serde_json::Value::Null,
        (Some(x), Shape::Time | Shape::Count) => serde_json::json!(x.round() as u64),
        (Some(x), _) => serde_json::json!((x * 1e6).round() / 1e6),
    }
}

fn csv(axes: &[Axis], rows: &[Row], metrics: &[Metric]) -> String {
    let fields = fields(metrics);
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
        ]
        .map(String::from),
    );
    header.extend(fields.iter().map(|f| f.name.clone()));
    let mut out = header.join(",") + "\n";
    for r in rows {
        let s = &r.stats;
        let (lo, hi) = s.interval();
        let mut c: Vec<String> = r.values.iter().map(|v| csv_field(v)).collect();
        c.push(s.verdict().into());
        c.push(opt(s.first_failure().map(|f| f.1)));
        c.push(opt(s.first_failure().map(|f| f.0)));
        c.push(s.runs().to_string());
        c.push(s.failing().to_string());
        c.push(s.inconclusive().to_string());
        for x in [s.violation_rate(), lo, hi] {
            c.push(format!("{x:.4}"));
        }
        c.extend(fields.iter().map(|f| match raw(f, s) {
            serde_json::Value::Null => String::new(),
            v => v.to_string(),
        }));
        out.push_str(&(c.join(",") + "\n"));
    }
    out
}

fn json(name: &str, runs: u64, axes: &[Axis], rows: &[Row], metrics: &[Metric]) -> String {
    use crate::render::json_line;
    let round = |x: f64| (x * 1e6).round() / 1e6;
    let fields = fields(metrics);
    let mut out = json_line(
        "sweep",
        serde_json::json!({
            "scenario": name,
            "seeds": {"start": 0, "end": runs},
            "variants": rows.len(),
            "keys": axes.iter().map(|a| serde_json::json!({"key": a.key, "values": a.values})).collect::<Vec<_>>(),
            "metrics": fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
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
        let mut data = serde_json::json!({
            "set": set,
            "verdict": s.verdict(),
            "invariant": s.first_failure().map(|f| f.1),
            "lowest_failing_seed": s.first_failure().map(|f| f.0),
            "schedules": s.runs(),
            "failing": s.failing(),
            "inconclusive": s.inconclusive(),
            "violation_rate": round(s.violation_rate()),
            "ci95": [round(lo), round(hi)],
        });
        let obj = data.as_object_mut().expect("an object");
        for f in &fields {
            obj.insert(f.name.clone(), raw(f, s));
        }
        out.push_str(&json_line("variant", data));
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
