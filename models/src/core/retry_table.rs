//! The `retry` table a client's table holds (`[client.retry]`), shared by
//! every model whose clients retry: parsed and validated once, into a
//! [`RetryPolicy`] and what the client does when it gives up.

use super::input::{count_in, duration_us, invalid, one_of, path, Invalid, MAX_DURATION_MS};
use super::retry::{Jitter, RetryPolicy};
use super::unused::Unused;
use super::DesignWarning;
use sim::SituationId;

/// A retry window too short for the retry it is meant to bound.
pub const RETRY_WINDOW_TOO_SHORT: &str = "retry-window-too-short";
use serde::Deserialize;

const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
/// `[client.retry]` as written in a scenario file.
pub struct RetryDto {
    policy: String,
    max_attempts: u64,
    base_ms: u64,
    cap_ms: u64,
    jitter: String,
    window_ms: u64,
    retry_final_errors: bool,
    dead_letter: bool,
}

impl Default for RetryDto {
    fn default() -> Self {
        RetryDto {
            policy: "fixed".into(),
            max_attempts: 5,
            base_ms: 0,
            cap_ms: 60_000,
            jitter: "none".into(),
            window_ms: 0,
            retry_final_errors: false,
            dead_letter: true,
        }
    }
}

/// A validated retry table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Backoff, jitter, cap, attempts and window.
    pub policy: RetryPolicy,
    /// Retry a final error too (a mistake: a rejected input never becomes valid).
    pub retry_final_errors: bool,
    /// Record what was given up, or drop it silently (a mistake).
    pub dead_letter: bool,
}

impl RetryDto {
    /// Validates the table `[<owner>.retry]` of a client whose attempts time
    /// out after `timeout_ms`.
    pub fn build(&self, owner: &'static str, timeout_ms: u64) -> Result<Retry, Invalid> {
        let at = |k| path(&[owner, "retry", k]);
        let policy = one_of(
            &self.policy,
            &[("none", 0u8), ("fixed", 1), ("exponential", 2)],
            at("policy"),
        )?;
        // Checked whatever the policy: a value out of range is a mistake
        // even while "none" does not read it, and would surface only later.
        let attempts =
            count_in(self.max_attempts, 0, 10_000, at("max_attempts"), "attempts")? as u32;
        let (multiplier, max_attempts) = match policy {
            0 => (1, 1),
            m => (u64::from(m), attempts),
        };
        duration_us(self.base_ms, DAY_MS, at("base_ms"))?;
        duration_us(self.cap_ms, 30 * DAY_MS, at("cap_ms"))?;
        if self.base_ms > self.cap_ms {
            return Err(invalid(
                at("cap_ms"),
                format!(
                    "the backoff cap ({} ms) is below its base ({} ms): every wait would be cut to the cap",
                    self.cap_ms, self.base_ms
                ),
                "raise cap_ms to at least base_ms, or lower base_ms",
            ));
        }
        duration_us(self.window_ms, MAX_DURATION_MS, at("window_ms"))?;
        if self.window_ms != 0 && self.window_ms < timeout_ms {
            return Err(invalid(
                at("window_ms"),
                format!(
                    "the retry window ({} ms) is shorter than one attempt's timeout ({timeout_ms} ms): no retry could ever start",
                    self.window_ms
                ),
                format!("make window_ms at least {owner}.timeout_ms, or 0 for no window"),
            ));
        }
        let jitter = one_of(
            &self.jitter,
            &[
                ("none", Jitter::None),
                ("full", Jitter::Full),
                ("equal", Jitter::Equal),
                ("decorrelated", Jitter::Decorrelated),
            ],
            at("jitter"),
        )?;
        Ok(Retry {
            policy: RetryPolicy {
                max_attempts,
                base_ms: self.base_ms,
                cap_ms: self.cap_ms,
                multiplier,
                jitter,
                window_ms: self.window_ms,
            },
            retry_final_errors: self.retry_final_errors,
            dead_letter: self.dead_letter,
        })
    }

