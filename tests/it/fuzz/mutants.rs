//! The mutants the fuzz test feeds the loader: a seeded generator, random
//! damage to a scenario's values and text, and the nonsense classes that must
//! be rejected. A module of `fuzz` alone: no other test mutates scenarios.

use toml_edit::{DocumentMut, Item, Value};

/// splitmix64: the mutants are a pure function of their seed.
pub struct Rng(pub u64);

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
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
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
pub struct Mutant {
    pub what: String,
    pub text: String,
    pub sets: Vec<String>,
    pub must_reject: bool,
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
pub fn mutate(text: &str, rng: &mut Rng) -> Mutant {
    let mut doc: DocumentMut = text.parse().expect("shipped scenarios parse");
    let all = leaves(&doc);
    let kind = rng.below(22);
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
        16 => {
            // A message kind of another model: a fault that would never fire.
            let model = doc.get("model").and_then(Item::as_str).unwrap_or("payment");
            let foreign = match model {
                "payment" => "publish",
                "chain" => "get",
                _ => "transfer",
            };
            let t = format!(
                "{text}\n[[network.links]]\nkinds = [\"{foreign}\"]\nloss_per_mille = 10\n"
            );
            return Mutant {
                what: format!("kinds = [\"{foreign}\"] in a {model} scenario"),
                text: t,
                sets,
                must_reject: true,
            };
        }
        17 => {
            // A summary of two lines, or with a terminal escape.
            let v = *rng.pick(&[
                "\"first\\nsecond\"",
                "\"red \\u001b[31m\"",
                "\"tab\\there\"",
            ]);
            set(
                &mut doc,
                &[Step::Key("summary".into())],
                v.parse().expect("a TOML string"),
            );
            (format!("summary = {v}"), true)
        }
        18 => {
            // A key only another mode reads, out of its range all the same.
            let payment = doc.get("model").and_then(Item::as_str).unwrap_or("payment") == "payment";
            if payment {
                sets.push("client.key_bucket_ms=2305843009213693952".into());
                ("client.key_bucket_ms out of range".into(), true)
            } else {
                return nonsense_run(doc, rng);
            }
        }
        19 => {
            // Thousands of blank lines and an override: once a table of
            // lines x lines (gigabytes) to map the error's place.
            let settable: Vec<&String> = all.iter().filter_map(|l| l.dotted.as_ref()).collect();
            let Some(key) = (!settable.is_empty()).then(|| *rng.pick(&settable)) else {
                return mutate_text(text, rng);
            };
            let pad = "\n".repeat(20_000 + rng.below(20_000));
            let v = *rng.pick(OTHER_TYPES);
            return Mutant {
                what: format!("{} blank lines, then --set {key}={v}", pad.len()),
                text: format!("{pad}{text}"),
                sets: vec![format!("{key}={v}")],
                must_reject: false,
            };
        }
        20 | 21 => {
            // A fault where no message ever travels: a links entry for an
            // idle link or a kind that never crosses it, or a partition
            // between two actors that never talk.
            let model = doc.get("model").and_then(Item::as_str).unwrap_or("payment");
            let entry = match (model, kind) {
                ("messaging", 21) => "[[network.partitions]]\nbetween = [\"producer\", \"consumer-db\"]\nstart_ms = 0\nend_ms = 1000\n",
                ("chain", 21) => "[[network.partitions]]\nbetween = [\"bank\", \"broker\"]\nstart_ms = 0\nend_ms = 1000\n",
                ("messaging", _) => "[[network.links]]\nfrom = \"producer\"\nto = \"consumer-1\"\nloss_per_mille = 10\n",
                ("chain", _) => "[[network.links]]\nfrom = \"bank\"\nto = \"broker\"\nloss_per_mille = 10\n",
                ("http", _) => "[[network.links]]\nto = \"server\"\nkinds = [\"response\"]\nloss_per_mille = 10\n",
                ("contention", _) => "[[network.links]]\nto = \"resource\"\nkinds = [\"read-reply\"]\nloss_per_mille = 10\n",
                _ => "[[network.links]]\nfrom = \"client\"\nto = \"service\"\nkinds = [\"transfer\"]\nloss_per_mille = 10\n",
            };
            return Mutant {
                what: format!("a fault no message crosses in a {model} scenario: {entry}"),
                text: format!("{text}\n{entry}"),
                sets,
                must_reject: true,
            };
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
