//! The sweep's table as a reader chooses it: `--columns` and `--no-legend`,
//! and several scenarios compared as one more swept key.

use crate::support::run as check;

/// The header cells of a Markdown table, from the first line starting `|`.
fn header(out: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.starts_with('|'))
        .unwrap_or_else(|| panic!("a table:\n{out}"));
    line.trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn columns_choose_the_tables_cells_and_its_legend_in_that_order() {
    let args = [
        "sweep",
        "contention-full-jitter",
        "--set",
        "clients=5",
        "--set",
        "client.retry.jitter=none,full",
        "--runs",
        "5",
        "--format",
        "markdown",
    ];
    let (full, _) = check(&args, 0);
    let mut chosen = args.to_vec();
    chosen.extend(["--columns", "completion_us,verdict,attempts_per_run"]);
    let (out, _) = check(&chosen, 0);
    // The swept key first, then the columns in the order asked.
    assert_eq!(
        header(&out),
        [
            "client.retry.jitter",
            "completion",
            "verdict",
            "attempts/run"
        ]
    );
    assert!(header(&full).len() > 8, "{full}");
    // Each cell is the full table's cell of the same column.
    let cell = |table: &str, row: usize, col: &str| -> String {
        let h = header(table);
        let j = h.iter().position(|c| c == col).unwrap();
        let line = table.lines().filter(|l| l.starts_with('|')).nth(row + 2);
        let cells: Vec<String> = line
            .unwrap()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        cells[j].clone()
    };
    for row in 0..2 {
        for col in ["completion", "verdict", "attempts/run"] {
            assert_eq!(cell(&out, row, col), cell(&full, row, col), "{out}\n{full}");
        }
    }
    // The legend explains the columns shown, and no other.
    assert!(out.contains("- completion: virtual time") && out.contains("- attempts/run:"));
    assert!(
        !out.contains("- dup:") && !out.contains("- failing:"),
        "{out}"
    );
    assert!(
        full.contains("- dup:") && full.contains("- failing:"),
        "{full}"
    );
    chosen.push("--no-legend");
    let (bare, _) = check(&chosen, 0);
    assert!(
        !bare.contains("- completion:") && bare.contains("| completion |"),
        "{bare}"
    );
}

#[test]
fn an_unknown_column_is_refused_with_the_models_columns() {
    let base = [
        "sweep",
        "contention-full-jitter",
        "--set",
        "clients=5",
        "--runs",
        "1",
    ];
    let mut args = base.to_vec();
    args.extend(["--columns", "verdict,calls"]);
    let (_, err) = check(&args, 2);
    assert!(err.contains("--columns calls"), "{err}");
    for name in [
        "verdict",
        "violation_rate",
        "attempts_per_run",
        "completion_us",
        "lowest_failing_seed",
    ] {
        assert!(err.contains(name), "{name} listed: {err}");
    }
    let mut twice = base.to_vec();
    twice.extend(["--columns", "verdict,verdict"]);
    let (_, err) = check(&twice, 2);
    assert!(err.contains("verdict twice"), "{err}");
    // CSV and JSON keep every column: choosing some there is refused.
    let mut csv = base.to_vec();
    csv.extend(["--format", "csv", "--columns", "verdict"]);
    let (_, err) = check(&csv, 2);
    assert!(
        err.contains("--format csv") && err.contains("table or markdown"),
        "{err}"
    );
}

#[test]
fn several_scenarios_are_one_more_swept_key() {
    let (out, _) = check(
        &[
            "sweep",
            "contention-no-backoff",
            "contention-no-jitter",
            "--set",
            "clients=5,10",
            "--runs",
            "5",
            "--format",
            "markdown",
            "--columns",
            "attempts_per_run",
        ],
        0,
    );
    assert!(out.starts_with("2 scenarios: 4 variants"), "{out}");
    assert_eq!(header(&out), ["clients", "scenario", "attempts/run"]);
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| 5 ") || l.starts_with("| 10 "))
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert!(
        rows[0].contains("contention-no-backoff") && rows[1].contains("contention-no-jitter"),
        "{out}"
    );
    // Each row is its scenario's own sweep.
    let (alone, _) = check(
        &[
            "sweep",
            "contention-no-jitter",
            "--set",
            "clients=10",
            "--runs",
            "5",
            "--format",
            "markdown",
            "--columns",
            "attempts_per_run",
        ],
        0,
    );
    let calls = |line: &str| {
        line.trim_matches('|')
            .rsplit('|')
            .next()
            .unwrap()
            .trim()
            .to_string()
    };
    let alone_row = alone.lines().filter(|l| l.starts_with('|')).nth(2).unwrap();
    assert_eq!(calls(rows[3]), calls(alone_row), "{out}\n{alone}");
    // Scenarios of two models have different columns.
    let (_, err) = check(
        &[
            "sweep",
            "contention-no-jitter",
            "payment-stable-key",
            "--set",
            "run.runs=1",
            "--runs",
            "1",
        ],
        2,
    );
    assert!(err.contains("one model's columns"), "{err}");
    let (_, err) = check(
        &[
            "sweep",
            "contention-no-jitter",
            "contention-no-jitter",
            "--set",
            "clients=5",
        ],
        2,
    );
    assert!(err.contains("given twice"), "{err}");
}
