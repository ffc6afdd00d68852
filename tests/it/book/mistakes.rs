//! Chapter 11's table of mistakes sends a reader somewhere for each row:
//! at least one page its last column links must name the row's scenario,
//! or the reader lands on a chapter that never shows it.

use crate::support;
use std::path::Path;

/// The rows whose linked pages never name their scenario, as
/// `scenario: links`.
pub fn rows_pointing_nowhere(chapter: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(chapter).expect("chapter 11");
    let dir = chapter.parent().expect("docs/learn");
    let mut nowhere = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | mistake | scenario | invariant | fix | chapter |
        if cells.len() != 7 || !cells[2].starts_with('`') {
            continue;
        }
        let scenario = cells[2].trim_matches('`');
        let targets: Vec<&str> = cells[5]
            .split("](")
            .skip(1)
            .filter_map(|l| l.split([')', '#']).next())
            .collect();
        let named = targets.iter().any(|t| {
            std::fs::read_to_string(dir.join(t)).is_ok_and(|page| page.contains(scenario))
        });
        if !named {
            nowhere.push(format!("{scenario}: {}", cells[5]));
        }
    }
    nowhere
}

#[test]
fn every_row_of_the_mistakes_table_links_a_page_that_shows_its_scenario() {
    let chapter = support::root().join("docs/learn/11-common-mistakes.md");
    let rows = std::fs::read_to_string(&chapter)
        .expect("chapter 11")
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("` | `"))
        .count();
    assert!(rows > 60, "the table has its rows ({rows})");
    let nowhere = rows_pointing_nowhere(&chapter);
    assert!(
        nowhere.is_empty(),
        "rows of docs/learn/11-common-mistakes.md whose links never name the scenario:\n{}",
        nowhere.join("\n")
    );
}

#[test]
fn a_row_whose_chapter_never_names_its_scenario_is_found() {
    let dir = support::scratch("book-mistakes");
    std::fs::write(dir.join("01.md"), "runs `a-mistake` and its fix").unwrap();
    std::fs::write(dir.join("02.md"), "another subject").unwrap();
    std::fs::write(
        dir.join("11.md"),
        "| mistake | scenario | invariant | fix | chapter |\n|---|---|---|---|---|\n\
         | one | `a-mistake` | `x` | `y` | [01](01.md) |\n\
         | two | `b-mistake` | `x` | `y` | [02](02.md#anchor) |\n",
    )
    .unwrap();
    assert_eq!(
        rows_pointing_nowhere(&dir.join("11.md")),
        ["b-mistake: [02](02.md#anchor)"]
    );
}
