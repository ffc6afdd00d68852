//! One program's process as an actor's handlers see it: started when first
//! needed, asked one handler at a time (a line in, lines out up to `done`),
//! restarted after it broke the protocol, with the last lines exchanged kept
//! for the report of what went wrong.

use super::process::{self, Process, ReadError};
use super::protocol::{self, Out};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The program an external actor runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The command and its arguments, as the scenario wrote them.
    pub argv: Vec<String>,
    /// Where it runs: the scenario file's folder.
    pub dir: PathBuf,
    /// It keeps its durable state in files of a folder idemsim gives it
    /// (`IDEMSIM_STATE_DIR`), emptied for every run; a crash then kills the
    /// process, and the restarted one finds the files as they were.
    pub state_folder: bool,
}

impl Program {
    /// The command line as people read it.
    pub fn shown(&self) -> String {
        self.argv
            .iter()
            .map(|a| {
                if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                {
                    format!("'{a}'")
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Most lines one handler may answer with before its `done`.
pub const MAX_LINES_PER_HANDLER: usize = 10_000;

/// Lines kept for an error report.
const TAIL: usize = 12;

/// Characters of one line shown in an error report.
const SHOWN_CHARS: usize = 300;

/// One handler call as the program saw it: for the determinism check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The virtual time of the handler.
    pub now_us: u64,
    /// The line idemsim wrote.
    pub input: String,
    /// The lines the program answered, without `log` lines and the `done`:
    /// what the determinism check compares.
    pub output: Vec<String>,
    /// Every line it answered, as written, and idemsim's answers to its
    /// draws between them, each marked `← ` or `→ ` (for `replay --transcript`).
    pub written: Vec<String>,
}

impl Exchange {
    /// The same input got the same answer (logs aside).
    pub fn same(&self, o: &Exchange) -> bool {
        self.input == o.input && self.output == o.output
    }
}

/// What went wrong, in the user's words, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub what: String,
    pub fix: String,
}

pub fn failure(what: impl Into<String>, fix: impl Into<String>) -> Failure {
    Failure {
        what: what.into(),
        fix: fix.into(),
    }
}

fn stray_failure() -> Failure {
    failure(
        "the program wrote a line when it was not asked (after its {\"type\":\"done\"}, or before its first line)",
        "write lines only in answer to a line from idemsim, and exactly one {\"type\":\"done\"} per answer; debug output goes to stderr",
    )
}

/// One handler's answer, read up to its `done`.
#[derive(Default)]
struct Answer {
    /// Every line but the `done`, parsed.
    outs: Vec<Out>,
    /// The lines the determinism check compares (no `log`, no `done`).
    shown: Vec<String>,
    /// Every line as written, kept only for a transcript.
    written: Vec<String>,
}

/// The process of one actor in one simulator, and what it said.
#[derive(Default)]
pub struct Session {
    process: Option<Process>,
    /// The last lines exchanged, marked `→` (to the program) or `←` (from it).
    tail: VecDeque<String>,
    /// Every handler call of the current run, when asked for.
    pub transcript: Option<Vec<Exchange>>,
    /// Processes started so far (the determinism check's second run starts
    /// one per `start`).
    pub spawns: u64,
    /// The protocol version the program said it speaks since its last
    /// `start` (`hello`); none said: the latest.
    pub declared: Option<u64>,
    /// The program's state folder, once made (see [`Program::state_folder`]).
    folder: Option<PathBuf>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // The process first: it may hold files of the folder open.
        self.process = None;
        if let Some(f) = &self.folder {
            if std::env::var_os(KEEP_STATE).is_none() {
                let _ = std::fs::remove_dir_all(f);
                // The process's folder of folders, once its last one is gone.
                if let Some(parent) = f.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
            }
        }
    }
}

/// Set (to anything), the state folders stay after idemsim ends, for a
/// look at the database a program left.
pub const KEEP_STATE: &str = "IDEMSIM_KEEP_STATE";

/// The environment variable naming a program's state folder.
pub const STATE_DIR_VAR: &str = "IDEMSIM_STATE_DIR";

/// A new folder for one session's state, under the system's temporary
/// folder: one per idemsim process and session, so parallel workers and
/// several actors never share one.
fn new_state_folder() -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let f = std::env::temp_dir()
        .join(format!("idemsim-state-{}", std::process::id()))
        .join(n.to_string());
    std::fs::create_dir_all(&f)
        .map_err(|e| format!("cannot make the state folder {}: {e}", f.display()))?;
    Ok(f)
}

/// Asks the run for a recorded decision in `0..bound`.
pub type Draw<'a> = &'a mut dyn FnMut(u64) -> u64;

fn clip(line: &str) -> String {
    if line.chars().count() <= SHOWN_CHARS {
        line.to_string()
    } else {
        let cut: String = line.chars().take(SHOWN_CHARS).collect();
        format!("{cut}… ({} bytes)", line.len())
    }
}

impl Session {
    /// A new run: forget its lines; keep the process, which the `start`
    /// line resets (a fresh process per run would cost more than the run).
    pub fn new_run(&mut self, keep_transcript: bool) {
        if !self.tail.is_empty() {
            // Kept: a stray line found at the next run's start belongs to the last one.
            self.note('·', "(the run ends; a new run starts)");
        }
        self.transcript = keep_transcript.then(Vec::new);
        // A run starts from no files, as it starts from no stored keys.
        if let Some(f) = &self.folder {
            let _ = std::fs::remove_dir_all(f);
            let _ = std::fs::create_dir_all(f);
        }
    }

