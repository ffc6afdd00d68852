//! `idemsim models`: what every model declares (its tables, its message
//! kinds, its situations) and the ledger's invariants, each with its meaning.
//! The command line knows no model; it prints what the registry holds.

use idemsim::catalog::UsageError;
use idemsim::render::json_line;
use models::core::invariants;
use models::registry;

#[derive(clap::Args)]
/// The arguments of `idemsim models`.
pub struct Args {
    /// JSON Lines on stdout: one `model` line each, then one `invariant` line each.
    #[arg(long)]
    json: bool,
    /// List the real systems' presets instead: each one's values and their
    /// sources (docs/fidelity.md).
    #[arg(long)]
    presets: bool,
}

/// `idemsim models --presets`: every preset of every model, with each value,
/// its source, and what of the system is not modelled.
fn presets(json: bool) -> Result<u8, UsageError> {
    for m in registry::MODELS {
        for p in m.presets() {
            if json {
                let settings: Vec<serde_json::Value> = p
                    .settings
                    .iter()
                    .map(
                        |s| serde_json::json!({"key": s.key, "value": s.value, "source": s.source}),
                    )
                    .collect();
                idemsim::outln!(
                    "{}",
                    json_line(
                        "preset",
                        serde_json::json!({
                            "model": m.name(),
                            "table": p.table,
                            "name": p.name,
                            "system": p.system,
                            "settings": settings,
                            "not_modelled": p.not_modelled,
                        })
                    )
                );
                continue;
            }
            idemsim::outln!("{} {}: {}", m.name(), p.written(), p.system);
            for s in p.settings {
                idemsim::outln!("  {} = {}", s.key, s.value);
                idemsim::outln!("      {}", s.source);
            }
            idemsim::outln!("  not modelled: {}", p.not_modelled);
            idemsim::outln!();
        }
    }
    if !json {
        idemsim::outln!("A key written beside a preset wins; the system's own rules then apply (docs/fidelity.md).");
    }
    Ok(idemsim::exit::HOLDS)
}

/// Runs `idemsim models`: the exit code, or `Err` for bad input (exit 2).
pub fn run(a: Args) -> Result<u8, UsageError> {
    if a.presets {
        return presets(a.json);
    }
    let kinds = registry::message_kinds();
    let mut shown: Vec<(&'static str, &'static str)> = Vec::new();
    for m in registry::MODELS {
        if a.json {
            model_json(*m);
        } else {
            model_text(*m, &mut shown);
        }
    }
    if a.json {
        idemsim::outln!(
            "{}",
            json_line("message_kinds", serde_json::json!({ "kinds": kinds }))
        );
        for i in invariants::ALL {
            idemsim::outln!(
                "{}",
                json_line(
                    "invariant",
                    serde_json::json!({"name": i.name, "doc": i.doc})
                )
            );
        }
    } else {
        idemsim::outln!(
            "message kinds (for [[network.links]] kinds): {}",
            kinds.join(", ")
        );
        idemsim::outln!();
        idemsim::outln!("invariants (judged by the effect ledger for every model):");
        for i in invariants::ALL {
            idemsim::outln!(
                "  {:<24} {}",
                i.name,
                i.doc.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }
    Ok(idemsim::exit::HOLDS)
}

/// One model's `model` record.
fn model_json(m: &dyn models::core::ModelSpec<models::Node>) {
    let situations: Vec<serde_json::Value> = m
        .situations()
        .iter()
        .map(|s| serde_json::json!({"name": s.name, "doc": s.doc}))
        .collect();
    idemsim::outln!(
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
}

/// One model as text; `shown` is every situation described so far and the
/// model it was described under.
fn model_text(
    m: &dyn models::core::ModelSpec<models::Node>,
    shown: &mut Vec<(&'static str, &'static str)>,
) {
    idemsim::outln!("model {}: {}", m.name(), m.about());
    idemsim::outln!("  tables: {}", m.tables().join(", "));
    idemsim::outln!("  situations:");
    // A composed model (the chain) reuses its parts' situations: each is
    // described once, under the first model that has it.
    let mut reused: Vec<&'static str> = Vec::new();
    for s in m.situations() {
        match shown.iter().find(|(n, _)| *n == s.name) {
            Some((_, owner)) => {
                if !reused.contains(owner) {
                    reused.push(owner);
                }
            }
            None => {
                shown.push((s.name, m.name()));
                idemsim::outln!("    {:<30} {}", s.name, s.doc);
            }
        }
    }
    if !reused.is_empty() {
        idemsim::outln!("    and those of {} (above)", reused.join(" and "));
    }
    idemsim::outln!();
}
