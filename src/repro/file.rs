//! Repro files: writing a run's recorded decisions so that `replay --repro`
//! finds its scenario again from wherever the file is, and reading one
//! without letting it open any file it names (only a built-in, or a scenario
//! file in the repro's own folder or below it).

use crate::catalog::{self, UsageError};
use crate::shell::shell_word;
use models::Scenario;
use sim::{Outcome, Record};
use std::collections::BTreeMap;
use std::path::Path;

use super::{hash_hex, Repro};

/// A repro of `record`; `from` is where the scenario was found, so a file
/// scenario is replayed from its path, not by a name another file may have.
pub fn repro_of(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    seed: Option<u64>,
    record: &Record,
    outcome: &Outcome,
) -> Repro {
    let mut r = Repro::new(&s.name, s.hash, &s.system.world, seed, record, outcome);
    if !from.is_built_in() {
        r.file = from.arg();
    }
    r.sets = sets.to_vec();
    r.settings = crate::meaning::settings(s);
    r
}

/// What lets a user replay a run found without a seed (a search's failure,
/// an enumerated schedule): its decisions as a `record:` line, and the repro
/// file `--repro-out` asks for, or how to ask for one. Returns the decisions.
pub fn record_lines(
    s: &Scenario,
    from: &catalog::Entry,
    sets: &[String],
    record: &Record,
    outcome: &Outcome,
    repro_out: Option<&str>,
    lines: &mut Vec<String>,
) -> Result<serde_json::Value, UsageError> {
    let json = record_choices(&s.system.world, record);
    lines.push(format!("record: {json}"));
    match repro_out {
        Some(path) => {
            let explicit = write_repro(path, &repro_of(s, from, sets, None, record, outcome))?;
            lines.push(format!(
                "repro: {}",
                replay_command(path, explicit.as_deref())
            ));
        }
        None => lines.push(
            "repro: add --repro-out FILE to write it, then idemsim replay --repro FILE".to_string(),
        ),
    }
    Ok(json)
}

/// A repro file's text, as `write_repro` writes it.
pub fn repro_text(r: &Repro) -> String {
    r.to_json()
}

/// Writes `r` to `path`, its scenario file named as `replay --repro` finds
/// it (see `placed`). Returns the scenario argument a replay must be given,
/// when the repro cannot name its scenario itself.
pub fn write_repro(path: &str, r: &Repro) -> Result<Option<String>, UsageError> {
    let (r, explicit) = placed(r.clone(), path);
    r.write(std::path::Path::new(path)).map_err(|e| {
        UsageError(format!(
            "error: cannot write repro file {path}: {e}\nhelp: check that its folder exists and is writable\n"
        ))
    })?;
    Ok(explicit)
}

/// Says on stderr how to replay a repro file that cannot name its scenario.
pub fn note_explicit(path: &str, explicit: Option<&str>) {
    if let Some(arg) = explicit {
        crate::eoutln!(
            "note: the scenario file {arg} is not in the folder of {path} or below it, so the repro cannot name it: replay it with `{}`",
            replay_command(path, explicit)
        );
    }
}

/// The command that replays the repro file `path`, as [`write_repro`] left it.
pub fn replay_command(path: &str, explicit: Option<&str>) -> String {
    match explicit {
        Some(arg) => format!(
            "idemsim replay {} --repro {}",
            shell_word(arg),
            shell_word(path)
        ),
        None => format!("idemsim replay --repro {}", shell_word(path)),
    }
}

/// The folder a repro file at `path` is in (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `r` as the file `path` carries it: a scenario file in the repro's folder
/// or below it is named relative to that folder, which is all `replay
/// --repro` opens; one elsewhere whose text is a built-in's (same name, same
/// hash) is named as that built-in. Otherwise `file` keeps the path it was
/// given by, for messages, and the second value is that path: a replay must
/// name the scenario itself.
fn placed(mut r: Repro, path: &str) -> (Repro, Option<String>) {
    if r.file.is_empty() {
        return (r, None);
    }
    let canonical = std::fs::canonicalize(&r.file).ok();
    let below = canonical.as_ref().and_then(|file| {
        let dir = std::fs::canonicalize(folder_of(Path::new(path))).ok()?;
        let rel = file.strip_prefix(&dir).ok()?;
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        Some(parts?.join("/"))
    });
    if let Some(rel) = below.filter(|rel| !rel.is_empty()) {
        r.file = rel;
        return (r, None);
    }
    let same_built_in = catalog::built_in(&r.scenario).is_some_and(|e| {
        catalog::parse_overrides(&r.sets)
            .and_then(|o| catalog::load_entry(&e, &o))
            .is_ok_and(|b| hash_hex(b.hash) == r.scenario_hash)
    });
    if same_built_in {
        r.file.clear();
        return (r, None);
    }
    // Kept for messages, absolute: a relative path here would be read from
    // the repro's folder and could name another file there.
    let arg = r.file.clone();
    if let Some(abs) = canonical.and_then(|c| c.to_str().map(str::to_string)) {
        r.file = abs;
    }
    (r, Some(arg))
}

