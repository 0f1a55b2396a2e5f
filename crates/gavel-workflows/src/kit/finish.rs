//! N6 (review) and N7 (merge).
//!
//! N6 stages the worktree's whole change against the base commit (the lineage excluded) and
//! puts it before the diff gate, with the run's summary (tests before and after, lint, cost):
//! only a person typing `approve` lets it through; `--auto` never does. N7 commits in the
//! worktree, merges into the base branch (fast-forward when the base has not moved, a merge
//! commit when it has; a conflict halts with the work kept on its branch), moves the lineage
//! and the LLD to their done folders in one lineage commit, and removes the worktree and
//! branch.

use std::path::PathBuf;

use gavel_core::{NodeCtx, NodeError, StepError, TimeSpent, Transition};
use gavel_exec::git::{BRANCH_PREFIX, Git, GitError};

use super::commit::{commit_once, interrupted};
use super::discard::copy_dir;
use super::{ImplementState, ImplementWorkflow, Merged, goto, io_failed, node};
use crate::fsutil;
use crate::lineage::Lineage;
use crate::review::{DiffReview, Reviewed, diff_review};

impl ImplementWorkflow {
    pub(super) fn review(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let worktree = self.worktree(s)?;
        let wt = self.wt_git(s)?;
        let lineage = self.without_lineage(s)?;
        let base = s.base_commit.clone();
        let staged: Result<String, StepError<GitError>> = cx.step("stage", || {
            wt.run(&["reset", "--soft", "--quiet", &base])?;
            wt.run(&["add", "--all", "--", ".", &lineage])
        });
        staged.map_err(|e| NodeError::Failed(format!("cannot stage the change: {e}")))?;
        let report_rel = self
            .lineage(s)?
            .artifact_rel(s.file_counter + 1, "diff-review.md");
        let report_path = worktree.join(&report_rel);
        // Shown by its absolute path: it is in the worktree, not in the person's checkout.
        let report_shown = report_path.to_string_lossy().into_owned();
        let audit_log = worktree.join(&self.settings.audit_log);
        let globs = &self.settings.test_globs;
        let is_test = |p: &str| gavel_exec::runners::is_test_file(p, globs);
        let reviewed = diff_review(
            cx,
            &DiffReview {
                worktree: &wt,
                audit_log: &audit_log,
                report_path: &report_path,
                report_rel: &report_shown,
                bypass_attempts: &self.settings.bypass_attempts,
                is_test: Some(&is_test),
            },
        )?;
        match reviewed {
            Reviewed::Waiting(Transition::Gate(mut gate)) => {
                gate.title = match &s.change {
                    Some(c) => format!(
                        "Change `{}`: review the code before it is merged ({})",
                        c.id, gate.title
                    ),
                    None => format!(
                        "Issue #{}: review the change before it is merged ({})",
                        s.issue, gate.title
                    ),
                };
                let mut detail = self.summary(s, &cx.time_spent()?);
                if let Some(d) = &gate.detail {
                    detail.push_str(&format!("\n{d}"));
                }
                gate.detail = Some(detail);
                Ok(Transition::Gate(gate))
            }
            Reviewed::Waiting(other) => Ok(other),
            Reviewed::Approved { audit_line, report } => {
                s.approved = self.approval_from(cx, audit_line.as_deref());
                s.file_counter += 1;
                if let Some(blob) = report {
                    s.keep_lineage_blob(
                        crate::lineage::artifact_name(s.file_counter, "diff-review.md"),
                        blob,
                    );
                }
                goto(node::MERGE)
            }
            Reviewed::Rejected { .. } => {
                self.abandon(s, cx, "a person rejected the change at the diff gate")
            }
        }
    }

    /// Tests before and after, lint, cost, and gavel's own share of the run's time so far:
    /// what a person weighs at N6.
    fn summary(&self, s: &ImplementState, time: &TimeSpent) -> String {
        let line = |name: &str, r: &Option<super::GateRecord>| {
            format!(
                "{name}: {}",
                r.as_ref().map_or("not run", |r| r.summary.as_str())
            )
        };
        format!(
            "{}\n{}\n{}\nattempts: {} scaffold, {} implementation; model calls: {}; cost: ${:.4}\n{}",
            line("tests before (red)", &s.red),
            line("tests after (green)", &s.green),
            line("lint", &s.lint),
            s.scaffold_attempts + 1,
            s.implement_attempts + 1,
            s.spend.call_count,
            s.spend.spent_micros as f64 / 1e6,
            time.describe()
        )
    }

