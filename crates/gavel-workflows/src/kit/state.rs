//! What an implementation run keeps: its checkpointed state (an issue's or a change's), the
//! records of its test runs and lineage files, and the names of its worktree and lineage
//! folder. Both the `implement` and the `change impl` workflows store runs of this shape.

use std::path::{Path, PathBuf};

use gavel_core::ContentHash;
use gavel_exec::git::TreeId;
use serde::{Deserialize, Serialize};

use super::{approval, fingerprint};
use crate::verdict::ChangeVerdict;

/// A test or lint run, as the lineage and the person see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateRecord {
    /// The lineage file with the command's output.
    pub artifact: String,
    pub summary: String,
}

/// A lineage file as gavel wrote it: its name in the run's lineage folder and its content, a
/// blob in the store. The merge writes the lineage from these, never by copying the worktree's
/// folder (which the model's code can write).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineageFile {
    pub name: String,
    pub blob: ContentHash,
}

/// The merged result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merged {
    /// The implementation commit (on the base branch after the merge).
    pub commit: String,
    /// How it was merged: `fast-forward` or `merge commit`.
    pub how: String,
    pub lineage: String,
    pub lineage_commit: Option<String>,
}

/// The workflow's state, checkpointed after every node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplementState {
    /// Random per run; commit trailers derive from it.
    pub run_key: String,
    pub issue: u64,
    pub issue_title: String,
    /// The LLD's path in the person's checkout.
    pub lld_path: String,
    /// The test and lint commands the run started with (a resume keeps them).
    #[serde(default)]
    pub test_command: Option<String>,
    #[serde(default)]
    pub lint_command: Option<String>,
    /// Its text, only until N0 has stored it.
    pub lld_text: Option<String>,
    pub lld: Option<ContentHash>,
    /// The validated context: text (until N0), manifest (until N0), then its blob.
    pub context_text: Option<String>,
    pub context_manifest: Option<String>,
    pub context: Option<ContentHash>,
    pub auto: bool,
    pub started_at: String,
    /// The commit the worktree was made from, and the branch it is merged back into.
    pub base_commit: String,
    pub base_branch: String,
    /// The worktree's folder (absolute), once made.
    pub worktree: Option<String>,
    /// Whether every step and test run of this run was boxed, so its worktree's git folder
    /// was out of the model's code's reach and the worktree may be kept as a spare when the
    /// run ends (`[implement] spare_worktrees`). `false` in runs from before it was recorded.
    #[serde(default)]
    pub spare_ok: bool,
    pub file_counter: u32,
    pub scaffold_attempts: u32,
    pub implement_attempts: u32,
    /// The implementer's provider string, pinned when the run starts and kept on every resume
    /// (`gavel resume --role implementer=P` changes it, in the timeline). `None` only in runs
    /// started by a gavel that did not pin it: see `roles.rs`.
    #[serde(default)]
    pub implementer: Option<String>,
    /// Calls made to the implementer so far (the next call's sequence number).
    pub implementer_calls: u32,
    /// What the next model step is told (a refusal, a failing test run), as a blob.
    pub feedback: Option<ContentHash>,
    /// Why the last attempt failed, for the halt message when retries run out.
    pub last_failure: Option<String>,
    pub red: Option<GateRecord>,
    pub green: Option<GateRecord>,
    pub lint: Option<GateRecord>,
    /// The person's checkout when the run started, when unboxed (for the record; each model
    /// step then compares the checkout just before and just after itself). `None` when boxed.
    pub checkout: Option<fingerprint::Fingerprint>,
    /// The worktree's files after the green gate (what the person reviews).
    pub green_tree: Option<TreeId>,
    /// The tree a person approved at the diff gate, and that gate's checkpoint: N7 merges it
    /// only when the journal holds the typed approval of exactly that tree.
    #[serde(default)]
    pub approved: Option<approval::Approval>,
    /// Every lineage file gavel wrote, in order (empty for a run started before gavel kept
    /// them: its merge copies the folder's regular files instead).
    #[serde(default)]
    pub lineage_files: Vec<LineageFile>,
    /// The tests the red run's report listed (`None`: no report, or a run from before gavel
    /// read one): the green run must list each again, passed.
    #[serde(default)]
    pub red_tests: Option<gavel_exec::runners::TestListing>,
    /// The files the test-writing step wrote (test files and runner configuration), whose
    /// tests the green run must have run and passed.
    #[serde(default)]
    pub scaffold_files: Vec<String>,
    #[serde(flatten)]
    pub spend: crate::caller::Spend,
    pub merged: Option<Merged>,
    /// Set when the run implements a spec-driven change (`gavel change impl`) instead of an
    /// issue's LLD: the plan stands in for the LLD, a code review follows the lint, and the
    /// change's tasks, REVIEW.md and STATE.yaml move with the code.
    #[serde(default)]
    pub change: Option<ChangeTarget>,
}

