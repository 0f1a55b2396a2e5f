//! `gavel mcp` driven by the official MCP inspector's `--cli` mode (installed from npm at the
//! version pinned in `tools/mcp-inspector/package-lock.json`): the tools a reviewer agent sees,
//! a review submitted through `create_review`, a refused call, and a replayed call.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::util::Env;

/// The inspector's binary, after making sure the pinned version is installed.
fn inspector_bin() -> PathBuf {
    gavel_fakeapi::npm_tool_bin("mcp-inspector")
        .expect("the MCP inspector")
        .join("mcp-inspector")
}

/// A change folder in the test repository, with a broken gavel.toml beside it: `gavel mcp`
/// must not read it.
fn change(env: &Env) -> PathBuf {
    env.write("gavel.toml", "this is [not toml");
    env.write("openspec/changes/add-login/proposal.md", "# Add login\n");
    env.write(
        "openspec/changes/add-login/tasks.md",
        "- [x] 1.1 Schema\n- [ ] 1.2 Migration\n",
    );
    env.write(
        "openspec/changes/add-login/STATE.yaml",
        "phase: implementing\n",
    );
    env.repo.join("openspec/changes/add-login")
}

/// `mcp-inspector --cli ARGS -- gavel mcp --change-dir DIR SERVER_ARGS`.
fn inspect(env: &Env, dir: &Path, server_args: &[&str], args: &[&str]) -> Output {
    let mut cmd = Command::new(inspector_bin());
    env.clean_env(&mut cmd);
    cmd.env("MCP_CATALOG_PATH", env.root.join("inspector/mcp.json"))
        .env(
            "MCP_CLIENT_CONFIG_PATH",
            env.root.join("inspector/client.json"),
        )
        .arg("--cli")
        .args(args)
        .arg("--")
        .arg(assert_cmd::cargo::cargo_bin("gavel"))
        .arg("mcp")
        .arg("--change-dir")
        .arg(dir)
        .args(server_args)
        .current_dir(&env.repo);
    cmd.output().expect("run the inspector")
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "inspector failed ({:?}):\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the inspector's stdout is JSON")
}

const ISSUES: &str = r#"issues=[{"severity":"major","title":"No lockout test","description":"The lockout branch is untested.","file":"src/login.rs","line":42}]"#;

fn create_review(verdict: &str) -> Vec<String> {
    [
        "--method",
        "tools/call",
        "--tool-name",
        "create_review",
        "--tool-arg",
        &format!("verdict={verdict}"),
        "summary=Login works; one branch is untested.",
        ISSUES,
    ]
    .map(String::from)
    .to_vec()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn mcp_tools_list_names_the_three_tools_with_their_schemas() {
    let env = Env::new();
    let dir = change(&env);
    let out = stdout_json(&inspect(&env, &dir, &[], &["--method", "tools/list"]));
    let tools = out["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["create_review", "get_change", "submit_challenge"]);
    let schema = tools
        .iter()
        .find(|t| t["name"] == "create_review")
        .map(|t| t["inputSchema"].to_string())
        .expect("create_review");
    for word in [
        "APPROVED",
        "NEEDS_FIX",
        "MAJOR_ISSUES",
        "critical",
        "summary",
    ] {
        assert!(schema.contains(word), "{word} missing from {schema}");
    }
}

#[test]
fn mcp_create_review_through_the_inspector_writes_review_md() {
    let env = Env::new();
    let dir = change(&env);
    let out = stdout_json(&inspect(
        &env,
        &dir,
        &[],
        &strs(&create_review("NEEDS_FIX")),
    ));
    assert_eq!(out["isError"], false, "{out}");
    let text = out["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("NEEDS_FIX with 1 issue(s)"), "{text}");
    let review = gavel_mcp::read_review(&dir.join("REVIEW.md")).expect("REVIEW.md parses");
    assert_eq!(review.verdict, gavel_mcp::ReviewVerdict::NeedsFix);
    assert_eq!(review.issues[0].title, "No lockout test");
    assert_eq!(review.issues[0].line, Some(42));
    let info = stdout_json(&inspect(
        &env,
        &dir,
        &[],
        &["--method", "tools/call", "--tool-name", "get_change"],
    ));
    let info: Value =
        serde_json::from_str(info["content"][0]["text"].as_str().expect("text")).expect("json");
    assert_eq!(info["phase"], "implementing");
    assert_eq!(info["open_tasks"], serde_json::json!(["1.2 Migration"]));
}

#[test]
fn mcp_an_invalid_argument_is_refused_and_nothing_is_written() {
    let env = Env::new();
    let dir = change(&env);
    let out = inspect(&env, &dir, &[], &strs(&create_review("LGTM")));
    assert!(!out.status.success(), "an invalid verdict was accepted");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("unknown variant `LGTM`"), "{all}");
    assert!(!dir.join("REVIEW.md").exists());
}

#[test]
fn mcp_a_repeated_call_is_answered_from_the_journal_without_writing_again() {
    let env = Env::new();
    let dir = change(&env);
    let journal = env.root.join("state/mcp-journal.jsonl");
    fs::create_dir_all(env.root.join("state")).expect("state dir");
    let server = ["--journal", journal.to_str().expect("utf-8 path")];
    let first = stdout_json(&inspect(
        &env,
        &dir,
        &server,
        &strs(&create_review("APPROVED")),
    ));
    // The same request (the inspector's tools/call has the same id) replayed with another
    // verdict: the recorded answer comes back and REVIEW.md keeps the first review.
    let again = stdout_json(&inspect(
        &env,
        &dir,
        &server,
        &strs(&create_review("MAJOR_ISSUES")),
    ));
    assert_eq!(first, again);
    let review = gavel_mcp::read_review(&dir.join("REVIEW.md")).expect("parses");
    assert_eq!(review.verdict, gavel_mcp::ReviewVerdict::Approved);
    assert_eq!(
        fs::read_to_string(&journal)
            .expect("journal")
            .lines()
            .count(),
        1
    );
    // Without the journal the same call does write again.
    stdout_json(&inspect(
        &env,
        &dir,
        &[],
        &strs(&create_review("MAJOR_ISSUES")),
    ));
    let review = gavel_mcp::read_review(&dir.join("REVIEW.md")).expect("parses");
    assert_eq!(review.verdict, gavel_mcp::ReviewVerdict::MajorIssues);
}

#[test]
fn mcp_refuses_a_change_dir_that_is_a_symlink_and_prints_nothing_on_stdout() {
    let env = Env::new();
    let dir = change(&env);
    let link = env.root.join("link");
    std::os::unix::fs::symlink(&dir, &link).expect("symlink");
    let out = env
        .gavel(&["mcp", "--change-dir", link.to_str().expect("utf-8")])
        .output()
        .expect("run gavel mcp");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "stdout is the protocol's");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("symbolic link"), "{stderr}");
}
