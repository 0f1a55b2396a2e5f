//! `gavel change plan`: the seed's planning loop with the scripted provider. The planner writes
//! proposal.md, the delta specs (in dependency order) and tasks.md (with `change_id` front
//! matter); the challenger's JSON verdict is appended to the proposal and moves the phase;
//! NEEDS_REVISION loops up to `planning_iterations`; the person decides at the end. Every
//! wrong phase, bad id or bad file is a clear refusal that writes nothing.

use serde_json::{Value, json};

use crate::util::*;

const ID: &str = "add-passkeys";
const DIR: &str = "openspec/changes/add-passkeys";

pub(crate) fn proposal(extra: &str) -> String {
    format!(
        "Here is the proposal.\n\n=== gavel:write proposal.md\n# Change: Add passkeys\n\n## Why\nPasswords leak and people reuse them. Passkeys cannot be phished, so sign-in gets safer.\n\n## What Changes\n- Sign in with a passkey{extra}\n- Record every sign-in\n\n## Impact\n- Affected specs: auth, audit\n=== gavel:end\n"
    )
}

/// Two specs: `audit` links `auth`, so auth comes first although it sorts after.
pub(crate) fn specs() -> String {
    "=== gavel:write specs/audit/spec.md\n## ADDED Requirements\n### Requirement: Sign-in log\nThe system SHALL record every sign-in of [the auth spec](../auth/spec.md).\n\n#### Scenario: Logged\n- **WHEN** a user signs in\n- **THEN** a log line is written\n=== gavel:end\n=== gavel:write specs/auth/spec.md\n## ADDED Requirements\n### Requirement: Passkey sign-in\nThe system SHALL let a user sign in with a passkey.\n\n#### Scenario: Passkey accepted\n- **WHEN** a valid passkey is offered\n- **THEN** the user is signed in\n=== gavel:end\n".to_owned()
}

pub(crate) fn tasks() -> String {
    "=== gavel:write tasks.md\n## 1. Data Layer\n- [ ] 1.1 Store passkeys\n\n## 2. Logic Layer\n- [ ] 2.1 Verify a passkey\n\n## 4. Testing\n- [ ] 4.1 Sign-in tests\n=== gavel:end\n".to_owned()
}

pub(crate) fn verdict(v: &str, findings: &[&str]) -> String {
    format!(
        "I read the plan.\n\n```json\n{}\n```\n",
        json!({"verdict": v, "findings": findings})
    )
}

/// Writes the script (JSON is YAML) and points the change roles at it.
pub(crate) fn setup(env: &Env, planner: &[String], challenger: &[String], rounds: u32) {
    let entries = |v: &[String]| -> Vec<Value> { v.iter().map(|t| json!({"text": t})).collect() };
    env.script(
        &json!({
            "roles": {"planner": entries(planner), "challenger": entries(challenger)},
            "record_prompts": true,
        })
        .to_string(),
    );
    let mut toml = env.read("gavel.toml");
    toml.push_str(&format!(
        "\n[changes]\nplanning_iterations = {rounds}\nretries = 1\n\n[changes.roles]\nplanner = \"scripted:script.yaml\"\nchallenger = \"scripted:script.yaml\"\nimplementer = \"scripted:script.yaml\"\nreviewer = \"scripted:script.yaml\"\n"
    ));
    env.write("gavel.toml", &toml);
}

fn out_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub(crate) fn state(env: &Env) -> String {
    env.read(&format!("{DIR}/STATE.yaml"))
}

#[test]
fn a_new_change_is_planned_in_order_challenged_and_accepted() {
    let env = Env::new();
    setup(
        &env,
        &[proposal(""), specs(), tasks()],
        &[verdict("APPROVED", &[])],
        3,
    );
    let out = env.run(&["change", "plan", ID, "Let users sign in with passkeys"]);
    assert_exit(&out, 3);
    let shown = out_text(&out);
    assert!(
        shown.contains("--choice implement") && shown.contains("--choice view"),
        "{shown}"
    );
    assert!(!shown.contains("--choice continue"), "{shown}");
    assert_eq!(
        env.ls(&format!("{DIR}/lineage")),
        [
            "001-proposal.md",
            "002-spec-auth.md",
            "003-spec-audit.md",
            "004-tasks.md",
            "005-challenge.md"
        ],
        "proposal, then the specs in dependency order, then the tasks, then the challenge"
    );
    let tasks = env.read(&format!("{DIR}/tasks.md"));
    assert!(
        tasks.starts_with("---\nchange_id: add-passkeys\n---\n"),
        "{tasks}"
    );
    let proposal = env.read(&format!("{DIR}/proposal.md"));
    assert!(
        proposal.contains("## Challenge (round 1)") && proposal.contains("**Verdict:** APPROVED"),
        "{proposal}"
    );
    let st = state(&env);
    assert!(
        st.contains("phase: challenged") && st.contains("last_verdict: APPROVED"),
        "{st}"
    );
    let prompt = env.prompt(gavel_llm::Role::named("planner"), 0);
    assert!(
        prompt.contains("Let users sign in with passkeys"),
        "{prompt}"
    );

    let out = env.run(&["resume", "1", "--choice", "implement"]);
    assert_exit(&out, 0);
    assert!(out_text(&out).contains("next: gavel change impl add-passkeys"));
    // The real OpenSpec CLI accepts the change gavel planned.
    let bin = gavel_fakeapi::npm_tool_bin("openspec")
        .expect("the OpenSpec CLI")
        .join("openspec");
    let mut cmd = std::process::Command::new(bin);
    env.clean_env(&mut cmd);
    let v = cmd
        .args(["validate", ID, "--strict", "--no-interactive"])
        .current_dir(&env.repo)
        .env("OPENSPEC_TELEMETRY", "0")
        .output()
        .expect("run openspec");
    assert!(v.status.success(), "openspec validate: {}", show_output(&v));
    // Planning is over: the command says what comes next and starts nothing.
    let again = env.run(&["change", "plan", ID]);
    assert_exit(&again, 0);
    assert!(out_text(&again).contains("next: gavel change impl add-passkeys"));
    assert_eq!(env.runs().len(), 1);
}

