//! `claude:MODEL`: the Claude Code CLI, as `claude -p --output-format stream-json`.
//!
//! The prompt goes on stdin. `--tools` names the built-in tools the profile allows (`""`: none,
//! so the request's `tools` is empty), `--setting-sources user` keeps the project's settings
//! and CLAUDE.md out, `--strict-mcp-config` loads no MCP servers but the call's own
//! (`--mcp-config`, a file in the call's private folder), `--permission-mode` decides what runs
//! without asking (`dontAsk`: only what is allowed; `acceptEdits`: also edits inside the
//! working folders), `--allowedTools` allows the profile's shell commands and MCP servers,
//! `--no-session-persistence` keeps no session, and `--max-turns` caps the turns. The
//! environment turns off non-essential traffic, telemetry, the auto-updater and error
//! reporting, sets the CLI's own retries to 0 (gavel's retry policy decides, so a 429 is retried
//! the same way for every provider) and disables the non-streaming fallback (which would pay
//! for a second answer). The CLI's timeouts follow gavel's idle timeout.
//!
//! From the event stream: the answering model is `assistant.message.model` (the API's own
//! field; `<synthetic>` on errors), tool uses are the `tool_use` blocks of assistant messages,
//! and the final `result` line carries the text, `is_error`, `api_error_status`, token usage
//! and `total_cost_usd`.
//!
//! A request with an output schema gets `--json-schema SCHEMA`: Claude Code offers the model
//! a `StructuredOutput` tool with the schema as its input schema (not forced: it asks for
//! extended thinking, which a forced tool excludes), checks the tool's input against the
//! schema itself, and puts the input in the result's `structured_output`, which is then the
//! answer (as JSON text). A model that answers without calling the tool gets a reminder turn
//! from the CLI, and one whose input fails the schema gets the error as the tool's result, so
//! such a call has one turn more than its profile (the tool is the answer, not a tool use).
//! A call that still ends without it fails at the turn limit: never an answer.
//!
//! A confined call leaves Claude Code its state writable ([`CliAgent::state_paths`]): the
//! configuration folder (`$CLAUDE_CONFIG_DIR`, else `~/.claude`: sign-in, sessions, caches)
//! and, without `CLAUDE_CONFIG_DIR`, the file `~/.claude.json` (its global settings). Claude
//! Code writes that file atomically through a lock folder and a temporary file beside it in
//! HOME, which stays closed; it then falls back to writing the file in place, which the
//! file's own rule allows.

use std::time::Duration;

use serde_json::{Value, json};

use super::agent::{
    Answer, CallFile, CliAgent, Invocation, Setup, StatePath, env_object, home, json_lines,
    strings, summarize,
};
use super::{classify, no_answer};
use crate::process::ProcessOutput;
use crate::profile::{AgentProfile, McpServer, ProfileError, Tools};
use crate::provider::{AnswerForm, ProviderError, ToolUse};
use crate::tools::{CLI_TOOLS, CliTool, cli_tool};

/// Claude Code.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Claude;

/// The built-in tools for each tools level.
fn builtin_tools(tools: &Tools) -> &'static str {
    match tools {
        Tools::None => "",
        Tools::ReadOnly => "Read,Grep,Glob",
        Tools::EditWithin(_) => "Read,Grep,Glob,Edit,Write",
        Tools::Shell { .. } => "Read,Grep,Glob,Edit,Write,Bash",
    }
}

/// What runs without asking (nobody can answer a question in `-p` mode: anything that would
/// ask is refused). A text-only call keeps the CLI's default.
fn permission_mode(profile: &AgentProfile) -> Option<&'static str> {
    match &profile.tools {
        Tools::None if profile.mcp_servers.is_empty() => None,
        Tools::None | Tools::ReadOnly => Some("dontAsk"),
        Tools::EditWithin(_) | Tools::Shell { .. } => Some("acceptEdits"),
    }
}

/// Permission rules: edits beneath the edit folder (`Edit(//ABS/**)`, Claude Code's rule for
/// an absolute path, which covers every file-editing tool), each allowed command alone or
/// with arguments, and every tool of the call's MCP servers.
fn allowed_tools(profile: &AgentProfile) -> Vec<String> {
    let edits = profile
        .tools
        .edit_folder()
        .map(|dir| format!("Edit(/{}/**)", dir.display()));
    let commands = profile
        .tools
        .allowed_commands()
        .iter()
        .flat_map(|c| [format!("Bash({c})"), format!("Bash({c} *)")]);
    let servers = profile
        .mcp_servers
        .iter()
        .map(|s| format!("mcp__{}", s.name));
    edits.into_iter().chain(commands).chain(servers).collect()
}

