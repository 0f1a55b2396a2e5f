//! `gavel change impl`: a challenged change implemented with the implementation workflow (a
//! worktree, test first, the real pytest), then the reviewer's structured review (REVIEW.md)
//! driving the phase: NEEDS_FIX loops back to the implementer, MAJOR_ISSUES stops for a person,
//! an unreadable review halts, APPROVED goes to the diff gate and, after a typed `approve`,
//! the merge with the phase `complete`. And the whole life of a change: plan, impl, archive.

use serde_json::{Value, json};

use crate::change_plan;
use crate::util::*;

pub const ID: &str = "add-calc";

/// The fix the reviewer asked for.
pub(crate) const FIXED: &str = "=== gavel:write calc.py\ndef add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n    return a + b\n=== gavel:end\n";
pub const DIR: &str = "openspec/changes/add-calc";

pub(crate) fn review(verdict: &str, issues: &[&str]) -> String {
    review_with(verdict, "major", issues)
}

/// A review whose issues all have `severity`.
fn review_with(verdict: &str, severity: &str, issues: &[&str]) -> String {
    let issues: Vec<Value> = issues
        .iter()
        .map(|t| json!({"severity": severity, "title": t, "description": t, "file": "calc.py", "line": 1, "recommendation": "fix it"}))
        .collect();
    format!(
        "Reviewed.\n\n```json\n{}\n```\n",
        json!({"verdict": verdict, "summary": format!("{verdict} summary"), "issues": issues, "test_results": {"passed": 1, "failed": 0}})
    )
}

/// The change's roles point at the script, which answers `implementer` and `reviewer`.
pub(crate) fn script(env: &Env, implementer: &[&str], reviewer: &[String]) {
    let entries =
        |v: Vec<String>| -> Vec<Value> { v.into_iter().map(|t| json!({"text": t})).collect() };
    env.script(
        &json!({
            "roles": {
                "implementer": entries(implementer.iter().map(|s| (*s).to_owned()).collect()),
                "reviewer": entries(reviewer.to_vec()),
            },
            "record_prompts": true,
        })
        .to_string(),
    );
    let mut toml = env.read("gavel.toml");
    if !toml.contains("[changes.roles]") {
        toml.push_str("\n[changes]\nretries = 1\n\n[changes.roles]\nimplementer = \"scripted:script.yaml\"\nreviewer = \"scripted:script.yaml\"\nplanner = \"scripted:script.yaml\"\nchallenger = \"scripted:script.yaml\"\n");
        env.write("gavel.toml", &toml);
    }
}