    /// The keys of `[<owner>.retry]` that the table's own settings leave
    /// without effect: what shapes a retry, where no retry is made (policy
    /// "none", or one attempt); what shapes a wait that is always 0
    /// (`base_ms = 0`). Not the cap of a fixed wait, which never grows: a
    /// base above the default cap must be written with a cap at least as
    /// high, so the file cannot leave it out.
    pub fn unused(&self, owner: &'static str) -> Vec<Unused> {
        let table = [owner, "retry"];
        let at = |k| [owner, "retry", k];
        if self.policy == "none" {
            return Unused::each(
                &table,
                &[
                    "max_attempts=1",
                    "base_ms=0",
                    "cap_ms",
                    "jitter=\"none\"",
                    "window_ms=0",
                    "retry_final_errors=false",
                ],
                &[&at("policy")],
                "policy = \"none\" makes no retry, so nothing shapes one",
                "remove it, or retry: policy = \"fixed\" or \"exponential\"",
            );
        }
        if self.max_attempts == 1 {
            return Unused::each(
                &table,
                &[
                    "base_ms=0",
                    "cap_ms",
                    "jitter=\"none\"",
                    "window_ms=0",
                    "retry_final_errors=false",
                ],
                &[&at("max_attempts")],
                "max_attempts = 1 is the first attempt alone, so no retry is made",
                "remove it, or allow retries: max_attempts = 3",
            );
        }
        let mut out = Vec::new();
        if self.base_ms == 0 {
            out.extend(Unused::each(
                &table,
                &["cap_ms", "jitter=\"none\""],
                &[&at("base_ms")],
                "base_ms = 0: every wait is 0, whatever caps or spreads it",
                "remove it, or give the waits a base: base_ms = 100",
            ));
        }
        out
    }
}

/// The rule of a retry window: an attempt starts only if its timeout still
/// falls inside the window (`RetryPolicy::in_window`), so the room for a
/// retry is `window_ms - timeout_ms`, and a retry needs the first attempt's
/// end and the wait after it to fit in that room. An attempt whose answer
/// is lost ends by its timeout, `timeout_ms` after it started: below
/// `timeout_ms` plus the shortest first wait of room, no such attempt is
/// ever retried, and only an attempt answered early (an error, a 503, "in
/// progress") can be. Below the fastest answer's round trip (`answer_ms`,
/// the network's shortest trip there and back) plus that wait, not even
/// those: with `window_ms = timeout_ms` only an answer in 0 ms would leave
/// room. Neither is refused, since a window does bound the operation; the
/// settings say the retries it was written for never come.
/// `owner` names the table (`client`); `given_up` marks a run in which an
/// operation was given up, which this gap makes of every lost answer.
pub fn window_too_short(
    retry: &RetryPolicy,
    owner: &str,
    timeout_ms: u64,
    answer_ms: u64,
    given_up: Option<SituationId>,
    example: &'static str,
) -> Option<DesignWarning> {
    window_too_short_after_read(retry, owner, timeout_ms, answer_ms, 0, given_up, example)
}

