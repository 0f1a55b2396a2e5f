//! gavel's own checks before a model judges a draft (issue 35), end to end with the scripted
//! provider: a draft with the template's placeholders left goes back to the drafter without a
//! reviewer call (the ledger has none), the next one is reviewed; drafts that keep failing halt
//! at the iteration cap saying why; in interactive mode the findings wait at the draft gate,
//! where a person may still send the draft on; an LLD missing the template's sections, and a
//! rubric's own `Required sections`, likewise; a malformed rubric list fails pre-flight.

use gavel_llm::Role;
use serde_json::Value;

use crate::util::*;

/// A draft that is the issue template with a little filled in: its placeholders are left.
const PLACEHOLDERS: &str = "# Add dark mode\n\n**Labels:** {comma-separated labels, e.g. enhancement}\n\n## Why\nToo bright at night.\n\n## What\n{The change, described from the user's side.}\n\n## Acceptance criteria\n- [ ] {A testable statement of done}\n\n## Out of scope\nOther themes.\n\n## Notes\nNone.\n";

/// A script whose drafter answers `drafts` in order and whose reviewer answers `verdicts`.
fn script_of(drafts: &[&str], verdicts: &[&str]) -> String {
    let mut s = String::from("model: scripted-test\nrecord_prompts: true\ndrafter:\n");
    for d in drafts {
        s.push_str(&format!("  - text: {}\n", json(d)));
    }
    s.push_str(if verdicts.is_empty() {
        "reviewer: []\n"
    } else {
        "reviewer:\n"
    });
    for v in verdicts {
        s.push_str(&format!("  - text: {}\n", json(v)));
    }
    s
}

