//! `idemsim sweep`: which design, with which parameters?
//!
//! Runs the cross product of `--set KEY=V1,V2,...` values on the same seeds
//! (0..N for every variant), so that a difference between two rows comes from
//! the design and not from luck, and prints one row per variant.

mod axis;
mod columns;
mod html;
mod output;
mod plot;
mod title;
mod variant;

pub use axis::{parse_axis, Axis};
pub use variant::{Row, Variant};

use axis::cross_product;
use columns::fields;
use idemsim::catalog::{self, UsageError};
use models::scenario::{Override, Strategy};
use output::{csv, json, table, View};
use sim::SeedRange;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use variant::run_variant;

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
    /// Scenario name (from `idemsim list`) or path to a .toml file. Several
    /// scenarios of one model are compared as one more swept key, `scenario`,
    /// after the --set keys: each runs every combination of their values.
    #[arg(required = true, num_args = 1..)]
    scenarios: Vec<String>,
    /// A scenario key and the values to try, e.g. client.retry.max_attempts=1,3,5.
    /// Repeat for a cross product; a single value fixes the key for every variant.
    /// Commas inside [ ] or quotes belong to the value: network.loss_per_mille=[0,100],50.
    /// Each value once; at most 10000 variants in all.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", required = true)]
    set: Vec<String>,
    /// Seeds 0..N, the same for every variant, 1 to 10^12 [default: the scenario's run.runs].
    #[arg(long)]
    runs: Option<u64>,
    #[command(flatten)]
    seeds: super::common::SeedFlags,
    /// Worker threads [default: all cores]. The output does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// Output format; json is JSON Lines.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// The table's columns after the swept keys, in this order (table and
    /// markdown only; CSV and JSON keep every column): verdict, failing,
    /// violation_rate, lowest_failing_seed, and the model's metrics as the CSV
    /// header names them, e.g. duplicate_rate, lost_rate, attempts_per_run,
    /// completion_us, effect_p99_us. A name the model lacks is refused with
    /// the names it has.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    columns: Vec<String>,
    /// Leave out the legend under the table (a page of several tables explains
    /// the columns once).
    #[arg(long)]
    no_legend: bool,
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
    /// Names a line of --plot in your words: VALUE=TEXT, VALUE one of the
    /// swept values that make the lines (a scenario's name, a jitter), e.g.
    /// --plot-label 'contention-no-jitter=exponential, no jitter'. Repeat for
    /// each line. Without it a line reads KEY=VALUE, a value `none` with what
    /// it means, and a scenario by its name.
    #[arg(long, value_name = "VALUE=TEXT", requires = "plot")]
    plot_label: Vec<String>,
    /// Draws another program's numbers over the lines of --plot, as diamonds
    /// with error bars: a CSV file with the header x,series,metric,value,low,high
    /// (x a value of the x key, series a line's label or swept value, metric a
    /// --plot-metric name, the numbers in the CSV output's units: µs, shares
    /// 0..1); a first line "# TEXT" names the source in the legend.
    #[arg(long, value_name = "FILE.csv", requires = "plot")]
    plot_reference: Option<PathBuf>,
    /// Also write an HTML report: every metric against the swept values, each
    /// variant linked to the report of its lowest failing seed (written next to it;
    /// all the files or none).
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
}