/// [`window_too_short`] for a client some of whose attempts read before
/// they write (an HTTP edit: a GET, then the PUT computed from it), each
/// step with its own timeout. `read_ms` is the shortest round trip of that
/// read (0: no attempt reads first). The write leaves at least `read_ms`
/// into its attempt, so a lost answer to it ends by a timeout that much
/// later than a lost read's, and its retry needs that much more room:
/// `read_ms + timeout_ms` plus the shortest wait after the first attempt.
pub fn window_too_short_after_read(
    retry: &RetryPolicy,
    owner: &str,
    timeout_ms: u64,
    answer_ms: u64,
    read_ms: u64,
    given_up: Option<SituationId>,
    example: &'static str,
) -> Option<DesignWarning> {
    if retry.window_ms == 0 || retry.max_attempts == 1 || timeout_ms == 0 {
        return None;
    }
    let room_ms = retry.window_ms.saturating_sub(timeout_ms);
    let wait_ms = retry.backoff_ms(1, 0, |lo, _| lo);
    let after_timeout_ms = timeout_ms.saturating_add(wait_ms);
    let after_write_timeout_ms = after_timeout_ms.saturating_add(read_ms);
    if room_ms >= after_write_timeout_ms {
        return None;
    }
    let settings = format!(
        "{owner}.retry.window_ms = {} and {owner}.timeout_ms = {timeout_ms}",
        retry.window_ms
    );
    let wait = match wait_ms {
        0 => String::new(),
        ms => format!(" and the shortest wait ({ms} ms)"),
    };
    let least_ms = timeout_ms
        .saturating_mul(2)
        .saturating_add(wait_ms)
        .saturating_add(read_ms);
    let fix = match read_ms {
        0 => format!(
            "make window_ms at least {least_ms} ({owner}.timeout_ms twice, plus the first wait), or 0 for no window"
        ),
        ms => format!(
            "make window_ms at least {least_ms} ({owner}.timeout_ms twice, plus the first wait, plus the read's shortest round trip, {ms} ms), or 0 for no window"
        ),
    };
    let early = answer_ms.saturating_add(wait_ms).max(1);
    let starts = "an attempt starts only if its timeout still ends inside the window, which leaves";
    let text = if room_ms < early {
        format!(
            "{settings}: {starts} {room_ms} ms after the first attempt for a retry to start, less than the fastest answer's round trip ({answer_ms} ms){wait}: the client never retries, whatever max_attempts says, and every lost message ends the operation; {fix}"
        )
    } else if room_ms < after_timeout_ms {
        format!(
            "{settings}: {starts} {room_ms} ms after the first attempt for a retry to start, less than one timeout{wait}: only an attempt answered early (an error, \"in progress\") is retried, and one whose answer is lost, the failure retries are for, ends the operation; {fix}"
        )
    } else {
        format!(
            "{settings}: {starts} {room_ms} ms after the first attempt for a retry to start, room for a retry after a lost read, not after a lost write: a write computed from a read leaves at least {read_ms} ms into its attempt (the read's round trip), so its timeout ends that much later, and an edit whose write's answer is lost, the failure retries are for, is never retried and ends the operation; {fix}"
        )
    };
    Some(DesignWarning {
        id: RETRY_WINDOW_TOO_SHORT,
        text,
        shown_by: given_up,
        example,
        at: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(window_ms: u64, base_ms: u64) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            base_ms,
            cap_ms: 60_000,
            multiplier: 1,
            jitter: Jitter::None,
            window_ms,
        }
    }

    #[test]
    fn a_window_fires_below_two_timeouts_and_the_first_wait() {
        let fires = |window_ms, base_ms| {
            window_too_short(&policy(window_ms, base_ms), "client", 10_000, 2, None, "x")
        };
        let equal = fires(10_000, 0).expect("window = timeout leaves no room");
        assert!(equal.text.contains("never retries"), "{}", equal.text);
        // 1 ms of room: still below the 2 ms round trip.
        assert!(fires(10_001, 0).unwrap().text.contains("never retries"));
        // Room for an early answer, not for a timed-out attempt.
        let early = fires(10_002, 0).expect("2 ms of room");
        assert!(early.text.contains("answered early"), "{}", early.text);
        assert!(fires(19_999, 0).is_some());
        assert!(fires(20_000, 0).is_none(), "a timeout and a retry fit");
        // The first wait needs room too.
        assert!(fires(20_999, 1_000).is_some());
        assert!(fires(21_000, 1_000).is_none());
        // No window, one attempt, or no timeout: nothing to say.
        assert!(fires(0, 0).is_none());
        let once = RetryPolicy {
            max_attempts: 1,
            ..policy(10_000, 0)
        };
        assert!(window_too_short(&once, "client", 10_000, 2, None, "x").is_none());
    }

    /// A write that follows a 2 ms read in its attempt times out 2 ms
    /// later than the read would: at 2 × timeout + wait its retry does not
    /// fit, one read's round trip above it does.
    #[test]
    fn a_write_after_a_read_needs_the_reads_round_trip_more() {
        let fires = |window_ms, base_ms| {
            window_too_short_after_read(
                &policy(window_ms, base_ms),
                "client",
                10_000,
                2,
                2,
                None,
                "x",
            )
        };
        let at_two_timeouts = fires(20_000, 0).expect("the write's retry does not fit");
        assert!(
            at_two_timeouts.text.contains("not after a lost write")
                && at_two_timeouts.text.contains("at least 20002"),
            "{}",
            at_two_timeouts.text
        );
        assert!(fires(20_001, 0).is_some());
        assert!(
            fires(20_002, 0).is_none(),
            "a read, a timeout and a retry fit"
        );
        assert!(fires(21_001, 1_000).is_some());
        assert!(fires(21_002, 1_000).is_none());
        // Below that, the texts of a client that never reads first.
        assert!(fires(19_999, 0).unwrap().text.contains("answered early"));
        assert!(fires(10_000, 0).unwrap().text.contains("never retries"));
    }
}
