//! docs/learn/checklist.md gathers the path's takeaways: each row names a
//! chapter that exists, scenarios that fail without the item and scenarios
//! that hold with it, and every chapter of the path gives it a row.

use crate::support::docs::{backticked, expected_verdicts, learn_dir};

#[test]
fn every_row_of_the_checklist_names_a_chapter_a_failure_and_a_fix() {
    let verdicts = expected_verdicts();
    let verdict = |name: &str| {
        verdicts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| {
                panic!("the checklist names `{name}`, which `idemsim list` does not")
            })
    };
    let text = std::fs::read_to_string(learn_dir().join("checklist.md")).expect("the checklist");
    let mut chapters = Vec::new();
    let mut rows = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| check"))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | check | chapter | fails without | holds with |
        assert_eq!(cells.len(), 6, "a row of four cells: {line}");
        let chapter = cells[2]
            .split("](")
            .nth(1)
            .and_then(|l| l.split([')', '#']).next())
            .unwrap_or_else(|| panic!("no chapter linked: {line}"));
        assert!(
            learn_dir().join(chapter).is_file(),
            "{chapter} does not exist"
        );
        chapters.push(chapter.to_string());
        let failing = backticked(cells[3]);
        let holding = backticked(cells[4]);
        assert!(
            !failing.is_empty() && !holding.is_empty(),
            "a failure and a fix: {line}"
        );
        for name in failing {
            let v = verdict(name);
            assert!(
                v.starts_with("violation") || v == "inconclusive",
                "`{name}` is {v}"
            );
        }
        for name in holding {
            assert_eq!(verdict(name), "holds", "`{name}`, a design that holds");
        }
        rows += 1;
    }
    assert!(rows >= 25, "the checklist has its rows ({rows})");
    for n in 1..=16 {
        let prefix = format!("{n:02}-");
        assert!(
            chapters.iter().any(|c| c.starts_with(&prefix)) || n == 11,
            "no item of the checklist comes from chapter {prefix}"
        );
    }
}