    /// The state folder, if the program has one yet.
    pub fn state_folder(&self) -> Option<&std::path::Path> {
        self.folder.as_deref()
    }

    /// Ends the process; the next call starts a new one.
    pub fn stop(&mut self) {
        self.process = None;
    }

    fn note(&mut self, mark: char, line: &str) {
        if self.tail.len() == TAIL {
            self.tail.pop_front();
        }
        self.tail.push_back(format!("{mark} {}", clip(line)));
    }

    /// Writes `line` and reads the program's answer up to its `done`.
    pub fn call(
        &mut self,
        program: &Program,
        timeout: Duration,
        now_us: u64,
        line: &str,
        draw: Draw<'_>,
    ) -> Result<Vec<Out>, Failure> {
        self.start_if_needed(program)?;
        self.check_no_stray()?;
        // One bound for the whole answer, writing the line included.
        let deadline = process::now() + timeout;
        self.write_input(line, deadline, timeout)?;
        let answer = self.read_answer(deadline, timeout, draw)?;
        if let Some(t) = &mut self.transcript {
            t.push(Exchange {
                now_us,
                input: line.to_string(),
                output: answer.shown,
                written: answer.written,
            });
        }
        Ok(answer.outs)
    }

    fn process(&mut self) -> &mut Process {
        self.process.as_mut().expect("started before it is asked")
    }

    fn start_if_needed(&mut self, program: &Program) -> Result<(), Failure> {
        if self.process.is_none() {
            let fix =
                "check the program and its folder; the command runs in the scenario file's folder";
            if program.state_folder && self.folder.is_none() {
                self.folder = Some(new_state_folder().map_err(|e| failure(e, fix))?);
            }
            let env = self.folder.as_deref().map(|f| (STATE_DIR_VAR, f));
            let p =
                Process::spawn(&program.argv, &program.dir, env).map_err(|e| failure(e, fix))?;
            self.spawns += 1;
            self.process = Some(p);
        }
        Ok(())
    }

    /// A line the program wrote unasked breaks the one-answer-per-line
    /// rhythm: every later answer would be shifted by it.
    fn check_no_stray(&mut self) -> Result<(), Failure> {
        if let Some(stray) = self.process().stray_line() {
            self.note('←', &stray);
            return Err(stray_failure());
        }
        Ok(())
    }

    fn write_input(
        &mut self,
        line: &str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), Failure> {
        let written = self.process().write_line(line, deadline);
        self.note('→', line);
        let p = self.process();
        if written.is_err() && p.timed_out() {
            return Err(failure(
                format!(
                    "the program did not read the line idemsim wrote ({} bytes) within {} ms of wall time",
                    line.len() + 1,
                    timeout.as_millis()
                ),
                "read stdin line by line and answer each line as it comes; if the program is only slow, raise handler_timeout_ms in the scenario",
            ));
        }
        if let Err(e) = written {
            // A program that already exited: say how, if it did.
            let how = match p.read_line(process::now()) {
                Err(ReadError::Closed(Some(status), _)) => format!(" (it exited: {status})"),
                _ => String::new(),
            };
            return Err(failure(
                format!("the program does not take input: {e}{how}"),
                "keep reading lines from stdin until it closes; see its stderr in this report",
            ));
        }
        Ok(())
    }

