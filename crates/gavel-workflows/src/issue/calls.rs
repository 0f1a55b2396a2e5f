//! The issue workflow's side of model calls: which provider plays a role, and gavel's own
//! warning line in a draft (removed before filing). The calls themselves go through the shared
//! [`crate::caller::ModelCaller`].

use gavel_core::{ContentHash, NodeCtx, NodeError, Transition};
use gavel_llm::{Provider, Role};

use super::{IssueState, IssueWorkflow};
use crate::caller::{Answered, ModelCaller};

impl IssueWorkflow {
    /// The provider for one of this workflow's roles (drafter or reviewer).
    fn provider(&self, role: Role) -> Result<&dyn Provider, NodeError> {
        match role {
            Role::DRAFTER => Ok(self.drafter.as_ref()),
            Role::REVIEWER => Ok(self.reviewer.as_ref()),
            other => Err(NodeError::Failed(format!(
                "the issue workflow has no `{other}` role"
            ))),
        }
    }

    /// Calls the model for `role` through the shared caller (see [`ModelCaller::call`]).
    pub(super) fn call_model(
        &self,
        s: &mut IssueState,
        cx: &mut NodeCtx<'_>,
        role: Role,
        seq: u32,
        prompt: String,
        parts: &[ContentHash],
    ) -> Result<Result<Answered, Transition>, NodeError> {
        let caller = ModelCaller {
            settings: &self.settings.calls,
            observer: self.observer.clone(),
            profile: gavel_llm::AgentProfile::text_only(),
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
pub(super) fn draft_warning_line(warning: &str) -> String {
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
