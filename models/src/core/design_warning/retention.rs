//! The retention rules: a layer that deduplicates by a key (or a message
//! id) must remember it for as long as copies carrying it may still arrive.

use super::{about_ms, rounded_ms, shown_ms, DesignWarning, INBOX_RETENTION, KEY_RETENTION};
use crate::core::input::Seg;
use sim::SituationId;

/// A layer that deduplicates by a key the client keeps across its retries,
/// and how long it remembers one (`None`: forever).
#[derive(Clone, Copy, Debug)]
pub struct KeyMemory {
    /// The setting, as written: `service.retention_ms`.
    pub setting: &'static str,
    /// How long it keeps a key; `None` for forever.
    pub retention_ms: Option<u64>,
    /// How much later than the first attempt's copy the last retry's can
    /// reach this layer, beyond the retries' own span: the network's delay
    /// spread on the way there. The key is created when the first copy
    /// arrives, so a copy that takes the longest way after one that took
    /// the shortest comes this much closer to the key's end.
    pub spread_ms: u64,
    /// How long a layer in between keeps re-sending one retry's copy to
    /// this layer with the same key, and the settings that make it (a
    /// service's own re-sends to the bank after a timeout): the last such
    /// re-send comes that much after the last retry.
    pub resend: Option<(u64, &'static str)>,
}

impl KeyMemory {
    /// A layer that keeps keys `retention_us` (0: forever), as its setting
    /// says, reached with a delay spread of `spread_ms`.
    pub fn of_us(setting: &'static str, retention_us: u64, spread_ms: u64) -> KeyMemory {
        KeyMemory {
            setting,
            retention_ms: (retention_us > 0).then_some(retention_us / sim::US_PER_MS),
            spread_ms,
            resend: None,
        }
    }

    /// This layer, also reached by re-sends for up to `resend_ms` after a
    /// retry, as `settings` make them; nothing changes for `resend_ms = 0`.
    pub fn resent_for(mut self, resend_ms: u64, settings: &'static str) -> KeyMemory {
        self.resend = (resend_ms > 0).then_some((resend_ms, settings));
        self
    }

    /// How much later than the retries' span the last copy can arrive here.
    fn late_ms(&self) -> u64 {
        self.spread_ms
            .saturating_add(self.resend.map_or(0, |(ms, _)| ms))
    }

    /// Whether this layer still knows the key when the last copy arrives,
    /// `span_ms` after the first attempt (`None`: retries without end). A
    /// key is forgotten the moment its age reaches the retention
    /// ([`DedupStore`](crate::core::dedup::DedupStore) expires at
    /// `age >= retention`), so a copy arriving exactly `kept` after the first
    /// finds it gone: only a strictly longer memory covers.
    pub fn covers(&self, span_ms: Option<u64>) -> bool {
        match (self.retention_ms, span_ms) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(kept), Some(span)) => span.saturating_add(self.late_ms()) < kept,
        }
    }
}

/// What a retry after every layer forgot its key does, for most designs: it
/// is executed as if it were new.
pub const TAKEN_AS_NEW: &str =
    "a retry after that is taken for a new request and takes effect again";

/// The rule of key retention: some layer that deduplicates by the client's
/// key must remember it for as long as the client may still retry with it,
/// or the retry after the last layer forgot is executed again. `span_ms` is
/// the latest a retry can start (`None`: the retries have no end); `layers`
/// are the layers that deduplicate by the key (none: not this rule's gap, the
/// design has no dedup at all and its runs show that); `then` says what such
/// a retry does and why it matters (mostly [`TAKEN_AS_NEW`]). A layer's delay
/// spread counts on top of the span: a key kept exactly as long as the
/// retries run is still forgotten before a late copy of the last one.
pub fn key_retention(
    layers: &[KeyMemory],
    span_ms: Option<u64>,
    retries: &str,
    then: &str,
    shown_by: Option<SituationId>,
    example: &'static str,
) -> Option<DesignWarning> {
    if layers.is_empty() || layers.iter().any(|l| l.covers(span_ms)) {
        return None;
    }
    let text = retention_text(layers, span_ms, retries, then, None)?;
    Some(retention_design_warning(text, shown_by, example, None))
}

