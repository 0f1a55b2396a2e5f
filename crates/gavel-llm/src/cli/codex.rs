//! `codex:MODEL`: the Codex CLI, as `codex exec --json`.
//!
//! The prompt goes on stdin (`-`). `exec` runs without approvals (`approval_policy="never"`:
//! whatever the sandbox allows runs, the rest fails) in an OS sandbox: `read-only` for a
//! text-only or read-only call, `workspace-write` (writes only in the working folder, its
//! `--add-dir` folders and the temporary folders; no network) for an editing one. A text-only
//! call also has every tool turned off (shell, exec, image viewing, goals, sub-agents,
//! user-input requests, web search); with tools, Codex reads, searches and edits through its
//! shell (`apply_patch`), confined by the sandbox. Project docs (AGENTS.md), plugins, analytics
//! and the shell snapshot are off in every call, all with `-c` overrides that apply to this
//! call only, and `--ephemeral` keeps no session. The call's MCP servers are `-c
//! mcp_servers.NAME.…` overrides whose tools run without asking. Codex cannot limit shell
//! commands to a list per call, nor cap turns (gavel's total timeout bounds a call).
//!
//! A request with an output schema gets `--output-schema FILE` (the schema, written to the
//! call's private folder): Codex asks the Responses API for it as a strict `text.format`, and
//! the last `agent_message` is the JSON answer.
//!
//! The JSON event stream gives the answer (the last `agent_message` item), token usage
//! (`turn.completed.usage`), failures (`turn.failed`) and tool uses (`command_execution`,
//! `file_change`, `mcp_tool_call` and `web_search` items). Codex does not report the answering
//! model; it does report a reroute (`model rerouted: A -> B`), which gavel takes as the
//! answering model.
//!
//! A call that gavel confines itself ([`AgentProfile::confine`]) runs Codex with its own
//! sandbox off (`danger-full-access`): Codex's Linux sandbox needs bubblewrap, which must write
//! `/proc/self/uid_map`, and Landlock forbids that write, so every command and patch would
//! fail. gavel's Landlock is then the fence for writes (network access is not limited). Such
//! a call leaves Codex its home writable ([`CliAgent::state_paths`]: `$CODEX_HOME`, else
//! `~/.codex`: sign-in, logs, state database, skills).

use serde_json::Value;

use super::agent::{
    Answer, CallFile, CliAgent, Invocation, Setup, StatePath, json_lines, one_line, strings,
    summarize, var_or_home,
};
use super::{classify, no_answer};
use crate::process::ProcessOutput;
use crate::profile::{AgentProfile, ProfileError, Tools};
use crate::provider::{AnswerForm, ProviderError, ToolUse};
use crate::tools::{CLI_TOOLS, CliTool, cli_tool};

/// Overrides every call gets, after the sandbox and approvals (and, without tools, the shell
/// switched off).
const COMMON: &[&str] = &[
    "features.view_image=false",
    "features.goals=false",
    "features.plugins=false",
    "features.shell_snapshot=false",
    "features.unbounded_connection_retries=false",
    "agents.enabled=false",
    "tools.experimental_request_user_input.enabled=false",
    "analytics.enabled=false",
    "skills.bundled.enabled=false",
];

/// Codex.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Codex;

