//! A git process that runs alongside the caller: the caller streams its stdout (and feeds its
//! stdin) while a thread drains stderr, so a chatty stderr can never block stdout, and keeps
//! the head and tail of it for the error message.
//!
//! The diff gate reads `git diff --raw --numstat -z` and talks to one `git cat-file --batch`
//! this way; anything that must not hold a whole output in memory can.

use std::io::Read;
use std::process::{Child, ChildStderr, Command};
use std::thread::JoinHandle;

use super::{GitError, STDERR_KEEP, check};
use crate::process::capped::Capped;

/// A started git (built by [`command`](super::command) or [`Git::command`](super::Git::command)
/// with the stdio the caller wants). Its stdout and stdin are the caller's to take from
/// `child`; end it with [`finish`](Self::finish) or [`stop`](Self::stop).
pub struct GitProcess {
    pub child: Child,
    args: String,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

impl GitProcess {
    /// Starts `cmd`; `args` describes it in errors (`diff --cached ...`). When `cmd` pipes
    /// stderr, a thread drains it.
    pub fn spawn(mut cmd: Command, args: impl Into<String>) -> Result<Self, GitError> {
        let mut child = cmd.spawn().map_err(GitError::Spawn)?;
        let stderr = child.stderr.take().map(drain);
        Ok(Self {
            child,
            args: args.into(),
            stderr,
        })
    }

    /// How the command is named in errors.
    pub fn args(&self) -> &str {
        &self.args
    }

    /// Waits for git to exit and fails unless it succeeded (a signal is
    /// [`GitError::Killed`]).
    pub fn finish(mut self) -> Result<(), GitError> {
        let status = self.child.wait().map_err(GitError::Spawn)?;
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        check(&self.args, status, &stderr)
    }

    /// Stops git early (its remaining output is not wanted) and reaps it.
    pub fn stop(mut self) {
        // Killing an already-exited child fails harmlessly; either way it is reaped below.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(handle) = self.stderr.take() {
            let _ = handle.join();
        }
    }
}

fn drain(mut pipe: ChildStderr) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Capped::new(STDERR_KEEP);
        let mut buf = [0u8; 4096];
        loop {
            match pipe.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(0) | Err(_) => break,
                Ok(n) => kept.push(&buf[..n]),
            }
        }
        kept.text().into_bytes()
    })
}