/// The rule of key retention at one layer, `name` (`"the service"`), that
/// forgets the key while the client still retries though a later layer
/// still recognises it: the later layer keeps its own effect to one, but
/// `layer` executes the retry again ([`key_retention`] for what the other
/// arguments say). The text names `layer`'s setting at the place that
/// writes it (`DesignWarning::at`, `at`).
pub fn layer_key_retention(
    (layer, name, at): (KeyMemory, &str, Vec<Seg>),
    span_ms: Option<u64>,
    retries: &str,
    then: &str,
    shown_by: Option<SituationId>,
    example: &'static str,
) -> Option<DesignWarning> {
    if layer.covers(span_ms) {
        return None;
    }
    let text = retention_text(&[layer], span_ms, retries, then, Some(name))?;
    Some(retention_design_warning(text, shown_by, example, Some(at)))
}

/// The key-retention warning with `text`, for both forms of the rule.
fn retention_design_warning(
    text: String,
    shown_by: Option<SituationId>,
    example: &'static str,
    at: Option<Vec<Seg>>,
) -> DesignWarning {
    DesignWarning {
        id: KEY_RETENTION,
        text,
        shown_by,
        example,
        at,
    }
}

/// The text of [`key_retention`]'s warning; `named` calls the layer that
/// forgets by its name rather than the only or every layer that
/// deduplicates.
fn retention_text(
    layers: &[KeyMemory],
    span_ms: Option<u64>,
    retries: &str,
    then: &str,
    named: Option<&str>,
) -> Option<String> {
    let kept = layers.iter().filter_map(|l| l.retention_ms).max()?;
    let longest: Vec<&KeyMemory> = layers
        .iter()
        .filter(|l| l.retention_ms == Some(kept))
        .collect();
    // Layers that remember as long name the setting together.
    let setting = longest
        .iter()
        .map(|l| l.setting)
        .collect::<Vec<_>>()
        .join(" and ");
    // Where the times as rounded would add up to no more than the
    // retention, every time here is given exactly, so that the message
    // shows the gap it warns of (161 s and 12 s against 172.998 s).
    let exact = span_ms.is_some_and(|span| {
        let late = |pick: fn(&KeyMemory) -> u64| {
            longest.iter().map(|l| pick(l)).max().map_or(0, rounded_ms)
        };
        let shown_late = if span <= kept {
            late(|l| l.spread_ms) + late(|l| l.resend.map_or(0, |(ms, _)| ms))
        } else {
            0
        };
        rounded_ms(span) + shown_late <= rounded_ms(kept)
    });
    let ms = |v: u64| shown_ms(v, exact);
    let until = match span_ms {
        Some(span) => format!("for up to {} after the first attempt", ms(span)),
        None => "without end (no max_attempts, no window_ms)".to_string(),
    };
    // Said only where the delays and re-sends decide: the span alone would
    // be covered.
    let late = match span_ms {
        Some(span) if span <= kept => late_copies(&longest, exact),
        _ => String::new(),
    };
    let mut who = match (named, layers.len()) {
        (Some(name), _) => format!("{name} forgets it after {} ({setting})", ms(kept)),
        (None, 1) => format!(
            "the only layer that deduplicates by it forgets it after {} ({setting})",
            ms(kept)
        ),
        (None, _) => format!(
            "every layer that deduplicates by it has forgotten it after {} ({setting})",
            ms(kept)
        ),
    };
    let latest = longest.iter().map(|l| l.late_ms()).max().unwrap_or(0);
    if span_ms.is_some_and(|span| span.saturating_add(latest) == kept) {
        who.push_str(", the very moment the last copy can arrive (a key is gone once its age reaches the retention)");
    }
    Some(format!(
        "{retries} with the same key {until}{late}, but {who}: {then}"
    ))
}

/// What makes a copy arrive after the retries' span at the layers that
/// remember longest: the network's spread, and re-sends on the way.
fn late_copies(longest: &[&KeyMemory], exact: bool) -> String {
    let spread = longest.iter().map(|l| l.spread_ms).max().unwrap_or(0);
    let mut late = String::new();
    if spread > 0 {
        late.push_str(&format!(
            ", and the network can deliver its copy up to {} later than the first attempt's (the delay ranges in [network])",
            shown_ms(spread, exact)
        ));
    }
    if let Some((ms, settings)) = longest.iter().filter_map(|l| l.resend).max() {
        late.push_str(&format!(
            ", and re-sends carry it on for up to {} more ({settings})",
            shown_ms(ms, exact)
        ));
    }
    late
}