/// A TOML basic string.
fn toml_str(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `-c` overrides for a profile.
fn overrides(profile: &AgentProfile) -> Result<Vec<String>, ProfileError> {
    let sandbox = match &profile.tools {
        Tools::None | Tools::ReadOnly => "read-only",
        Tools::EditWithin(_) => "workspace-write",
        Tools::Shell { allowed, .. } if allowed.is_empty() => "workspace-write",
        Tools::Shell { .. } => {
            return Err(ProfileError::Unsupported {
                cli: "Codex",
                what: "limit shell commands to a list for one call; EditWithin runs its \
                       commands inside the sandbox, which confines what they write"
                    .into(),
            });
        }
    };
    // Codex's sandbox cannot start inside gavel's (see the module docs).
    let sandbox = if profile.confine.is_some() {
        "danger-full-access"
    } else {
        sandbox
    };
    let mut out = vec![
        format!("sandbox_mode={}", toml_str(sandbox)),
        "approval_policy=\"never\"".to_owned(),
        "web_search=\"disabled\"".to_owned(),
        "project_doc_max_bytes=0".to_owned(),
    ];
    if profile.tools == Tools::None {
        out.extend(strings(&[
            "features.shell_tool=false",
            "features.unified_exec=false",
        ]));
    }
    out.extend(strings(COMMON));
    if sandbox == "workspace-write" {
        out.push("sandbox_workspace_write.network_access=false".into());
    }
    for s in &profile.mcp_servers {
        let key = format!("mcp_servers.{}", s.name);
        out.push(format!("{key}.command={}", toml_str(&s.command)));
        let args: Vec<String> = s.args.iter().map(|a| toml_str(a)).collect();
        out.push(format!("{key}.args=[{}]", args.join(", ")));
        if !s.env.is_empty() {
            let env: Vec<String> = s
                .env
                .iter()
                .map(|(k, v)| format!("{} = {}", toml_str(k), toml_str(v)))
                .collect();
            out.push(format!("{key}.env={{{}}}", env.join(", ")));
        }
        out.push(format!("{key}.default_tools_approval_mode=\"approve\""));
    }
    Ok(out)
}

impl CliAgent for Codex {
    fn tool(&self) -> &'static CliTool {
        cli_tool("codex").unwrap_or(&CLI_TOOLS[2])
    }

    fn invocation(&self, s: &Setup<'_>) -> Result<Invocation, ProfileError> {
        let mut args = strings(&[
            "exec",
            "--json",
            "--ephemeral",
            "--skip-git-repo-check",
            "-m",
            s.model,
        ]);
        for o in overrides(s.profile)? {
            args.push("-c".into());
            args.push(o);
        }
        if let Some(dir) = s.extra_edit_folder() {
            args.push("--add-dir".into());
            args.push(dir.display().to_string());
        }
        let mut files = Vec::new();
        let mut form = AnswerForm::Plain;
        if let Some(schema) = s.output_schema {
            // Codex sends it as the Responses API's strict `text.format`.
            let path = s.scratch.join("output-schema.json");
            args.push("--output-schema".into());
            args.push(path.display().to_string());
            files.push(CallFile {
                path,
                contents: schema.schema.to_string(),
                temporary: true,
            });
            form = AnswerForm::Schema;
        }
        args.push("-".into());
        Ok(Invocation {
            args,
            env: Vec::new(),
            files,
            form,
        })
    }

    fn state_paths(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<StatePath> {
        var_or_home(var, "CODEX_HOME", ".codex")
            .map(|dir| vec![StatePath::folder(dir)])
            .unwrap_or_default()
    }

    fn streamed_text(&self, line: &Value) -> Option<String> {
        (line["type"] == "item.completed" && line["item"]["type"] == "agent_message")
            .then(|| line["item"]["text"].as_str().unwrap_or_default().to_owned())
    }

    fn tool_uses(&self, line: &Value) -> Vec<(String, ToolUse)> {
        if line["type"] != "item.started" && line["type"] != "item.completed" {
            return Vec::new();
        }
        let item = &line["item"];
        let summary = match item["type"].as_str() {
            Some("command_execution") => one_line(item["command"].as_str().unwrap_or_default()),
            Some("file_change") => {
                let changes = item["changes"].as_array().map_or(&[][..], Vec::as_slice);
                let each: Vec<String> = changes
                    .iter()
                    .map(|c| {
                        let kind = c["kind"].as_str().unwrap_or("change");
                        format!("{kind} {}", c["path"].as_str().unwrap_or("?"))
                    })
                    .collect();
                one_line(&each.join(", "))
            }
            Some("mcp_tool_call") => {
                let server = item["server"].as_str().unwrap_or("?");
                let tool = item["tool"].as_str().unwrap_or("?");
                let args = summarize(&item["arguments"]);
                one_line(format!("{server}/{tool} {args}").trim_end())
            }
            Some("web_search") => one_line(item["query"].as_str().unwrap_or_default()),
            _ => return Vec::new(),
        };
        let name = item["type"].as_str().unwrap_or("?").to_owned();
        let id = item["id"].as_str().unwrap_or("").to_owned();
        vec![(id, ToolUse { name, summary })]
    }

    fn answer(&self, model: &str, out: &ProcessOutput) -> Result<Answer, ProviderError> {
        let p = parse(&out.stdout);
        match (out.status.success(), p.completed, p.text) {
            (true, true, Some(text)) => Ok(Answer {
                text,
                model: p.rerouted_to.unwrap_or_else(|| model.to_owned()),
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                cached_tokens: p.cached_tokens,
                cost_usd: None,
            }),
            _ => {
                let message = p
                    .failure
                    .unwrap_or_else(|| no_answer("codex", out, "an answer"));
                Err(classify(self.tool(), &message, model))
            }
        }
    }

    fn usage(&self, model: &str, out: &ProcessOutput) -> Option<Answer> {
        let p = parse(&out.stdout);
        let reported = p.input_tokens.unwrap_or(0) > 0 || p.output_tokens.unwrap_or(0) > 0;
        reported.then(|| Answer {
            text: p.text.or(p.failure).unwrap_or_default(),
            model: p.rerouted_to.unwrap_or_else(|| model.to_owned()),
            input_tokens: p.input_tokens,
            output_tokens: p.output_tokens,
            cached_tokens: p.cached_tokens,
            cost_usd: None,
        })
    }
}

/// What the event stream said.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub text: Option<String>,
    pub completed: bool,
    pub failure: Option<String>,
    pub rerouted_to: Option<String>,
    pub input_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

pub(crate) fn parse(stdout: &str) -> Parsed {
    let mut p = Parsed::default();
    for v in json_lines(stdout) {
        match v["type"].as_str() {
            Some("item.completed") => match v["item"]["type"].as_str() {
                Some("agent_message") => p.text = v["item"]["text"].as_str().map(String::from),
                Some("error") => {
                    let msg = v["item"]["message"].as_str().unwrap_or_default();
                    if let Some(rest) = msg.strip_prefix("model rerouted: ") {
                        p.rerouted_to = rest
                            .split(" -> ")
                            .nth(1)
                            .map(|m| m.split_whitespace().next().unwrap_or(m).to_owned());
                    }
                }
                _ => {}
            },
            Some("turn.completed") => {
                p.completed = true;
                let u = &v["usage"];
                p.input_tokens = u["input_tokens"].as_u64();
                p.cached_tokens = u["cached_input_tokens"].as_u64();
                p.output_tokens = u["output_tokens"].as_u64();
            }
            Some("turn.failed") => p.failure = v["error"]["message"].as_str().map(String::from),
            Some("error") if p.failure.is_none() => {
                let msg = v["message"].as_str().unwrap_or_default();
                if !msg.starts_with("Reconnecting") {
                    p.failure = Some(msg.to_owned());
                }
            }
            _ => {}
        }
    }
    p
}

#[cfg(test)]
mod tests;