    pub(super) fn merge(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        // A replay after the commit (the worktree may be gone by now) checks nothing again.
        let wt = if cx.has_step("commit-impl")? {
            None
        } else {
            let wt = self.wt_git(s)?;
            if let Some(back) = self.check_approval(s, cx, &wt)? {
                return Ok(back);
            }
            Some(wt)
        };
        let person = Git::at(self.root());
        let branch = format!("{BRANCH_PREFIX}{}", s.worktree_name());
        let lineage_spec = self.without_lineage(s)?;
        let message = match &s.change {
            Some(c) => format!(
                "gavel: implement change {} {}\n\nChange: {}\nGavel-Run: gavel-{}",
                c.id,
                s.issue_title.trim(),
                s.lld_path,
                s.run_key
            ),
            None => format!(
                "gavel: implement #{} {}\n\nLLD: {}\nGavel-Run: gavel-{}",
                s.issue,
                s.issue_title.trim(),
                s.lld_path,
                s.run_key
            ),
        };
        let committed: Result<String, StepError<GitError>> = cx.step("commit-impl", || {
            let wt = wt.ok_or_else(|| GitError::Failed {
                args: "commit".into(),
                stderr: "the run's worktree is gone".into(),
                code: None,
            })?;
            wt.run(&["add", "--all", "--", ".", &lineage_spec])?;
            let staged = wt.run(&["diff", "--cached", "--name-only"])?;
            if !staged.trim().is_empty() {
                wt.run(&["commit", "--quiet", "--no-verify", "-m", &message])?;
            }
            Ok(wt.head()?.unwrap_or_default())
        });
        let commit = match committed {
            Ok(c) => c,
            // Ctrl-C reaches git too: an interruption (resumable, exit 130), not a failure.
            Err(StepError::Step(e)) if interrupted(cx, &e) => return Err(NodeError::Cancelled),
            Err(e) => {
                return Err(NodeError::Failed(format!(
                    "cannot commit in the worktree: {e}"
                )));
            }
        };
        if s.change.is_some() {
            return self.merge_change(s, cx, commit);
        }
        let how = match self.merged_once(s, cx, &person, &branch, &commit)? {
            Ok(how) => how,
            Err(halt) => return Ok(halt),
        };
        // The lineage, out of the worktree into the person's checkout, with the LLD moved.
        let lineage = self.lineage(s)?;
        let done_rel = Lineage::done_rel(&self.settings.lineage_dir, s.issue, "impl");
        let done_abs = self.root().join(&done_rel);
        self.write_lineage(s, cx, &lineage.abs(), &done_abs)?;
        let merged_json = serde_json::json!({
            "issue": s.issue,
            "title": s.issue_title,
            "lld": s.lld_path,
            "commit": commit,
            "merged": how,
            "base_branch": s.base_branch,
            "red": s.red.as_ref().map(|r| &r.summary),
            "green": s.green.as_ref().map(|r| &r.summary),
            "lint": s.lint.as_ref().map(|r| &r.summary),
            "model_calls": s.spend.call_count,
            "cost_usd": s.spend.spent_micros as f64 / 1e6,
            "auto_mode": s.auto,
            "run_id": cx.run().0,
        });
        let mut bytes = serde_json::to_vec_pretty(&merged_json)
            .map_err(|e| NodeError::Failed(e.to_string()))?;
        bytes.push(b'\n');
        let n = s.file_counter + 1;
        let json_path = done_abs.join(crate::lineage::artifact_name(n, "merged.json"));
        fsutil::write_atomic(&json_path, &bytes).map_err(|e| io_failed("write", &json_path, e))?;
        let mut paths: Vec<PathBuf> = vec![done_rel.clone()];
        let lld_from = self.root().join(&s.lld_path);
        if let Some(rest) = s.lld_path.strip_prefix("docs/lld/active/") {
            let to_rel = PathBuf::from("docs/lld/done").join(rest);
            fsutil::move_idempotent(&lld_from, &self.root().join(&to_rel))
                .map_err(|e| io_failed("move the LLD", &lld_from, e))?;
            paths.push(PathBuf::from(&s.lld_path));
            paths.push(to_rel);
        }
        let lineage_commit = commit_once(
            cx,
            self.root(),
            &paths,
            &format!(
                "gavel: lineage of the implementation of #{}\n\nLineage: {}",
                s.issue,
                done_rel.display()
            ),
            &format!("gavel-{}-lineage", s.run_key),
            &format!("issue #{} is merged", s.issue),
        )?;
        self.remove_worktree(s)?;
        let summary = format!(
            "issue #{} implemented and merged into {} ({how}, {}); lineage in {}",
            s.issue,
            s.base_branch,
            &commit[..commit.len().min(12)],
            done_rel.display()
        );
        s.merged = Some(Merged {
            commit,
            how,
            lineage: done_rel.to_string_lossy().into_owned(),
            lineage_commit: Some(lineage_commit),
        });
        Ok(Transition::Done { summary })
    }

