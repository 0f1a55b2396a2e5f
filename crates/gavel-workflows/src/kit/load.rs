//! N0: the LLD and the validated context go into the run, the worktree is made (and checked to
//! be the folder and branch gavel expects before anything is written in it), the lineage
//! starts inside it, and the person's checkout is fingerprinted.

use gavel_core::ArtifactKind;
use gavel_core::{EventKind, NodeCtx, NodeError, Transition};
use gavel_exec::git::{BRANCH_PREFIX, DEFAULT_WORKTREE_HOME, Git};

use super::fingerprint::Fingerprint;
use super::{ImplementState, ImplementWorkflow, blob_text, goto, node};

impl ImplementWorkflow {
    pub(super) fn load(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        let lld = match s.lld_text.take() {
            Some(t) => t,
            None => blob_text(cx, s.lld.as_ref())?,
        };
        s.lld = Some(cx.put_blob(lld.as_bytes())?);
        if let Some(context) = s.context_text.take() {
            s.context = Some(cx.put_blob(context.as_bytes())?);
        }
        let git = Git::at(self.root());
        let name = s.worktree_name();
        let worktree = git
            .worktree_add(&name, &s.base_commit)
            .map_err(|e| NodeError::Failed(format!("cannot make the worktree: {e}")))?;
        // Before the first write: the folder under gavel's worktree home, on gavel's branch.
        let home = self
            .root()
            .join(DEFAULT_WORKTREE_HOME)
            .canonicalize()
            .map_err(|e| NodeError::Failed(format!("cannot resolve the worktree home: {e}")))?;
        let branch = format!("{BRANCH_PREFIX}{name}");
        if worktree.path != home.join(&name) || worktree.branch.as_deref() != Some(&branch) {
            return Err(NodeError::Failed(format!(
                "the worktree is {} on {}, not {} on {branch}; nothing was written",
                worktree.path.display(),
                worktree.branch.as_deref().unwrap_or("a detached HEAD"),
                home.join(&name).display()
            )));
        }
        if self.settings.confine.is_none() {
            let who = if self.settings.agent {
                format!("the agent implementer {} and ", self.settings.implementer)
            } else {
                String::new()
            };
            cx.event(EventKind::Note {
                text: format!(
                    "sandbox = \"none\": {who}the test and lint runs go unconfined; only gavel's \
                     checks of the worktree and your checkout stand between them and your files"
                ),
            });
        }
        if worktree.from_spare {
            cx.event(EventKind::Note {
                text: "the worktree was made from a spare one (an earlier run's, brought to this run's base by git and checked against its tree), not checked out afresh".to_owned(),
            });
        }
        s.worktree = Some(worktree.path.to_string_lossy().into_owned());
        s.spare_ok = self.settings.confine.is_some();
        // A change's lineage holds its earlier runs' files (the plan's): number on from them.
        s.file_counter = match &s.change {
            Some(c) => {
                crate::lineage::highest_number(&worktree.path.join(super::change_lineage_rel(c)))
            }
            None => 0,
        };
        let design = if s.change.is_some() {
            "plan.md"
        } else {
            "lld.md"
        };
        self.artifact(s, cx, ArtifactKind::Design, design, lld.as_bytes())?;
        let mut context = Vec::new();
        if let Some(manifest) = s.context_manifest.take() {
            context = crate::disclosure::context_names(&manifest);
            self.artifact(
                s,
                cx,
                ArtifactKind::Context,
                "context.json",
                manifest.as_bytes(),
            )?;
        }
        self.disclose(s, cx, &context);
        s.checkout =
            match self.settings.confine {
                // Boxed, nothing the model's step runs can write the checkout: it is the person's
                // to work in meanwhile, and gavel does not watch it (the merge, at the end, stops
                // without losing anything if their edits collide with the run's).
                Some(_) => {
                    cx.event(EventKind::Note {
                    text: "the model's steps run boxed in the worktree: your checkout is yours to \
                           edit meanwhile; gavel merges into it only after your typed approval"
                        .into(),
                });
                    None
                }
                None => Some(Fingerprint::of(&git).map_err(|e| {
                    NodeError::Failed(format!("cannot fingerprint the checkout: {e}"))
                })?),
            };
        self.stage.at(super::Moment::Loaded, self, s, cx)?;
        if self.scratch() == gavel_exec::git::Scratch::Kept {
            // The new worktree's first look (its kept index seeded, the files git checked out
            // in the index's own second read again), carried to the first step's.
            let wt = self.wt_git(s)?;
            let look = super::sweep::before(&wt, self.scratch(), None, "")
                .map_err(|e| NodeError::Failed(format!("cannot snapshot the worktree: {e}")))?;
            self.carry.keep(cx, &s.worktree_name(), look);
        }
        goto(node::SCAFFOLD)
    }

    /// What the run sends where, before its first model call ([`crate::disclosure`]).
    fn disclose(&self, s: &ImplementState, cx: &mut NodeCtx<'_>, context: &[String]) {
        let design = if s.change.is_some() {
            "the change's plan (proposal, delta specs, tasks)"
        } else {
            "the LLD"
        };
        let mut implementer = format!(
            "{design}, the context files, the names of the repository's files, and the output of the test runs that failed"
        );
        if self.settings.agent {
            implementer.push_str(
                "; as an agent it reads and edits the files of its worktree (your repository at the run's base commit, ignored files left out) and runs the test command there",
            );
        }
        let reviewer = self.stage.reviewer();
        let mut sent = vec![crate::disclosure::Sent {
            role: "implementer",
            provider: &self.settings.implementer,
            what: &implementer,
        }];
        if let Some(reviewer) = &reviewer {
            sent.push(crate::disclosure::Sent {
                role: "reviewer",
                provider: reviewer,
                what: "the change's plan, the diff of the implementation and the test results",
            });
        }
        crate::disclosure::record(cx, &sent, context);
    }
}
