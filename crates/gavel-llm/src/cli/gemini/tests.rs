//! Tests of the Gemini CLI adapter: the command line and workspace settings each profile gives,
//! and reading its stream (recorded from Gemini CLI 0.61.0 answering tool-use turns).

use std::path::Path;

use super::*;
use crate::cli::agent::{flag_values as values, test_setup};
use crate::profile::McpServer;

fn invocation(profile: &AgentProfile, workdir: &str, own: bool) -> Invocation {
    Gemini
        .invocation(&test_setup(profile, Path::new(workdir), own))
        .expect("a profile the Gemini CLI can run")
}

/// The settings file of an invocation, parsed (without gavel's comment line).
fn settings_of(inv: &Invocation) -> Value {
    let [file] = inv.files.as_slice() else {
        panic!("one settings file: {:?}", inv.files)
    };
    let json = file
        .contents
        .strip_prefix(CALL_HEADER)
        .unwrap_or(&file.contents);
    serde_json::from_str(json).expect("JSON settings")
}

#[test]
fn text_only_is_todays_exact_command_line_environment_and_settings() {
    let p = AgentProfile::text_only();
    let inv = invocation(&p, "/gavel/agent", true);
    assert_eq!(
        inv.args,
        [
            "-p",
            "",
            "-o",
            "stream-json",
            "-m",
            "m",
            "-e",
            "none",
            // Regression (issue 11): without it a text-only call started the person's own MCP
            // servers (the workspace's empty `mcpServers` is merged, not replacing theirs).
            "--allowed-mcp-server-names",
            NO_MCP_SERVERS
        ]
    );
    assert_eq!(
        inv.env,
        [
            ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()),
            ("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned())
        ]
    );
    assert_eq!(
        inv.files,
        [CallFile {
            path: "/gavel/agent/.gemini/settings.json".into(),
            contents: WORKSPACE_SETTINGS.to_owned(),
            temporary: false,
        }]
    );
    assert!(
        !Gemini.settings_in_workdir(&p),
        "runs in gavel's shared folder"
    );
    assert_eq!(Gemini.stdin("/help"), format!("{PROMPT_HEADER}/help"));
}

#[test]
fn the_system_settings_turn_every_tool_off() {
    let v: Value = serde_json::from_str(WORKSPACE_SETTINGS).expect("valid JSON");
    assert_eq!(v["tools"]["core"], serde_json::json!([]));
    assert_eq!(v["general"]["maxAttempts"], 1);
}

#[test]
fn each_tools_level_maps_to_an_allow_list_and_an_approval_mode() {
    let read = AgentProfile {
        tools: Tools::ReadOnly,
        max_turns: 4,
        ..AgentProfile::text_only()
    };
    let inv = invocation(&read, "/w/tree", false);
    let s = settings_of(&inv);
    assert_eq!(
        s["tools"]["core"],
        json!(["read_file", "list_directory", "glob", "grep_search"])
    );
    assert_eq!(s["model"]["maxSessionTurns"], 4);
    assert_eq!(s["general"]["maxAttempts"], 1, "the rest is kept");
    assert!(!inv.args.iter().any(|a| a == "--approval-mode"));

    let edit = AgentProfile::edit_within("/w/tree", 30);
    let inv = invocation(&edit, "/w/tree", false);
    assert_eq!(
        settings_of(&inv)["tools"]["core"],
        json!([
            "read_file",
            "list_directory",
            "glob",
            "grep_search",
            "replace",
            "write_file"
        ])
    );
    assert_eq!(values(&inv.args, "--approval-mode"), ["auto_edit"]);
    assert!(!inv.args.iter().any(|a| a == "--include-directories"));
    let inv = invocation(&edit, "/w", false);
    assert_eq!(values(&inv.args, "--include-directories"), ["/w/tree"]);

    let shell = AgentProfile {
        tools: Tools::Shell {
            within: "/w/tree".into(),
            allowed: vec!["cargo test".into()],
        },
        ..AgentProfile::edit_within("/w/tree", 30)
    };
    let core = settings_of(&invocation(&shell, "/w/tree", false))["tools"]["core"].clone();
    assert_eq!(core[6], "run_shell_command(cargo test)");
    for p in [&read, &edit, &shell] {
        assert!(Gemini.settings_in_workdir(p), "never in the shared folder");
    }
}