/// Runs `idemsim sweep`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let axes = parse_axes(&a.set)?;
    check_axes(&axes)?;
    let jobs = super::common::jobs(a.jobs)?;
    super::common::runs("--runs", a.runs)?;
    check_output_files(&a)?;
    let (entries, axes) = scenarios_axis(&a.scenarios, axes)?;
    let variants = load_variants(&entries, &axes)?;
    let seeds = seeds_of(&a, &variants)?;
    let runs = seeds.len();
    let name = sweep_name(&entries, &variants);
    let title = sweep_title(&variants);
    let metrics = variants[0].scenario.system.model.metrics();
    let plot_fields = fields(metrics);
    let ys = plot::ys(&a.plot_metric, &plot_fields)?;
    let view = view(&a, &plot_fields)?;
    let labels = plot::labels(&a.plot_label, &axes)?;
    let against = plot::reference::Against {
        axes: &axes,
        labels: &labels,
        fields: &plot_fields,
    };
    let reference = a.plot_reference.as_deref();
    let reference = reference.map(|path| plot::reference::load(path, &against));
    let reference = reference.transpose()?;
    idemsim::progress::install_ctrl_c();
    let rows = run_rows(&entries, &variants, seeds, jobs)?;
    let interrupted = rows.len() < variants.len() || rows.iter().any(|r| r.stats.runs() < runs);
    let mut out = match a.format {
        Format::Table | Format::Markdown => table(&name, seeds, &axes, &rows, metrics, &view),
        Format::Csv => csv(&axes, &rows, metrics),
        Format::Json => json(&name, seeds, &axes, &rows, metrics),
    };
    if interrupted {
        interrupted_note(a.format, &rows, variants.len(), seeds, &mut out);
    }
    idemsim::out!("{out}");
    if let Some(path) = &a.plot {
        let extras = plot::Extras {
            labels: &labels,
            reference: reference.as_ref(),
        };
        write_plot(path, &plot::svg(&title, seeds, &axes, &rows, &ys, &extras))?;
    }
    if let Some(path) = &a.html {
        let input = html::Input {
            name: &title,
            runs,
            axes: &axes,
            rows: &rows,
            metrics,
            variants: &variants,
            from: &entries,
            budget: idemsim::minimize::Budget::from_flags(None, None)?,
        };
        let written = html::write(path, &input)?;
        idemsim::eout!(
            "wrote {} and {written} report(s) of failing seeds next to it\n",
            path.display()
        );
    }
    Ok(if interrupted {
        idemsim::progress::INTERRUPTED
    } else {
        idemsim::exit::HOLDS
    })
}

/// The seeds every variant runs: `--seeds` or `--seed`, else the first
/// `--runs` (or the first variant's `run.runs`), of which there must be one.
fn seeds_of(a: &Args, variants: &[Variant]) -> Result<SeedRange, UsageError> {
    let seeds = a
        .seeds
        .or_first(a.runs.unwrap_or(variants[0].scenario.runs));
    if seeds.is_empty() {
        return Err(UsageError(
            "error: --runs must be at least 1\nhelp: give --runs 1 or more, or leave it out to use the scenario's run.runs\n".into(),
        ));
    }
    Ok(seeds)
}

/// The output files, before anything runs: a sweep that cannot write them
/// would run for nothing, or leave reports beside a path refused last.
fn check_output_files(a: &Args) -> Result<(), UsageError> {
    if let Some(path) = &a.plot {
        super::common::output_file("--plot", path, false)?;
    }
    if let Some(path) = &a.html {
        super::common::output_file("--html", path, true)?;
    }
    Ok(())
}

/// What the heading and the plot call the sweep: its scenario, or how many.
fn sweep_name(entries: &[Located], variants: &[Variant]) -> String {
    match entries {
        [_] => variants[0].scenario.name.clone(),
        more => format!("{} scenarios", more.len()),
    }
}

/// What the plot and the HTML page are headed with: the scenario, or the
/// scenarios by name (a count alone says nothing on a page read later), with
/// their shared prefix once: `contention-{no-backoff, full-jitter}`.
fn sweep_title(variants: &[Variant]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for v in variants {
        if !names.contains(&v.scenario.name.as_str()) {
            names.push(&v.scenario.name);
        }
    }
    title::scenarios(&names)
}

/// Writes the plot's SVG to `path`.
fn write_plot(path: &std::path::Path, svg: &str) -> Result<(), UsageError> {
    std::fs::write(path, svg).map_err(|e| {
        UsageError(format!(
            "error: cannot write {}: {e}\nhelp: check that its folder exists and is writable\n",
            path.display()
        ))
    })
}

