//! The `change plan` workflow's routing, driven in process from the challenge (a `proposed`
//! change whose plan is written, as `gavel change plan` resumes one): a clean APPROVED makes the
//! change `challenged` and asks implement / view; NEEDS_REVISION sends the plan back to the
//! planner while rounds are left, then asks with `continue` too; an APPROVED with findings waits
//! for a person's acceptance; REJECTED ends the run with the phase `rejected`; a verdict that
//! cannot be read is asked again, then halts, never approving.

use gavel_core::{Outcome, RunId};
use gavel_llm::ScriptedProvider;
use gavel_workflows::change::ChangeDir;
use gavel_workflows::change::plan::{PlanSettings, PlanState, PlanWorkflow, node};
use gavel_workflows::change::state::{Phase, load_state};

use crate::change_impl_routing::{CHANGE, ID, planned_change};
use crate::kit::{Kit, aborted, answer, choices, halted};

/// The planner's revision of the proposal.
const REVISED: &str = "=== gavel:write proposal.md\n# Change: Add done\n\n## Why\nNothing says done, and it should.\n\n## What Changes\n- done.txt\n=== gavel:end\n";

/// A revision that writes the proposal exactly as it is on disk.
const UNCHANGED: &str = "=== gavel:write proposal.md\n# Change: Add done\n\n## Why\nNothing says done.\n\n## What Changes\n- done.txt\n=== gavel:end\n";

fn challenge(verdict: &str, findings: &[&str]) -> String {
    let findings = serde_json::to_string(findings).expect("json");
    format!("```json\n{{\"verdict\": \"{verdict}\", \"findings\": {findings}}}\n```\n")
}

/// A run of the challenge of a proposed change: the planner and the challenger answer in
/// order, with `retries` and `rounds` challenge rounds allowed.
pub(crate) fn plan_run(
    kit: &Kit,
    planner: &[&str],
    challenger: &[String],
    retries: u32,
    rounds: u32,
) -> (PlanWorkflow, RunId) {
    planned_change(kit, "proposed");
    let challenger: Vec<&str> = challenger.iter().map(String::as_str).collect();
    let script = kit.script(&[("planner", planner), ("challenger", &challenger)]);
    let roles = (
        "scripted:script.yaml".to_owned(),
        "scripted:script.yaml".to_owned(),
    );
    let wf = PlanWorkflow {
        settings: PlanSettings {
            repo_root: kit.root().to_path_buf(),
            retries,
            calls: crate::kit::calls(),
            roles: roles.clone(),
        },
        planner: Box::new(ScriptedProvider::new(script.clone())),
        challenger: Box::new(ScriptedProvider::new(script)),
        observer: None,
    };
    let dir = ChangeDir::new(kit.path("openspec"), ID).expect("change dir");
    let state = load_state(&dir).expect("STATE.yaml");
    let s = PlanState::new(
        "k1".into(),
        "openspec",
        &state,
        None,
        rounds,
        roles,
        "2026-01-30T14:33:20Z",
    );
    let run = kit
        .engine(&wf)
        .start_claiming_slug(ID, &s, node::CHALLENGE)
        .expect("start");
    (wf, run)
}

/// The challenger asks for a revision, then approves.
fn revise_then_approve() -> [String; 2] {
    [
        challenge("NEEDS_REVISION", &["say why"]),
        challenge("APPROVED", &[]),
    ]
}

fn phase(kit: &Kit) -> Phase {
    let dir = ChangeDir::new(kit.path("openspec"), ID).expect("change dir");
    load_state(&dir).expect("STATE.yaml").phase
}

#[test]
fn a_clean_approval_makes_the_change_challenged_and_implement_ends_the_run() {
    let kit = Kit::new();
    let (wf, run) = plan_run(&kit, &[], &[challenge("APPROVED", &[])], 0, 3);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(choices(&gate), ["implement", "view"], "{gate:?}");
    assert_eq!(phase(&kit), Phase::Challenged);
    assert!(
        kit.read(&format!("{CHANGE}/proposal.md"))
            .contains("## Challenge (round 1)")
    );
    let done = kit
        .drive(&wf, run, answer(&gate, "implement"))
        .expect("drive");
    let Outcome::Done { summary } = done else {
        panic!("expected the end, got {done:?}");
    };
    assert!(
        summary.contains("next: gavel change impl add-done"),
        "{summary}"
    );
}

