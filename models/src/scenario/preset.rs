//! `preset = "..."` in a scenario's tables: the preset's settings written
//! into the text beneath what the file and `--set` write (core::preset).
//!
//! The expansion is textual, so the model's loader sees one scenario and
//! applies the named system's rules to it exactly as to a file that wrote
//! every setting out: a refusal or a warning does not depend on where a
//! value came from. Where a mistake sits on a line only a preset wrote, the
//! locator blames the `preset =` line (locate.rs).

use crate::core::input::{did_you_mean, invalid, Invalid, Seg};
use crate::core::{Allowed, Preset};

/// The text with every named preset's settings written in, and the presets.
pub(super) struct Expanded {
    /// The text the model's loader reads.
    pub text: String,
    /// The presets it names, in the order of their tables.
    pub applied: Vec<&'static Preset>,
}

/// Expands the presets `effective` names among those its model `offered`.
pub(super) fn expand(effective: &str, offered: &'static [Preset]) -> Result<Expanded, Invalid> {
    let unchanged = || Expanded {
        text: effective.to_string(),
        applied: Vec::new(),
    };
    if offered.is_empty() || !effective.contains("preset") {
        return Ok(unchanged());
    }
    // A text that does not parse is reported by the typed parse, with its place.
    let Ok(mut doc) = effective.parse::<toml_edit::DocumentMut>() else {
        return Ok(unchanged());
    };
    let mut tables: Vec<&'static str> = offered.iter().map(|p| p.table).collect();
    tables.sort_unstable();
    tables.dedup();
    let mut applied = Vec::new();
    for table in tables {
        let Some(name) = take_preset(&mut doc, table)? else {
            continue;
        };
        let preset = find(offered, table, &name)?;
        for s in preset.settings {
            set_if_absent(&mut doc, s.key, s.value);
        }
        applied.push(preset);
    }
    if applied.is_empty() {
        return Ok(unchanged());
    }
    for p in &applied {
        check_rules(&doc, p)?;
    }
    Ok(Expanded {
        text: doc.to_string(),
        applied,
    })
}

fn preset_path(table: &str) -> Vec<Seg> {
    table
        .split('.')
        .chain(["preset"])
        .map(|k| Seg::Name(k.to_string()))
        .collect()
}

/// Removes `preset` from `table` and returns its value; `None` without one.
fn take_preset(doc: &mut toml_edit::DocumentMut, table: &str) -> Result<Option<String>, Invalid> {
    let mut t: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for part in table.split('.') {
        match t.get_mut(part).and_then(toml_edit::Item::as_table_like_mut) {
            Some(inner) => t = inner,
            None => return Ok(None),
        }
    }
    let Some(item) = t.get("preset") else {
        return Ok(None);
    };
    let Some(name) = item.as_str().map(str::to_string) else {
        return Err(invalid(
            preset_path(table),
            format!("`{table}.preset` is the name of a system's preset, in quotes"),
            format!(
                "write preset = \"NAME\"; `idemsim models --presets` lists the names for {table}"
            ),
        ));
    };
    t.remove("preset");
    Ok(Some(name))
}

fn find(offered: &'static [Preset], table: &str, name: &str) -> Result<&'static Preset, Invalid> {
    let here: Vec<&'static Preset> = offered.iter().filter(|p| p.table == table).collect();
    if let Some(p) = here.iter().find(|p| p.name == name) {
        return Ok(p);
    }
    let names: Vec<&str> = here.iter().map(|p| p.name).collect();
    let list = names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let help = match did_you_mean(name, names.iter().copied()) {
        Some(b) => format!("did you mean \"{b}\"? The presets of {table} are {list}"),
        None => format!("the presets of {table} are {list} (`idemsim models --presets` lists their values and sources)"),
    };
    Err(invalid(
        preset_path(table),
        format!("unknown preset \"{name}\" for {table}"),
        help,
    ))
}

/// The value `doc` has at a dotted `key`, if any.
fn value_of<'a>(doc: &'a toml_edit::DocumentMut, key: &str) -> Option<&'a toml_edit::Item> {
    let mut item: Option<&toml_edit::Item> = Some(doc.as_item());
    for part in key.split('.') {
        item = item.and_then(|i| i.get(part));
    }
    item
}

/// A value as TOML writes it, without the file's spacing or comments.
fn shown(v: &toml_edit::Item) -> Option<String> {
    Some(v.as_value()?.clone().decorated("", "").to_string())
}

/// Whether `v` is what `allowed` admits in `doc`; `None` when the rule
/// cannot judge it (a value of another type is the model's to report).
fn admits(doc: &toml_edit::DocumentMut, allowed: Allowed, v: &toml_edit::Item) -> Option<bool> {
    match allowed {
        Allowed::Range(..) | Allowed::OffOr(..) => allowed.admits_number(v.as_integer()?),
        Allowed::Only(values) => Some(values.contains(&shown(v)?.as_str())),
        Allowed::AtLeast(other, plus) => {
            let floor = value_of(doc, other).and_then(toml_edit::Item::as_integer)?;
            Some(v.as_integer()? >= floor + plus)
        }
    }
}

