//! LLD → code, test first, in an isolated worktree (seed 002): `gavel implement ISSUE`.
//!
//! ```text
//! N0_load → N1_scaffold → N2_red_gate ─red→ N3_implement → N4_green_gate ─green→ N5_lint → N6_review → N7_merge → end
//!              ↑  tests pass already│          ↑   still red │              lint fails│   (diff gate, then approve)
//!              └────────────────────┘          └─────────────┴────────────────────────┘
//! ```
//!
//! All work happens in a git worktree on branch `gavel/{issue}-impl` under
//! `.gavel/worktrees/`, made from the person's HEAD; their checkout is never touched until
//! the merge. Boxed (the default), the model's steps cannot reach it, so the person may work
//! in it meanwhile; unboxed (`sandbox = "none"`), it is fingerprinted before and after every
//! model step and any change stops the run. Routing comes from
//! the real test runner's result (see `gavel_exec::runners`) and from what the model's step
//! changed on disk ([`guard`]), never from what a model says. Retries are counted per step and
//! end in a halt, never in success. The diff gate and a typed `approve` come before the merge.
//!
//! The pieces: [`answer`] (the strict "write these files" format of a text-only model),
//! [`guard`] (a step judged by its files), [`fingerprint`] (the person's checkout), and the
//! nodes in `load.rs`, `step.rs`, `gates.rs` and `finish.rs`.

pub mod answer;
mod approval;
pub mod beneath;
mod code_review;
mod discard;
pub mod fingerprint;
mod finish;
mod gates;
pub mod guard;
mod load;
mod merge;
mod prompts;
mod roles;
mod step;
mod stops;

use gavel_core::ArtifactKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use code_review::{CodeReviewer, McpLaunch};
pub use discard::{discard_run, kept_lineage_rel};
use gavel_core::{ContentHash, NodeCtx, NodeError, Transition, Workflow};
use gavel_exec::git::TreeId;
pub use gavel_exec::runners::RunnerKind;
use gavel_exec::runners::TestReport;
use gavel_llm::Provider;
use serde::{Deserialize, Serialize};

use crate::caller::CallObserver;
use crate::lineage::Lineage;

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "implement";

/// The name of runs that implement a spec-driven change (`gavel change impl`): the same
/// workflow with a reviewer.
pub const CHANGE_WORKFLOW: &str = "change-impl";

/// Node names, in graph order.
pub mod node {
    pub const LOAD: &str = "N0_load";
    pub const SCAFFOLD: &str = "N1_scaffold";
    pub const RED: &str = "N2_red_gate";
    pub const IMPLEMENT: &str = "N3_implement";
    pub const GREEN: &str = "N4_green_gate";
    pub const LINT: &str = "N5_lint";
    /// Change runs only: the reviewer's structured review.
    pub const CODE_REVIEW: &str = "N5b_code_review";
    /// Change runs only: MAJOR_ISSUES or no fix rounds left; a person decides.
    pub const REVIEW_STOP: &str = "N5c_review_stop";
    /// Change runs only: no readable review; the run halts.
    pub const REVIEW_HALT: &str = "N5d_review_halt";
    pub const REVIEW: &str = "N6_review";
    pub const MERGE: &str = "N7_merge";
}

/// A command run in the worktree: tests or lint.
#[derive(Debug, Clone)]
pub struct CommandSettings {
    /// Shell words (`pytest -q`, `cargo test`), never run through a shell.
    pub command: String,
    pub timeout: Duration,
}

/// What the workflow needs from the outside world.
#[derive(Debug, Clone)]
pub struct ImplementSettings {
    /// The person's checkout (the repository's top-level folder).
    pub repo_root: PathBuf,
    /// Lineage folder, repository-relative (`docs/lineage`).
    pub lineage_dir: PathBuf,
    pub test: CommandSettings,
    /// How the test command's exit is read (pytest, cargo, node, go, generic).
    pub runner: RunnerKind,
    /// Test files by the runner's conventions (gitignore-style globs).
    pub test_globs: Vec<String>,
    /// `None`: no lint step (recorded as skipped, not as passed).
    pub lint: Option<CommandSettings>,
    pub scaffold_retries: u32,
    pub implement_retries: u32,
    /// The implementer is an agent CLI that edits the worktree itself (else it answers in the
    /// [`answer`] format).
    pub agent: bool,
    /// The Landlock launcher that confines an agent implementer's whole process tree to the
    /// worktree (the provider adds the call's temporary folder and the CLI's own state).
    /// `None`: an agent runs unconfined (`[implement] sandbox = "none"`), which N0 records in
    /// the timeline.
    pub confine: Option<gavel_exec::confine::Launcher>,
    pub calls: crate::caller::CallerSettings,
    /// The implementer's provider string.
    pub implementer: String,
    /// A change run's reviewer's provider string (`None` for an issue's run).
    pub reviewer: Option<String>,
    /// The diff gate's audit log, repository-relative (written in the worktree, merged with
    /// the code).
    pub audit_log: PathBuf,
    /// How much of a test run's output is kept.
    pub output_limit: usize,
    /// More variables the boxed tests, lint and agent may see than the box's allowlist
    /// (`[implement] pass_env`; see `gavel_exec::sandbox_env`).
    pub pass_env: Vec<String>,
    /// Whether boxed tests and lint may use the network (`[implement] test_network`).
    pub test_network: bool,
    /// The variables of this process that look like an attempt to skip the diff gate, for its
    /// audit line (see `gavel_diffgate::bypass_variables`); they change nothing.
    pub bypass_attempts: Vec<String>,
}

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
    pub file_counter: u32,
    pub scaffold_attempts: u32,
    pub implement_attempts: u32,
    /// The implementer's provider string, pinned when the run starts and kept on every resume
    /// (`gavel resume --role implementer=P` changes it, in the timeline). `None` only in runs
    /// started by a gavel that did not pin it: see [`roles`].
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
    pub verdict: Option<crate::change::state::Verdict>,
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