/// `text` as a word of a shell command shown in a fix (quoted by the one
/// `shell_word`), or `or` when it is no word to show: a repro's names may
/// hold anything, control characters included.
fn recorded_word(text: &str, or: &str) -> String {
    let printable = !text.is_empty() && text.len() <= 200 && !text.chars().any(char::is_control);
    if printable {
        shell_word(text)
    } else {
        or.to_string()
    }
}

/// An error of the overrides a file recorded (`error: --set …`), told as the file's.
fn recorded_sets(file: &str, e: UsageError) -> UsageError {
    match e.0.strip_prefix("error: --set ") {
        Some(rest) => UsageError(format!("error: {file}: its recorded --set {rest}")),
        None => e,
    }
}

/// Where a repro's scenario is, if the repro may name it: a name from the
/// catalog, or a file in the repro's folder or below it. Anything else (an
/// absolute path, one that leaves the folder, a device) is refused: a repro
/// is data that may come from anywhere, and it must not make idemsim open
/// and quote whatever file it names. The user can always name the scenario.
fn repro_scenario(path: &str, r: &Repro, cmd: &str) -> Result<catalog::Entry, UsageError> {
    let named = if r.file.is_empty() {
        &r.scenario
    } else {
        &r.file
    };
    let shown = named.escape_debug().to_string();
    let suggest = recorded_word(named, "SCENARIO");
    let quoted = shell_word(path);
    let out = if cmd == "report" {
        " -o REPORT.html"
    } else {
        ""
    };
    let refuse = |why: String| {
        UsageError(format!(
            "error: {path}: {why}\nhelp: give the scenario on the command line (a name from `idemsim list` or a path to its .toml file): `idemsim {cmd} {suggest} --repro {quoted}{out}`\n"
        ))
    };
    if r.file.is_empty() {
        if r.scenario.is_empty() || catalog::is_path_arg(&r.scenario) {
            return Err(refuse(format!(
                "the repro's scenario `{shown}` is not a scenario name; a repro names a built-in scenario, or its file in `file`"
            )));
        }
        return catalog::locate_name(&r.scenario).map_err(|_| {
            refuse(format!(
                "the repro's scenario `{shown}` is neither built in nor in a --scenarios folder"
            ))
        });
    }
    inside(folder_of(Path::new(path)), &r.file, "the repro's folder").map_err(refuse)
}

/// The scenario file `rel` (as a file of data recorded it) in `dir` or below
/// it; anything else is refused with the reason, `dir` named as `place`.
/// Data may come from anywhere, and it must not make idemsim open and quote
/// whatever file it names.
pub fn inside(dir: &Path, rel: &str, place: &str) -> Result<catalog::Entry, String> {
    let shown = rel.escape_debug().to_string();
    let plain = Path::new(rel).components().all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    // An absolute path is fine when it leads inside `dir` (a shard written
    // by `check /abs/path/s.toml` in that folder): the canonical check below
    // decides, as for a relative one.
    let absolute = Path::new(rel).is_absolute();
    if !plain && !absolute {
        return Err(format!(
            "the scenario file `{shown}` is not a path inside {place}: idemsim opens a recorded scenario file only there or below it"
        ));
    }
    let file = dir.join(rel);
    let within = match (std::fs::canonicalize(&file), std::fs::canonicalize(dir)) {
        (Ok(f), Ok(d)) => f.starts_with(&d) && f.is_file(),
        _ => {
            return Err(format!(
                "the scenario file `{shown}` is not there ({})",
                file.display()
            ))
        }
    };
    if !within {
        return Err(format!(
            "the scenario file `{shown}` leads out of {place} or is not a regular file: idemsim opens a recorded scenario file only there or below it"
        ));
    }
    Ok(catalog::file_entry(&file))
}

/// A repro file read and its scenario loaded.
pub struct LoadedRepro {
    /// The file's contents.
    pub repro: Repro,
    /// Where the scenario was found.
    pub entry: catalog::Entry,
    /// The scenario, with the repro's overrides.
    pub scenario: Scenario,
    /// The decisions to replay.
    pub record: Record,
}

