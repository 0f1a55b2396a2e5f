//! The kit: what more than one workflow needs, so that no workflow imports another.
//!
//! gavel's workflows live in folders of their own (`document` with its kinds `issue` and
//! `lld`, `implement`, and `change` with its phases plan, impl and archive), and a workflow
//! folder never imports another's (`tests/workflows/layering.rs` holds the rule). What two of
//! them share lives here instead:
//!
//! - the steps every finishing node takes: a commit made exactly once (`commit.rs`) and a
//!   stored artifact read back as text (`blob_text`);
//! - gavel's own checks of a draft before a model judges it ([`checks`]: placeholders left,
//!   required sections missing or empty, no title or labels line, nothing revised), which the
//!   document workflow and the change plan both run;
//! - the test-first implementation pipeline that both `gavel implement ISSUE` (an issue's LLD,
//!   the `implement` workflow) and `gavel change impl ID` (a change's plan, the `change impl`
//!   workflow) run, differing only by their [`Stage`]:
//!
//! ```text
//! N0_load → N1_scaffold → N2_red_gate ─red→ N3_implement → N4_green_gate ─green→ N5_lint → N6_review → N7_merge → end
//!              ↑  tests pass already│          ↑   still red │              lint fails│   (diff gate, then approve)
//!              └────────────────────┘          └─────────────┴────────────────────────┘
//! ```
//!
//! (a change run adds its stage's code review between N5 and N6). All work happens in a git
//! worktree on branch `gavel/{issue}-impl` (or `gavel/change-{id}`) under
//! `.gavel/worktrees/`, made from the person's HEAD; their checkout is never touched until
//! the merge. Boxed (the default), the model's steps cannot reach it, so the person may work
//! in it meanwhile; unboxed (`sandbox = "none"`), it is fingerprinted before and after every
//! model step and any change stops the run. Routing comes from
//! the real test runner's result (see `gavel_exec::runners`) and from what the model's step
//! changed on disk ([`guard`]), never from what a model says. Retries are counted per step and
//! end in a halt, never in success. The diff gate and a typed `approve` come before the merge.
//!
//! The pieces: [`answer`] (the strict "write these files" format of a text-only model),
//! [`guard`] (a step judged by its files), [`fingerprint`] (the person's checkout),
//! [`beneath`] (paths opened without following links), the run's [`state`], and the nodes in
//! `load.rs`, `step.rs`, `gates.rs` (with `stops.rs`) and `finish.rs` (with `approval.rs`,
//! `merge.rs` and `discard.rs`).

pub mod answer;
mod approval;
pub mod beneath;
pub mod checks;
pub(crate) mod commit;
mod discard;
pub mod fingerprint;
mod finish;
mod gates;
pub mod guard;
mod load;
mod merge;
mod prompts;
mod roles;
pub mod state;
mod step;
mod stops;
pub mod sweep;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use discard::{discard_run, kept_lineage_rel};
use gavel_core::{ContentHash, NodeCtx, NodeError, Transition, Workflow};
pub use gavel_exec::runners::RunnerKind;
use gavel_exec::runners::TestReport;
use gavel_llm::Provider;
pub use state::{
    ChangeTarget, GateRecord, ImplementState, LineageFile, Merged, change_lineage_rel,
    change_worktree_name, worktree_name,
};

use crate::caller::CallObserver;
use crate::lineage::Lineage;

/// What a workflow adds to the implementation pipeline: its name, and for a change run the
/// code review between the lint and the diff gate, with the change folder's bookkeeping
/// (`STATE.yaml`'s phase, the tasks ticked at green). `implement` has a stage that adds
/// nothing; `change impl` has its reviewer. The kit never names a workflow: it calls these.
pub trait Stage: Send + Sync {
    /// The workflow's name as stored with each run (`implement`, `change-impl`).
    fn workflow(&self) -> &'static str;

    /// The reviewer's provider, for the run's record of what is sent where.
    fn reviewer(&self) -> Option<String> {
        None
    }

