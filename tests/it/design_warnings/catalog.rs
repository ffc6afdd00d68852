//! The catalog against the rules: no reference design holds only by luck,
//! and every rule has its row in the design-warnings page.

use super::helpers::ids;
use crate::support;
use crate::support::{load, scenario_files};
use models::scenario::Verdict;

#[test]
fn no_reference_design_holds_only_because_its_faults_stay_short() {
    // A holding catalog scenario with a design warning it does not state
    // would teach a rule it breaks; one that states it must show the design
    // surviving the gap (verify then demands a run reached it). A violating
    // one with a warning explains its own failure.
    let mut explained = 0;
    let mut survived = Vec::new();
    for p in scenario_files() {
        let s = load(&support::name_of(&p), &[]);
        let listed = s.expect.as_ref().map_or(&[][..], |e| &e.warnings[..]);
        match s.expected_verdict() {
            Some(Verdict::Holds) => {
                assert_eq!(
                    ids(&s),
                    listed,
                    "{} holds: its settings' warnings and [expect] warnings differ",
                    s.name
                );
                if !s.design_warnings.is_empty() {
                    survived.push(s.name.clone());
                }
            }
            _ => explained += usize::from(!s.design_warnings.is_empty()),
        }
    }
    // One reference design survives a broken rule, and says so; the
    // conformance scenarios 1 ms past a lease limit break the lease rule on
    // purpose, and show an inbox (or exactly-once delivery) surviving it;
    // so does the consumers' rollout, whose v2 makes its second copies by
    // acking after work that outlasts the lease.
    assert_eq!(
        survived,
        [
            "messaging-nats-ack-wait-past",
            "messaging-pubsub-eod-ack-past-deadline",
            "messaging-sqs-visibility-past",
            "messaging-unique-key",
            "rollout-inbox-before-late-ack"
        ]
    );
    assert!(
        explained >= 3,
        "the retention scenarios explain their failures"
    );
}

#[test]
fn every_rule_has_a_row_in_the_design_warnings_page() {
    let page = std::fs::read_to_string(support::root().join("docs/design-warnings.md"))
        .expect("docs/design-warnings.md");
    let format = std::fs::read_to_string(support::root().join("docs/scenario-format.md"))
        .expect("docs/scenario-format.md");
    for id in models::registry::RULES {
        assert!(page.contains(&format!("| `{id}` (")), "{id} has no row");
        assert!(
            format.contains(&format!("`{id}`")),
            "{id} is not in [expect] warnings"
        );
    }
}
