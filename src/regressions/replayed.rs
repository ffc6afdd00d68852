//! What replaying one regression found, as people and JSON readers see it.

/// What replaying one regression found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// It breaks an invariant again; `expected` when the scenario's
    /// `[expect]` now names that failure.
    StillFails {
        /// The invariant broken, or `None` for a panic.
        invariant: Option<String>,
        /// The outcome in one sentence.
        sentence: String,
        /// The scenario now expects this violation.
        expected: bool,
    },
    /// It holds now.
    Fixed,
    /// It hit a limit (steps, time, queue): neither failing nor fixed.
    Inconclusive {
        /// The limit's name.
        limit: &'static str,
    },
    /// It cannot be replayed as the run it was; why, in words.
    Stale {
        /// Why, and what to do.
        reason: String,
    },
}

impl Status {
    /// `still-fails`, `fixed`, `inconclusive` or `stale`: the JSON status.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::StillFails { .. } => "still-fails",
            Status::Fixed => "fixed",
            Status::Inconclusive { .. } => "inconclusive",
            Status::Stale { .. } => "stale",
        }
    }

    /// A failure the scenario does not expect: the run must not pass.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Status::StillFails {
                expected: false,
                ..
            }
        )
    }
}

/// One regression, replayed.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The repro file, as shown.
    pub file: String,
    /// The scenario it belongs to (its name).
    pub scenario: String,
    /// What the replay found.
    pub status: Status,
    /// The scenario's settings changed since the regression was recorded
    /// (its text, for a file written before idemsim recorded settings).
    pub scenario_changed: bool,
    /// Each change of a setting, named: "`client.timeout_ms` changed from
    /// 10000 to 9000".
    pub changes: Vec<String>,
    /// A line for stderr about the file itself (a migration), if any.
    pub note: Option<String>,
}

impl Replayed {
    /// One line for people.
    pub fn text(&self) -> String {
        let what = match &self.status {
            Status::StillFails {
                sentence, expected, ..
            } => format!(
                "still fails: {sentence}{}",
                if *expected {
                    " (as the scenario now expects)"
                } else {
                    ""
                }
            ),
            Status::Fixed => "fixed: it holds now".to_string(),
            Status::Inconclusive { limit } => {
                format!("inconclusive: the replay hit its {limit} limit")
            }
            Status::Stale { reason } => format!("stale: {reason}"),
        };
        let changed = match (self.scenario_changed, self.changes.is_empty()) {
            (false, _) => String::new(),
            (true, true) => " (scenario changed since it was recorded)".to_string(),
            (true, false) => format!(
                " (scenario changed since it was recorded: {})",
                crate::meaning::changes_text(&self.changes)
            ),
        };
        format!("regression {}: {what}{changed}", self.file)
    }

    /// The JSON `regression` record's data (docs/json-output.md).
    pub fn json(&self) -> serde_json::Value {
        let (invariant, detail) = match &self.status {
            Status::StillFails {
                invariant,
                sentence,
                ..
            } => (invariant.clone(), Some(sentence.clone())),
            Status::Inconclusive { limit } => (None, Some(format!("hit {limit}"))),
            Status::Stale { reason } => (None, Some(reason.clone())),
            Status::Fixed => (None, None),
        };
        serde_json::json!({
            "file": self.file,
            "scenario": self.scenario,
            "status": self.status.as_str(),
            "invariant": invariant,
            "detail": detail,
            "scenario_changed": self.scenario_changed,
            "changes": self.changes,
        })
    }
}