/// A committed, challenged change: `calc.py` gets `add`.
pub(crate) fn challenged_change(env: &Env) {
    env.write(
        &format!("{DIR}/proposal.md"),
        "# Change: Add numbers\n\n## Why\nPeople need to add two numbers, and nothing in this project does it yet.\n\n## What Changes\n- `calc.add(a, b)`\n",
    );
    env.write(
        &format!("{DIR}/specs/calc/spec.md"),
        "## ADDED Requirements\n### Requirement: Addition\nThe system SHALL add two numbers.\n\n#### Scenario: Two and three\n- **WHEN** add(2, 3) is called\n- **THEN** it returns 5\n",
    );
    env.write(
        &format!("{DIR}/tasks.md"),
        "## 1. Data Layer\n- [ ] 1.1 Numbers in, a number out\n\n## 2. Logic Layer\n- [ ] 2.1 add(a, b) in calc.py\n\n## 3. Testing\n- [ ] 3.1 A test for add\n",
    );
    env.write(
        &format!("{DIR}/STATE.yaml"),
        "format: 1\nchange_id: add-calc\nphase: challenged\nupdated_at: 2026-01-30T14:00:00Z\nplanning_iterations: 1\nlast_verdict: APPROVED\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "plan add-calc"]);
}

pub(crate) fn impl_run(env: &Env) -> std::process::Output {
    env.run(&["change", "impl", ID, "--test-cmd", PYTEST])
}

fn approve(env: &Env, run: &str) {
    approve_in_a_terminal(env, run);
}

#[test]
fn review_needs_fix_loops_then_approved_code_is_merged_with_the_phase_complete() {
    let env = Env::new();
    script(
        &env,
        &[TESTS, CODE, FIXED],
        &[
            review("NEEDS_FIX", &["No docstring"]),
            review("APPROVED", &[]),
        ],
    );
    challenged_change(&env);
    let out = impl_run(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("review round 1: NEEDS_FIX"), "{text}");
    // WF-R5: no front matter, layers from the headings.
    assert!(text.contains("task 1.1 (Data layer) done"), "{text}");
    assert!(text.contains("task 3.1 (Testing layer) done"), "{text}");
    assert!(text.contains("review round 2: APPROVED"), "{text}");
    assert!(text.contains("type one of: approve, reject"), "{text}");
    // The fix round told the implementer what the reviewer found.
    let fix = env.prompt(gavel_llm::Role::named("implementer"), 2);
    assert!(fix.contains("No docstring"), "{fix}");
    let st = env.read(&format!("{DIR}/STATE.yaml"));
    assert!(
        st.contains("phase: implementing"),
        "in the checkout while the run works: {st}"
    );
    approve(&env, "1");
    assert!(env.exists("calc.py"));
    let st = env.read(&format!("{DIR}/STATE.yaml"));
    assert!(
        st.contains("phase: complete") && st.contains("implementation_iterations: 2"),
        "{st}"
    );
    let tasks = env.read(&format!("{DIR}/tasks.md"));
    assert!(
        tasks.contains("- [x] 1.1") && tasks.contains("- [x] 2.1") && tasks.contains("- [x] 3.1"),
        "{tasks}"
    );
    let review_md = env.read(&format!("{DIR}/REVIEW.md"));
    assert!(review_md.contains("verdict: APPROVED"), "{review_md}");
    let lineage = env.ls(&format!("{DIR}/lineage"));
    assert!(
        lineage
            .iter()
            .filter(|n| n.ends_with("-review.md") && !n.contains("diff"))
            .count()
            == 2,
        "{lineage:?}"
    );
    let log = env.git(&["log", "--format=%s"]);
    assert!(
        log.contains("gavel: implement change add-calc Add numbers"),
        "{log}"
    );
    assert_eq!(env.status(), "", "everything is committed");
    assert_eq!(env.runs()[0]["workflow"], "change-impl");
}

#[test]
fn major_issues_stop_for_a_person_who_fixes_once_more() {
    let env = Env::new();
    script(
        &env,
        &[TESTS, CODE, FIXED],
        &[
            review("MAJOR_ISSUES", &["Wrong approach"]),
            review("APPROVED", &[]),
        ],
    );
    challenged_change(&env);
    let out = impl_run(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("MAJOR_ISSUES") && text.contains("--choice fix"),
        "{text}"
    );
    assert!(
        env.read(&format!("{DIR}/STATE.yaml"))
            .contains("phase: implementing")
    );
    let out = env.run(&["resume", "1", "--choice", "fix"]);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("review round 2: APPROVED"),
        "{}",
        show_output(&out)
    );
}

#[test]
fn regression_an_approval_with_a_critical_issue_stops_for_a_person_before_the_diff_gate() {
    let env = Env::new();
    script(
        &env,
        &[TESTS, CODE],
        &[review_with("APPROVED", "critical", &["Adds strings too"])],
    );
    challenged_change(&env);
    let out = impl_run(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("approved with 1 critical issue(s) (Adds strings too)")
            && text.contains("--choice accept")
            && text.contains("--choice fix"),
        "{text}"
    );
    assert!(
        !text.contains("type one of: approve, reject"),
        "not a clean approval, so not at the diff gate: {text}"
    );
    assert!(
        env.read(&format!("{DIR}/STATE.yaml"))
            .contains("phase: implementing")
    );
    // The person accepts the approval on the record; the diff gate comes next.
    let out = env.run(&["resume", "1", "--choice", "accept"]);
    assert_exit(&out, 3);
    assert!(
        show_output(&out).contains("type one of: approve, reject"),
        "{}",
        show_output(&out)
    );
    let show = env.show("1").to_string();
    assert!(
        show.contains("a person accepted the reviewer's APPROVED over its critical issues"),
        "{show}"
    );
}

