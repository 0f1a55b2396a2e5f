//! Providers that drive the real agent CLIs: Claude Code (`claude`), the Gemini CLI (`gemini`)
//! and Codex (`codex exec`).
//!
//! One provider, [`CliProvider`] (`provider.rs`), does what every CLI call shares: the prompt
//! on stdin, the working folder, per-call files, gavel's idle and total timeouts (the whole
//! process group is killed on timeout), login rotation (`logins.rs`), progress and tool-use
//! events. A small trait (`agent.rs`) holds what differs, implemented once per CLI
//! (`claude.rs`, `gemini.rs`, `codex.rs`): the flags, environment and settings files that give
//! the CLI exactly the request's [`crate::AgentProfile`] (by default no tools, one turn, an
//! empty folder, no MCP servers), and how its machine-readable output (JSON events) gives the
//! text, the answering model, token counts, cost and tool uses. Failures are classified here as
//! transient (retried by [`crate::Retrying`]) or permanent (with a hint: install, log in, fix
//! the model name).

mod agent;
pub mod claude;
pub mod codex;
pub mod gemini;
pub mod logins;
mod provider;

use std::path::PathBuf;
use std::time::Duration;

pub use self::logins::{Login, LoginEnv};
pub use self::provider::CliProvider;
use crate::credentials::RotationState;
use crate::process::ProcessOutput;
use crate::provider::ProviderError;
use crate::tools::{self, CliTool};

/// Settings common to the CLI providers.
#[derive(Debug, Clone)]
pub struct CliSettings {
    /// No output for this long: the call is killed and counts as a transient failure.
    pub idle_timeout: Duration,
    /// The longest a call may take.
    pub total_timeout: Duration,
    /// Extra environment for the child (tests point the CLIs at a fake server this way). A
    /// `PATH` here is also where the CLI's program is looked for.
    pub env: Vec<(String, String)>,
    /// Variables removed from the child's environment (on top of everything that is neither on
    /// the box's allowlist, nor the CLI's own, nor in `pass_env`).
    pub env_remove: Vec<String>,
    /// More of gavel's variables the CLI may see (`[implement] pass_env`: names, or prefixes
    /// ending in `*`); gavel's own secrets are never passed.
    pub pass_env: Vec<String>,
    /// gavel's own agent folder (empty, so the CLI sees no project files): where a call runs
    /// whose profile names no folder.
    pub workdir: Option<PathBuf>,
    /// The logins to rotate through (empty: the CLI's own default sign-in).
    pub logins: Vec<Login>,
    /// Which login last answered (shared with the other providers of the process).
    pub rotation: RotationState,
}

impl Default for CliSettings {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(120),
            total_timeout: Duration::from_secs(600),
            env: Vec::new(),
            env_remove: Vec::new(),
            pass_env: Vec::new(),
            workdir: None,
            logins: Vec::new(),
            rotation: RotationState::default(),
        }
    }
}

pub(crate) fn not_installed(tool: &CliTool) -> ProviderError {
    ProviderError::Permanent {
        provider: tool.kind.into(),
        message: format!(
            "{} (`{}`) is not installed",
            tool.display_name(),
            tool.program
        ),
        hint: Some(format!(
            "install it with `{}`, then {}",
            tool.install(),
            tool.login
        )),
    }
}

/// Pre-flight for a CLI provider: the program is where the call will look for it, and a
/// configured login is usable.
pub(crate) fn preflight(tool: &CliTool, settings: &CliSettings) -> Result<(), ProviderError> {
    find_program(tool, settings)?;
    logins::usable(tool, settings).map(drop)
}

/// The CLI's program, found where the child will look: on the PATH its settings give it, if
/// any, else on gavel's own. Pre-flight and the call use this one lookup, so they never
/// disagree.
pub(crate) fn find_program(
    tool: &CliTool,
    settings: &CliSettings,
) -> Result<std::path::PathBuf, ProviderError> {
    let child_path = settings.env.iter().rev().find(|(k, _)| k == "PATH");
    match child_path {
        Some((_, path)) => tools::find_in(tool.program, path.as_ref()),
        None => tools::find_on_path(tool.program),
    }
    .ok_or_else(|| not_installed(tool))
}

