//! `gavel change plan ID [DESCRIPTION]`: the planner writes the plan, the challenger judges it
//! (seed 003, WF-R2/WF-R3).
//!
//! ```text
//! P1_proposal → P2_specs → P3_tasks → P4_challenge ─APPROVED→ P5_decide (implement / view)
//!                                        ↑    │ APPROVED with findings → P5_decide (implement / view / continue)
//!                                        │    │ NEEDS_REVISION, rounds left → P6_reproposal ─┐
//!                                        │    │ NEEDS_REVISION, none left → P5_decide (implement / view / continue)
//!                                        │    └ REJECTED → phase rejected, the run ends
//!                                        └────────────────────────────────────────────────────┘
//! ```
//!
//! The command picks the first node from `STATE.yaml`'s phase (a new change starts at
//! P1; a `proposed` one at P4, or at the first missing file for a change another tool
//! began). Each planner step answers with whole files that are all checked before any is
//! written ([`files`]); a refused answer is fed back and retried (`retries`), then the run
//! halts. The specs are written in dependency order (a spec that links another capability
//! after it). The challenger's verdict is one JSON block read strictly (anything else is
//! retried, then halts: never an approval); gavel appends it to `proposal.md` as a review
//! section and moves the phase. Only a clean approval (no findings) makes the change
//! `challenged` by itself; an APPROVED that lists findings leaves it `proposed` until a person
//! accepts the plan at P5, as the issue workflow treats an approval that carries findings. `STATE.yaml` is written from the run's state after every
//! step, so a crash never leaves it ahead of or behind the checkpoint for long: the next
//! node visit rewrites it.

pub mod files;
mod nodes;
mod prompts;

use gavel_core::ArtifactKind;
use std::path::PathBuf;
use std::sync::Arc;

use gavel_core::{EventKind, NodeCtx, NodeError, Transition, Workflow};
use gavel_llm::Provider;
use serde::{Deserialize, Serialize};

use super::ChangeDir;
use super::state::{ChangeState, Phase, Verdict, save_state};
use crate::caller::{CallObserver, Spend};

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "change-plan";

/// The default number of challenge rounds (WF-R3's `planning_iterations`).
pub const DEFAULT_PLANNING_ITERATIONS: u32 = 3;

/// The lineage file recording the proposal a challenger rejected (`NNN-rejected.json`).
pub const REJECTED_SUFFIX: &str = "rejected.json";

/// Whether the proposal was edited since the challenger last rejected it: `None` when no
/// rejection is recorded in the change's lineage.
pub fn edited_since_rejection(dir: &ChangeDir) -> Option<bool> {
    let lineage = dir.dir().join("lineage");
    let mut records: Vec<String> = std::fs::read_dir(&lineage)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(&format!("-{REJECTED_SUFFIX}")))
        .collect();
    records.sort_by_key(|n| n.split('-').next().and_then(|k| k.parse::<u64>().ok()));
    let latest = records.last()?;
    let text = super::read::read_text(&lineage.join(latest)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let rejected = value["proposal_sha256"].as_str()?.to_owned();
    let now = super::read::read_bytes(&dir.proposal()).ok()?;
    Some(gavel_core::ContentHash::of(&now).to_string() != rejected)
}

/// Node names, in graph order.
pub mod node {
    pub const PROPOSAL: &str = "P1_proposal";
    pub const SPECS: &str = "P2_specs";
    pub const TASKS: &str = "P3_tasks";
    pub const CHALLENGE: &str = "P4_challenge";
    pub const DECIDE: &str = "P5_decide";
    pub const REPROPOSAL: &str = "P6_reproposal";
}

/// What the workflow needs from the outside world.
#[derive(Debug, Clone)]
pub struct PlanSettings {
    pub repo_root: PathBuf,
    /// Extra attempts of a step whose answer was refused.
    pub retries: u32,
    pub calls: crate::caller::CallerSettings,
    /// The planner's and the challenger's provider strings this workflow was built with (a
    /// resume: the run's own, with any `gavel resume --role` change).
    pub roles: (String, String),
}

/// The plan workflow with its providers.
pub struct PlanWorkflow {
    pub settings: PlanSettings,
    pub planner: Box<dyn Provider>,
    pub challenger: Box<dyn Provider>,
    pub observer: Option<Arc<dyn CallObserver>>,
}

/// The workflow's state, checkpointed after every node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanState {
    pub run_key: String,
    pub change_id: String,
    /// The OpenSpec tree, repository-relative (`openspec`).
    pub changes_root: String,
    /// What the person asked for (a new change).
    pub description: Option<String>,
    pub started_at: String,
    /// The planner's and the challenger's provider strings (a resume keeps them).
    pub planner: String,
    pub challenger: String,
    /// Notes for the timeline from before the run existed (what `STATE.yaml` said, a
    /// person's edit honoured), recorded by the first node.
    #[serde(default)]
    pub start_notes: Vec<String>,
    /// The change's `STATE.yaml`, as this run keeps it.
    pub phase: Phase,
    pub planning_iterations: u32,
    pub implementation_iterations: u32,
    pub last_verdict: Option<Verdict>,
    /// Challenge rounds allowed (a person's `continue` adds one).
    pub max_iterations: u32,
    pub file_counter: u32,
    pub planner_calls: u32,
    pub challenger_calls: u32,
    /// Refused answers of the current step so far.
    pub attempts: u32,
    /// Why the last answer was refused (told to the next attempt).
    pub feedback: Option<String>,
    /// The last challenge's findings.
    pub findings: Vec<String>,
    /// The last challenge's answer in the lineage (previewed at the decision).
    pub challenge_artifact: Option<String>,
    #[serde(flatten)]
    pub spend: Spend,
}

