//! `[[network.links]]` entries as a user layers them: a later entry for the
//! same link and message kind replaces an earlier one (it was ignored once),
//! and an entry may leave `from` or `to` out to name every link out of or
//! into an actor, or, with `kinds`, every link ("this protocol runs over TCP:
//! its messages are never duplicated"); an entry for a link or a kind that
//! no message ever crosses is refused (it was a fault that never fired).

use crate::support;

use models::scenario::Verdict::{Holds, Violation};
use sim::{Message, Model, TraceKind};
use support::{load, load_text, refuses, trace_of, Entry};

mod kind_delays;
mod refusals;

/// A rate range of a kind fault, `None` where it follows its link.
type Rate = Option<(u32, u32)>;

/// The kind fault `(loss, duplicate)` for `from → to` and `kind`.
fn kind_fault(s: &models::Scenario, from: &str, to: &str, kind: &str) -> Option<(Rate, Rate)> {
    let w = s.system.world();
    let id = |n: &str| w.actor_names.iter().position(|a| a == n).expect("actor") as u32;
    let kind = models::registry::message_kinds()
        .iter()
        .position(|k| *k == kind)
        .expect("kind") as u16;
    let hits: Vec<_> = w
        .kind_faults
        .iter()
        .filter(|k| k.from == id(from) && k.to == id(to) && k.kind == kind)
        .collect();
    assert!(hits.len() <= 1, "one entry per link and kind: {hits:?}");
    let range = |r: Option<sim::PerMilleRange>| r.map(|r| (r.lo, r.hi));
    hits.first()
        .map(|k| (range(k.loss_per_mille), range(k.duplicate_per_mille)))
}

/// Copies the network made of messages of `kind`, over seeds `0..seeds`.
fn duplicated(s: &models::Scenario, kind: &str, seeds: u64) -> usize {
    let kind = models::registry::message_kinds()
        .iter()
        .position(|k| *k == kind)
        .expect("kind") as u16;
    (0..seeds)
        .flat_map(|seed| trace_of(s, seed).0)
        .filter(|e: &Entry| matches!(&e.kind, TraceKind::Send { msg, copies: 2, .. } if msg.kind() == kind))
        .count()
}

const DUPLICATED_TRANSFERS: &str = r#"summary = "x"
[service]
idempotency = "claim-same-tx"
pass_key_to_bank = false
[bank]
accepts_key = false
[[network.links]]
from = "service"
to = "bank"
kinds = ["transfer"]
loss_per_mille = 100
duplicate_per_mille = 500
"#;

#[test]
fn a_later_kinds_entry_for_the_same_link_and_kind_replaces_the_earlier() {
    let first = load_text("first.toml", DUPLICATED_TRANSFERS, &[]);
    assert_eq!(
        kind_fault(&first, "service", "bank", "transfer"),
        Some((Some((100, 100)), Some((500, 500))))
    );
    assert!(
        duplicated(&first, "transfer", 40) > 0,
        "the first entry duplicates transfers"
    );

    // The later entry sets duplication only: the loss stays the earlier entry's.
    let text = format!(
        "{DUPLICATED_TRANSFERS}[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nkinds = [\"transfer\"]\nduplicate_per_mille = 0\n"
    );
    let later = load_text("later.toml", &text, &[]);
    assert_eq!(
        kind_fault(&later, "service", "bank", "transfer"),
        Some((Some((100, 100)), Some((0, 0))))
    );
    assert_eq!(
        duplicated(&later, "transfer", 40),
        0,
        "the later entry wins"
    );
    support::check_scenario(&first, 300, Violation, Some("no-duplicate-effect"), "first");
    support::check_scenario(&later, 300, Holds, None, "later");
}

/// A kinds entry that sets only duplication leaves its messages exactly as
/// lossy as the rest of their link in every seed: the seed's draw for the
/// link, not a draw of their own from the same range (which made a transfer
/// often lost on a link this seed drew almost lossless).
#[test]
fn what_a_kinds_entry_leaves_out_follows_its_links_rate_in_every_seed() {
    let text = "summary = \"x\"\n[service]\nidempotency = \"claim-same-tx\"\npass_key_to_bank = false\n[bank]\naccepts_key = false\n[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nloss_per_mille = [0, 1000]\n[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nkinds = [\"transfer\"]\nduplicate_per_mille = 0\n";
    let s = load_text("follows.toml", text, &[]);
    assert_eq!(
        kind_fault(&s, "service", "bank", "transfer"),
        Some((None, Some((0, 0))))
    );
    let w = s.system.world();
    let id = |n: &str| w.actor_names.iter().position(|a| a == n).expect("actor") as u32;
    let (service, bank) = (id("service"), id("bank"));
    // (transfers sent, transfers lost) in seeds whose link drew a nearly
    // lossless rate, and in seeds whose link drew a nearly total one.
    let (mut low, mut high) = ((0, 0), (0, 0));
    for seed in 0..400 {
        let (entries, _) = trace_of(&s, seed);
        let drawn = entries.iter().find_map(|e| match e.kind {
            TraceKind::LinkMix {
                from,
                to,
                loss_per_mille,
                ..
            } if (from, to) == (service, bank) => Some(loss_per_mille),
            _ => None,
        });
        let drawn = drawn.expect("the link's loss is a range: every seed draws it");
        let (mut sent, mut lost) = (0, 0);
        for e in &entries {
            match &e.kind {
                TraceKind::Send { from, to, .. } if (*from, *to) == (service, bank) => sent += 1,
                TraceKind::Drop {
                    from,
                    to,
                    reason: sim::DropReason::Lost,
                    ..
                } if (*from, *to) == (service, bank) => {
                    sent += 1;
                    lost += 1;
                }
                _ => {}
            }
        }
        let tally = match drawn {
            0..=100 => &mut low,
            900..=1000 => &mut high,
            _ => continue,
        };
        tally.0 += sent;
        tally.1 += lost;
    }
    assert!(
        low.0 > 20 && high.0 > 20,
        "both kinds of seeds send transfers: {low:?} {high:?}"
    );
    assert!(
        low.1 * 5 < low.0,
        "a nearly lossless link loses few transfers: {low:?}"
    );
    assert!(
        high.1 * 5 > high.0 * 4,
        "a nearly total loss loses most transfers: {high:?}"
    );
}

