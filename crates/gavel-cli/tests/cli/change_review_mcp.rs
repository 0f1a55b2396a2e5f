//! The structured review through the REAL Claude Code CLI: gavel gives the reviewer its MCP
//! server for the one call (`--strict-mcp-config --mcp-config`), the fake Messages API
//! answers with a `tool_use` of `mcp__gavel__create_review`, Claude Code starts `gavel mcp`,
//! calls the tool (the only one it is given), and gavel's server writes REVIEW.md; the
//! verdict moves the phase.

use gavel_fakeapi::{Api, FakeServer, Reply};
use serde_json::json;

use crate::agents;
use crate::util::*;

pub(crate) const MODEL: &str = "claude-sonnet-4-5";
pub(crate) const DIR: &str = "openspec/changes/add-calc";

/// A repository with the change `add-calc` planned and committed, a scripted implementer that
/// writes its test and code, and Claude Code (`claude:MODEL`) as the change reviewer.
pub(crate) fn planned_change_reviewed_by_claude(env: &Env) {
    env.script(&json!({"roles": {"implementer": [{"text": TESTS}, {"text": CODE}]}}).to_string());
    env.write(
        "gavel.toml",
        &(env.read("gavel.toml")
            + &format!("\n[changes.roles]\nimplementer = \"scripted:script.yaml\"\nreviewer = \"claude:{MODEL}\"\n")),
    );
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
        "## 1. Logic Layer\n- [ ] 1.1 add(a, b)\n",
    );
    env.write(
        &format!("{DIR}/STATE.yaml"),
        "format: 1\nchange_id: add-calc\nphase: challenged\nupdated_at: 2026-01-30T14:00:00Z\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "plan add-calc"]);
}

#[test]
fn claude_code_submits_the_review_through_gavels_mcp_server_and_the_phase_moves() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    planned_change_reviewed_by_claude(&env);
    let review = json!({
        "verdict": "APPROVED",
        "summary": "add() does what the spec says and the test proves it.",
        "issues": [{"severity": "info", "title": "Docstring", "description": "add() has no docstring", "file": "calc.py", "line": 1}],
        "test_results": {"passed": 1, "failed": 0},
        "next_steps": ["archive the change"]
    });
    server.push(
        Api::Anthropic,
        Reply::tool_use("mcp__gavel__create_review", review),
    );
    server.push(Api::Anthropic, Reply::text("The review is submitted."));

    let vars = agents::claude_env(&env, &server);
    let mut cmd = env.gavel(&["change", "impl", "add-calc", "--test-cmd", PYTEST]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    let out = cmd.output().expect("run gavel change impl");

    let text = show_output(&out);
    assert_exit(&out, 3);
    assert!(text.contains("review round 1: APPROVED"), "{text}");
    // The review handed in through create_review is the call's answer, though Claude Code then
    // stopped at its one turn: no second, paid call asks the model again (issue 32).
    assert_eq!(server.pending(Api::Anthropic), 1, "{text}");
    // gavel's MCP server handled the call (its journal of this review call, kept in the change
    // folder while the server ran, as `gavel mcp` requires, then moved to gavel's own folder so
    // it is never committed), and REVIEW.md is what it wrote.
    let journal = env
        .repo
        .join(".gavel/worktrees/.change-add-calc.mcp/review-0.jsonl");
    let journal = std::fs::read_to_string(&journal).expect("the MCP journal of the call");
    assert!(
        journal.contains("create_review")
            && journal.contains("REVIEW.md written: APPROVED with 1 issue(s)"),
        "{journal}"
    );
    let worktree = env.repo.join(".gavel/worktrees/change-add-calc");
    assert!(
        !worktree
            .join(DIR)
            .join(".gavel-mcp-journal-review-0.jsonl")
            .exists()
    );
    // Written by gavel's MCP server in the worktree's change folder, through the real CLI.
    let review_md =
        std::fs::read_to_string(worktree.join(DIR).join("REVIEW.md")).expect("REVIEW.md");
    assert!(review_md.contains("verdict: APPROVED"), "{review_md}");
    assert!(review_md.contains("add() has no docstring"), "{review_md}");
    let state = std::fs::read_to_string(worktree.join(DIR).join("STATE.yaml")).expect("state");
    assert!(state.contains("phase: complete"), "{state}");
    // The request offered only gavel's tools, and Claude Code was told so.
    let offered: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.api == Some(Api::Anthropic) && r.model == MODEL)
        .flat_map(|r| {
            r.body["tools"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
        })
        .collect();
    assert!(
        offered.iter().any(|n| n == "mcp__gavel__create_review"),
        "{offered:?}"
    );
    assert!(
        !offered
            .iter()
            .any(|n| n.starts_with("mcp__gavel__") && n != "mcp__gavel__create_review"),
        "only create_review is served to a reviewer: {offered:?}"
    );
    // The person's own Claude Code configuration was never touched.
    let global = std::fs::read_to_string(env.home().join(".claude.json")).unwrap_or_default();
    assert!(!global.contains("gavel mcp"), "{global}");
    approve_in_a_terminal(&env, "1");
    let state = env.read(&format!("{DIR}/STATE.yaml"));
    assert!(state.contains("phase: complete"), "{state}");
    assert!(
        env.read(&format!("{DIR}/REVIEW.md"))
            .contains("verdict: APPROVED")
    );
}
