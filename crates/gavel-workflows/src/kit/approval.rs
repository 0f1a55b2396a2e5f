//! What N7 merges is exactly what a person approved at N6, and nothing else.
//!
//! N6 records the tree it showed (the staged worktree, lineage excluded) with the checkpoint
//! its gate was asked from ([`Approval`]). Before N7 commits, it stages the worktree again and
//! checks, from the run's journal rather than from its state:
//! - that the gate of that N6 visit was answered `approve` (the typed word), and that its
//!   audit step journaled an approval of that very tree: a checkpoint moved past the gate by
//!   hand (an edited `node` column, a forged `approved` field) carries no such journal, and
//!   goes back to the gate;
//! - that the worktree still makes that tree (the audit log's own new line aside, which the
//!   approval itself appended): a file changed after the report was shown sends the run back
//!   to the gate with the changed paths named.
//!
//! A worktree that makes the base commit's own tree (nothing to merge but the lineage) needs
//! no approval.

use gavel_core::{EventKind, NodeCtx, NodeError, Transition};
use gavel_diffgate::{AuditEvent, Decision};
use gavel_exec::git::Git;
use serde::{Deserialize, Serialize};

use super::{ImplementState, ImplementWorkflow, goto, node};

/// The tree a person approved at N6, and the checkpoint of that N6 visit (whose journal holds
/// the typed answer and the audit line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    pub seq: u64,
    pub tree: String,
}

impl ImplementWorkflow {
    /// The approval N6 just took: the tree in the audit line it journaled.
    pub(super) fn approval_from(
        &self,
        cx: &NodeCtx<'_>,
        audit_line: Option<&str>,
    ) -> Option<Approval> {
        let event: AuditEvent = serde_json::from_str(audit_line?.trim()).ok()?;
        Some(Approval {
            seq: cx.seq(),
            tree: event.tree?,
        })
    }

    /// `None` when the staged worktree in `wt` is what a person approved (or the base's own
    /// tree); otherwise the transition back to the diff gate, with the reason in the timeline.
    pub(super) fn check_approval(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        wt: &Git,
    ) -> Result<Option<Transition>, NodeError> {
        let git = |e: gavel_exec::git::GitError| NodeError::Failed(format!("git: {e}"));
        let lineage = self.without_lineage(s)?;
        wt.run(&["add", "--all", "--", ".", &lineage])
            .map_err(git)?;
        let tree = wt.run(&["write-tree"]).map_err(git)?.trim().to_owned();
        let base = wt
            .run(&["rev-parse", &format!("{}^{{tree}}", s.base_commit)])
            .map_err(git)?
            .trim()
            .to_owned();
        if tree == base {
            return Ok(None);
        }
        let why = match self.journaled_approval(s, cx)? {
            Err(why) => why,
            Ok((approved, line)) => {
                let changed = changed_paths(wt, &approved.tree, &tree)?;
                let audit_log = self.settings.audit_log.to_string_lossy().into_owned();
                let only_the_audit_line = changed.iter().all(|p| *p == audit_log)
                    && (changed.is_empty() || audit_log_ends_with(wt, &audit_log, &line));
                if only_the_audit_line {
                    return Ok(None);
                }
                let named: Vec<&str> = changed
                    .iter()
                    .filter(|p| **p != audit_log)
                    .map(String::as_str)
                    .collect();
                format!(
                    "the worktree changed after the diff gate showed it ({}); it goes back to the gate",
                    named.join(", ")
                )
            }
        };
        cx.event(EventKind::Note { text: why.clone() });
        s.approved = None;
        s.last_failure = Some(why);
        goto(node::REVIEW).map(Some)
    }

    /// The approval the journal holds for `s.approved`: the tree and the audit line, or why
    /// there is none.
    fn journaled_approval(
        &self,
        s: &ImplementState,
        cx: &NodeCtx<'_>,
    ) -> Result<Result<(Approval, String), String>, NodeError> {
        let none = "no typed approval of this change is in the run's journal (a checkpoint moved past the diff gate?); it goes back to the gate".to_owned();
        let Some(approved) = s.approved.clone() else {
            return Ok(Err(none));
        };
        let answered = cx
            .answer_in(approved.seq, node::REVIEW)?
            .is_some_and(|a| a.choice == "approve");
        let line: Option<String> = cx.journaled_in(approved.seq, node::REVIEW, "diff-audit")?;
        let Some(line) = line.filter(|_| answered) else {
            return Ok(Err(none));
        };
        let event: Option<AuditEvent> = serde_json::from_str(line.trim()).ok();
        match event {
            Some(e)
                if e.decision == Decision::Approved
                    && e.tree.as_deref() == Some(approved.tree.as_str()) =>
            {
                Ok(Ok((approved, line)))
            }
            _ => Ok(Err(none)),
        }
    }
}

/// The paths that differ between two trees.
fn changed_paths(wt: &Git, from: &str, to: &str) -> Result<Vec<String>, NodeError> {
    if from == to {
        return Ok(Vec::new());
    }
    let out = wt
        .run(&[
            "diff-tree",
            "-r",
            "-z",
            "--name-only",
            "--no-renames",
            from,
            to,
        ])
        .map_err(|e| NodeError::Failed(format!("git: {e}")))?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Whether the audit log in the worktree ends with the approval's own line.
fn audit_log_ends_with(wt: &Git, rel: &str, line: &str) -> bool {
    std::fs::read_to_string(wt.root().join(rel))
        .is_ok_and(|text| text.ends_with(line.trim_end_matches('\n')) || text.ends_with(line))
}
