//! `gavel mcp` driven by the official MCP inspector's `--cli` mode (installed from npm at the
//! version pinned in `tools/mcp-inspector/package-lock.json`): the tools a reviewer agent sees,
//! a review submitted through `create_review`, a refused call, and a replayed call. Then the
//! attacks of issue 31 over raw stdio ([`Raw`]): messages that are not JSON or too long get a
//! JSON-RPC error, the server exits when stdin closes (even with a call hanging on a FIFO), a
//! journal outside the change folder is refused, and a challenge that fails half-way (the
//! file-size limit reached) changes nothing.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::Env;

/// The inspector's binary, after making sure the pinned version is installed.
fn inspector_bin() -> PathBuf {
    gavel_fakeapi::npm_tool_bin("mcp-inspector")
        .expect("the MCP inspector")
        .join("mcp-inspector")
}

/// A change folder in the test repository, with a broken gavel.toml beside it: `gavel mcp`
/// must not read it.
pub(crate) fn change(env: &Env) -> PathBuf {
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
pub(crate) fn inspect(env: &Env, dir: &Path, server_args: &[&str], args: &[&str]) -> Output {
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

pub(crate) fn stdout_json(out: &Output) -> Value {
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
    // Inside the change folder, the only place a journal may be; the name get_change skips.
    let journal = dir.join(".gavel-mcp-journal.jsonl");
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

#[test]
fn regression_mcp_refuses_a_change_id_that_is_not_its_folders_name() {
    let env = Env::new();
    let dir = change(&env);
    for id in ["another-change", "archive", "-x"] {
        let out = env
            .gavel(&[
                "mcp",
                "--change-dir",
                dir.to_str().expect("utf-8"),
                &format!("--change-id={id}"),
            ])
            .output()
            .expect("run gavel mcp");
        assert_eq!(out.status.code(), Some(2), "{id}");
        assert!(out.stdout.is_empty(), "stdout is the protocol's");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(id), "{id}: {stderr}");
    }
}

/// A minute: how long a test waits for an answer or an exit before it calls it a hang.
const PATIENCE: Duration = Duration::from_secs(60);

/// `gavel mcp` on pipes, spoken to line by line; killed when dropped.
pub(crate) struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Raw {
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn gavel mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("send");
        stdin.flush().expect("flush");
    }

    pub(crate) fn send_json(&mut self, message: Value) {
        self.send(format!("{message}\n").as_bytes());
    }

    pub(crate) fn reply(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("an answer within a minute, not silence");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    /// MCP's handshake.
    pub(crate) fn initialize(&mut self) {
        self.send_json(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}}),
        );
        let answer = self.reply();
        assert_eq!(answer["result"]["serverInfo"]["name"], "gavel", "{answer}");
        self.send_json(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Closes stdin and waits for the exit, failing the test if it does not come.
    fn close_and_wait(&mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let start = Instant::now();
        while start.elapsed() < PATIENCE {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("gavel mcp still runs a minute after its stdin closed");
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn raw(env: &Env, dir: &Path, args: &[&str]) -> Raw {
    let mut command = env.gavel(&["mcp", "--change-dir", dir.to_str().expect("utf-8")]);
    command.args(args);
    Raw::start(command)
}

pub(crate) fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

#[test]
fn mcp_answers_a_message_that_is_not_json_or_too_long_with_a_json_rpc_error() {
    let env = Env::new();
    let dir = change(&env);
    let mut mcp = raw(&env, &dir, &[]);
    mcp.send(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n");
    let parse = mcp.reply();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null, "{parse}");
    // A well-formed request, one byte per pad over the limit.
    let pad = "x".repeat(gavel_mcp::MAX_MESSAGE_BYTES);
    mcp.send_json(json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": pad}}));
    let invalid = mcp.reply();
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    assert_eq!(invalid["id"], Value::Null, "{invalid}");
    // The session goes on.
    mcp.initialize();
    assert!(mcp.close_and_wait().success());
}

#[test]
fn mcp_exits_when_stdin_closes_idle_or_with_a_call_on_a_fifo() {
    let env = Env::new();
    let dir = change(&env);
    let mut idle = raw(&env, &dir, &[]);
    idle.initialize();
    assert!(idle.close_and_wait().success());

    // A FIFO for tasks.md: get_change once waited on it for ever, and the server with it.
    fs::remove_file(dir.join("tasks.md")).expect("rm tasks.md");
    let made = Command::new("mkfifo")
        .arg(dir.join("tasks.md"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let mut busy = raw(&env, &dir, &[]);
    busy.initialize();
    busy.send_json(call(2, "get_change", json!({})));
    busy.close_and_wait();
}

#[test]
fn mcp_refuses_a_journal_outside_the_change_folder_and_names_it() {
    let env = Env::new();
    let dir = change(&env);
    let outside = env.root.join("elsewhere.jsonl");
    let dotdot = format!("{}/../../../../elsewhere.jsonl", dir.display());
    for given in [outside.to_str().expect("utf-8"), dotdot.as_str()] {
        let out = env
            .gavel(&["mcp", "--change-dir", dir.to_str().expect("utf-8")])
            .args(["--journal", given])
            .stdin(Stdio::null())
            .output()
            .expect("run gavel mcp");
        assert!(!out.status.success(), "{given} was taken");
        assert!(out.stdout.is_empty(), "stdout is the protocol's");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(given) && stderr.contains("inside the change folder"),
            "{stderr}"
        );
    }
    assert!(!outside.exists());
}

#[test]
fn mcp_submit_challenge_that_fails_half_way_changes_nothing() {
    let env = Env::new();
    let dir = change(&env);
    // A proposal too big to write again under a file-size limit (as a full disk would be),
    // while challenge.json is small enough: both files, or neither.
    let proposal = format!("# Add login\n\n{}\n", "Why it matters. ".repeat(700));
    fs::write(dir.join("proposal.md"), &proposal).expect("proposal");
    let journal = dir.join(".gavel-mcp-journal.jsonl");
    let mut command = Command::new("sh");
    env.clean_env(&mut command);
    command
        .args(["-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\""])
        .arg(assert_cmd::cargo::cargo_bin("gavel"))
        .args(["mcp", "--change-dir"])
        .arg(&dir)
        .arg("--journal")
        .arg(&journal)
        .current_dir(&env.repo);
    let mut mcp = Raw::start(command);
    mcp.initialize();
    mcp.send_json(call(
        2,
        "submit_challenge",
        json!({"verdict": "REJECTED", "findings": ["No spec for lockout."]}),
    ));
    let answer = mcp.reply();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(mcp.close_and_wait().success());
    assert_eq!(
        fs::read_to_string(dir.join("proposal.md")).expect("proposal"),
        proposal
    );
    assert!(
        !dir.join("challenge.json").exists(),
        "a half-done challenge"
    );
    let recorded = fs::read_to_string(&journal).unwrap_or_default();
    assert!(!recorded.contains("submit_challenge"), "{recorded}");
    let mut left: Vec<String> = fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gavel-mcp-") && !n.ends_with("journal.jsonl"))
        .collect();
    left.sort();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}