    /// Reads and parses lines up to the `done`, answering draws on the way.
    fn read_answer(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        draw: Draw<'_>,
    ) -> Result<Answer, Failure> {
        let mut answer = Answer::default();
        loop {
            let l = self.read_one(deadline, timeout)?;
            self.note('←', &l);
            let out = protocol::parse(&l).map_err(|e| failure(e.what, e.fix))?;
            if self.transcript.is_some() {
                answer.written.push(format!("← {l}"));
            }
            match &out {
                Out::Draw { name, bound } => {
                    let line = self.answer_draw(name, *bound, draw, deadline, timeout)?;
                    answer.shown.push(l);
                    if self.transcript.is_some() {
                        answer.written.push(format!("→ {line}"));
                    }
                    answer.shown.push(line);
                    continue;
                }
                Out::Hello { protocol } => self.hello(*protocol)?,
                _ => {}
            }
            match out {
                Out::Done => {
                    // A line already waiting after the done is caught here;
                    // one that comes later is caught before the next call.
                    self.check_no_stray()?;
                    return Ok(answer);
                }
                Out::Log { .. } => {}
                _ => answer.shown.push(l),
            }
            answer.outs.push(out);
            if answer.outs.len() > MAX_LINES_PER_HANDLER {
                return Err(failure(
                    format!("more than {MAX_LINES_PER_HANDLER} lines before a {{\"type\":\"done\"}}"),
                    "end every handler with {\"type\":\"done\"}; a handler that must do more is several handlers (set a timer)",
                ));
            }
        }
    }

    /// A `hello`: the version must be one this idemsim speaks.
    fn hello(&mut self, version: u64) -> Result<(), Failure> {
        if !(1..=protocol::PROTOCOL).contains(&version) {
            return Err(failure(
                format!(
                    "the program speaks protocol {version}, and this idemsim speaks 1 to {}",
                    protocol::PROTOCOL
                ),
                format!(
                    "write {{\"type\":\"hello\",\"protocol\":{}}} (docs/protocol.md), or use the idemsim the program was written for",
                    protocol::PROTOCOL
                ),
            ));
        }
        self.declared = Some(version);
        Ok(())
    }

    /// A `draw`: the run decides, and the program is told at once.
    fn answer_draw(
        &mut self,
        name: &str,
        bound: u64,
        draw: Draw<'_>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<String, Failure> {
        if let Some(v) = self.declared.filter(|v| *v < 2) {
            return Err(failure(
                format!("a `draw` from a program that said it speaks protocol {v}, which has no draws"),
                format!(
                    "answer start with {{\"type\":\"hello\",\"protocol\":{}}} to draw recorded decisions",
                    protocol::PROTOCOL
                ),
            ));
        }
        let line = protocol::drawn(name, draw(bound));
        self.write_input(&line, deadline, timeout)?;
        Ok(line)
    }

    /// One complete line of the answer, or why there is none.
    fn read_one(&mut self, deadline: Instant, timeout: Duration) -> Result<String, Failure> {
        match self.process().read_line(deadline) {
            Ok(l) => Ok(l),
            Err(ReadError::Timeout(partial)) if !partial.trim().is_empty() => {
                // The commonest cause in a new program: the last line
                // written with `write`/`print(..., end="")`, no newline.
                self.note('←', &partial);
                Err(failure(
                    format!(
                        "no complete line within {} ms of wall time: the program wrote a line without the newline that ends it",
                        timeout.as_millis()
                    ),
                    "end every line with a newline and flush stdout after it (Python: print(line, flush=True))",
                ))
            }
            Err(ReadError::Timeout(_)) => Err(failure(
                format!(
                    "no {{\"type\":\"done\"}} within {} ms of wall time (the handler's time-out is real time, the program's own I/O)",
                    timeout.as_millis()
                ),
                "end every handler with {\"type\":\"done\"} and flush stdout after each line (Python: print(line, flush=True)); if the program is only slow, raise handler_timeout_ms in the scenario",
            )),
            Err(ReadError::Closed(status, partial)) => Err(self.closed_failure(status, &partial)),
            Err(ReadError::Bad(e)) => Err(failure(
                format!("the program wrote {e}"),
                "write one JSON object per line, UTF-8, at most 1 MiB",
            )),
        }
    }

    fn closed_failure(&mut self, status: Option<String>, partial: &str) -> Failure {
        let how = match status {
            Some(s) => format!("exited ({s})"),
            None => "closed its stdout".to_string(),
        };
        if !partial.trim().is_empty() {
            // Shown, or the report hides the line the program
            // thinks it wrote: most often its done, unended.
            self.note('←', partial);
            return failure(
                format!("the program {how} after a line it wrote without the newline that ends it"),
                "end every line with a newline and flush stdout after it (Python: print(line, flush=True)); see its stderr in this report",
            );
        }
        failure(
            format!("the program {how} before its {{\"type\":\"done\"}}"),
            "see its stderr in this report; a program must keep reading stdin until it closes",
        )
    }

