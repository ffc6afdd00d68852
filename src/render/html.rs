//! Self-contained HTML reports: one file with its data, script and style
//! inline, no network and no CDN, so it can be attached to an issue and
//! opened anywhere.
//!
//! - [`run`]: one run as a sequence (Lamport) diagram with stepping, every
//!   actor's state and storage, the effect ledger, the point of no return and
//!   the violation (`idemsim report`, `check --html`).
//! - [`sweep`]: design variants, every metric against the swept values, each
//!   variant linked to the report of its lowest failing seed (`sweep --html`).
//!
//! The pages draw themselves from a JSON document embedded in the page: the
//! drawing code is idemsim's own few hundred lines of script, so a run of
//! 10,000 events stays around a megabyte and nothing has to be fetched.

pub mod ledger;
mod rows;
pub mod run;
pub mod state;
mod state_rows;
mod state_tree;
pub mod sweep;
mod ticks;

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that is safe inside `<script type="application/json">`: no `<` can
/// close the element or open a comment.
pub(crate) fn script_json(v: &serde_json::Value) -> String {
    v.to_string().replace('<', "\\u003c")
}

/// Style shared by both pages.
const BASE_CSS: &str = include_str!("html/base.css");

/// A whole page: `body` is trusted HTML, `data` is embedded as JSON and
/// read by `script`.
pub fn page(title: &str, css: &str, body: &str, data: &serde_json::Value, script: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"idemsim {version}\">\n\
         <title>{title}</title>\n<style>\n{BASE_CSS}{css}</style>\n</head>\n<body>\n{body}\n\
         <script type=\"application/json\" id=\"data\">{data}</script>\n<script>\n{script}</script>\n\
         </body>\n</html>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = esc(title),
        data = script_json(data),
    )
}

/// An interned string table: repeated texts (message lines, snapshot lines)
/// are stored once and referred to by index.
#[derive(Default)]
pub struct Strings {
    /// The texts, by index.
    pub list: Vec<String>,
    index: std::collections::BTreeMap<String, usize>,
}

impl Strings {
    /// The index of a message's or timer's text.
    pub fn id_of(&mut self, d: &impl std::fmt::Display) -> usize {
        self.id(&d.to_string())
    }

    /// The index of `s`, adding it if new.
    pub fn id(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len();
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }

    /// The table as `(templates, strings)`. Texts that differ only in their
    /// numbers ("pay 1200 EUR for claim 4711 [attempt 3]", a counter line of
    /// a snapshot) share a template, the text between the numbers, and are
    /// stored as `[template, number, ...]`; a long run has thousands of
    /// them, so this halves the table. Other texts stay strings. A number
    /// with a leading zero stays a string, so that "01" comes back as "01".
    pub fn to_json(&self) -> (serde_json::Value, serde_json::Value) {
        use serde_json::{json, Value};
        let split = |s: &str| -> (Vec<String>, Vec<String>) {
            let (mut texts, mut numbers) = (vec![String::new()], Vec::new());
            let mut in_number = false;
            for c in s.chars() {
                if c.is_ascii_digit() {
                    if !in_number {
                        numbers.push(String::new());
                        in_number = true;
                    }
                    numbers.last_mut().expect("just pushed").push(c);
                } else {
                    if in_number {
                        texts.push(String::new());
                        in_number = false;
                    }
                    texts.last_mut().expect("never empty").push(c);
                }
            }
            if in_number {
                texts.push(String::new());
            }
            (texts, numbers)
        };
        let mut uses: std::collections::BTreeMap<Vec<String>, usize> = Default::default();
        let parts: Vec<(Vec<String>, Vec<String>)> = self.list.iter().map(|s| split(s)).collect();
        for (texts, numbers) in &parts {
            if !numbers.is_empty() {
                *uses.entry(texts.clone()).or_default() += 1;
            }
        }
        let mut templates: Vec<Value> = Vec::new();
        let mut template_id: std::collections::BTreeMap<&Vec<String>, usize> = Default::default();
        let mut strings = Vec::with_capacity(self.list.len());
        for (s, (texts, numbers)) in self.list.iter().zip(&parts) {
            if numbers.is_empty() || uses[texts] < 2 {
                strings.push(json!(s));
                continue;
            }
            let t = *template_id.entry(texts).or_insert_with(|| {
                templates.push(json!(texts));
                templates.len() - 1
            });
            let mut v = vec![json!(t)];
            for n in numbers {
                match n.parse::<u64>() {
                    Ok(x) if n.len() < 16 && (n == "0" || !n.starts_with('0')) => v.push(json!(x)),
                    _ => v.push(json!(n)),
                }
            }
            strings.push(Value::Array(v));
        }
        (Value::Array(templates), Value::Array(strings))
    }
}

/// What the pages' scripts do with [`Strings::to_json`], for tests.
#[cfg(test)]
fn expand(templates: &serde_json::Value, strings: &serde_json::Value) -> Vec<String> {
    strings
        .as_array()
        .unwrap()
        .iter()
        .map(|e| match e {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(v) => {
                let texts = templates[v[0].as_u64().unwrap() as usize]
                    .as_array()
                    .unwrap();
                let mut out = String::new();
                for (i, t) in texts.iter().enumerate() {
                    out.push_str(t.as_str().unwrap());
                    if let Some(n) = v.get(i + 1) {
                        match n {
                            serde_json::Value::String(s) => out.push_str(s),
                            n => out.push_str(&n.to_string()),
                        }
                    }
                }
                out
            }
            _ => unreachable!(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_json_cannot_close_its_script_element() {
        let v = serde_json::json!({"msg": "</script><!-- x"});
        let s = script_json(&v);
        assert!(!s.contains('<'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn strings_are_interned_once() {
        let mut s = Strings::default();
        assert_eq!(s.id("a"), 0);
        assert_eq!(s.id("b"), 1);
        assert_eq!(s.id("a"), 0);
        assert_eq!(s.list, ["a", "b"]);
    }

    #[test]
    fn texts_that_differ_in_numbers_share_a_template_and_come_back_whole() {
        let mut s = Strings::default();
        let texts = [
            "pay 1200 EUR for claim 4711 [zahl-4711-01, attempt 3]",
            "pay 1200 EUR for claim 4711 [zahl-4711-01, attempt 4]",
            "    attempts: 0,",
            "    attempts: 18446744073709551615,",
            "12",
            "7",
            "no digits",
            "once 5 only",
        ];
        for t in texts {
            s.id(t);
        }
        let (templates, strings) = s.to_json();
        assert_eq!(expand(&templates, &strings), texts);
        assert_eq!(templates.as_array().unwrap().len(), 3);
        assert!(strings[6].is_string() && strings[7].is_string());
    }
}
