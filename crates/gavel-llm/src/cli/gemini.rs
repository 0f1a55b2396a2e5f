//! `gemini:MODEL`: the Gemini CLI, headless with `-o stream-json`.
//!
//! The prompt goes on stdin (written at once: the CLI gives up on stdin after 500 ms), behind a
//! fixed first line so a prompt can never start with `/` (a slash command). The CLI's workspace
//! is its working folder, and gavel writes the workspace settings there (`.gemini/settings.json`,
//! which win over the person's user settings; a system settings file is only read from a
//! root-owned folder, so it cannot be given per call): the profile's tools (`tools.core`, an
//! allow-list: `[]` declares no functions; a shell command is `run_shell_command(PREFIX)`; an
//! MCP server's tools are `mcp_NAME_*`), the call's MCP servers, no skills, agents, hooks or IDE
//! integration, no telemetry or update checks, one attempt per call (`maxAttempts: 1`; gavel's
//! retry policy decides) and the turn cap (`model.maxSessionTurns`). A text-only call in
//! gavel's own empty folder gets the fixed [`WORKSPACE_SETTINGS`]; a call whose settings differ
//! runs in a folder of its own (the profile's, or a private one), where the file is written
//! for the call and removed after it. The person's own settings still choose how they sign in.
//! `GEMINI_CLI_NO_RELAUNCH` keeps the CLI in the process gavel started (so a kill reaches it),
//! `-e none` loads no extensions, `--approval-mode auto_edit` lets an editing agent write, and
//! `--allowed-mcp-server-names` starts only the call's MCP servers.
//!
//! Traps handled: the exit code is the HTTP status modulo 256 (or 0 after a cut stream), so
//! success is only `result.status == "success"` with exit 0; the answering model is the key of
//! `stats.models` that has tokens (the CLI may rewrite or fall back to another model, which
//! model verification then flags). Tool uses are the `tool_use` lines.
//!
//! The CLI has no option that asks for structured output, so a request's output schema is not
//! passed on: the answer's form is plain.
//!
//! A confined call leaves the CLI its state folder writable ([`CliAgent::state_paths`]):
//! `.gemini` in `$GEMINI_CLI_HOME`, else in HOME (installation id, project registry, history).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::agent::{
    Answer, CallFile, CliAgent, Invocation, Setup, StatePath, env_object, home, json_lines,
    strings, summarize,
};
use super::{classify, last_line};
use crate::process::ProcessOutput;
use crate::profile::{AgentProfile, ProfileError, Tools};
use crate::provider::{AnswerForm, ProviderError, ToolUse};
use crate::tools::{CLI_TOOLS, CliTool, cli_tool};

/// The MCP server name a call without servers allows: no server is called this, so none of the
/// person's own servers start.
pub(crate) const NO_MCP_SERVERS: &str = "gavel-no-mcp-servers";

/// The first line of every prompt sent to the Gemini CLI.
const PROMPT_HEADER: &str = "Request from gavel (answer in Markdown):\n\n";

/// The first line of a settings file gavel writes for one call in a folder it does not own
/// (the CLI strips comments from its settings files).
const CALL_HEADER: &str = "// Written by gavel for one call and removed when it ends.\n";

/// gavel's workspace settings for a text-only call.
pub const WORKSPACE_SETTINGS: &str = r#"{
  "general": {
    "enableAutoUpdate": false,
    "enableAutoUpdateNotification": false,
    "maxAttempts": 1,
    "retryFetchErrors": false,
    "checkpointing": { "enabled": false },
    "sessionRetention": { "enabled": false }
  },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "ide": { "enabled": false },
  "tools": { "core": [], "exclude": [] },
  "mcpServers": {},
  "skills": { "enabled": false },
  "hooksConfig": { "enabled": false },
  "experimental": { "enableAgents": false },
  "context": { "includeDirectoryTree": false, "discoveryMaxDirs": 0, "memoryBoundaryMarkers": [] },
  "model": { "disableLoopDetection": true, "skipNextSpeakerCheck": true, "maxSessionTurns": 1 }
}
"#;

/// The Gemini CLI.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gemini;

