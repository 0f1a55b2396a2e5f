//! `gemini:MODEL`: the Gemini CLI, headless with `-o stream-json`.
//!
//! The prompt goes on stdin (written at once: the CLI gives up on stdin after 500 ms), behind a
//! fixed first line so a prompt can never start with `/` (a slash command) — and the CLI runs in
//! gavel's own empty working folder, so `@file` references find nothing. That folder is the
//! CLI's workspace, and gavel writes the workspace settings there (`.gemini/settings.json`,
//! which win over the person's user settings; a system settings file did not take `tools.core`
//! in 0.61.0): no tools (`tools.core: []`, so the request declares no functions), no MCP
//! servers, skills, agents, hooks or IDE integration, no telemetry or update checks, one attempt
//! per call (`maxAttempts: 1`; gavel's retry policy decides) and one turn. The person's own
//! settings still choose how they sign in. `GEMINI_CLI_NO_RELAUNCH` keeps the CLI in the process
//! gavel started (so a kill reaches it) and `-e none` loads no extensions.
//!
//! Traps handled: the exit code is the HTTP status modulo 256 (or 0 after a cut stream), so
//! success is only `result.status == "success"` with exit 0; the answering model is the key of
//! `stats.models` that has tokens (the CLI may rewrite or fall back to another model, which
//! model verification then flags).

use std::path::PathBuf;

use serde_json::Value;

use super::{CliSettings, LoginEnv, approx_tokens, classify, last_line, run_cli};
use crate::provider::{Call, Provider, ProviderError, Request, Response};
use crate::tools::{CliTool, cli_tool};

/// The first line of every prompt sent to the Gemini CLI.
const PROMPT_HEADER: &str = "Request from gavel (answer in Markdown):\n\n";

/// gavel's workspace settings for the Gemini CLI.
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

/// The Gemini CLI provider.
#[derive(Debug, Clone)]
pub struct GeminiProvider {
    model: String,
    settings: CliSettings,
}

impl GeminiProvider {
    pub fn new(model: impl Into<String>, settings: CliSettings) -> Self {
        Self {
            model: model.into(),
            settings,
        }
    }

    fn tool() -> &'static CliTool {
        cli_tool("gemini").unwrap_or(&crate::tools::CLI_TOOLS[1])
    }

    /// The command line (without the program).
    pub fn args(&self) -> Vec<String> {
        [
            "-p",
            "",
            "-o",
            "stream-json",
            "-m",
            &self.model,
            "-e",
            "none",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }

    /// The working folder (the CLI's workspace) and its settings file.
    fn workspace(&self) -> (PathBuf, PathBuf) {
        let dir = self.settings.workdir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("gavel-gemini-{}", std::process::id()))
        });
        let file = dir.join(".gemini").join("settings.json");
        (dir, file)
    }

    fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()),
            ("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned()),
        ];
        env.extend(self.settings.env.iter().cloned());
        env
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
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
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

impl Provider for GeminiProvider {
    fn describe(&self) -> String {
        format!("gemini:{}", self.model)
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

impl GeminiProvider {
    /// One call under one login (the default sign-in when `login` is empty).
    fn complete_as(
        &self,
        req: &Request,
        call: &Call<'_>,
        login: &LoginEnv,
    ) -> Result<Response, ProviderError> {
        let tool = Self::tool();
        let (workdir, settings_file) = self.workspace();
        let written = settings_file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&settings_file, WORKSPACE_SETTINGS));
        written.map_err(|e| ProviderError::Permanent {
            provider: "gemini".into(),
            message: format!(
                "cannot write the Gemini CLI settings {}: {e}",
                settings_file.display()
            ),
            hint: None,
        })?;
        let settings = login.apply(CliSettings {
            env: self.env(),
            workdir: Some(workdir),
            ..self.settings.clone()
        });
        let prompt = format!("{PROMPT_HEADER}{}", req.prompt);
        let mut streamed = 0u64;
        let out = run_cli(tool, self.args(), &prompt, &settings, call, |line| {
            let v: Value = serde_json::from_str(line).ok()?;
            (v["type"] == "message" && v["role"] == "assistant").then(|| {
                streamed += approx_tokens(v["content"].as_str().unwrap_or_default());
                streamed
            })
        })?;
        let p = parse(&out.stdout);
        if out.status.success() && p.success && p.error.is_none() && !p.text.is_empty() {
            let model = match p.models.as_slice() {
                [one] => one.clone(),
                [] => self.model.clone(),
                many => many.last().cloned().unwrap_or_default(),
            };
            return Ok(Response {
                text: p.text,
                provider: "gemini".into(),
                model,
                requested_model: self.model.clone(),
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                cached_tokens: p.cached_tokens,
                cost_usd: None,
                raw: out.stdout,
                attempts: 1,
                credential: None,
                quota_exhausted: Vec::new(),
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
            Some(401 | 403) => classify(tool, &format!("401 {message}"), &self.model),
            Some(400) => classify(tool, &message, &self.model),
            Some(code) => ProviderError::Transient {
                quota: code == 429 || super::quota_exhausted(&message),
                provider: "gemini".into(),
                message,
                retry_after_ms: None,
            },
            None if message.contains("ModelNotFound") || message.contains("not found") => {
                classify(tool, &format!("model not found: {message}"), &self.model)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_system_settings_turn_every_tool_off() {
        let v: Value = serde_json::from_str(WORKSPACE_SETTINGS).expect("valid JSON");
        assert_eq!(v["tools"]["core"], serde_json::json!([]));
        assert_eq!(v["general"]["maxAttempts"], 1);
    }
}
