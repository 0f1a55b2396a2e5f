//! `codex:MODEL`: the Codex CLI, as `codex exec --json`.
//!
//! The prompt goes on stdin (`-`). `exec` runs in a read-only sandbox without approvals; gavel
//! also turns off every tool (shell, exec, image viewing, goals, sub-agents, user-input
//! requests, web search), project docs (AGENTS.md), plugins, analytics and the shell snapshot
//! with `-c` overrides, so a drafting call cannot touch the repository, and `--ephemeral` keeps
//! no session. The JSON event stream gives the answer (the last `agent_message` item), token
//! usage (`turn.completed.usage`) and failures (`turn.failed`). Codex does not report the
//! answering model; it does report a reroute (`model rerouted: A -> B`), which gavel takes as
//! the answering model.

use serde_json::Value;

use super::{CliSettings, LoginEnv, approx_tokens, classify, last_line, run_cli};
use crate::provider::{Call, Provider, ProviderError, Request, Response};
use crate::tools::{CliTool, cli_tool};

/// Config overrides that leave the model no tools and no view of the project.
const OVERRIDES: &[&str] = &[
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
];

/// The Codex CLI provider.
#[derive(Debug, Clone)]
pub struct CodexProvider {
    model: String,
    settings: CliSettings,
}

impl CodexProvider {
    pub fn new(model: impl Into<String>, settings: CliSettings) -> Self {
        Self {
            model: model.into(),
            settings,
        }
    }

    fn tool() -> &'static CliTool {
        cli_tool("codex").unwrap_or(&crate::tools::CLI_TOOLS[2])
    }

    /// The command line (without the program).
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "exec",
            "--json",
            "--ephemeral",
            "--skip-git-repo-check",
            "-m",
            &self.model,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for o in OVERRIDES {
            args.push("-c".into());
            args.push((*o).to_owned());
        }
        args.push("-".into());
        args
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
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
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

impl Provider for CodexProvider {
    fn describe(&self) -> String {
        format!("codex:{}", self.model)
    }

    fn model(&self) -> String {
        self.model.clone()
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        super::preflight(Self::tool(), &self.settings)
    }

    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError> {
        super::logins::with_logins(Self::tool(), &self.settings, call, |login| {
            self.complete_as(req, call, login)
        })
    }
}

impl CodexProvider {
    /// One call under one login (the default sign-in when `login` is empty).
    fn complete_as(
        &self,
        req: &Request,
        call: &Call<'_>,
        login: &LoginEnv,
    ) -> Result<Response, ProviderError> {
        let tool = Self::tool();
        let settings = login.apply(self.settings.clone());
        let out = run_cli(tool, self.args(), &req.prompt, &settings, call, |line| {
            let v: Value = serde_json::from_str(line).ok()?;
            (v["item"]["type"] == "agent_message")
                .then(|| approx_tokens(v["item"]["text"].as_str().unwrap_or_default()))
        })?;
        let p = parse(&out.stdout);
        match (out.status.success(), p.completed, p.text) {
            (true, true, Some(text)) => Ok(Response {
                text,
                provider: "codex".into(),
                model: p.rerouted_to.unwrap_or_else(|| self.model.clone()),
                requested_model: self.model.clone(),
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                cached_tokens: p.cached_tokens,
                cost_usd: None,
                raw: out.stdout,
                attempts: 1,
                credential: None,
                quota_exhausted: Vec::new(),
            }),
            _ => {
                let message = p.failure.unwrap_or_else(|| {
                    let detail = last_line(&out.stderr);
                    let detail = if detail.is_empty() {
                        last_line(&out.stdout)
                    } else {
                        detail
                    };
                    match &out.stdin_error {
                        Some(pipe) => format!(
                            "codex exited with {} while reading the prompt ({pipe}): {detail}",
                            out.status
                        ),
                        None => format!(
                            "codex exited with {} without an answer: {detail}",
                            out.status
                        ),
                    }
                });
                Err(classify(tool, &message, &self.model))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let args = CodexProvider::new("gpt-5", CliSettings::default()).args();
        assert_eq!(args.last().map(String::as_str), Some("-"));
        assert!(
            args.windows(2)
                .any(|w| w[0] == "-c" && w[1] == "features.shell_tool=false")
        );
        assert!(args.iter().any(|a| a == "--ephemeral"));
    }
}
