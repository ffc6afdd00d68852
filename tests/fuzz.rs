//! The project's own fuzz test: seeded mutants of every shipped scenario go
//! through the loader (as an edited file or as `--set` arguments) and, when
//! accepted, through a few runs. Asserted for every mutant: no panic, no hang,
//! every rejection located (file:line:col with the user's own line, or the
//! `--set` argument) with a message in the user's words and a fix; and every
//! mutant of a nonsense class (a wrapping number, a reversed range, a base
//! above its cap, a link from an actor to itself, ...) rejected.
//!
//! `IDEMSIM_FUZZ_MUTANTS` raises the count (default 3000),
//! `IDEMSIM_FUZZ_SEED` changes the base seed, and `IDEMSIM_FUZZ_ONLY=SEED`
//! replays one mutant; a failure prints the line that replays it.

mod common;

use models::scenario::{Override, Scenario, ScenarioError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toml_edit::{DocumentMut, Item, Value};

/// splitmix64: the mutants are a pure function of their seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// A value in the file: its path, and the dotted key `--set` can reach
/// (none inside an array of tables).
#[derive(Clone, Debug)]
struct Leaf {
    path: Vec<Step>,
    dotted: Option<String>,
    value: Value,
}

impl Leaf {
    fn key(&self) -> &str {
        match self.path.last() {
            Some(Step::Key(k)) => k,
            _ => "",
        }
    }
}

fn leaves(doc: &DocumentMut) -> Vec<Leaf> {
    let mut out = Vec::new();
    walk(doc.as_table(), &mut Vec::new(), true, &mut out);
    out
}

fn walk(t: &toml_edit::Table, at: &mut Vec<Step>, dotted: bool, out: &mut Vec<Leaf>) {
    for (k, item) in t.iter() {
        at.push(Step::Key(k.to_string()));
        match item {
            Item::Value(v) => out.push(Leaf {
                path: at.clone(),
                dotted: dotted.then(|| dotted_key(at)),
                value: v.clone(),
            }),
            Item::Table(t) => walk(t, at, dotted, out),
            Item::ArrayOfTables(a) => {
                for (i, t) in a.iter().enumerate() {
                    at.push(Step::Index(i));
                    walk(t, at, false, out);
                    at.pop();
                }
            }
            Item::None => {}
        }
        at.pop();
    }
}

fn dotted_key(at: &[Step]) -> String {
    at.iter()
        .map(|s| match s {
            Step::Key(k) => k.clone(),
            Step::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn set(doc: &mut DocumentMut, path: &[Step], v: Value) {
    let mut it = doc.as_item_mut();
    for s in path {
        it = match s {
            Step::Key(k) => &mut it[k.as_str()],
            Step::Index(i) => &mut it[*i],
        };
    }
    *it = Item::Value(v);
}

fn get(doc: &DocumentMut, path: &[&str]) -> Option<i64> {
    let mut it = doc.as_item();
    for k in path {
        it = it.get(k)?;
    }
    it.as_integer()
}

/// What a mutant must give: anything but a panic, a hang or an unlocated
/// error; or, for a nonsense class, a rejection.
#[derive(Debug)]
struct Mutant {
    what: String,
    text: String,
    sets: Vec<String>,
    must_reject: bool,
}

const EDGE_NUMBERS: &[i64] = &[
    0,
    1,
    2,
    999,
    1001,
    65,
    1_000_000_001,
    2_147_483_648,
    4_294_967_296,
    9_007_199_254_740_993,
    18_446_744_073_709_551,
    2_305_843_009_213_693_952,
    i64::MAX,
];

const OTHER_TYPES: &[&str] = &[
    "\"x\"", "true", "1.5", "[1]", "{}", "\"1000\"", "\"10s\"", "-0", "[]",
];

const BYTES: &[&str] = &[
    "=", "[", "]", "\"", "#", "\n", ".", ",", "{", "}", "'", "\\", " = ",
];

fn actor_of(doc: &DocumentMut, rng: &mut Rng) -> String {
    let messaging = doc.get("model").and_then(Item::as_str) == Some("messaging");
    let actors: &[&str] = if messaging {
        &["producer", "broker", "consumer-1", "consumer-db"]
    } else {
        &["client", "service", "bank"]
    };
    rng.pick(actors).to_string()
}

/// One mutant of `text`: random damage (anything goes but a crash) or a
/// nonsense class (must be rejected).
fn mutate(text: &str, rng: &mut Rng) -> Mutant {
    let mut doc: DocumentMut = text.parse().expect("shipped scenarios parse");
    let all = leaves(&doc);
    let kind = rng.below(16);
    let mut sets = Vec::new();
    let (what, must_reject) = match kind {
        // Random damage.
        0 | 1 => {
            let ints: Vec<&Leaf> = all.iter().filter(|l| l.value.is_integer()).collect();
            let Some(l) = (!ints.is_empty()).then(|| *rng.pick(&ints)) else {
                return mutate_text(text, rng);
            };
            let n = *rng.pick(EDGE_NUMBERS);
            put(&mut doc, &mut sets, l, &n.to_string(), rng);
            (format!("{} = {n}", dotted_key(&l.path)), false)
        }
        2 | 3 => {
            let l = rng.pick(&all).clone();
            let v = *rng.pick(OTHER_TYPES);
            put(&mut doc, &mut sets, &l, v, rng);
            (format!("{} = {v}", dotted_key(&l.path)), false)
        }
        4 => {
            let strs: Vec<&Leaf> = all.iter().filter(|l| l.value.is_str()).collect();
            let Some(l) = (!strs.is_empty()).then(|| *rng.pick(&strs)) else {
                return mutate_text(text, rng);
            };
            let s = l.value.as_str().unwrap_or("");
            let choices = [
                String::new(),
                "none".into(),
                s.to_uppercase(),
                s.chars().skip(1).collect(),
                format!("{s}-"),
            ];
            let v = format!("{:?}", rng.pick(&choices));
            put(&mut doc, &mut sets, l, &v, rng);
            (format!("{} = {v}", dotted_key(&l.path)), false)
        }
        5..=8 => return mutate_text(text, rng),
        // Nonsense classes.
        9 => {
            let ms: Vec<&Leaf> = all
                .iter()
                .filter(|l| l.key().ends_with("_ms") && l.value.is_integer())
                .collect();
            let Some(l) = (!ms.is_empty()).then(|| *rng.pick(&ms)) else {
                return mutate_text(text, rng);
            };
            let v = *rng.pick(&["2305843009213693952", "18446744073709551", "-1"]);
            put(&mut doc, &mut sets, l, v, rng);
            (format!("{} = {v} (wraps)", dotted_key(&l.path)), true)
        }
        10 => {
            let pm: Vec<&Leaf> = all
                .iter()
                .filter(|l| l.key().ends_with("_per_mille"))
                .collect();
            let Some(l) = (!pm.is_empty()).then(|| *rng.pick(&pm)) else {
                return mutate_text(text, rng);
            };
            let reversed = l
                .value
                .as_array()
                .and_then(|a| Some((a.get(0)?.as_integer()?, a.get(1)?.as_integer()?)))
                .filter(|(lo, hi)| lo < hi)
                .map(|(lo, hi)| format!("[{hi}, {lo}]"));
            let v = match reversed {
                Some(r) if rng.coin() => r,
                _ => rng.pick(&["1001", "[0, 1001]", "-5"]).to_string(),
            };
            put(&mut doc, &mut sets, l, &v, rng);
            (
                format!("{} = {v} (no probability)", dotted_key(&l.path)),
                true,
            )
        }
        11 => {
            // A minimum above its maximum.
            let mins: Vec<&Leaf> = all
                .iter()
                .filter(|l| l.key().ends_with("_ms_min") && l.dotted.is_some())
                .collect();
            let Some(l) = (!mins.is_empty()).then(|| *rng.pick(&mins)) else {
                return nonsense_run(doc, rng);
            };
            let max_key = l.key().replace("_ms_min", "_ms_max");
            let mut max_path = l.path.clone();
            max_path.pop();
            let keys: Vec<String> = max_path
                .iter()
                .filter_map(|s| match s {
                    Step::Key(k) => Some(k.clone()),
                    Step::Index(_) => None,
                })
                .collect();
            let mut kp: Vec<&str> = keys.iter().map(String::as_str).collect();
            kp.push(&max_key);
            let Some(max) = get(&doc, &kp) else {
                return nonsense_run(doc, rng);
            };
            let v = (max + 1).to_string();
            put(&mut doc, &mut sets, l, &v, rng);
            (
                format!("{} = {v} > {max_key} = {max}", dotted_key(&l.path)),
                true,
            )
        }
        12 => return nonsense_run(doc, rng),
        13 => {
            let a = actor_of(&doc, rng);
            let t = if rng.coin() {
                format!("{text}\n[[network.links]]\nfrom = \"{a}\"\nto = \"{a}\"\nloss_per_mille = 10\n")
            } else {
                format!("{text}\n[[network.partitions]]\nbetween = [\"{a}\", \"{a}\"]\nstart_ms = 0\nend_ms = 10\n")
            };
            return Mutant {
                what: format!("{a} linked to or partitioned from itself"),
                text: t,
                sets,
                must_reject: true,
            };
        }
        14 => {
            let payment = doc.get("model").and_then(Item::as_str).unwrap_or("payment") == "payment";
            if payment {
                let base = rng.pick(&["60001", "86400000"]).to_string();
                let cap = get(&doc, &["client", "retry", "cap_ms"]).unwrap_or(60_000);
                let base = if base.parse::<i64>().unwrap_or(0) > cap {
                    base
                } else {
                    (cap + 1).to_string()
                };
                sets.push(format!("client.retry.base_ms={base}"));
                (
                    format!("client.retry.base_ms = {base} above cap_ms = {cap}"),
                    true,
                )
            } else {
                let v = *rng.pick(&["0", "65"]);
                sets.push(format!("broker.consumers={v}"));
                (format!("broker.consumers = {v}"), true)
            }
        }
        _ => {
            let payment = doc.get("model").and_then(Item::as_str).unwrap_or("payment") == "payment";
            if payment && rng.coin() {
                let t = format!("{text}\n[[operations]]\nclaim = 9\namount_eur = 0\n");
                return Mutant {
                    what: "an operation of 0 EUR".into(),
                    text: t,
                    sets,
                    must_reject: true,
                };
            }
            let v = *rng.pick(&["\"no-duplicate-effect\"", "\"no-lost-effect\""]);
            set(
                &mut doc,
                &[Step::Key("expect".into()), Step::Key("verdict".into())],
                Value::from("holds"),
            );
            set(
                &mut doc,
                &[Step::Key("expect".into()), Step::Key("invariant".into())],
                v.parse().expect("a TOML string"),
            );
            (format!("verdict holds with invariant {v}"), true)
        }
    };
    Mutant {
        what,
        text: doc.to_string(),
        sets,
        must_reject,
    }
}

/// `[run]` nonsense: no steps, or an operation that starts after the end.
fn nonsense_run(mut doc: DocumentMut, rng: &mut Rng) -> Mutant {
    let payment = doc.get("model").and_then(Item::as_str).unwrap_or("payment") == "payment";
    let mut sets = Vec::new();
    let what = if payment && rng.coin() {
        sets.push("run.max_time_ms=1000".to_string());
        sets.push("run.fault_phase_ms=500".to_string());
        let t = doc.to_string();
        return Mutant {
            what: "an operation starting after run.max_time_ms".into(),
            text: format!("{t}\n[[operations]]\nclaim = 9\namount_eur = 10\nstart_ms = 2000\n"),
            sets,
            must_reject: true,
        };
    } else if rng.coin() {
        sets.push("run.max_steps=0".to_string());
        "run.max_steps = 0".to_string()
    } else {
        set(
            &mut doc,
            &[Step::Key("run".into()), Step::Key("max_steps".into())],
            Value::from(0),
        );
        "run.max_steps = 0 in the file".to_string()
    };
    Mutant {
        what,
        text: doc.to_string(),
        sets,
        must_reject: true,
    }
}

/// Writes `v` at `l`: in the file, or as a `--set` argument when it can.
fn put(doc: &mut DocumentMut, sets: &mut Vec<String>, l: &Leaf, v: &str, rng: &mut Rng) {
    match &l.dotted {
        Some(k) if rng.coin() => sets.push(format!("{k}={v}")),
        _ => match v.parse::<Value>() {
            Ok(val) => set(doc, &l.path, val),
            Err(_) => set(doc, &l.path, Value::from(v)),
        },
    }
}

/// Damage to the text itself: a line dropped or doubled, the file cut
/// short, a stray character, a key misspelt.
fn mutate_text(text: &str, rng: &mut Rng) -> Mutant {
    let lines: Vec<&str> = text.lines().collect();
    let i = rng.below(lines.len());
    let (what, out) = match rng.below(5) {
        0 => {
            let mut v = lines.clone();
            v.remove(i);
            (format!("line {} deleted", i + 1), v.join("\n"))
        }
        1 => {
            let mut v = lines.clone();
            v.insert(i, lines[i]);
            (format!("line {} doubled", i + 1), v.join("\n"))
        }
        2 => {
            let mut cut = rng.below(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            (format!("cut at byte {cut}"), text[..cut].to_string())
        }
        3 => {
            let mut at = rng.below(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let b = rng.pick(BYTES);
            (
                format!("{b:?} inserted at byte {at}"),
                format!("{}{b}{}", &text[..at], &text[at..]),
            )
        }
        _ => {
            let line = lines[i];
            let out = match line.split_once('=') {
                Some((k, v)) if !k.trim_start().starts_with('#') && k.trim().len() > 1 => {
                    let k = k.trim();
                    let typo = match rng.below(4) {
                        0 => k[1..].to_string(),
                        1 => format!("{k}_ms"),
                        2 => k.trim_end_matches("_ms").to_string(),
                        _ => k.replace('_', "-"),
                    };
                    let mut v2 = lines.clone();
                    let new = format!("{typo} ={v}");
                    v2[i] = &new;
                    return Mutant {
                        what: format!("key `{k}` written `{typo}` on line {}", i + 1),
                        text: v2.join("\n"),
                        sets: Vec::new(),
                        must_reject: false,
                    };
                }
                _ => format!("{text}\n[clinet]\nkey = \"stable\"\n"),
            };
            ("a misspelt key or table".into(), out)
        }
    };
    // A harmless override adds a line to [run] near the top: errors further
    // down must still name the line the user wrote.
    let sets = if rng.coin() {
        vec!["run.max_queue=10000".to_string()]
    } else {
        Vec::new()
    };
    Mutant {
        what,
        text: out,
        sets,
        must_reject: false,
    }
}

const FILE: &str = "mutant.toml";

/// What is wrong with how `m` was handled, if anything.
fn judge(m: &Mutant) -> Result<(), String> {
    let overrides: Vec<Override> = match m.sets.iter().map(|s| Override::parse(s)).collect() {
        Ok(o) => o,
        Err(e) => return Err(format!("the test wrote a bad --set: {e}")),
    };
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        Scenario::load_with(FILE, &m.text, &overrides)
    }))
    .map_err(|_| "the loader panicked".to_string())?;
    match loaded {
        Err(e) => located(&e, m, &overrides),
        Ok(s) if m.must_reject => Err(format!("accepted nonsense ({})", s.file)),
        Ok(s) => {
            let stop = AtomicBool::new(false);
            let sum = catch_unwind(AssertUnwindSafe(|| {
                sim::explore(
                    &s.system,
                    sim::SeedRange { start: 0, end: 2 },
                    1,
                    &stop,
                    &|_| {},
                )
            }))
            .map_err(|_| "a run panicked outside the model".to_string())?;
            if sum.tally.panics > 0 {
                return Err(format!(
                    "a model panicked on an accepted scenario: {:?}",
                    sum.first_failure.map(|f| f.outcome)
                ));
            }
            Ok(())
        }
    }
}

/// The error names a place the user can find and says what to do.
fn located(e: &ScenarioError, m: &Mutant, overrides: &[Override]) -> Result<(), String> {
    let shown = e.to_string();
    if e.message.trim().is_empty() {
        return Err(format!("empty message:\n{shown}"));
    }
    let has_fix = matches!(e.help.as_deref(), Some(h) if !h.trim().is_empty());
    if !has_fix {
        return Err(format!("no fix offered:\n{shown}"));
    }
    for jargon in [
        "Dto", "u64", "u32", "u16", "usize", "i64", "Option<", "Vec<", "struct ",
    ] {
        if e.message.contains(jargon) || e.help.as_deref().unwrap_or("").contains(jargon) {
            return Err(format!("Rust words in the message ({jargon}):\n{shown}"));
        }
    }
    if e.file.starts_with("--set ") {
        let known = overrides
            .iter()
            .any(|o| e.file == format!("--set {}={}", o.key, o.value));
        return if known {
            Ok(())
        } else {
            Err(format!("blames an argument that was not given:\n{shown}"))
        };
    }
    if e.file != FILE {
        return Err(format!("names {} instead of the file:\n{shown}", e.file));
    }
    let line = m.text.lines().nth(e.line.wrapping_sub(1));
    match (line, &e.source_line) {
        (Some(l), Some(src)) if l == src && e.column >= 1 => Ok(()),
        (None, Some(src)) if src.is_empty() => Ok(()), // at the very end
        _ => Err(format!(
            "line {} of the file is {:?}, but the error shows {:?}:\n{shown}",
            e.line, line, e.source_line
        )),
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a whole number")),
    )
}

#[test]
fn mutated_scenarios_never_crash_hang_or_go_unlocated() {
    let base = env_u64("IDEMSIM_FUZZ_SEED").unwrap_or(0x1de5_0001);
    let count = env_u64("IDEMSIM_FUZZ_MUTANTS").unwrap_or(3000);
    let only = env_u64("IDEMSIM_FUZZ_ONLY");
    let files: Vec<(String, String)> = common::scenario_files()
        .iter()
        .map(|p| {
            (
                common::name_of(p),
                std::fs::read_to_string(p).expect("readable"),
            )
        })
        .collect();

    // A hang is reported with the mutant that caused it, then the process
    // ends: a test cannot otherwise stop a stuck call.
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let done = Arc::new(AtomicU64::new(0));
    {
        let (current, done) = (current.clone(), done.clone());
        std::thread::spawn(move || {
            let mut last = (u64::MAX, 0);
            let mut still_s = 0;
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let now = (current.load(Ordering::SeqCst), done.load(Ordering::SeqCst));
                still_s = if now == last { still_s + 1 } else { 0 };
                last = now;
                if still_s >= 120 {
                    eprintln!(
                        "mutant {} hangs (no progress for 120 s); replay: IDEMSIM_FUZZ_ONLY={} cargo test --test fuzz",
                        now.0, now.0
                    );
                    std::process::abort();
                }
            }
        });
    }

    let mut failures = Vec::new();
    let (mut rejected, mut other) = (0, 0);
    let seeds: Vec<u64> = match only {
        Some(s) => vec![s],
        None => (0..count).map(|i| base.wrapping_add(i)).collect(),
    };
    for seed in seeds {
        current.store(seed, Ordering::SeqCst);
        let mut rng = Rng(seed);
        let (name, text) = rng.pick(&files);
        let m = mutate(text, &mut rng);
        if let Err(why) = judge(&m) {
            failures.push(format!(
                "mutant {seed} of {name} ({}; --set {:?}): {why}\n  replay: IDEMSIM_FUZZ_ONLY={seed} cargo test --test fuzz",
                m.what, m.sets
            ));
        } else if m.must_reject {
            rejected += 1;
        } else {
            other += 1;
        }
        done.fetch_add(1, Ordering::SeqCst);
    }
    if let Some(seed) = only {
        let mut rng = Rng(seed);
        let (_, text) = rng.pick(&files);
        let m = mutate(text, &mut rng);
        eprintln!("the mutant:\n{}\n--set {:?}", m.text, m.sets);
    }
    assert!(
        failures.is_empty(),
        "{} of the mutants failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{rejected} nonsense mutants rejected, {other} damaged ones handled");
    // The nonsense classes were really exercised, not skipped.
    if only.is_none() {
        assert!(
            rejected > count / 5,
            "only {rejected} nonsense mutants were generated"
        );
    }
}