/// The `--mcp-config` file.
fn mcp_config(servers: &[McpServer]) -> String {
    let servers: serde_json::Map<String, Value> = servers
        .iter()
        .map(|s| {
            let env = env_object(&s.env);
            let config = json!({"type": "stdio", "command": s.command, "args": s.args, "env": env});
            (s.name.clone(), config)
        })
        .collect();
    json!({ "mcpServers": servers }).to_string()
}

/// The environment gavel adds for the CLI.
fn env(idle_timeout: Duration) -> Vec<(String, String)> {
    let idle_ms = idle_timeout.as_millis().max(10_000).to_string();
    let mut env: Vec<(String, String)> = [
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK", "1"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    env.push(("API_TIMEOUT_MS".into(), idle_ms.clone()));
    env.push(("CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS".into(), idle_ms));
    env
}

impl CliAgent for Claude {
    fn tool(&self) -> &'static CliTool {
        cli_tool("claude").unwrap_or(&CLI_TOOLS[0])
    }

    fn invocation(&self, s: &Setup<'_>) -> Result<Invocation, ProfileError> {
        let p = s.profile;
        let mut args = strings(&[
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--tools",
            builtin_tools(&p.tools),
            "--setting-sources",
            "user",
            "--strict-mcp-config",
        ]);
        let mut files = Vec::new();
        if !p.mcp_servers.is_empty() {
            let path = s.scratch.join("mcp.json");
            args.push("--mcp-config".into());
            args.push(path.display().to_string());
            files.push(CallFile {
                path,
                contents: mcp_config(&p.mcp_servers),
                temporary: true,
            });
        }
        if let Some(mode) = permission_mode(p) {
            args.extend(strings(&["--permission-mode", mode]));
        }
        if let Some(dir) = s.extra_edit_folder() {
            args.push("--add-dir".into());
            args.push(dir.display().to_string());
        }
        let allowed = allowed_tools(p);
        if !allowed.is_empty() {
            args.push("--allowedTools".into());
            args.extend(allowed);
        }
        // With a schema, one more turn for the CLI's reminder or schema error (module docs).
        let turns = p
            .max_turns
            .saturating_add(u32::from(s.output_schema.is_some()));
        args.extend(strings(&["--no-session-persistence", "--max-turns"]));
        args.push(turns.to_string());
        args.push("--model".into());
        args.push(s.model.to_owned());
        let mut form = AnswerForm::Plain;
        if let Some(schema) = s.output_schema {
            args.push("--json-schema".into());
            args.push(schema.schema.to_string());
            form = AnswerForm::Schema;
        }
        Ok(Invocation {
            args,
            env: env(s.idle_timeout),
            files,
            form,
        })
    }

    fn state_paths(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<StatePath> {
        if let Some(dir) = var("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            return vec![StatePath::folder(dir)];
        }
        home(var)
            .map(|h| {
                vec![
                    StatePath::folder(h.join(".claude")),
                    StatePath::file(h.join(".claude.json")),
                ]
            })
            .unwrap_or_default()
    }

    fn streamed_text(&self, line: &Value) -> Option<String> {
        if line["type"] != "assistant" {
            return None;
        }
        let text: String = line["message"]["content"]
            .as_array()?
            .iter()
            .filter_map(|c| match c["text"].as_str() {
                Some(text) => Some(text.to_owned()),
                // The structured answer, handed in as the input of Claude Code's own tool.
                None if is_structured_output(c) => Some(c["input"].to_string()),
                None => None,
            })
            .collect();
        (!text.is_empty()).then_some(text)
    }

    fn tool_uses(&self, line: &Value) -> Vec<(String, ToolUse)> {
        if line["type"] != "assistant" {
            return Vec::new();
        }
        let blocks = line["message"]["content"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        blocks
            .iter()
            .filter(|b| b["type"] == "tool_use" && !is_structured_output(b))
            .map(|b| {
                let name = b["name"].as_str().unwrap_or("?").to_owned();
                let id = b["id"].as_str().unwrap_or("").to_owned();
                let summary = summarize(&b["input"]);
                (id, ToolUse { name, summary })
            })
            .collect()
    }

    fn answer(&self, model: &str, out: &ProcessOutput) -> Result<Answer, ProviderError> {
        let tool = self.tool();
        let p = parse(&out.stdout);
        let Some(result) = p.result else {
            return Err(classify(tool, &no_answer("claude", out, "a result"), model));
        };
        let text = result["result"].as_str().unwrap_or_default().to_owned();
        if result["is_error"].as_bool().unwrap_or(true) || !out.status.success() {
            let status = result["api_error_status"].as_u64();
            let subtype = result["subtype"].as_str().unwrap_or_default();
            if subtype == "error_max_turns" {
                // The same call would stop at the same limit: not worth paying for again.
                return Err(ProviderError::Permanent {
                    provider: "claude".into(),
                    message: format!(
                        "Claude Code stopped at its turn limit (error_max_turns) without an answer{}",
                        if text.is_empty() {
                            String::new()
                        } else {
                            format!(": {text}")
                        }
                    ),
                    hint: Some(
                        "the agent used every turn it was given; see the call in `gavel show RUN`"
                            .into(),
                    ),
                });
            }
            let message = match (status, text.is_empty()) {
                (Some(s), _) => format!("API status {s}: {text}"),
                (None, true) if !subtype.is_empty() => format!("Claude Code ended with {subtype}"),
                (None, _) => text,
            };
            return Err(match status {
                Some(401 | 403) | Some(400) | Some(404) => classify(tool, &message, model),
                _ => ProviderError::Transient {
                    quota: status == Some(429) || super::quota_exhausted(&message),
                    provider: "claude".into(),
                    message,
                    retry_after_ms: None,
                },
            });
        }
        // Asked with a schema, the answer is the structured one, as JSON text.
        let text = match &result["structured_output"] {
            Value::Null => text,
            structured => structured.to_string(),
        };
        Ok(answer_of(text, p.answered_model, &result))
    }

    fn usage(&self, _model: &str, out: &ProcessOutput) -> Option<Answer> {
        let p = parse(&out.stdout);
        let result = p.result?;
        // An error result (`error_max_turns`, `error_during_execution`) says what went wrong in
        // its subtype and carries the usage and cost of the turns taken.
        let text = match (result["result"].as_str(), result["subtype"].as_str()) {
            (Some(text), _) => text.to_owned(),
            (None, Some(subtype)) => subtype.to_owned(),
            (None, None) => String::new(),
        };
        let answer = answer_of(text, p.answered_model, &result);
        let reported = answer.input_tokens.unwrap_or(0) > 0
            || answer.output_tokens.unwrap_or(0) > 0
            || answer.cost_usd.unwrap_or(0.0) > 0.0;
        reported.then_some(answer)
    }
}

/// The name of the tool through which Claude Code takes a structured answer (`--json-schema`).
const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// Whether a content block is the structured answer (a call of [`STRUCTURED_OUTPUT_TOOL`]).
fn is_structured_output(block: &Value) -> bool {
    block["type"] == "tool_use" && block["name"] == STRUCTURED_OUTPUT_TOOL
}

/// The answer a `result` line reports: its text, the answering model, usage and cost.
fn answer_of(text: String, model: Option<String>, result: &Value) -> Answer {
    let usage = &result["usage"];
    let fresh = usage["input_tokens"].as_u64();
    let cache_read = usage["cache_read_input_tokens"].as_u64();
    let cache_write = usage["cache_creation_input_tokens"].as_u64();
    Answer {
        text,
        model: model.unwrap_or_default(),
        input_tokens: fresh.map(|f| f + cache_read.unwrap_or(0) + cache_write.unwrap_or(0)),
        output_tokens: usage["output_tokens"].as_u64(),
        cached_tokens: cache_read,
        cost_usd: result["total_cost_usd"].as_f64(),
    }
}

/// What the event stream said.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub answered_model: Option<String>,
    pub result: Option<Value>,
}

pub(crate) fn parse(stdout: &str) -> Parsed {
    let mut p = Parsed::default();
    for v in json_lines(stdout) {
        match v["type"].as_str() {
            Some("assistant") => {
                if let Some(m) = v["message"]["model"]
                    .as_str()
                    .filter(|m| *m != "<synthetic>")
                {
                    p.answered_model = Some(m.to_owned());
                }
            }
            Some("result") => p.result = Some(v),
            _ => {}
        }
    }
    p
}

#[cfg(test)]
mod tests;
