//! `gavel change archive ID`: only a complete change with every task checked; its delta specs
//! merged into the living specs after a person sees the diff and types `approve`; the folder
//! moved to the archive with phase `archived`; one commit. Every refusal writes nothing.

use crate::util::*;

const LIVING_AUTH: &str = "# auth Specification\n\n## Purpose\nWho may sign in.\n\n## Requirements\n### Requirement: Login\nThe system SHALL let a user sign in with a password.\n\n#### Scenario: Right password\n- **WHEN** the password is right\n- **THEN** the user is signed in\n";

/// The living `Login` requirement's scenario `Right password` kept, one added (a MODIFIED
/// requirement replaces the whole block).
const DELTA_AUTH: &str = "## MODIFIED Requirements\n### Requirement: Login\nThe system SHALL let a user sign in with a password or a passkey.\n\n#### Scenario: Right password\n- **WHEN** the password is right\n- **THEN** the user is signed in\n\n#### Scenario: Passkey\n- **WHEN** a passkey is offered\n- **THEN** the user is signed in\n\n## ADDED Requirements\n### Requirement: Logout\nThe system SHALL let a user sign out.\n\n#### Scenario: Sign out\n- **WHEN** the user signs out\n- **THEN** the session ends\n";

const DELTA_AUDIT: &str = "## ADDED Requirements\n### Requirement: Sign-in log\nThe system SHALL record every sign-in.\n\n#### Scenario: Logged\n- **WHEN** a user signs in\n- **THEN** a log line is written\n";

const ARCHIVED: &str = "openspec/changes/archive/2026-01-30-add-passkeys";