/// The rule of an inbox's retention: a consumer that deduplicates by message
/// id must keep an id for as long as copies of its message may still arrive.
/// `span_ms` is the longest the broker keeps redelivering one message
/// (`None`: without end); `spread_ms` how much later, beyond that span,
/// the last copy can reach the inbox than the first copy's row was written,
/// and what makes it so (`spread_by`: the delay ranges, a handler's
/// processing jitter).
pub fn inbox_retention(
    setting: &str,
    retention_ms: u64,
    span_ms: Option<u64>,
    (spread_ms, spread_by): (u64, &str),
    redelivers: &str,
    shown_by: SituationId,
    example: &'static str,
) -> Option<DesignWarning> {
    if retention_ms == 0 {
        return None; // kept forever: bounded storage is another invariant's business
    }
    let until = match span_ms {
        // Strictly: a row whose age reaches the retention is gone (DedupStore).
        Some(span) if span.saturating_add(spread_ms) < retention_ms => return None,
        Some(span) if span <= retention_ms => format!(
            "{redelivers} for up to {}, and the last copy can reach the inbox up to {} later than the first ({spread_by})",
            about_ms(span),
            about_ms(spread_ms)
        ),
        Some(span) => format!("{redelivers} for up to {}", about_ms(span)),
        None => format!("{redelivers} until an ack gets through, with no limit"),
    };
    Some(DesignWarning {
        id: INBOX_RETENTION,
        text: format!(
            "the inbox forgets a message id after {} ({setting}), but {until}: a copy after that passes the inbox and takes effect again",
            about_ms(retention_ms)
        ),
        shown_by: Some(shown_by),
        example,
        at: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY_MS: u64 = 86_400_000;

    fn layer(setting: &'static str, days: Option<u64>) -> KeyMemory {
        KeyMemory {
            setting,
            retention_ms: days.map(|d| d * DAY_MS),
            spread_ms: 0,
            resend: None,
        }
    }

    #[test]
    fn a_key_forgotten_before_the_last_retry_is_a_design_warning_and_one_kept_is_not() {
        let one_day = [layer("service.retention_ms", Some(1))];
        let h = key_retention(
            &one_day,
            Some(3 * DAY_MS),
            "the client",
            TAKEN_AS_NEW,
            Some(7),
            "x",
        )
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
        // A fuzzed delay of u64::MAX ms is printed, not overflowed.
        assert_eq!(about_ms(u64::MAX), "213503982334.6 days");
        assert_eq!(h.shown_by, Some(7));
        // A key is gone once its age reaches the retention: a day covers
        // retries for a day less one millisecond, not for a whole day.
        assert!(key_retention(&one_day, Some(DAY_MS - 1), "c", TAKEN_AS_NEW, None, "x").is_none());
        assert!(key_retention(&one_day, Some(DAY_MS), "c", TAKEN_AS_NEW, None, "x").is_some());
        assert!(key_retention(&one_day, None, "c", TAKEN_AS_NEW, None, "x").is_some());
        // A second layer that remembers longer, or forever, covers the first.
        let covered = [
            layer("service.retention_ms", Some(1)),
            layer("bank.key_retention_ms", Some(7)),
        ];
        assert!(key_retention(&covered, Some(3 * DAY_MS), "c", TAKEN_AS_NEW, None, "x").is_none());
        let forever = [
            layer("service.retention_ms", Some(1)),
            layer("bank.key_retention_ms", None),
        ];
        assert!(key_retention(&forever, None, "c", TAKEN_AS_NEW, None, "x").is_none());
        // No layer deduplicates: no retention to compare.
        assert!(key_retention(&[], Some(3 * DAY_MS), "c", TAKEN_AS_NEW, None, "x").is_none());
    }

    /// A retention equal to the retry window: the window bounds when the
    /// last attempt *ends*, so the last one starts a timeout before it and
    /// its copy finds the key while the delay spread stays below that
    /// timeout. Equal is not enough once the spread reaches the timeout
    /// (chapter 04's proxy that holds a request up to 60 s), and one
    /// millisecond of retention more covers it again.
    #[test]
    fn a_retention_equal_to_the_window_is_judged_by_the_spread_against_the_timeout() {
        use crate::core::retry::RetryPolicy;
        const HOUR_MS: u64 = 3_600_000;
        const TIMEOUT_MS: u64 = 10_000;
        let policy = RetryPolicy {
            window_ms: HOUR_MS,
            max_attempts: 0,
            ..RetryPolicy::immediate(1)
        };
        let span = policy.longest_span_ms(TIMEOUT_MS);
        assert_eq!(span, Some(HOUR_MS - TIMEOUT_MS));
        let kept = |retention_ms, spread_ms| KeyMemory {
            setting: "service.retention_ms",
            retention_ms: Some(retention_ms),
            spread_ms,
            resend: None,
        };
        let warns = |retention_ms, spread_ms| {
            key_retention(
                &[kept(retention_ms, spread_ms)],
                span,
                "c",
                TAKEN_AS_NEW,
                None,
                "x",
            )
            .is_some()
        };
        assert!(
            !warns(HOUR_MS, TIMEOUT_MS - 1),
            "equal, a spread inside the timeout"
        );
        assert!(
            warns(HOUR_MS, TIMEOUT_MS),
            "equal, the last copy arrives as the key goes"
        );
        assert!(
            !warns(HOUR_MS + 1, TIMEOUT_MS),
            "one millisecond more covers it"
        );
    }

    #[test]
    fn an_inbox_forgetting_before_the_last_redelivery_is_a_design_warning() {
        let h = inbox_retention(
            "c.r",
            10_000,
            Some(150_000),
            (0, "d"),
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
        assert!(inbox_retention("c.r", 10_000, None, (0, "d"), "it redelivers", 3, "x").is_some());
        assert!(inbox_retention("c.r", 0, None, (0, "d"), "it redelivers", 3, "x").is_none());
        assert!(inbox_retention("c.r", 3_600_000, Some(150_000), (0, "d"), "b", 3, "x").is_none());
    }

    #[test]
    fn the_delay_spread_counts_on_top_of_the_retry_span() {
        const HOUR_MS: u64 = 3_600_000;
        let at = |spread_ms| KeyMemory {
            setting: "service.retention_ms",
            retention_ms: Some(HOUR_MS),
            spread_ms,
            resend: None,
        };
        // Retries until 10 s before the hour: covered on a fast network...
        let span = Some(HOUR_MS - 10_000);
        assert!(key_retention(&[at(49)], span, "c", TAKEN_AS_NEW, None, "x").is_none());
        assert!(key_retention(&[at(9_999)], span, "c", TAKEN_AS_NEW, None, "x").is_none());
        assert!(key_retention(&[at(10_000)], span, "c", TAKEN_AS_NEW, None, "x").is_some());
        // ...not once a copy can take 10 s longer than the first one did.
        let h = key_retention(
            &[at(10_001)],
            span,
            "the client retries",
            TAKEN_AS_NEW,
            None,
            "x",
        )
        .expect("10.001 s of spread past a 10 s margin");
        // Rounded, 59.8 min and 10 s would read as within the hour: exact.
        assert!(
            h.text.contains("up to 3590 s after")
                && h.text.contains("up to 10.001 s later")
                && h.text.contains("after 3600 s")
                && h.text.contains("[network]"),
            "{}",
            h.text
        );
        // Where the span alone is too long, the text says so and not more.
        let long = key_retention(
            &[at(60_000)],
            Some(2 * HOUR_MS),
            "c",
            TAKEN_AS_NEW,
            None,
            "x",
        )
        .unwrap();
        assert!(!long.text.contains("[network]"), "{}", long.text);
        // One layer that covers the span and its own spread is enough.
        let bank = KeyMemory {
            setting: "bank.key_retention_ms",
            retention_ms: Some(2 * HOUR_MS),
            spread_ms: 60_000,
            resend: None,
        };
        assert!(key_retention(&[at(60_000), bank], span, "c", TAKEN_AS_NEW, None, "x").is_none());
        // The inbox: 150 s of redelivery against 160 s: 9.999 s of spread
        // fits, 10 s reaches the very age at which the row is gone, 11 s more.
        assert!(
            inbox_retention("c.r", 160_000, Some(150_000), (9_999, "d"), "b", 3, "x").is_none()
        );
        assert!(
            inbox_retention("c.r", 160_000, Some(150_000), (10_000, "d"), "b", 3, "x").is_some()
        );
        let inbox = inbox_retention("c.r", 160_000, Some(150_000), (11_000, "d"), "b", 3, "x")
            .expect("11 s past a 10 s margin");
        assert!(inbox.text.contains("11 s later"), "{}", inbox.text);
    }
}
