//! Tests of the Claude Code adapter: the command line, environment and files each profile
//! gives, and reading its stream (recorded from Claude Code 2.1.330 answering a tool-use turn).

use std::path::Path;

use super::*;
use crate::cli::agent::{flag_values as values, test_setup};
use crate::profile::McpServer;

fn invocation(profile: &AgentProfile, workdir: &str) -> Invocation {
    Claude
        .invocation(&test_setup(profile, Path::new(workdir), true))
        .expect("a profile Claude Code can run")
}

#[test]
fn text_only_is_todays_exact_command_line_environment_and_no_files() {
    let inv = invocation(&AgentProfile::text_only(), "/gavel/agent");
    assert_eq!(
        inv.args,
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--tools",
            "",
            "--setting-sources",
            "user",
            "--strict-mcp-config",
            "--no-session-persistence",
            "--max-turns",
            "1",
            "--model",
            "m"
        ]
    );
    let env: Vec<(&str, &str)> = inv
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        env,
        [
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK", "1"),
            ("API_TIMEOUT_MS", "120000"),
            ("CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS", "120000"),
        ]
    );
    assert!(inv.files.is_empty());
}

#[test]
fn each_tools_level_maps_to_built_in_tools_and_a_permission_mode() {
    let read = AgentProfile {
        tools: Tools::ReadOnly,
        max_turns: 5,
        ..AgentProfile::text_only()
    };
    let args = invocation(&read, "/gavel/agent").args;
    assert_eq!(values(&args, "--tools"), ["Read,Grep,Glob"]);
    assert_eq!(values(&args, "--permission-mode"), ["dontAsk"]);
    assert_eq!(values(&args, "--max-turns"), ["5"]);
    assert!(
        !args
            .iter()
            .any(|a| a == "--allowedTools" || a == "--add-dir")
    );

    let edit = AgentProfile::edit_within("/w/tree", 30);
    let args = invocation(&edit, "/w/tree").args;
    assert_eq!(values(&args, "--tools"), ["Read,Grep,Glob,Edit,Write"]);
    assert_eq!(values(&args, "--permission-mode"), ["acceptEdits"]);
    assert_eq!(values(&args, "--allowedTools"), ["Edit(//w/tree/**)"]);
    assert!(
        !args.iter().any(|a| a == "--add-dir"),
        "the folder is the working folder"
    );
    let args = invocation(&edit, "/w").args;
    assert_eq!(values(&args, "--add-dir"), ["/w/tree"]);

    let shell = AgentProfile {
        tools: Tools::Shell {
            within: "/w/tree".into(),
            allowed: vec!["cargo test".into(), "git status".into()],
        },
        ..AgentProfile::edit_within("/w/tree", 30)
    };
    let args = invocation(&shell, "/w/tree").args;
    assert_eq!(values(&args, "--tools"), ["Read,Grep,Glob,Edit,Write,Bash"]);
    assert_eq!(
        values(&args, "--allowedTools"),
        [
            "Edit(//w/tree/**)",
            "Bash(cargo test)",
            "Bash(cargo test *)",
            "Bash(git status)",
            "Bash(git status *)"
        ]
    );
    for profile in [read, edit, shell] {
        let args = invocation(&profile, "/w/tree").args;
        assert!(args.iter().any(|a| a == "--strict-mcp-config"));
        assert_eq!(args[args.len() - 2..], ["--model", "m"]);
    }
}

