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
    /// The one setting the gap is in, where a single line is to blame: the
    /// loader, which knows the file and the `--set`s, starts the text with
    /// the place that writes it (`f.toml:32:17: `), as it does for
    /// `setting-without-effect`.
    pub at: Option<Vec<super::input::Seg>>,
}

/// Every rule a model checks, by id: `[expect] warnings` names them.
pub const RULES: [&str; 18] = [
    KEY_RETENTION,
    INBOX_RETENTION,
    INBOX_RETENTION_BELOW_REPUBLISH,
    PRODUCER_ID_EXPIRY_BELOW_RETRIES,
    IDEMPOTENCE_OFF_ABOVE_FIVE_IN_FLIGHT,
    ACK_BEFORE_COMMIT_UNDER_CRASHES,
    COMMIT_RESENT_WITHOUT_DEDUP,
    ACK_RESULT_LOST_DROPS_WORK,
    LEASE_BELOW_CALL,
    KEY_DELETED_ON_TIMEOUT,
    CONSUMER_WITHOUT_DEDUP,
    DEDUP_ONLY_ON_REDELIVERY,
    VISIBILITY_BELOW_PROCESSING,
    STATUS_LAG_ABOVE_READ_DELAY,
    STATUS_QUERY_OVERTAKES_TRANSFER,
    TIMESTAMP_KEY_COLLIDES,
    super::unused::SETTING_WITHOUT_EFFECT,
    super::retry_table::RETRY_WINDOW_TOO_SHORT,
];

const KEY_RETENTION: &str = "key-retention-below-retry-span";
const INBOX_RETENTION: &str = "inbox-retention-below-redelivery";
/// An inbox that forgets before an outbox relay stops republishing.
pub const INBOX_RETENTION_BELOW_REPUBLISH: &str = "inbox-retention-below-republish";
/// A broker that forgets producer ids while the relay still retries.
pub const PRODUCER_ID_EXPIRY_BELOW_RETRIES: &str = "producer-id-expiry-below-retries";
/// An idempotent producer with more publishes in flight than the broker
/// keeps sequence numbers for: its idempotence is silently off.
pub const IDEMPOTENCE_OFF_ABOVE_FIVE_IN_FLIGHT: &str = "idempotence-off-above-five-in-flight";
/// A consumer that acks before it commits, in a scenario that crashes it.
pub const ACK_BEFORE_COMMIT_UNDER_CRASHES: &str = "ack-before-commit-under-crashes";
/// A consumer that acks first re-sends a commit that is not keyed by the
/// message id, in a scenario that can keep its database's answers away.
pub const COMMIT_RESENT_WITHOUT_DEDUP: &str = "commit-resent-without-dedup";
/// A consumer that acks with result before its commit drops its work when
/// no ask for the result is answered, in a scenario that can keep every
/// answer away.
pub const ACK_RESULT_LOST_DROPS_WORK: &str = "ack-result-lost-drops-work";
/// A lease on "in progress" keys that ends before the call it guards.
pub const LEASE_BELOW_CALL: &str = "lease-shorter-than-bank-call";
/// A key deleted when the bank's outcome is unknown.
pub const KEY_DELETED_ON_TIMEOUT: &str = "key-deleted-on-timeout";
/// A consumer that applies every delivery.
pub const CONSUMER_WITHOUT_DEDUP: &str = "consumer-without-dedup";
/// A consumer that reads its inbox only for deliveries flagged as redelivered.
pub const DEDUP_ONLY_ON_REDELIVERY: &str = "dedup-only-on-redelivery";
/// A broker that redelivers while the first handler still runs.
pub const VISIBILITY_BELOW_PROCESSING: &str = "visibility-below-processing";
/// A status read that can come sooner after a transfer than the replica
/// it reads shows that transfer.
pub const STATUS_LAG_ABOVE_READ_DELAY: &str = "status-lag-above-read-delay";
/// A status query that can reach the bank before the transfer it follows,
/// whose "not paid" the design then acts on.
pub const STATUS_QUERY_OVERTAKES_TRANSFER: &str = "status-query-overtakes-transfer";
/// A key minted from the clock: it names a time bucket, not an operation.
pub const TIMESTAMP_KEY_COLLIDES: &str = "timestamp-key-collides";

