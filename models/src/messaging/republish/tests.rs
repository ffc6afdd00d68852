//! The republish rules' unit tests.

use super::*;

const BASE: &str = "[[network.partitions]]\nbetween = [\"broker\", \"producer\"]\none_way = true\nstart_ms = 0\nend_ms = 1800000\n";

fn relay(stamps: Stamps) -> Relay<'static> {
    Relay {
        actor: "producer",
        stamps,
        publish_timeout_ms: 5_000,
        timeout_key: "producer.publish_timeout_ms",
    }
}

fn warn(text: &str, retention_ms: u64, stamps: Stamps) -> Option<String> {
    inbox_retention_below_republish(text, (retention_ms, 0), &relay(stamps), "consumer")
        .map(|h| h.text)
}

#[test]
fn retries_stored_as_copies_outlast_an_inbox_shorter_than_the_cut() {
    let t = warn(BASE, 600_000, Stamps::Nothing).expect("30 min against 10 min");
    assert!(t.contains("up to 30 min"), "{t}");
    assert!(t.contains("every retry is stored"), "{t}");
    assert_eq!(
        warn(BASE, 1_800_001, Stamps::Nothing),
        None,
        "one ms past the cut holds"
    );
    assert!(
        warn(BASE, 1_800_000, Stamps::Nothing).is_some(),
        "a row is gone once its age reaches the retention"
    );
    assert!(warn(BASE, 1_799_999, Stamps::Nothing).is_some());
    // The last copy's trips and work can come later than the first's.
    let late = |retention_ms| {
        inbox_retention_below_republish(
            BASE,
            (retention_ms, 2_000),
            &relay(Stamps::Nothing),
            "consumer",
        )
    };
    let t = late(1_801_000)
        .expect("2 s late against 1 s of margin")
        .text;
    assert!(t.contains("up to 2 s later"), "{t}");
    assert!(late(1_802_001).is_none());
    assert_eq!(warn(BASE, 0, Stamps::Nothing), None, "kept forever");
}

#[test]
fn a_per_session_stamp_needs_a_restart_to_copy() {
    assert_eq!(warn(BASE, 600_000, Stamps::PerSession), None, "no crashes");
    let crashes = format!("{BASE}[crashes.producer]\ncrash_per_mille = [0, 20]\nrestart_ms_min = 1000\nrestart_ms_max = 30000\n");
    let t = warn(&crashes, 600_000, Stamps::PerSession).expect("a restart republishes");
    assert!(t.contains("restarted relay's republish"), "{t}");
    assert!(t.contains("up to 30.5 min after the first"), "{t}");
    assert_eq!(warn(&crashes, 1_830_001, Stamps::PerSession), None);
    assert!(warn(&crashes, 1_830_000, Stamps::PerSession).is_some());
    let never = crashes.replace("[0, 20]", "0");
    assert_eq!(warn(&never, 600_000, Stamps::PerSession), None);
}

#[test]
fn only_cuts_of_the_confirmations_count() {
    let other_way = BASE.replace("[\"broker\", \"producer\"]", "[\"producer\", \"broker\"]");
    assert_eq!(
        warn(&other_way, 600_000, Stamps::Nothing),
        None,
        "publishes cut, not confirmations"
    );
    let both = other_way.replace("one_way = true", "one_way = false");
    assert!(warn(&both, 600_000, Stamps::Nothing).is_some());
    let consumer = BASE.replace("\"producer\"", "\"consumer-1\"");
    assert_eq!(warn(&consumer, 600_000, Stamps::Nothing), None);
    let random =
        "[network]\nrandom_partition_per_mille = [0, 100]\nrandom_partition_ms_max = 900000\n";
    let t = warn(random, 600_000, Stamps::Nothing).expect("a random cut may hit the producer");
    assert!(t.contains("random partition"), "{t}");
    assert_eq!(warn(random, 900_001, Stamps::Nothing), None);
    // Malformed values are the loader's to refuse, not a panic here.
    let odd = BASE.replace("end_ms = 1800000", "end_ms = \"30min\"");
    assert_eq!(warn(&odd, 600_000, Stamps::Nothing), None);
}

/// An idempotent producer's retries of a batch are dropped only until its
/// library gives the batch up: a cut long enough for that makes the
/// relay's resend a new copy without any restart. A batch first sent as
/// the cut starts is confirmed by its first retry at or after the cut's
/// end: at 30 min exactly with retries every 5 s.
#[test]
fn a_per_batch_stamp_copies_once_the_cut_outlasts_the_delivery_timeout() {
    let per_batch = |d| Stamps::PerBatch {
        delivery_timeout_ms: d,
    };
    let t = warn(BASE, 600_000, per_batch(120_000)).expect("2 min against a 30-min cut");
    assert!(
        t.contains("gives a batch up 120 s after its first send"),
        "{t}"
    );
    assert!(t.contains("up to 30 min after the first"), "{t}");
    // The batch is 30 min old when its confirmation gets through: given up
    // at 30 min, kept at 30 min and 1 ms.
    assert!(warn(BASE, 600_000, per_batch(1_800_000)).is_some());
    assert_eq!(
        warn(BASE, 600_000, per_batch(1_800_001)),
        None,
        "no crashes"
    );
    // A cut of 30 min and 1 ms: the first retry after it is at 30 min 5 s.
    let longer = BASE.replace("end_ms = 1800000", "end_ms = 1800001");
    assert!(warn(&longer, 600_000, per_batch(1_805_000)).is_some());
    assert_eq!(warn(&longer, 600_000, per_batch(1_805_001)), None);
    // Without a give-up a restart still republishes.
    let crashes =
        format!("{BASE}[crashes.producer]\ncrash_per_mille = 20\nrestart_ms_max = 30000\n");
    let t = warn(&crashes, 600_000, per_batch(3_600_000)).expect("a restart republishes");
    assert!(t.contains("restarted relay's republish"), "{t}");
}

#[test]
fn a_batch_is_given_up_in_a_cut_as_long_as_the_delivery_timeout() {
    let given_up = |text: &str, d| batch_given_up_in_cut(text, "producer", (5_000, d));
    assert!(given_up(BASE, 1_800_000));
    assert!(!given_up(BASE, 1_800_001));
    // A retry the network can lose after the cut costs one more timeout.
    let lossy = format!("[network]\nloss_per_mille = [0, 10]\n{BASE}");
    assert!(given_up(&lossy, 1_805_000));
    assert!(!given_up(&lossy, 1_805_001));
    assert!(!given_up("", 1), "no cut, nothing given up");
}

/// The relay retries under the same id only until its library gives the
/// batch up; the resend after that is stored, and the id does not idle.
#[test]
fn the_delivery_timeout_bounds_the_retries_under_a_producer_id() {
    let two_days = BASE.replace("end_ms = 1800000", "end_ms = 172800000");
    let day = 86_400_000;
    let warn = |d| producer_id_expiry_below_retries(&two_days, day, (3_600_000, 200), d);
    let t = warn(None).expect("2 days of retries against 1 day").text;
    assert!(!t.contains("delivery_timeout_ms"), "{t}");
    assert!(warn(Some(3 * day)).is_some());
    let t = warn(Some(day)).expect("retried for a day").text;
    assert!(
        t.contains("until the producer library gives the batch up 1 day"),
        "{t}"
    );
    assert_eq!(
        warn(Some(day - 201)),
        None,
        "given up before the id idles a day"
    );
}
