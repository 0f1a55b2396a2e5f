//! The contract between gavel's engine and whatever answers its prompts.
//!
//! The engine only ever sees a [`Provider`]: it sends a [`Request`], gets back a [`Response`] or a
//! [`ProviderError`] that says whether retrying could help. [`build`] turns a parsed
//! [`ProviderSpec`] into a provider, so the rest of gavel never matches on provider kinds.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::profile::AgentProfile;
use crate::spec::ProviderSpec;

/// Which seat in a workflow a call is made for: an open name (`drafter`, `reviewer`, and the
/// `planner`, `challenger`, `implementer` of later workflows). Workflows name their roles with
/// constants; a name read from a file or a log is interned once per process, so a `Role` stays
/// a cheap `Copy` value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Role(&'static str);

impl Role {
    pub const DRAFTER: Role = Role("drafter");
    pub const REVIEWER: Role = Role("reviewer");

    /// The role with this name (interned: each distinct name is kept once per process).
    pub fn named(name: &str) -> Self {
        static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
        for known in [Self::DRAFTER, Self::REVIEWER] {
            if known.0 == name {
                return known;
            }
        }
        let mut names = NAMES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = names.iter().find(|n| **n == name) {
            return Self(found);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        names.push(leaked);
        Self(leaked)
    }

    /// The lowercase name used in scripts, logs and messages.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Debug for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Role({})", self.0)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Self::named(&name))
    }
}

/// One prompt sent to a provider.
#[derive(Debug, Clone)]
pub struct Request {
    pub role: Role,
    pub prompt: String,
    /// 0-based: this is the `seq`-th call made for `role` in this run. Deterministic, so a resumed
    /// run asks the same question under the same number.
    pub seq: u32,
    /// The workflow step that made the call, for logs and error messages.
    pub step_id: String,
    /// The most output tokens to ask for (also the output side of a budget estimate).
    pub max_output_tokens: u32,
    /// What an agent CLI may do during the call (tools, folder, turns, MCP servers); the
    /// default, [`AgentProfile::text_only`], lets the model only answer.
    pub profile: AgentProfile,
    /// The JSON schema the answer should follow, for a provider that can have the service
    /// enforce one (structured output); `None` asks for plain text. A provider that cannot,
    /// or whose service refuses it, asks in plain text and says so in [`Response::form`]. The
    /// answer is judged by the caller's parser either way: a schema is a request, never trust.
    pub output_schema: Option<OutputSchema>,
}

/// A JSON schema an answer should follow (issue 35): a verdict's JSON form, for example.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    /// A short name for it (`gavel_verdict`); the vendors' APIs ask for one.
    pub name: String,
    /// The schema: JSON Schema's common subset (objects with `required` and
    /// `additionalProperties: false`, strings, string enums, arrays), which OpenAI's strict
    /// mode, Gemini's `responseSchema`, Anthropic's tool input schema and llama.cpp's grammar
    /// all accept.
    pub schema: serde_json::Value,
}

/// How an answer was asked for ([`Response::form`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerForm {
    /// Plain text: no schema was asked for, or the provider has no way to ask.
    #[default]
    Plain,
    /// The service was asked to follow [`Request::output_schema`] (structured output).
    Schema,
    /// The service refused structured output (an HTTP 400 naming it), so the call was asked
    /// in plain text; the provider asks in plain text from then on.
    PlainAfterRefusal,
}

impl AnswerForm {
    /// How the timeline names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::Schema => "schema",
            Self::PlainAfterRefusal => "plain after the server refused structured output",
        }
    }
}

/// The default output cap for a call.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// What a provider may report while a call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallProgress {
    /// Output tokens received so far (an estimate while streaming).
    Tokens {
        output_tokens: u64,
        /// Which attempt this is (1 for the first).
        attempt: u32,
    },
    /// The agent used a tool (reported as its CLI streams it, once per use).
    ToolUse(ToolUse),
    /// An attempt the service answered (and reported usage or cost for, so it may be billed)
    /// that is not the call's answer: it failed, and is retried or ends the call. Reported once
    /// per such attempt, so the caller can put it in the spend ledger.
    Billed(Box<BilledAttempt>),
}

/// An attempt that was answered and may be billed, but failed (a CLI's error result with its
/// usage, an API stream cut after its usage was reported).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BilledAttempt {
    /// The provider kind, e.g. `"claude"`.
    pub provider: String,
    /// The model that answered, when the service said (else empty).
    #[serde(default)]
    pub model: String,
    /// The model that was asked for.
    pub requested_model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    /// Cost in millionths of a USD when the provider reported it.
    #[serde(default)]
    pub cost_micros: Option<u64>,
    /// Why the attempt is not the call's answer.
    pub error: String,
    /// The raw answer as received (a CLI's stdout, an API's stream).
    #[serde(default)]
    pub raw: String,
}

