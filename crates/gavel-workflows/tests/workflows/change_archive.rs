//! The change-archive workflow in process: a delta spec edited while the archive gate waits,
//! or after the approval but before anything is archived, is merged again and asked again,
//! never archived unseen (issue 31).

use gavel_core::{Outcome, RunId};
use gavel_workflows::change::archive::{ArchiveState, ArchiveWorkflow, node};

use crate::kit::{Kit, aborted, answer, halted};

const ID: &str = "add-passkeys";
const CHANGE: &str = "openspec/changes/add-passkeys";
const LIVING: &str = "openspec/specs/auth/spec.md";

const LIVING_AUTH: &str = "# auth Specification\n\n## Purpose\nWho may sign in.\n\n## Requirements\n### Requirement: Login\nThe system SHALL let a user sign in with a password.\n\n#### Scenario: Right password\n- **WHEN** the password is right\n- **THEN** the user is signed in\n";

const DELTA: &str = "## ADDED Requirements\n### Requirement: Passkey\nThe system SHALL let a user sign in with a passkey.\n\n#### Scenario: Passkey\n- **WHEN** a passkey is offered\n- **THEN** the user is signed in\n";

/// The same delta with one more requirement: the edit made while the gate waits.
fn edited_delta() -> String {
    format!(
        "{DELTA}\n### Requirement: Recovery\nThe system SHALL let a user recover a lost passkey.\n\n#### Scenario: Lost\n- **WHEN** a passkey is lost\n- **THEN** a recovery code signs the user in\n"
    )
}

/// A complete change with every task checked, committed.
fn complete_change(kit: &Kit) {
    kit.write(LIVING, LIVING_AUTH);
    kit.write(
        &format!("{CHANGE}/proposal.md"),
        "# Change: Add passkeys\n\n## Why\nPasswords leak.\n\n## What Changes\n- Passkeys\n",
    );
    kit.write(&format!("{CHANGE}/specs/auth/spec.md"), DELTA);
    kit.write(
        &format!("{CHANGE}/tasks.md"),
        "## 1. Logic Layer\n- [x] 1.1 Passkey check\n",
    );
    kit.write(
        &format!("{CHANGE}/STATE.yaml"),
        "format: 1\nchange_id: add-passkeys\nphase: complete\nupdated_at: 2026-01-30T14:00:00Z\n",
    );
    kit.git(&["add", "-A"]);
    kit.git(&["commit", "-q", "-m", "change"]);
}

fn start(kit: &Kit, wf: &ArchiveWorkflow, state: &ArchiveState, at: &str) -> RunId {
    kit.engine(wf)
        .start_claiming_slug(ID, state, at)
        .expect("start")
}

fn new_state(kit: &Kit) -> ArchiveState {
    ArchiveState::new("k1".into(), ID, "openspec", kit.clock.0)
}

#[test]
fn regression_a_delta_spec_edited_while_the_gate_waits_is_merged_again_and_asked_again() {
    let kit = Kit::new();
    complete_change(&kit);
    let wf = ArchiveWorkflow {
        repo_root: kit.repo.clone(),
    };
    let run = start(&kit, &wf, &new_state(&kit), node::LOAD);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.node, node::CONFIRM);
    // The delta spec is edited while the person reads the diff.
    kit.write(&format!("{CHANGE}/specs/auth/spec.md"), &edited_delta());
    let again = kit.to_gate(&wf, run, answer(&gate, "approve"));
    assert_eq!(again.node, node::CONFIRM, "asked again");
    assert_ne!(again.id, gate.id, "a new question, not the old one");
    assert!(
        kit.timeline(run)
            .contains("specs/auth/spec.md changed while the gate waited"),
        "{}",
        kit.timeline(run)
    );
    assert_eq!(kit.read(LIVING), LIVING_AUTH, "nothing merged yet");
    let diff = kit.read(&format!("{CHANGE}/lineage/002-spec-diff.md"));
    assert!(diff.contains("+### Requirement: Recovery"), "{diff}");
    match kit.drive(&wf, run, answer(&again, "approve")) {
        Ok(Outcome::Done { .. }) => {}
        other => panic!("expected the archive, got {other:?}"),
    }
    let living = kit.read(LIVING);
    assert!(
        living.contains("### Requirement: Recovery") && living.contains("### Requirement: Passkey"),
        "the edited delta is what was merged: {living}"
    );
}