/// A complete change `add-passkeys` (every task checked), committed.
fn complete_change(env: &Env, phase: &str, tasks_done: bool) {
    let c = "openspec/changes/add-passkeys";
    env.write("openspec/specs/auth/spec.md", LIVING_AUTH);
    env.write(
        &format!("{c}/proposal.md"),
        "# Change: Add passkeys\n\n## Why\nPasswords leak.\n\n## What Changes\n- Passkeys\n",
    );
    env.write(&format!("{c}/specs/auth/spec.md"), DELTA_AUTH);
    env.write(&format!("{c}/specs/audit/spec.md"), DELTA_AUDIT);
    let mark = if tasks_done { "x" } else { " " };
    env.write(
        &format!("{c}/tasks.md"),
        &format!("## 1. Logic Layer\n- [x] 1.1 Passkey check\n- [{mark}] 1.2 Logout\n"),
    );
    env.write(
        &format!("{c}/STATE.yaml"),
        &format!(
            "format: 1\nchange_id: add-passkeys\nphase: {phase}\nupdated_at: 2026-01-30T14:00:00Z\n"
        ),
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "change"]);
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Types `word` at the archive gate of run 1 in a terminal and returns the exit code.
fn answer_in_terminal(env: &Env, word: &str) -> i32 {
    let editor = crate::pty::fake_editor(env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.env("EDITOR", &editor).env("TERM", "dumb");
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the archive gate asks for the word");
    p.send_line(word).expect("answer");
    p.exp_eof().expect("eof");
    crate::pty::exit_code(&p)
}

#[test]
fn a_complete_change_is_merged_shown_approved_archived_and_committed_once() {
    let env = Env::new();
    complete_change(&env, "complete", true);
    let head = env.git(&["rev-parse", "HEAD"]);
    let out = env.run(&["change", "archive", "add-passkeys"]);
    assert_exit(&out, 3);
    let shown = format!("{}{}", stdout(&out), stderr(&out));
    assert!(shown.contains("spec-diff.md"), "{shown}");
    assert!(
        shown.contains("type one of: approve, reject"),
        "the merge is confirmed by the typed word: {shown}"
    );
    // Nothing merged while the gate waits; the diff is in the change's lineage.
    assert_eq!(env.read("openspec/specs/auth/spec.md"), LIVING_AUTH);
    let diff = env.read("openspec/changes/add-passkeys/lineage/001-spec-diff.md");
    assert!(
        diff.contains("+The system SHALL let a user sign in with a password or a passkey."),
        "{diff}"
    );
    assert!(
        diff.contains("-The system SHALL let a user sign in with a password."),
        "{diff}"
    );
    assert!(
        diff.contains("+++ b/openspec/specs/audit/spec.md"),
        "{diff}"
    );
    // --choice cannot answer it.
    let out = env.run(&["resume", "1", "--choice", "approve"]);
    assert_exit(&out, 2);

    assert_eq!(answer_in_terminal(&env, "approve"), 0);
    let auth = env.read("openspec/specs/auth/spec.md");
    assert!(
        auth.contains("or a passkey") && auth.contains("### Requirement: Logout"),
        "{auth}"
    );
    assert!(
        !auth.contains("with a password.\n"),
        "MODIFIED replaces: {auth}"
    );
    let audit = env.read("openspec/specs/audit/spec.md");
    assert!(audit.contains("### Requirement: Sign-in log"), "{audit}");
    assert!(!env.exists("openspec/changes/add-passkeys"));
    let state = env.read(&format!("{ARCHIVED}/STATE.yaml"));
    assert!(state.contains("phase: archived"), "{state}");
    assert!(env.exists(&format!("{ARCHIVED}/lineage/001-spec-diff.md")));
    let log = env.git(&["log", "--format=%s", &format!("{}..HEAD", head.trim())]);
    assert_eq!(
        log.trim(),
        "gavel: archive change add-passkeys",
        "one commit"
    );
    assert_eq!(
        env.git(&["status", "--porcelain"]).trim(),
        "",
        "everything committed"
    );
    let list = env.run(&["change", "list", "--json"]);
    assert_eq!(
        stdout(&list).trim(),
        "[]",
        "an archived change is not listed"
    );
}

#[test]
fn archive_is_refused_in_other_phases_and_with_open_tasks_writing_nothing() {
    let env = Env::new();
    complete_change(&env, "implementing", true);
    let out = env.run(&["change", "archive", "add-passkeys"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("is `implementing`")
            && stderr(&out).contains("gavel change impl add-passkeys"),
        "{}",
        show_output(&out)
    );
    let env = Env::new();
    complete_change(&env, "complete", false);
    let out = env.run(&["change", "archive", "add-passkeys"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("1 open task(s)") && stderr(&out).contains("- [ ] Logout"),
        "{}",
        show_output(&out)
    );
    for bad in ["Add_Passkeys", "../x"] {
        assert_exit(&env.run(&["change", "archive", bad]), 2);
    }
    assert_exit(&env.run(&["change", "archive", "nope"]), 2);
    assert_eq!(env.git(&["status", "--porcelain"]).trim(), "");
    assert!(env.runs().is_empty(), "no run was started");
}

#[test]
fn a_delta_that_does_not_apply_halts_with_nothing_merged() {
    let env = Env::new();
    complete_change(&env, "complete", true);
    env.write(
        "openspec/changes/add-passkeys/specs/auth/spec.md",
        &DELTA_AUTH.replace("### Requirement: Login", "### Requirement: Sign in"),
    );
    let out = env.run(&["change", "archive", "add-passkeys"]);
    assert_exit(&out, 4);
    assert!(
        stderr(&out).contains("MODIFIED requirement `Sign in` does not exist"),
        "{}",
        show_output(&out)
    );
    assert_eq!(env.read("openspec/specs/auth/spec.md"), LIVING_AUTH);
    assert!(
        !env.exists("openspec/specs/audit/spec.md"),
        "nothing half-merged"
    );
    assert!(env.exists("openspec/changes/add-passkeys/STATE.yaml"));
}

/// Issue 32: a MODIFIED requirement that omits a scenario the living spec still has would drop
/// it: archive halts naming it, merges nothing, and the real OpenSpec CLI refuses the same
/// change for the same reason.
#[test]
fn regression_a_modified_requirement_dropping_a_living_scenario_is_refused_naming_it() {
    let env = Env::new();
    complete_change(&env, "complete", true);
    let dropping = DELTA_AUTH.replace(
        "#### Scenario: Right password\n- **WHEN** the password is right\n- **THEN** the user is signed in\n\n",
        "",
    );
    assert_ne!(dropping, DELTA_AUTH);
    env.write(
        "openspec/changes/add-passkeys/specs/auth/spec.md",
        &dropping,
    );
    let out = env.run(&["change", "archive", "add-passkeys"]);
    assert_exit(&out, 4);
    assert!(
        stderr(&out).contains(
            "MODIFIED requirement `Login` omits scenario(s) the living spec still has: `Right password`"
        ),
        "{}",
        show_output(&out)
    );
    assert_eq!(env.read("openspec/specs/auth/spec.md"), LIVING_AUTH);
    assert!(
        !env.exists("openspec/specs/audit/spec.md"),
        "nothing half-merged"
    );
    let v = crate::change_impl::openspec(
        &env,
        &["validate", "add-passkeys", "--strict", "--no-interactive"],
    );
    assert!(!v.status.success(), "{}", show_output(&v));
    let said = show_output(&v);
    assert!(
        said.contains("omits scenario(s)") && said.contains("Right password"),
        "{said}"
    );
}

#[test]
fn rejecting_the_merge_writes_nothing_and_a_spec_edited_meanwhile_is_shown_again() {
    let env = Env::new();
    complete_change(&env, "complete", true);
    assert_exit(&env.run(&["change", "archive", "add-passkeys"]), 3);
    // Someone edits the living spec while the gate waits: the merge is redone and re-asked.
    let edited = LIVING_AUTH.replace("Who may sign in.", "Who may sign in, and how.");
    env.write("openspec/specs/auth/spec.md", &edited);
    let editor = crate::pty::fake_editor(&env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.env("EDITOR", &editor).env("TERM", "dumb");
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("asked");
    p.send_line("approve").expect("approve");
    p.exp_string("changed while the gate waited")
        .expect("noted");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("asked again");
    p.send_line("reject").expect("reject");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 5);
    assert_eq!(env.read("openspec/specs/auth/spec.md"), edited);
    assert!(env.exists("openspec/changes/add-passkeys/STATE.yaml"));
    assert!(
        env.read("openspec/changes/add-passkeys/STATE.yaml")
            .contains("phase: complete")
    );
    assert!(env.exists("openspec/changes/add-passkeys/lineage/002-spec-diff.md"));
}

#[test]
fn a_kill_after_the_archive_commit_is_finished_by_resume_without_a_second_commit() {
    let env = Env::new();
    complete_change(&env, "complete", true);
    let head = env.git(&["rev-parse", "HEAD"]);
    assert_exit(&env.run(&["change", "archive", "add-passkeys"]), 3);
    let editor = crate::pty::fake_editor(&env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.env("EDITOR", &editor)
        .env("TERM", "dumb")
        .env("GAVEL_CRASH_AT", "after-effect:commit");
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("asked");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    // Killed (SIGKILL) just after git committed, before the run recorded it.
    let runs = env.runs();
    assert_ne!(runs[0]["status"], "done", "{runs:?}");
    let out = env.run(&["resume", "1"]);
    assert_exit(&out, 0);
    let log = env.git(&["log", "--format=%s", &format!("{}..HEAD", head.trim())]);
    assert_eq!(
        log.trim(),
        "gavel: archive change add-passkeys",
        "exactly one commit"
    );
    assert!(
        env.read(&format!("{ARCHIVED}/STATE.yaml"))
            .contains("phase: archived")
    );
    assert_eq!(env.git(&["status", "--porcelain"]).trim(), "");
}
