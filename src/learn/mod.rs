//! `idemsim learn`: the exercises of the learning path (`docs/learn/`) and
//! their grader. An exercise starts from a failing design; the learner's
//! answer is a set of overrides (or, for three of them, code of their own),
//! and the grader judges it the way a reviewer would: the design must hold on
//! the exercise's seeds with its faults still firing, and must not get there
//! by a shortcut (switching the faults off, giving up silently, changing what
//! the exercise does not ask about). A wrong answer gets the reason and the
//! section of the book that explains it.
//!
//! The exercises are one table ([`EXERCISES`]); the tests grade each one's
//! right answer and several wrong ones.

mod grade;
pub mod invariant;
mod program;
pub mod render;
mod table;

pub use grade::{check, Answer, Grade, Reason};
pub use program::grade_model;
pub use table::EXERCISES;

use sim::FaultCounts;

/// How a learner answers an exercise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Overrides of the scenario's settings (`--set KEY=VALUE`).
    Settings,
    /// A program of their own in the consumer's place (`--program CMD`),
    /// speaking JSON Lines (docs/protocol.md).
    Program,
    /// Rust code in an example of the repository, graded by the command
    /// given here from a checkout (the binary cannot compile it).
    Rust(&'static str),
}

/// A section of the book: a chapter's file under `docs/learn/` and one of
/// its headings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// The chapter's file name (`08-retries.md`).
    pub file: &'static str,
    /// A heading in it, without the `#`s.
    pub heading: &'static str,
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "docs/learn/{}, \"{}\"", self.file, self.heading)
    }
}

/// A fault kind an exercise needs to keep firing: an answer that stops it
/// has taken the problem away instead of solving it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Messages the network lost.
    Lost,
    /// Messages the network duplicated.
    Duplicated,
    /// Messages a partition dropped.
    Partitioned,
    /// Crashes of actors.
    Crashed,
}

impl Fault {
    /// How many of this kind fired.
    pub fn count(self, f: &FaultCounts) -> u64 {
        match self {
            Fault::Lost => f.lost,
            Fault::Duplicated => f.duplicated,
            Fault::Partitioned => f.partitioned,
            Fault::Crashed => f.crashed,
        }
    }

    /// Its name, as `check` prints it under "faults fired".
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Lost => "lost",
            Fault::Duplicated => "duplicated",
            Fault::Partitioned => "partitioned",
            Fault::Crashed => "crashes",
        }
    }
}

/// An answer that holds on the exercise's seeds and is still wrong, with why.
#[derive(Clone, Copy, Debug)]
pub struct Refusal {
    /// The override, `key=value`.
    pub set: &'static str,
    /// Why it is wrong although the runs hold.
    pub why: &'static str,
    /// Where the book explains it.
    pub section: Section,
}

/// One exercise.
#[derive(Debug)]
pub struct Exercise {
    /// Its number, from 1.
    pub id: u32,
    /// How it is answered.
    pub kind: Kind,
    /// The failing catalog scenario it starts from (or, for code, the file
    /// the learner edits, from the repository's root).
    pub scenario: &'static str,
    /// The question, in one line.
    pub question: &'static str,
    /// The keys an answer may set: `key` for any value, `key=a|b` for those
    /// values only.
    pub allowed: &'static [&'static str],
    /// Seeds `0..seeds` judge an answer.
    pub seeds: u64,
    /// The fault kinds that must still fire under an answer.
    pub faults: &'static [Fault],
    /// Where a design that still fails is sent to read.
    pub section: Section,
    /// Answers that hold on these seeds and are wrong all the same.
    pub refusals: &'static [Refusal],
    /// The right answer: its overrides, the command of the reference
    /// program, or the reference file.
    pub answer: &'static [&'static str],
}

impl Exercise {
    /// The chapter's number and file, as the list shows it.
    pub fn chapter(&self) -> &'static str {
        self.section.file
    }

    /// Whether `key=value` is among the changes this exercise allows.
    pub fn allows(&self, key: &str, value: &str) -> bool {
        self.allowed.iter().any(|a| match a.split_once('=') {
            None => *a == key,
            Some((k, values)) => {
                k == key && values.split('|').any(|v| v == value.trim_matches('"'))
            }
        })
    }
}

/// The exercise numbered `id`.
pub fn find(id: u32) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.id == id)
}

/// Where the book says an answer may not switch the faults off.
pub const FAULTS_SECTION: Section = Section {
    file: "00-what-a-verdict-means.md",
    heading: "Reading a verdict",
};

/// Where the book says a client that gives up must tell a person.
pub const GIVE_UP_SECTION: Section = Section {
    file: "08-retries.md",
    heading: "A cap without a dead letter loses the payment",
};

/// Key prefixes (and one suffix) an answer may never touch: they are the
/// faults, the run's limits, the expectation and the workload, and changing
/// them makes any design "hold".
pub const NOT_THE_DESIGN: &[&str] = &[
    "run.",
    "network.",
    "crashes.",
    "expect.",
    "events",
    "operations",
];

/// Whether `key` names a fault, a limit, the expectation or the workload.
pub fn is_not_the_design(key: &str) -> bool {
    // A preset rewrites a table's settings wholesale, faults' neighbours
    // included; a rate in per mille is a fault (a commit that fails).
    NOT_THE_DESIGN.iter().any(|p| key.starts_with(p))
        || key.ends_with("_per_mille")
        || key.rsplit('.').next() == Some("preset")
}
