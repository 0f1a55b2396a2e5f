//! Running `git` for the diff gate, on gavel's one git runner (`gavel_exec::git`): the runner
//! builds the command with the scrubbed environment (the repository at `repo` is the one read,
//! whatever `GIT_DIR`, `GIT_INDEX_FILE` or pathspec variables say; nothing prompts) and drains
//! stderr beside a streamed stdout. This module adds what only the gate needs (a pager-free,
//! UTF-8-naming, lock-free read) and turns a failed run into a [`DiffGateError`] that quotes
//! git's own message, sanitized.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use gavel_exec::git::{Git, GitError, GitProcess};

use crate::DiffGateError;

/// `git <args>` run in `repo`, with `-c core.quotepath=false` so names in human-readable output
/// are shown as UTF-8 (they are sanitized later), without optional locks (the gate only reads)
/// and with the runner's non-interactive, scrubbed environment.
pub(crate) fn command(repo: &Git, args: &[&str]) -> Command {
    let mut cmd = repo.command(&["--no-pager", "-c", "core.quotepath=false"]);
    cmd.args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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

/// A started git process (stderr drained by the runner) with what the gate's errors name.
pub(crate) struct Running {
    process: GitProcess,
    pub(crate) command: String,
    repo: PathBuf,
}

impl Running {
    /// Starts `cmd`; `command` is its description for errors.
    pub(crate) fn spawn(cmd: Command, command: String, repo: &Path) -> Result<Self, DiffGateError> {
        let process = GitProcess::spawn(cmd, command.clone()).map_err(|err| match err {
            GitError::Spawn(source) => DiffGateError::SpawnGit {
                command: command.clone(),
                repo: repo.to_path_buf(),
                source,
            },
            other => DiffGateError::SpawnGit {
                command: command.clone(),
                repo: repo.to_path_buf(),
                source: std::io::Error::other(other.to_string()),
            },
        })?;
        Ok(Self {
            process,
            command,
            repo: repo.to_path_buf(),
        })
    }

    /// The child, to take its stdin and stdout.
    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.process.child
    }

    /// Waits for git to exit and fails unless it succeeded.
    pub(crate) fn finish(self) -> Result<(), DiffGateError> {
        let Self {
            process,
            command,
            repo,
        } = self;
        process
            .finish()
            .map_err(|err| classify(command, &repo, err))
    }

    /// Stops git early (its remaining output is not wanted) and reaps it.
    pub(crate) fn stop(self) {
        self.process.stop();
    }
}

/// Runs git to completion and returns its stdout. Only for output whose size grows with the
/// number of files, never with their contents.
pub(crate) fn output(repo: &Git, args: &[&str]) -> Result<Vec<u8>, DiffGateError> {
    let command = describe(args);
    let mut running = Running::spawn(self::command(repo, args), command.clone(), repo.root())?;
    let mut stdout = Vec::new();
    let read = match running.child().stdout.take() {
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

/// The gate's error for a git that did not succeed.
fn classify(command: String, repo: &Path, err: GitError) -> DiffGateError {
    match err {
        GitError::Spawn(source) => DiffGateError::GitIo { command, source },
        GitError::Failed { stderr, code, .. } => {
            let stderr = crate::sanitize(&stderr);
            // Outside a repository `git diff` turns into `git diff --no-index` and rejects
            // `--cached` with a usage message; say what actually went wrong.
            if stderr.contains("git diff --no-index") || stderr.contains("not a git repository") {
                return DiffGateError::NotARepository {
                    repo: repo.to_path_buf(),
                };
            }
            let status = code.map_or_else(|| "failed".to_owned(), |c| format!("exit status: {c}"));
            DiffGateError::GitFailed {
                command,
                status,
                stderr,
            }
        }
        GitError::Killed { signal, .. } => DiffGateError::GitFailed {
            command,
            status: format!("signal: {signal}"),
            stderr: String::new(),
        },
        other => DiffGateError::GitFailed {
            command,
            status: "failed".to_owned(),
            stderr: crate::sanitize(&other.to_string()),
        },
    }
}
