//! Design warnings: settings that break a rule of the domain even when no run
//! of the scenario shows it.
//!
//! A sweep judges the schedules its faults allow. "Holds" is then true of
//! that fault model and nothing more: a design whose keys live one day while
//! its client retries for three holds in every scenario without an outage of
//! a day, and pays twice in the first one that has it. A model therefore
//! reads its settings for the gaps the source articles name and reports each
//! as a [`DesignWarning`], with the situation its actors report when a run does
//! reach the gap, so that `check` can say whether the sweep went there.

use sim::SituationId;

mod retention;
pub use retention::{inbox_retention, key_retention, layer_key_retention, KeyMemory, TAKEN_AS_NEW};

/// One gap in a design, found in its settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DesignWarning {
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

/// The rules that belong to no model: core checks them (key and inbox
/// retention, in `retention.rs`) or every loader does (a setting without
/// effect, a retry window too short, a key whose meaning changed). Each
/// model declares its own in its folder (`registry::Declares::RULES`), and
/// the registry lists them all after these.
pub const CORE_RULES: &[&str] = &[
    KEY_RETENTION,
    INBOX_RETENTION,
    super::unused::SETTING_WITHOUT_EFFECT,
    super::retry_table::RETRY_WINDOW_TOO_SHORT,
    KEY_MEANING_CHANGED,
];

pub(crate) const KEY_RETENTION: &str = "key-retention-below-retry-span";
/// A file naming no `format` writes a key whose meaning changed: it is read
/// with today's meaning, which may not be the one it was written for.
pub const KEY_MEANING_CHANGED: &str = "key-meaning-changed";
pub(crate) const INBOX_RETENTION: &str = "inbox-retention-below-redelivery";

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
pub(crate) fn rounded_ms(ms: u64) -> u128 {
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
