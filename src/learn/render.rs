//! The grader's output: the list of exercises and a grade, as text or as
//! JSON Lines with the `{type, data}` envelope (docs/json-output.md).

use super::{Exercise, Grade, Kind, Reason, EXERCISES};
use serde_json::json;

/// How an exercise is answered, as the list says it.
fn how(ex: &Exercise) -> String {
    match ex.kind {
        Kind::Settings => format!("idemsim learn check {} --set KEY=VALUE", ex.id),
        Kind::Program => format!("idemsim learn check {} --program CMD", ex.id),
        Kind::Rust(cmd) => cmd.to_string(),
    }
}

/// One line per exercise: its number, chapter, scenario and question.
pub fn list_text() -> String {
    let mut out = String::new();
    for ex in EXERCISES {
        out.push_str(&format!(
            "{:>2}  {:<34} {}: {}\n",
            ex.id,
            ex.chapter(),
            ex.scenario,
            ex.question
        ));
    }
    out.push_str("\nanswer with `idemsim learn check N --set KEY=VALUE`, except:\n");
    for ex in EXERCISES.iter().filter(|e| e.kind != Kind::Settings) {
        out.push_str(&format!("{:>2}  {}\n", ex.id, how(ex)));
    }
    out
}

/// One `exercise` line per exercise.
pub fn list_json() -> String {
    let mut out = String::new();
    for ex in EXERCISES {
        let data = json!({
            "id": ex.id,
            "chapter": ex.chapter(),
            "scenario": ex.scenario,
            "question": ex.question,
            "answer_with": how(ex),
            "allowed": ex.allowed,
            "seeds": ex.seeds,
            "faults": ex.faults.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        });
        out.push_str(&crate::render::json_line("exercise", data));
        out.push('\n');
    }
    out
}

/// Why, in a sentence.
pub fn reason_text(r: &Reason) -> String {
    match r {
        Reason::NotTheDesign { key } => format!("`{key}` changes the faults, the run's limits, the expectation or the workload: the exercise asks for a design that holds under the same faults"),
        Reason::Outside { set } => format!("`{set}` changes something this exercise does not ask about"),
        Reason::Refused { set, why } => format!("`{set}` holds on these seeds, but {why}"),
        Reason::FaultsStopped { fault } => format!("no fault of kind `{}` fired: the answer took the problem away instead of solving it", fault.as_str()),
        Reason::GaveUpSilently { operations } => format!("{operations} operations were given up silently: the client stops, and nobody is told"),
        Reason::Violation { invariant, seed, message } => format!("still a violation of {invariant} on seed {seed}: {message}"),
        Reason::Inconclusive { seed } => format!("seed {seed} hit a limit, so nothing is proven"),
        Reason::DesignWarning { id, text } => format!("the runs hold, but the design carries the warning {id}: {text}"),
    }
}

/// A grade for a person.
pub fn grade_text(g: &Grade) -> String {
    let ex = super::find(g.exercise).expect("a graded exercise");
    let Some(reason) = &g.reason else {
        return format!(
            "exercise {}: right: {} holds on seeds 0..{} with its faults firing ({} lost, {} duplicated, {} partitioned, {} crashes)\n",
            g.exercise, ex.scenario, g.seeds, g.faults.lost, g.faults.duplicated, g.faults.partitioned, g.faults.crashed
        );
    };
    let mut out = format!("exercise {}: wrong: {}\n", g.exercise, reason_text(reason));
    if let Reason::Outside { .. } = reason {
        out.push_str(&format!(
            "this exercise lets you change: {}\n",
            ex.allowed.join(", ")
        ));
    }
    if let Some(t) = &g.trace {
        out.push_str(t);
        if !t.ends_with('\n') {
            out.push('\n');
        }
    }
    if let Some(r) = &g.replay {
        out.push_str(&format!("replay: {r}\n"));
    }
    if let Some(h) = &g.hint {
        out.push_str(&format!("hint: read {h}\n"));
    }
    out
}

/// A grade as one `learn_check` line.
pub fn grade_json(g: &Grade) -> String {
    let data = json!({
        "exercise": g.exercise,
        "sets": g.sets,
        "passed": g.passed(),
        "reason": g.reason.as_ref().map(Reason::as_str),
        "message": g.reason.as_ref().map(reason_text),
        "hint": g.hint.map(|h| json!({"file": format!("docs/learn/{}", h.file), "heading": h.heading})),
        "seeds": g.seeds,
        "faults": {
            "lost": g.faults.lost,
            "duplicated": g.faults.duplicated,
            "partitioned": g.faults.partitioned,
            "crashed": g.faults.crashed,
        },
        "seed": match &g.reason { Some(Reason::Violation { seed, .. } | Reason::Inconclusive { seed }) => Some(*seed), _ => None },
        "trace": g.trace,
        "replay": g.replay,
    });
    format!("{}\n", crate::render::json_line("learn_check", data))
}
