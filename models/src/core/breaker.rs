//! A circuit breaker, as resilience libraries have it (Hystrix,
//! resilience4j, Polly): closed, it lets calls through and counts their
//! failures; `failures` of them within `window` open it; open, it refuses
//! every call at once (they fail fast, without reaching the struggling
//! receiver) until `open` has passed; then it is half-open and lets one
//! trial call through: a success closes it, a failure opens it again.
//!
//! What it buys: load shed at the source while the receiver is in trouble,
//! and callers that learn "failed" at once instead of after a timeout. What
//! it costs: calls refused while it is open, which would often have
//! succeeded, end failed (or unknown) sooner.
//!
//! A pure state machine over virtual time: no timer, the move from open to
//! half-open happens when the next call asks.

use sim::TimeUs;
use std::collections::VecDeque;

/// The breaker's numbers, validated (`[client.breaker]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Failures within `window_us` that open the breaker (at least 1).
    pub failures: u32,
    /// The window failures are counted in.
    pub window_us: TimeUs,
    /// How long it stays open before it lets a trial call through.
    pub open_us: TimeUs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where a breaker stands.
#[derive(serde::Serialize)]
pub enum State {
    /// Letting calls through, counting failures.
    Closed,
    /// Refusing every call until `until_us`.
    Open {
        /// When it lets a trial call through.
        until_us: TimeUs,
    },
    /// One trial call may go; `trial` says whether it is out.
    HalfOpen {
        /// The trial call is out.
        trial: bool,
    },
}

/// What the breaker says to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Closed: go.
    Pass,
    /// Half-open: go, as the one trial.
    Trial,
    /// Open (or half-open with its trial out): fail fast, do not send.
    Refuse,
}

/// How a call that went through ended, as the breaker counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallResult {
    /// An answer from a healthy receiver.
    Success,
    /// A timeout or a server error: the receiver is in trouble.
    Failure,
    /// An answer that says nothing about the receiver's health (a 409 for
    /// a request still in progress, a 422 for the caller's own mistake).
    Neutral,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// A circuit breaker in front of a client's calls: closed, open after too many failures in a window, half-open for one trial after a cool-down.
#[derive(serde::Serialize)]
pub struct Breaker {
    state: State,
    /// When the recent failures happened, oldest first: at most `failures`.
    recent: VecDeque<TimeUs>,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker::new()
    }
}

impl Breaker {
    /// A closed breaker with no failures: how a client starts.
    pub fn new() -> Breaker {
        Breaker {
            state: State::Closed,
            recent: VecDeque::new(),
        }
    }

    /// Back to a new breaker's state, keeping the window's allocation (a warm
    /// simulator allocates nothing per run).
    pub fn reset(&mut self) {
        self.state = State::Closed;
        self.recent.clear();
    }

    /// Where it stands now.
    pub fn state(&self) -> State {
        self.state
    }

    /// May a call go now?
    pub fn allow(&mut self, now_us: TimeUs) -> Verdict {
        match self.state {
            State::Closed => Verdict::Pass,
            State::Open { until_us } if now_us < until_us => Verdict::Refuse,
            State::Open { .. } | State::HalfOpen { trial: false } => {
                self.state = State::HalfOpen { trial: true };
                Verdict::Trial
            }
            State::HalfOpen { trial: true } => Verdict::Refuse,
        }
    }

    /// A call that went through ended with `result`; true when this opened
    /// the breaker.
    pub fn record(&mut self, cfg: &BreakerConfig, result: CallResult, now_us: TimeUs) -> bool {
        match (self.state, result) {
            (State::HalfOpen { .. }, CallResult::Success) => {
                self.state = State::Closed;
                self.recent.clear();
                false
            }
            (State::HalfOpen { .. }, CallResult::Failure) => self.open(cfg, now_us),
            // The trial said nothing: the next call may try again.
            (State::HalfOpen { .. }, CallResult::Neutral) => {
                self.state = State::HalfOpen { trial: false };
                false
            }
            (State::Closed, CallResult::Failure) => {
                while self
                    .recent
                    .front()
                    .is_some_and(|&t| now_us.saturating_sub(t) >= cfg.window_us)
                {
                    self.recent.pop_front();
                }
                self.recent.push_back(now_us);
                if self.recent.len() >= cfg.failures as usize {
                    return self.open(cfg, now_us);
                }
                false
            }
            // Answers to calls let through before the breaker opened change nothing.
            (State::Closed, _) | (State::Open { .. }, _) => false,
        }
    }

