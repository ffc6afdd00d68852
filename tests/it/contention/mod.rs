//! The contention model: AWS's backoff and jitter experiment reproduced.
//! N clients compare-and-set one row; the orderings of work and time the
//! post published must come out of idemsim's runs, and the model must keep
//! the simulator's timing to the unit.

use crate::support;

use models::contention::situations as sit;
use models::contention::Msg as CMsg;
use models::core::ledger::counter;
use models::core::Carries;
use models::scenario::Verdict;
use sim::{explore, SeedRange, Summary, TraceKind, US_PER_MS};
use std::sync::atomic::AtomicBool;
use support::{
    check, load, load_error, load_text, reached, refuses, run, scratch, trace_of, Entry,
};

mod writes;

const JITTERS: [&str; 4] = ["none", "full", "equal", "decorrelated"];

/// Seeds `range` of a catalog scenario with `sets` applied.
fn runs(name: &str, sets: &[&str], range: std::ops::Range<u64>) -> Summary {
    let s = load(name, sets);
    let stop = AtomicBool::new(false);
    let seeds = SeedRange {
        start: range.start,
        end: range.end.into(),
    };
    explore(&s.system, seeds, support::JOBS, &stop, &|_| {})
}

fn count(sum: &Summary, name: &str) -> u64 {
    sum.tally.counter(name).expect("a ledger counter")[0]
}

/// The post's two measures, as means over the runs: compare-and-set calls
/// (attempts; one write per attempt on a reliable network) and the time
/// until the last client's write was confirmed, in ms.
#[derive(Debug, Clone, Copy)]
struct Measured {
    calls: f64,
    completion_ms: f64,
}

fn measure(sum: &Summary) -> Measured {
    let runs = sum.tally.schedules;
    assert_eq!(sum.tally.failing(), 0, "{:?}", sum.first_failure);
    assert_eq!(sum.tally.inconclusive, 0, "{:?}", sum.first_inconclusive);
    assert_eq!(
        count(sum, counter::RUNS_COMPLETED),
        runs,
        "every write ends"
    );
    assert_eq!(count(sum, counter::OPERATIONS), count(sum, counter::DONE));
    Measured {
        calls: count(sum, counter::ATTEMPTS) as f64 / runs as f64,
        completion_ms: count(sum, counter::COMPLETION_US) as f64 / runs as f64 / US_PER_MS as f64,
    }
}

/// At 100 clients, on two disjoint blocks of seeds, idemsim measures what
/// the post reports:
///
/// - No jitter needs far more calls and far more time than any jitter.
///   Clients that collided have failed equally often, so they wait equally
///   long and collide again; only the network's spread (7 to 13 ms a hop)
///   pulls them apart, and once the waits reach the 2 s cap every round is
///   2 s long. Jitter spreads each round over the whole window instead.
///   The margins (1.5× the calls, 5× the time) are far inside the measured
///   2.0× and 11×.
/// - Full jitter needs fewer calls than decorrelated jitter: decorrelated
///   waits walk from the previous wait (a draw from base to 3× it, whose
///   mean grows by about 1.5× a step, and can shrink), so they stay shorter
///   than full jitter's, whose ceiling doubles every retry: more clients
///   come back inside one another's read-to-write window. Measured: 27%
///   more calls on both blocks; asserted: more than 15%.
/// - Equal jitter takes the longest of the jittered strategies: half of
///   every wait is fixed and that half doubles each retry, so the last
///   clients wait longest. Measured: 35% longer than full jitter, 44%
///   longer than decorrelated; asserted: 15%.
///
/// Not asserted, because the gap is too small to promise on every block of
/// seeds: full against equal jitter in calls (the post: "slightly more" for
/// equal; 2% here) and full against decorrelated in time (the post:
/// "slightly" longer for full; 6% here).
#[test]
fn at_a_hundred_clients_idemsim_measures_the_published_ordering() {
    for block in [0..60, 5000..5060] {
        let m: Vec<Measured> = JITTERS
            .iter()
            .map(|j| {
                let set = format!("client.retry.jitter={j}");
                measure(&runs(
                    "contention-full-jitter",
                    &["clients=100", &set],
                    block.clone(),
                ))
            })
            .collect();
        let [none, full, equal, decorrelated] = [m[0], m[1], m[2], m[3]];
        let what = format!("seeds {block:?}: {m:#?}");
        for j in [full, equal, decorrelated] {
            assert!(none.calls > 1.5 * j.calls, "{what}");
            assert!(none.completion_ms > 5.0 * j.completion_ms, "{what}");
        }
        assert!(decorrelated.calls > 1.15 * full.calls, "{what}");
        assert!(equal.completion_ms > 1.15 * full.completion_ms, "{what}");
        assert!(
            equal.completion_ms > 1.15 * decorrelated.completion_ms,
            "{what}"
        );
    }
}