/// The allow-list of tools (`tools.core`) for a profile.
fn core_tools(profile: &AgentProfile) -> Vec<String> {
    let read = ["read_file", "list_directory", "glob", "grep_search"];
    let mut core: Vec<String> = match &profile.tools {
        Tools::None => Vec::new(),
        Tools::ReadOnly => strings(&read),
        Tools::EditWithin(_) | Tools::Shell { .. } => {
            let mut tools = strings(&read);
            tools.extend(strings(&["replace", "write_file"]));
            tools
        }
    };
    core.extend(
        profile
            .tools
            .allowed_commands()
            .iter()
            .map(|c| format!("run_shell_command({c})")),
    );
    core.extend(
        profile
            .mcp_servers
            .iter()
            .map(|s| format!("mcp_{}_*", s.name)),
    );
    core
}

/// The workspace settings for a profile.
pub(crate) fn settings(profile: &AgentProfile) -> String {
    if !profile.uses_tools() && profile.max_turns == 1 {
        return WORKSPACE_SETTINGS.to_owned();
    }
    let mut v: Value = serde_json::from_str(WORKSPACE_SETTINGS).unwrap_or(Value::Null);
    v["tools"]["core"] = json!(core_tools(profile));
    v["model"]["maxSessionTurns"] = json!(profile.max_turns);
    for s in &profile.mcp_servers {
        let env = env_object(&s.env);
        v["mcpServers"][&s.name] =
            json!({"command": s.command, "args": s.args, "env": env, "trust": true});
    }
    let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
    text.push('\n');
    text
}

