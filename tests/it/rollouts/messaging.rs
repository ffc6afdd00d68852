//! Rollouts beyond the payment model: the messaging consumers replaced
//! instance by instance over a window (a rolling deploy), the migration
//! that turns on the inbox while the old consumer still runs in both
//! orders and with overlapping windows, and the HTTP model's client groups
//! (one editor of two sends no If-Match). Each mistake in them is refused
//! where it is written.

use crate::support;

use models::core::Obs;
use models::messaging::situations as sit;
use models::scenario::Verdict;
use sim::TraceKind;
use support::{check, load, load_text, refuses, trace_of};

/// When each actor's next version took over on seed 0, by name (the
/// trace's `Deployed` lines: a situation is traced the first time only).
fn redeploys(s: &models::scenario::Scenario) -> Vec<(String, u64)> {
    deployed(s).into_iter().map(|(n, t, _)| (n, t)).collect()
}

/// Each `vN deployed` line of seed 0's trace: actor, time (ms), version.
fn deployed(s: &models::scenario::Scenario) -> Vec<(String, u64, u8)> {
    let names = sim::Model::world(&s.system).actor_names.clone();
    let (entries, _) = trace_of(s, 0);
    entries
        .iter()
        .filter_map(|e| match e.kind {
            TraceKind::Observe {
                actor,
                obs: Obs::Deployed { version },
            } => Some((names[actor as usize].clone(), e.time_us / 1000, version)),
            _ => None,
        })
        .collect()
}

/// Three consumers, and an event late enough that the run lasts past
/// every deploy (a run ends when nothing is left to do).
const THREE: &str = "model = \"messaging\"\nsummary = \"rolling\"\n[broker]\nconsumers = 3\n[[events]]\nentity = 1\nstart_ms = 20000\n";

/// `over_ms` spreads the instances evenly: the first at `at_ms`, the last
/// at `at_ms + over_ms`; without it every instance switches at `at_ms`.
#[test]
fn a_rolling_deploy_replaces_the_instances_one_after_another() {
    let roll = |over: u64| {
        format!("{THREE}[rollouts.v2]\nactor = \"consumer\"\nat_ms = 1000\nover_ms = {over}\nset = {{ handler = \"effect\" }}\n")
    };
    let at = |over| redeploys(&load_text("roll.toml", &roll(over), &[]));
    assert_eq!(
        at(10_000),
        vec![
            ("consumer-1".into(), 1000),
            ("consumer-2".into(), 6000),
            ("consumer-3".into(), 11000)
        ]
    );
    let all_at_once: Vec<u64> = at(0).into_iter().map(|(_, t)| t).collect();
    assert_eq!(all_at_once, vec![1000, 1000, 1000]);
    // One instance only, and a second version after it.
    let one = format!("{THREE}[rollouts.v2]\nactor = \"consumer-2\"\nat_ms = 500\nset = {{ ack = \"before-commit\" }}\n[rollouts.v3]\nactor = \"consumer-2\"\nat_ms = 900\nset = {{ ack = \"after-commit\" }}\n");
    assert_eq!(
        redeploys(&load_text("one.toml", &one, &[])),
        vec![("consumer-2".into(), 500), ("consumer-2".into(), 900)]
    );
    // Without rollouts nothing is redeployed.
    assert!(redeploys(&load("messaging-outbox-inbox", &[])).is_empty());
}

/// The trace says which version takes over: `v2` at the first rollout,
/// `v3` at the second, on the instance's own line.
#[test]
fn the_trace_names_the_version_that_takes_over() {
    let s = load("rollout-inbox-before-late-ack", &[]);
    let (entries, _) = trace_of(&s, 0);
    assert!(support::reached(&entries, sit::CONSUMER_REDEPLOYED));
    let deployed = deployed(&s);
    assert_eq!(
        deployed,
        vec![
            ("consumer-1".into(), 10_000, 2),
            ("consumer-2".into(), 20_000, 2),
            ("consumer-1".into(), 30_000, 3),
            ("consumer-2".into(), 40_000, 3),
        ]
    );
    let line = Obs::Deployed { version: 3 }.to_string();
    assert_eq!(line, "v3 deployed: it handles what arrives from now on");
}