/// How long the actor `actor` of the scenario `text` stays down after a
/// crash, `(restart_ms_min, restart_ms_max)`, if its `[crashes.NAME]` table
/// can crash it at all (the upper end of `crash_per_mille` above 0). The
/// rules read the file's text, as the loader hands it to a model before the
/// world is built; a file that does not parse crashes nothing here, since
/// the loader refuses it anyway.
pub fn restart_ms(text: &str, actor: &str) -> Option<(u64, u64)> {
    let doc: toml::Table = text.parse().ok()?;
    let table = doc
        .get("crashes")
        .and_then(toml::Value::as_table)?
        .get(actor)
        .and_then(toml::Value::as_table)?;
    let whole = |v: Option<&toml::Value>| {
        v.and_then(toml::Value::as_integer)
            .and_then(|i| u64::try_from(i).ok())
    };
    // `50` or `[0, 50]`: a range can reach its upper end.
    let per_mille = match table.get("crash_per_mille") {
        Some(toml::Value::Array(a)) => whole(a.last()),
        other => whole(other),
    };
    (per_mille.unwrap_or(0) > 0).then(|| {
        (
            whole(table.get("restart_ms_min")).unwrap_or(0),
            whole(table.get("restart_ms_max")).unwrap_or(0),
        )
    })
}

/// The network's delay range per directed link, by actor name, as
/// `[network]` and `[[network.links]]` set it: what the rules need to know
/// how much later than its sender's retry a copy can arrive.
///
/// Built from the file before the world is (a model's actors are not known
/// yet), after each delay's range check (`scenario::network::delays`): the
/// arithmetic here never sees a value the loader refuses. The order checks
/// (min below max, actor names) come when the world is built, so a warning is
/// never shown from a file that fails them.
#[derive(Clone, Debug)]
pub struct Delays {
    base_ms: (u64, u64),
    /// The entries in file order, later ones winning.
    links: Vec<LinkDelays>,
}

/// One `[[network.links]]` entry's delays; a side left out (`None`) is
/// every actor, a bound left out keeps the link's.
#[derive(Clone, Debug)]
struct LinkDelays {
    from: Option<String>,
    to: Option<String>,
    min_ms: Option<u64>,
    max_ms: Option<u64>,
}

impl Default for Delays {
    /// The defaults of `[network]`: 1 to 50 ms on every link.
    fn default() -> Self {
        Delays::new(1, 50)
    }
}

impl Delays {
    /// Every link delays by `min_ms` to `max_ms`.
    pub fn new(min_ms: u64, max_ms: u64) -> Delays {
        Delays {
            base_ms: (min_ms, max_ms),
            links: Vec::new(),
        }
    }

    /// One `[[network.links]]` entry: the bounds it sets replace those of
    /// the links it names (`None`: every sender, or every receiver).
    pub fn link(
        &mut self,
        from: Option<&str>,
        to: Option<&str>,
        min_ms: Option<u64>,
        max_ms: Option<u64>,
    ) {
        self.links.push(LinkDelays {
            from: from.map(str::to_string),
            to: to.map(str::to_string),
            min_ms,
            max_ms,
        });
    }

    /// The shortest and the longest delay from `from` to `to`.
    pub fn range_ms(&self, from: &str, to: &str) -> (u64, u64) {
        let mut r = self.base_ms;
        for l in &self.links {
            if from != to
                && l.from.as_deref().is_none_or(|f| f == from)
                && l.to.as_deref().is_none_or(|t| t == to)
            {
                r = (l.min_ms.unwrap_or(r.0), l.max_ms.unwrap_or(r.1));
            }
        }
        r
    }

