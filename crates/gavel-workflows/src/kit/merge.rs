//! N7's merge into the person's branch, once: fast-forward when the base has not moved, a
//! merge commit when it has; a conflict or local changes in the way halt with the work kept
//! on its branch; Ctrl-C undoes a half-made merge and interrupts the run; the result is
//! journaled, so a replay after a kill reports the same merge.

use gavel_core::{NodeCtx, NodeError, StepError, Transition};
use gavel_exec::git::{Git, GitError};

use super::commit::interrupted;
use super::{ImplementState, ImplementWorkflow};

impl ImplementWorkflow {
    /// [`Self::merge_into_base`] once: its result is journaled, so a replay (a kill after the
    /// merge) reports the same `how` instead of "already merged", and a kill between the merge
    /// and its journal finds how it was merged from the history.
    pub(super) fn merged_once(
        &self,
        s: &ImplementState,
        cx: &mut NodeCtx<'_>,
        person: &Git,
        branch: &str,
        commit: &str,
    ) -> Result<Result<String, Transition>, NodeError> {
        if let Some(how) = cx.journaled::<String>("merge")? {
            return Ok(Ok(how));
        }
        let how = match self.merge_into_base(s, cx, person, branch, commit)? {
            Ok(how) => how,
            Err(halt) => return Ok(Err(halt)),
        };
        let kept: Result<String, StepError<std::convert::Infallible>> =
            cx.step("merge", || Ok(how));
        kept.map(Ok)
            .map_err(|e| NodeError::Failed(format!("cannot record the merge: {e}")))
    }

    /// Merges the run's branch into the base branch in the person's checkout. `Err` is the
    /// halt to return (the person must act); nothing is lost either way.
    fn merge_into_base(
        &self,
        s: &ImplementState,
        cx: &NodeCtx<'_>,
        person: &Git,
        branch: &str,
        commit: &str,
    ) -> Result<Result<String, Transition>, NodeError> {
        let git_err = |e: GitError| NodeError::Failed(format!("git: {e}"));
        let already = person
            .run(&["merge-base", "--is-ancestor", commit, "HEAD"])
            .is_ok();
        if already {
            // Merged already, by a person after a halt (or by gavel just before a kill, before
            // its journal): how, from the history (a merge commit whose second parent is the
            // run's commit, or else a fast-forward).
            let merges = person
                .run(&[
                    "rev-list",
                    "--merges",
                    "--parents",
                    "--ancestry-path",
                    &format!("{commit}..HEAD"),
                ])
                .unwrap_or_default();
            let by_merge = merges.lines().any(|l| l.split(' ').nth(2) == Some(commit));
            return Ok(Ok(if by_merge {
                "already merged (merge commit)"
            } else {
                "already merged (fast-forward)"
            }
            .into()));
        }
        let current = person
            .run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
            .map(|b| b.trim().to_owned())
            .unwrap_or_default();
        if current != s.base_branch {
            return Ok(Err(Transition::Halt {
                reason: format!(
                    "your checkout is on `{}`, not on `{}` where the run started; switch back (`git switch {}`) and `gavel resume`, or merge {branch} yourself",
                    if current.is_empty() {
                        "a detached HEAD"
                    } else {
                        &current
                    },
                    s.base_branch,
                    s.base_branch
                ),
            }));
        }
        let head = person.head().map_err(git_err)?.unwrap_or_default();
        let (args, how): (Vec<&str>, &str) = if head == s.base_commit {
            (
                vec!["merge", "--ff-only", "--quiet", branch],
                "fast-forward",
            )
        } else {
            (
                vec!["merge", "--no-ff", "--no-edit", "--quiet", branch],
                "merge commit",
            )
        };
        match person.run(&args) {
            Ok(_) => Ok(Ok(how.to_owned())),
            Err(e) if interrupted(cx, &e) => {
                // Ctrl-C stopped git: a merge it left half made is undone (git merges only from
                // an index that matches HEAD, so `reset --merge` takes back exactly what the
                // merge staged), and the run is interrupted (exit 130), resumable; the work is
                // on its branch.
                if person.run(&["merge", "--abort"]).is_err()
                    && person.head().ok().flatten().as_deref() == Some(head.as_str())
                {
                    let _ = person.run(&["reset", "--merge", "--quiet"]);
                }
                Err(NodeError::Cancelled)
            }
            Err(e) => {
                // A conflict leaves a merge in progress: undo it, keep everything.
                let _ = person.run(&["merge", "--abort"]);
                Ok(Err(Transition::Halt {
                    reason: format!(
                        "the merge into `{}` failed ({}); nothing is lost: the work is committed on branch {branch}; merge it yourself (`git merge {branch}`, resolve, commit), then `gavel resume` to finish the lineage",
                        s.base_branch,
                        e.to_string().lines().next().unwrap_or_default()
                    ),
                }))
            }
        }
    }
}