impl PlanState {
    /// The state of a new run for a change now in `state`.
    pub fn new(
        run_key: String,
        changes_root: &str,
        state: &ChangeState,
        description: Option<String>,
        max_iterations: u32,
        roles: (String, String),
        now: &str,
    ) -> Self {
        Self {
            planner: roles.0,
            challenger: roles.1,
            start_notes: Vec::new(),
            run_key,
            change_id: state.change_id.clone(),
            changes_root: changes_root.to_owned(),
            description,
            started_at: now.to_owned(),
            phase: state.phase,
            planning_iterations: state.planning_iterations,
            implementation_iterations: state.implementation_iterations,
            last_verdict: state.last_verdict,
            max_iterations,
            file_counter: 0,
            planner_calls: 0,
            challenger_calls: 0,
            attempts: 0,
            feedback: None,
            findings: Vec::new(),
            challenge_artifact: None,
            spend: Spend::default(),
        }
    }
}

impl PlanWorkflow {
    fn dir(&self, s: &PlanState) -> Result<ChangeDir, NodeError> {
        ChangeDir::new(self.settings.repo_root.join(&s.changes_root), &s.change_id)
            .map_err(|e| NodeError::Failed(e.to_string()))
    }

    /// Writes `STATE.yaml` from the run's state.
    fn write_state(&self, s: &PlanState, cx: &NodeCtx<'_>) -> Result<(), NodeError> {
        let dir = self.dir(s)?;
        let state = ChangeState {
            change_id: s.change_id.clone(),
            phase: s.phase,
            updated_at: cx.clock().now(),
            planning_iterations: s.planning_iterations,
            implementation_iterations: s.implementation_iterations,
            last_verdict: s.last_verdict,
        };
        save_state(&dir.state(), &state).map_err(|e| NodeError::Failed(e.to_string()))
    }

    /// Writes a numbered file into the change's `lineage/` and records it.
    fn artifact(
        &self,
        s: &mut PlanState,
        cx: &mut NodeCtx<'_>,
        kind: ArtifactKind,
        suffix: &str,
        bytes: &[u8],
    ) -> Result<String, NodeError> {
        let n = s.file_counter + 1;
        let rel = PathBuf::from(&s.changes_root)
            .join("changes")
            .join(&s.change_id)
            .join("lineage")
            .join(crate::lineage::artifact_name(n, suffix));
        let abs = self.settings.repo_root.join(&rel);
        crate::fsutil::write_atomic(&abs, bytes)
            .map_err(|e| NodeError::Failed(format!("cannot write {}: {e}", abs.display())))?;
        s.file_counter = n;
        let path = rel.to_string_lossy().into_owned();
        cx.artifact(kind, path.clone(), bytes, &[])?;
        Ok(path)
    }

    /// A refused answer: try again with the reason, or halt when the retries are used up.
    fn retry(&self, s: &mut PlanState, node: &str, what: &str, why: String) -> Transition {
        if s.attempts < self.settings.retries {
            s.attempts += 1;
            s.feedback = Some(why);
            Transition::Goto(node.to_owned())
        } else {
            Transition::Halt {
                reason: format!(
                    "the {what} was refused {} time(s); last reason: {why}; `gavel resume RUN` tries once more",
                    s.attempts + 1
                ),
            }
        }
    }
}

impl PlanWorkflow {
    /// Pins the roles this workflow was built with in the run, noting a change (`gavel resume
    /// --role`) in the timeline.
    fn sync_roles(&self, s: &mut PlanState, cx: &mut NodeCtx<'_>) {
        let (planner, challenger) = &self.settings.roles;
        let mut changes = Vec::new();
        for (role, was, is) in [
            ("planner", &mut s.planner, planner),
            ("challenger", &mut s.challenger, challenger),
        ] {
            if was != is {
                changes.push(format!("{role} {was} -> {is}"));
                was.clone_from(is);
            }
        }
        if !changes.is_empty() {
            cx.event(EventKind::Note {
                text: format!("role changed (gavel resume --role): {}", changes.join(", ")),
            });
        }
    }
}

impl Workflow for PlanWorkflow {
    type State = PlanState;

    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn run_node(
        &self,
        name: &str,
        s: &mut PlanState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        for text in std::mem::take(&mut s.start_notes) {
            cx.event(EventKind::Note { text });
        }
        self.sync_roles(s, cx);
        if s.planner_calls == 0
            && s.challenger_calls == 0
            && s.attempts == 0
            && name != node::DECIDE
        {
            // Before the run's first model call: what it sends where.
            let sent = [
                crate::disclosure::Sent {
                    role: "planner",
                    provider: &s.planner,
                    what: "your description of the change, the plan written so far (proposal, delta specs, tasks) and the challenger's findings",
                },
                crate::disclosure::Sent {
                    role: "challenger",
                    provider: &s.challenger,
                    what: "the whole plan (proposal, delta specs, tasks)",
                },
            ];
            crate::disclosure::record(cx, &sent, &[]);
        }
        match name {
            node::PROPOSAL => self.generate(s, cx, files::Expect::Proposal),
            node::SPECS => self.generate(s, cx, files::Expect::Specs),
            node::TASKS => self.generate(s, cx, files::Expect::Tasks),
            node::REPROPOSAL => self.generate(s, cx, files::Expect::Revision),
            node::CHALLENGE => self.challenge(s, cx),
            node::DECIDE => self.decide(s, cx),
            other => Err(NodeError::Failed(format!(
                "unknown node `{other}` in the change-plan workflow"
            ))),
        }
    }
}