#[test]
fn mcp_servers_go_in_the_workspace_settings_and_only_they_start() {
    let p = AgentProfile::text_only().with_mcp_server(McpServer {
        name: "gavel".into(),
        command: "/usr/bin/gavel".into(),
        args: vec!["mcp".into()],
        env: vec![("GAVEL_RUN".into(), "7".into())],
    });
    let inv = invocation(&p, "/tmp/gavel-call-t", false);
    let s = settings_of(&inv);
    assert_eq!(
        s["mcpServers"],
        json!({"gavel": {"command": "/usr/bin/gavel", "args": ["mcp"], "env": {"GAVEL_RUN": "7"}, "trust": true}})
    );
    assert_eq!(s["tools"]["core"], json!(["mcp_gavel_*"]));
    assert_eq!(values(&inv.args, "--allowed-mcp-server-names"), ["gavel"]);
}

#[test]
fn a_folder_gavel_does_not_own_gets_a_marked_file_removed_after_the_call() {
    let inv = invocation(&AgentProfile::text_only(), "/w/tree", false);
    let [file] = inv.files.as_slice() else {
        panic!("one file")
    };
    assert!(file.temporary);
    assert_eq!(file.path, Path::new("/w/tree/.gemini/settings.json"));
    assert!(file.contents.starts_with(CALL_HEADER));
    assert_eq!(settings_of(&inv)["tools"]["core"], json!([]));
}

/// Gemini CLI 0.61.0's streams for a `write_file` and an MCP tool call (two recorded runs,
/// joined and abridged).
const TOOL_TURNS: &str = r#"{"type":"init","timestamp":"2026-11-23T13:57:36.721Z","session_id":"fe08","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2026-11-23T13:57:36.722Z","role":"user","content":"write hello\n"}
{"type":"tool_use","timestamp":"2026-11-23T13:57:36.821Z","tool_name":"write_file","tool_id":"write_file__write_file_1795442256774_0","parameters":{"file_path":"/tmp/prof-exp/edit/hello.txt","content":"written by gemini\n"}}
{"type":"tool_result","timestamp":"2026-11-23T13:57:36.903Z","tool_id":"write_file__write_file_1795442256774_0","status":"success"}
{"type":"tool_use","timestamp":"2026-11-23T13:58:08.683Z","tool_name":"mcp_probe_ping","tool_id":"mcp_probe_ping__mcp_probe_ping_1795442288644_0","parameters":{}}
{"type":"tool_result","timestamp":"2026-11-23T13:58:08.738Z","tool_id":"mcp_probe_ping__mcp_probe_ping_1795442288644_0","status":"success","output":"pong"}
{"type":"message","timestamp":"2026-11-23T13:57:36.913Z","role":"assistant","content":"Wrote the file.","delta":true}
{"type":"result","timestamp":"2026-11-23T13:57:36.914Z","status":"success","stats":{"total_tokens":30,"input_tokens":20,"output_tokens":10,"cached":0,"input":20,"duration_ms":194,"tool_calls":2,"models":{"gemini-2.5-pro":{"total_tokens":30,"input_tokens":20,"output_tokens":10,"cached":0,"input":20}}}}"#;