/// The implementation workflow with its provider.
pub struct ImplementWorkflow {
    pub settings: ImplementSettings,
    pub implementer: Box<dyn Provider>,
    /// Set for a change run (its runs are `change-impl`): the code review after the lint.
    pub reviewer: Option<CodeReviewer>,
    pub observer: Option<std::sync::Arc<dyn CallObserver>>,
}

impl ImplementWorkflow {
    fn root(&self) -> &Path {
        &self.settings.repo_root
    }

    /// The worktree's folder, once N0 made it.
    fn worktree(&self, s: &ImplementState) -> Result<PathBuf, NodeError> {
        s.worktree
            .as_ref()
            .map(PathBuf::from)
            .ok_or_else(|| NodeError::Failed("the run has no worktree yet".into()))
    }

    /// The run's worktree as gavel's own git sees it: its git folder and work tree named
    /// explicitly, hooks off (`Git::linked`), so nothing the model's code writes in the
    /// worktree (its `.git` pointer included) changes which repository gavel acts on.
    fn wt_git(&self, s: &ImplementState) -> Result<gavel_exec::git::Git, NodeError> {
        gavel_exec::git::Git::at(self.root())
            .linked(&s.worktree_name())
            .map_err(|e| NodeError::Failed(format!("cannot use the run's worktree: {e}")))
    }

    /// The run's lineage folder, inside the worktree until the merge (a change's is its own
    /// `lineage/` folder).
    fn lineage(&self, s: &ImplementState) -> Result<Lineage, NodeError> {
        Ok(Lineage::at(
            &self.worktree(s)?,
            s.lineage_rel(&self.settings.lineage_dir),
        ))
    }

    /// Where the lint sends the run: the code review of a change, else the diff gate.
    fn after_lint(&self, s: &ImplementState) -> &'static str {
        if s.change.is_some() {
            node::CODE_REVIEW
        } else {
            node::REVIEW
        }
    }

    /// The git pathspec that leaves the lineage out (of a diff, a commit).
    fn without_lineage(&self, s: &ImplementState) -> Result<String, NodeError> {
        Ok(format!(":!{}", self.lineage(s)?.rel().display()))
    }

    /// Writes a numbered lineage file and records it in the timeline.
    fn artifact(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        kind: ArtifactKind,
        suffix: &str,
        bytes: &[u8],
    ) -> Result<String, NodeError> {
        let lineage = self.lineage(s)?;
        let n = s.file_counter + 1;
        let rel = lineage
            .write(n, suffix, bytes)
            .map_err(|e| io_failed("write", &lineage.artifact_rel(n, suffix), e))?;
        s.file_counter = n;
        let path = rel.to_string_lossy().into_owned();
        cx.artifact(kind, path.clone(), bytes, &[])?;
        s.keep_lineage_file(crate::lineage::artifact_name(n, suffix), bytes);
        Ok(path)
    }
}

impl Workflow for ImplementWorkflow {
    type State = ImplementState;

    fn name(&self) -> &'static str {
        if self.reviewer.is_some() {
            CHANGE_WORKFLOW
        } else {
            WORKFLOW
        }
    }

    fn run_node(
        &self,
        name: &str,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        self.sync_roles(s, cx);
        match name {
            node::LOAD => self.load(s, cx),
            node::SCAFFOLD => self.model_step(s, cx, guard::Step::Scaffold),
            node::RED => self.red_gate(s, cx),
            node::IMPLEMENT => self.model_step(s, cx, guard::Step::Implement),
            node::GREEN => self.green_gate(s, cx),
            node::LINT => self.lint(s, cx),
            node::CODE_REVIEW => self.code_review(s, cx),
            node::REVIEW_STOP => self.review_stop(s, cx),
            node::REVIEW_HALT => self.review_halt(s, cx),
            node::REVIEW => self.review(s, cx),
            node::MERGE => self.merge(s, cx),
            other => Err(NodeError::Failed(format!(
                "unknown node `{other}` in the implement workflow"
            ))),
        }
    }
}

/// A change's lineage folder, repository-relative: `{root}/changes/ID/lineage`.
pub fn change_lineage_rel(c: &ChangeTarget) -> PathBuf {
    PathBuf::from(&c.changes_root)
        .join("changes")
        .join(&c.id)
        .join("lineage")
}

/// One test run's record: its report, for the lineage.
fn report_text(report: &TestReport) -> String {
    let mut text = format!("# {}\n\n", report.summary);
    for run in report.build.iter().chain(report.run.iter()) {
        text.push_str(&format!(
            "exit: {:?}  signal: {:?}  duration: {:.1}s{}\n\n```text\n{}\n```\n\n",
            run.exit_code,
            run.signal,
            run.duration.as_secs_f64(),
            if run.timed_out.is_some() {
                "  (timed out)"
            } else {
                ""
            },
            run.output.trim_end()
        ));
    }
    text
}

fn goto(node: &str) -> Result<Transition, NodeError> {
    Ok(Transition::Goto(node.to_owned()))
}

fn io_failed(what: &str, path: &Path, e: std::io::Error) -> NodeError {
    NodeError::Failed(format!("cannot {what} {}: {e}", path.display()))
}
