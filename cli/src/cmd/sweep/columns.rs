//! The metric columns a model declares: their names, headers, legends, and
//! how a value reads for people.

use super::variant::VariantStats;
use models::core::Metric;

pub(super) fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A duration for people: the unit that keeps the number short.
pub(super) fn human_time(us: u64) -> String {
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

/// How a metric's value reads in a table cell.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    Percent,
    Ratio,
    Rate,
    Time,
    Count,
}

/// Reads one column's value from a variant.
pub(super) type Reader = Box<dyn Fn(&VariantStats) -> Option<f64>>;

/// One column a metric contributes: its machine name, its header, what it
/// means, and how to read its value from a variant.
pub(super) struct Field {
    pub(super) name: String,
    pub(super) header: String,
    pub(super) legend: String,
    pub(super) shape: Shape,
    pub(super) value: Reader,
    /// Left out of a table in which no variant has a value for it.
    pub(super) optional: bool,
}

pub(super) fn fields(metrics: &[Metric]) -> Vec<Field> {
    let mut out = Vec::new();
    for &m in metrics {
        if matches!(m, Metric::TimeToEffect) {
            time_to_effect_fields(&mut out);
            continue;
        }
        let optional = matches!(
            m,
            Metric::ShedPerOperation(_)
                | Metric::Wasted(_)
                | Metric::OverloadAfterFaults(_)
                | Metric::RetriesDenied
                | Metric::FastFailed
        );
        let (name, header, legend, shape) = column(m);
        out.push(Field {
            name,
            header,
            legend,
            shape,
            value: Box::new(move |s: &VariantStats| s.metric(&m)),
            optional,
        });
    }
    out
}

/// A metric's one column: its machine name, header, legend and shape.
fn column(m: Metric) -> (String, String, String, Shape) {
    let field = |name: &str, header: &str, legend: &str, shape| {
        (
            name.to_string(),
            header.to_string(),
            legend.to_string(),
            shape,
        )
    };
    match m {
        Metric::Duplicated => field("duplicate_rate", "dup", "dup: share of runs in which some operation took effect twice or more.", Shape::Percent),
        Metric::Lost => field("lost_rate", "lost", "lost: share of runs that reached their end with an owed effect missing (told done, given up silently, or a committed event neither handled nor dead-lettered).", Shape::Percent),
        Metric::Unknown => field("unknown_rate", "unknown", "unknown: share of operations whose client finally knows nothing (a dead letter with an unknown outcome, for a person to reconcile).", Shape::Percent),
        Metric::AttemptsPerOperation => field("attempts_per_operation", "attempts/op", "attempts/op: client attempts per business operation (1.00 = no retries).", Shape::Ratio),
        Metric::ReceivedPerOperation(layer) => field(
            &format!("{}_requests_per_operation", layer.name),
            &format!("{}/op", layer.name),
            &if layer.per == models::core::Per::Event {
                format!("{0}/op: deliveries the {0}s received per event (the business operation of a queue): redeliveries and republishes multiply here.", layer.name)
            } else {
                format!("{0}/op: requests the {0} received per business operation: retries at every layer above it multiply here.", layer.name)
            },
            Shape::Ratio,
        ),
        Metric::PeakPerSecond(layer) => field(
            &format!("peak_{}_requests_per_sec", layer.name),
            "peak req/s",
            &format!("peak req/s: requests reaching the {} in its busiest second of virtual time, averaged over runs (how synchronised the retries are).", layer.name),
            Shape::Rate,
        ),
        Metric::TimeToEffect => unreachable!("two columns: time_to_effect_fields"),
        Metric::DedupKeys => field("peak_dedup_keys", "dedup keys", "dedup keys: the most idempotency keys the service held at once, over all runs.", Shape::Count),
        Metric::AttemptsPerRun => field("attempts_per_run", "attempts/run", "attempts/run: client attempts in a run, all operations together, mean over runs (the run's total work).", Shape::Count),
        Metric::CompletionTime => field("completion_us", "completion", "completion: virtual time from a run's first intent to its last operation's end, mean over the runs in which every operation ended.", Shape::Time),
        Metric::ShedPerOperation(layer) => field(
            &format!("{}_shed_per_operation", layer.name),
            "shed/op",
            &format!("shed/op: requests the {} refused with 503 because every worker was busy and its queue full, per business operation.", layer.name),
            Shape::Ratio,
        ),
        Metric::Wasted(layer) => field(
            &format!("{}_wasted_share", layer.name),
            "wasted",
            &format!("wasted: share of the requests the {}'s workers took whose client had already stopped waiting for them: work for nobody.", layer.name),
            Shape::Percent,
        ),
        Metric::OverloadAfterFaults(layer) => field(
            &format!("{}_overload_after_faults_us", layer.name),
            "overloaded after",
            &format!("overloaded after: how long after the faults stopped the {} still shed requests or worked for nobody, averaged over runs (0 µs: back to normal when they stopped).", layer.name),
            Shape::Time,
        ),
        Metric::RetriesDenied => field("retries_denied_per_operation", "denied/op", "denied/op: retries the clients' budgets refused (the operation was given up instead), per business operation.", Shape::Ratio),
        Metric::FastFailed => field("fast_failed_per_operation", "fast-fail/op", "fast-fail/op: attempts the clients' open circuit breakers refused without sending them (the operation was given up), per business operation.", Shape::Ratio),
    }
}

