//! Tests of the Codex adapter: the command line each profile gives, and reading its stream
//! (recorded from Codex 0.169.0 answering tool-use turns).

use std::path::Path;

use super::*;
use crate::cli::agent::{StatePath, test_setup};
use crate::profile::McpServer;

fn args(profile: &AgentProfile, workdir: &str) -> Vec<String> {
    let inv = Codex
        .invocation(&test_setup(profile, Path::new(workdir), true))
        .expect("a profile Codex can run");
    assert!(inv.env.is_empty() && inv.files.is_empty());
    inv.args
}

/// The `-c` overrides in `args`.
fn overrides_in(args: &[String]) -> Vec<&str> {
    args.windows(2)
        .filter(|w| w[0] == "-c")
        .map(|w| w[1].as_str())
        .collect()
}

#[test]
fn text_only_is_todays_exact_command_line() {
    let args = args(&AgentProfile::text_only(), "/gavel/agent");
    let mut want = strings(&[
        "exec",
        "--json",
        "--ephemeral",
        "--skip-git-repo-check",
        "-m",
        "m",
    ]);
    for o in [
        "sandbox_mode=\"read-only\"",
        "approval_policy=\"never\"",
        "web_search=\"disabled\"",
        "project_doc_max_bytes=0",
        "features.shell_tool=false",
        "features.unified_exec=false",
        "features.view_image=false",
        "features.goals=false",
        "features.plugins=false",
        "features.shell_snapshot=false",
        "features.unbounded_connection_retries=false",
        "agents.enabled=false",
        "tools.experimental_request_user_input.enabled=false",
        "analytics.enabled=false",
        "skills.bundled.enabled=false",
    ] {
        want.push("-c".into());
        want.push(o.into());
    }
    want.push("-".into());
    assert_eq!(args, want);
}

#[test]
fn each_tools_level_maps_to_a_sandbox() {
    let read = AgentProfile {
        tools: Tools::ReadOnly,
        ..AgentProfile::text_only()
    };
    let a = args(&read, "/w/tree");
    let o = overrides_in(&a);
    assert!(o.contains(&"sandbox_mode=\"read-only\""));
    assert!(
        !o.iter().any(|o| o.starts_with("features.shell_tool")),
        "Codex reads through its shell: {o:?}"
    );
    assert!(o.contains(&"approval_policy=\"never\""));

    let edit = AgentProfile::edit_within("/w/tree", 30);
    let a = args(&edit, "/w/tree");
    let o = overrides_in(&a);
    assert!(o.contains(&"sandbox_mode=\"workspace-write\""));
    assert!(o.contains(&"sandbox_workspace_write.network_access=false"));
    assert!(!a.iter().any(|x| x == "--add-dir"));
    let a = args(&edit, "/w");
    let at = a.iter().position(|x| x == "--add-dir").expect("--add-dir");
    assert_eq!(a[at + 1..], ["/w/tree", "-"]);

    let any_command = AgentProfile {
        tools: Tools::Shell {
            within: "/w/tree".into(),
            allowed: Vec::new(),
        },
        ..edit.clone()
    };
    assert!(
        overrides_in(&args(&any_command, "/w/tree")).contains(&"sandbox_mode=\"workspace-write\"")
    );
    let listed = AgentProfile {
        tools: Tools::Shell {
            within: "/w/tree".into(),
            allowed: vec!["cargo test".into()],
        },
        ..edit
    };
    let refused = Codex.invocation(&test_setup(&listed, Path::new("/w/tree"), false));
    assert!(
        matches!(refused, Err(ProfileError::Unsupported { cli: "Codex", .. })),
        "{refused:?}"
    );
}

