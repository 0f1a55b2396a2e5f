//! N1 (scaffold the tests) and N3 (implement): one model step each, judged by its files.
//!
//! The worktree's snapshot is journaled before the call; a replay (a crash mid-step) first
//! puts the worktree back to it, so no half-edited tree is tested or committed. A text-only
//! model's answer is parsed strictly ([`super::answer`]) and applied whole, or not at all; an
//! agent CLI edits the worktree itself. Either way the changed files are judged
//! ([`super::guard`]): what the step may not touch is put back and fed back to the model,
//! which costs an attempt. The person's checkout must be exactly as it was.

use gavel_core::ArtifactKind;
use std::path::Path;

use gavel_core::{EventKind, NodeCtx, NodeError, StepError, Transition};
use gavel_exec::git::{Git, GitError, TreeId};
use gavel_llm::Role;

use super::answer::{self, FileOp};
use super::fingerprint::Fingerprint;
use super::guard::{self, Step};
use super::sweep;
use super::{ImplementState, ImplementWorkflow, blob_text, goto, node};
use crate::caller::ModelCaller;

/// How an attempt ended.
enum Attempt {
    /// The step's changes stand.
    Done,
    /// What went wrong, told to the model at the next attempt.
    Retry(String),
    /// The model caller stopped the run (budget, a failed call).
    Stop(Transition),
}

impl ImplementWorkflow {
    pub(super) fn model_step(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        step: Step,
    ) -> Result<Transition, NodeError> {
        let (attempts, max, name) = match step {
            Step::Scaffold => (
                s.scaffold_attempts,
                self.settings.scaffold_retries,
                "writing the tests",
            ),
            Step::Implement => (
                s.implement_attempts,
                self.settings.implement_retries,
                "implementing",
            ),
        };
        if attempts > max {
            return Ok(Transition::Halt {
                reason: format!(
                    "{name} failed {attempts} times (retries: {max}); last: {}; raise [implement] retries or fix it by hand in the worktree, then `gavel resume`",
                    s.last_failure.as_deref().unwrap_or("unknown")
                ),
            });
        }
        match self.attempt(s, cx, step)? {
            Attempt::Stop(t) => Ok(t),
            Attempt::Done => {
                s.feedback = None;
                goto(match step {
                    Step::Scaffold => node::RED,
                    Step::Implement => node::GREEN,
                })
            }
            Attempt::Retry(why) => {
                self.failed_attempt(s, cx, step, &why)?;
                goto(match step {
                    Step::Scaffold => node::SCAFFOLD,
                    Step::Implement => node::IMPLEMENT,
                })
            }
        }
    }

