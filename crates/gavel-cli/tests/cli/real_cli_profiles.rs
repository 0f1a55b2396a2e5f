//! Agent profiles with the REAL agent CLIs: each CLI takes the flags and per-call settings gavel
//! gives an editing agent with an MCP server (no error, no argument refused), offers the model
//! exactly those tools (as the fake API records them), starts the call's MCP server, and leaves
//! nothing behind in the edited folder.
//!
//! The fake API answers with text here; real edits made through tool-use turns are in
//! `agents_tools.rs`.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use gavel_fakeapi::{Api, FakeServer, Recorded, Reply};
use gavel_llm::cli::{CliProvider, CliSettings};
use gavel_llm::{AgentProfile, Call, McpServer, Provider, Request, Role};

use crate::agents;
use crate::util::Env;

/// A stdio MCP server with one tool, `ping`, for Node (which the CLIs need anyway).
const PROBE: &str = r#"const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let m; try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  const reply = (body) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...body }) + '\n');
  if (m.method === 'initialize') reply({ result: { protocolVersion: m.params.protocolVersion,
    capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1' } } });
  else if (m.method === 'tools/list') reply({ result: { tools: [{ name: 'ping',
    description: 'Answers pong', inputSchema: { type: 'object', properties: {} } }] } });
  else if (m.method === 'tools/call') reply({ result: { content: [{ type: 'text', text: 'pong' }] } });
  else reply({ error: { code: -32601, message: 'unknown method' } });
});
"#;

/// What one call saw: the main request's tool names, and the edited folder afterwards.
struct Seen {
    tools: BTreeSet<String>,
    left_in_tree: Vec<String>,
}

/// Calls `make(model)` with an editing profile (folder `tree`, MCP server `probe`) against the
/// fake, and returns what the model was offered.
fn call_with_profile(
    api: Api,
    model: &str,
    vars: impl Fn(&Env, &FakeServer) -> Vec<(String, String)>,
    make: fn(String, CliSettings) -> CliProvider,
) -> Seen {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    server.push(api, Reply::text("Nothing to change."));
    let tree = env.root.join("tree");
    fs::create_dir_all(&tree).expect("tree");
    let probe = env.root.join("probe.js");
    fs::write(&probe, PROBE).expect("probe server");
    let node: PathBuf = gavel_llm::tools::find_on_path("node").expect("node on PATH");
    let mut env_vars = vars(&env, &server);
    env_vars.push(("HOME".into(), env.home().display().to_string()));
    let settings = CliSettings {
        idle_timeout: Duration::from_secs(30),
        total_timeout: Duration::from_secs(120),
        env: env_vars,
        workdir: Some(env.root.join("agent-workdir")),
        ..CliSettings::default()
    };
    let provider = make(model.to_owned(), settings);
    let profile = AgentProfile::edit_within(&tree, 4).with_mcp_server(McpServer {
        name: "probe".into(),
        command: node.display().to_string(),
        args: vec![probe.display().to_string()],
        env: vec![("PROBE_TOKEN".into(), "t".into())],
    });
    let request = Request {
        role: Role::DRAFTER,
        prompt: "Change nothing; answer in one line.".into(),
        seq: 0,
        step_id: "edit".into(),
        max_output_tokens: 1000,
        profile,
        output_schema: None,
    };
    let response = provider
        .complete(&request, &Call::new(&|| false))
        .unwrap_or_else(|e| panic!("{}: {e:?}", provider.describe()));
    assert_eq!(response.text.trim(), "Nothing to change.");
    assert!(response.tool_uses.is_empty(), "{:?}", response.tool_uses);
    let main: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(api) && r.model == model)
        .collect();
    assert_eq!(main.len(), 1, "{main:#?}");
    Seen {
        tools: tool_names(&main[0].body["tools"]),
        left_in_tree: fs::read_dir(&tree)
            .expect("tree")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect(),
    }
}

/// The names of the tools a request offers, in any vendor's format.
fn tool_names(tools: &serde_json::Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for t in tools.as_array().map_or(&[][..], Vec::as_slice) {
        if let Some(name) = t["name"].as_str() {
            names.insert(name.to_owned());
        }
        for d in t["functionDeclarations"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            names.extend(d["name"].as_str().map(str::to_owned));
        }
    }
    names
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn nothing_left(seen: &Seen) {
    assert!(
        seen.left_in_tree.is_empty(),
        "gavel's per-call files are gone from the edited folder: {:?}",
        seen.left_in_tree
    );
}

#[test]
fn claude_code_offers_an_editing_agent_its_tools_and_the_calls_mcp_server() {
    let seen = call_with_profile(
        Api::Anthropic,
        "claude-sonnet-4-5",
        agents::claude_env,
        CliProvider::claude,
    );
    assert_eq!(
        seen.tools,
        set(&["Edit", "Glob", "Grep", "Read", "Write", "mcp__probe__ping"])
    );
    nothing_left(&seen);
}

#[test]
fn gemini_cli_offers_an_editing_agent_its_tools_and_the_calls_mcp_server() {
    let seen = call_with_profile(Api::Gemini, "gemini-2.5-pro", agents::gemini_env, |m, s| {
        CliProvider::gemini(m, s)
    });
    assert_eq!(
        seen.tools,
        set(&[
            "glob",
            "grep_search",
            "list_directory",
            "mcp_probe_ping",
            "read_file",
            "replace",
            "write_file"
        ])
    );
    nothing_left(&seen);
}

#[test]
fn codex_offers_an_editing_agent_its_shell_and_the_calls_mcp_server() {
    let seen = call_with_profile(Api::OpenAiResponses, "gpt-5", agents::codex_env, |m, s| {
        CliProvider::codex(m, s)
    });
    for name in ["exec_command", "mcp__probe"] {
        assert!(seen.tools.contains(name), "{name}: {:?}", seen.tools);
    }
    nothing_left(&seen);
}