#[test]
fn mcp_servers_come_from_a_private_file_for_this_call_only() {
    let profile = AgentProfile::text_only().with_mcp_server(McpServer {
        name: "gavel".into(),
        command: "/usr/bin/gavel".into(),
        args: vec!["mcp".into()],
        env: vec![("GAVEL_RUN".into(), "7".into())],
    });
    let inv = invocation(&profile, "/gavel/agent");
    assert_eq!(values(&inv.args, "--tools"), [""]);
    assert!(inv.args.iter().any(|a| a == "--strict-mcp-config"));
    assert_eq!(
        values(&inv.args, "--mcp-config"),
        ["/tmp/gavel-call-t/mcp.json"]
    );
    assert_eq!(values(&inv.args, "--permission-mode"), ["dontAsk"]);
    assert_eq!(values(&inv.args, "--allowedTools"), ["mcp__gavel"]);
    let [file] = inv.files.as_slice() else {
        panic!("one file: {:?}", inv.files)
    };
    assert!(file.temporary, "removed after the call");
    assert_eq!(file.path, Path::new("/tmp/gavel-call-t/mcp.json"));
    let config: Value = serde_json::from_str(&file.contents).expect("JSON");
    assert_eq!(
        config,
        json!({"mcpServers": {"gavel": {"type": "stdio", "command": "/usr/bin/gavel",
            "args": ["mcp"], "env": {"GAVEL_RUN": "7"}}}})
    );
}

/// Claude Code 2.1.330's stream for a `Write` in an `EditWithin` folder (abridged fields).
const TOOL_TURN: &str = r#"{"type":"system","subtype":"init","cwd":"/tmp/prof-exp/edit","tools":["Edit","Glob","Grep","Read","Write"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"acceptEdits"}
{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_01","name":"Write","input":{"file_path":"/tmp/prof-exp/edit/hello.txt","content":"written by claude\n"}}],"stop_reason":null},"parent_tool_use_id":null}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"File created successfully at: /tmp/prof-exp/edit/hello.txt"}]},"parent_tool_use_id":null}
{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Wrote the file."}],"stop_reason":null},"parent_tool_use_id":null}
{"type":"result","subtype":"success","is_error":false,"result":"Wrote the file.","stop_reason":"end_turn","total_cost_usd":0.00042,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":24}}"#;

#[test]
fn tool_uses_and_text_come_from_the_stream_lines() {
    let lines: Vec<Value> = json_lines(TOOL_TURN).collect();
    let uses: Vec<(String, ToolUse)> = lines.iter().flat_map(|l| Claude.tool_uses(l)).collect();
    assert_eq!(
        uses,
        [(
            "toolu_01".to_owned(),
            ToolUse {
                name: "Write".into(),
                summary: "/tmp/prof-exp/edit/hello.txt".into()
            }
        )]
    );
    let text: Vec<String> = lines
        .iter()
        .filter_map(|l| Claude.streamed_text(l))
        .collect();
    assert_eq!(text, ["Wrote the file."], "tool calls are not answer text");
    let p = parse(TOOL_TURN);
    assert_eq!(p.answered_model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(
        p.result.as_ref().and_then(|r| r["result"].as_str()),
        Some("Wrote the file.")
    );
}

#[test]
fn the_answering_model_and_the_result_come_from_the_stream() {
    let stdout = r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"model":"claude-answered-different-1","content":[{"type":"text","text":"Hello"}]}}
{"type":"result","is_error":false,"result":"Hello","total_cost_usd":0.00015,"usage":{"input_tokens":11,"cache_creation_input_tokens":3,"cache_read_input_tokens":5,"output_tokens":7}}"#;
    let p = parse(stdout);
    assert_eq!(
        p.answered_model.as_deref(),
        Some("claude-answered-different-1")
    );
    assert_eq!(
        p.result.as_ref().and_then(|r| r["result"].as_str()),
        Some("Hello")
    );
}

#[test]
fn synthetic_error_messages_are_not_a_model() {
    let p = parse(
        r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}]}}"#,
    );
    assert_eq!(p.answered_model, None);
}

#[test]
fn no_tools_and_the_prompt_stays_out_of_argv() {
    let args = invocation(&AgentProfile::text_only(), "/gavel/agent").args;
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--tools" && w[1].is_empty())
    );
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--setting-sources" && w[1] == "user")
    );
    assert!(!args.iter().any(|a| a.len() > 40));
}

