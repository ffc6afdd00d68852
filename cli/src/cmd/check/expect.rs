//! A scenario's `[expect]` against what `check` found: `check` exits by the
//! verdict, so a file whose expectation is not met would otherwise pass for
//! one that is (a "holds" that reached none of the situations it names).

use idemsim::render::json_line;

/// What differs between the file's `[expect]` and this sweep, and the
/// command that holds the file to it.
pub(super) struct ExpectNote {
    scenario: String,
    mismatch: String,
    verify: String,
    /// The seeds swept, where they are not the file's own (`0..run.runs`,
    /// which `verify` runs), with the file's count: fewer seeds may reach
    /// less than the file promises.
    other_seeds: Option<(sim::SeedRange, u64)>,
}

impl ExpectNote {
    /// The note for the sweep `sum` of `s` as the file states it: none for a
    /// file without `[expect]`, a variant (`--set`: the expectation is the
    /// file's, not the variant's), a shard (it sees part of the seeds), or a
    /// sweep cut short. Protections are not judged here: that takes their
    /// ablations, which only `verify` runs.
    pub(super) fn of(
        s: &models::Scenario,
        sum: &sim::Summary,
        variant: bool,
        entry: &idemsim::catalog::Entry,
        seeds: sim::SeedRange,
    ) -> Option<ExpectNote> {
        if s.expected_verdict().is_none() || variant || sum.interrupted {
            return None;
        }
        Some(ExpectNote {
            scenario: s.name.clone(),
            mismatch: s.judge(sum).mismatch?,
            verify: format!("idemsim verify {}", entry.shell_arg()),
            other_seeds: (seeds.start != 0 || seeds.end != u128::from(s.runs))
                .then_some((seeds, s.runs)),
        })
    }

    /// One line for people.
    pub(super) fn text(&self) -> String {
        let seeds = match self.other_seeds {
            Some((r, runs)) => format!(" on seeds {r}, not the file's 0..{runs} (run.runs)"),
            None => String::new(),
        };
        format!(
            "[expect] not met{seeds}: {} (check's exit code follows the verdict; `{}` holds the file to its [expect], protections included)\n",
            self.mismatch, self.verify
        )
    }

    /// The `expect` record of `check --json`.
    pub(super) fn json(&self) -> String {
        json_line(
            "expect",
            serde_json::json!({
                "scenario": self.scenario,
                "mismatch": self.mismatch,
                "verify": self.verify,
                "own_seeds": self.other_seeds.is_none(),
            }),
        )
    }
}
