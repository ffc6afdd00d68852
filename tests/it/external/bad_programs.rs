//! Programs that misbehave: protocol errors exit 2 with the seed, the lines
//! and a fix; a hung program is timed out; a program that does not behave the
//! same twice is flagged; a missing or non-executable program is refused at
//! load; Ctrl-C stops the sweep, not the program mid-answer.

use super::*;

#[test]
fn protocol_errors_exit_2_with_the_seed_the_lines_and_a_fix() {
    for (m, what) in [
        ("not-json", "not a JSON object"),
        ("unknown-type", "did you mean \"send\""),
        (
            "no-done",
            "no {\"type\":\"done\"} within 1000 ms of wall time",
        ),
        (
            "no-newline",
            "the program wrote a line without the newline that ends it",
        ),
        ("exit", "the program exited (exit status: 3)"),
        (
            "no-newline-exit",
            "the program exited (exit status: 0) after a line it wrote without the newline",
        ),
        (
            "stderr-then-exit",
            "Traceback: something broke in the handler",
        ),
        ("bad-send", "did you mean \"broker\""),
        (
            "ack-to-producer",
            "a `send` to \"producer\" is not a message it takes: an ack goes to the broker",
        ),
        ("key-twice", "a line with the key \"op\" twice"),
        (
            "log-number",
            "`text` of a `log` line must be a string, not 1",
        ),
        ("hoard", "more than 16777216 bytes in its storage"),
    ] {
        let set = mode(m);
        let timeout: &[&str] = match m {
            "no-done" => &["--set", SHORT_TIMEOUT],
            _ => &[],
        };
        let (_, err) = run(&[&["check", MISBEHAVE, "--set", &set], timeout].concat(), 2);
        assert!(err.contains(what), "{m}: {err}");
        // A second done is found when it is read: with its handler, or at
        // the next run's start if it came late.
        if m != "two-dones" {
            let at = ", seed 0: the program of consumer-1";
            assert!(err.contains(at), "{m}: {err}");
        }
        // The lines shown are the last ones: a hoard's are all its stores.
        if m != "hoard" {
            assert!(err.contains("→ {\"type\":\"start\""), "{m}: {err}");
        }
        assert!(err.contains("\nhelp: "), "{m}: {err}");
        assert!(err.contains("repro: idemsim replay"), "{m}: {err}");
        if m == "no-newline" || m == "no-newline-exit" {
            // The unended line is shown as what the program wrote.
            assert!(err.contains("← {\"type\": \"done\"}"), "{m}: {err}");
            assert!(err.contains("end every line with a newline"), "{m}: {err}");
        }
        if m == "two-dones" {
            continue; // in a new process, the seed may end before the stray line is read
        }
        // Replaying the seed gives the trace and the same exit code.
        let replay = [
            &["replay", MISBEHAVE, "--set", &set, "--seed", "0"],
            timeout,
        ]
        .concat();
        let (trace, err) = run(&replay, 2);
        assert!(
            trace.contains("an external program broke the protocol"),
            "{m}: {trace}"
        );
        assert!(err.contains(what), "{m}: {err}");
    }
}

#[test]
fn the_time_out_ends_a_program_hung_in_a_child_that_holds_its_stdout() {
    // The script's `sleep 60` keeps the pipe open after the script is
    // killed: the time-out must not wait for it.
    let set = r#"consumer.program=["sh","hangs-in-child.sh"]"#;
    let began = models::external::process::now();
    let (_, err) = run(
        &["check", MISBEHAVE, "--set", set, "--set", SHORT_TIMEOUT],
        2,
    );
    let took = began.elapsed();
    assert!(
        err.contains("no {\"type\":\"done\"} within 1000 ms of wall time"),
        "{err}"
    );
    assert!(
        took < std::time::Duration::from_secs(20),
        "took {took:?}: {err}"
    );
}