#[test]
fn mcp_servers_are_per_call_overrides_that_run_without_asking() {
    let p = AgentProfile::text_only().with_mcp_server(McpServer {
        name: "gavel".into(),
        command: "/opt/my \"gavel\"".into(),
        args: vec!["mcp".into(), "--run".into(), "7".into()],
        env: vec![("GAVEL_RUN".into(), "a\\b".into())],
    });
    let a = args(&p, "/gavel/agent");
    let o = overrides_in(&a);
    assert_eq!(
        o[o.len() - 4..],
        [
            r#"mcp_servers.gavel.command="/opt/my \"gavel\"""#,
            r#"mcp_servers.gavel.args=["mcp", "--run", "7"]"#,
            r#"mcp_servers.gavel.env={"GAVEL_RUN" = "a\\b"}"#,
            r#"mcp_servers.gavel.default_tools_approval_mode="approve""#,
        ]
    );
    assert!(o.contains(&"features.shell_tool=false"), "still no shell");
    assert_eq!(toml_str("tab\there\u{7f}"), r#""tab\there\u007F""#);
}

/// Codex 0.169.0's stream for a patch and a shell command (both reported started and
/// completed), recorded; the `mcp_tool_call` item follows Codex's documented format.
const TOOL_TURNS: &str = r#"{"type":"thread.started","thread_id":"01a208b2"}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_1","type":"file_change","changes":[{"path":"/tmp/prof-exp/edit/hello.txt","kind":"add"}],"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[{"path":"/tmp/prof-exp/edit/hello.txt","kind":"add"}],"status":"completed"}}
{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'echo written by codex > hello.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'echo written by codex > hello.txt'","aggregated_output":"","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"probe","tool":"ping","arguments":{"n":1},"result":null,"error":null,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"Wrote the file."}}
{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}"#;

#[test]
fn tool_uses_and_text_come_from_the_stream_lines() {
    let lines: Vec<Value> = json_lines(TOOL_TURNS).collect();
    let uses: Vec<(String, ToolUse)> = lines.iter().flat_map(|l| Codex.tool_uses(l)).collect();
    let ids: Vec<&str> = uses.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        ["item_1", "item_1", "item_2", "item_2", "item_3"],
        "started and completed share an id, so the provider reports each use once"
    );
    let shown: Vec<(&str, &str)> = uses
        .iter()
        .map(|(_, u)| (u.name.as_str(), u.summary.as_str()))
        .collect();
    assert_eq!(
        [shown[0], shown[2], shown[4]],
        [
            ("file_change", "add /tmp/prof-exp/edit/hello.txt"),
            (
                "command_execution",
                "/bin/bash -lc 'echo written by codex > hello.txt'"
            ),
            ("mcp_tool_call", r#"probe/ping {"n":1}"#),
        ]
    );
    let text: Vec<String> = lines
        .iter()
        .filter_map(|l| Codex.streamed_text(l))
        .collect();
    assert_eq!(text, ["Wrote the file."]);
    let p = parse(TOOL_TURNS);
    assert_eq!(p.text.as_deref(), Some("Wrote the file."));
    assert!(p.completed);
}

#[test]
fn the_answer_usage_and_reroutes_come_from_the_event_stream() {
    let stdout = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found."}}
{"type":"item.completed","item":{"id":"item_1","type":"error","message":"model rerouted: gpt-5 -> gpt-5-mini (HighRiskCyberActivity)"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Hello from the fake model."}}
{"type":"turn.completed","usage":{"input_tokens":123,"cached_input_tokens":20,"cache_write_input_tokens":0,"output_tokens":7,"reasoning_output_tokens":3}}"#;
    let p = parse(stdout);
    assert_eq!(p.text.as_deref(), Some("Hello from the fake model."));
    assert!(p.completed && p.failure.is_none());
    assert_eq!(p.rerouted_to.as_deref(), Some("gpt-5-mini"));
    assert_eq!(
        (p.input_tokens, p.cached_tokens, p.output_tokens),
        (Some(123), Some(20), Some(7))
    );
}

#[test]
fn a_failed_turn_names_its_error() {
    let stdout = r#"{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5 (stream closed)"}
{"type":"error","message":"stream disconnected before completion"}
{"type":"turn.failed","error":{"message":"stream disconnected before completion: stream closed before response.completed"}}"#;
    let p = parse(stdout);
    assert!(!p.completed);
    assert!(p.failure.is_some_and(|f| f.contains("stream closed")));
}

#[test]
fn the_prompt_is_never_in_argv_and_tools_are_off() {
    let args = args(&AgentProfile::text_only(), "/gavel/agent");
    assert_eq!(args.last().map(String::as_str), Some("-"));
    assert!(
        args.windows(2)
            .any(|w| w[0] == "-c" && w[1] == "features.shell_tool=false")
    );
    assert!(args.iter().any(|a| a == "--ephemeral"));
}

#[test]
fn a_call_gavel_confines_runs_without_codexs_own_sandbox_and_keeps_its_home() {
    let launcher = gavel_exec::confine::Launcher {
        program: "/usr/bin/gavel".into(),
        args: vec!["__confine".into()],
    };
    let edit = AgentProfile::edit_within("/w/tree", 30).confined(launcher, vec!["/w/tree".into()]);
    let o = args(&edit, "/w/tree");
    let o = overrides_in(&o);
    assert!(o.contains(&"sandbox_mode=\"danger-full-access\""), "{o:?}");
    assert!(!o.iter().any(|o| o.starts_with("sandbox_workspace_write")));
    let home = |name: &str| (name == "HOME").then(|| "/h".to_owned());
    assert_eq!(Codex.state_paths(&home), [StatePath::folder("/h/.codex")]);
    let own = |name: &str| match name {
        "CODEX_HOME" => Some("/c".to_owned()),
        "HOME" => Some("/h".to_owned()),
        _ => None,
    };
    assert_eq!(Codex.state_paths(&own), [StatePath::folder("/c")]);
}

/// A finished Codex run that printed `stdout` and exited with `code`.
fn finished(stdout: &str, code: i32) -> crate::process::ProcessOutput {
    use std::os::unix::process::ExitStatusExt;
    crate::process::ProcessOutput {
        status: std::process::ExitStatus::from_raw(code << 8),
        stdout: stdout.to_owned(),
        stderr: String::new(),
        stdin_error: None,
        elapsed: std::time::Duration::ZERO,
        stdout_omitted: 0,
        stderr_omitted: 0,
    }
}

#[test]
fn a_failed_run_that_reported_usage_still_reports_it_for_the_ledger() {
    let billed = r#"{"type":"turn.completed","usage":{"input_tokens":123,"cached_input_tokens":20,"output_tokens":7}}
{"type":"error","message":"the agent was stopped"}"#;
    let out = finished(billed, 1);
    assert!(Codex.answer("gpt-5", &out).is_err());
    let usage = Codex.usage("gpt-5", &out).expect("usage");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.cached_tokens),
        (Some(123), Some(7), Some(20))
    );
    let nothing = finished(r#"{"type":"turn.failed","error":{"message":"401"}}"#, 1);
    assert_eq!(
        Codex.usage("gpt-5", &nothing),
        None,
        "no usage, nothing billed"
    );
}

#[test]
fn a_schema_goes_to_a_private_file_named_by_output_schema() {
    let schema = crate::OutputSchema {
        name: "gavel_verdict".into(),
        schema: serde_json::json!({"type": "object", "properties": {"verdict": {"type": "string"}},
            "required": ["verdict"], "additionalProperties": false}),
    };
    let profile = AgentProfile::text_only();
    let setup = crate::cli::agent::Setup {
        output_schema: Some(&schema),
        ..test_setup(&profile, Path::new("/gavel/agent"), true)
    };
    let inv = Codex.invocation(&setup).expect("runs");
    let path = Path::new("/tmp/gavel-call-t/output-schema.json");
    let at = inv
        .args
        .iter()
        .position(|a| a == "--output-schema")
        .expect("the flag");
    assert_eq!(inv.args[at + 1], path.display().to_string());
    assert_eq!(
        inv.args.last().map(String::as_str),
        Some("-"),
        "the prompt on stdin"
    );
    assert_eq!(inv.files.len(), 1);
    assert_eq!(inv.files[0].path, path);
    assert!(inv.files[0].temporary);
    let written: serde_json::Value = serde_json::from_str(&inv.files[0].contents).expect("JSON");
    assert_eq!(written, schema.schema);
    assert_eq!(inv.form, AnswerForm::Schema);
    let plain = Codex
        .invocation(&test_setup(&profile, Path::new("/gavel/agent"), true))
        .expect("runs");
    assert_eq!(plain.form, AnswerForm::Plain);
}