    /// The shortest and the longest trip along `path` (actor names, sender
    /// first), one delay per hop.
    pub fn path_ms(&self, path: &[&str]) -> (u64, u64) {
        path.windows(2)
            .map(|w| self.range_ms(w[0], w[1]))
            .fold((0, 0), |(lo, hi), (l, h)| {
                (lo.saturating_add(l), hi.saturating_add(h))
            })
    }

    /// How much later one copy can arrive than another that set off at the
    /// same moment along any of `paths` (the same layer reached from several
    /// clients, or one broker's several consumers): the longest trip less
    /// the shortest.
    pub fn spread_ms(&self, paths: &[Vec<&str>]) -> u64 {
        let trips = paths.iter().map(|p| self.path_ms(p));
        let longest = trips.clone().map(|t| t.1).max().unwrap_or(0);
        let shortest = trips.map(|t| t.0).min().unwrap_or(0);
        longest.saturating_sub(shortest)
    }
}

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
) -> Option<Hazard> {
    if layers.is_empty() || layers.iter().any(|l| l.covers(span_ms)) {
        return None;
    }
    let text = retention_text(layers, span_ms, retries, then, None)?;
    Some(Hazard {
        id: KEY_RETENTION,
        text,
        shown_by,
        example,
        at: None,
    })
}