    /// The report of a failure: the program, what went wrong, the last lines
    /// exchanged and the end of its stderr. Stops the process: the next run
    /// starts a new one.
    pub fn report(&mut self, actor: &str, program: &Program, f: &Failure) -> String {
        let stderr = self
            .process
            .as_ref()
            .map(Process::stderr_tail)
            .unwrap_or_default();
        self.stop();
        let mut s = format!(
            "the program of {actor} (`{}` in {}): {}\n",
            program.shown(),
            program.dir.display(),
            f.what
        );
        if !self.tail.is_empty() {
            s.push_str("  last lines exchanged (→ to the program, ← from it):\n");
            for l in &self.tail {
                s.push_str(&format!("    {l}\n"));
            }
        }
        if !stderr.is_empty() {
            s.push_str("  its stderr ended with:\n");
            for l in &stderr {
                s.push_str(&format!("    {}\n", clip(l)));
            }
        }
        s.push_str(&format!("help: {}", f.fix));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program in `sh` that reads one line and answers with `script`.
    fn sh(script: &str) -> Program {
        Program {
            argv: vec!["sh".into(), "-c".into(), format!("read line; {script}")],
            dir: std::env::temp_dir(),
            state_folder: false,
        }
    }

    const TIMEOUT: Duration = Duration::from_secs(10);

    #[test]
    fn an_answer_is_read_up_to_its_done() {
        let program = sh(concat!(
            r#"echo '{"type":"log","text":"hi"}'; "#,
            r#"echo '{"type":"effect","op":1,"payload":2}'; "#,
            r#"echo '{"type":"done"}'; read more"#,
        ));
        let mut s = Session::default();
        s.new_run(true);
        let outs = s.call(&program, TIMEOUT, 7, "{}", &mut |_| 0).unwrap();
        assert_eq!(
            outs,
            vec![
                Out::Log { text: "hi".into() },
                Out::Effect { op: 1, payload: 2 }
            ]
        );
        let t = s.transcript.as_ref().unwrap();
        assert_eq!(t[0].now_us, 7);
        // The determinism check compares neither logs nor the done.
        assert_eq!(t[0].output, vec![r#"{"type":"effect","op":1,"payload":2}"#]);
        assert_eq!(t[0].written.len(), 3);
        assert_eq!(s.spawns, 1);
    }

    #[test]
    fn a_draw_is_answered_within_the_answer_and_kept_in_the_transcript() {
        let program = sh(concat!(
            r#"echo '{"type":"draw","name":"coin","bound":5}'; read ans; "#,
            r#"v=$(echo "$ans" | sed 's/.*"value":\([0-9]*\).*/\1/'); "#,
            r#"echo "{\"type\":\"effect\",\"op\":1,\"payload\":$v}"; "#,
            r#"echo '{"type":"done"}'; read more"#,
        ));
        let mut s = Session::default();
        s.new_run(true);
        let mut asked = Vec::new();
        let outs = s
            .call(&program, TIMEOUT, 0, "{}", &mut |bound| {
                asked.push(bound);
                3
            })
            .unwrap();
        assert_eq!(asked, vec![5]);
        assert_eq!(
            outs.last(),
            Some(&Out::Effect { op: 1, payload: 3 }),
            "the program read the value idemsim drew"
        );
        let t = &s.transcript.as_ref().unwrap()[0];
        assert_eq!(
            t.written[1],
            r#"→ {"type":"drawn","name":"coin","value":3}"#
        );
    }

    #[test]
    fn a_hello_names_a_version_this_idemsim_speaks() {
        let mut s = Session::default();
        assert!(s.hello(1).is_ok() && s.hello(2).is_ok() && s.hello(protocol::PROTOCOL).is_ok());
        let f = s.hello(4).unwrap_err();
        assert_eq!(
            f.what,
            "the program speaks protocol 4, and this idemsim speaks 1 to 3"
        );
        // A program of protocol 1 cannot draw.
        s.hello(1).unwrap();
        let program = sh(r#"echo '{"type":"draw","name":"coin","bound":2}'; read more"#);
        let f = s.call(&program, TIMEOUT, 0, "{}", &mut |_| 0).unwrap_err();
        assert!(f.what.contains("protocol 1, which has no draws"), "{f:?}");
    }

    #[test]
    fn a_program_that_ends_before_its_done_is_reported() {
        let mut s = Session::default();
        let f = s
            .call(&sh("exit 3"), TIMEOUT, 0, "{}", &mut |_| 0)
            .unwrap_err();
        assert!(f.what.starts_with("the program exited ("), "{f:?}");
        assert!(f.what.ends_with(r#") before its {"type":"done"}"#), "{f:?}");
        // A done without its newline: the report shows the line as written.
        let mut s = Session::default();
        let program = sh(r#"printf '{"type":"done"}'; exit 0"#);
        let f = s.call(&program, TIMEOUT, 0, "{}", &mut |_| 0).unwrap_err();
        assert!(
            f.what
                .ends_with("after a line it wrote without the newline that ends it"),
            "{f:?}"
        );
        let report = s.report("c", &program, &f);
        assert!(report.contains(r#"← {"type":"done"}"#), "{report}");
    }
}