/// The inbox before the late ack holds; the other order, and the right
/// order with overlapping windows, apply events twice.
#[test]
fn the_inbox_must_reach_every_instance_before_any_acks_late() {
    let name = "rollout-inbox-before-late-ack";
    check(name, &[], 100, Verdict::Holds, None);
    let dup = Some("no-duplicate-effect");
    check(
        "rollout-late-ack-before-inbox",
        &[],
        100,
        Verdict::Violation,
        dup,
    );
    check(
        "rollout-late-ack-during-inbox-window",
        &[],
        100,
        Verdict::Violation,
        dup,
    );
    // The window is what breaks it: the same order with the late ack
    // starting before the inbox's window ends.
    let overlap = ["rollouts.late-ack.at_ms=15000"];
    check(name, &overlap, 100, Verdict::Violation, dup);
    // And the inbox is what keeps v2's second copies to one effect.
    let no_inbox = ["rollouts.inbox.set.handler=effect"];
    check(name, &no_inbox, 100, Verdict::Violation, dup);
}

/// An old instance finishes what it took under its own settings: a
/// deploy at a time no delivery is in hand changes nothing of v1's runs
/// before it, so v1 alone (rolled out after the run) never duplicates.
#[test]
fn before_its_rollouts_a_consumer_runs_its_first_version() {
    let late = [
        "rollouts.inbox.at_ms=3000000",
        "rollouts.late-ack.at_ms=3500000",
    ];
    check(
        "rollout-late-ack-before-inbox",
        &late,
        50,
        Verdict::Holds,
        None,
    );
}

#[test]
fn an_http_group_gives_its_client_settings_of_its_own() {
    check(
        "http-group-legacy-editor",
        &[],
        300,
        Verdict::Violation,
        Some("no-lost-update"),
    );
    check(
        "http-group-legacy-editor-if-match",
        &[],
        300,
        Verdict::Holds,
        None,
    );
    check(
        "http-group-legacy-editor-if-match",
        &["client.groups.legacy.if_match=false"],
        300,
        Verdict::Violation,
        Some("no-lost-update"),
    );
    // The group is the legacy client's only: with `[client]` without
    // If-Match and the group sending it, the other editor loses updates.
    check(
        "http-group-legacy-editor-if-match",
        &["client.if_match=false"],
        300,
        Verdict::Violation,
        Some("no-lost-update"),
    );
}

#[test]
fn bad_consumer_rollouts_are_refused_with_the_fix() {
    let rollout = |actor: &str, over: u64, set: &str| {
        format!("[rollouts.v2]\nactor = \"{actor}\"\nat_ms = 1000\nover_ms = {over}\nset = {{ {set} }}\n")
    };
    let base = "model = \"messaging\"\nsummary = \"bad\"\n[broker]\nconsumers = 2\n";
    refuses(
        base,
        &[
            (
                &rollout("consumer-3", 0, "ack = \"before-commit\""),
                "no actor \"consumer-3\"",
                "consumer-1 to consumer-2",
            ),
            (
                &rollout("consumer-1", 5000, "ack = \"before-commit\""),
                "one instance",
                "broker.consumers = 2 or more",
            ),
            (
                &rollout("consumer", 0, "handlr = \"effect\""),
                "unknown key `handlr`",
                "did you mean `handler`?",
            ),
            (
                &rollout("consumer", 0, "inbox_retention_ms = 5"),
                "unknown key `inbox_retention_ms`",
                "handler",
            ),
            (
                &rollout("consumer", 0, "handler = \"inbox\""),
                "unknown value \"inbox\"",
                "inbox-same-tx",
            ),
            (&rollout("consumer", 0, ""), "changes nothing", "set = {"),
            (
                &format!(
                    "{}[run]\nmax_time_ms = 60000\nfault_phase_ms = 30000\n",
                    rollout("consumer", 60_000, "handler = \"effect\"")
                ),
                "rollout's last instance",
                "",
            ),
            (
                &format!(
                    "{}[rollouts.v3]\nactor = \"consumer-2\"\nat_ms = 2000\nset = {{ handler = \"effect\" }}\n",
                    rollout("consumer", 1000, "ack = \"before-commit\"")
                ),
                "reaches consumer-2 at the same time",
                "a time of its own",
            ),
        ],
    );
    let program =
        "model = \"messaging\"\nsummary = \"bad\"\n[consumer]\nprogram = [\"python3\", \"examples/python/consumer.py\"]\n";
    let e = support::load_error(
        "bad.toml",
        &format!(
            "{program}{}",
            rollout("consumer", 0, "ack = \"before-commit\"")
        ),
    );
    assert!(e.message.contains("rollouts of a program"), "{e}");
}