/// Refuses a value the preset's system refuses, or a setting it does not
/// have (only the value that turns the mechanism off is admitted).
fn check_rules(doc: &toml_edit::DocumentMut, p: &Preset) -> Result<(), Invalid> {
    for r in p.rules {
        let Some(v) = value_of(doc, r.key) else {
            continue;
        };
        if admits(doc, r.allowed, v) != Some(false) {
            continue;
        }
        return Err(invalid(
            r.key.split('.').map(|k| Seg::Name(k.to_string())).collect(),
            format!(
                "{} = {} is not what {} accepts: {}",
                r.key,
                shown(v).unwrap_or_default(),
                p.system,
                r.says
            ),
            format!(
                "write {}, or drop preset = \"{}\" to model a system without this rule",
                r.shown(),
                p.name
            ),
        ));
    }
    Ok(())
}

/// Writes `key = value` unless the scenario already writes `key`: a value
/// written beside a preset wins over the preset's.
fn set_if_absent(doc: &mut toml_edit::DocumentMut, key: &str, value: &str) {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, tables) = parts.split_last().expect("a preset key has a name");
    let mut t: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    let mut inline = false;
    for p in tables {
        if t.get(p).is_none() {
            let fresh = match inline {
                true => toml_edit::Item::Value(toml_edit::InlineTable::new().into()),
                false => toml_edit::Item::Table(toml_edit::Table::new()),
            };
            t.insert(p, fresh);
        }
        let entry = t.get_mut(p).expect("inserted above if missing");
        inline = entry.is_inline_table();
        match entry.as_table_like_mut() {
            Some(inner) => t = inner,
            // The file made it something else: its own loader reports that.
            None => return,
        }
    }
    if t.get(last).is_some() {
        return;
    }
    // Each value is checked to parse by core::preset's test.
    let v: toml_edit::Value = value.parse().expect("a preset's value is TOML");
    t.insert(last, toml_edit::value(v));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::PresetSetting;

    static OFFERED: [Preset; 1] = [Preset {
        table: "broker",
        name: "demo-1.0",
        system: "Demo 1.0",
        settings: &[
            PresetSetting {
                key: "broker.visibility_timeout_ms",
                value: "30000",
                source: "demo docs",
            },
            PresetSetting {
                key: "producer.max_in_flight",
                value: "5",
                source: "demo docs",
            },
        ],
        rules: &[
            crate::core::PresetRule {
                key: "broker.visibility_timeout_ms",
                allowed: Allowed::Range(0, 43_200_000),
                says: "demo says at most 12 h",
            },
            crate::core::PresetRule {
                key: "broker.exactly_once_delivery",
                allowed: Allowed::Only(&["false"]),
                says: "demo has no exactly-once delivery",
            },
        ],
        not_modelled: "nothing",
    }];

    #[test]
    fn a_preset_fills_what_the_file_leaves_out_and_the_file_wins() {
        let text = "model = \"m\"\n[broker]\npreset = \"demo-1.0\"\nvisibility_timeout_ms = 7\n";
        let e = expand(text, &OFFERED).unwrap();
        let doc: toml::Table = e.text.parse().unwrap();
        assert_eq!(doc["broker"]["visibility_timeout_ms"].as_integer(), Some(7));
        assert_eq!(doc["producer"]["max_in_flight"].as_integer(), Some(5));
        assert!(
            doc["broker"].get("preset").is_none(),
            "the preset key is consumed"
        );
        assert_eq!(e.applied.len(), 1);
    }

    #[test]
    fn an_unknown_preset_is_refused_with_the_closest_name() {
        let text = "[broker]\npreset = \"demo-1.1\"\n";
        let Err(i) = expand(text, &OFFERED) else {
            panic!("an unknown preset must be refused")
        };
        assert!(
            i.message.contains("unknown preset \"demo-1.1\""),
            "{}",
            i.message
        );
        assert!(i.help.unwrap().contains("did you mean \"demo-1.0\""));
    }

    #[test]
    fn a_value_outside_the_systems_range_is_refused_naming_the_system() {
        let text = "[broker]\npreset = \"demo-1.0\"\nvisibility_timeout_ms = 43200001\n";
        let Err(i) = expand(text, &OFFERED) else {
            panic!("a value the system refuses must be refused")
        };
        assert!(
            i.message.contains("is not what Demo 1.0 accepts"),
            "{}",
            i.message
        );
        let ok = "[broker]\npreset = \"demo-1.0\"\nvisibility_timeout_ms = 43200000\n";
        assert!(expand(ok, &OFFERED).is_ok(), "the limit itself is accepted");
        // A mechanism the system does not have: only the value that turns it off.
        let on = "[broker]\npreset = \"demo-1.0\"\nexactly_once_delivery = true\n";
        let Err(i) = expand(on, &OFFERED) else {
            panic!("a mechanism the system lacks must be refused")
        };
        assert!(i
            .help
            .unwrap()
            .contains("broker.exactly_once_delivery = false"));
        let off = "[broker]\npreset = \"demo-1.0\"\nexactly_once_delivery = false\n";
        assert!(expand(off, &OFFERED).is_ok());
    }

    #[test]
    fn a_preset_that_is_no_string_is_refused() {
        assert!(expand("[broker]\npreset = 4\n", &OFFERED).is_err());
    }

    #[test]
    fn a_text_without_presets_is_left_as_it_is() {
        let text = "[broker]\n# preset in a comment\nvisibility_timeout_ms = 7\n";
        let e = expand(text, &OFFERED).unwrap();
        assert_eq!(e.text, text);
        assert!(e.applied.is_empty());
    }
}
