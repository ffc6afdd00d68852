//! `idemsim learn`: the exercises of the learning path, and `learn check`,
//! which grades an answer (`idemsim::learn`). Thin: flags, printing, the
//! exit code.

use idemsim::catalog::UsageError;
use idemsim::learn::{self, render, Answer};

#[derive(clap::Args)]
/// The arguments of `idemsim learn`.
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// JSON Lines on stdout: one `exercise` line each.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Grade an answer to exercise N: 0 right, 1 wrong (with the reason, a seed and a trace, and the section to read), 2 bad input.
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The exercise's number, from `idemsim learn`.
    exercise: u32,
    /// A change to the failing design, as `check --set` takes it (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// For an exercise answered with your own program: the command that starts it, split into words as a shell does (quote a path with a space), paths from here.
    #[arg(long, value_name = "CMD")]
    program: Option<String>,
    /// Worker threads [default: all cores]. The grade does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// JSON Lines on stdout: one `learn_check` line.
    #[arg(long)]
    json: bool,
}

/// Runs `idemsim learn`: the list (exit 0), or a grade (0 right, 1 wrong,
/// 130 when Ctrl-C cut the runs short).
pub fn run(a: Args) -> Result<u8, UsageError> {
    let Some(Action::Check(c)) = a.action else {
        if a.json {
            idemsim::out!("{}", render::list_json());
        } else {
            idemsim::out!("{}", render::list_text());
        }
        return Ok(idemsim::exit::HOLDS);
    };
    let jobs = super::common::jobs(c.jobs)?;
    let ex = learn::find(c.exercise).ok_or_else(|| {
        UsageError(format!(
            "error: there is no exercise {}\nhelp: `idemsim learn` lists them, numbered 1 to {}\n",
            c.exercise,
            learn::EXERCISES.len()
        ))
    })?;
    let answer = Answer {
        sets: c.set,
        program: c.program,
    };
    idemsim::progress::install_ctrl_c();
    let grade = learn::check(ex, &answer, jobs, &idemsim::progress::STOP)?;
    // A grade over part of the seeds would call a design right too early.
    if idemsim::progress::STOP.load(std::sync::atomic::Ordering::SeqCst) {
        idemsim::eoutln!("interrupted: exercise {} was not graded", ex.id);
        return Ok(idemsim::progress::INTERRUPTED);
    }
    if c.json || a.json {
        idemsim::out!("{}", render::grade_json(&grade));
    } else {
        idemsim::out!("{}", render::grade_text(&grade));
    }
    Ok(if grade.passed() {
        idemsim::exit::HOLDS
    } else {
        idemsim::exit::VIOLATION
    })
}
