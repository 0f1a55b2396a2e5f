//! What `gavel show` says about a gate, and what it says about an answered one (issue 32): the
//! hint at every gate is a command `gavel resume` accepts (a typed word only in a terminal,
//! `--choice` elsewhere), and every gate answered on resume shows its answer, who gave it and
//! when, in `gavel show` (text and JSON), `gavel report` and `gavel ui`, for implement and
//! change runs.

use serde_json::Value;

use crate::change_impl;
use crate::ui::{request, start_ui};
use crate::util::*;

fn show_text(env: &Env, run: &str) -> String {
    let out = env.run(&["show", run]);
    assert_exit(&out, 0);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `gate_answered` events of the run's timeline, from `gavel show --json`.
fn answers(env: &Env, run: &str) -> Vec<Value> {
    env.show(run)["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|e| e["event"] == "gate_answered")
        .cloned()
        .collect()
}

/// The rows of the run page's gate table, as the report writes it and the UI serves it.
fn gate_rows(page: &str) -> Vec<String> {
    let table = page
        .split("<table id=\"gates\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no gate table: {page}"));
    table
        .split("<tr class=\"gate\">")
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// Every gate of run 1 is answered, by `choices` in order, in the report and in the UI.
fn assert_pages_show_the_answers(env: &Env, choices: &[&str]) {
    let site = env.root.join("site");
    assert_exit(
        &env.run(&["report", "1", "--html", &site.to_string_lossy()]),
        0,
    );
    let report = std::fs::read_to_string(site.join("runs/1/index.html")).expect("run page");
    let ui = start_ui(env);
    let (status, served) = request(
        ui.port,
        "GET",
        &format!("/{}/runs/1/index.html", ui.token),
        &format!("127.0.0.1:{}", ui.port),
    );
    assert_eq!(status, 200, "{served}");
    for (what, page) in [("report", &report), ("ui", &served)] {
        let rows = gate_rows(page);
        assert_eq!(rows.len(), choices.len(), "{what}: {rows:?}");
        for (row, choice) in rows.iter().zip(choices) {
            assert!(!row.contains("waiting"), "{what}: {row}");
            assert!(
                row.contains(&format!("<td>{choice}</td>")) && row.contains("<td>person</td>"),
                "{what}: {row}"
            );
            assert!(row.contains(FIXED_NOW), "{what}: when: {row}");
        }
    }
}

#[test]
fn regression_show_at_the_implement_diff_gate_prints_what_works_and_the_approval_is_shown() {
    let env = python_project(&[TESTS, CODE]);
    assert_exit(&start(&env), 3);
    let text = show_text(&env, "1");
    assert!(
        text.contains(
            "continue in a terminal: `gavel resume 1`, then type one of: approve, reject"
        ),
        "{text}"
    );
    assert!(
        !text.contains("--choice"),
        "resume refuses --choice here: {text}"
    );
    // What the old hint said is refused; what the new one says works.
    let refused = env.run(&["resume", "1", "--choice", "approve"]);
    assert_exit(&refused, 2);
    approve_in_a_terminal(&env, "1");
    let answered = answers(&env, "1");
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["choice"], "approve");
    assert_eq!(answered[0]["by"], "person");
    assert_eq!(answered[0]["at"], FIXED_NOW);
    let text = show_text(&env, "1");
    assert!(text.contains("answered `approve` by person"), "{text}");
    assert_pages_show_the_answers(&env, &["approve"]);
}

#[test]
fn every_gate_of_a_change_run_answered_on_resume_shows_its_answer_and_the_hint_works() {
    let env = Env::new();
    change_impl::script(
        &env,
        &[TESTS, CODE, change_impl::FIXED],
        &[
            change_impl::review("MAJOR_ISSUES", &["Wrong approach"]),
            change_impl::review("APPROVED", &[]),
        ],
    );
    change_impl::challenged_change(&env);
    assert_exit(
        &env.run(&["change", "impl", change_impl::ID, "--test-cmd", PYTEST]),
        3,
    );
    // The review-stop gate: `gavel show` prints `--choice` commands; run the one for `fix`
    // exactly as printed.
    let text = show_text(&env, "1");
    let fix = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("gavel resume 1 --choice fix"))
        .unwrap_or_else(|| panic!("no fix command: {text}"));
    let words: Vec<&str> = fix
        .split('#')
        .next()
        .expect("command")
        .split_whitespace()
        .skip(1)
        .collect();
    assert_exit(&env.run(&words), 3);
    // The diff gate: only in a terminal.
    let text = show_text(&env, "1");
    assert!(
        text.contains(
            "continue in a terminal: `gavel resume 1`, then type one of: approve, reject"
        ),
        "{text}"
    );
    approve_in_a_terminal(&env, "1");
    let answered = answers(&env, "1");
    let choices: Vec<&str> = answered
        .iter()
        .map(|a| a["choice"].as_str().expect("choice"))
        .collect();
    assert_eq!(choices, ["fix", "approve"], "{answered:?}");
    assert!(answered.iter().all(|a| a["by"] == "person"), "{answered:?}");
    assert_pages_show_the_answers(&env, &["fix", "approve"]);
}
