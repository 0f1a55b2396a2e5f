//! `gavel mcp` as a client that follows no `$ref` sees it (issue 32): every tool's input
//! schema is self-contained with a concrete `type` on each property, so the pinned MCP
//! inspector sends an object-valued `test_results` as an object; a file the server rewrites
//! keeps its permissions and a new one is created 0666 less the umask, as git does; and a
//! second `create_review` in one agent call is refused with a tool error while the first
//! submission stands.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::{call, change, inspect, raw, stdout_json};
use crate::util::Env;

/// Every `$ref`/`$defs` in `schema`, and every property schema without a concrete `type`.
fn unresolvable(schema: &Value, at: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for key in ["$ref", "$defs", "definitions"] {
                if map.contains_key(key) {
                    found.push(format!("{at}: {key}"));
                }
            }
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    if !prop
                        .get("type")
                        .is_some_and(|t| t.is_string() || t.is_array())
                    {
                        found.push(format!("{at}.properties.{name}: no concrete type"));
                    }
                }
            }
            for (key, value) in map {
                unresolvable(value, &format!("{at}.{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                unresolvable(item, &format!("{at}[{i}]"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn regression_mcp_tools_list_schemas_need_no_reference_resolution() {
    let env = Env::new();
    let dir = change(&env);
    let out = stdout_json(&inspect(&env, &dir, &[], &["--method", "tools/list"]));
    let tools = out["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 3, "{out:#}");
    let mut found = Vec::new();
    for tool in tools {
        let name = tool["name"].as_str().expect("a name");
        unresolvable(&tool["inputSchema"], name, &mut found);
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn regression_mcp_inspector_sends_an_object_test_results_as_an_object() {
    let env = Env::new();
    let dir = change(&env);
    let out = stdout_json(&inspect(
        &env,
        &dir,
        &[],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "create_review",
            "--tool-arg",
            "verdict=APPROVED",
            "summary=Login works.",
            "issues=[]",
            r#"test_results={"passed":3,"failed":1,"notes":"pytest -q"}"#,
            r#"next_steps=["archive the change"]"#,
        ],
    ));
    assert_ne!(out["isError"], true, "{out:#}");
    let review = std::fs::read_to_string(dir.join("REVIEW.md")).expect("REVIEW.md");
    assert!(
        review.contains("- passed: 3\n- failed: 1") && review.contains("> pytest -q"),
        "{review}"
    );
    assert!(review.contains("- archive the change"), "{review}");
}

/// The test process's umask (the server inherits it), read without changing it.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .expect("a Umask line");
    u32::from_str_radix(line.trim(), 8).expect("octal")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn regression_mcp_keeps_a_rewritten_files_mode_and_creates_new_files_as_git_does() {
    let env = Env::new();
    let dir = change(&env);
    let proposal = dir.join("proposal.md");
    std::fs::set_permissions(&proposal, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = stdout_json(&inspect(
        &env,
        &dir,
        &[],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "submit_challenge",
            "--tool-arg",
            "verdict=APPROVED",
            "findings=[]",
        ],
    ));
    assert_ne!(out["isError"], true, "{out:#}");
    assert!(
        std::fs::read_to_string(&proposal)
            .expect("proposal")
            .contains("## Challenge")
    );
    assert_eq!(
        mode(&proposal),
        0o644,
        "proposal.md keeps 0644 (it became 0600)"
    );
    // challenge.json and REVIEW.md are new: 0666 less the umask, as git creates a file.
    let expected = 0o666 & !umask();
    assert_eq!(mode(&dir.join("challenge.json")), expected);
    let mut mcp = raw(&env, &dir, &[]);
    mcp.initialize();
    mcp.send_json(call(
        2,
        "create_review",
        json!({"verdict": "APPROVED", "summary": "Fine.", "issues": []}),
    ));
    assert_ne!(mcp.reply()["result"]["isError"], true);
    assert_eq!(mode(&dir.join("REVIEW.md")), expected);
    // Git sees no mode change in the committed proposal.
    env.git(&["add", "-A"]);
    let diff = env.git(&["diff", "--cached", "--summary"]);
    assert!(!diff.contains("mode change"), "{diff}");
}

#[test]
fn regression_mcp_a_second_submission_in_one_call_is_refused_and_the_first_stands() {
    let env = Env::new();
    let dir = change(&env);
    let journal = dir.join(".gavel-mcp-journal.jsonl");
    let journal_arg = journal.to_str().expect("utf-8").to_owned();
    let mut mcp = raw(&env, &dir, &["--journal", &journal_arg]);
    mcp.initialize();
    mcp.send_json(call(
        2,
        "create_review",
        json!({"verdict": "NEEDS_FIX", "summary": "One test is missing.", "issues": []}),
    ));
    let first = mcp.reply();
    assert_ne!(first["result"]["isError"], true, "{first:#}");
    mcp.send_json(call(
        3,
        "create_review",
        json!({"verdict": "APPROVED", "summary": "All good now.", "issues": []}),
    ));
    let second = mcp.reply();
    assert_eq!(second["result"]["isError"], true, "{second:#}");
    let text = second["result"]["content"][0]["text"]
        .as_str()
        .expect("a reason");
    assert!(
        text.contains("create_review was already called")
            && text.contains("the first submission counts")
            && text.contains("NEEDS_FIX"),
        "{text}"
    );
    let review = std::fs::read_to_string(dir.join("REVIEW.md")).expect("REVIEW.md");
    assert!(review.contains("verdict: NEEDS_FIX"), "{review}");
    // The same for a challenge.
    mcp.send_json(call(
        4,
        "submit_challenge",
        json!({"verdict": "APPROVED", "findings": []}),
    ));
    assert_ne!(mcp.reply()["result"]["isError"], true);
    mcp.send_json(call(
        5,
        "submit_challenge",
        json!({"verdict": "REJECTED", "findings": ["no"]}),
    ));
    assert_eq!(mcp.reply()["result"]["isError"], true);
    let proposal = std::fs::read_to_string(dir.join("proposal.md")).expect("proposal");
    assert_eq!(proposal.matches("## Challenge").count(), 1, "{proposal}");
    drop(mcp);
    // A later session of the same agent call (a CLI retried with the same journal): the same
    // request replays its recorded result, a new one is refused.
    let mut again = raw(&env, &dir, &["--journal", &journal_arg]);
    again.initialize();
    again.send_json(call(
        2,
        "create_review",
        json!({"verdict": "NEEDS_FIX", "summary": "One test is missing.", "issues": []}),
    ));
    assert_ne!(again.reply()["result"]["isError"], true);
    again.send_json(call(
        7,
        "create_review",
        json!({"verdict": "MAJOR_ISSUES", "summary": "Other.", "issues": []}),
    ));
    assert_eq!(again.reply()["result"]["isError"], true);
    let review = std::fs::read_to_string(dir.join("REVIEW.md")).expect("REVIEW.md");
    assert!(review.contains("verdict: NEEDS_FIX"), "{review}");
}