#[test]
fn an_unreadable_review_halts_with_the_phase_still_implementing() {
    let env = Env::new();
    script(
        &env,
        &[TESTS, CODE],
        &[
            "Looks good to me, APPROVED.".to_owned(),
            "```json\n{\"verdict\": \"APPROVED\"}\n```\n".to_owned(),
        ],
    );
    challenged_change(&env);
    let out = impl_run(&env);
    assert_exit(&out, 4);
    let text = show_output(&out);
    assert!(
        text.contains("the reviewer gave no structured review"),
        "{text}"
    );
    assert!(
        env.read(&format!("{DIR}/STATE.yaml"))
            .contains("phase: implementing")
    );
    assert!(!env.exists("calc.py"), "nothing merged");
}

#[test]
fn impl_refuses_wrong_phases_and_an_uncommitted_plan() {
    let env = Env::new();
    script(&env, &[], &[]);
    challenged_change(&env);
    env.write(
        &format!("{DIR}/tasks.md"),
        "- [ ] 1.1 Changed after the commit\n",
    );
    let out = impl_run(&env);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("not committed"),
        "{}",
        show_output(&out)
    );
    env.git(&["checkout", "--", DIR]);
    env.write(
        &format!("{DIR}/STATE.yaml"),
        "format: 1\nchange_id: add-calc\nphase: proposed\nupdated_at: 2026-01-30T14:00:00Z\n",
    );
    env.git(&["commit", "-qam", "back to proposed"]);
    let out = impl_run(&env);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("gavel change plan add-calc"),
        "{}",
        show_output(&out)
    );
    assert!(env.runs().is_empty());
}

#[test]
fn a_change_is_planned_implemented_and_archived_in_a_repository_made_by_openspec_init() {
    let env = Env::new();
    let out = openspec(&env, &["init", "--tools", "none", "."]);
    assert!(out.status.success(), "openspec init: {}", show_output(&out));
    assert!(env.exists("openspec/changes") && env.exists("openspec/specs"));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "openspec init"]);
    // Plan (the planner and the challenger), then commit the plan.
    change_plan::setup(
        &env,
        &[
            "=== gavel:write proposal.md\n# Change: Add numbers\n\n## Why\nPeople need to add two numbers, and nothing in this project does it yet.\n\n## What Changes\n- calc.add\n=== gavel:end\n".to_owned(),
            "=== gavel:write specs/calc/spec.md\n## Purpose\nArithmetic on two numbers, for every caller of the calc module.\n\n## ADDED Requirements\n### Requirement: Addition\nThe system SHALL add two numbers.\n\n#### Scenario: Two and three\n- **WHEN** add(2, 3) is called\n- **THEN** it returns 5\n=== gavel:end\n".to_owned(),
            "=== gavel:write tasks.md\n## 1. Logic Layer\n- [ ] 1.1 add in calc.py\n\n## 2. Testing\n- [ ] 2.1 A test\n=== gavel:end\n".to_owned(),
        ],
        &[change_plan::verdict("APPROVED", &[])],
        3,
    );
    assert_exit(&env.run(&["change", "plan", ID, "Add two numbers"]), 3);
    // Issue 32: the planner is asked for the `## Purpose` of every new capability, which it
    // follows (the scripted answer above), so the archive writes no placeholder.
    let specs_prompt = env.prompt(gavel_llm::Role::named("planner"), 1);
    assert!(
        specs_prompt.contains("A delta spec for a new capability (one with no living spec yet) starts with `## Purpose`")
            && specs_prompt.contains("None yet: every capability of this change is new"),
        "{specs_prompt}"
    );
    assert_exit(&env.run(&["resume", "1", "--choice", "implement"]), 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "plan add-calc"]);
    // Implement and review.
    script(&env, &[TESTS, CODE], &[review("APPROVED", &[])]);
    assert_exit(&impl_run(&env), 3);
    approve(&env, "2");
    assert!(
        env.read(&format!("{DIR}/STATE.yaml"))
            .contains("phase: complete")
    );
    // Archive: the spec merged into the living specs, the folder archived, one commit.
    let out = env.run(&["change", "archive", ID]);
    assert_exit(&out, 3);
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "3"], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("asked");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
    let living = env.read("openspec/specs/calc/spec.md");
    assert!(living.contains("### Requirement: Addition"), "{living}");
    assert!(
        living.contains(
            "## Purpose\nArithmetic on two numbers, for every caller of the calc module."
        ) && !living.contains("TBD"),
        "{living}"
    );
    let archived = "openspec/changes/archive/2026-01-30-add-calc";
    assert!(
        env.read(&format!("{archived}/STATE.yaml"))
            .contains("phase: archived")
    );
    assert!(env.exists(&format!("{archived}/REVIEW.md")));
    // One lineage for the whole life of the change, numbered on across its three runs.
    let lineage = env.ls(&format!("{archived}/lineage"));
    assert_gap_free(&lineage);
    assert!(
        lineage.iter().any(|n| n.ends_with("-tasks.md")),
        "{lineage:?}"
    );
    assert!(
        lineage.iter().any(|n| n.ends_with("-review.md")),
        "{lineage:?}"
    );
    assert!(
        lineage.last().is_some_and(|n| n.ends_with("-spec-diff.md")),
        "{lineage:?}"
    );
    assert_eq!(env.status(), "");
    let workflows: Vec<String> = env
        .runs()
        .iter()
        .map(|r| r["workflow"].as_str().unwrap_or_default().to_owned())
        .collect();
    // Newest first.
    assert_eq!(workflows, ["change-archive", "change-impl", "change-plan"]);
    let out = openspec(&env, &["validate", "--all", "--strict", "--no-interactive"]);
    assert!(
        out.status.success(),
        "openspec validate: {}",
        show_output(&out)
    );
}