#[test]
fn needs_revision_goes_back_to_the_planner_while_rounds_are_left() {
    let kit = Kit::new();
    let (wf, run) = plan_run(&kit, &[REVISED], &revise_then_approve(), 0, 3);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(choices(&gate), ["implement", "view"]);
    let s: PlanState = kit.state(run);
    assert_eq!(
        (s.planner_calls, s.challenger_calls, s.planning_iterations),
        (1, 2, 2)
    );
    assert!(
        kit.read(&format!("{CHANGE}/proposal.md"))
            .contains("and it should")
    );
}

#[test]
fn needs_revision_with_no_rounds_left_asks_a_person_and_continue_buys_one_more() {
    let kit = Kit::new();
    let (wf, run) = plan_run(&kit, &[REVISED], &revise_then_approve(), 0, 1);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(choices(&gate), ["implement", "view", "continue"]);
    assert!(
        gate.title.contains("still needs revision after 1 round(s)"),
        "{}",
        gate.title
    );
    assert_eq!(phase(&kit), Phase::Proposed);
    let next = kit.to_gate(&wf, run, answer(&gate, "continue"));
    assert_eq!(choices(&next), ["implement", "view"], "approved in round 2");
    let s: PlanState = kit.state(run);
    assert_eq!(s.max_iterations, 2);
}

#[test]
fn an_approval_with_findings_waits_for_a_person_who_may_accept_it() {
    let kit = Kit::new();
    let (wf, run) = plan_run(
        &kit,
        &[],
        &[challenge("APPROVED", &["name the file"])],
        0,
        3,
    );
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(choices(&gate), ["implement", "view", "continue"]);
    assert_eq!(gate.recommended.as_deref(), Some("continue"));
    assert_eq!(phase(&kit), Phase::Proposed, "not a clean approval");
    let done = kit
        .drive(&wf, run, answer(&gate, "implement"))
        .expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    assert_eq!(phase(&kit), Phase::Challenged);
    assert!(kit.timeline(run).contains("a person accepted the plan"));
}

#[test]
fn a_rejection_ends_the_run_with_the_phase_rejected() {
    let kit = Kit::new();
    let (wf, run) = plan_run(&kit, &[], &[challenge("REJECTED", &["not needed"])], 0, 3);
    let reason = aborted(kit.drive(&wf, run, None));
    assert!(
        reason.contains("the challenger rejected the plan"),
        "{reason}"
    );
    assert_eq!(phase(&kit), Phase::Rejected);
}

#[test]
fn a_verdict_that_cannot_be_read_is_asked_again_then_halts() {
    let kit = Kit::new();
    let verdicts = ["Looks fine.".to_owned(), "APPROVED, I think".to_owned()];
    let (wf, run) = plan_run(&kit, &[], &verdicts, 1, 3);
    let reason = halted(kit.drive(&wf, run, None));
    assert!(reason.contains("refused 2 time(s)"), "{reason}");
    assert_eq!(phase(&kit), Phase::Proposed);
}

#[test]
fn a_revision_that_changes_nothing_goes_back_to_the_planner_without_a_challenge() {
    let kit = Kit::new();
    let (wf, run) = plan_run(&kit, &[UNCHANGED, REVISED], &revise_then_approve(), 1, 3);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(choices(&gate), ["implement", "view"]);
    let s: PlanState = kit.state(run);
    assert_eq!(
        (s.planner_calls, s.challenger_calls),
        (2, 2),
        "the unchanged revision was never challenged"
    );
    let timeline = kit.timeline(run);
    assert!(
        timeline.contains("gavel's checks refused the planner's answer (attempt 1)")
            && timeline.contains("the revision changes no file of the plan"),
        "{timeline}"
    );
}

#[test]
fn unchanged_revisions_halt_when_the_retries_are_used_up() {
    let kit = Kit::new();
    let (wf, run) = plan_run(&kit, &[UNCHANGED, UNCHANGED], &revise_then_approve(), 1, 3);
    let reason = halted(kit.drive(&wf, run, None));
    assert!(
        reason.contains("refused 2 time(s)") && reason.contains("changes no file"),
        "{reason}"
    );
    let s: PlanState = kit.state(run);
    assert_eq!(s.challenger_calls, 1);
}