#[test]
fn the_time_out_holds_for_a_line_the_program_does_not_read() {
    // A line longer than the pipe holds (a restart's storage can be) waits
    // for the program to read it; one that never reads must not hold idemsim.
    let program = models::external::Program {
        argv: ["sh", "-c", "sleep 60"].map(String::from).to_vec(),
        dir: support::root().to_path_buf(),
        state_folder: false,
    };
    let mut session = models::external::Session::default();
    let line = format!(
        r#"{{"type":"timer","id":"{}","now_us":0}}"#,
        "x".repeat(4 << 20)
    );
    let began = models::external::process::now();
    let e = session
        .call(
            &program,
            std::time::Duration::from_millis(500),
            0,
            &line,
            &mut |_| 0,
        )
        .unwrap_err();
    let took = began.elapsed();
    assert!(
        e.what.contains("did not read the line idemsim wrote") && e.what.contains("within 500 ms"),
        "{e:?}"
    );
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_program_that_does_not_behave_the_same_twice_is_flagged() {
    for (m, seed) in [("random", "seed 0"), ("keeps-memory", "seed 1")] {
        let set = mode(m);
        let (_, err) = run(&["check", MISBEHAVE, "--set", &set], 2);
        assert!(
            err.contains(&format!(
                "{seed}: the program of consumer-1 does not behave the same way"
            )),
            "{m}: {err}"
        );
        assert!(err.contains("its answer #2"), "{m}: {err}");
        assert!(
            err.contains("first run (the process kept warm"),
            "{m}: {err}"
        );
    }
    // The check can be skipped; the program still runs. What it carries
    // over from seed to seed may still make a failing seed pass when it is
    // run again (its acks name receipts the broker never gave, which ack
    // nothing): the sweep's own replay says so, not the skipped check.
    let set = mode("keeps-memory");
    let out = support::idemsim(&[
        "check",
        MISBEHAVE,
        "--set",
        &set,
        "--determinism-seeds",
        "0",
    ]);
    let err = support::text(&out.stderr);
    assert!(!err.contains("does not behave the same way"), "{err}");
    assert!(
        out.status.code() != Some(2) || err.contains("failed in the sweep but not when run again"),
        "{err}"
    );
}

#[test]
fn a_missing_program_or_a_built_in_key_beside_it_is_refused_where_it_is_written() {
    let dir = scratch("external/load");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    let write = |consumer: &str| {
        std::fs::write(
            &file,
            format!(
                "summary = \"x\"\nmodel = \"messaging\"\n[expect]\nverdict = \"holds\"\n[consumer]\n{consumer}\n"
            ),
        )
        .unwrap();
    };
    let f = file.to_str().unwrap();
    write("program = [\"python3\", \"nope.py\"]");
    let (_, err) = run(&["check", f], 2);
    assert!(
        err.contains("s.toml:6:23: nope.py does not exist in"),
        "{err}"
    );
    std::fs::create_dir_all(dir.join("a-folder")).unwrap();
    write("program = [\"./a-folder\"]");
    let (_, err) = run(&["check", f], 2);
    assert!(
        err.contains("s.toml:6:12: the program ./a-folder is a folder in"),
        "{err}"
    );
    write("program = [\"no-such-command-xyz\"]");
    let (_, err) = run(&["check", f], 2);
    assert!(
        err.contains("s.toml:6:12: no command `no-such-command-xyz` on PATH"),
        "{err}"
    );
    write("program = [\"python3\"]\nhandler = \"effect\"");
    let (_, err) = run(&["check", f], 2);
    assert!(err.contains("s.toml:7:1"), "{err}");
    assert!(err.contains("consumer.program replaces it"), "{err}");
    write("handler_timeout_ms = 5");
    let (_, err) = run(&["check", f], 2);
    assert!(err.contains("no consumer.program is given"), "{err}");
}

/// A command found on PATH only as a file that is not executable would fail
/// at the first run's start; a shell skips such a file and keeps looking,
/// and idemsim refuses it at load, where the program is written.
#[cfg(unix)]
#[test]
fn a_command_on_path_that_is_not_executable_is_refused_at_load() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("external/path");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let prog = bin.join("my-consumer-xyz");
    std::fs::write(&prog, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o644)).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "summary = \"x\"\nmodel = \"messaging\"\n[expect]\nverdict = \"holds\"\n[consumer]\nprogram = [\"my-consumer-xyz\"]\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let f = file.to_str().unwrap();
    let (_, err) = support::run_in(&dir, &["check", f, "--runs", "1"], &[("PATH", &path)], 2);
    assert!(
        err.contains("s.toml:6:12: the command `my-consumer-xyz` on PATH")
            && err.contains("is not executable"),
        "{err}"
    );
    assert!(err.contains("chmod +x"), "{err}");
}

#[test]
fn ctrl_c_stops_the_sweep_and_not_the_program_mid_answer() {
    // The terminal's SIGINT reaches the whole foreground group; a program in
    // that group would die mid-answer and read as a protocol error (exit 2).
    let (code, out, err) = support::interrupt_group(
        &["check", IN_TX, "--runs", "1000000", "--jobs", "2"],
        std::time::Duration::from_secs(3),
    );
    assert_eq!(code, Some(130), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("interrupted"), "{out}");
}