/// The numbers themselves, against AWS's own simulator run with the same
/// parameters (its `run()` ported to Python 3, 100 clients, 100 runs per
/// strategy, `random.seed` 1, 2 and 3; they agree to 1%):
///
/// | strategy | calls | completion |
/// |---|---:|---:|
/// | Exponential (no jitter) | 1858 | 63.9 s |
/// | FullJitter | 795 | 4.85 s |
/// | EqualJitter | 813 | 6.68 s |
/// | Decorr | 1002 | 4.50 s |
///
/// The jittered strategies must come within 10%. No jitter is allowed 20%:
/// its only source of spread is the network, and the simulator's normal
/// delays (sd 2 ms) spread clients a little more than idemsim's uniform
/// 7–13 ms (sd 1.7 ms), so idemsim's herd stays together slightly longer.
#[test]
fn the_numbers_come_within_a_few_percent_of_aws_simulator() {
    let published = [
        ("none", 1858.0, 63_900.0, 0.20),
        ("full", 795.0, 4_850.0, 0.10),
        ("equal", 813.0, 6_680.0, 0.10),
        ("decorrelated", 1002.0, 4_500.0, 0.10),
    ];
    for (jitter, calls, completion_ms, within) in published {
        let set = format!("client.retry.jitter={jitter}");
        let m = measure(&runs(
            "contention-full-jitter",
            &["clients=100", &set],
            0..100,
        ));
        let off = |ours: f64, theirs: f64| (ours - theirs).abs() / theirs;
        assert!(
            off(m.calls, calls) <= within && off(m.completion_ms, completion_ms) <= within,
            "{jitter}: idemsim {m:?}, simulator {calls} calls, {completion_ms} ms"
        );
    }
}

/// When each client's reads start, in µs: the read of every attempt.
fn reads_of(entries: &[Entry], client: u32) -> Vec<u64> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Send { from, msg, .. } if *from == client => {
                matches!(Carries::<CMsg>::peek(msg), Some(CMsg::Read { .. })).then_some(e.time_us)
            }
            _ => None,
        })
        .collect()
}

/// With fixed 10 ms hops three clients collide on their first writes; the
/// losers' conflict answers arrive at 40 ms, and their first retries read
/// at 40 ms + min(cap, base · 2^n): the simulator's n = 1 waits 10 ms, the
/// exponent 0 of every other model 5 ms. Each later retry doubles.
#[test]
fn the_first_retry_waits_as_long_as_in_the_simulator() {
    let text = |exponent: u32| {
        format!(
            "summary = \"three clients\"\nmodel = \"contention\"\nclients = 3\n\
             [expect]\nverdict = \"holds\"\n\
             [client]\nfirst_retry_exponent = {exponent}\n\
             [client.retry]\npolicy = \"exponential\"\nbase_ms = 5\ncap_ms = 2000\njitter = \"none\"\nmax_attempts = 0\n\
             [network]\ndelay_ms_min = 10\ndelay_ms_max = 10\n"
        )
    };
    for (exponent, first_wait_ms) in [(1, 10), (0, 5)] {
        let s = load_text("exponent.toml", &text(exponent), &[]);
        let (entries, outcome) = trace_of(&s, 0);
        assert!(matches!(outcome, sim::Outcome::Holds), "{outcome:?}");
        // Client 1 wins the first round; clients 2 and 3 collide again on
        // their first retry (same wait), so the third reads a third time.
        let ms = |v: Vec<u64>| v.into_iter().map(|t| t / US_PER_MS).collect::<Vec<_>>();
        assert_eq!(ms(reads_of(&entries, 0)), [0]);
        let retry = 40 + first_wait_ms;
        assert_eq!(ms(reads_of(&entries, 1)), [0, retry]);
        assert_eq!(
            ms(reads_of(&entries, 2)),
            [0, retry, retry + 40 + 2 * first_wait_ms]
        );
    }
}

/// The compare-and-set is the protection; backoff and jitter are not: with
/// it every strategy keeps every increment, without it none does.
#[test]
fn every_strategy_holds_with_compare_and_set_and_none_without() {
    for jitter in JITTERS {
        let set = format!("client.retry.jitter={jitter}");
        check(
            "contention-full-jitter",
            &[&set, "clients=10"],
            100,
            Verdict::Holds,
            None,
        );
        check(
            "contention-full-jitter",
            &[&set, "clients=10", "client.cas=false"],
            100,
            Verdict::Violation,
            Some("no-lost-update"),
        );
    }
}

/// Like every model, a scenario holds 1,000 operations within the default
/// limits (100 clients with 10 writes each, one after another), and one
/// more is refused with the bound.
#[test]
fn a_thousand_writes_run_within_the_default_limits() {
    let sets = ["clients=100", "client.writes=10"];
    let s = load("contention-full-jitter", &sets);
    let sum = support::sweep(&s, 2);
    assert_eq!(
        s.judge(&sum).found,
        Verdict::Holds,
        "{:?}",
        sum.first_inconclusive
    );
    assert_eq!(count(&sum, counter::DONE), 2 * 1000);
    let e = load_error(
        "big.toml",
        "summary = \"x\"\nmodel = \"contention\"\nclients = 77\n[expect]\nverdict = \"holds\"\n[client]\nwrites = 13\n",
    );
    assert!(
        e.message
            .contains("1001 writes: a scenario has at most 1000"),
        "{e}"
    );
    assert!(e.help.is_some_and(|h| h.contains("12 or fewer")));
}

