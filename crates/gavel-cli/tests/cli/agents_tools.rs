//! Real edits by the REAL agent CLIs: the fake API answers with a tool-use turn, the CLI runs
//! its own file-writing tool in the folder gavel lets it edit, sends the tool's result back,
//! and the fake's next reply ends the call. gavel calls the CLI exactly as a workflow will:
//! `CliProvider` with `AgentProfile::edit_within`.

use std::fs;
use std::path::Path;
use std::time::Duration;

use gavel_fakeapi::{Api, FakeServer, Recorded, Reply};
use gavel_llm::cli::{CliProvider, CliSettings};
use gavel_llm::{AgentProfile, Call, Provider, Request, Response, Role};
use serde_json::{Value, json};

use crate::agents;
use crate::util::Env;

/// Calls `provider` with an editing profile for `tree` and the prompt `prompt`.
fn edit(provider: &CliProvider, tree: &Path, prompt: &str) -> Response {
    let request = Request {
        role: Role::DRAFTER,
        prompt: prompt.into(),
        seq: 0,
        step_id: "edit".into(),
        max_output_tokens: 1000,
        profile: AgentProfile::edit_within(tree, 4),
        output_schema: None,
    };
    provider
        .complete(&request, &Call::new(&|| false))
        .unwrap_or_else(|e| panic!("{}: {e:?}", provider.describe()))
}

fn settings(env: &Env, mut vars: Vec<(String, String)>) -> CliSettings {
    vars.push(("HOME".into(), env.home().display().to_string()));
    CliSettings {
        idle_timeout: Duration::from_secs(30),
        total_timeout: Duration::from_secs(120),
        env: vars,
        workdir: Some(env.root.join("agent-workdir")),
        ..CliSettings::default()
    }
}

/// The requests to `api` for `model` (the conversation, not a CLI's side requests).
fn conversation(server: &FakeServer, api: Api, model: &str) -> Vec<Recorded> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(api) && r.model == model)
        .collect()
}

/// An empty folder to edit, by its canonical path (as the CLIs report paths).
fn tree(env: &Env) -> std::path::PathBuf {
    let tree = env.root.join("tree");
    fs::create_dir_all(&tree).expect("tree");
    tree.canonicalize().expect("tree path")
}

/// The content blocks of the last message of an Anthropic request.
fn last_message_blocks(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    match messages.last().map(|m| &m["content"]) {
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    }
}

#[test]
fn claude_code_writes_a_file_with_its_write_tool_and_sends_the_result_back() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    let tree = tree(&env);
    let target = tree.join("hello.py");
    let model = "claude-sonnet-4-5";
    server.push(
        Api::Anthropic,
        Reply::tool_use(
            "Write",
            json!({"file_path": target.display().to_string(), "content": "print('hi')\n"}),
        ),
    );
    server.push(Api::Anthropic, Reply::text("done"));
    let provider = CliProvider::claude(model, settings(&env, agents::claude_env(&env, &server)));

    let response = edit(&provider, &tree, "Create hello.py that prints hi.");

    let requests = conversation(&server, Api::Anthropic, model);
    assert_eq!(
        fs::read_to_string(&target).ok().as_deref(),
        Some("print('hi')\n"),
        "the file Claude Code wrote; requests: {requests:#?}"
    );
    assert_eq!(response.text.trim(), "done");
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let results: Vec<Value> = last_message_blocks(&requests[1].body)
        .into_iter()
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{:#}", requests[1].body["messages"]);
    // The result answers the tool use the fake sent, which Claude Code echoes as the
    // assistant's turn.
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let echoed = &messages[messages.len() - 2];
    assert_eq!(echoed["role"], "assistant");
    let tool_use = echoed["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_use"))
        .expect("the tool use, echoed");
    assert_eq!(tool_use["name"], "Write");
    assert!(
        tool_use["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("toolu_fake_"))
    );
    assert_eq!(results[0]["tool_use_id"], tool_use["id"]);
    assert_ne!(results[0]["is_error"], true, "{:#}", results[0]);
    let names: Vec<&str> = response.tool_uses.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Write"]);
    assert_eq!(server.pending(Api::Anthropic), 0);
}