#[test]
fn tool_uses_and_text_come_from_the_stream_lines() {
    let lines: Vec<Value> = json_lines(TOOL_TURNS).collect();
    let uses: Vec<ToolUse> = lines
        .iter()
        .flat_map(|l| Gemini.tool_uses(l))
        .map(|(_, u)| u)
        .collect();
    assert_eq!(
        uses,
        [
            ToolUse {
                name: "write_file".into(),
                summary: "/tmp/prof-exp/edit/hello.txt".into()
            },
            ToolUse {
                name: "mcp_probe_ping".into(),
                summary: String::new()
            }
        ]
    );
    let p = parse(TOOL_TURNS);
    assert_eq!(
        p.text, "Wrote the file.",
        "the user's echo is not the answer"
    );
    assert!(p.success && p.error.is_none());
    assert_eq!(p.models, ["gemini-2.5-pro"]);
}

#[test]
fn text_tokens_and_the_answering_model_come_from_the_stream() {
    let stdout = r#"{"type":"init","model":"gemini-2.5-pro"}
{"type":"message","role":"user","content":"Review this"}
{"type":"message","role":"assistant","content":"FAKE-REVIEW:","delta":true}
{"type":"message","role":"assistant","content":" looks good.","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":18,"input_tokens":11,"output_tokens":7,"cached":3,"models":{"gemini-2.5-pro":{"total_tokens":0},"gemini-2.5-flash":{"total_tokens":18}}}}"#;
    let p = parse(stdout);
    assert_eq!(p.text, "FAKE-REVIEW: looks good.");
    assert!(p.success && p.error.is_none());
    assert_eq!(
        p.models,
        ["gemini-2.5-flash"],
        "the model with tokens answered (a fallback)"
    );
    assert_eq!(
        (p.input_tokens, p.output_tokens, p.cached_tokens),
        (Some(11), Some(7), Some(3))
    );
}

#[test]
fn a_cut_stream_is_an_error_even_with_exit_0() {
    let stdout = r#"{"type":"message","role":"assistant","content":"FAKE","delta":true}
{"type":"error","severity":"error","message":"Model stream ended without a finish reason."}
{"type":"result","status":"error"}"#;
    let p = parse(stdout);
    assert!(!p.success);
    assert_eq!(
        p.error.as_deref(),
        Some("Model stream ended without a finish reason.")
    );
}

#[test]
fn a_confined_call_leaves_the_gemini_cli_its_state_folder() {
    use crate::cli::agent::StatePath;
    let home = |name: &str| (name == "HOME").then(|| "/h".to_owned());
    assert_eq!(Gemini.state_paths(&home), [StatePath::folder("/h/.gemini")]);
    let own = |name: &str| match name {
        "GEMINI_CLI_HOME" => Some("/g".to_owned()),
        "HOME" => Some("/h".to_owned()),
        _ => None,
    };
    assert_eq!(Gemini.state_paths(&own), [StatePath::folder("/g/.gemini")]);
}

#[test]
fn a_failed_run_that_reported_usage_still_reports_it_for_the_ledger() {
    use std::os::unix::process::ExitStatusExt;
    let out = |stdout: &str| crate::process::ProcessOutput {
        status: std::process::ExitStatus::from_raw(1 << 8),
        stdout: stdout.to_owned(),
        stderr: String::new(),
        stdin_error: None,
        elapsed: std::time::Duration::ZERO,
        stdout_omitted: 0,
        stderr_omitted: 0,
    };
    let billed = out(
        r#"{"type":"result","status":"error","error":{"message":"turn limit"},"stats":{"input_tokens":40,"output_tokens":9,"cached":0,"models":{"gemini-2.5-pro":{"total_tokens":49}}}}"#,
    );
    assert!(Gemini.answer("gemini-2.5-pro", &billed).is_err());
    let usage = Gemini.usage("gemini-2.5-pro", &billed).expect("usage");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(40), Some(9))
    );
    assert_eq!(usage.text, "turn limit");
    let nothing = out(r#"{"type":"result","status":"error"}"#);
    assert_eq!(Gemini.usage("gemini-2.5-pro", &nothing), None);
}