#[test]
fn nonsense_is_refused_with_its_place_and_a_fix() {
    let base = "summary = \"x\"\nmodel = \"contention\"\n";
    let expect = "[expect]\nverdict = \"holds\"\n";
    let cases: Vec<(String, &str, &str)> = vec![
        (format!("clients = 0\n{expect}"), "0 clients: the range is 1 to 200", "1 to 200"),
        (format!("clients = 201\n{expect}"), "201 clients", "1 to 200"),
        (format!("{expect}[client]\nwrites = 0\n"), "0 writes per client", "1 to 1000"),
        (
            format!("{expect}[client]\nfirst_retry_exponent = 2\n"),
            "not a first retry's exponent",
            "AWS's backoff simulator",
        ),
        (
            format!("{expect}[client.retry]\nretry_final_errors = true\n"),
            "no final errors",
            "remove retry_final_errors",
        ),
        (
            format!("{expect}[client]\ntimeout_ms = 100000000\n"),
            "longer than",
            "milliseconds",
        ),
        (
            format!("{expect}[client]\ncompare_and_set = true\n"),
            "unknown field",
            "`cas`",
        ),
        (
            format!("{expect}[[network.links]]\nfrom = \"client\"\nto = \"resource\"\nloss_per_mille = 1\n"),
            "no actor named \"client\"",
            "client-1 to client-N",
        ),
    ];
    let cases: Vec<(&str, &str, &str)> =
        cases.iter().map(|(t, m, h)| (t.as_str(), *m, *h)).collect();
    refuses(base, &cases);
}

/// `sweep --plot-metric` draws the table's columns, one panel each, and
/// names the columns a model has when asked for one it has not.
#[test]
fn the_plot_draws_calls_and_completion_one_panel_each() {
    let path = scratch("contention/plot").join("contention-plot.svg");
    let path_arg = path.to_string_lossy().into_owned();
    run(
        &[
            "sweep",
            "contention-full-jitter",
            "--set",
            "clients=5,10",
            "--set",
            "client.retry.jitter=none,full",
            "--runs",
            "20",
            "--plot",
            &path_arg,
            "--plot-metric",
            "attempts_per_run,completion_us",
        ],
        0,
    );
    let svg = std::fs::read_to_string(&path).expect("the plot was written");
    assert!(
        svg.starts_with("<?xml") && svg.ends_with("</svg>\n"),
        "{svg}"
    );
    assert!(svg.contains("attempts/run, completion by clients"), "{svg}");
    // Two panels, each with one line per jitter.
    assert_eq!(svg.matches("<path ").count(), 4, "{svg}");
    assert!(svg.contains("client.retry.jitter=none") && svg.contains("client.retry.jitter=full"));
    assert!(!svg.contains("Wilson"), "metric panels have no interval");
    let (_, err) = run(
        &[
            "sweep",
            "contention-full-jitter",
            "--set",
            "clients=5",
            "--runs",
            "1",
            "--plot",
            &path_arg,
            "--plot-metric",
            "calls",
        ],
        2,
    );
    assert!(
        err.contains("--plot-metric calls") && err.contains("attempts_per_run"),
        "{err}"
    );
}

/// A write is a read, then the write computed from it, each with its own
/// timeout: a write whose answer is lost times out a read's round trip
/// into its attempt plus `timeout_ms`, and its retry must still fit the
/// window. With every write lost, 100 ms timeouts, no wait and 1 ms hops,
/// a 200 ms window (2 × timeout + wait) never retries, and
/// `retry-window-too-short` says so, as it does for HTTP's edits; 202 ms
/// (one read's round trip more) retries once, and the rule is silent.
#[test]
fn a_window_without_room_for_a_lost_writes_retry_is_a_warning() {
    let text = r#"summary = "one client, every write lost"
model = "contention"
clients = 1

[client]
timeout_ms = 100

[client.retry]
policy = "fixed"
base_ms = 0
max_attempts = 5
window_ms = 200

[network]
delay_ms_min = 1
delay_ms_max = 1

[[network.links]]
from = "client-1"
to = "resource"
kinds = ["write"]
loss_per_mille = 1000
"#;

    let attempts = |window: &str| {
        let s = load_text("lost-writes.toml", text, &[window]);
        support::attempts_per_op_and_warning(&s, 20, "retry-window-too-short")
    };
    let (per_op, warning) = attempts("client.retry.window_ms=200");
    assert_eq!(per_op, 1, "no lost write is ever retried");
    let warning = warning.expect("the rule says so");
    assert!(warning.contains("at least 202"), "{warning}");
    let (per_op, warning) = attempts("client.retry.window_ms=202");
    assert_eq!(per_op, 2, "the retry fits, and is lost too");
    assert_eq!(warning, None);
}