/// Reads a repro file and loads its scenario: the one given on the command
/// line, else the one the repro names (see `repro_scenario`); refuses one
/// whose scenario text has changed since. `cmd` (`replay`, `report`) is the
/// command the fixes name.
pub fn load_repro(
    path: &str,
    scenario: Option<&str>,
    cmd: &str,
) -> Result<LoadedRepro, UsageError> {
    let r = Repro::read(std::path::Path::new(path))?;
    let ours = crate::repro::VERSION;
    let quoted = shell_word(path);
    if !r.same_version() {
        return Err(UsageError(format!(
            "error: {path}: the repro was written by idemsim {}, and this is idemsim {ours}\n\
             help: decisions are recorded per version and may mean another run in this one; \
             replay it with idemsim {}, or make a new repro with `idemsim shrink {}{} --seed {} --out {quoted}`\n",
            r.idemsim.escape_debug(),
            recorded_word(&r.idemsim, "VERSION"),
            recorded_word(if r.file.is_empty() { &r.scenario } else { &r.file }, "SCENARIO"),
            r.sets.iter().map(|x| format!(" --set {}", recorded_word(x, "KEY=VALUE"))).collect::<String>(),
            r.seed.map_or("S".to_string(), |x| x.to_string()),
        )));
    }
    let overrides = catalog::parse_overrides(&r.sets).map_err(|e| recorded_sets(path, e))?;
    // An explicit scenario, else the one the repro may name.
    let entry = match scenario {
        Some(given) => catalog::locate(given)?,
        None => repro_scenario(path, &r, cmd)?,
    };
    let s = catalog::load_entry(&entry, &overrides).map_err(|e| recorded_sets(path, e))?;
    if let Some(why) = changed_since(&r, &s) {
        return Err(UsageError(format!(
            "error: {path}: {why}\n\
             help: restore that version of the scenario, or make a new repro with `idemsim shrink {}{} --seed {} --out {quoted}`\n",
            entry.shell_arg(),
            r.sets.iter().map(|x| format!(" --set {}", recorded_word(x, "KEY=VALUE"))).collect::<String>(),
            r.seed.map_or("S".to_string(), |x| x.to_string()),
        )));
    }
    let record = r.record(&s.system.world).map_err(|e| {
        UsageError(format!(
            "error: {path}: {e}\nhelp: streams are named swarm, link:A->B, crash:A, actor:A after the scenario's actors\n"
        ))
    })?;
    out_of_range(&s, &record).map_err(|e| UsageError(format!("error: {path}: {e}\n")))?;
    Ok(LoadedRepro {
        repro: r,
        entry,
        scenario: s,
        record,
    })
}

/// Why `r` no longer applies to `s`, if it does not: the settings it was
/// recorded under changed (each change named), or, for a file written
/// before idemsim recorded settings, the scenario's text changed. A
/// comment, key order or whitespace is no change of settings.
fn changed_since(r: &Repro, s: &Scenario) -> Option<String> {
    if r.settings.is_empty() {
        return (hash_hex(s.hash) != r.scenario_hash).then(|| format!(
            "the text of {} changed since the repro was recorded against it (hash {} then, {} now), and the repro was written before idemsim recorded a scenario's settings, so it cannot tell whether the change alters the run",
            s.file,
            r.scenario_hash.escape_debug(),
            hash_hex(s.hash),
        ));
    }
    let now = crate::meaning::settings(s);
    let changes = crate::meaning::changes(&r.settings, &now);
    (!changes.is_empty()).then(|| {
        format!(
            "the settings of {} changed since the repro was recorded: {}; these decisions would make another run",
            s.file,
            crate::meaning::changes_text(&changes)
        )
    })
}

/// Refuses a record with a decision its run does not offer: value 7 where
/// the run has 3 alternatives. Shrinking clamps such a value on purpose (its
/// candidates shift decisions), but a user's file that needs a clamp was
/// edited or belongs to another run, and replaying it would show a run
/// nobody recorded. One replay, recording what it read.
fn out_of_range(s: &Scenario, record: &Record) -> Result<(), String> {
    // This run may wait on the user's program: Ctrl-C or SIGTERM must reach
    // it here as in the replay that follows (which installs the same).
    crate::signals::install_for(s);
    let mut sim = sim::Sim::new(&s.system);
    sim.choices.set_record_replays(true);
    let source = sim::Source::Replay {
        record,
        log_points: false,
    };
    // A panic is the run's outcome, reported by the replay itself.
    let _ = sim::guarded(|| sim.run(&s.system, source, &mut sim::NoTrace));
    // A run broken off by a signal read fewer decisions than it would have:
    // no verdict on the file; the command reports the interruption.
    if crate::signals::received().is_some() {
        return Ok(());
    }
    let read = sim.choices.recorded();
    for (stream, values) in record.streams.iter().enumerate() {
        let got = read.streams.get(stream).map_or(&[][..], Vec::as_slice);
        if let Some((i, (&want, &used))) = values
            .iter()
            .zip(got)
            .enumerate()
            .find(|(_, (w, u))| w != u)
        {
            return Err(format!(
                "decision {i} of stream {} is {want}, but the run offers only {} alternatives there (0 to {used}): the file was edited or records another run\nhelp: make a new repro with `idemsim shrink SCENARIO --seed S --out FILE`",
                sim::shrink::stream_name(&s.system.world, stream as u32),
                used + 1
            ));
        }
    }
    Ok(())
}

// ------------------------------------------------------------ the command

/// A record as the `choices` of a repro file: stream name to decision values.
pub(crate) fn record_choices(world: &sim::World, record: &Record) -> serde_json::Value {
    let map: BTreeMap<String, &Vec<u64>> = record
        .streams
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(i, v)| (sim::shrink::stream_name(world, i as u32), v))
        .collect();
    serde_json::json!(map)
}
