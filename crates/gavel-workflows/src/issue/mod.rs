//! The brief → issue workflow (seed documents 000 and 001, in gavel's terms).
//!
//! ```text
//! N0_load_brief → N1_preflight → N2_draft → N3_draft_gate ─send→ N4_review → N5_verdict_gate ─approve→ N6_file → end
//!                                   ↑            │ revise                        │ revise      │ edit (error)
//!                                   └────────────┴───────────────────────────────┘ ←───────────┘
//! ```
//!
//! A drafter model writes the issue from the person's brief, a person reviews it (N3), a
//! different reviewer model judges it against a fixed rubric (N4), a person sees the verdict
//! (N5), and only gavel files the issue (N6). In `--auto` mode N3 and N5 route without asking,
//! except that an unparseable verdict always goes to a person.

mod calls;
mod filing;
mod front_matter;
mod nodes;
pub mod prompts;

pub use crate::caller::CallObserver;
pub use calls::strip_gavel_comments;

use std::path::{Path, PathBuf};

use gavel_core::{ContentHash, NodeCtx, NodeError, Transition, Workflow};
use gavel_llm::Provider;
use serde::{Deserialize, Serialize};

use crate::lineage::Lineage;
use crate::tracker::Tracker;
use crate::verdict::Verdict;

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "issue";

/// The review rubric's fixed path. No flag, variable or setting changes it, so an agent cannot
/// substitute a weaker rubric.
pub const RUBRIC_PATH: &str = "docs/skills/0701c-issue-review-prompt.md";

/// The issue template the drafter fills in (written by `gavel init`).
pub const TEMPLATE_PATH: &str = "docs/templates/0101-issue-template.md";

/// Node names, in graph order.
pub mod node {
    pub const LOAD_BRIEF: &str = "N0_load_brief";
    pub const PREFLIGHT: &str = "N1_preflight";
    pub const DRAFT: &str = "N2_draft";
    pub const DRAFT_GATE: &str = "N3_draft_gate";
    pub const REVIEW: &str = "N4_review";
    pub const VERDICT_GATE: &str = "N5_verdict_gate";
    pub const FILE: &str = "N6_file";
}

/// Settings the workflow needs from the outside world.
#[derive(Debug, Clone)]
pub struct IssueSettings {
    /// The repository's top-level folder.
    pub repo_root: PathBuf,
    /// Lineage folder, repository-relative (`docs/lineage`).
    pub lineage_dir: PathBuf,
    /// Ideas folder, repository-relative (`ideas`).
    pub ideas_dir: PathBuf,
    /// The template the drafter fills in, repository-relative (default [`TEMPLATE_PATH`]).
    pub template_path: PathBuf,
    /// The most drafts a run may write before it halts.
    pub max_iterations: u32,
    /// The editor program pre-flight must find (interactive runs only).
    pub editor_program: Option<String>,
    /// How model calls are made and accounted (budget, prices, verification, output cap).
    pub calls: crate::caller::CallerSettings,
    /// The provider strings the workflow's providers were built from.
    pub roles: Roles,
}

/// The provider strings of a run's roles. Saved in the run when it starts, so a resumed run
/// uses the same models whatever `gavel.toml` says by then; only `gavel resume --role` changes
/// one, and the change is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roles {
    pub drafter: String,
    pub reviewer: String,
}

/// A file in the lineage and the hash of the content gavel last read from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    pub path: String,
    pub hash: ContentHash,
}

/// The latest verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictRecord {
    pub artifact: Artifact,
    pub verdict: Verdict,
    pub rubric_sha256: String,
    /// Set when another model answered than the reviewer asked for: never auto-approved.
    #[serde(default)]
    pub warning: Option<String>,
}

/// The issue once filed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filed {
    pub number: u64,
    pub url: String,
    pub title: String,
    pub lineage: String,
    pub commit: Option<String>,
}