#[test]
fn claude_code_is_refused_a_write_outside_the_folder_it_may_edit() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    let tree = tree(&env);
    let outside = tree.parent().expect("parent").join("outside.py");
    let model = "claude-sonnet-4-5";
    server.push(
        Api::Anthropic,
        Reply::tool_use(
            "Write",
            json!({"file_path": outside.display().to_string(), "content": "x = 1\n"}),
        ),
    );
    server.push(Api::Anthropic, Reply::text("could not"));
    let provider = CliProvider::claude(model, settings(&env, agents::claude_env(&env, &server)));

    let response = edit(&provider, &tree, "Create ../outside.py.");

    assert!(!outside.exists(), "Claude Code wrote outside its folder");
    assert_eq!(response.text.trim(), "could not");
    let requests = conversation(&server, Api::Anthropic, model);
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let results: Vec<Value> = last_message_blocks(&requests[1].body)
        .into_iter()
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{:#}", requests[1].body["messages"]);
    assert_eq!(results[0]["is_error"], true, "{:#}", results[0]);
}

#[test]
fn codex_writes_a_file_with_apply_patch_through_its_shell_and_sends_the_output_back() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    let tree = tree(&env);
    let model = "gpt-5";
    // Codex offers `exec_command` (and `write_stdin`), no apply_patch tool of its own: a model
    // calls `apply_patch` in the shell, which Codex intercepts and applies itself.
    let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.py\n+print('hi')\n*** End Patch\nEOF\n";
    server.push(
        Api::OpenAiResponses,
        Reply::tool_use(
            "exec_command",
            json!({"cmd": patch, "workdir": tree.display().to_string()}),
        ),
    );
    server.push(Api::OpenAiResponses, Reply::text("done"));
    let provider = CliProvider::codex(model, settings(&env, agents::codex_env(&env, &server)));

    let response = edit(&provider, &tree, "Create hello.py that prints hi.");

    let requests = conversation(&server, Api::OpenAiResponses, model);
    assert_eq!(
        fs::read_to_string(tree.join("hello.py")).ok().as_deref(),
        Some("print('hi')\n"),
        "the file Codex wrote; requests: {requests:#?}"
    );
    assert_eq!(response.text.trim(), "done");
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let input = requests[1].body["input"].as_array().expect("input items");
    let call = input
        .iter()
        .find(|i| i["type"] == "function_call")
        .expect("the call, echoed");
    assert_eq!(call["name"], "exec_command");
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .expect("the call's output");
    assert_eq!(output["call_id"], call["call_id"]);
    let text = output["output"].as_str().unwrap_or_default();
    assert!(text.contains("A hello.py"), "{text}");
    let uses: Vec<(&str, &str)> = response
        .tool_uses
        .iter()
        .map(|t| (t.name.as_str(), t.summary.as_str()))
        .collect();
    let added = format!("add {}", tree.join("hello.py").display());
    assert_eq!(uses, [("file_change", added.as_str())]);
}

#[test]
fn gemini_cli_writes_a_file_with_its_write_file_tool_and_sends_the_response_back() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    let tree = tree(&env);
    let target = tree.join("hello.py");
    let model = "gemini-2.5-pro";
    server.push(
        Api::Gemini,
        Reply::tool_use(
            "write_file",
            json!({"file_path": target.display().to_string(), "content": "print('hi')\n"}),
        ),
    );
    server.push(Api::Gemini, Reply::text("done"));
    let provider = CliProvider::gemini(model, settings(&env, agents::gemini_env(&env, &server)));

    let response = edit(&provider, &tree, "Create hello.py that prints hi.");

    let requests = conversation(&server, Api::Gemini, model);
    assert_eq!(
        fs::read_to_string(&target).ok().as_deref(),
        Some("print('hi')\n"),
        "the file the Gemini CLI wrote; requests: {requests:#?}"
    );
    assert_eq!(response.text.trim(), "done");
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let contents = requests[1].body["contents"].as_array().expect("contents");
    let parts = |i: usize| &contents[contents.len() - i]["parts"][0];
    assert_eq!(parts(2)["functionCall"]["name"], "write_file");
    let reply = &parts(1)["functionResponse"];
    assert_eq!(reply["name"], "write_file");
    assert_eq!(reply["id"], parts(2)["functionCall"]["id"]);
    let output = reply["response"]["output"].as_str().unwrap_or_default();
    assert!(output.contains("Successfully created"), "{reply:#}");
    let names: Vec<&str> = response.tool_uses.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["write_file"]);
}