/// The roles of the run's calls, in order, from the ledger `gavel show --json` prints.
fn ledger_roles(env: &Env, run: &str) -> Vec<String> {
    env.show(run)["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| c["role"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The texts of the run's timeline notes.
fn notes(env: &Env, run: &str) -> Vec<String> {
    env.show(run)["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|e| e["event"] == "note")
        .map(|e| e["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn placeholders_go_back_to_the_drafter_without_a_reviewer_call() {
    let env = Env::new();
    let good = draft(2);
    env.script(&script_of(&[PLACEHOLDERS, &good], &[APPROVED]));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert_eq!(
        ledger_roles(&env, "1"),
        ["drafter", "drafter", "reviewer"],
        "the first draft went to no reviewer"
    );
    assert_eq!(env.finished(Role::REVIEWER), 1);
    assert!(
        env.prompt(Role::REVIEWER, 0).contains("Add dark mode v2"),
        "the reviewer saw the second draft"
    );
    // The drafter was told what failed, as gavel's own findings.
    let second = env.prompt(Role::DRAFTER, 1);
    assert!(
        second.contains("## gavel's checks of the current draft (fix every one)")
            && second.contains("`{The change, described from the user's side.}`"),
        "{second}"
    );
    let done = done_dir(&env, 1, "dark-mode");
    assert_eq!(
        env.ls(&done),
        [
            "001-brief.md",
            "002-draft.md",
            "003-checks.md",
            "004-draft.md",
            "005-verdict.md",
            "006-filed.json"
        ]
    );
    let checks = env.read(&format!("{done}/003-checks.md"));
    assert!(
        checks.contains("checked_by: gavel")
            && checks.contains("not a reviewer's verdict")
            && checks.contains(
                "`{comma-separated labels, e.g. enhancement}` is still in the draft (line 3)"
            )
            && checks.contains("`{A testable statement of done}`"),
        "{checks}"
    );
    let noted = notes(&env, "1");
    assert!(
        noted.iter().any(|n| n.starts_with(
            "gavel's checks: 3 finding(s) in docs/lineage/active/dark-mode/002-draft.md"
        )),
        "{noted:?}"
    );
    let filed = env.read("docs/issues/0001-dark-mode.md");
    assert!(
        filed.contains("# Add dark mode v2") && !filed.contains('{'),
        "{filed}"
    );
    // `gavel show` tells them apart from a reviewer's.
    let shown = String::from_utf8_lossy(&env.run(&["show", "1"]).stdout).into_owned();
    assert!(
        shown.contains("003-checks.md") && shown.contains("gavel's checks"),
        "{shown}"
    );
}

#[test]
fn drafts_that_keep_failing_halt_at_the_cap_and_no_reviewer_is_called() {
    let env = Env::new();
    env.set_max_iterations(2);
    let good = draft(3);
    env.script(&script_of(
        &[PLACEHOLDERS, PLACEHOLDERS, &good],
        &[APPROVED],
    ));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 4);
    let err = stderr(&out);
    assert!(
        err.contains("max iterations reached: 2 drafts")
            && err.contains("the last draft failed gavel's own checks (4 finding(s), in docs/lineage/active/dark-mode/005-checks.md)")
            && err.contains("raise [limits] max_iterations")
            && err.contains("gavel resume 1"),
        "{}",
        show_output(&out)
    );
    assert_eq!(env.runs()[0]["status"], "halted");
    assert_eq!(env.finished(Role::REVIEWER), 0, "no reviewer call");
    assert!(env.issues().is_empty(), "a cap is never success");
    // The second draft, the same as the first, is no revision.
    assert!(
        env.read("docs/lineage/active/dark-mode/005-checks.md")
            .contains("identical to the previous draft")
    );
    env.set_max_iterations(3);
    assert_exit(&env.run(&["resume", "1"]), 0);
    assert_eq!(
        ledger_roles(&env, "1"),
        ["drafter", "drafter", "drafter", "reviewer"]
    );
    assert_eq!(env.issues().len(), 1);
}

#[test]
fn interactive_mode_shows_the_findings_at_the_draft_gate() {
    let env = Env::new();
    let good = draft(2);
    env.script(&script_of(
        &[PLACEHOLDERS, &good, PLACEHOLDERS],
        &[APPROVED, REVISE],
    ));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief]);
    assert_exit(&out, 3);
    let err = stderr(&out);
    assert!(
        err.contains("gavel's checks found 3 problem(s) in this draft")
            && err.contains("`{A testable statement of done}`")
            && err.contains("docs/lineage/active/dark-mode/003-checks.md")
            && err.contains("recommended: revise"),
        "{}",
        show_output(&out)
    );
    let gate = &env.show("1")["status"]["gate"];
    assert_eq!(gate["kind"], "draft");
    assert_eq!(gate["recommended"], "revise");
    assert_eq!(env.finished(Role::REVIEWER), 0);
    // Revise: the drafter gets gavel's findings with the person's feedback.
    let feedback = env.write("feedback.md", "Keep it short.");
    let out = env.run(&[
        "resume",
        "1",
        "--choice",
        "revise",
        "--feedback-file",
        &feedback.to_string_lossy(),
    ]);
    assert_exit(&out, 3);
    let second = env.prompt(Role::DRAFTER, 1);
    assert!(
        second.contains("gavel's checks of the current draft") && second.contains("Keep it short."),
        "{second}"
    );
    assert!(
        !stderr(&out).contains("gavel's checks found"),
        "the second draft passes: {}",
        show_output(&out)
    );
    assert_exit(&env.run(&["resume", "1", "--choice", "send"]), 3);
    assert_exit(&env.run(&["resume", "1", "--choice", "revise"]), 3);
    // The third draft fails again; a person may still send it on, and that is recorded.
    let out = env.run(&["resume", "1", "--choice", "send"]);
    assert_exit(&out, 3);
    assert_eq!(env.finished(Role::REVIEWER), 2);
    let noted = notes(&env, "1");
    assert!(
        noted.iter().any(
            |n| n.contains("a person sent docs/lineage/active/dark-mode/")
                && n.contains("to the reviewer over 3 finding(s) of gavel's checks")
        ),
        "{noted:?}"
    );
}

#[test]
fn an_lld_missing_template_sections_goes_back_before_review() {
    let env = Env::new();
    env.local_issue(1, "open");
    let thin = "# 1 - Feature: Dark mode\n\n## 1. Context & Goal\nIssue #1.\n\n## 2. Proposed Changes\n\n### 2.1 Files Changed\n\n## 3. Requirements\n1. Dark at night.\n";
    let good = draft(2);
    env.script(&script_of(&[thin, &good], &[APPROVED]));
    let out = env.run(&["lld", "1", "--auto"]);
    assert_exit(&out, 0);
    assert_eq!(ledger_roles(&env, "1"), ["drafter", "drafter", "reviewer"]);
    let done = "docs/lineage/done/1-lld";
    assert_eq!(
        env.ls(done),
        [
            "001-issue.md",
            "002-draft.md",
            "003-checks.md",
            "004-draft.md",
            "005-verdict.md",
            "006-approved.json"
        ]
    );
    let checks = env.read(&format!("{done}/003-checks.md"));
    for finding in [
        "the section `2.1 Files Changed` is empty",
        "the required section `2.2 Dependencies` is missing",
        "the required section `11. Definition of Done` is missing",
    ] {
        assert!(checks.contains(finding), "{finding}: {checks}");
    }
    assert!(
        !checks.contains("Open Questions") && !checks.contains("Labels"),
        "optional sections and an issue's labels are not asked of an LLD: {checks}"
    );
    assert!(
        env.read("docs/lld/active/LLD-1.md")
            .starts_with("# Add dark mode v2")
    );
}

#[test]
fn a_rubric_may_require_more_sections() {
    let env = Env::new();
    let rubric = "docs/skills/0701c-issue-review-prompt.md";
    let text = env.read(rubric) + "\n## Required sections\n- Rollout plan\n";
    env.write(rubric, &text);
    let with_rollout = format!("{}\n## Rollout plan\nBehind a flag first.\n", draft(2));
    env.script(&script_of(&[&draft(1), &with_rollout], &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    assert_eq!(ledger_roles(&env, "1"), ["drafter", "drafter", "reviewer"]);
    let checks = env.read("docs/lineage/done/1-dark-mode/003-checks.md");
    assert!(
        checks.contains("the required section `Rollout plan` is missing"),
        "{checks}"
    );
    // The reviewer reads the same list in its rubric.
    assert!(
        env.prompt(Role::REVIEWER, 0)
            .contains("## Required sections\n- Rollout plan")
    );
}

#[test]
fn a_malformed_required_sections_list_fails_preflight_naming_its_line() {
    let env = Env::new();
    let rubric = "docs/skills/0702c-lld-review-prompt.md";
    let text = env.read(rubric);
    let line = text.lines().count() + 2;
    env.write(
        rubric,
        &format!("{text}\n## Required sections\nRollout, security.\n"),
    );
    env.local_issue(1, "open");
    env.script(&script(1, &[APPROVED]));
    let out = env.run(&["lld", "1", "--auto"]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("pre-flight failed")
            && err.contains(&format!(
                "{rubric}: line {}: text outside the list under `Required sections`",
                line + 1
            ))
            && err.contains("`- Rollout plan`"),
        "{err}"
    );
    assert!(
        env.calls().is_empty(),
        "no model call before pre-flight passes"
    );
}

/// The default templates `gavel init` writes are what the checks read: the unfilled template
/// itself never passes, and the test drafts do.
#[test]
fn the_templates_gavel_init_writes_are_checked() {
    let env = Env::new();
    let template = env.read("docs/templates/0101-issue-template.md");
    env.script(&script_of(&[&template, &draft(2)], &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    let checks = env.read("docs/lineage/done/1-dark-mode/003-checks.md");
    assert!(
        checks.contains("`{Short imperative title}` is still in the draft (line 1)"),
        "{checks}"
    );
    let shown: Value = env.show("1");
    assert_eq!(shown["spend_by_role"]["reviewer"]["calls"], 1, "{shown}");
}
