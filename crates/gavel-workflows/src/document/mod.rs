//! The document workflow: one graph that turns an input into an approved document, shared by
//! every document kind (brief → issue, issue → low-level design).
//!
//! ```text
//! N0 load input → N1_preflight → N2_draft → N3_draft_gate ─send→ N4_review → N5_verdict_gate ─approve→ N6 finish → end
//!                                   ↑            │ revise                        │ revise      │ edit (error)
//!                                   └────────────┴───────────────────────────────┘ ←───────────┘
//! ```
//!
//! A drafter model writes the document from its input, a person reviews it (N3), a different
//! reviewer model judges it against the kind's fixed rubric (N4), a person sees the verdict
//! (N5), and only gavel acts on the approved document (N6: file the issue, or commit the LLD).
//! In `--auto` mode N3 and N5 route without asking, except that an unparseable verdict always
//! goes to a person. Before the reviewer sees a draft, N3 runs gavel's own checks (template
//! placeholders left, required sections missing or empty, no title or labels line, nothing
//! revised: `checks.rs`); a draft that fails goes back to N2 with those findings in auto mode
//! (no reviewer call, one more draft against the cap), or waits at N3 with them shown.
//!
//! What differs between kinds is data in a [`DocKind`]: the node that loads the input and the
//! one that finishes, the template and rubric paths, the words of the prompts and gates, and
//! whether pre-flight checks the tracker. A third kind is a new `DocKind`, not new nodes.

pub(crate) mod calls;
mod checks;
mod front_matter;
mod gates;
mod kind;
pub(crate) mod nodes;
pub mod prompts;

pub use crate::caller::CallObserver;
pub use calls::strip_gavel_comments;
pub use checks::ChecksRecord;
pub use kind::{DocKind, FinishFn, LoadFn};

use std::path::{Path, PathBuf};

use gavel_core::{ContentHash, NodeCtx, NodeError, Transition, Workflow};
use gavel_llm::Provider;
use serde::{Deserialize, Serialize};

use crate::lineage::Lineage;
use crate::verdict::Verdict;
use gavel_tracker::Tracker;

/// The nodes every kind shares, in graph order (N0 and N6 are the kind's own).
pub mod node {
    pub const PREFLIGHT: &str = "N1_preflight";
    pub const DRAFT: &str = "N2_draft";
    pub const DRAFT_GATE: &str = "N3_draft_gate";
    pub const REVIEW: &str = "N4_review";
    pub const VERDICT_GATE: &str = "N5_verdict_gate";
}

/// Settings the workflow needs from the outside world.
#[derive(Debug, Clone)]
pub struct DocSettings {
    /// The repository's top-level folder.
    pub repo_root: PathBuf,
    /// Lineage folder, repository-relative (`docs/lineage`).
    pub lineage_dir: PathBuf,
    /// Ideas folder, repository-relative (`ideas`).
    pub ideas_dir: PathBuf,
    /// The template the drafter fills in, repository-relative (default: the kind's).
    pub template_path: PathBuf,
    /// The most drafts a run may write before it halts.
    pub max_iterations: u32,
    /// The editor program pre-flight must find (interactive runs only).
    pub editor_program: Option<String>,
    /// How model calls are made and accounted (budget, prices, verification, output cap).
    pub calls: crate::caller::CallerSettings,
    /// The provider strings the workflow's providers were built from.
    pub roles: Roles,
    /// The drafter may read the repository (an agent CLI with read-only tools, working in the
    /// repository); otherwise it only answers, from the input and the validated context.
    pub drafter_reads_repo: bool,
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
    /// The model that answered (`None` in runs recorded by an older gavel).
    #[serde(default)]
    pub model: Option<String>,
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
/// hash rather than copied, so checkpoints stay small however long the run. The field names
/// are those of the first kind (brief → issue), so checkpoints of older runs load: `brief*`
/// is the input (for an LLD, the issue as read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocState {
    /// Random per run; the tracker's idempotency key and the commit trailer derive from it.
    pub run_key: String,
    /// The input as given by the person (a brief's path, an issue reference).
    pub brief_file: String,
    /// The input's text, only until N0 has stored it as a blob.
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
    pub tracker: Option<gavel_tracker::TrackerRef>,
    /// An LLD run: the issue it designs for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design_for: Option<DesignFor>,
    /// The validated context files (`--context`): the manifest in the lineage and the text
    /// the drafter is given, as blobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextRecord>,
    /// The context's text, only until N0 has stored it as a blob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_text: Option<String>,
    /// The context's manifest (JSON), only until N0 has written it to the lineage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_manifest: Option<String>,
    /// An LLD run, once approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<Approved>,
    /// The draft before the current one, for gavel's checks (nothing revised?).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_draft: Option<ContentHash>,
    /// gavel's own checks of the latest draft checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<ChecksRecord>,
}

