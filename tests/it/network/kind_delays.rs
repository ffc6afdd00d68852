//! Delays for some message kinds only (`delay_ms_min`, `delay_ms_max` in a
//! `[[network.links]]` entry with `kinds`): a slow transfer endpoint beside
//! a fast status endpoint on the same link, the bounds an entry leaves out
//! following its link, and the refusals with their place in the file.

use super::*;

/// A bank without keys asked before every re-send; `links` is appended.
const QUERIES: &str = r#"summary = "x"
[service]
idempotency = "claim-same-tx"
pass_key_to_bank = false
bank_timeout_ms = 5000
bank_max_attempts = 4
query_before_retry = true
[bank]
accepts_key = false
status_query = true
"#;

/// Per kind sent `from → to` over seeds `0..seeds`: the shortest and
/// longest time from a send to its first copy's delivery, in ms.
fn delays_ms(s: &models::Scenario, from: &str, to: &str, kind: &str, seeds: u64) -> (u64, u64) {
    let w = s.system.world();
    let id = |n: &str| w.actor_names.iter().position(|a| a == n).expect("actor") as u32;
    let kind = models::registry::message_kinds()
        .iter()
        .position(|k| *k == kind)
        .expect("kind") as u16;
    let (mut lo, mut hi) = (u64::MAX, 0);
    for seed in 0..seeds {
        for e in trace_of(s, seed).0 {
            if let TraceKind::Send {
                from: f,
                to: t,
                msg,
                deliver_at_us,
                ..
            } = &e.kind
            {
                if *f == id(from) && *t == id(to) && msg.kind() == kind {
                    let ms = (deliver_at_us - e.time_us) / sim::US_PER_MS;
                    lo = lo.min(ms);
                    hi = hi.max(ms);
                }
            }
        }
    }
    assert!(lo <= hi, "some {kind} was sent");
    (lo, hi)
}

#[test]
fn a_kinds_delay_slows_that_kind_only_and_the_query_overtakes_its_transfer() {
    let text = format!(
        "{QUERIES}[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nkinds = [\"transfer\"]\ndelay_ms_min = 6000\ndelay_ms_max = 8000\n"
    );
    let s = load_text("slow-transfers.toml", &text, &[]);
    let (lo, hi) = delays_ms(&s, "service", "bank", "transfer", 20);
    assert!(
        (6000..=8000).contains(&lo) && (6000..=8000).contains(&hi),
        "transfers: {lo}..{hi} ms"
    );
    // The status query on the same link keeps the link's 1 to 50 ms.
    let (lo, hi) = delays_ms(&s, "service", "bank", "status-query", 20);
    assert!(lo >= 1 && hi <= 50, "status queries: {lo}..{hi} ms");
    support::check_scenario(
        &s,
        20,
        Violation,
        Some("no-duplicate-effect"),
        "slow transfers",
    );
    // The same delay on the whole link slows the query too: it arrives
    // after the transfer it follows, and the bank pays once.
    let whole = text.replace("kinds = [\"transfer\"]\n", "");
    let s = load_text("slow-link.toml", &whole, &[]);
    support::check_scenario(&s, 20, Holds, None, "slow link");
}

#[test]
fn a_bound_a_kinds_entry_leaves_out_follows_its_link_as_the_file_ends() {
    // Only the shortest delay for transfers; their longest is the link's,
    // which an entry without `kinds` sets after it. Its losses make the
    // service ask, so that status queries cross the link too.
    let text = format!(
        "{QUERIES}[[network.links]]\nfrom = \"service\"\nto = \"bank\"\nkinds = [\"transfer\"]\ndelay_ms_min = 300\n[[network.links]]\nfrom = \"service\"\nto = \"bank\"\ndelay_ms_max = 400\nloss_per_mille = 300\n"
    );
    let s = load_text("bound-left-out.toml", &text, &[]);
    let (lo, hi) = delays_ms(&s, "service", "bank", "transfer", 60);
    assert!(
        lo >= 300 && hi <= 400 && lo < hi,
        "transfers: {lo}..{hi} ms"
    );
    let (lo, hi) = delays_ms(&s, "service", "bank", "status-query", 60);
    assert!(
        lo >= 1 && hi <= 400 && lo < 300,
        "status queries: {lo}..{hi} ms"
    );
}

#[test]
fn kind_delays_are_refused_with_their_place_and_a_fix() {
    let link = "[[network.links]]\nfrom = \"service\"\nto = \"bank\"\n";
    // (the entry's tail, words of the message, words of the help, line, column)
    let cases = [
        (
            "kinds = [\"transfr\"]\ndelay_ms_max = 9000\n",
            "unknown message kind \"transfr\"",
            "did you mean \"transfer\"?",
            5,
            10,
        ),
        (
            "kinds = [\"transfer\"]\ndelay_ms_min = -5\n",
            "`-5`",
            "whole number",
            6,
            16,
        ),
        (
            "kinds = [\"transfer\"]\ndelay_ms_min = 9000\ndelay_ms_max = 100\n",
            "the longest is shorter than the shortest",
            "delay_ms_min and delay_ms_max",
            7,
            16,
        ),
        (
            // The longest left to the link (1 to 50 ms): named as the link's.
            "kinds = [\"transfer\"]\ndelay_ms_min = 9000\n",
            "to 50 ms (the link's delay_ms_max)",
            "give this entry both",
            6,
            16,
        ),
        (
            "kinds = [\"transfer\"]\ndelay_ms_max = 100000000\n",
            "longer than the 24 h this key allows",
            "the range is 0 to 86400000",
            6,
            16,
        ),
    ];
    for (tail, message, help, line, column) in cases {
        let text = format!("summary = \"x\"\n{link}{tail}");
        let e = support::load_error("bad.toml", &text);
        assert!(e.message.contains(message), "{tail}: {e}");
        assert!(
            e.help.as_deref().is_some_and(|h| h.contains(help)),
            "{tail}: {e}"
        );
        assert_eq!((e.line, e.column), (line, column), "{tail}: {e}");
    }
}