#[test]
fn needs_revision_loops_with_the_findings_then_the_person_continues_past_the_limit() {
    let env = Env::new();
    setup(
        &env,
        &[
            proposal(""),
            specs(),
            tasks(),
            proposal(" (WebAuthn level 2)"),
            proposal(" (WebAuthn level 3)"),
        ],
        &[
            verdict("NEEDS_REVISION", &["Name the WebAuthn level"]),
            verdict("NEEDS_REVISION", &["Level 2 is too old"]),
            verdict("APPROVED", &[]),
        ],
        2,
    );
    let out = env.run(&["change", "plan", ID, "Passkeys"]);
    assert_exit(&out, 3);
    let shown = out_text(&out);
    assert!(
        shown.contains("--choice continue"),
        "rounds ran out: {shown}"
    );
    let revision = env.prompt(gavel_llm::Role::named("planner"), 3);
    assert!(revision.contains("Name the WebAuthn level"), "{revision}");
    assert!(
        !revision.contains("## Challenge (round"),
        "the planner sees the body only: {revision}"
    );
    assert!(state(&env).contains("phase: proposed"));
    assert!(state(&env).contains("planning_iterations: 2"));
    let out = env.run(&["resume", "1", "--choice", "continue"]);
    assert_exit(&out, 3);
    let proposal = env.read(&format!("{DIR}/proposal.md"));
    assert!(proposal.contains("WebAuthn level 3"), "{proposal}");
    for round in 1..=3 {
        assert!(
            proposal.contains(&format!("## Challenge (round {round})")),
            "{proposal}"
        );
    }
    assert!(state(&env).contains("phase: challenged"));
    let out = env.run(&["resume", "1", "--choice", "view"]);
    assert_exit(&out, 0);
    assert!(out_text(&out).contains("then gavel change impl add-passkeys"));
}

#[test]
fn implement_after_the_rounds_run_out_accepts_the_plan_on_the_record() {
    let env = Env::new();
    setup(
        &env,
        &[proposal(""), specs(), tasks()],
        &[verdict("NEEDS_REVISION", &["Minor: wording"])],
        1,
    );
    assert_exit(&env.run(&["change", "plan", ID, "Passkeys"]), 3);
    assert!(state(&env).contains("phase: proposed"));
    assert_exit(&env.run(&["resume", "1", "--choice", "implement"]), 0);
    assert!(state(&env).contains("phase: challenged"));
    let show = env.show("1");
    assert!(
        show.to_string()
            .contains("accepted the plan with open findings"),
        "{show}"
    );
}

