//! Design warnings: settings that break a rule of the domain even when no run
//! of the scenario shows it.
//!
//! A sweep judges the schedules its faults allow. "Holds" is then true of
//! that fault model and nothing more: a design whose keys live one day while
//! its client retries for three holds in every scenario without an outage of
//! a day, and pays twice in the first one that has it. A model therefore
//! reads its settings for the gaps the source articles name and reports each
//! as a [`Hazard`], with the situation its actors report when a run does
//! reach the gap, so that `check` can say whether the sweep went there.

use sim::SituationId;

/// One gap in a design, found in its settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    /// Stable, for JSON and tests: `key-retention-below-retry-span`.
    pub id: &'static str,
    /// What is wrong and what it costs, with the settings' values.
    pub text: String,
    /// The situation a run reports when it reaches the gap, if one marks it.
    pub shown_by: Option<SituationId>,
    /// A catalog scenario that shows the gap turning into a violation.
    pub example: &'static str,
}

/// Every rule a model checks, by id: `[expect] warnings` names them.
pub const RULES: [&str; 5] = [
    KEY_RETENTION,
    INBOX_RETENTION,
    LEASE_BELOW_CALL,
    CONSUMER_WITHOUT_DEDUP,
    VISIBILITY_BELOW_PROCESSING,
];

const KEY_RETENTION: &str = "key-retention-below-retry-span";
const INBOX_RETENTION: &str = "inbox-retention-below-redelivery";
/// A lease on "in progress" keys that ends before the call it guards.
pub const LEASE_BELOW_CALL: &str = "lease-shorter-than-bank-call";
/// A consumer that applies every delivery.
pub const CONSUMER_WITHOUT_DEDUP: &str = "consumer-without-dedup";
/// A broker that redelivers while the first handler still runs.
pub const VISIBILITY_BELOW_PROCESSING: &str = "visibility-below-processing";

/// A layer that deduplicates by a key the client keeps across its retries,
/// and how long it remembers one (`None`: forever).
#[derive(Clone, Copy, Debug)]
pub struct KeyMemory {
    /// The setting, as written: `service.retention_ms`.
    pub setting: &'static str,
    /// How long it keeps a key; `None` for forever.
    pub retention_ms: Option<u64>,
}

impl KeyMemory {
    /// A layer that keeps keys `retention_us` (0: forever), as its setting says.
    pub fn of_us(setting: &'static str, retention_us: u64) -> KeyMemory {
        KeyMemory {
            setting,
            retention_ms: (retention_us > 0).then_some(retention_us / sim::US_PER_MS),
        }
    }
}

/// The rule of key retention: some layer that deduplicates by the client's
/// key must remember it for as long as the client may still retry with it,
/// or the retry after the last layer forgot is executed again. `span_ms` is
/// the latest a retry can start (`None`: the retries have no end); `layers`
/// are the layers that deduplicate by the key (none: not this rule's gap, the
/// design has no dedup at all and its runs show that).
pub fn key_retention(
    layers: &[KeyMemory],
    span_ms: Option<u64>,
    retries: &str,
    shown_by: Option<SituationId>,
    example: &'static str,
) -> Option<Hazard> {
    if layers.is_empty() || layers.iter().any(|l| l.retention_ms.is_none()) {
        return None;
    }
    let kept = layers.iter().filter_map(|l| l.retention_ms).max()?;
    // Layers that remember as long name the setting together.
    let setting = layers
        .iter()
        .filter(|l| l.retention_ms == Some(kept))
        .map(|l| l.setting)
        .collect::<Vec<_>>()
        .join(" and ");
    let until = match span_ms {
        Some(span) if span <= kept => return None,
        Some(span) => format!("for up to {} after the first attempt", about_ms(span)),
        None => "without end (no max_attempts, no window_ms)".to_string(),
    };
    let who = match layers.len() {
        1 => format!(
            "the only layer that deduplicates by it forgets it after {} ({setting})",
            about_ms(kept)
        ),
        _ => format!(
            "every layer that deduplicates by it has forgotten it after {} ({setting})",
            about_ms(kept)
        ),
    };
    Some(Hazard {
        id: KEY_RETENTION,
        text: format!(
            "{retries} with the same key {until}, but {who}: a retry after that is taken for a new request and takes effect again"
        ),
        shown_by,
        example,
    })
}