    /// Counts a failed attempt and keeps its reason for the next prompt.
    pub(super) fn failed_attempt(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        step: Step,
        why: &str,
    ) -> Result<(), NodeError> {
        match step {
            Step::Scaffold => s.scaffold_attempts += 1,
            Step::Implement => s.implement_attempts += 1,
        }
        // The gist for the timeline and the halt message: the first lines, not a whole log.
        let gist: Vec<&str> = why
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("```"))
            .take(4)
            .collect();
        let gist = gist.join(" ");
        cx.event(EventKind::Note {
            text: format!("attempt refused: {gist}"),
        });
        s.last_failure = Some(gist);
        s.feedback = Some(cx.put_blob(why.as_bytes())?);
        self.artifact(s, cx, ArtifactKind::Feedback, "feedback.md", why.as_bytes())?;
        Ok(())
    }

    fn attempt(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        step: Step,
    ) -> Result<Attempt, NodeError> {
        let worktree = self.worktree(s)?;
        let wt = self.wt_git(s)?;
        if self.settings.confine.is_none() {
            // Unboxed, the model's code can reach the worktree's git folder: not a spare.
            s.spare_ok = false;
        }
        let replay = cx.has_step("snapshot")?;
        // The ignored entries are seen by the same look as the snapshot; a replay (the
        // journaled snapshot, the closure not run) looks again once the files are put back.
        let mut seen = None;
        let carried = self.carry.take(cx, &s.worktree_name())?;
        let lineage = self.lineage(s)?.rel().display().to_string();
        let snap: Result<TreeId, StepError<GitError>> = cx.step("snapshot", || {
            let before = sweep::before(&wt, self.scratch(), carried, &lineage)?;
            seen = Some(before.ignored);
            Ok(before.tree)
        });
        let snap =
            snap.map_err(|e| NodeError::Failed(format!("cannot snapshot the worktree: {e}")))?;
        if replay {
            // A crash in the middle of this step: start again from the journaled files.
            wt.reset_to_with(&snap, self.scratch())
                .map_err(|e| NodeError::Failed(format!("cannot reset the worktree: {e}")))?;
        }
        let ignored_before = match seen {
            Some(ignored) => ignored,
            None => {
                wt.survey(self.scratch())
                    .map_err(|e| NodeError::Failed(format!("cannot look at the worktree: {e}")))?
                    .ignored
            }
        };
        // Unconfined (`sandbox = "none"`), the person's checkout is fingerprinted just before
        // the model's step (they may have worked in it since the run started; only what changes
        // during the step is the step's doing). Boxed, the step cannot reach it (the box mounts
        // it read-only and gavel writes a text answer beneath the worktree only), so what
        // changes there is the person's own work and is left to them.
        let checkout =
            match self.settings.confine {
                Some(_) => None,
                None => Some(Fingerprint::of(&Git::at(self.root())).map_err(|e| {
                    NodeError::Failed(format!("cannot fingerprint the checkout: {e}"))
                })?),
            };
        let prompt = self.prompt(s, cx, step, &worktree)?;
        let seq = s.implementer_calls;
        let caller = ModelCaller {
            settings: &self.settings.calls,
            observer: self.observer.clone(),
            profile: self.profile(&worktree),
            output_schema: None,
        };
        let mut parts = Vec::new();
        parts.extend(s.lld.clone());
        parts.extend(s.feedback.clone());
        let answered = match caller.call(
            &mut s.spend,
            cx,
            self.implementer.as_ref(),
            Role::named("implementer"),
            seq,
            prompt,
            &parts,
        )? {
            Ok(a) => a,
            Err(stop) => return Ok(Attempt::Stop(stop)),
        };
        s.implementer_calls += 1;
        if !self.settings.agent {
            let ops = match answer::parse(&answered.response.text) {
                Ok(ops) => ops,
                Err(e) => return Ok(Attempt::Retry(format!("{e}\n\n{}", answer::INSTRUCTIONS))),
            };
            if let Err(refused) = apply(&worktree, &ops) {
                match refused {
                    super::beneath::BeneathError::Refused { .. } => {
                        // Nothing of a refused answer stays (a check passed, then a write
                        // failed): back to the step's snapshot.
                        wt.reset_to_with(&snap, self.scratch()).map_err(|e| {
                            NodeError::Failed(format!("cannot reset the worktree: {e}"))
                        })?;
                        return Ok(Attempt::Retry(format!(
                            "This answer was refused and nothing of it was written:\n- {refused}\n"
                        )));
                    }
                    other => return Err(NodeError::Failed(other.to_string())),
                }
            }
        }
        if !wt.linkage_intact() {
            // The worktree's link to its repository is gavel's (only an unboxed agent can
            // reach it): put back, and the attempt refused.
            wt.restore_linkage().map_err(|e| {
                NodeError::Failed(format!("cannot restore the worktree's .git: {e}"))
            })?;
            wt.reset_to_with(&snap, self.scratch())
                .map_err(|e| NodeError::Failed(format!("cannot reset the worktree: {e}")))?;
            return Ok(Attempt::Retry(
                "These changes were refused and put back:\n- `.git`: the worktree's link to its repository is gavel's, not the step's to change\n"
                    .to_owned(),
            ));
        }
        // A `.GIT/config` (a `.git` in another case) or a nested repository cannot be
        // snapshotted, and a `conftest.py` under an ignored path is never reviewed: removed, the
        // whole attempt put back and refused, never a run stuck on the snapshot.
        let (unrecordable, survey) =
            sweep::after(&wt, self.scratch(), &ignored_before).map_err(NodeError::Failed)?;
        let Some(survey) = survey else {
            wt.reset_to_with(&snap, self.scratch())
                .map_err(|e| NodeError::Failed(format!("cannot reset the worktree: {e}")))?;
            let mut text = String::from("These changes were refused and put back:\n");
            for (path, why) in &unrecordable {
                text.push_str(&format!("- `{path}`: {why}\n"));
            }
            return Ok(Attempt::Retry(text));
        };
        let ignored_after = survey.ignored.clone();
        let after = wt
            .record(survey)
            .map_err(|e| NodeError::Failed(format!("cannot snapshot the worktree: {e}")))?;
        let changes = wt
            .changes(&snap, &after)
            .map_err(|e| NodeError::Failed(format!("cannot diff the worktree: {e}")))?;
        // The run's lineage is gavel's record: a step that writes there (a `conftest.py` a plain
        // `pytest` would collect, a forged report) is refused like any other forbidden change.
        let lineage_prefix = format!("{}/", self.lineage(s)?.rel().display());
        let (in_lineage, changes): (Vec<_>, Vec<_>) = changes
            .into_iter()
            .partition(|c| c.path.starts_with(&lineage_prefix));
        if let Some(checkout) = &checkout {
            self.check_checkout(checkout)?;
        }
        if self.settings.agent {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            let tried = escapes(&worktree, home.as_deref(), &answered.response.tool_uses);
            if !tried.is_empty() {
                return Ok(Attempt::Stop(Transition::Halt {
                    reason: format!(
                        "the implementer tried to write outside its worktree: {}; read its call (`gavel show RUN --call N`) before resuming (a resume starts the step again from its snapshot)",
                        tried.join(", ")
                    ),
                }));
            }
        }
        let globs = &self.settings.test_globs;
        let is_test = |p: &str| gavel_exec::runners::is_test_file(p, globs);
        let mut refused = guard::refused(&worktree, &changes, step, &is_test);
        refused.extend(in_lineage.into_iter().map(|change| guard::Refused {
            change,
            why: "the run's lineage folder is gavel's record, not the step's to write".to_owned(),
        }));
        if !refused.is_empty() {
            let paths: Vec<String> = refused.iter().map(|r| r.change.path.clone()).collect();
            wt.restore_paths(&snap, &paths)
                .map_err(|e| NodeError::Failed(format!("cannot put refused changes back: {e}")))?;
            return Ok(Attempt::Retry(guard::feedback(&refused)));
        }
        if changes.is_empty() {
            return Ok(Attempt::Retry("no file was changed".into()));
        }
        if step == Step::Scaffold {
            for c in &changes {
                if c.kind != gavel_exec::git::ChangeKind::Deleted
                    && !s.scaffold_files.contains(&c.path)
                {
                    s.scaffold_files.push(c.path.clone());
                }
            }
        }
        // The worktree is as `after` records it: the next node's look starts from it.
        self.carry.keep(
            cx,
            &s.worktree_name(),
            sweep::Before {
                tree: after,
                ignored: ignored_after,
            },
        );
        cx.event(EventKind::Note {
            text: format!(
                "{} file(s) changed: {}",
                changes.len(),
                changes
                    .iter()
                    .map(|c| c.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
        Ok(Attempt::Done)
    }

    /// Fails (naming the paths) when the person's checkout is not as `before`.
    pub(super) fn check_checkout(&self, before: &Fingerprint) -> Result<(), NodeError> {
        let git = Git::at(self.root());
        let now = Fingerprint::of(&git)
            .map_err(|e| NodeError::Failed(format!("cannot fingerprint the checkout: {e}")))?;
        if &now == before {
            return Ok(());
        }
        let diff = before
            .differences(&git, &now)
            .unwrap_or_else(|e| vec![format!("(cannot list them: {e})")]);
        Err(NodeError::Failed(format!(
            "your checkout changed while the model was working in its worktree, so nothing will be merged: {}; look at these paths, then `gavel abort` the run or `gavel resume` it",
            diff.join(", ")
        )))
    }

    /// What an agent CLI may do: edit in the worktree, run the test and lint commands; confined
    /// by the operating system to writing in the worktree when a launcher is set.
    fn profile(&self, worktree: &Path) -> gavel_llm::AgentProfile {
        if !self.settings.agent {
            return gavel_llm::AgentProfile::text_only();
        }
        let mut allowed = vec![self.settings.test.command.clone()];
        allowed.extend(self.settings.lint.iter().map(|l| l.command.clone()));
        gavel_llm::AgentProfile {
            tools: gavel_llm::Tools::Shell {
                within: worktree.to_path_buf(),
                allowed,
            },
            workdir: Some(worktree.to_path_buf()),
            max_turns: 40,
            confine: self.settings.confine.as_ref().map(|launcher| {
                gavel_exec::confine::Confinement {
                    launcher: launcher.clone(),
                    writable: vec![worktree.to_path_buf()],
                    // The worktree's link to its repository is gavel's, not the agent's.
                    read_only: vec![worktree.join(".git")],
                    // The agent CLI talks to its vendor.
                    network: true,
                }
            }),
            ..gavel_llm::AgentProfile::text_only()
        }
    }

    fn prompt(
        &self,
        s: &ImplementState,
        cx: &NodeCtx<'_>,
        step: Step,
        worktree: &Path,
    ) -> Result<String, NodeError> {
        let lld = blob_text(cx, s.lld.as_ref())?;
        let context = match &s.context {
            Some(h) => Some(blob_text(cx, Some(h))?),
            None => None,
        };
        let feedback = match &s.feedback {
            Some(h) => Some(blob_text(cx, Some(h))?),
            None => None,
        };
        Ok(super::prompts::step_prompt(&super::prompts::StepInput {
            step,
            subject: &s.subject(),
            plan: s.change.is_some(),
            lld: &lld,
            context: context.as_deref(),
            feedback: feedback.as_deref(),
            test_command: &self.settings.test.command,
            test_globs: &self.settings.test_globs,
            files: &tracked_files(worktree)?,
            agent: self.settings.agent,
        }))
    }
}

/// The paths an agent's file tools were pointed at outside `worktree` (whether or not the
/// write landed: the sandbox refuses it, and an attempt is reason enough to stop), named as
/// the agent wrote them. `~` and `~/...` are the home folder (`home`; outside when unknown).
/// Shell commands are judged by their effects instead (the snapshot and the checkout
/// fingerprint).
fn escapes(worktree: &Path, home: Option<&Path>, used: &[gavel_llm::ToolUse]) -> Vec<String> {
    const WRITERS: &[&str] = &[
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "write_file",
        "replace",
        "edit_file",
        "file_change",
    ];
    let mut out = Vec::new();
    for u in used.iter().filter(|u| WRITERS.contains(&u.name.as_str())) {
        for word in u.summary.split_whitespace() {
            if !(word.contains('/') || word.contains('.') || word == "~") {
                continue;
            }
            let path = Path::new(word);
            let from_home = word
                .strip_prefix("~/")
                .or_else(|| (word == "~").then_some(""));
            let abs = if let Some(rest) = from_home {
                match home {
                    Some(h) => h.join(rest),
                    None => std::path::PathBuf::from("/~").join(rest),
                }
            } else if path.is_absolute() {
                path.to_path_buf()
            } else {
                worktree.join(path)
            };
            if !lexically_inside(&abs, worktree) && !out.contains(&word.to_owned()) {
                out.push(word.to_owned());
            }
        }
    }
    out
}

/// Whether `path`, with `.` and `..` resolved as written, is inside `root`.
fn lexically_inside(path: &Path, root: &Path) -> bool {
    let mut normal = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.starts_with(root)
}

/// The worktree's files (tracked), for the prompt.
fn tracked_files(worktree: &Path) -> Result<Vec<String>, NodeError> {
    let out = Git::at(worktree)
        .run(&["ls-files", "-z"])
        .map_err(|e| NodeError::Failed(format!("cannot list the worktree's files: {e}")))?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Applies a parsed answer in the worktree (paths were checked by the parser): every path is
/// checked first, so an answer one of whose paths goes through a link is refused whole; each
/// file is then written or deleted beneath the worktree without following links
/// ([`super::beneath`]).
fn apply(worktree: &Path, ops: &[FileOp]) -> Result<(), super::beneath::BeneathError> {
    for op in ops {
        super::beneath::check(worktree, op.path())?;
    }
    for op in ops {
        match op {
            FileOp::Write { content, .. } => {
                super::beneath::write(worktree, op.path(), content.as_bytes())?;
            }
            FileOp::Delete { .. } => super::beneath::remove(worktree, op.path())?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_tools_pointed_outside_the_worktree_are_escapes() {
        let root = Path::new("/repo/.gavel/worktrees/1-impl");
        let used = |name: &str, summary: &str| gavel_llm::ToolUse {
            name: name.into(),
            summary: summary.into(),
        };
        let found = escapes(
            root,
            Some(Path::new("/home/me")),
            &[
                used("Write", "/repo/.gavel/worktrees/1-impl/calc.py"),
                used("Write", "calc.py"),
                used("Write", "/repo/.gavel/worktrees/1-impl/../../x"),
                used("Edit", "/repo/stolen.txt"),
                used("file_change", "add ../../../home/me/x.txt"),
                used("Bash", "rm -rf /"),
                used("Read", "/etc/passwd"),
                used("Write", "~/.bashrc"),
                used("Edit", "~"),
            ],
        );
        assert_eq!(
            found,
            [
                "/repo/.gavel/worktrees/1-impl/../../x",
                "/repo/stolen.txt",
                "../../../home/me/x.txt",
                "~/.bashrc",
                "~",
            ]
        );
        // A worktree inside the home folder: `~/` paths into it are not escapes.
        let inside = escapes(
            Path::new("/home/me/repo/.gavel/worktrees/1-impl"),
            Some(Path::new("/home/me")),
            &[used("Write", "~/repo/.gavel/worktrees/1-impl/fine.py")],
        );
        assert!(inside.is_empty(), "{inside:?}");
    }
}