#[test]
fn over_ms_is_refused_in_the_payment_model_with_the_reason() {
    let base = "summary = \"bad\"\n[[operations]]\nclaim = 1\namount_eur = 10\n";
    let rollout = |actor: &str| {
        format!("[rollouts.v2]\nactor = \"{actor}\"\nat_ms = 1000\nover_ms = 5000\nset = {{ key = \"none\" }}\n")
    };
    refuses(
        base,
        &[
            (&rollout("service"), "one process", "drop over_ms"),
            (&rollout("client"), "side by side", "[client.groups.NAME]"),
        ],
    );
}

#[test]
fn bad_http_groups_are_refused_with_the_fix() {
    let base = "model = \"http\"\nsummary = \"bad\"\n[[requests]]\nclient = \"legacy\"\nmethod = \"post\"\nvalue = 5\n";
    refuses(
        base,
        &[
            (
                "[client.groups.legasy]\nif_match = false\n",
                "no client \"legasy\"",
                "did you mean [client.groups.legacy]?",
            ),
            (
                "[client.groups.legacy]\nif_mach = false\n",
                "unknown key `if_mach`",
                "did you mean `if_match`?",
            ),
            (
                "[client.groups.legacy]\ndelete_404 = \"gone\"\n",
                "gone",
                "done",
            ),
            (
                "[client.groups.legacy]\n",
                "changes nothing",
                "if_match = false",
            ),
        ],
    );
}

/// The ledger names the consumer version that took each delivery: in a
/// rolling deploy both versions take deliveries of the same queue, and a
/// delivery taken before an instance's deploy stays its old version's
/// (the job keeps it), so the versions named follow the deploys, never
/// precede them.
#[test]
fn the_ledger_names_the_consumer_version_that_took_each_delivery() {
    let s = load("rollout-late-ack-during-inbox-window", &[]);
    let mut sim = sim::Sim::new(&s.system);
    sim.run_seed(&s.system, 0);
    let ledger = sim.oracle();
    let versions: std::collections::BTreeSet<u8> = ledger
        .attributions()
        .iter()
        .filter(|a| matches!(a.what, models::core::ledger::Attributed::Attempt(0)))
        .map(|a| a.version)
        .collect();
    assert!(
        versions.contains(&1) && versions.len() > 1,
        "old and new versions both took deliveries: {versions:?}"
    );
    // Every effect is named by the version whose write made it.
    let claims: Vec<_> = ledger.ops.values().filter(|r| r.effects > 0).collect();
    assert!(!claims.is_empty());
    for r in claims {
        let named = ledger.effect_versions(r.op);
        assert!(named.iter().all(Option::is_some), "{:?}: {named:?}", r.op);
    }
    // The trace says it on the taking instance's line.
    let (entries, _) = trace_of(&s, 0);
    let first_v1 = entries.iter().position(|e| {
        matches!(
            e.kind,
            TraceKind::Observe {
                obs: Obs::Handled { version: 1, .. },
                ..
            }
        )
    });
    assert!(first_v1.is_some(), "a v1 line");
}