impl CliAgent for Gemini {
    fn tool(&self) -> &'static CliTool {
        cli_tool("gemini").unwrap_or(&CLI_TOOLS[1])
    }

    fn invocation(&self, s: &Setup<'_>) -> Result<Invocation, ProfileError> {
        let p = s.profile;
        let dir = s
            .workdir
            .map_or_else(|| self.fallback_workdir(), |d| Some(d.to_path_buf()))
            .unwrap_or_default();
        let mut contents = settings(p);
        if !s.own_workdir {
            contents.insert_str(0, CALL_HEADER);
        }
        let file = CallFile {
            path: dir.join(".gemini").join("settings.json"),
            contents,
            temporary: !s.own_workdir,
        };
        let mut args = strings(&["-p", "", "-o", "stream-json", "-m", s.model, "-e", "none"]);
        if p.tools.edit_folder().is_some() {
            args.extend(strings(&["--approval-mode", "auto_edit"]));
        }
        if let Some(extra) = s.extra_edit_folder() {
            args.push("--include-directories".into());
            args.push(extra.display().to_string());
        }
        // Always name the MCP servers the call may start. The workspace settings' empty
        // `mcpServers` is merged with the person's own, not replacing them, so without this
        // flag a text-only call would start their servers; an empty name crashes the CLI, so a
        // call without servers names one that cannot exist.
        args.push("--allowed-mcp-server-names".into());
        if p.mcp_servers.is_empty() {
            args.push(NO_MCP_SERVERS.into());
        } else {
            args.extend(p.mcp_servers.iter().map(|m| m.name.clone()));
        }
        Ok(Invocation {
            args,
            env: vec![
                ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()),
                ("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned()),
            ],
            files: vec![file],
            // The Gemini CLI has no option that asks for structured output.
            form: AnswerForm::Plain,
        })
    }

    fn stdin(&self, prompt: &str) -> String {
        format!("{PROMPT_HEADER}{prompt}")
    }

    fn fallback_workdir(&self) -> Option<PathBuf> {
        Some(std::env::temp_dir().join(format!("gavel-gemini-{}", std::process::id())))
    }

    fn settings_in_workdir(&self, profile: &AgentProfile) -> bool {
        settings(profile) != WORKSPACE_SETTINGS
    }

    fn state_paths(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<StatePath> {
        let base = var("GEMINI_CLI_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| home(var));
        base.map(|b| vec![StatePath::folder(b.join(".gemini"))])
            .unwrap_or_default()
    }

    fn streamed_text(&self, line: &Value) -> Option<String> {
        (line["type"] == "message" && line["role"] == "assistant")
            .then(|| line["content"].as_str().unwrap_or_default().to_owned())
    }

    fn tool_uses(&self, line: &Value) -> Vec<(String, ToolUse)> {
        if line["type"] != "tool_use" {
            return Vec::new();
        }
        let name = line["tool_name"].as_str().unwrap_or("?").to_owned();
        let id = line["tool_id"].as_str().unwrap_or("").to_owned();
        let summary = summarize(&line["parameters"]);
        vec![(id, ToolUse { name, summary })]
    }

    fn usage(&self, model: &str, out: &ProcessOutput) -> Option<Answer> {
        let p = parse(&out.stdout);
        let reported = p.input_tokens.unwrap_or(0) > 0 || p.output_tokens.unwrap_or(0) > 0;
        reported.then(|| Answer {
            text: if p.text.is_empty() {
                p.error.unwrap_or_default()
            } else {
                p.text
            },
            model: p.models.last().cloned().unwrap_or_else(|| model.to_owned()),
            input_tokens: p.input_tokens,
            output_tokens: p.output_tokens,
            cached_tokens: p.cached_tokens,
            cost_usd: None,
        })
    }

    fn answer(&self, model: &str, out: &ProcessOutput) -> Result<Answer, ProviderError> {
        let tool = self.tool();
        let p = parse(&out.stdout);
        if out.status.success() && p.success && p.error.is_none() && !p.text.is_empty() {
            let answered = match p.models.as_slice() {
                [one] => one.clone(),
                [] => model.to_owned(),
                many => many.last().cloned().unwrap_or_default(),
            };
            return Ok(Answer {
                text: p.text,
                model: answered,
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                cached_tokens: p.cached_tokens,
                cost_usd: None,
            });
        }
        // The exit code is the HTTP status modulo 256 for API errors.
        let http = match out.status.code() {
            Some(144) => Some(400),
            Some(145) => Some(401),
            Some(147) => Some(403),
            Some(173) => Some(429),
            Some(244) => Some(500),
            Some(247) => Some(503),
            _ => None,
        };
        let detail = p.error.unwrap_or_else(|| {
            if out.stdin_error.is_some() {
                return super::no_answer("gemini", out, "an answer");
            }
            let d = last_line(&out.stderr);
            if d.is_empty() {
                format!("gemini exited with {} without an answer", out.status)
            } else {
                d.to_owned()
            }
        });
        let message = match http {
            Some(code) => format!("API status {code}: {detail}"),
            None => detail,
        };
        Err(match http {
            Some(401 | 403) => classify(tool, &format!("401 {message}"), model),
            Some(400) => classify(tool, &message, model),
            Some(code) => ProviderError::Transient {
                quota: code == 429 || super::quota_exhausted(&message),
                provider: "gemini".into(),
                message,
                retry_after_ms: None,
            },
            None if message.contains("ModelNotFound") || message.contains("not found") => {
                classify(tool, &format!("model not found: {message}"), model)
            }
            None => ProviderError::Transient {
                quota: super::quota_exhausted(&message),
                provider: "gemini".into(),
                message,
                retry_after_ms: None,
            },
        })
    }
}

/// What the event stream said.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub text: String,
    pub success: bool,
    pub error: Option<String>,
    /// Models that produced tokens (more than one means the CLI fell back).
    pub models: Vec<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
}

pub(crate) fn parse(stdout: &str) -> Parsed {
    let mut p = Parsed::default();
    for v in json_lines(stdout) {
        match v["type"].as_str() {
            Some("message") if v["role"] == "assistant" => {
                p.text.push_str(v["content"].as_str().unwrap_or_default())
            }
            Some("error") if p.error.is_none() => {
                p.error = v["message"].as_str().map(String::from);
            }
            Some("result") => {
                p.success = v["status"] == "success";
                if let Some(msg) = v["error"]["message"].as_str() {
                    p.error = Some(msg.to_owned());
                }
                let stats = &v["stats"];
                p.input_tokens = stats["input_tokens"].as_u64();
                p.output_tokens = stats["output_tokens"].as_u64();
                p.cached_tokens = stats["cached"].as_u64();
                if let Some(models) = stats["models"].as_object() {
                    p.models = models
                        .iter()
                        .filter(|(_, m)| m["total_tokens"].as_u64().unwrap_or(0) > 0)
                        .map(|(k, _)| k.clone())
                        .collect();
                }
            }
            _ => {}
        }
    }
    p
}

#[cfg(test)]
mod tests;
