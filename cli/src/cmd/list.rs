//! `idemsim list`: the scenarios with their summary, expected verdict and origin.

use idemsim::catalog::{self, UsageError};

#[derive(clap::Args)]
/// The arguments of `idemsim list`.
pub struct Args {
    /// JSON Lines on stdout.
    #[arg(long)]
    json: bool,
}

/// Runs `idemsim list`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let entries = catalog::catalog()?;
    let width = entries
        .iter()
        .map(|e| e.source().chars().count())
        .max()
        .unwrap_or(8);
    // At least two spaces after the longest name, so a user's long name
    // never runs into its verdict (readers split the columns on them).
    let name_width = entries
        .iter()
        .map(|e| e.name.chars().count() + 1)
        .max()
        .unwrap_or(0)
        .max(40);
    for e in &entries {
        let s = catalog::load_entry(e, &[])?;
        let expect = s.describe_expect();
        let shadows: Vec<String> = e.shadows.iter().map(catalog::origin_text).collect();
        if a.json {
            idemsim::outln!(
                "{}",
                idemsim::render::json_line(
                    "scenario",
                    serde_json::json!({
                        "scenario": s.name,
                        "summary": s.summary,
                        "expected": s.expected_verdict().map(models::scenario::Verdict::as_str),
                        "expected_invariant": s.expected_invariant(),
                        "source": e.source(),
                        "shadows": shadows,
                    })
                )
            );
        } else {
            idemsim::outln!(
                "{:<name_width$} {:<34} {:<width$}  {}",
                s.name,
                expect,
                e.source(),
                s.summary
            );
        }
        for hidden in &shadows {
            idemsim::eoutln!(
                "note: {} shadows {hidden} `{}`: the name means the first",
                e.source(),
                e.name
            );
        }
    }
    Ok(idemsim::exit::HOLDS)
}
