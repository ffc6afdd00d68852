use crate::scenarios::{self, UsageError};
use models::Scenario;

#[derive(clap::Args)]
pub struct Args {
    /// JSON Lines on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<u8, UsageError> {
    for path in scenarios::all() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| UsageError(format!("error: cannot read {}: {e}\n", path.display())))?;
        let s = Scenario::load(&scenarios::display_path(&path), &text)?;
        let expect = match s.expect.invariant {
            Some(i) => format!("{} ({i})", s.expect.verdict.as_str()),
            None => s.expect.verdict.as_str().to_string(),
        };
        if a.json {
            println!(
                "{}",
                crate::render::json_line(
                    "scenario",
                    serde_json::json!({
                        "name": s.name,
                        "summary": s.summary,
                        "verdict": s.expect.verdict.as_str(),
                        "invariant": s.expect.invariant,
                    })
                )
            );
        } else {
            println!("{:<40} {:<34} {}", s.name, expect, s.summary);
        }
    }
    Ok(crate::exit::HOLDS)
}
