//! `idemsim models`: what every model declares (its tables, its message
//! kinds, its situations) and the ledger's invariants, each with its meaning.
//! The command line knows no model; it prints what the registry holds.

use crate::render::json_line;
use crate::scenarios::UsageError;
use models::core::invariants;
use models::registry;

#[derive(clap::Args)]
/// The arguments of `idemsim models`.
pub struct Args {
    /// JSON Lines on stdout: one `model` line each, then one `invariant` line each.
    #[arg(long)]
    json: bool,
}

/// Runs `idemsim models`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let kinds = registry::message_kinds();
    for m in registry::MODELS {
        if a.json {
            let situations: Vec<serde_json::Value> = m
                .situations()
                .iter()
                .map(|s| serde_json::json!({"name": s.name, "doc": s.doc}))
                .collect();
            println!(
                "{}",
                json_line(
                    "model",
                    serde_json::json!({
                        "name": m.name(),
                        "about": m.about(),
                        "tables": m.tables(),
                        "situations": situations,
                    })
                )
            );
            continue;
        }
        println!("model {}: {}", m.name(), m.about());
        println!("  tables: {}", m.tables().join(", "));
        println!("  situations:");
        for s in m.situations() {
            println!("    {:<30} {}", s.name, s.doc);
        }
        println!();
    }
    if a.json {
        println!(
            "{}",
            json_line("message_kinds", serde_json::json!({ "kinds": kinds }))
        );
        for i in invariants::ALL {
            println!(
                "{}",
                json_line(
                    "invariant",
                    serde_json::json!({"name": i.name, "doc": i.doc})
                )
            );
        }
    } else {
        println!(
            "message kinds (for [[network.links]] kinds): {}",
            kinds.join(", ")
        );
        println!();
        println!("invariants (judged by the effect ledger for every model):");
        for i in invariants::ALL {
            println!(
                "  {:<24} {}",
                i.name,
                i.doc.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }
    Ok(crate::exit::HOLDS)
}