/// The rule of an inbox's retention: a consumer that deduplicates by message
/// id must keep an id for as long as copies of its message may still arrive.
/// `span_ms` is the longest the broker keeps redelivering one message
/// (`None`: without end).
pub fn inbox_retention(
    setting: &str,
    retention_ms: u64,
    span_ms: Option<u64>,
    redelivers: &str,
    shown_by: SituationId,
    example: &'static str,
) -> Option<Hazard> {
    if retention_ms == 0 {
        return None; // kept forever: bounded storage is another invariant's business
    }
    let until = match span_ms {
        Some(span) if span <= retention_ms => return None,
        Some(span) => format!("{redelivers} for up to {}", about_ms(span)),
        None => format!("{redelivers} until an ack gets through, with no limit"),
    };
    Some(Hazard {
        id: INBOX_RETENTION,
        text: format!(
            "the inbox forgets a message id after {} ({setting}), but {until}: a copy after that passes the inbox and takes effect again",
            about_ms(retention_ms)
        ),
        shown_by: Some(shown_by),
        example,
    })
}

/// A span for people, rounded to a tenth of the unit that keeps it short:
/// `41.5 s`, `3 days`.
pub fn about_ms(ms: u64) -> String {
    const UNITS: [(u64, &str, &str); 4] = [
        (86_400_000, "day", "days"),
        (3_600_000, "h", "h"),
        (60_000, "min", "min"),
        (1000, "s", "s"),
    ];
    for (unit, one, many) in UNITS {
        // Minutes from 3 on: 150 s reads better than 2.5 min.
        let from = if unit == 60_000 { 3 * unit } else { 2 * unit };
        if ms >= from || ms == unit || (unit == 1000 && ms >= unit) {
            let tenths = (ms * 10 + unit / 2) / unit;
            return match (tenths / 10, tenths % 10) {
                (1, 0) => format!("1 {one}"),
                (n, 0) => format!("{n} {many}"),
                (n, t) => format!("{n}.{t} {many}"),
            };
        }
    }
    format!("{ms} ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY_MS: u64 = 86_400_000;

    fn layer(setting: &'static str, days: Option<u64>) -> KeyMemory {
        KeyMemory {
            setting,
            retention_ms: days.map(|d| d * DAY_MS),
        }
    }

    #[test]
    fn a_key_forgotten_before_the_last_retry_is_a_hazard_and_one_kept_is_not() {
        let one_day = [layer("service.retention_ms", Some(1))];
        let h = key_retention(&one_day, Some(3 * DAY_MS), "the client", Some(7), "x")
            .expect("kept 1 day, retried for 3");
        assert_eq!(h.id, "key-retention-below-retry-span");
        assert!(
            h.text.contains("3 days") && h.text.contains("1 day"),
            "{}",
            h.text
        );
        assert_eq!(about_ms(259_190_000), "3 days");
        assert_eq!(about_ms(41_500), "41.5 s");
        assert_eq!(about_ms(150_000), "150 s");
        assert_eq!(about_ms(270_000), "4.5 min");
        assert_eq!(about_ms(1_500), "1.5 s");
        assert_eq!(about_ms(999), "999 ms");
        assert_eq!(about_ms(3_600_000), "1 h");
        assert_eq!(about_ms(86_400_000), "1 day");
        assert_eq!(about_ms(90_000), "90 s");
        assert_eq!(h.shown_by, Some(7));
        assert!(key_retention(&one_day, Some(DAY_MS), "c", None, "x").is_none());
        assert!(key_retention(&one_day, None, "c", None, "x").is_some());
        // A second layer that remembers longer, or forever, covers the first.
        let covered = [
            layer("service.retention_ms", Some(1)),
            layer("bank.key_retention_ms", Some(7)),
        ];
        assert!(key_retention(&covered, Some(3 * DAY_MS), "c", None, "x").is_none());
        let forever = [
            layer("service.retention_ms", Some(1)),
            layer("bank.key_retention_ms", None),
        ];
        assert!(key_retention(&forever, None, "c", None, "x").is_none());
        // No layer deduplicates: no retention to compare.
        assert!(key_retention(&[], Some(3 * DAY_MS), "c", None, "x").is_none());
    }

    #[test]
    fn an_inbox_forgetting_before_the_last_redelivery_is_a_hazard() {
        let h = inbox_retention(
            "c.r",
            10_000,
            Some(150_000),
            "the broker redelivers",
            3,
            "x",
        )
        .expect("10 s against 2.5 min");
        assert!(
            h.text.contains("10 s") && h.text.contains("150 s"),
            "{}",
            h.text
        );
        assert!(inbox_retention("c.r", 10_000, None, "it redelivers", 3, "x").is_some());
        assert!(inbox_retention("c.r", 0, None, "it redelivers", 3, "x").is_none());
        assert!(inbox_retention("c.r", 3_600_000, Some(150_000), "b", 3, "x").is_none());
    }
}
