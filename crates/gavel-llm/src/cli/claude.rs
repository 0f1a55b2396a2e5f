//! `claude:MODEL`: the Claude Code CLI, as `claude -p --output-format stream-json`.
//!
//! The prompt goes on stdin. `--tools ""` sends no tools at all (the request's `tools` is
//! empty), `--setting-sources user` keeps the project's settings and CLAUDE.md out,
//! `--strict-mcp-config` loads no MCP servers, `--no-session-persistence` keeps no session, and
//! `--max-turns 1` stops after one answer. The environment turns off non-essential traffic,
//! telemetry, the auto-updater and error reporting, sets the CLI's own retries to 0 (gavel's
//! retry policy decides, so a 429 is retried the same way for every provider) and disables the
//! non-streaming fallback (which would pay for a second answer). The CLI's timeouts follow
//! gavel's idle timeout.
//!
//! From the event stream: the answering model is `assistant.message.model` (the API's own
//! field; `<synthetic>` on errors), and the final `result` line carries the text, `is_error`,
//! `api_error_status`, token usage and `total_cost_usd`.

use serde_json::Value;

use super::{CliSettings, LoginEnv, approx_tokens, classify, last_line, run_cli};
use crate::provider::{Call, Provider, ProviderError, Request, Response};
use crate::tools::{CliTool, cli_tool};

/// The Claude Code CLI provider.
#[derive(Debug, Clone)]
pub struct ClaudeProvider {
    model: String,
    settings: CliSettings,
}

impl ClaudeProvider {
    pub fn new(model: impl Into<String>, settings: CliSettings) -> Self {
        Self {
            model: model.into(),
            settings,
        }
    }

    fn tool() -> &'static CliTool {
        cli_tool("claude").unwrap_or(&crate::tools::CLI_TOOLS[0])
    }

    /// The command line (without the program).
    pub fn args(&self) -> Vec<String> {
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
            &self.model,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }

    /// The environment gavel adds for the CLI.
    pub fn env(&self) -> Vec<(String, String)> {
        let idle_ms = self
            .settings
            .idle_timeout
            .as_millis()
            .max(10_000)
            .to_string();
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
        env.extend(self.settings.env.iter().cloned());
        env
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
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
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

fn u(v: &Value) -> Option<u64> {
    v.as_u64()
}

impl Provider for ClaudeProvider {
    fn describe(&self) -> String {
        format!("claude:{}", self.model)
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

impl ClaudeProvider {
    /// One call under one login (the default sign-in when `login` is empty).
    fn complete_as(
        &self,
        req: &Request,
        call: &Call<'_>,
        login: &LoginEnv,
    ) -> Result<Response, ProviderError> {
        let tool = Self::tool();
        let settings = login.apply(CliSettings {
            env: self.env(),
            ..self.settings.clone()
        });
        let mut streamed = 0u64;
        let out = run_cli(tool, self.args(), &req.prompt, &settings, call, |line| {
            let v: Value = serde_json::from_str(line).ok()?;
            let text: String = v["message"]["content"]
                .as_array()?
                .iter()
                .filter_map(|c| c["text"].as_str())
                .collect();
            streamed += approx_tokens(&text);
            Some(streamed)
        })?;
        let p = parse(&out.stdout);
        let Some(result) = p.result else {
            let detail = if last_line(&out.stderr).is_empty() {
                last_line(&out.stdout)
            } else {
                last_line(&out.stderr)
            };
            let message = match &out.stdin_error {
                Some(pipe) => format!(
                    "claude exited with {} while reading the prompt ({pipe}): {detail}",
                    out.status
                ),
                None => format!(
                    "claude exited with {} without a result: {detail}",
                    out.status
                ),
            };
            return Err(classify(tool, &message, &self.model));
        };
        let text = result["result"].as_str().unwrap_or_default().to_owned();
        if result["is_error"].as_bool().unwrap_or(true) || !out.status.success() {
            let status = result["api_error_status"].as_u64();
            let message = match status {
                Some(s) => format!("API status {s}: {text}"),
                None => text,
            };
            return Err(match status {
                Some(401 | 403) | Some(400) | Some(404) => classify(tool, &message, &self.model),
                _ => ProviderError::Transient {
                    quota: status == Some(429) || super::quota_exhausted(&message),
                    provider: "claude".into(),
                    message,
                    retry_after_ms: None,
                },
            });
        }
        let usage = &result["usage"];
        let fresh = u(&usage["input_tokens"]);
        let cache_read = u(&usage["cache_read_input_tokens"]);
        let cache_write = u(&usage["cache_creation_input_tokens"]);
        let input_tokens = fresh.map(|f| f + cache_read.unwrap_or(0) + cache_write.unwrap_or(0));
        Ok(Response {
            text,
            provider: "claude".into(),
            model: p.answered_model.unwrap_or_default(),
            requested_model: self.model.clone(),
            input_tokens,
            output_tokens: u(&usage["output_tokens"]),
            cached_tokens: cache_read,
            cost_usd: result["total_cost_usd"].as_f64(),
            raw: out.stdout,
            attempts: 1,
            credential: None,
            quota_exhausted: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let args = ClaudeProvider::new("sonnet", CliSettings::default()).args();
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
}
