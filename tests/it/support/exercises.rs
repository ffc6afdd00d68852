//! The exercises of the learning path: their markers, parsed strictly, and
//! the answers their pages show, read by the docs tests (`docs/`); the pages
//! are found with `support::docs::learn_dir`.

use super::docs::learn_dir;
use std::path::PathBuf;

/// An exercise marker: `<!-- exercise: SCENARIO --set KEY=VALUE [--set ...] -->`
/// above an exercise in a chapter of `docs/learn/`. The exercise names a
/// failing scenario of the catalog; the overrides are its answer, which the
/// chapter shows in a `<details>` block after the question.
pub const EXERCISE: &str = "<!-- exercise: ";

/// A tempting answer the exercise must refuse: `<!-- wrong answer: --set
/// KEY=VALUE [--set ...] -->` between an exercise's marker and its
/// `<details>` block, which says why. The scenario must still fail with it.
pub const WRONG_ANSWER: &str = "<!-- wrong answer: ";

/// Keys an answer may not touch: an exercise asks for a design change, and
/// switching the faults off, shortening the run or editing the expectation
/// would make any scenario "hold".
pub const NOT_AN_ANSWER: &[&str] = &[
    "run.",
    "network.",
    "crashes.",
    "expect.",
    "events",
    "operations",
];

#[derive(Debug)]
pub struct Exercise {
    /// `file:line` of the marker, for messages.
    pub place: String,
    pub scenario: String,
    /// The answer's overrides, `key.path=value` each.
    pub sets: Vec<String>,
    /// Answers that look right and are not, each a list of overrides
    /// under which the scenario must still fail.
    pub wrong_answers: Vec<Vec<String>>,
}

/// The scenario and the overrides of one marker's arguments, or why they do
/// not form an exercise.
pub fn parse_exercise(args: &str) -> Result<(String, Vec<String>), String> {
    let mut words = args.split_whitespace();
    let scenario = words
        .next()
        .filter(|w| !w.starts_with("--"))
        .ok_or("an exercise names a scenario first")?
        .to_string();
    Ok((scenario, parse_sets(words)?))
}

/// The overrides of `--set KEY=VALUE [--set ...]`, or why they are not an
/// answer.
pub fn parse_sets<'a>(mut words: impl Iterator<Item = &'a str>) -> Result<Vec<String>, String> {
    let mut sets = Vec::new();
    while let Some(w) = words.next() {
        if w != "--set" {
            return Err(format!(
                "`{w}`: an answer is made of `--set KEY=VALUE` only"
            ));
        }
        let set = words.next().ok_or("`--set` without an override")?;
        if !set.contains('=') {
            return Err(format!("`{set}` is not KEY=VALUE"));
        }
        if let Some(k) = NOT_AN_ANSWER.iter().find(|k| set.starts_with(*k)) {
            return Err(format!(
                "`{set}`: an answer changes the design, not `{k}` (faults, limits, expectation, workload)"
            ));
        }
        sets.push(set.to_string());
    }
    if sets.is_empty() {
        return Err("an exercise has at least one `--set` as its answer".into());
    }
    Ok(sets)
}

/// Every exercise of the learning path. Each marker must be followed, before
/// the next heading or marker, by a `<details>` block that shows every
/// override of the answer as `--set KEY=VALUE`, so the page and the test
/// cannot disagree about what the answer is.
pub fn exercises() -> Vec<Exercise> {
    let mut out = Vec::new();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(learn_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim().strip_prefix(EXERCISE) else {
                continue;
            };
            let place = format!("docs/learn/{name}:{}", i + 1);
            let (scenario, sets) = parse_exercise(rest.trim_end_matches("-->"))
                .unwrap_or_else(|e| panic!("{place}: {e}"));
            let body: Vec<&str> = lines[i + 1..]
                .iter()
                .take_while(|l| !l.starts_with('#') && !l.trim().starts_with(EXERCISE))
                .copied()
                .collect();
            let open = body.iter().position(|l| l.trim() == "<details>");
            let close = body.iter().position(|l| l.trim() == "</details>");
            let (Some(open), Some(close)) = (open, close) else {
                panic!("{place}: the answer belongs in a <details> block after the question");
            };
            assert!(
                open > 0 && open < close,
                "{place}: the question comes first, then the <details> block with the answer"
            );
            let answer = body[open..close].join("\n");
            let wrong_answers = wrong_answers(&body[..open], &place);
            for set in sets.iter().chain(wrong_answers.iter().flatten()) {
                assert!(
                    answer.contains(&format!("--set {set}")),
                    "{place}: the <details> block does not show `--set {set}`, which a marker tests"
                );
            }
            out.push(Exercise {
                place,
                scenario,
                sets,
                wrong_answers,
            });
        }
    }
    out
}

/// The overrides of each `wrong answer` marker among an exercise's lines
/// before its `<details>` block.
fn wrong_answers(question: &[&str], place: &str) -> Vec<Vec<String>> {
    question
        .iter()
        .filter_map(|l| l.trim().strip_prefix(WRONG_ANSWER))
        .map(|rest| {
            parse_sets(rest.trim_end_matches("-->").split_whitespace())
                .unwrap_or_else(|e| panic!("{place}: wrong answer: {e}"))
        })
        .collect()
}