    /// What keeps the stage from running, checked before a run starts (a reviewer's CLI that
    /// is missing), one problem a line.
    fn preflight(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the stage does at `moment` of the run (nothing, by default).
    fn at(
        &self,
        _moment: Moment,
        _wf: &ImplementWorkflow,
        _s: &mut ImplementState,
        _cx: &mut NodeCtx<'_>,
    ) -> Result<(), NodeError> {
        Ok(())
    }

    /// Runs one of the stage's own nodes (`None`: `name` is not one of them).
    fn run_node(
        &self,
        _wf: &ImplementWorkflow,
        _name: &str,
        _s: &mut ImplementState,
        _cx: &mut NodeCtx<'_>,
    ) -> Option<Result<Transition, NodeError>> {
        None
    }
}

/// The moments of a run a [`Stage`] may act at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// The end of N0, once the worktree and lineage exist.
    Loaded,
    /// The tests first pass, before the green milestone.
    Green,
}

/// A stored artifact read back as text (a draft, an LLD, a plan).
pub(crate) fn blob_text(cx: &NodeCtx<'_>, hash: Option<&ContentHash>) -> Result<String, NodeError> {
    let hash =
        hash.ok_or_else(|| NodeError::Failed("the run state lost an artifact reference".into()))?;
    let bytes = cx.get_blob(hash)?;
    String::from_utf8(bytes).map_err(|_| NodeError::Failed(format!("blob {hash} is not UTF-8")))
}

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
    /// How many finished boxed runs' worktrees are kept as spares for the next run to start
    /// from (`[implement] spare_worktrees`; `gavel_exec::git::Git::worktree_retire`).
    pub spare_worktrees: usize,
    /// The variables of this process that look like an attempt to skip the diff gate, for its
    /// audit line (see `gavel_diffgate::bypass_variables`); they change nothing.
    pub bypass_attempts: Vec<String>,
}

/// The implementation pipeline with its provider and the stage of the workflow it runs.
pub struct ImplementWorkflow {
    pub settings: ImplementSettings,
    pub implementer: Box<dyn Provider>,
    /// The workflow this is (`implement::Issue`, or a change run's reviewer: the code review
    /// after the lint).
    pub stage: Box<dyn Stage>,
    pub observer: Option<std::sync::Arc<dyn CallObserver>>,
    /// The last look at the worktree after an untrusted run, for the next one's look before
    /// (`sweep.rs`); empty in a new process.
    pub carry: sweep::Carry,
}

impl ImplementWorkflow {
    pub(crate) fn root(&self) -> &Path {
        &self.settings.repo_root
    }

    /// The worktree's folder, once N0 made it.
    pub(crate) fn worktree(&self, s: &ImplementState) -> Result<PathBuf, NodeError> {
        s.worktree
            .as_ref()
            .map(PathBuf::from)
            .ok_or_else(|| NodeError::Failed("the run has no worktree yet".into()))
    }

    /// How the worktree's snapshots hash its files: through the worktree's own kept index
    /// (only changed files are hashed) when the box keeps agents, tests and lint out of git's
    /// folder, where that index lives; every file afresh when nothing does (`sandbox = "none"`).
    fn scratch(&self) -> gavel_exec::git::Scratch {
        if self.settings.confine.is_some() {
            gavel_exec::git::Scratch::Kept
        } else {
            gavel_exec::git::Scratch::Fresh
        }
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
    pub(crate) fn without_lineage(&self, s: &ImplementState) -> Result<String, NodeError> {
        Ok(format!(":!{}", self.lineage(s)?.rel().display()))
    }

    /// Writes a numbered lineage file and records it in the timeline.
    pub(crate) fn artifact(
        &self,
        s: &mut ImplementState,
        cx: &mut NodeCtx<'_>,
        kind: gavel_core::ArtifactKind,
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
        self.stage.workflow()
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
            node::REVIEW => self.review(s, cx),
            node::MERGE => self.merge(s, cx),
            other => self.stage.run_node(self, other, s, cx).unwrap_or_else(|| {
                Err(NodeError::Failed(format!(
                    "unknown node `{other}` in the implement workflow"
                )))
            }),
        }
    }
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

pub(crate) fn goto(node: &str) -> Result<Transition, NodeError> {
    Ok(Transition::Goto(node.to_owned()))
}

pub(crate) fn io_failed(what: &str, path: &Path, e: std::io::Error) -> NodeError {
    NodeError::Failed(format!("cannot {what} {}: {e}", path.display()))
}
