//! The one commit that ends a run (a filed issue and its lineage, an approved LLD and its
//! lineage, an archived change, an implementation), made exactly once however often the
//! finishing node is replayed; and how a failed git command or journaled step becomes a node's
//! error. Every workflow finishes this way, so it lives in the kit.
//!
//! A marker step is journaled before any commit attempt (a database write, no git process):
//! when it is new in this visit, no earlier attempt can have committed; when it is replayed,
//! the commit is looked for by its trailer (the run's key) before committing again. Runs
//! journaled by an older gavel recorded the HEAD before the attempt as `commit-base`, which
//! bounds that search.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gavel_core::{NodeCtx, NodeError, StepError};

use crate::git::{Git, GitError, PriorAttempt};

/// Commits `paths` with `message` and the trailer `key`, once. `what` names what is already
/// done if the commit fails (`issue #12 is filed`), for the error.
pub(crate) fn commit_once(
    cx: &mut NodeCtx<'_>,
    root: &Path,
    paths: &[PathBuf],
    message: &str,
    key: &str,
    what: &str,
) -> Result<String, NodeError> {
    let git = Git::at(root);
    // (Read, never run: a new run has no `commit-base` step.)
    let base: Option<Option<String>> = cx.journaled("commit-base")?;
    let replay = base.is_some() || cx.has_step("commit-intent")?;
    cx.mark("commit-intent")?;
    let prior = if replay {
        PriorAttempt::Possible {
            since: base.as_ref().and_then(|b| b.as_deref()),
        }
    } else {
        PriorAttempt::None
    };
    let commit: Result<String, StepError<GitError>> =
        cx.slow_step("commit", || git.commit_paths(paths, message, key, prior));
    match commit {
        Ok(c) => Ok(c),
        // Ctrl-C reaches git too, which then fails with nothing to say: that is an
        // interruption (resumable, exit 130), not a failed commit.
        Err(StepError::Step(e)) if interrupted(cx, &e) => Err(NodeError::Cancelled),
        Err(StepError::Step(e)) => Err(NodeError::Failed(format!(
            "{what} but the lineage commit failed: {e}"
        ))),
        Err(e) => Err(step_failed(e)),
    }
}

/// Whether a failed git command was Ctrl-C: git was stopped by a signal and the cancel flag
/// is (or, within a moment, becomes) set. The flag is set by a handler thread, which may run
/// just after git has already died of the same Ctrl-C.
pub(crate) fn interrupted(cx: &NodeCtx<'_>, e: &GitError) -> bool {
    if cx.cancel().is_cancelled() {
        return true;
    }
    if !e.is_killed() {
        return false;
    }
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if cx.cancel().is_cancelled() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// A failed journaled step as a node error (a store failure stays one).
pub(crate) fn step_failed<E: std::fmt::Display>(e: StepError<E>) -> NodeError {
    match e {
        StepError::Store(s) => NodeError::Store(s),
        other => NodeError::Failed(other.to_string()),
    }
}
