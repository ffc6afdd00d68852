//! Bad groups and rollouts: exit 2 material, each refused at its line with
//! the fix (the groups' shares, an unknown key with the closest known one, a
//! value the `[client]` or `[service]` loader refuses, moved to where the
//! group or the rollout wrote it).

use crate::support;

use support::{load_error, refuses};

const BASE: &str = "summary = \"bad\"\n[[operations]]\nclaim = 1\namount_eur = 10\nrepeat = 4\n";

#[test]
fn bad_groups_are_refused_with_the_fix() {
    refuses(
        BASE,
        &[
            (
                "[client.groups.a]\nshare = 0.3\n[client.groups.b]\nshare = 0.5\n",
                "add up to 0.8",
                "add up to 1",
            ),
            (
                "[client.groups.a]\nops = 3\n[client.groups.b]\nops = 2\n",
                "count 5 operations; [[operations]] has 4",
                "add up to 4",
            ),
            (
                "[client.groups.a]\nops = 3\n[client.groups.b]\nshare = 0.5\n",
                "some groups give a share",
                "every group",
            ),
            (
                "[client.groups.a]\nshare = 1\nkye = \"none\"\n",
                "unknown key `kye`",
                "did you mean `key`?",
            ),
            (
                "[client.groups.a]\nshare = 0.99\n[client.groups.b]\nshare = 0.01\n",
                "group `b` gets none of the 4 operations",
                "raise its share",
            ),
            (
                "[client.groups.a]\nkey = \"none\"\n",
                "without its part",
                "share = 0.3",
            ),
            (
                "[client]\nactors = 2\n[client.groups.a]\nshare = 1\n",
                "which actor would be which version",
                "remove `actors`",
            ),
        ],
    );
}

#[test]
fn a_bad_value_in_a_group_is_reported_where_the_group_writes_it() {
    let text = format!(
        "{BASE}[client]\nkey = \"stable\"\n[client.groups.a]\nshare = 1\nkey = \"stabel\"\n"
    );
    let e = load_error("bad.toml", &text);
    assert!(e.message.contains("stabel"), "{e}");
    assert!(
        e.help
            .as_deref()
            .is_some_and(|h| h.contains("did you mean \"stable\"")),
        "{e}"
    );
    let line = text.lines().position(|l| l == "key = \"stabel\"").unwrap() + 1;
    assert_eq!(e.line, line, "{e}");
}

#[test]
fn bad_rollouts_are_refused_with_the_fix() {
    let rollout = |actor: &str, at: u64, set: &str| {
        format!("[rollouts.v2]\nactor = \"{actor}\"\nat_ms = {at}\nset = {{ {set} }}\n")
    };
    refuses(
        BASE,
        &[
            (
                &rollout("servce", 1000, "idempotency = \"none\""),
                "no actor \"servce\"",
                "did you mean \"service\"",
            ),
            (
                &rollout("service", 1000, "idempotncy = \"none\""),
                "unknown key `idempotncy`",
                "did you mean `idempotency`?",
            ),
            (
                &rollout("service", 1000, "idempotency = \"claim\""),
                "unknown value \"claim\"",
                "\"claim-same-tx\"",
            ),
            (
                &rollout("service", 1000, "retention_ms = 5"),
                "keeps the retention",
                "[service]",
            ),
            (
                &rollout("client", 1000, "actors = 2"),
                "unknown key `actors`",
                "key",
            ),
            (
                &rollout("service", 0, "mode = \"action\""),
                "at 0 ms",
                "at_ms = 30000",
            ),
            (&rollout("service", 1000, ""), "changes nothing", "set = {"),
            (
                &format!(
                    "{}[rollouts.v3]\nactor = \"service\"\nat_ms = 1000\nset = {{ workers = 2 }}\n",
                    rollout("service", 1000, "workers = 1")
                ),
                "rollout `v2` of service is at the same time",
                "a time of its own",
            ),
        ],
    );
}