/// The rule of key retention at one layer, `name` (`"the service"`), that
/// forgets the key while the client still retries though a later layer
/// still recognises it: the later layer keeps its own effect to one, but
/// `layer` executes the retry again ([`key_retention`] for what the other
/// arguments say). The text names `layer`'s setting at the place that
/// writes it (`Hazard::at`, `at`).
pub fn layer_key_retention(
    (layer, name, at): (KeyMemory, &str, Vec<super::input::Seg>),
    span_ms: Option<u64>,
    retries: &str,
    then: &str,
    shown_by: Option<SituationId>,
    example: &'static str,
) -> Option<Hazard> {
    if layer.covers(span_ms) {
        return None;
    }
    let text = retention_text(&[layer], span_ms, retries, then, Some(name))?;
    Some(Hazard {
        id: KEY_RETENTION,
        text,
        shown_by,
        example,
        at: Some(at),
    })
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
) -> Option<Hazard> {
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
    Some(Hazard {
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

/// `ms` exactly (`172.998 s`) where `exact`, else [`about_ms`]: for a
/// message that compares times which rounding would show as equal.
pub fn shown_ms(ms: u64, exact: bool) -> String {
    if !exact || ms < 1000 {
        return about_ms(ms);
    }
    let frac = format!("{:03}", ms % 1000);
    match frac.trim_end_matches('0') {
        "" => format!("{} s", ms / 1000),
        f => format!("{}.{f} s", ms / 1000),
    }
}

/// Two times a message compares, each as [`about_ms`] shows it, or both
/// exactly where rounding would show different times alike.
pub fn about_pair(a_ms: u64, b_ms: u64) -> (String, String) {
    let exact = a_ms != b_ms && about_ms(a_ms) == about_ms(b_ms);
    (shown_ms(a_ms, exact), shown_ms(b_ms, exact))
}

/// How [`about_ms`] rounds `ms`: tenths of a unit, the unit in ms, and its
/// names; `None` below a second, which is shown exactly.
fn rounding(ms: u64) -> Option<(u128, u64, &'static str, &'static str)> {
    const UNITS: [(u64, &str, &str); 4] = [
        (86_400_000, "day", "days"),
        (3_600_000, "h", "h"),
        (60_000, "min", "min"),
        (1000, "s", "s"),
    ];
    UNITS.into_iter().find_map(|(unit, one, many)| {
        // Minutes from 3 on: 150 s reads better than 2.5 min.
        let from = if unit == 60_000 { 3 * unit } else { 2 * unit };
        (ms >= from || ms == unit || (unit == 1000 && ms >= unit)).then(|| {
            // Wide arithmetic: a scenario may set a delay near u64::MAX.
            let tenths = (u128::from(ms) * 10 + u128::from(unit / 2)) / u128::from(unit);
            (tenths, unit, one, many)
        })
    })
}

/// The time [`about_ms`] shows for `ms`, in ms.
fn rounded_ms(ms: u64) -> u128 {
    rounding(ms).map_or(u128::from(ms), |(tenths, unit, ..)| {
        tenths * u128::from(unit) / 10
    })
}

/// A span for people, rounded to a tenth of the unit that keeps it short:
/// `41.5 s`, `3 days`.
pub fn about_ms(ms: u64) -> String {
    match rounding(ms) {
        Some((tenths, _, one, many)) => match (tenths / 10, tenths % 10) {
            (1, 0) => format!("1 {one}"),
            (n, 0) => format!("{n} {many}"),
            (n, t) => format!("{n}.{t} {many}"),
        },
        None => format!("{ms} ms"),
    }
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
    fn times_that_differ_are_never_shown_alike() {
        assert_eq!(
            about_pair(160_000, 159_999),
            ("160 s".into(), "159.999 s".into())
        );
        assert_eq!(
            about_pair(172_998, 172_999),
            ("172.998 s".into(), "172.999 s".into())
        );
        // Where rounding already tells them apart, or they are equal, as usual.
        assert_eq!(
            about_pair(160_000, 100_000),
            ("160 s".into(), "100 s".into())
        );
        assert_eq!(about_pair(DAY_MS, DAY_MS), ("1 day".into(), "1 day".into()));
        assert_eq!(shown_ms(999, true), "999 ms");
        assert_eq!(shown_ms(4 * DAY_MS - 10_001, true), "345589.999 s");
    }

    #[test]
    fn a_key_forgotten_before_the_last_retry_is_a_hazard_and_one_kept_is_not() {
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

    #[test]
    fn an_inbox_forgetting_before_the_last_redelivery_is_a_hazard() {
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

    #[test]
    fn delays_follow_the_network_tables_later_entries_winning() {
        let mut d = Delays::new(1, 50);
        assert_eq!(d.range_ms("client", "service"), (1, 50));
        d.link(Some("client"), Some("service"), None, Some(60_000));
        d.link(Some("service"), Some("bank"), Some(5), Some(5));
        d.link(Some("client"), Some("service"), Some(100), None);
        assert_eq!(d.range_ms("client", "service"), (100, 60_000));
        assert_eq!(
            d.range_ms("service", "client"),
            (1, 50),
            "one direction only"
        );
        assert_eq!(d.spread_ms(&[vec!["client", "service"]]), 59_900);
        assert_eq!(d.path_ms(&["client", "service", "bank"]), (105, 60_005));
        assert_eq!(d.spread_ms(&[vec!["client", "service", "bank"]]), 59_900);
        assert_eq!(d.spread_ms(&[vec!["bank"]]), 0);
        // Two ways to one layer: the slowest of both less the fastest.
        let two = [vec!["client", "service"], vec!["bank", "service"]];
        assert_eq!(d.spread_ms(&two), 60_000 - 1);
        assert_eq!(d.spread_ms(&[]), 0);
    }

    #[test]
    fn an_entry_without_from_or_to_delays_every_link_out_of_or_into_an_actor() {
        let mut d = Delays::new(1, 50);
        d.link(None, Some("bank"), Some(400), None);
        assert_eq!(d.range_ms("service", "bank"), (400, 50));
        assert_eq!(d.range_ms("client", "bank"), (400, 50));
        assert_eq!(d.range_ms("bank", "service"), (1, 50), "into the bank only");
        d.link(Some("bank"), None, None, Some(9_000));
        assert_eq!(d.range_ms("bank", "service"), (1, 9_000));
        // A later entry for one link still wins over the wider one.
        d.link(Some("service"), Some("bank"), Some(2), None);
        assert_eq!(d.range_ms("service", "bank"), (2, 50));
        assert_eq!(d.range_ms("client", "bank"), (400, 50));
    }
}