    fn open(&mut self, cfg: &BreakerConfig, now_us: TimeUs) -> bool {
        self.state = State::Open {
            until_us: now_us.saturating_add(cfg.open_us),
        };
        self.recent.clear();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CFG: BreakerConfig = BreakerConfig {
        failures: 3,
        window_us: 10,
        open_us: 30,
    };

    #[test]
    fn three_failures_in_the_window_open_it_and_a_trial_closes_it() {
        let mut b = Breaker::new();
        assert!(!b.record(&CFG, CallResult::Failure, 0));
        assert!(!b.record(&CFG, CallResult::Failure, 5));
        // The first failure has left the window by 10: only two are recent.
        assert!(!b.record(&CFG, CallResult::Failure, 10));
        assert!(b.record(&CFG, CallResult::Failure, 12));
        assert_eq!(b.state(), State::Open { until_us: 42 });
        assert_eq!(b.allow(41), Verdict::Refuse);
        assert_eq!(b.allow(42), Verdict::Trial);
        assert_eq!(b.allow(43), Verdict::Refuse, "one trial at a time");
        b.record(&CFG, CallResult::Success, 50);
        assert_eq!(b.state(), State::Closed);
        assert_eq!(b.allow(51), Verdict::Pass);
    }

    #[test]
    fn a_failed_trial_opens_it_again() {
        let mut b = Breaker::new();
        for t in 0..3 {
            b.record(&CFG, CallResult::Failure, t);
        }
        assert_eq!(b.allow(40), Verdict::Trial);
        assert!(b.record(&CFG, CallResult::Failure, 45));
        assert_eq!(b.state(), State::Open { until_us: 75 });
        // A neutral trial lets another one go.
        assert_eq!(b.allow(75), Verdict::Trial);
        b.record(&CFG, CallResult::Neutral, 76);
        assert_eq!(b.allow(77), Verdict::Trial);
    }

    #[derive(Clone, Copy, Debug)]
    enum Event {
        Allow,
        Record(CallResult),
    }

    fn event() -> impl Strategy<Value = (u64, Event)> {
        let result = prop_oneof![
            Just(CallResult::Success),
            Just(CallResult::Failure),
            Just(CallResult::Neutral)
        ];
        (
            0u64..8,
            prop_oneof![Just(Event::Allow), result.prop_map(Event::Record)],
        )
    }

    proptest! {
        /// The breaker never closes without a success; while open before its
        /// cool-down it refuses every call; half-open, at most one trial is
        /// out; closed, it lets every call through; it opens only on a failure.
        #[test]
        fn breaker_laws(
            failures in 1u32..5,
            window_us in 1u64..20,
            open_us in 1u64..20,
            events in prop::collection::vec(event(), 0..200),
        ) {
            let cfg = BreakerConfig { failures, window_us, open_us };
            let mut b = Breaker::new();
            let mut now = 0;
            for (dt, e) in events {
                now += dt;
                let before = b.state();
                match e {
                    Event::Allow => {
                        let v = b.allow(now);
                        match before {
                            State::Closed => prop_assert_eq!(v, Verdict::Pass),
                            State::Open { until_us } if now < until_us => {
                                prop_assert_eq!(v, Verdict::Refuse)
                            }
                            State::HalfOpen { trial: true } => prop_assert_eq!(v, Verdict::Refuse),
                            _ => prop_assert_eq!(v, Verdict::Trial),
                        }
                    }
                    Event::Record(r) => {
                        let opened = b.record(&cfg, r, now);
                        let after = b.state();
                        if before != State::Closed && after == State::Closed {
                            prop_assert_eq!(r, CallResult::Success, "closed without a success");
                        }
                        if opened {
                            prop_assert_eq!(r, CallResult::Failure);
                            prop_assert_eq!(after, State::Open { until_us: now + open_us });
                        }
                        if matches!(before, State::Open { .. }) {
                            prop_assert_eq!(after, before, "an open breaker ignores late answers");
                        }
                    }
                }
                prop_assert!(b.recent.len() < failures as usize || b.state() != State::Closed);
            }
        }
    }
}