#[test]
fn a_delta_spec_added_or_removed_while_the_gate_waits_is_noticed_too() {
    let kit = Kit::new();
    complete_change(&kit);
    let wf = ArchiveWorkflow {
        repo_root: kit.repo.clone(),
    };
    let run = start(&kit, &wf, &new_state(&kit), node::LOAD);
    let gate = kit.to_gate(&wf, run, None);
    kit.write(
        &format!("{CHANGE}/specs/audit/spec.md"),
        "## ADDED Requirements\n### Requirement: Log\nThe system SHALL log sign-ins.\n\n#### Scenario: Logged\n- **WHEN** a user signs in\n- **THEN** a line is written\n",
    );
    let again = kit.to_gate(&wf, run, answer(&gate, "approve"));
    assert_eq!(again.node, node::CONFIRM);
    assert!(
        kit.timeline(run)
            .contains("specs/audit/spec.md changed while the gate waited"),
        "{}",
        kit.timeline(run)
    );
    assert!(
        again
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("openspec/specs/audit/spec.md")),
        "{again:?}"
    );
}

#[test]
fn a_delta_spec_edited_after_the_approval_before_anything_was_archived_is_asked_again() {
    // A run stopped between the approval and A2 (a crash) whose delta specs are no longer
    // what A0 merged: A2 merges again and asks again instead of archiving the edit unseen.
    let kit = Kit::new();
    complete_change(&kit);
    let wf = ArchiveWorkflow {
        repo_root: kit.repo.clone(),
    };
    let run = start(&kit, &wf, &new_state(&kit), node::ARCHIVE);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.node, node::CONFIRM, "merged again and asked");
    assert!(
        kit.timeline(run).contains("changed after the approval"),
        "{}",
        kit.timeline(run)
    );
    assert_eq!(kit.read(LIVING), LIVING_AUTH, "nothing written");
    assert!(kit.path(CHANGE).is_dir(), "nothing archived");
}

/// The archive workflow over the kit's repository, with a run started at A0.
fn archive_run(kit: &Kit) -> (ArchiveWorkflow, RunId) {
    let wf = ArchiveWorkflow {
        repo_root: kit.repo.clone(),
    };
    let run = start(kit, &wf, &new_state(kit), node::LOAD);
    (wf, run)
}

#[test]
fn an_approval_merges_the_specs_and_archives_the_change_in_one_commit() {
    let kit = Kit::new();
    complete_change(&kit);
    let (wf, run) = archive_run(&kit);
    let gate = kit.to_gate(&wf, run, None);
    assert_eq!(gate.present.confirm, gavel_core::Confirm::Word);
    let done = kit
        .drive(&wf, run, answer(&gate, "approve"))
        .expect("drive");
    assert!(matches!(done, Outcome::Done { .. }), "{done:?}");
    assert!(kit.read(LIVING).contains("### Requirement: Passkey"));
    let archived = "openspec/changes/archive/2026-01-30-add-passkeys";
    assert!(
        kit.read(&format!("{archived}/STATE.yaml"))
            .contains("phase: archived")
    );
    assert!(!kit.path(CHANGE).exists());
    let log = kit.git(&["log", "--format=%s"]);
    assert_eq!(
        log.lines().next(),
        Some("gavel: archive change add-passkeys"),
        "{log}"
    );
    assert!(
        kit.git(&["status", "--porcelain"]).trim().is_empty(),
        "all in the commit"
    );
}

#[test]
fn a_rejection_writes_nothing() {
    let kit = Kit::new();
    complete_change(&kit);
    let (wf, run) = archive_run(&kit);
    let gate = kit.to_gate(&wf, run, None);
    let reason = aborted(kit.drive(&wf, run, answer(&gate, "reject")));
    assert!(reason.contains("nothing was merged"), "{reason}");
    assert_eq!(kit.read(LIVING), LIVING_AUTH);
    assert!(
        kit.read(&format!("{CHANGE}/STATE.yaml"))
            .contains("phase: complete")
    );
}

#[test]
fn an_open_task_or_a_delta_that_does_not_apply_halts_before_anything_is_merged() {
    for (file, text, why) in [
        (
            "tasks.md",
            "## 1. Logic Layer\n- [ ] 1.1 Passkey check\n",
            "1 open task(s)",
        ),
        (
            "specs/auth/spec.md",
            "## MODIFIED Requirements\n### Requirement: Logout\nThe system SHALL sign a user out.\n\n#### Scenario: Out\n- **WHEN** a user signs out\n- **THEN** the session ends\n",
            "do not merge",
        ),
    ] {
        let kit = Kit::new();
        complete_change(&kit);
        kit.write(&format!("{CHANGE}/{file}"), text);
        let (wf, run) = archive_run(&kit);
        let reason = halted(kit.drive(&wf, run, None));
        assert!(reason.contains(why), "{file}: {reason}");
        assert_eq!(kit.read(LIVING), LIVING_AUTH, "{file}");
    }
}