/// How the table shows: `--columns` and `--no-legend`, which only a table has.
fn view(a: &Args, fields: &[columns::Field]) -> Result<View, UsageError> {
    let tabular = matches!(a.format, Format::Table | Format::Markdown);
    if !tabular && (!a.columns.is_empty() || a.no_legend) {
        let flag = if a.no_legend {
            "--no-legend"
        } else {
            "--columns"
        };
        return Err(UsageError(format!(
            "error: {flag} shapes the table, but --format {} prints every column and no legend\nhelp: leave {flag} out, or use --format table or markdown\n",
            if a.format == Format::Csv { "csv" } else { "json" }
        )));
    }
    let columns = if a.columns.is_empty() {
        None
    } else {
        Some(columns::select(&a.columns, fields).map_err(UsageError)?)
    };
    Ok(View {
        markdown: a.format == Format::Markdown,
        columns,
        legend: !a.no_legend,
    })
}

/// The `--set` flags as axes, each key once.
fn parse_axes(sets: &[String]) -> Result<Vec<Axis>, UsageError> {
    let mut axes: Vec<Axis> = Vec::new();
    for s in sets {
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
    Ok(axes)
}

/// A scenario as the command line named it, and where it was found.
type Located = (String, catalog::Entry);

/// The key of the axis that several scenarios make: the last, so that the
/// first `--set` key stays the plot's x axis.
pub(super) const SCENARIO_KEY: &str = "scenario";

/// Each scenario argument located, with its argument; several make one more
/// axis, [`SCENARIO_KEY`], whose values are the arguments. Refuses a
/// scenario given twice and scenarios of different models, whose columns
/// differ.
fn scenarios_axis(
    args: &[String],
    mut axes: Vec<Axis>,
) -> Result<(Vec<Located>, Vec<Axis>), UsageError> {
    let mut entries: Vec<Located> = Vec::with_capacity(args.len());
    for arg in args {
        if entries.iter().any(|(a, _)| a == arg) {
            return Err(UsageError(format!(
                "error: the scenario {arg} is given twice\nhelp: name each scenario once\n"
            )));
        }
        entries.push((arg.clone(), catalog::locate(arg)?));
    }
    if entries.len() > 1 {
        if axes.iter().any(|a| a.key == SCENARIO_KEY) {
            return Err(UsageError(format!(
                "error: --set {SCENARIO_KEY}=... and several scenarios both sweep `{SCENARIO_KEY}`\nhelp: name the scenarios before the flags, and leave out --set {SCENARIO_KEY}\n"
            )));
        }
        axes.push(Axis {
            key: SCENARIO_KEY.into(),
            values: args.to_vec(),
        });
    }
    Ok((entries, axes))
}

/// Every variant of the cross product, loaded before any runs so that a bad
/// value fails at once; refuses a swept strategy, two values that mean
/// the same scenario, and scenarios of different models.
fn load_variants(entries: &[Located], axes: &[Axis]) -> Result<Vec<Variant>, UsageError> {
    let combos = cross_product(axes);
    let mut variants: Vec<Variant> = Vec::with_capacity(combos.len());
    for (n, combo) in combos.iter().enumerate() {
        let mut from = 0;
        let mut overrides: Vec<Override> = Vec::with_capacity(axes.len());
        for (axis, &i) in axes.iter().zip(combo) {
            if entries.len() > 1 && axis.key == SCENARIO_KEY {
                from = i;
                continue;
            }
            overrides.push(Override {
                key: axis.key.clone(),
                value: axis.values[i].clone(),
            });
        }
        let (scenario_arg, entry) = &entries[from];
        let scenario = catalog::load_entry(entry, &overrides)
            .map_err(|e| in_variant(e, &overrides, n + 1, combos.len()))?;
        if scenario.strategy != Strategy::Seeds {
            if let Some(o) = overrides.iter().find(|o| o.key == STRATEGY_KEY) {
                return Err(UsageError(format!(
                    "error: --set {}={}: a sweep runs seeds 0..N of every variant, not a coverage-guided search\nhelp: leave {STRATEGY_KEY} out of the sweep (or give it seeds); a coverage-guided search is `idemsim check {} --strategy coverage`\n",
                    o.key, o.value, super::common::shell_word(scenario_arg)
                )));
            }
        }
        if let Some(first) = variants.first() {
            let (model, this) = (
                first.scenario.system.model.name(),
                scenario.system.model.name(),
            );
            if model != this {
                return Err(UsageError(format!(
                    "error: {} is a {this} scenario, {} a {model} one: a sweep compares variants on one model's columns\nhelp: sweep each model's scenarios separately\n",
                    scenario_arg, entries[first.from].0
                )));
            }
        }
        // Two values that make the same scenario text are one variant twice.
        if let Some(same) = variants.iter().find(|v| v.scenario.hash == scenario.hash) {
            return Err(UsageError(format!(
                "error: the variants {} and {} are the same scenario: their values mean the same\nhelp: give each value once\n",
                label(&same.overrides),
                label(&overrides)
            )));
        }
        variants.push(Variant {
            overrides,
            scenario,
            from,
        });
    }
    for (arg, _) in entries {
        let first = variants.iter().find(|v| entries[v.from].0 == *arg);
        if first.is_some_and(|v| v.scenario.strategy != Strategy::Seeds) {
            idemsim::eoutln!(
                "note: {} sets run.strategy = \"coverage\"; a sweep runs seeds 0..N of every variant (a coverage-guided search is `idemsim check {} --strategy coverage`)",
                arg,
                super::common::shell_word(arg)
            );
        }
    }
    Ok(variants)
}

/// Runs `seeds` of each variant in turn, one row each. Ctrl-C stops the
/// variant that is running; the rows of what ran are returned.
fn run_rows(
    entries: &[Located],
    variants: &[Variant],
    seeds: SeedRange,
    jobs: usize,
) -> Result<Vec<Row>, UsageError> {
    let mut rows: Vec<Row> = Vec::with_capacity(variants.len());
    for v in variants {
        if idemsim::progress::STOP.load(Ordering::Relaxed) {
            break;
        }
        let scenario = &v.scenario;
        let sets: String = v
            .overrides
            .iter()
            .map(|o| {
                let set = format!("{}={}", o.key, o.value);
                format!(" --set {}", super::common::shell_word(&set))
            })
            .collect();
        let replay = format!(
            "idemsim replay {}{sets}",
            super::common::shell_word(&entries[v.from].0)
        );
        let first = idemsim::external::DETERMINISM_SEEDS;
        idemsim::external::determinism_check_first(scenario, seeds, first, &replay)?;
        let stats = run_variant(&scenario.system, seeds, jobs, &idemsim::progress::STOP);
        idemsim::external::check_summary(scenario, &replay, &stats.summary)?;
        let values = (0..v.overrides.len())
            .map(|i| v.overrides[i].value.clone())
            .chain((entries.len() > 1).then(|| entries[v.from].0.clone()))
            .collect();
        rows.push(Row {
            values,
            design_warnings: super::common::WarningLine::of_tally(
                &scenario.design_warnings,
                &stats.summary.tally,
            ),
            stats,
        });
    }
    Ok(rows)
}

/// Says that Ctrl-C cut the sweep short, in the output's own format (CSV
/// has no room for a note, so it goes to stderr).
fn interrupted_note(
    format: Format,
    rows: &[Row],
    variants: usize,
    seeds: SeedRange,
    out: &mut String,
) {
    let partial: Vec<String> = rows
        .iter()
        .filter(|r| r.stats.runs() < seeds.len())
        .map(|r| {
            let ran = seeds.first(r.stats.runs());
            format!("{} ran seeds {ran}", r.values.join(" "))
        })
        .collect();
    let note = format!(
        "interrupted ({}): {} of {} variants ran{}{}; the rows cover only what ran",
        idemsim::signals::name(),
        rows.len(),
        variants,
        if partial.is_empty() { "" } else { ", " },
        partial.join(", ")
    );
    match format {
        Format::Table | Format::Markdown => out.push_str(&format!("\n{note}\n")),
        Format::Json => {
            out.push_str(&idemsim::render::json_line(
                "interrupted",
                serde_json::json!({
                    "variants_run": rows.len(),
                    "variants": variants,
                    "note": note,
                }),
            ));
            out.push('\n');
        }
        Format::Csv => idemsim::eoutln!("{note}"),
    }
}

/// The most variants a sweep runs: each is loaded before any runs, and its
/// rows must fit a table someone reads; a larger grid is several sweeps.
pub const MAX_VARIANTS: u128 = 10_000;

/// The key of a scenario's seed count, which a sweep takes from `--runs`.
const RUNS_KEY: &str = "run.runs";

/// The key of a scenario's search strategy; a sweep always runs seeds.
const STRATEGY_KEY: &str = "run.strategy";

/// Refuses what the axes cannot mean: the seed count as a swept key, a value
/// given twice, and more variants than [`MAX_VARIANTS`].
fn check_axes(axes: &[Axis]) -> Result<(), UsageError> {
    for axis in axes {
        if axis.key == RUNS_KEY && axis.values.len() > 1 {
            return Err(UsageError(format!(
                "error: --set {RUNS_KEY}={} gives the sweep several seed counts, but every variant runs the same seeds\nhelp: use --runs: a sweep compares its variants on the same seeds, e.g. --runs {}\n",
                axis.values.join(","),
                axis.values[0]
            )));
        }
        for (i, v) in axis.values.iter().enumerate() {
            if axis.values[..i].contains(v) {
                return Err(UsageError(format!(
                    "error: --set {}={} gives the value {v} twice: its variants would run twice and show the same rows\nhelp: give each value once, e.g. --set {}={}\n",
                    axis.key,
                    axis.values.join(","),
                    axis.key,
                    distinct(&axis.values).join(",")
                )));
            }
        }
    }
    let count = axes
        .iter()
        .map(|a| a.values.len() as u128)
        .fold(1u128, u128::saturating_mul);
    if count > MAX_VARIANTS {
        let sizes: Vec<String> = axes
            .iter()
            .filter(|a| a.values.len() > 1)
            .map(|a| format!("{} ({})", a.key, a.values.len()))
            .collect();
        return Err(UsageError(format!(
            "error: the --set values make {count} variants, more than {MAX_VARIANTS}: {}\nhelp: give fewer values per key, or split the grid into sweeps of at most {MAX_VARIANTS} variants (fix one key with a single value per sweep)\n",
            sizes.join(" x ")
        )));
    }
    Ok(())
}

/// The values in their first order, each once.
fn distinct(values: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

/// A variant as its `--set` values: `client.retry.base_ms=50000 client.key=stable`.
fn label(overrides: &[Override]) -> String {
    let sets: Vec<String> = overrides
        .iter()
        .map(|o| format!("{}={}", o.key, o.value))
        .collect();
    sets.join(" ")
}

/// A variant's load error, said to be that variant's: the values that made it.
fn in_variant(e: UsageError, overrides: &[Override], n: usize, of: usize) -> UsageError {
    let rest = e.0.strip_prefix("error: ").unwrap_or(&e.0);
    let mut text = format!("error: variant {n} of {of} ({}): {rest}", label(overrides));
    // `key=[a,b,c]` reads as "try a, b and c" to someone sweeping, but
    // brackets make one value (a range or a list) for a key that takes one.
    let bracketed = overrides.iter().find(|o| {
        let v = o.value.trim();
        v.starts_with('[')
            && v.ends_with(']')
            && rest.contains(&format!("{}={}: wrong type: a list", o.key, o.value))
    });
    if let Some(o) = bracketed {
        let values = o.value.trim().trim_start_matches('[').trim_end_matches(']');
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        text.push_str(&format!(
            "help: to try each of these values, separate them with commas and no brackets: --set {}={}\n",
            o.key,
            values.join(",")
        ));
    }
    UsageError(text)
}
