//! Every paid call is in the ledger (issue 32), through the REAL Claude Code as the change
//! reviewer: a review handed in through `create_review` is the call's answer even when Claude
//! Code then stops at its turn limit (`error_max_turns`), with its cost in the ledger and no
//! second call; a reviewer whose every attempt fails after billed turns leaves each attempt in
//! `gavel show`, and a resumed run records none of them twice.

use gavel_fakeapi::{Api, FakeServer, Reply};
use serde_json::{Value, json};

use crate::agents;
use crate::change_review_mcp::{MODEL, planned_change_reviewed_by_claude};
use crate::util::*;

fn review(verdict: &str, summary: &str) -> Value {
    json!({"verdict": verdict, "summary": summary, "issues": []})
}

/// The run's ledger as `gavel show --json` has it: (role, cost in micro-USD, call number).
fn ledger(env: &Env, run: &str) -> Vec<(String, Option<u64>, u64)> {
    let out = env.gavel(&["show", run, "--json"]).output().expect("show");
    assert_exit(&out, 0);
    let shown: Value = serde_json::from_slice(&out.stdout).expect("json");
    shown["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            (
                c["role"].as_str().unwrap_or_default().to_owned(),
                c["cost_micros"].as_u64(),
                c["n"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn show(env: &Env, run: &str) -> String {
    let out = env.gavel(&["show", run]).output().expect("show");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn change_impl(env: &Env, server: &FakeServer) -> std::process::Output {
    let vars = agents::claude_env(env, server);
    let mut cmd = env.gavel(&["change", "impl", "add-calc", "--test-cmd", PYTEST]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    cmd.output().expect("run gavel change impl")
}

/// The reviewer's calls in the ledger: (cost, number), each with a reported cost.
fn reviewer_calls(env: &Env, run: &str) -> Vec<(Option<u64>, u64)> {
    let all = ledger(env, run);
    let mut numbers: Vec<u64> = all.iter().map(|c| c.2).collect();
    numbers.dedup();
    assert_eq!(numbers.len(), all.len(), "call numbers are unique: {all:?}");
    all.into_iter()
        .filter(|c| c.0 == "reviewer")
        .map(|c| (c.1, c.2))
        .collect()
}

#[test]
fn regression_a_review_handed_in_before_the_turn_limit_is_the_answer_and_is_billed_once() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    planned_change_reviewed_by_claude(&env);
    // The model hands in two reviews in its one turn; then Claude Code stops at its turn limit
    // (error_max_turns). gavel retried that four times and halted, with nothing in the ledger.
    server.push(
        Api::Anthropic,
        Reply::tool_uses(vec![
            (
                "mcp__gavel__create_review",
                review("NEEDS_FIX", "add() lacks a test for negatives."),
            ),
            (
                "mcp__gavel__create_review",
                review("MAJOR_ISSUES", "On second thought, worse."),
            ),
        ]),
    );
    for _ in 0..4 {
        server.push(
            Api::Anthropic,
            Reply::tool_use(
                "mcp__gavel__create_review",
                review("APPROVED", "A later call would approve."),
            ),
        );
    }
    let out = change_impl(&env, &server);
    let text = show_output(&out);
    // The handed-in review is the answer: one Claude Code run, one request, no retry.
    assert_eq!(server.pending(Api::Anthropic), 4, "{text}");
    let journal = std::fs::read_to_string(
        env.repo
            .join(".gavel/worktrees/.change-add-calc.mcp/review-0.jsonl"),
    )
    .expect("the MCP journal of the call");
    assert_eq!(
        journal.lines().count(),
        1,
        "one submission counts: {journal}"
    );
    let verdict = if journal.contains("NEEDS_FIX") {
        "NEEDS_FIX"
    } else {
        "MAJOR_ISSUES"
    };
    assert!(
        text.contains(&format!("review round 1: {verdict}")),
        "{text}"
    );
    assert!(
        text.contains("ended with an error after the answer was handed in")
            && text.contains("error_max_turns"),
        "{text}"
    );
    // The call is in the ledger once, with the cost Claude Code reported.
    let calls = reviewer_calls(&env, "1");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].0.is_some_and(|c| c > 0), "{calls:?}");
    let shown = show(&env, "1");
    assert!(shown.contains("reviewer   $0.0"), "{shown}");
}

#[test]
fn regression_a_reviewer_that_fails_after_billed_turns_is_in_the_ledger_once_across_resume() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    planned_change_reviewed_by_claude(&env);
    // The model's review is refused (no summary), and Claude Code stops at its turn limit:
    // a failed call, billed for its turn.
    server.push(
        Api::Anthropic,
        Reply::tool_use(
            "mcp__gavel__create_review",
            json!({"verdict": "APPROVED", "issues": []}),
        ),
    );
    let out = change_impl(&env, &server);
    let text = show_output(&out);
    assert_exit(&out, 4);
    assert!(
        text.contains("reviewer call failed") && text.contains("error_max_turns"),
        "{text}"
    );
    assert!(text.contains("1 answered attempt(s) were billed"), "{text}");
    // Not retried: the same call would stop at the same limit.
    assert_eq!(server.pending(Api::Anthropic), 0, "{text}");
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.api == Some(Api::Anthropic) && r.model == MODEL)
            .count(),
        1
    );
    let failed = reviewer_calls(&env, "1");
    assert_eq!(
        failed.len(),
        1,
        "the failed call is in the ledger: {failed:?}"
    );
    assert!(failed[0].0.is_some_and(|c| c > 0), "{failed:?}");
    let shown = show(&env, "1");
    assert!(
        shown.contains("was answered but failed, and may be billed"),
        "{shown}"
    );

    // Resumed: the review comes; the failed call is not recorded again.
    server.push(
        Api::Anthropic,
        Reply::tool_use(
            "mcp__gavel__create_review",
            review("APPROVED", "add() does what the spec says."),
        ),
    );
    let vars = agents::claude_env(&env, &server);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    let out = cmd.output().expect("resume");
    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(text.contains("review round 1: APPROVED"), "{text}");
    let calls = reviewer_calls(&env, "1");
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        calls[0], failed[0],
        "the failed call keeps its number and cost"
    );
    let events = env.gavel(&["show", "1", "--json"]).output().expect("show");
    let raw = String::from_utf8_lossy(&events.stdout).into_owned();
    assert_eq!(
        raw.matches("was answered but failed").count(),
        1,
        "recorded once: {raw}"
    );
}

