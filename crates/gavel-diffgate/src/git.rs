//! Running `git`: one place that builds the command line (list arguments, never a shell), fixes
//! the environment so the repository at `repo` is the one read and nothing prompts, and turns a
//! failed run into a [`DiffGateError`] that quotes git's own message.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;

use crate::DiffGateError;

/// Variables that would point git at another repository, index or object store than the one at
/// `repo` (for example when gavel itself runs inside a git hook), run an external diff, or change
/// how pathspecs are read.
const SCRUBBED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    // These would turn the `:(top,literal)` pathspecs the report uses into plain names.
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
];

/// How much of git's stderr is kept for an error message.
const STDERR_KEEP: usize = 8 * 1024;

/// `git <args>` run in `repo`, with `-c core.quotepath=false` so names in human-readable output
/// are shown as UTF-8 (they are sanitized later) and with a non-interactive, read-only
/// environment.
pub(crate) fn command(repo: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(repo)
        .args(["--no-pager", "-c", "core.quotepath=false"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in SCRUBBED_ENV {
        cmd.env_remove(name);
    }
    cmd
}

/// How a git command is named in errors: `git diff --cached ...`.
pub(crate) fn describe(args: &[&str]) -> String {
    let mut text = String::from("git");
    for arg in args {
        text.push(' ');
        text.push_str(arg);
    }
    text
}

/// A started git process whose stderr is drained by a thread (so a chatty stderr can never
/// block its stdout) and kept for the error message.
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) command: String,
    repo: PathBuf,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

impl Running {
    /// Starts `cmd`; `command` is its description for errors.
    pub(crate) fn spawn(
        mut cmd: Command,
        command: String,
        repo: &Path,
    ) -> Result<Self, DiffGateError> {
        let mut child = cmd.spawn().map_err(|source| DiffGateError::SpawnGit {
            command: command.clone(),
            repo: repo.to_path_buf(),
            source,
        })?;
        let stderr = child.stderr.take().map(drain);
        Ok(Self {
            child,
            command,
            repo: repo.to_path_buf(),
            stderr,
        })
    }

    /// Waits for git to exit and fails unless it succeeded.
    pub(crate) fn finish(mut self) -> Result<(), DiffGateError> {
        let status = self.child.wait().map_err(|source| DiffGateError::GitIo {
            command: self.command.clone(),
            source,
        })?;
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        check(&self.command, &self.repo, status, &stderr)
    }

    /// Stops git early (its remaining output is not wanted) and reaps it.
    pub(crate) fn stop(mut self) {
        // Killing an already-exited child fails harmlessly; either way it is reaped below.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(handle) = self.stderr.take() {
            let _ = handle.join();
        }
    }
}

/// Runs git to completion and returns its stdout. Only for output whose size grows with the
/// number of files, never with their contents.
pub(crate) fn output(repo: &Path, args: &[&str]) -> Result<Vec<u8>, DiffGateError> {
    let command = describe(args);
    let mut running = Running::spawn(self::command(repo, args), command.clone(), repo)?;
    let mut stdout = Vec::new();
    let read = match running.child.stdout.take() {
        Some(mut pipe) => pipe.read_to_end(&mut stdout).map(|_| ()),
        None => Ok(()),
    };
    if let Err(source) = read {
        running.stop();
        return Err(DiffGateError::GitIo { command, source });
    }
    running.finish()?;
    Ok(stdout)
}

fn check(
    command: &str,
    repo: &Path,
    status: ExitStatus,
    stderr: &[u8],
) -> Result<(), DiffGateError> {
    if status.success() {
        return Ok(());
    }
    let stderr = crate::sanitize(String::from_utf8_lossy(stderr).trim());
    // Outside a repository `git diff` turns into `git diff --no-index` and rejects `--cached`
    // with a usage message; say what actually went wrong.
    if stderr.contains("git diff --no-index") || stderr.contains("not a git repository") {
        return Err(DiffGateError::NotARepository {
            repo: repo.to_path_buf(),
        });
    }
    Err(DiffGateError::GitFailed {
        command: command.to_owned(),
        status: status.to_string(),
        stderr,
    })
}

fn drain(mut pipe: ChildStderr) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match pipe.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = STDERR_KEEP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}
