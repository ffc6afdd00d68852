//! The keys that put a program in a role's place, as every model's loader
//! reads them from the role's table (`[consumer]`, `[bank]`, ...):
//! `program`, `handler_timeout_ms` and `state_folder`, checked the same way
//! for every role, with the built-in actor's keys refused beside them.

use super::{resolve_program, ExternalConfig, Program, DEFAULT_HANDLER_TIMEOUT_MS};
use crate::core::input::{invalid, path, positive_duration_us, Invalid};

/// Longest wall-clock time a program's handler may be given.
const MAX_HANDLER_TIMEOUT_MS: u64 = 3600 * 1000;

/// The program keys of one role's table, as its DTO read them.
pub struct ProgramKeys<'a> {
    /// The table (`"bank"`).
    pub table: &'static str,
    /// `program`, if written.
    pub argv: Option<&'a [String]>,
    /// `handler_timeout_ms` (its default if not written).
    pub handler_timeout_ms: u64,
    /// `state_folder`.
    pub state_folder: bool,
    /// The built-in actor's keys, which a program replaces.
    pub built_in: &'static [&'static str],
}

/// The keys a program adds to a role's table.
pub const PROGRAM_KEYS: &[&str] = &["program", "handler_timeout_ms", "state_folder"];

/// The default of `handler_timeout_ms`, for a DTO's `Default`.
pub const fn default_handler_timeout_ms() -> u64 {
    DEFAULT_HANDLER_TIMEOUT_MS
}

/// The program of a role's table and its handler time-out in ms, checked:
/// no built-in key beside it (`written` says whether the file writes a key
/// of the table), no program key without it, and the program and its files
/// exist in `dir`, the scenario's folder.
pub fn program_of(
    k: &ProgramKeys<'_>,
    written: impl Fn(&str) -> bool,
    dir: Option<&std::path::Path>,
) -> Result<Option<(Program, u64)>, Invalid> {
    let at = |key| path(&[k.table, key]);
    let Some(argv) = k.argv else {
        if let Some(key) = PROGRAM_KEYS[1..].iter().find(|key| written(key)) {
            return Err(invalid(
                at(key),
                format!(
                    "{key} is a setting of an external program, and no {}.program is given",
                    k.table
                ),
                format!(
                    "delete the line, or give the program: program = [\"python3\", \"{}.py\"]",
                    k.table
                ),
            ));
        }
        return Ok(None);
    };
    if let Some(key) = k.built_in.iter().find(|key| written(key)) {
        return Err(invalid(
            at(key),
            format!(
                "{t}.{key} belongs to the built-in {t}, and {t}.program replaces it: the program decides",
                t = k.table
            ),
            format!(
                "delete the line, or delete {}.program to use the built-in one",
                k.table
            ),
        ));
    }
    let mut program = resolve_program(argv, dir, &at("program"))?;
    program.state_folder = k.state_folder;
    let timeout_ms = positive_duration_us(
        k.handler_timeout_ms,
        MAX_HANDLER_TIMEOUT_MS,
        at("handler_timeout_ms"),
        "write handler_timeout_ms = 10000 (wall-clock milliseconds per handler)",
    )? / 1000;
    Ok(Some((program, timeout_ms)))
}

/// The configuration of the program actor `name` among `actor_names`.
pub fn config_for(
    name: &str,
    (program, handler_timeout_ms): &(Program, u64),
    actor_names: Vec<String>,
) -> ExternalConfig {
    ExternalConfig {
        name: name.to_string(),
        program: program.clone(),
        handler_timeout_ms: *handler_timeout_ms,
        actor_names,
        start_fields: String::new(),
    }
}
