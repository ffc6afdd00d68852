//! The load model: retries at two layers multiply, a hundred clients share
//! one service, a spike outlives itself without a budget and not with one,
//! and the load keys are validated like every other key.

use crate::support;

use models::core::ledger::counter;
use models::scenario::Verdict;
use models::Node;
use sim::US_PER_S;
use support::{check, load, load_text, refuses, run, sweep};

fn per_operation(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

#[test]
fn retries_at_two_layers_multiply_and_every_layer_shows_its_count() {
    // payment-retries-at-two-layers: the bank's answers are lost, the service
    // keeps no key table, and the bank pays once on the key.
    let f = "payment-retries-at-two-layers";
    let (out, _) = run(
        &[
            "sweep",
            f,
            "--set",
            "client.retry.max_attempts=1,3",
            "--set",
            "service.bank_max_attempts=1,3",
            "--format",
            "json",
        ],
        0,
    );
    let variants: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "variant")
        .map(|l| l["data"].clone())
        .collect();
    let rows: Vec<(String, String, f64, f64, f64)> = variants
        .iter()
        .map(|v| {
            (
                v["set"]["client.retry.max_attempts"]
                    .as_str()
                    .unwrap()
                    .into(),
                v["set"]["service.bank_max_attempts"]
                    .as_str()
                    .unwrap()
                    .into(),
                per_operation(v, "attempts_per_operation"),
                per_operation(v, "service_requests_per_operation"),
                per_operation(v, "bank_requests_per_operation"),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        rows,
        [
            (s("1"), s("1"), 1.0, 1.0, 1.0),
            (s("1"), s("3"), 1.0, 1.0, 3.0),
            (s("3"), s("1"), 3.0, 3.0, 3.0),
            // Client 3 × service 3: nine transfers reach the bank for one payment.
            (s("3"), s("3"), 3.0, 3.0, 9.0),
        ]
    );
    // The table shows the same columns side by side.
    let (table, _) = run(
        &[
            "sweep",
            f,
            "--set",
            "service.bank_max_attempts=3",
            "--set",
            "client.retry.max_attempts=3",
        ],
        0,
    );
    let header = table.lines().nth(2).unwrap();
    let cols: Vec<&str> = header.split("  ").map(str::trim).collect();
    let at = |c| cols.iter().position(|x| *x == c).unwrap_or(usize::MAX);
    assert!(at("attempts/op") < at("service/op") && at("service/op") < at("bank/op"));
    assert!(table.contains("3.00        3.00     9.00"), "{table}");
}

#[test]
fn a_hundred_clients_share_the_service_and_the_operations_are_dealt_out_in_turn() {
    let s = load("payment-overload-budget", &[]);
    let names = &s.system.world.actor_names;
    assert_eq!(names.len(), 102);
    assert_eq!(
        (
            &names[0][..],
            &names[99][..],
            &names[100][..],
            &names[101][..]
        ),
        ("client-1", "client-100", "service", "bank")
    );
    let claims = |i: usize| match &s.system.nodes[i] {
        Node::Client(c) => c.cfg.ops.iter().map(|o| o.claim).collect::<Vec<_>>(),
        _ => panic!("actor {i} is a client"),
    };
    let first = claims(0);
    assert_eq!(&first[..3], [100_000, 100_100, 100_200]);
    assert_eq!(first.len(), 10);
    // Each client's service is the service.
    assert!(s
        .system
        .nodes
        .iter()
        .take(100)
        .all(|n| matches!(n, Node::Client(c) if c.cfg.service == 100)));
}

/// The spike is what tips the service over; the base load alone never
/// overloads it.
#[test]
fn the_overload_outlives_its_trigger_without_a_budget_and_not_with_one() {
    let text =
        std::fs::read_to_string(support::root().join("scenarios/payment-overload-budget.toml"))
            .unwrap();
    let judged_off = ["service.recover_ms=0"];
    let mean_after = |sum: &sim::Summary| {
        let after = sum.tally.counter(counter::OVERLOAD_AFTER_FAULTS).unwrap()[0];
        after / sum.tally.schedules
    };
    let quiet = text.replace("repeat = 60", "repeat = 1");
    assert_ne!(quiet, text);
    let calm = sweep(
        &load_text(
            "no-spike.toml",
            &quiet,
            &[&judged_off[..], &["client.budget.capacity=0"]].concat(),
        ),
        20,
    );
    let c = |name| calm.tally.counter(name).unwrap()[0];
    assert_eq!((c(counter::SHED), c(counter::WASTED)), (0, 0));
    assert_eq!(
        c(counter::ATTEMPTS),
        c(counter::OPERATIONS),
        "one attempt each"
    );

    let storm = sweep(
        &load_text(
            "spike.toml",
            &text,
            &[&judged_off[..], &["client.budget.capacity=0"]].concat(),
        ),
        20,
    );
    // The spike ends at 21 s; payments keep coming until 94 s, and the
    // service stays overloaded for most of that time.
    assert!(mean_after(&storm) > 60 * US_PER_S, "{}", mean_after(&storm));
    let budget = sweep(&load_text("budget.toml", &text, &judged_off), 20);
    assert!(
        mean_after(&budget) < 15 * US_PER_S,
        "{}",
        mean_after(&budget)
    );
    let denied = budget.tally.counter(counter::RETRIES_DENIED).unwrap()[0];
    assert!(denied > 0);
}

#[test]
fn the_metastable_overload_recovers_with_a_budget_or_a_breaker_not_with_dropping_expired_work_alone(
) {
    let name = "payment-overload-metastable";
    check(name, &[], 3, Verdict::Violation, Some("load-recovers"));
    check(
        name,
        &["client.budget.capacity=20"],
        3,
        Verdict::Holds,
        None,
    );
    check(
        name,
        &["client.breaker.failures=2", "client.breaker.open_ms=5000"],
        3,
        Verdict::Holds,
        None,
    );
    // Expired requests still hold their places in the queue until a worker
    // reaches them, and the clients still retry every 503.
    check(
        name,
        &["service.drop_expired=true"],
        3,
        Verdict::Violation,
        Some("load-recovers"),
    );
}

/// The bank's capacity: the spike knocks it over and the retries of two
/// layers keep it there; without the spike the base load never fills it,
/// and a budget or a breaker at the clients lets it recover.
#[test]
fn the_bank_stays_knocked_over_by_retries_until_a_budget_or_a_breaker_holds_them_back() {
    let name = "payment-bank-retry-storm";
    check(name, &[], 3, Verdict::Violation, Some("load-recovers"));
    let text =
        std::fs::read_to_string(support::root().join(format!("scenarios/{name}.toml"))).unwrap();
    let quiet = text.replace("repeat = 60", "repeat = 1");
    assert_ne!(quiet, text);
    let calm = sweep(&load_text("no-spike.toml", &quiet, &[]), 3);
    assert_eq!(
        calm.tally.violations, 0,
        "the base load alone never fills the bank"
    );
    let shed = calm.tally.counter(counter::SHED).unwrap();
    assert_eq!(shed.iter().sum::<u64>(), 0, "no layer shed a request");
    // A budget or a breaker holds the retries back; a bank that takes every
    // request sheds none, and promises nothing.
    for fix in [
        &["client.budget.capacity=20"][..],
        &["client.breaker.failures=2", "client.breaker.open_ms=5000"],
        &["bank.capacity_per_s=0"],
    ] {
        check(name, fix, 3, Verdict::Holds, None);
    }
}

/// What the bank counts: every request, a status query too, in the second
/// of virtual time it arrives in; one over its capacity is shed unanswered.
#[test]
fn the_bank_sheds_only_over_its_capacity_in_a_second() {
    let base = "summary = \"bank\"\n[expect]\nverdict = \"holds\"\n\
        [client]\nactors = 4\ntimeout_ms = 10000\n[client.retry]\nmax_attempts = 1\n\
        [network]\ndelay_ms_min = 1\ndelay_ms_max = 1\n\
        [[operations]]\nclaim = 1\namount_eur = 100\nrepeat = 4\nevery_ms = 10\n";
    let shed_with = |capacity: u32| {
        let text = format!("{base}[bank]\ncapacity_per_s = {capacity}\nrecover_ms = 1\n");
        let sum = sweep(&load_text("bank.toml", &text, &["run.fault_phase_ms=0"]), 1);
        let shed: u64 = sum.tally.counter(counter::SHED).unwrap().iter().sum();
        (shed, sum.tally.violations)
    };
    // Four transfers within 40 ms: a capacity of four takes them all.
    assert_eq!(shed_with(4), (0, 0));
    // Three: the fourth is shed, after the fault phase and its 1 ms promise.
    assert_eq!(shed_with(3).0, 1);
    assert_eq!(shed_with(3).1, 1, "load-recovers speaks for the bank");
}

#[test]
fn the_load_keys_are_checked_with_a_place_and_a_fix() {
    let base = "summary = \"load\"\n[expect]\nverdict = \"holds\"\n";
    refuses(
        base,
        &[
            ("[client]\nactors = 251\n", "251 client actors: the range is 1 to 250", "write a number"),
            ("[client]\nactors = 2\n", "2 client actors share 1 operations", "more operations"),
            (
                "[client.budget]\ncapacity = 4\n",
                "a retry costs at least 5: no retry could ever be made",
                "capacity = 0",
            ),
            ("[client.budget]\nretry_cost = 0\n", "0 tokens: the range is 1", "write a number"),
            ("[client.breaker]\nwindow_ms = 0\n", "must be above 0", "window_ms = 10000"),
            ("[service]\nworkers = 65\n", "65 workers: the range is 0 to 64", "write a number"),
            (
                "[service]\nqueue_max = 100001\n",
                "100001 queued requests: the range is 0 to 100000",
                "write a number",
            ),
            (
                "[[operations]]\nclaim = 4294967290\namount_eur = 1\nrepeat = 10\n",
                "run past the largest claim number",
                "repeat fewer times",
            ),
            (
                "[[operations]]\nclaim = 1\namount_eur = 1\nrepeat = 5\n[[operations]]\nclaim = 3\namount_eur = 1\n",
                "claim 3 appears twice",
                "its own claim number",
            ),
            (
                "[[operations]]\nclaim = 3\namount_eur = 1\n[[operations]]\nclaim = 1\namount_eur = 1\nrepeat = 5\n",
                "claim 3 (repetition 3 of this table) is already another operation's",
                "its own claim number",
            ),
            (
                "[[operations]]\nclaim = 3\namount_eur = 1\n[[operations]]\nclaim = 3\npayment = 1\namount_eur = 2\n",
                "claim 3 appears twice",
                "its own payment number",
            ),
            (
                "[[operations]]\nclaim = 3\npayment = 2\namount_eur = 1\n[[operations]]\nclaim = 3\npayment = 2\namount_eur = 2\n",
                "claim 3 payment 02 appears twice",
                "its own payment number",
            ),
            (
                "[[operations]]\nclaim = 3\npayment = 0\namount_eur = 1\n",
                "payment 0: the range is 1 to 99",
                "write a number",
            ),
            (
                "[[operations]]\nclaim = 3\npayment = 100\namount_eur = 1\n",
                "payment 100: the range is 1 to 99",
                "write a number",
            ),
            (
                "[bank]\ncapacity_per_s = 1000001\n",
                "1000001 requests a second: the range is 0 to 1000000",
                "write a number",
            ),
            (
                "[bank]\nstatus_by = \"key\"\n",
                "\"key\"",
                "payment",
            ),
            (
                "[[operations]]\nclaim = 1\namount_eur = 1\nrepeat = 1001\n",
                "1001 operations: a scenario has 1 to 1000",
                "repeat",
            ),
            (
                "[client]\nactors = 2\n[[operations]]\nclaim = 1\namount_eur = 1\nrepeat = 2\n[[network.links]]\nfrom = \"client\"\nto = \"service\"\nloss_per_mille = 1\n",
                "no actor named \"client\"",
                "client-1",
            ),
        ],
    );
    // The older name of `workers` still reads.
    let s = load_text(
        "old.toml",
        &format!("{base}[service]\nmax_in_flight = 4\n"),
        &[],
    );
    assert!(matches!(&s.system.nodes[1], Node::Service(v) if v.cfg.workers == 4));
    // The composed chain has one claims system.
    let chain = "summary = \"chain\"\nmodel = \"chain\"\n[expect]\nverdict = \"holds\"\n";
    refuses(
        chain,
        &[(
            "[client]\nactors = 2\n",
            "this model has one claims system",
            "remove `actors`",
        )],
    );
}

#[test]
fn the_most_clients_run_within_the_default_limits() {
    let text = "summary = \"250 clients\"\n[expect]\nverdict = \"holds\"\n\
        [client]\nactors = 250\n[service]\nworkers = 8\nqueue_max = 100\nprocessing_ms = 10\n\
        [[operations]]\nclaim = 1\namount_eur = 100\nrepeat = 1000\nevery_ms = 20\n";
    let s = load_text("many.toml", text, &[]);
    assert_eq!(s.system.world.actor_names.len(), 252);
    let sum = sweep(&s, 5);
    assert_eq!(s.judge(&sum).found, Verdict::Holds);
    let c = |name| sum.tally.counter(name).unwrap()[0];
    assert_eq!(c(counter::OPERATIONS), 5000);
    assert_eq!(c(counter::DONE), 5000);
    // Every request was taken by a worker, none shed.
    assert_eq!(c(counter::SHED), 0);
    assert!(sum.tally.counter(counter::WORK).unwrap()[0] >= 5000);
}

/// The numbers of `check`'s `load:` line: (name, per, value), per being
/// "operation" or "event".
fn load_line(out: &str) -> Vec<(String, String, f64)> {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("load: "))
        .unwrap_or_else(|| panic!("no load line in\n{out}"));
    let groups = line.split(" (").next().unwrap();
    let mut all = Vec::new();
    for group in groups.split("; ") {
        let (list, per) = group.rsplit_once(" per ").unwrap();
        for part in list.split(", ") {
            let (name, n) = part.rsplit_once(' ').unwrap();
            all.push((name.to_string(), per.to_string(), n.parse().unwrap()));
        }
    }
    all
}

#[test]
fn check_shows_the_work_a_holding_design_does() {
    let quiet = [
        "--set",
        "network.loss_per_mille=0",
        "--set",
        "network.duplicate_per_mille=0",
        "--set",
        "network.delay_ms_max=5",
        "--set",
        "crashes={}",
    ];
    let check = |name: &str, sets: &[&str]| {
        let args = [&["check", name, "--runs", "100", "--no-shrink"][..], sets].concat();
        load_line(&run(&args, 0).0)
    };
    // Without faults nothing is retried or redelivered: exactly one of each,
    // a client's requests counted per operation, a consumer's deliveries per
    // event (the chain has both: neither is halved by the other).
    let one = |n: &[(&str, &str)]| {
        n.iter()
            .map(|(name, per)| (name.to_string(), per.to_string(), 1.0))
            .collect::<Vec<_>>()
    };
    let op = "operation";
    assert_eq!(
        check("payment-stable-key", &quiet),
        one(&[("attempts", op), ("service", op), ("bank", op)])
    );
    assert_eq!(
        check("messaging-outbox-inbox", &quiet),
        one(&[("consumer", "event")])
    );
    assert_eq!(
        check("chain-outbox-inbox", &quiet),
        one(&[("attempts", op), ("bank", op), ("consumer", "event")])
    );
    // A visibility timeout far below the consumer's processing time still
    // holds (the inbox catches every copy), but every event is delivered
    // again and again: the verdict alone would not say so.
    let normal = check("messaging-outbox-inbox", &[]);
    let short = check(
        "messaging-outbox-inbox",
        &["--set", "broker.visibility_timeout_ms=50"],
    );
    assert_eq!(normal[0].0, "consumer");
    assert!(normal[0].2 > 1.0 && normal[0].2 < 5.0, "{normal:?}");
    assert!(
        short[0].2 > 10.0 * normal[0].2,
        "{short:?} against {normal:?}"
    );
    // The chain's consumers get their database's answers in time: a
    // database as far away as the clients (12 s) is most of what they wait for.
    let chain = check("chain-outbox-inbox", &[]);
    let far = check(
        "chain-outbox-inbox",
        &[
            "--set",
            "network.links=[]",
            "--set",
            "accounting.tx_timeout_ms=5000",
        ],
    );
    assert!(far[2].2 > 4.0 * chain[2].2, "{far:?} against {chain:?}");
}

#[test]
fn a_holding_design_over_its_load_bound_does_not_match() {
    // As written, each reference design holds within its bound.
    for name in ["chain-outbox-inbox", "messaging-outbox-inbox"] {
        let s = load(name, &[]);
        let j = s.judge(&sweep(&s, 200));
        assert!(j.matched(), "{name}: {:?}", j.mismatch);
    }
    // The same designs made expensive still hold, and no longer match:
    // the chain's database as far away as its clients, a visibility timeout
    // below the consumer's processing time.
    for (name, set) in [
        ("chain-outbox-inbox", "network.links=[]"),
        ("messaging-outbox-inbox", "broker.visibility_timeout_ms=50"),
    ] {
        let s = load(name, &[set]);
        let j = s.judge(&sweep(&s, 200));
        assert_eq!(j.found, Verdict::Holds, "{name} with {set}");
        let m = j
            .mismatch
            .unwrap_or_else(|| panic!("{name} with {set} matched"));
        assert!(
            m.starts_with("holds, at ") && m.contains(" consumer per event, above the "),
            "{m}"
        );
    }
    // A bound only a holding design can have, on names the model counts,
    // from 1 (no retry) up.
    let base = "summary = \"x\"\nmodel = \"messaging\"\n";
    let holds = "[expect]\nverdict = \"holds\"\n";
    refuses(
        base,
        &[
            (
                "[expect]\nverdict = \"violation\"\ninvariant = \"no-lost-effect\"\nmax_load = { consumer = 2 }\n",
                "only a scenario that holds",
                "remove `max_load`",
            ),
            (
                &format!("{holds}max_load = {{ consumers = 2 }}\n"),
                "no load named \"consumers\"",
                "did you mean \"consumer\"",
            ),
            (
                &format!("{holds}max_load = {{ attempts = 2 }}\n"),
                "no load named \"attempts\"",
                "this model counts consumer",
            ),
            (
                &format!("{holds}max_load = {{ consumer = 0.5 }}\n"),
                "the range is 1 to",
                "1 means no retry",
            ),
            (
                &format!("{holds}max_load = {{ consumer = \"2\" }}\n"),
                "a load bound is a number",
                "consumer = 5",
            ),
        ],
    );
    // Payment counts attempts and both layers.
    let s = load(
        "payment-stable-key",
        &["expect.max_load={ attempts = 1, bank = 1000 }"],
    );
    let m = s
        .judge(&sweep(&s, 100))
        .mismatch
        .expect("more than one attempt");
    assert!(m.contains(" attempts per operation, above the 1 "), "{m}");
}

/// A service without `workers` has as many as it has slots (64), and the
/// queue behind them is the file's: 100 claims at once, each holding its
/// worker for a second, are 36 too many. Without a queue they are shed;
/// with one they wait, and a worker drops those whose client stopped
/// waiting where `drop_expired` says so. So `queue_max` and `drop_expired`
/// are read without `workers`, and only a queue of 0 leaves `drop_expired`
/// without effect; a promise to recover (`recover_ms`) is judged only
/// where the service has a capacity it reports. The burst comes after the
/// fault phase (120 s), where a promise holds the service to its word.
#[test]
fn a_service_without_workers_has_its_slots_and_a_queue_behind_them() {
    use models::payment::situations as sit;
    let burst = |service: &str| {
        let text = format!(
            "summary = \"a burst\"\n[client]\ntimeout_ms = 1000\n[client.retry]\npolicy = \"none\"\n[service]\nprocessing_ms = 1000\n{service}[[operations]]\nclaim = 1\namount_eur = 10\nrepeat = 100\nstart_ms = 130000\n"
        );
        let s = load_text("burst.toml", &text, &[]);
        (sweep(&s, 5), s)
    };
    let (shed, _) = burst("");
    assert!(shed.tally.situations.contains(sit::OVERLOADED));
    assert!(!shed.tally.situations.contains(sit::QUEUED));
    let (kept, _) = burst("queue_max = 100\n");
    assert!(kept.tally.situations.contains(sit::QUEUED));
    assert!(!kept.tally.situations.contains(sit::OVERLOADED));
    assert!(kept.tally.situations.contains(sit::WORKED_AFTER_DEADLINE));
    let (dropped, s) = burst("queue_max = 100\ndrop_expired = true\n");
    assert!(dropped.tally.situations.contains(sit::EXPIRED_DROPPED));
    assert!(s.design_warnings.is_empty(), "{:?}", s.design_warnings);
    // With no queue nothing waits: drop_expired changes no run.
    let (plain, _) = burst("workers = 4\n");
    let (told, s) = burst("workers = 4\ndrop_expired = true\n");
    assert_eq!(plain, told);
    assert_eq!(s.design_warnings.len(), 1, "{:?}", s.design_warnings);
    assert!(
        s.design_warnings[0].text.contains("service.queue_max = 0"),
        "{}",
        s.design_warnings[0].text
    );
    // recover_ms without workers: a warning at its line, and no promise is
    // judged (it was refused, which made `--set service.workers=0` of an
    // overload scenario an error).
    let (unpromised, s) = burst("queue_max = 100\nrecover_ms = 1\n");
    assert_eq!(unpromised, kept);
    assert_eq!(s.design_warnings.len(), 1, "{:?}", s.design_warnings);
    assert!(
        s.design_warnings[0]
            .text
            .starts_with("burst.toml:9:14: service.recover_ms = 1 has no effect")
            && s.design_warnings[0].text.contains("workers = 4"),
        "{}",
        s.design_warnings[0].text
    );
    // With workers the same promise is judged, and broken by the work for
    // nobody; without it, the same runs hold.
    let (promised, _) = burst("workers = 64\nqueue_max = 100\nrecover_ms = 1\n");
    let failure = promised.first_failure.expect("the promise is judged");
    assert!(
        matches!(&failure.outcome, sim::Outcome::Violation(v) if v.invariant == "load-recovers"),
        "{:?}",
        failure.outcome
    );
    assert!(unpromised.first_failure.is_none());
    let variant = load(
        "payment-overload-metastable",
        &["service.workers=0", "service.queue_max=0"],
    );
    assert!(variant
        .design_warnings
        .iter()
        .all(|h| h.id != "setting-without-effect"));
}