/// The workflow's state, checkpointed after every node. Artifacts are referenced by content
/// hash rather than copied, so checkpoints stay small however long the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueState {
    /// Random per run; the tracker's idempotency key and the commit trailer derive from it.
    pub run_key: String,
    /// The brief as given by the person.
    pub brief_file: String,
    /// The brief's text, only until N0 has stored it as a blob.
    pub brief_text: Option<String>,
    pub brief: Option<ContentHash>,
    pub slug: String,
    /// The idea's path when the brief came from `ideas/active/` (moved to `ideas/done/`).
    pub source_idea: Option<String>,
    pub auto: bool,
    pub started_at: String,
    pub file_counter: u32,
    pub iteration_count: u32,
    pub draft_count: u32,
    pub verdict_count: u32,
    pub draft: Option<Artifact>,
    pub verdict: Option<VerdictRecord>,
    /// Every verdict so far (as last read, after any human edit), oldest first.
    pub verdict_history: Vec<ContentHash>,
    /// Human feedback for the next draft.
    pub feedback: Option<ContentHash>,
    pub filed: Option<Filed>,
    /// Calls, spend and budget (flattened: the same fields older checkpoints have).
    #[serde(flatten)]
    pub spend: crate::caller::Spend,
    /// The roles' provider strings (`None` only in runs started by an older gavel, which
    /// take gavel.toml's at their next node).
    #[serde(default)]
    pub roles: Option<Roles>,
    /// A role change not yet shown in a verdict header.
    #[serde(default)]
    pub role_change: Option<String>,
    /// The tracker the run files to, saved at its first node so a resume files there too
    /// (`None` only in runs started by an older gavel: they take gavel.toml's).
    #[serde(default)]
    pub tracker: Option<crate::tracker::TrackerRef>,
}

impl IssueState {
    /// The state of a new run.
    pub fn new(
        run_key: String,
        brief_file: String,
        brief_text: String,
        slug: String,
        source_idea: Option<String>,
        auto: bool,
        now: String,
    ) -> Self {
        Self {
            run_key,
            brief_file,
            brief_text: Some(brief_text),
            brief: None,
            slug,
            source_idea,
            auto,
            started_at: now,
            file_counter: 0,
            iteration_count: 0,
            draft_count: 0,
            verdict_count: 0,
            draft: None,
            verdict: None,
            verdict_history: Vec::new(),
            feedback: None,
            filed: None,
            spend: crate::caller::Spend::default(),
            roles: None,
            role_change: None,
            tracker: None,
        }
    }
}

/// The brief → issue workflow with its providers and tracker.
pub struct IssueWorkflow {
    pub settings: IssueSettings,
    pub drafter: Box<dyn Provider>,
    pub reviewer: Box<dyn Provider>,
    pub tracker: Box<dyn Tracker>,
    /// Told about calls while they run (for a live display).
    pub observer: Option<std::sync::Arc<dyn CallObserver>>,
}

impl IssueWorkflow {
    fn lineage(&self, s: &IssueState) -> Lineage {
        Lineage::active(
            &self.settings.repo_root,
            &self.settings.lineage_dir,
            &s.slug,
        )
    }

    fn root(&self) -> &Path {
        &self.settings.repo_root
    }

    /// Records the roles in the run, and any change to them (`gavel resume --role`) in the
    /// timeline and, through `role_change`, in the next verdict header.
    fn sync_roles(&self, s: &mut IssueState, cx: &mut NodeCtx<'_>) {
        let now = &self.settings.roles;
        let Some(saved) = &s.roles else {
            s.roles = Some(now.clone());
            return;
        };
        if saved == now {
            return;
        }
        let mut changes = Vec::new();
        for (role, was, is) in [
            ("drafter", &saved.drafter, &now.drafter),
            ("reviewer", &saved.reviewer, &now.reviewer),
        ] {
            if was != is {
                changes.push(format!("{role} {was} -> {is}"));
            }
        }
        let text = changes.join(", ");
        cx.event(gavel_core::EventKind::Note {
            text: format!("role changed (gavel resume --role): {text}"),
        });
        s.role_change = Some(text);
        s.roles = Some(now.clone());
    }

    /// What pre-flight (N1) would report, for a caller to check before it writes anything.
    pub fn preflight_problems(&self) -> Vec<String> {
        self.problems()
    }
}

impl Workflow for IssueWorkflow {
    type State = IssueState;

    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn run_node(
        &self,
        name: &str,
        s: &mut IssueState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        self.sync_roles(s, cx);
        if s.tracker.is_none() {
            s.tracker = Some(self.tracker.reference());
        }
        match name {
            node::LOAD_BRIEF => self.load_brief(s, cx),
            node::PREFLIGHT => self.preflight(s, cx),
            node::DRAFT => self.draft(s, cx),
            node::DRAFT_GATE => self.draft_gate(s, cx),
            node::REVIEW => self.review(s, cx),
            node::VERDICT_GATE => self.verdict_gate(s, cx),
            node::FILE => self.file(s, cx),
            other => Err(NodeError::Failed(format!(
                "unknown node `{other}` in the issue workflow"
            ))),
        }
    }
}

fn goto(node: &str) -> Result<Transition, NodeError> {
    Ok(Transition::Goto(node.to_owned()))
}

fn io_failed(what: &str, path: &Path, e: std::io::Error) -> NodeError {
    NodeError::Failed(format!("cannot {what} {}: {e}", path.display()))
}