#[test]
fn a_kinds_entry_without_from_and_to_covers_every_link() {
    // Every message may be duplicated, except transfers, on every link.
    let text = "summary = \"x\"\n[service]\nidempotency = \"claim-same-tx\"\npass_key_to_bank = false\n[bank]\naccepts_key = false\n[network]\nduplicate_per_mille = 300\n[[network.links]]\nkinds = [\"transfer\"]\nduplicate_per_mille = 0\n";
    let s = load_text("tcp.toml", text, &[]);
    let names = s.system.world().actor_names.clone();
    for from in &names {
        for to in &names {
            // Loss is left to each link (None), duplication is off.
            let expected = (from != to).then_some((None, Some((0, 0))));
            assert_eq!(
                kind_fault(&s, from, to, "transfer"),
                expected,
                "{from} -> {to}"
            );
        }
    }
    assert_eq!(duplicated(&s, "transfer", 40), 0);
    assert!(
        duplicated(&s, "pay", 40) > 0,
        "other kinds keep the network's duplication"
    );
    // Without the entry the same network pays twice.
    let without = load_text(
        "all.toml",
        text.split("[[network.links]]").next().unwrap(),
        &[],
    );
    support::check_scenario(
        &without,
        300,
        Violation,
        Some("no-duplicate-effect"),
        "without",
    );
}

#[test]
fn an_entry_with_only_from_or_only_to_covers_that_actors_links() {
    let s = load(
        "payment-stable-key",
        &["network.links=[{to=\"bank\", delay_ms_min=400, delay_ms_max=500}, {from=\"client\", loss_per_mille=7}]"],
    );
    let w = s.system.world();
    let id = |n: &str| w.actor_names.iter().position(|a| a == n).unwrap() as u32;
    for n in &w.actor_names {
        if n != "bank" {
            let l = w.link(id(n), id("bank"));
            assert_eq!(
                (l.delay_us_min, l.delay_us_max),
                (400_000, 500_000),
                "{n} -> bank"
            );
        }
        if n != "client" {
            assert_eq!(
                w.link(id("client"), id(n)).loss_per_mille.hi,
                7,
                "client -> {n}"
            );
        }
    }
    // A link the entries do not name keeps the file's values.
    let plain = load("payment-stable-key", &[]);
    assert_eq!(
        w.link(id("bank"), id("service")),
        plain.system.world().link(id("bank"), id("service"))
    );
}

#[test]
fn a_chain_takes_the_kinds_of_both_models_it_is_made_of() {
    let s = load(
        "chain-outbox-inbox",
        &["network.links=[{kinds=[\"publish\", \"transfer\"], duplicate_per_mille=0}]"],
    );
    // No duplication for either kind; each follows its link's loss.
    let fault = |from, to, kind| kind_fault(&s, from, to, kind);
    assert_eq!(
        fault("service", "bank", "transfer"),
        Some((None, Some((0, 0))))
    );
    assert_eq!(
        fault("service", "broker", "publish"),
        Some((None, Some((0, 0))))
    );
}

/// Chapter 02's claim: switching the network's duplication off for the
/// kinds that travel over one connection (TCP never delivers twice) leaves
/// every messaging verdict as it was, since the second copies that matter
/// come from the broker's redeliveries and the relay's republishes.
#[test]
fn no_wire_duplicates_on_connection_kinds_leave_every_messaging_verdict_as_it_was() {
    let set = r#"network.links=[{kinds=["deliver","ack","tx","tx-done"],duplicate_per_mille=0}]"#;
    let mut checked = 0;
    for p in support::scenario_files() {
        let name = support::name_of(&p);
        let text = std::fs::read_to_string(&p).unwrap();
        // A scenario with links of its own would lose them to the override.
        if !name.starts_with("messaging-") || text.contains("[[network.links]]") {
            continue;
        }
        let s = load(&name, &[set]);
        let verdict = s.expected_verdict().expect("catalog scenarios state one");
        support::check_scenario(
            &s,
            support::TEST_BUDGET,
            verdict,
            s.expected_invariant(),
            &name,
        );
        checked += 1;
    }
    assert!(checked >= 15, "{checked} scenarios");
}