impl BilledAttempt {
    /// Whether the service reported anything it may charge for.
    pub fn reported_usage(&self) -> bool {
        self.input_tokens.unwrap_or(0) > 0
            || self.output_tokens.unwrap_or(0) > 0
            || self.cost_micros.unwrap_or(0) > 0
    }
}

/// A tool an agent used during a call, as its CLI reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The tool as the CLI names it (`Edit`, `run_shell_command`, `command_execution`,
    /// `mcp__gavel__check`).
    pub name: String,
    /// What it was used on, in one short line: a path, a command, or its arguments.
    pub summary: String,
}

/// The caller's side of a call: cancellation and live progress.
pub struct Call<'a> {
    /// Polled by long calls; when it turns true the call ends with [`ProviderError::Cancelled`].
    pub cancelled: &'a dyn Fn() -> bool,
    /// Receives progress reports (may be called often).
    pub progress: &'a dyn Fn(CallProgress),
}

impl<'a> Call<'a> {
    /// A call that only listens for cancellation.
    pub fn new(cancelled: &'a dyn Fn() -> bool) -> Self {
        Self {
            cancelled,
            progress: &|_| {},
        }
    }
}

/// A provider's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub text: String,
    /// The provider kind that answered, e.g. `"scripted"`.
    pub provider: String,
    /// The model that answered (as reported by the service).
    pub model: String,
    /// The model that was asked for.
    #[serde(default)]
    pub requested_model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    /// Cost in USD when the provider reports it.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// The raw answer as received (a CLI's stdout, an API's body or stream), kept for audits.
    #[serde(default)]
    pub raw: String,
    /// How many attempts the call took (1 without retries).
    #[serde(default = "one")]
    pub attempts: u32,
    /// The credential that answered, by NAME (the variable holding the key, or the login
    /// folder), never its value; `None` when the provider used no named credential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// Credentials whose quota was exhausted before [`Response::credential`] answered, in the
    /// order they were tried (within the answering attempt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quota_exhausted: Vec<String>,
    /// The tools the agent used, in order (empty for a call without tools).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_uses: Vec<ToolUse>,
    /// The error the CLI ended with after the agent had handed in its answer through the
    /// profile's [`AgentProfile::answer_file`] (a turn limit reached after `create_review`):
    /// the handed-in answer stands, and the call is not made again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_with: Option<String>,
    /// How the answer was asked for: in plain text or with [`Request::output_schema`].
    #[serde(default, skip_serializing_if = "is_plain")]
    pub form: AnswerForm,
}

fn is_plain(form: &AnswerForm) -> bool {
    *form == AnswerForm::Plain
}

fn one() -> u32 {
    1
}

/// Why a call produced no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Retrying the same call later may succeed (overload, rate limit, network).
    #[error("{provider} call failed (transient): {message}")]
    Transient {
        provider: String,
        message: String,
        /// How long the service asked us to wait (`retry-after`), in milliseconds.
        retry_after_ms: Option<u64>,
        /// The vendor's quota or rate-limit answer (HTTP 429 and its equivalents): another
        /// credential may answer at once (see [`crate::credentials`]).
        quota: bool,
    },
    /// Retrying will not help until someone changes something (credentials, model name, script).
    #[error("{provider} call failed: {message}")]
    Permanent {
        provider: String,
        message: String,
        hint: Option<String>,
    },
    /// The caller's cancel flag was raised while the call was in flight.
    #[error("call cancelled")]
    Cancelled,
    /// The provider kind parses but has no implementation in this build.
    #[error("provider `{kind}` is not available in this build yet")]
    Unavailable { kind: String, hint: String },
}

impl ProviderError {
    /// Whether retrying the same call may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Transient { .. })
    }

    /// Whether the failure is the vendor's quota or rate-limit answer for the credential used.
    pub fn is_quota_exhausted(&self) -> bool {
        matches!(self, Self::Transient { quota: true, .. })
    }

    /// A suggestion for the person running gavel, if there is one.
    pub fn hint(&self) -> Option<&str> {
        match self {
            Self::Permanent { hint, .. } => hint.as_deref(),
            Self::Unavailable { hint, .. } => Some(hint),
            Self::Transient { .. } | Self::Cancelled => None,
        }
    }
}

/// Something that answers prompts. Implementations must be usable from several threads.
pub trait Provider: Send + Sync {
    /// A short label for logs and messages, e.g. `"scripted:demo.yaml"`.
    fn describe(&self) -> String;

