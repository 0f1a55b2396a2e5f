//! Running an agent CLI as a child process, safely.
//!
//! The prompt goes on stdin (never in argv, which Linux caps at 128 KiB). stdout is read line by
//! line as it arrives (the CLIs stream JSON events), stderr is collected. Two clocks guard the
//! call: an idle timeout (no output on stdout or stderr for too long) and a total timeout. On
//! timeout or cancellation the child's whole process group is killed with SIGKILL, so
//! grandchildren that hold the pipes (a CLI's helpers, a shell it spawned) cannot hang gavel.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables to set (on top of the inherited environment).
    pub env: Vec<(String, String)>,
    /// Variables to remove from the inherited environment.
    pub env_remove: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Written to the child's stdin, which is then closed.
    pub stdin: String,
    pub idle_timeout: Duration,
    pub total_timeout: Duration,
}

/// A finished child.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Set when writing the prompt failed (the child closed stdin early: a broken pipe).
    pub stdin_error: Option<String>,
    pub elapsed: Duration,
}

/// Why a child produced no output to judge.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("`{program}` is not installed (not found on PATH)")]
    NotFound { program: String },
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{program}` produced no output for {}s (idle timeout); its process group was killed", .after.as_secs())]
    IdleTimeout {
        program: String,
        after: Duration,
        stdout: String,
        stderr: String,
    },
    #[error("`{program}` ran longer than {}s (total timeout); its process group was killed", .after.as_secs())]
    TotalTimeout {
        program: String,
        after: Duration,
        stdout: String,
        stderr: String,
    },
    #[error("cancelled")]
    Cancelled,
}

enum Chunk {
    Line(String),
    Stderr,
    StdoutClosed,
}

/// Runs `spec`, calling `on_line` for each stdout line as it arrives.
pub fn run(
    spec: &ProcessSpec,
    cancelled: &dyn Fn() -> bool,
    on_line: &mut dyn FnMut(&str),
) -> Result<ProcessOutput, ProcessError> {
    let program = spec.program.display().to_string();
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for name in &spec.env_remove {
        cmd.env_remove(name);
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ProcessError::NotFound {
                program: program.clone(),
            }
        } else {
            ProcessError::Spawn {
                program: program.clone(),
                source,
            }
        }
    })?;
    let pgid = child.id();
    let started = Instant::now();

    let (tx, rx) = mpsc::channel::<Chunk>();
    let stdin_result = {
        let mut stdin = child.stdin.take();
        let prompt = spec.stdin.clone();
        thread::spawn(move || -> Option<String> {
            let mut pipe = stdin.take()?;
            let result = pipe
                .write_all(prompt.as_bytes())
                .and_then(|()| pipe.flush());
            drop(pipe);
            result.err().map(|e| e.to_string())
        })
    };
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut reader = BufReader::new(out);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf)
                            .trim_end_matches(['\n', '\r'])
                            .to_owned();
                        if tx.send(Chunk::Line(line)).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(Chunk::StdoutClosed);
        });
    }
    let stderr_handle = child.stderr.take().map(|mut err| {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut all = Vec::new();
            let mut buf = [0u8; 8192];
            loop {
                match err.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if all.len() < 1 << 20 {
                            all.extend_from_slice(&buf[..n]);
                        }
                        let _ = tx.send(Chunk::Stderr);
                    }
                }
            }
            String::from_utf8_lossy(&all).into_owned()
        })
    });
    drop(tx);

    let mut stdout = String::new();
    let mut last_activity = Instant::now();
    let mut stdout_open = true;
    let status = loop {
        if cancelled() {
            kill_group(pgid, &mut child);
            return Err(ProcessError::Cancelled);
        }
        let now = Instant::now();
        if now.duration_since(started) > spec.total_timeout {
            kill_group(pgid, &mut child);
            return Err(ProcessError::TotalTimeout {
                program,
                after: spec.total_timeout,
                stdout,
                stderr: String::new(),
            });
        }
        if now.duration_since(last_activity) > spec.idle_timeout {
            kill_group(pgid, &mut child);
            return Err(ProcessError::IdleTimeout {
                program,
                after: spec.idle_timeout,
                stdout,
                stderr: String::new(),
            });
        }
        if stdout_open {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Chunk::Line(line)) => {
                    last_activity = Instant::now();
                    on_line(&line);
                    stdout.push_str(&line);
                    stdout.push('\n');
                }
                Ok(Chunk::Stderr) => last_activity = Instant::now(),
                Ok(Chunk::StdoutClosed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    stdout_open = false
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        } else {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {
                    if let Ok(Chunk::Stderr) = rx.recv_timeout(Duration::from_millis(20)) {
                        last_activity = Instant::now();
                    }
                }
                Err(e) => return Err(ProcessError::Spawn { program, source: e }),
            }
        }
    };
    // The child exited; make sure nothing it left behind keeps running.
    kill_group(pgid, &mut child);
    let stderr = stderr_handle
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    let stdin_error = stdin_result.join().ok().flatten();
    Ok(ProcessOutput {
        status,
        stdout,
        stderr,
        stdin_error,
        elapsed: started.elapsed(),
    })
}

/// SIGKILLs the whole process group (the child and anything it spawned), then reaps the child.
fn kill_group(pgid: u32, child: &mut std::process::Child) {
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, idle_ms: u64, total_ms: u64) -> ProcessSpec {
        ProcessSpec {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![],
            env_remove: vec![],
            cwd: None,
            stdin: "the prompt\n".into(),
            idle_timeout: Duration::from_millis(idle_ms),
            total_timeout: Duration::from_millis(total_ms),
        }
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
        assert_eq!(out.stderr, "err\n");
    }

    #[test]
    fn a_silent_child_and_its_grandchildren_are_killed_on_idle_timeout() {
        let marker = tempfile::NamedTempFile::new().expect("tmp");
        let path = marker.path().display().to_string();
        // The grandchild holds stdout open and would write the marker after 3 s.
        let script = format!("(sleep 3; echo late > {path}) & echo started; sleep 30");
        let started = Instant::now();
        let err = run(&sh(&script, 300, 20_000), &|| false, &mut |_| {}).expect_err("idle");
        assert!(matches!(err, ProcessError::IdleTimeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
        thread::sleep(Duration::from_millis(3_500));
        assert_eq!(
            std::fs::read_to_string(marker.path()).unwrap_or_default(),
            "",
            "the grandchild was killed too"
        );
    }

    #[test]
    fn a_chatty_child_still_hits_the_total_timeout() {
        let err = run(
            &sh("while true; do echo tick; sleep 0.05; done", 1_000, 400),
            &|| false,
            &mut |_| {},
        )
        .expect_err("total");
        assert!(matches!(err, ProcessError::TotalTimeout { .. }), "{err}");
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
    fn a_child_that_never_reads_stdin_reports_the_broken_pipe() {
        let mut spec = sh("exit 3", 5_000, 5_000);
        spec.stdin = "x".repeat(1 << 20);
        let out = run(&spec, &|| false, &mut |_| {}).expect("ran");
        assert_eq!(out.status.code(), Some(3));
        assert!(out.stdin_error.is_some());
    }
}