/// `TimeToEffect`'s two columns, p50 and p99; the legend comes with the first.
fn time_to_effect_fields(out: &mut Vec<Field>) {
    for (q, name, header) in [
        (0.5, "effect_p50_us", "effect p50"),
        (0.99, "effect_p99_us", "effect p99"),
    ] {
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

pub(super) fn cell(f: &Field, s: &VariantStats) -> String {
    match ((f.value)(s), f.shape) {
        (None, _) => "-".into(),
        (Some(x), Shape::Percent) => pct(x),
        (Some(x), Shape::Ratio) => format!("{x:.2}"),
        (Some(x), Shape::Rate) => format!("{x:.1}"),
        (Some(x), Shape::Time) => human_time(x as u64),
        (Some(x), Shape::Count) => format!("{x:.0}"),
    }
}

/// One column of the table besides the swept keys, which always come first
/// since they name the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Column {
    Verdict,
    Failing,
    ViolationRate,
    /// The metric field at this index of [`fields`].
    Field(usize),
    LowestFailingSeed,
}

/// The names `--columns` takes that every model has, in the table's order;
/// the metric columns follow them by the CSV header's names.
const COMMON: [(&str, Column); 3] = [
    ("verdict", Column::Verdict),
    ("failing", Column::Failing),
    ("violation_rate", Column::ViolationRate),
];
const LAST: (&str, Column) = ("lowest_failing_seed", Column::LowestFailingSeed);

/// Every column the table can show, by name, in its default order.
pub(super) fn named_columns(fields: &[Field]) -> Vec<(&str, Column)> {
    COMMON
        .into_iter()
        .chain(
            fields
                .iter()
                .enumerate()
                .map(|(i, f)| (f.name.as_str(), Column::Field(i))),
        )
        .chain([LAST])
        .collect()
}

/// The columns `--columns` names, in its order; an unknown or repeated name
/// is refused with the names this model's table has.
pub(super) fn select(names: &[String], fields: &[Field]) -> Result<Vec<Column>, String> {
    let known = named_columns(fields);
    let mut out: Vec<Column> = Vec::with_capacity(names.len());
    for n in names.iter().map(|n| n.trim()) {
        let Some(&(_, c)) = known.iter().find(|(name, _)| *name == n) else {
            let all: Vec<&str> = known.iter().map(|(name, _)| *name).collect();
            return Err(format!(
                "error: --columns {n}: this model's table has no such column\nhelp: use some of {} (the swept keys always come first)\n",
                all.join(", ")
            ));
        };
        if out.contains(&c) {
            return Err(format!(
                "error: --columns names {n} twice\nhelp: name each column once, in the order the table shows them\n"
            ));
        }
        out.push(c);
    }
    Ok(out)
}

/// A field's legend; the second of a pair that shares one (effect p50, p99)
/// borrows its first's, so a table that shows only p99 still explains it.
pub(super) fn legend_of(fields: &[Field], i: usize) -> &str {
    match (fields[i].legend.as_str(), i.checked_sub(1)) {
        ("", Some(before)) => fields[before].legend.as_str(),
        (legend, _) => legend,
    }
}