#[test]
fn a_confined_call_leaves_claude_code_its_config_folder_and_file() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert_eq!(
        Claude.state_paths(&vars(&[("HOME", "/h")])),
        [
            StatePath::folder("/h/.claude"),
            StatePath::file("/h/.claude.json")
        ]
    );
    assert_eq!(
        Claude.state_paths(&vars(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/c")])),
        [StatePath::folder("/c")],
        "the config file lives in the config folder then"
    );
    assert!(Claude.state_paths(&vars(&[])).is_empty());
}

fn verdict_schema() -> crate::OutputSchema {
    crate::OutputSchema {
        name: "gavel_verdict".into(),
        schema: serde_json::json!({"type": "object", "properties": {"verdict": {"type": "string"}},
            "required": ["verdict"], "additionalProperties": false}),
    }
}

#[test]
fn a_schema_is_passed_with_json_schema_and_one_more_turn() {
    let schema = verdict_schema();
    let profile = AgentProfile::text_only();
    let setup = Setup {
        output_schema: Some(&schema),
        ..test_setup(&profile, Path::new("/gavel/agent"), true)
    };
    let inv = Claude.invocation(&setup).expect("runs");
    assert_eq!(
        values(&inv.args, "--json-schema"),
        [schema.schema.to_string()]
    );
    assert_eq!(values(&inv.args, "--max-turns"), ["2"]);
    assert_eq!(inv.form, AnswerForm::Schema);
    let plain = invocation(&profile, "/gavel/agent");
    assert!(!plain.args.iter().any(|a| a == "--json-schema"));
    assert_eq!(values(&plain.args, "--max-turns"), ["1"]);
    assert_eq!(plain.form, AnswerForm::Plain);
}

/// Claude Code 2.1.330's stream for `--json-schema`, the model calling its `StructuredOutput`
/// tool (abridged fields).
const STRUCTURED: &str = r#"{"type":"assistant","message":{"content":[{"id":"toolu_fake_1_0","input":{"findings":["No title."],"verdict":"REVISE"},"name":"StructuredOutput","type":"tool_use"}],"id":"msg_fake_1","model":"claude-sonnet-4-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":100,"output_tokens":1}},"parent_tool_use_id":null}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_fake_1_0","type":"tool_result","content":"Structured output provided successfully"}]},"parent_tool_use_id":null,"tool_use_result":"Structured output provided successfully"}
{"type":"result","subtype":"success","is_error":false,"num_turns":2,"stop_reason":"tool_use","result":"{\"findings\":[\"No title.\"],\"verdict\":\"REVISE\"}","structured_output":{"findings":["No title."],"verdict":"REVISE"},"total_cost_usd":0.000615,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":21},"api_error_status":null}"#;

fn finished(stdout: &str, code: i32) -> ProcessOutput {
    use std::os::unix::process::ExitStatusExt;
    ProcessOutput {
        status: std::process::ExitStatus::from_raw(code << 8),
        stdout: stdout.to_owned(),
        stderr: String::new(),
        stdin_error: None,
        elapsed: Duration::ZERO,
        stdout_omitted: 0,
        stderr_omitted: 0,
    }
}

#[test]
fn the_structured_output_is_the_answer_and_its_tool_is_no_tool_use() {
    let answer = Claude
        .answer("claude-sonnet-4-5", &finished(STRUCTURED, 0))
        .expect("an answer");
    let json: Value = serde_json::from_str(&answer.text).expect("JSON text");
    assert_eq!(
        json,
        serde_json::json!({"verdict": "REVISE", "findings": ["No title."]})
    );
    assert_eq!(answer.output_tokens, Some(21));
    let lines: Vec<Value> = json_lines(STRUCTURED).collect();
    assert!(lines.iter().all(|l| Claude.tool_uses(l).is_empty()));
    let streamed: Vec<String> = lines
        .iter()
        .filter_map(|l| Claude.streamed_text(l))
        .collect();
    assert_eq!(
        streamed.len(),
        1,
        "the structured answer counts as answer text"
    );
    // Without a structured output the result's text is the answer, as before.
    let plain = STRUCTURED.replace(
        r#","structured_output":{"findings":["No title."],"verdict":"REVISE"}"#,
        "",
    );
    let answer = Claude.answer("m", &finished(&plain, 0)).expect("an answer");
    assert_eq!(
        answer.text,
        r#"{"findings":["No title."],"verdict":"REVISE"}"#
    );
}