#[test]
fn regression_an_approval_with_findings_waits_for_a_person_with_the_phase_still_proposed() {
    let env = Env::new();
    setup(
        &env,
        &[proposal(""), specs(), tasks()],
        &[verdict("APPROVED", &["Name the WebAuthn level"])],
        3,
    );
    let out = env.run(&["change", "plan", ID, "Passkeys"]);
    assert_exit(&out, 3);
    let shown = out_text(&out);
    assert!(
        shown.contains("approved the plan of `add-passkeys` but with 1 finding(s)")
            && shown.contains("--choice continue")
            && shown.contains("recommended: continue"),
        "not a clean approval: {shown}"
    );
    let st = state(&env);
    assert!(
        st.contains("phase: proposed") && st.contains("last_verdict: APPROVED"),
        "only a person makes it challenged: {st}"
    );
    let out = env.run(&["change", "impl", ID, "--test-cmd", "true"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("is `proposed`"),
        "{}",
        show_output(&out)
    );
    assert_exit(&env.run(&["resume", "1", "--choice", "implement"]), 0);
    assert!(state(&env).contains("phase: challenged"));
    let show = env.show("1").to_string();
    assert!(
        show.contains(
            "a person accepted the plan over the challenger's APPROVED with 1 finding(s)"
        ),
        "{show}"
    );
}

#[test]
fn rejected_plans_wait_for_an_edited_proposal() {
    let env = Env::new();
    setup(
        &env,
        &[proposal(""), specs(), tasks()],
        &[
            verdict("REJECTED", &["Out of scope"]),
            verdict("APPROVED", &[]),
        ],
        3,
    );
    let out = env.run(&["change", "plan", ID, "Passkeys"]);
    assert_exit(&out, 5);
    assert!(
        out_text(&out).contains("rejected the plan"),
        "{}",
        out_text(&out)
    );
    assert!(state(&env).contains("phase: rejected"));
    let again = env.run(&["change", "plan", ID]);
    assert_exit(&again, 2);
    assert!(
        stderr(&again).contains("has not changed since"),
        "{}",
        show_output(&again)
    );
    let proposal = env.read(&format!("{DIR}/proposal.md"));
    env.write(
        &format!("{DIR}/proposal.md"),
        &proposal.replace("Record every sign-in", "Record every sign-in (scope cut)"),
    );
    // (The scripted provider numbers calls per run: the new run's first challenge is entry 0.)
    env.script(&json!({"roles": {"challenger": [{"text": verdict("APPROVED", &[])}]}}).to_string());
    let out = env.run(&["change", "plan", ID]);
    assert_exit(&out, 3);
    assert!(state(&env).contains("phase: challenged"));
    let show = env.show("2");
    assert!(
        show.to_string().contains("edited since the rejection"),
        "{show}"
    );
}

#[test]
fn an_unparseable_verdict_is_retried_then_halts_never_approving() {
    let env = Env::new();
    setup(
        &env,
        &[proposal(""), specs(), tasks()],
        &[
            "APPROVED. Ship it.".to_owned(),
            "```json\n{\"verdict\": \"APPROVED\", \"verdict\": \"APPROVED\", \"findings\": []}\n```\n".to_owned(),
        ],
        3,
    );
    let out = env.run(&["change", "plan", ID, "Passkeys"]);
    assert_exit(&out, 4);
    assert!(
        out_text(&out).contains("challenger's verdict was refused 2 time(s)"),
        "{}",
        out_text(&out)
    );
    assert!(state(&env).contains("phase: proposed"));
    assert!(
        !env.read(&format!("{DIR}/proposal.md"))
            .contains("## Challenge")
    );
}

#[test]
fn bad_planner_files_are_fed_back_and_nothing_is_half_written() {
    let env = Env::new();
    let bad = "=== gavel:write proposal.md\n# Change: X\n\n## Why\nBecause.\n=== gavel:end\n=== gavel:write src/main.rs\nfn main() {}\n=== gavel:end\n".to_owned();
    setup(
        &env,
        &[bad, proposal(""), specs(), tasks()],
        &[verdict("APPROVED", &[])],
        3,
    );
    assert_exit(&env.run(&["change", "plan", ID, "Passkeys"]), 3);
    let retry = env.prompt(gavel_llm::Role::named("planner"), 1);
    assert!(
        retry.contains("no `## What Changes` section") && retry.contains("src/main.rs"),
        "{retry}"
    );
    assert!(!env.exists("src/main.rs"));
}

#[test]
fn plan_refuses_wrong_phases_bad_ids_and_bad_state_files_writing_nothing() {
    let env = Env::new();
    setup(&env, &[], &[], 3);
    let out = env.run(&["change", "plan", ID]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("needs a description"),
        "{}",
        show_output(&out)
    );
    assert!(!env.exists(DIR));
    for bad in ["Add_Passkeys", "../etc", &"a".repeat(65)] {
        assert_exit(&env.run(&["change", "plan", bad, "x"]), 2);
    }
    env.write(
        &format!("{DIR}/STATE.yaml"),
        "format: 1\nchange_id: add-passkeys\nphase: implementing\nupdated_at: 2026-01-30T14:00:00Z\n",
    );
    let out = env.run(&["change", "plan", ID]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("gavel change impl add-passkeys"),
        "{}",
        show_output(&out)
    );
    env.write(
        &format!("{DIR}/STATE.yaml"),
        "format: 1\nchange_id: add-passkeys\nphase: planning\nupdated_at: 2026-01-30T14:00:00Z\n",
    );
    let out = env.run(&["change", "plan", ID]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("STATE.yaml:3"),
        "{}",
        show_output(&out)
    );
    assert!(env.runs().is_empty());
}

#[test]
fn doctor_checks_the_change_roles_and_warns_when_the_challenger_is_the_planner() {
    let env = Env::new();
    setup(&env, &[], &[], 3);
    // Without changes the change roles are shown but not counted.
    let out = env.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    let plan_rows: Vec<&Value> = report["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .filter(|r| r["workflow"] == "change-plan")
        .collect();
    assert_eq!(plan_rows.len(), 2, "{report}");
    assert!(plan_rows.iter().all(|r| r["required"] == false), "{report}");
    env.write("openspec/changes/.keep", "");
    let out = env.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    assert!(
        report["warnings"]
            .to_string()
            .contains("change-plan: the challenger is the same provider and model as the planner"),
        "{report}"
    );
    assert!(
        report["roles"]
            .as_array()
            .expect("roles")
            .iter()
            .filter(|r| r["workflow"] == "change-plan")
            .all(|r| r["required"] == true)
    );
}
