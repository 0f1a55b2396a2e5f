//! What is sent where (issue 32, the seed's data-handling policy): before a run's first model
//! call gavel says which provider gets what for each role, names the context files, and says
//! what is kept on this machine; the draft gate names the context files again.

use crate::change_plan::{proposal, setup, specs, tasks, verdict};
use crate::lld::local_issue;
use crate::util::*;

/// The position of `needle` in `text`, which must hold it.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is not in:\n{text}"))
}

#[test]
fn an_lld_run_says_what_goes_to_each_provider_before_the_first_call_and_names_the_context_at_the_gate()
 {
    let env = Env::new();
    local_issue(&env, 1, "open");
    env.write("src/theme.css", ":root { --bg: #fff; }\n");
    env.write("src/header.js", "export function toggle() {}\n");
    env.script(&script(1, &[APPROVED]));
    let out = env.run(&["lld", "1", "--context", "src"]);
    assert_exit(&out, 3);
    let text = show_output(&out);
    let first_call = at(&text, "drafter answered");
    let sent = at(
        &text,
        "data: sent to scripted:script.yaml (drafter) (scripted answers: nothing leaves this machine): the issue, the template, the context files",
    );
    assert!(sent < first_call, "{text}");
    assert!(
        at(&text, "data: sent to scripted:script.yaml (reviewer)") < first_call,
        "{text}"
    );
    assert!(
        at(
            &text,
            "data: context files sent: src/header.js, src/theme.css"
        ) < first_call,
        "{text}"
    );
    assert!(
        at(
            &text,
            "data: kept: every prompt, answer and artifact in the run store"
        ) < first_call,
        "{text}"
    );
    // The draft gate names the context files again.
    assert!(
        at(
            &text,
            "Context files sent to the drafter: src/header.js, src/theme.css"
        ) > first_call,
        "{text}"
    );
    // And the timeline keeps the statement.
    let timeline = env.show("1").to_string();
    assert!(
        timeline.contains("data: context files sent: src/header.js, src/theme.css"),
        "{timeline}"
    );
}

#[test]
fn an_issue_run_says_what_the_brief_goes_to() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    let text = show_output(&out);
    assert!(
        at(
            &text,
            "(drafter) (scripted answers: nothing leaves this machine): the brief,"
        ) < at(&text, "drafter answered"),
        "{text}"
    );
    assert!(!text.contains("data: context files sent"), "{text}");
}

#[test]
fn an_implement_run_says_what_the_implementer_gets() {
    let env = python_project(&[TESTS, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        at(
            &text,
            "data: sent to scripted:script.yaml (implementer) (scripted answers: nothing leaves this machine): the LLD, the context files, the names of the repository's files"
        ) < at(&text, "implementer answered"),
        "{text}"
    );
    assert!(at(&text, "data: kept: ") < at(&text, "implementer answered"));
}

#[test]
fn a_change_plan_says_what_the_planner_and_the_challenger_get() {
    let env = Env::new();
    setup(
        &env,
        &[proposal(""), specs(), tasks()],
        &[verdict("APPROVED", &[])],
        3,
    );
    let out = env.run(&["change", "plan", "add-passkeys", "Passkeys"]);
    assert_exit(&out, 3);
    let text = show_output(&out);
    let first_call = at(&text, "planner answered");
    assert!(
        at(
            &text,
            "(planner) (scripted answers: nothing leaves this machine): your description of the change"
        ) < first_call,
        "{text}"
    );
    assert!(
        at(
            &text,
            "(challenger) (scripted answers: nothing leaves this machine): the whole plan"
        ) < first_call,
        "{text}"
    );
    assert_eq!(
        text.matches("data: kept: ").count(),
        1,
        "said once per run: {text}"
    );
}