/// A scripted implementer whose scaffold call fails twice after billed answers and then
/// answers, and whose implementation call keeps failing with billed answers.
fn billed_failures_script(implement_fails: Option<u32>) -> String {
    let implement = match implement_fails {
        None => {
            "    - fail: the stream broke after the answer began\n      cost_usd: 0.02\n".to_owned()
        }
        Some(n) => format!(
            "    - fail: the stream broke after the answer began\n      cost_usd: 0.02\n      fail_times: {n}\n      text: {}\n",
            yaml(CODE)
        ),
    };
    format!(
        "model: scripted-test\nroles:\n  implementer:\n    - text: {}\n      fail: overloaded after the answer began\n      fail_times: 2\n      cost_usd: 0.01\n{implement}",
        yaml(TESTS)
    )
}

#[test]
fn regression_retried_and_failed_attempts_are_each_in_the_ledger_and_never_twice() {
    let env = python_project(&[]);
    env.script(&billed_failures_script(None));
    let out = start(&env);
    let text = show_output(&out);
    assert_exit(&out, 4);
    assert!(text.contains("4 answered attempt(s) were billed"), "{text}");
    let calls = ledger(&env, "1");
    let cost =
        |calls: &[(String, Option<u64>, u64)]| -> u64 { calls.iter().filter_map(|c| c.1).sum() };
    // The scaffold: two billed failures, retried, then the answer; the implementation: four
    // billed failures (the first attempt and three retries), then the halt.
    assert_eq!(calls.len(), 7, "{calls:?}");
    assert!(calls.iter().all(|c| c.0 == "implementer"), "{calls:?}");
    // (The scripted answer reports the same cost as its failures.)
    assert_eq!(cost(&calls), 3 * 10_000 + 4 * 20_000, "{calls:?}");
    let numbers: Vec<u64> = calls.iter().map(|c| c.2).collect();
    assert_eq!(numbers, (1..=7).collect::<Vec<u64>>());
    let shown = show(&env, "1");
    assert!(shown.contains("spend:       $0.1100 (7 calls"), "{shown}");

    // The script now lets the fifth attempt answer: resumed, the run goes on, and the four
    // failed attempts keep their numbers without being recorded again.
    env.script(&billed_failures_script(Some(4)));
    let out = env.gavel(&["resume", "1"]).output().expect("resume");
    let text = show_output(&out);
    assert_ne!(out.status.code(), Some(4), "{text}");
    let after = ledger(&env, "1");
    assert_eq!(after.len(), 8, "{after:?}");
    assert_eq!(&after[..7], &calls[..], "{after:?}");
    let json = env.gavel(&["show", "1", "--json"]).output().expect("show");
    let raw = String::from_utf8_lossy(&json.stdout).into_owned();
    assert_eq!(
        raw.matches("was answered but failed").count(),
        6,
        "each billed failure noted once: {raw}"
    );
}