    /// A change's merge: its lineage committed on the branch too, the STATE.yaml gavel wrote
    /// in the person's checkout put back to the committed one, then the merge (which brings
    /// the change folder as the run left it: tasks checked, REVIEW.md, phase `complete`).
    fn merge_change(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        commit: String,
    ) -> Result<Transition, NodeError> {
        let Some(c) = s.change.clone() else {
            return Err(NodeError::Failed("not a change run".into()));
        };
        let wt = if cx.has_step("commit-lineage")? {
            None
        } else {
            Some(self.wt_git(s)?)
        };
        let person = Git::at(self.root());
        let branch = format!("{BRANCH_PREFIX}{}", s.worktree_name());
        let lineage_rel = s.lineage_rel(&self.settings.lineage_dir);
        let lineage = lineage_rel.to_string_lossy().into_owned();
        let message = format!(
            "gavel: lineage of the implementation of change {}\n\nLineage: {lineage}\nGavel-Run: gavel-{}",
            c.id, s.run_key
        );
        // Only this run's lineage files are committed, each written again from gavel's record
        // of it (a run started before gavel kept one commits the folder as it is): whatever
        // else the model's code put in the folder stays out of a commit no gate reviews.
        let mut paths: Vec<String> = Vec::new();
        if let Some(wt) = &wt
            && !s.lineage_files.is_empty()
        {
            for file in &s.lineage_files {
                let rel = format!("{lineage}/{}", file.name);
                let bytes = cx.get_blob(&file.blob)?;
                super::beneath::write(wt.root(), &rel, &bytes)
                    .map_err(|e| NodeError::Failed(format!("cannot write the lineage: {e}")))?;
                paths.push(rel);
            }
        }
        if paths.is_empty() {
            paths.push(lineage.clone());
        }
        let head: Result<String, StepError<GitError>> = cx.step("commit-lineage", || {
            let wt = wt.ok_or_else(|| GitError::Failed {
                args: "commit".into(),
                stderr: "the run's worktree is gone".into(),
                code: None,
            })?;
            let mut add: Vec<&str> = vec!["add", "--all", "--"];
            add.extend(paths.iter().map(String::as_str));
            wt.run(&add)?;
            let staged = wt.run(&["diff", "--cached", "--name-only"])?;
            if !staged.trim().is_empty() {
                wt.run(&["commit", "--quiet", "--no-verify", "-m", &message])?;
            }
            Ok(wt.head()?.unwrap_or_default())
        });
        let head = match head {
            Ok(h) => h,
            Err(StepError::Step(e)) if interrupted(cx, &e) => return Err(NodeError::Cancelled),
            Err(e) => return Err(NodeError::Failed(format!("cannot commit the lineage: {e}"))),
        };
        super::discard::restore_change_state(self.root(), &c).map_err(NodeError::Failed)?;
        let how = match self.merged_once(s, cx, &person, &branch, &head)? {
            Ok(how) => how,
            Err(halt) => return Ok(halt),
        };
        self.remove_worktree(s)?;
        let summary = format!(
            "change `{}` implemented and merged into {} ({how}, {}); phase complete; next: gavel change archive {}",
            c.id,
            s.base_branch,
            &commit[..commit.len().min(12)],
            c.id
        );
        s.merged = Some(Merged {
            commit,
            how,
            lineage,
            lineage_commit: Some(head),
        });
        Ok(Transition::Done { summary })
    }

    /// Removes the run's worktree (kept as a spare when it may be, see
    /// [`super::discard::retire`]) and its branch (idempotent).
    pub(super) fn remove_worktree(&self, s: &ImplementState) -> Result<(), NodeError> {
        let git = Git::at(self.root());
        let name = s.worktree_name();
        super::discard::retire(&git, s, self.settings.spare_worktrees)
            .map_err(|e| NodeError::Failed(format!("cannot remove the worktree: {e}")))?;
        let _ = git.run(&["branch", "-D", &format!("{BRANCH_PREFIX}{name}")]);
        Ok(())
    }
}

impl ImplementWorkflow {
    /// Writes the run's lineage into `to` from gavel's own record of it (each file's blob),
    /// never from the worktree, whose folder the model's code can write; a run started before
    /// gavel kept that record copies the regular files of `from` instead ([`copy_dir`]).
    fn write_lineage(
        &self,
        s: &ImplementState,
        cx: &NodeCtx<'_>,
        from: &std::path::Path,
        to: &std::path::Path,
    ) -> Result<(), NodeError> {
        if s.lineage_files.is_empty() {
            return copy_dir(from, to, 0);
        }
        std::fs::create_dir_all(to).map_err(|e| io_failed("create", to, e))?;
        for file in &s.lineage_files {
            let bytes = cx.get_blob(&file.blob)?;
            let target = to.join(&file.name);
            fsutil::write_atomic(&target, &bytes).map_err(|e| io_failed("write", &target, e))?;
        }
        Ok(())
    }
}