    /// The model this provider asks for (the model part of its provider string), for prices
    /// and model verification.
    fn model(&self) -> String {
        String::new()
    }

    /// Cheap checks before the first call (binary present, script readable and valid), so a
    /// misconfiguration is reported before a run starts instead of halfway through.
    fn preflight(&self) -> Result<(), ProviderError>;

    /// Answers one request. Long-running implementations poll `cancelled` and return
    /// [`ProviderError::Cancelled`] soon after it becomes true.
    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError>;
}

/// The hint carried by [`ProviderError::Unavailable`].
pub const UNAVAILABLE_HINT: &str =
    "this build of gavel has no implementation of that provider kind; see `gavel doctor`";

/// Builds the provider for `spec` with default timeouts and key variables (see
/// [`crate::build_with`]). A relative script path is resolved against `base_dir`.
pub fn build(spec: &ProviderSpec, base_dir: &Path) -> Box<dyn Provider> {
    crate::build_with(spec, base_dir, &crate::ProviderSettings::default())
}

/// Stands in for a provider kind that has no implementation: every call fails with
/// [`ProviderError::Unavailable`], and so does [`Provider::preflight`], so runs stop before they
/// start.
#[derive(Debug, Clone)]
pub struct UnavailableProvider {
    spec: ProviderSpec,
}

impl UnavailableProvider {
    pub fn new(spec: ProviderSpec) -> Self {
        Self { spec }
    }

    fn error(&self) -> ProviderError {
        ProviderError::Unavailable {
            kind: self.spec.kind().to_owned(),
            hint: UNAVAILABLE_HINT.to_owned(),
        }
    }
}

impl Provider for UnavailableProvider {
    fn describe(&self) -> String {
        self.spec.to_string()
    }

    fn model(&self) -> String {
        self.spec.model()
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        Err(self.error())
    }

    fn complete(&self, _req: &Request, _call: &Call<'_>) -> Result<Response, ProviderError> {
        Err(self.error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_match_serde_names() {
        for role in [Role::DRAFTER, Role::REVIEWER] {
            let json = serde_json::to_string(&role).unwrap();
            assert_eq!(json, format!("\"{}\"", role.as_str()));
            assert_eq!(role.to_string(), role.as_str());
            assert_eq!(serde_json::from_str::<Role>(&json).unwrap(), role);
        }
    }

    #[test]
    fn cli_kinds_build_the_cli_providers() {
        // The HTTP kinds build `HttpProvider`s (tested in tests/http/config.rs).
        for input in ["claude:opus", "gemini:pro", "codex:gpt-5"] {
            let spec: ProviderSpec = input.parse().unwrap();
            let provider = build(&spec, Path::new("/nowhere"));
            assert_eq!(provider.describe(), input);
            assert_eq!(provider.model(), spec.model());
            // Installed or not on this machine, a CLI provider is never "unavailable".
            if let Err(e) = provider.preflight() {
                assert!(
                    matches!(e, ProviderError::Permanent { .. }),
                    "{input}: {e:?}"
                );
                assert!(
                    e.hint().is_some_and(|h| h.contains("npm install -g")),
                    "{input}: {e:?}"
                );
            }
        }
    }

    #[test]
    fn the_unavailable_fallback_fails_preflight_and_calls() {
        let spec: ProviderSpec = "codex:gpt-5".parse().unwrap();
        let provider = UnavailableProvider::new(spec);
        let request = Request {
            role: Role::DRAFTER,
            prompt: "hi".into(),
            seq: 0,
            step_id: "draft".into(),
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            profile: AgentProfile::text_only(),
            output_schema: None,
        };
        for err in [
            provider.preflight().unwrap_err(),
            provider
                .complete(&request, &Call::new(&|| false))
                .unwrap_err(),
        ] {
            assert!(
                matches!(&err, ProviderError::Unavailable { kind, .. } if kind == "codex"),
                "{err:?}"
            );
            assert_eq!(err.hint(), Some(UNAVAILABLE_HINT));
        }
    }

    #[test]
    fn scripted_spec_builds_scripted_provider_relative_to_base_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("demo.yaml"), "drafter:\n  - text: hi\n").unwrap();
        let spec: ProviderSpec = "scripted:demo.yaml".parse().unwrap();
        let provider = build(&spec, dir.path());
        assert_eq!(provider.describe(), "scripted:demo.yaml");
        provider.preflight().unwrap();
        // Resolved against base_dir, not the process working directory.
        let elsewhere = build(&spec, &dir.path().join("missing"));
        assert!(elsewhere.preflight().is_err());
    }
}