/// Runs the real OpenSpec CLI in the repository.
pub(crate) fn openspec(env: &Env, args: &[&str]) -> std::process::Output {
    let bin = gavel_fakeapi::npm_tool_bin("openspec")
        .expect("the OpenSpec CLI")
        .join("openspec");
    let mut cmd = std::process::Command::new(bin);
    env.clean_env(&mut cmd);
    cmd.args(args)
        .current_dir(&env.repo)
        .env("OPENSPEC_TELEMETRY", "0")
        .output()
        .expect("run openspec")
}

#[test]
fn a_change_implementation_killed_around_its_review_resumes_and_merges_once() {
    for point in [
        "after:N4_green_gate",
        "before:N5b_code_review",
        "after:N5b_code_review",
        "after-journal:commit-lineage",
    ] {
        let env = Env::new();
        script(&env, &[TESTS, CODE], &[review("APPROVED", &[])]);
        challenged_change(&env);
        let mut cmd = env.gavel(&["change", "impl", ID, "--test-cmd", PYTEST]);
        cmd.env("GAVEL_CRASH_AT", point);
        if point.contains("commit-lineage") {
            // Past the diff gate: that needs the typed word, so the crash comes on approval.
            assert_exit(&impl_run(&env), 3);
            let editor = crate::pty::fake_editor(&env);
            let mut c = env.gavel(&["resume", "1"]);
            c.env("EDITOR", &editor)
                .env("TERM", "dumb")
                .env("GAVEL_CRASH_AT", point);
            let mut p = rexpect::session::spawn_command(c, Some(60_000)).expect("pty");
            p.exp_string("Your choice [approve/reject/P]: ")
                .expect("asked");
            p.send_line("approve").expect("approve");
            p.exp_eof().expect("eof");
            let out = env.run(&["resume", "1"]);
            assert_exit(&out, 0);
        } else {
            let out = cmd.output().expect("run");
            assert_eq!(
                out.status.code(),
                None,
                "{point}: killed\n{}",
                show_output(&out)
            );
            assert_exit(&env.run(&["resume", "1"]), 3);
            approve(&env, "1");
        }
        env.assert_no_finished_call_repeated();
        let log = env.git(&["log", "--format=%s"]);
        assert_eq!(
            log.matches("gavel: implement change add-calc").count(),
            1,
            "{point}: {log}"
        );
        let st = env.read(&format!("{DIR}/STATE.yaml"));
        assert!(st.contains("phase: complete"), "{point}: {st}");
        assert!(
            env.read(&format!("{DIR}/REVIEW.md"))
                .contains("verdict: APPROVED"),
            "{point}"
        );
        assert_eq!(env.status(), "", "{point}");
    }
}