/// Classifies a CLI's error message. Authentication and bad-request/unknown-model errors are
/// permanent (retrying cannot help); everything else (rate limits, 5xx, overload, timeouts,
/// truncated or malformed streams, network trouble) is transient, and a rate limit or an
/// exhausted quota is marked as such (another login may answer at once).
pub(crate) fn classify(tool: &CliTool, message: &str, model: &str) -> ProviderError {
    let m = message.to_ascii_lowercase();
    let any = |needles: &[&str]| needles.iter().any(|n| m.contains(n));
    let provider = tool.kind.to_owned();
    let message = message.trim().to_owned();
    if any(&[
        "401",
        "403",
        "unauthorized",
        "unauthenticated",
        "permission_denied",
        "permission denied",
        "invalid api key",
        "api key not valid",
        "incorrect api key",
        "invalid x-api-key",
        "authentication",
        "not logged in",
        "please log in",
        "/login",
    ]) {
        return ProviderError::Permanent {
            provider,
            message,
            hint: Some(format!("check your credentials: {}", tool.login)),
        };
    }
    if any(&[
        "model_not_found",
        "not_found_error",
        "404",
        "unknown model",
        "model not found",
        "invalid model",
        "is not found for api version",
        "does not exist",
    ]) {
        return ProviderError::Permanent {
            provider,
            message,
            hint: Some(format!(
                "check the model name `{model}` in the provider string"
            )),
        };
    }
    if any(&[
        "400 bad request",
        "invalid_request_error",
        "invalid_argument",
        "unknown option",
        "unknown argument",
        "unexpected argument",
        "usage:",
    ]) && !any(&["429", "overloaded", "rate"])
    {
        return ProviderError::Permanent {
            provider,
            message,
            hint: Some(format!(
                "{} rejected gavel's request; check its version with `gavel doctor`",
                tool.display_name()
            )),
        };
    }
    ProviderError::Transient {
        quota: quota_exhausted(&message),
        provider,
        message,
        retry_after_ms: None,
    }
}

/// Whether a CLI's error message is the vendor's quota or rate-limit answer: a 429 status,
/// Anthropic's `rate_limit_error`, Gemini's `RESOURCE_EXHAUSTED`, OpenAI's `insufficient_quota`
/// or `rate_limit_exceeded`, or the CLIs' own words for a used-up plan ("usage limit",
/// "hit your limit", "quota exceeded").
pub(crate) fn quota_exhausted(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    let status_429 = m.match_indices("429").any(|(at, _)| {
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        !digit(m[..at].chars().next_back()) && !digit(m[at + 3..].chars().next())
    });
    status_429
        || [
            "too many requests",
            "rate limit",
            "rate_limit",
            "resource_exhausted",
            "insufficient_quota",
            "quota exceeded",
            "exceeded your current quota",
            "usage limit",
            "hit your limit",
        ]
        .iter()
        .any(|n| m.contains(n))
}

/// A rough token count for progress while text streams in.
pub(crate) fn approx_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Why a CLI stopped without `missing` (an answer, a result): its exit status, whether it quit
/// reading the prompt (a broken pipe), and the last line it printed (stderr first).
pub(crate) fn no_answer(kind: &str, out: &ProcessOutput, missing: &str) -> String {
    let detail = match last_line(&out.stderr) {
        "" => last_line(&out.stdout),
        line => line,
    };
    match &out.stdin_error {
        Some(pipe) => format!(
            "{kind} exited with {} {} ({pipe}): {detail}",
            out.status,
            crate::retry::STDIN_CLOSED
        ),
        None => format!(
            "{kind} exited with {} without {missing}: {detail}",
            out.status
        ),
    }
}

