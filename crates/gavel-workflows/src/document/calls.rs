//! The document workflow's side of model calls: which provider plays a role, the reviewer's
//! verdict asked for as structured output, and gavel's own warning line in a draft (removed
//! before filing). The calls themselves go through the shared [`crate::caller::ModelCaller`].

use gavel_core::{ContentHash, NodeCtx, NodeError, Transition};
use gavel_llm::{Provider, Role};

use super::{DocState, DocWorkflow};
use crate::caller::{Answered, ModelCaller};

impl DocWorkflow {
    /// The provider for one of this workflow's roles (drafter or reviewer).
    fn provider(&self, role: Role) -> Result<&dyn Provider, NodeError> {
        match role {
            Role::DRAFTER => Ok(self.drafter.as_ref()),
            Role::REVIEWER => Ok(self.reviewer.as_ref()),
            other => Err(NodeError::Failed(format!(
                "the {} workflow has no `{other}` role",
                self.kind.name
            ))),
        }
    }

    /// What the agent may do in a call for `role`: answer only, except a drafter that reads
    /// the repository (`drafter_reads_repo`): read and search tools in the repository, no
    /// writes, no shell.
    fn profile(&self, role: Role) -> gavel_llm::AgentProfile {
        if role == Role::DRAFTER && self.settings.drafter_reads_repo {
            gavel_llm::AgentProfile {
                tools: gavel_llm::Tools::ReadOnly,
                workdir: Some(self.settings.repo_root.clone()),
                max_turns: 30,
                ..gavel_llm::AgentProfile::text_only()
            }
        } else {
            gavel_llm::AgentProfile::text_only()
        }
    }

    /// Calls the model for `role` through the shared caller (see [`ModelCaller::call`]).
    pub(crate) fn call_model(
        &self,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
        role: Role,
        seq: u32,
        prompt: String,
        parts: &[ContentHash],
    ) -> Result<Result<Answered, Transition>, NodeError> {
        let caller = ModelCaller {
            settings: &self.settings.calls,
            observer: self.observer.clone(),
            profile: self.profile(role),
            // The reviewer's answer is a verdict: asked for as structured output where the
            // provider can (the prompt still describes the fenced form).
            output_schema: (role == Role::REVIEWER).then(crate::verdict::output_schema),
        };
        caller.call(
            &mut s.spend,
            cx,
            self.provider(role)?,
            role,
            seq,
            prompt,
            parts,
        )
    }
}

/// The line gavel puts at the top of a draft whose model could not be verified. N6 removes it
/// before filing; a person sees it in the editor and in the lineage.
pub(crate) fn draft_warning_line(warning: &str) -> String {
    format!(
        "<!-- gavel: WARNING: model verification failed: {} -->\n",
        warning.replace("--", "—")
    )
}

/// Removes gavel's own comment lines (`<!-- gavel: ... -->`) from a draft.
pub fn strip_gavel_comments(body: &str) -> String {
    let kept: Vec<&str> = body
        .lines()
        .filter(|l| !(l.starts_with("<!-- gavel:") && l.trim_end().ends_with("-->")))
        .collect();
    let mut out = kept.join("\n");
    if body.ends_with('\n') {
        out.push('\n');
    }
    out
}
