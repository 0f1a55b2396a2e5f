//! Tests of the process runner with real children (`/bin/sh` scripts).

use std::thread;
use std::time::{Duration, Instant};

use super::*;
use crate::testutil;

fn sh(script: &str, idle_ms: u64, total_ms: u64) -> ProcessSpec {
    ProcessSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        // The runner itself may have no PATH (see the regression test); the scripts need one.
        env: vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())],
        env_remove: vec![],
        cwd: None,
        stdin: "the prompt\n".into(),
        idle_timeout: Duration::from_millis(idle_ms),
        total_timeout: Duration::from_millis(total_ms),
    }
}

/// Whether process `pid` is gone (or a zombie nobody reaped: dead all the same), waiting up to
/// `within` for it to die.
fn dies_within(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let dead = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))),
        };
        if dead {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// A child that starts a grandchild holding stdout, says so, and goes silent: the idle timeout
/// must kill both. Returns after checking the grandchild is dead.
fn kill_a_grandchild_on_idle_timeout() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("grandchild.pid");
    let p = pidfile.display();
    let script = format!(
        "/bin/sh -c 'echo $$ > {p}; exec sleep 30' &\n\
         while [ ! -s {p} ]; do sleep 0.01; done\n\
         echo started\n\
         exec sleep 30"
    );
    let started = Instant::now();
    let err = run(&sh(&script, 1_000, 20_000), &|| false, &mut |_| {}).expect_err("idle");
    assert!(
        matches!(
            err,
            ProcessError::IdleTimeout {
                kill_error: None,
                ..
            }
        ),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid");
    assert!(
        dies_within(pid, Duration::from_secs(2)),
        "the grandchild {pid} was killed too"
    );
}

#[test]
fn the_prompt_goes_on_stdin_and_lines_stream_back() {
    let mut lines = Vec::new();
    let out = run(
        &sh(
            "read x; echo \"got $x\"; echo two; echo err >&2",
            5_000,
            10_000,
        ),
        &|| false,
        &mut |l| lines.push(l.to_owned()),
    )
    .expect("run");
    assert!(out.status.success());
    assert_eq!(lines, ["got the prompt", "two"]);
    assert_eq!(out.stdout, "got the prompt\ntwo\n");
    assert_eq!(out.stderr, "err\n");
    assert_eq!((out.stdout_omitted, out.stderr_omitted), (0, 0));
}

#[test]
fn a_silent_child_and_its_grandchildren_are_killed_on_idle_timeout() {
    kill_a_grandchild_on_idle_timeout();
}

/// Regression: the group used to be killed by running `kill` from PATH, and a failure to run it
/// was ignored, so with no `kill` on PATH only the child died and its grandchildren lived on.
#[test]
fn regression_the_group_is_killed_with_no_kill_program_on_path() {
    testutil::rerun(
        "process::tests::child_kills_the_group_with_path_emptied",
        "",
        true,
        &[("PATH", Some(""))],
    );
}

#[test]
#[ignore = "run by regression_the_group_is_killed_with_no_kill_program_on_path"]
fn child_kills_the_group_with_path_emptied() {
    if testutil::child_arg().is_none() {
        return;
    }
    assert_eq!(std::env::var("PATH").as_deref(), Ok(""), "PATH is emptied");
    kill_a_grandchild_on_idle_timeout();
}

#[test]
fn a_chatty_child_still_hits_the_total_timeout() {
    let err = run(
        &sh("while true; do echo tick; sleep 0.05; done", 1_000, 400),
        &|| false,
        &mut |_| {},
    )
    .expect_err("total");
    let ProcessError::TotalTimeout { stdout, .. } = &err else {
        panic!("{err}");
    };
    assert!(stdout.ends_with("tick\n"), "the tail is kept: {stdout:?}");
}

#[test]
fn the_tails_of_both_streams_survive_an_idle_timeout() {
    let script = "for i in 1 2 3; do echo out-$i; echo err-$i >&2; done; sleep 30";
    let err = run(&sh(script, 300, 20_000), &|| false, &mut |_| {}).expect_err("idle");
    let ProcessError::IdleTimeout { stdout, stderr, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(stdout, "out-1\nout-2\nout-3\n");
    assert_eq!(stderr, "err-1\nerr-2\nerr-3\n");
}

#[test]
fn stdout_and_stderr_over_their_caps_keep_head_and_tail() {
    let script = "i=1; while [ $i -le 2000 ]; do echo line-$i; echo noise-$i >&2; i=$((i+1)); done";
    let limits = OutputLimits {
        stdout: 200,
        stderr: 100,
    };
    let mut seen = 0;
    let out = run_with(&sh(script, 5_000, 20_000), limits, &|| false, &mut |_| {
        seen += 1;
    })
    .expect("run");
    assert_eq!(seen, 2000, "the callback still sees every line");
    assert!(out.stdout.starts_with("line-1\nline-2\n"), "{}", out.stdout);
    assert!(
        out.stdout.ends_with("line-1999\nline-2000\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("bytes of output omitted]\n"));
    assert!(out.stdout_omitted > 10_000, "{}", out.stdout_omitted);
    assert!(out.stdout.len() < 300, "{}", out.stdout.len());
    assert!(out.stderr.starts_with("noise-1\n"), "{}", out.stderr);
    assert!(out.stderr.ends_with("noise-2000\n"), "{}", out.stderr);
    assert!(out.stderr_omitted > 10_000);
    assert!(out.stderr.len() < 200, "{}", out.stderr.len());
}

#[test]
fn cancellation_kills_the_child() {
    let started = Instant::now();
    let err = run(
        &sh("sleep 30", 60_000, 60_000),
        &|| started.elapsed() > Duration::from_millis(200),
        &mut |_| {},
    )
    .expect_err("cancel");
    assert!(matches!(err, ProcessError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_missing_program_is_not_found() {
    let mut spec = sh("", 1_000, 1_000);
    spec.program = "definitely-not-installed-gavel".into();
    assert!(matches!(
        run(&spec, &|| false, &mut |_| {}),
        Err(ProcessError::NotFound { .. })
    ));
}

#[test]
fn a_missing_working_folder_is_not_a_missing_program() {
    let mut spec = sh("true", 1_000, 1_000);
    spec.cwd = Some("/definitely/not/a/folder".into());
    let err = run(&spec, &|| false, &mut |_| {}).expect_err("no folder");
    assert!(matches!(err, ProcessError::Spawn { .. }), "{err}");
}

#[test]
fn a_child_that_never_reads_stdin_reports_the_broken_pipe() {
    let mut spec = sh("exit 3", 5_000, 5_000);
    spec.stdin = "x".repeat(1 << 20);
    let out = run(&spec, &|| false, &mut |_| {}).expect("ran");
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdin_error.is_some());
}

#[test]
fn a_test_run_records_its_exit_code_and_interleaved_output() {
    let run = run_test(
        &sh("echo one; echo two >&2; echo three; exit 3", 5_000, 10_000),
        1 << 20,
        &|| false,
    )
    .expect("ran");
    assert_eq!(run.exit_code, Some(3));
    assert_eq!(run.signal, None);
    assert_eq!(
        run.output, "one\ntwo\nthree\n",
        "in the order it was written"
    );
    assert_eq!(run.timed_out, None);
    assert!(!run.passed());
    let json = serde_json::to_string(&run).expect("json");
    let back: TestRun = serde_json::from_str(&json).expect("parse");
    assert_eq!(back, run, "journaled and replayed unchanged");
}

#[test]
fn a_test_run_ended_by_a_signal_records_the_signal() {
    let run = run_test(
        &sh("echo before; kill -TERM $$", 5_000, 10_000),
        1024,
        &|| false,
    )
    .expect("ran");
    assert_eq!((run.exit_code, run.signal), (None, Some(15)));
    assert_eq!(run.output, "before\n");
}

#[test]
fn a_test_run_stopped_by_a_clock_is_a_result_with_its_output() {
    let script = "i=1; while [ $i -le 500 ]; do echo test-$i; i=$((i+1)); done; sleep 30";
    let run = run_test(&sh(script, 300, 20_000), 100, &|| false).expect("a result");
    assert_eq!(run.timed_out, Some(Timeout::Idle));
    assert_eq!((run.exit_code, run.signal), (None, Some(9)));
    assert!(run.output.starts_with("test-1\n"), "{}", run.output);
    assert!(run.output.ends_with("test-500\n"), "{}", run.output);
    assert!(run.output_omitted > 0);
    assert!(run.duration < Duration::from_secs(5));
}

#[test]
fn a_passing_test_run_passes() {
    let run = run_test(&sh("echo ok", 5_000, 10_000), 1024, &|| false).expect("ran");
    assert!(run.passed(), "{run:?}");
}

#[test]
fn regression_reading_ends_when_the_child_is_reaped_not_when_a_daemon_closes_the_pipe() {
    // The daemon leaves the process group (`setsid`) and keeps stdout open for a minute.
    let script = "setsid sleep 60 & echo done";
    let started = Instant::now();
    let out = run(&sh(script, 120_000, 120_000), &|| false, &mut |_| {}).expect("runs");
    assert!(out.status.success());
    assert_eq!(out.stdout, "done\n");
    let run = run_test(&sh(script, 120_000, 120_000), 1 << 20, &|| false).expect("runs");
    assert!(run.output.contains("done"), "{}", run.output);
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the runner read until the daemon closed the pipe"
    );
}