/// The last non-empty line of some output, for error messages.
pub(crate) fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::cli_tool;

    #[test]
    fn preflight_finds_the_cli_where_the_call_will_run_it() {
        // Regression (issue 11): pre-flight looked only on gavel's PATH while the call looked
        // on the PATH its settings give the child, so it said "not installed" for a CLI that
        // would run.
        let dir = tempfile::tempdir().expect("tempdir");
        let program = dir.path().join("claude");
        std::fs::write(&program, "#!/bin/sh\n").expect("write");
        let mut perms = std::fs::metadata(&program).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&program, perms).expect("chmod");
        let tool = cli_tool("claude").expect("claude");
        let settings = CliSettings {
            env: vec![("PATH".into(), dir.path().display().to_string())],
            ..CliSettings::default()
        };
        assert_eq!(find_program(tool, &settings).expect("found"), program);
        assert!(preflight(tool, &settings).is_ok());
        let elsewhere = CliSettings {
            env: vec![("PATH".into(), "/nonexistent-gavel-path".into())],
            ..CliSettings::default()
        };
        assert!(matches!(
            preflight(tool, &elsewhere),
            Err(ProviderError::Permanent { ref message, .. }) if message.contains("is not installed")
        ));
    }

    #[test]
    fn a_cli_that_closes_its_input_early_is_retried_once_then_named() {
        // A `claude` that exits at once without reading the prompt: writing a prompt bigger
        // than a pipe's buffer then fails with a broken pipe.
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = dir.path().join("runs");
        let program = dir.path().join("claude");
        std::fs::write(
            &program,
            format!("#!/bin/sh\necho run >> {}\nexit 1\n", runs.display()),
        )
        .expect("write");
        let mut perms = std::fs::metadata(&program).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&program, perms).expect("chmod");
        let settings = CliSettings {
            env: vec![(
                "PATH".into(),
                format!("{}:/usr/bin:/bin", dir.path().display()),
            )],
            workdir: Some(dir.path().to_owned()),
            ..CliSettings::default()
        };
        let provider = crate::Retrying::new(
            Box::new(super::provider::CliProvider::claude("sonnet", settings)),
            crate::RetryPolicy {
                max_retries: 3,
                base_delay: std::time::Duration::from_millis(1),
                max_delay: std::time::Duration::from_millis(5),
            },
        );
        let request = crate::Request {
            role: crate::Role::DRAFTER,
            prompt: "x".repeat(4 * 1024 * 1024),
            seq: 0,
            step_id: "s".into(),
            max_output_tokens: 100,
            profile: crate::AgentProfile::text_only(),
            output_schema: None,
        };
        let e = crate::Provider::complete(&provider, &request, &crate::Call::new(&|| false))
            .expect_err("no answer");
        let text = e.to_string();
        assert!(text.contains("claude"), "the error names the CLI: {text}");
        assert!(text.contains(crate::retry::STDIN_CLOSED), "{text}");
        assert!(
            text.contains("gave up after 2 attempts"),
            "retried once: {text}"
        );
        let ran = std::fs::read_to_string(&runs).unwrap_or_default();
        assert_eq!(ran.lines().count(), 2, "{ran}");
    }

    #[test]
    fn errors_are_classified_by_what_retrying_could_fix() {
        let t = cli_tool("codex").expect("codex");
        for (msg, transient) in [
            (
                "unexpected status 401 Unauthorized: Incorrect API key provided",
                false,
            ),
            ("unexpected status 404 Not Found: model_not_found", false),
            (
                "{\"error\": {\"type\": \"invalid_request_error\"}} 400 Bad Request",
                false,
            ),
            (
                "exceeded retry limit, last status: 429 Too Many Requests",
                true,
            ),
            ("We're currently experiencing high demand", true),
            (
                "stream disconnected before completion: stream closed before response.completed",
                true,
            ),
            ("Overloaded", true),
        ] {
            assert_eq!(classify(t, msg, "m").is_transient(), transient, "{msg}");
        }
    }

    #[test]
    fn quota_answers_are_told_apart_from_other_transient_failures() {
        let t = cli_tool("claude").expect("claude");
        for msg in [
            "API status 429: rate_limit_error: This request would exceed your rate limit",
            "exceeded retry limit, last status: 429 Too Many Requests",
            "[API Error: RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Requests']",
            "You exceeded your current quota, please check your plan (insufficient_quota)",
            "Claude AI usage limit reached|1767200000",
            "You've hit your limit · resets 3pm",
        ] {
            let err = classify(t, msg, "m");
            assert!(err.is_quota_exhausted(), "{msg}: {err:?}");
        }
        for msg in [
            "API status 529: Overloaded",
            "API status 500: internal error",
            "stream disconnected before completion",
            "used 14290 tokens",
        ] {
            let err = classify(t, msg, "m");
            assert!(err.is_transient() && !err.is_quota_exhausted(), "{msg}");
        }
    }
}