/// The issue an LLD is designed for, as read at N0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesignFor {
    /// The reference the person gave (`12`, `octo/app#12`, a URL).
    pub reference: String,
    pub number: u64,
    pub url: String,
    pub title: String,
}

/// The validated context of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRecord {
    /// The manifest's lineage file.
    pub manifest: String,
    /// The files' text as the drafter sees it.
    pub text: ContentHash,
    pub files: usize,
    pub tokens: u64,
}

/// An approved LLD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approved {
    /// `docs/lld/active/LLD-{n}.md`.
    pub path: String,
    pub lineage: String,
    pub commit: Option<String>,
}

impl DocState {
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
            design_for: None,
            context: None,
            context_text: None,
            context_manifest: None,
            approved: None,
            previous_draft: None,
            checks: None,
        }
    }
}

/// A document workflow of one kind, with its providers and tracker.
pub struct DocWorkflow {
    /// What kind of document it makes.
    pub kind: &'static DocKind,
    pub settings: DocSettings,
    pub drafter: Box<dyn Provider>,
    pub reviewer: Box<dyn Provider>,
    pub tracker: Box<dyn Tracker>,
    /// Told about calls while they run (for a live display).
    pub observer: Option<std::sync::Arc<dyn CallObserver>>,
    /// Whether [`DocWorkflow::preflight_problems`] just found nothing (`Default`: not checked).
    pub preflight: PreflightMemo,
}

/// That pre-flight passed in this process a moment ago: the CLI checks before it creates a run,
/// and N1, which follows at once, then need not read every file and probe the tracker again.
/// Used once: N1 taking it resets it, so another visit checks afresh.
#[derive(Debug, Default)]
pub struct PreflightMemo(std::sync::atomic::AtomicBool);

impl PreflightMemo {
    fn record(&self, passed: bool) {
        self.0.store(passed, std::sync::atomic::Ordering::SeqCst);
    }

    fn take(&self) -> bool {
        self.0.swap(false, std::sync::atomic::Ordering::SeqCst)
    }
}

impl DocWorkflow {
    pub(crate) fn lineage(&self, s: &DocState) -> Lineage {
        Lineage::active(
            &self.settings.repo_root,
            &self.settings.lineage_dir,
            &s.slug,
        )
    }

    pub(crate) fn root(&self) -> &Path {
        &self.settings.repo_root
    }

    /// Records the roles in the run, and any change to them (`gavel resume --role`) in the
    /// timeline and, through `role_change`, in the next verdict header.
    fn sync_roles(&self, s: &mut DocState, cx: &mut NodeCtx<'_>) {
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
        let problems = self.problems();
        self.preflight.record(problems.is_empty());
        problems
    }
}

impl Workflow for DocWorkflow {
    type State = DocState;

    fn name(&self) -> &'static str {
        self.kind.name
    }

    fn run_node(
        &self,
        name: &str,
        s: &mut DocState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        self.sync_roles(s, cx);
        if s.tracker.is_none() {
            s.tracker = Some(self.tracker.reference());
        }
        match name {
            node::PREFLIGHT => self.preflight(s, cx),
            node::DRAFT => self.draft(s, cx),
            node::DRAFT_GATE => self.draft_gate(s, cx),
            node::REVIEW => self.review(s, cx),
            node::VERDICT_GATE => self.verdict_gate(s, cx),
            n if n == self.kind.load_node => (self.kind.load)(self, s, cx),
            n if n == self.kind.finish_node => (self.kind.finish)(self, s, cx),
            other => Err(NodeError::Failed(format!(
                "unknown node `{other}` in the {} workflow",
                self.kind.name
            ))),
        }
    }
}

pub(crate) fn goto(node: &str) -> Result<Transition, NodeError> {
    Ok(Transition::Goto(node.to_owned()))
}

pub(crate) fn io_failed(what: &str, path: &Path, e: std::io::Error) -> NodeError {
    NodeError::Failed(format!("cannot {what} {}: {e}", path.display()))
}