/// The spec-driven change a run implements, and its review loop (seed 003, WF-R4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeTarget {
    pub id: String,
    /// The OpenSpec tree, repository-relative.
    pub changes_root: String,
    /// The reviewer's provider string (a resume keeps it).
    pub reviewer: String,
    /// Review rounds allowed (`implementation_iterations`; a person's `fix` adds one).
    pub max_rounds: u32,
    /// Review rounds so far (STATE.yaml's `implementation_iterations`).
    pub rounds: u32,
    /// Carried into STATE.yaml unchanged.
    pub planning_iterations: u32,
    pub reviewer_calls: u32,
    /// The last review's verdict.
    pub verdict: Option<ChangeVerdict>,
    /// The last REVIEW.md, as a lineage file.
    pub review_artifact: Option<String>,
    /// The open tasks were checked off (once the tests passed).
    pub tasks_checked: bool,
    /// The hash of the STATE.yaml gavel wrote in the person's checkout, put back to the
    /// committed one just before the merge (which brings the new one).
    pub checkout_state: Option<String>,
    /// Reviews in a row that could not be read.
    #[serde(default)]
    pub review_attempts: u32,
    /// Why the review loop stopped (for the halt).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// What `STATE.yaml` said when the command started, for the timeline.
    #[serde(default)]
    pub start_note: Option<String>,
}

impl ImplementState {
    /// Records a lineage file gavel wrote (a file of the same name written again keeps its
    /// last content).
    pub(crate) fn keep_lineage_file(&mut self, name: String, bytes: &[u8]) {
        self.keep_lineage_blob(name, ContentHash::of(bytes));
    }

    /// [`Self::keep_lineage_file`] for content already in the store.
    pub(crate) fn keep_lineage_blob(&mut self, name: String, blob: ContentHash) {
        self.lineage_files.retain(|f| f.name != name);
        self.lineage_files.push(LineageFile { name, blob });
    }

    /// The state of a new run.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        run_key: String,
        issue: u64,
        issue_title: String,
        lld_path: String,
        lld_text: String,
        base_commit: String,
        base_branch: String,
        auto: bool,
        now: String,
    ) -> Self {
        Self {
            run_key,
            issue,
            issue_title,
            lld_path,
            test_command: None,
            lint_command: None,
            lld_text: Some(lld_text),
            lld: None,
            context_text: None,
            context_manifest: None,
            context: None,
            auto,
            started_at: now,
            base_commit,
            base_branch,
            worktree: None,
            spare_ok: false,
            file_counter: 0,
            scaffold_attempts: 0,
            implement_attempts: 0,
            implementer: None,
            implementer_calls: 0,
            feedback: None,
            last_failure: None,
            red: None,
            green: None,
            lint: None,
            checkout: None,
            green_tree: None,
            approved: None,
            lineage_files: Vec::new(),
            red_tests: None,
            scaffold_files: Vec::new(),
            spend: crate::caller::Spend::default(),
            merged: None,
            change: None,
        }
    }

    /// The worktree's name (its folder under the worktree home, and `gavel/{name}`).
    pub fn worktree_name(&self) -> String {
        match &self.change {
            Some(c) => change_worktree_name(&c.id),
            None => worktree_name(self.issue),
        }
    }

    /// The lineage folder, relative to the worktree (and to the person's checkout, where a
    /// discarded run's lineage is kept): `{lineage}/active/{n}-impl`, or a change's own.
    pub fn lineage_rel(&self, lineage_dir: &Path) -> PathBuf {
        match &self.change {
            Some(c) => change_lineage_rel(c),
            None => lineage_dir.join("active").join(self.worktree_name()),
        }
    }

    /// What the run implements, for prompts and messages: `issue #12 (Title)` or
    /// `change `add-x` (Title)`.
    pub fn subject(&self) -> String {
        match &self.change {
            Some(c) => format!("change `{}` ({})", c.id, self.issue_title.trim()),
            None => format!("issue #{} ({})", self.issue, self.issue_title.trim()),
        }
    }
}

/// The worktree's name for change `id`: `change-{id}` (branch `gavel/change-{id}`).
pub fn change_worktree_name(id: &str) -> String {
    format!("change-{id}")
}

/// The worktree's name for issue `n`: `{n}-impl` (branch `gavel/{n}-impl`).
pub fn worktree_name(n: u64) -> String {
    format!("{n}-impl")
}

/// A change's lineage folder, repository-relative: `{root}/changes/ID/lineage`.
pub fn change_lineage_rel(c: &ChangeTarget) -> PathBuf {
    PathBuf::from(&c.changes_root)
        .join("changes")
        .join(&c.id)
        .join("lineage")
}
