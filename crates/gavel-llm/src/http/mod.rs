//! gavel's HTTP API providers: `anthropic:MODEL`, `google:MODEL`, `openai:MODEL` and
//! `openai-compatible:MODEL@BASE_URL`, behind the same [`Provider`] trait as everything else.
//!
//! # Why genai, and where gavel works around it
//!
//! The wire formats are spoken by the `genai` crate (0.7), used only inside this module. It
//! builds on rustc 1.95 with rustls (no OpenSSL), and it covers what gavel needs: Anthropic
//! Messages, Gemini `streamGenerateContent`, the OpenAI Responses API and Chat Completions for
//! compatible servers; a per-call `ServiceTarget` (endpoint, key, adapter), so base URLs and key
//! variables stay gavel's decision; streaming with usage including cached tokens; the HTTP
//! status and response headers of a failed call (`Error::status`/`headers`, so `retry-after`);
//! and per-read stream timeouts, which are exactly gavel's idle timeout. Writing the four
//! protocols on `reqwest` ourselves would mean owning four SSE parsers and request encoders that
//! genai keeps up with as the vendors change them.
//!
//! genai falls short in four places, each covered here with its public API rather than by
//! leaving it:
//! - **The answering model.** A streamed answer does not say which model produced it. gavel
//!   reads it from the raw frames through genai's frame sink (`ChatOptions::with_raw_frame_fn`):
//!   `message_start.message.model`, `modelVersion`, `response.model` or the chunk's `model`
//!   (`wire.rs`). The same sink keeps the stream transcript for [`Response::raw`].
//! - **Truncated and malformed streams.** genai's Anthropic, Gemini and Responses streamers end
//!   without an error when the connection closes cleanly before the vendor's final event, and
//!   the Anthropic and Responses ones skip frames that are not JSON, so a broken answer would
//!   pass as a short one. gavel accepts an answer only after the final event (`message_stop`,
//!   a `finishReason`, `response.completed`, a `finish_reason` or `[DONE]`) and treats non-JSON
//!   data as a transient failure.
//! - **Status inside streams.** For streamed calls the HTTP error arrives wrapped in
//!   `Error::WebStream`; `errors.rs` unwraps it before reading status, headers and body.
//! - **Keyless compatible servers.** genai's OpenAI adapter requires a key; a local server
//!   (Ollama, llama.cpp) without a key goes through its `Omlx` adapter, the same Chat
//!   Completions format with the key optional.
//!
//! # Structured output
//!
//! A request with [`Request::output_schema`] asks the service to make its answer follow the
//! schema, in each vendor's own way (`schema.rs`): `text.format` (Responses),
//! `response_format` (Chat Completions), `responseJsonSchema` (Gemini), a forced tool
//! (Anthropic); the answer's [`Response::form`] says `schema`. A service that refuses it (HTTP
//! 400 naming the parameter) gets the same call once more in plain text, with the same key and
//! not counted as a retry (`plain_after_refusal`); the provider remembers the refusal and asks
//! every later call in plain text too. Any other 400 stays the error it was.
//!
//! Cancellation, the total timeout and error classification are gavel's own. Quirks kept from
//! genai: a trailing reasoning-effort word in an OpenAI model name is read as an option
//! (`openai:gpt-5-high` asks `gpt-5` with high effort), and input tokens include cached tokens
//! for every vendor (Anthropic's cache reads are added in).
//!
//! # Keys, base URLs, runtime
//!
//! Keys come from `ANTHROPIC_API_KEY`, `GEMINI_API_KEY` and `OPENAI_API_KEY`, or from the
//! variables named by [`HttpSettings::key_env`]. A compatible server gets a key only from a
//! variable named that way: a first-party key is never sent to a third-party URL. With several
//! variables, unset ones are skipped and the rest rotate (see [`crate::credentials`]): a key
//! whose quota is exhausted (HTTP 429, or the vendor's quota code inside a stream) hands the
//! same call to the next key at once, and the response names the variable that answered. A
//! key's value never appears in an error: any error text that echoes it is redacted. The
//! first-party base URLs can be moved with `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`
//! (both without the API version, as the vendors' own tools read them) and `OPENAI_BASE_URL`
//! (with `/v1`). Each call is a task on one shared tokio runtime (created on first use) while the
//! caller's thread waits, relays progress and polls the cancel flag every 50 ms, so the
//! synchronous trait works from any thread. Each call makes exactly one attempt: retries are
//! the caller's.

mod call;
mod errors;
mod schema;
mod wire;

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use genai::{Client, WebConfig};

use self::call::{Failure, Plan};
use self::errors::Ctx;
use self::wire::{Api, Wire};
use crate::credentials::{Rotation, RotationState};
use crate::provider::{AnswerForm, Call, CallProgress, Provider, ProviderError, Request, Response};
use crate::spec::ProviderSpec;

/// The default for [`HttpSettings::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The default for [`HttpSettings::total_timeout`].
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(600);

/// How an HTTP provider behaves (from gavel's configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// A call fails (transiently) when no bytes arrive for this long.
    pub idle_timeout: Duration,
    /// A call fails (transiently) when the whole answer takes longer than this.
    pub total_timeout: Duration,
    /// The environment variables holding API keys, in rotation order, instead of the vendor's
    /// usual one (empty: the vendor's variable; for a compatible server, no key at all).
    pub key_env: Vec<String>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            total_timeout: DEFAULT_TOTAL_TIMEOUT,
            key_env: Vec::new(),
        }
    }
}

type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// A provider that calls a vendor's HTTP API.
pub struct HttpProvider {
    spec: ProviderSpec,
    api: Api,
    settings: HttpSettings,
    env: Box<EnvLookup>,
    /// Which key last answered (shared with the other providers of the process).
    rotation: RotationState,
    /// Built once so connections are reused; an error is reported by every call.
    client: Result<Client, String>,
    /// The service refused structured output once: every later call asks in plain text.
    refused_schema: AtomicBool,
}

impl fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProvider")
            .field("spec", &self.spec)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl HttpProvider {
    /// A provider for `spec`, reading keys and base URLs from the process environment when
    /// called. `None` when `spec` is not an HTTP API (a CLI or the scripted provider).
    pub fn new(spec: &ProviderSpec, settings: HttpSettings) -> Option<Self> {
        let api = Api::from_spec(spec)?;
        let web = WebConfig::default().with_connect_timeout(settings.idle_timeout);
        let client = Client::builder()
            .with_web_config(web)
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"));
        Some(Self {
            spec: spec.clone(),
            api,
            settings,
            env: Box::new(|name| std::env::var(name).ok()),
            rotation: RotationState::default(),
            client,
            refused_schema: AtomicBool::new(false),
        })
    }

    /// Shares the rotation position with other providers (see [`crate::credentials`]).
    #[must_use]
    pub fn with_rotation(mut self, state: RotationState) -> Self {
        self.rotation = state;
        self
    }

    /// Reads variables through `lookup` instead of the process environment (for tests and
    /// for callers that resolve configuration themselves).
    #[must_use]
    pub fn with_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Box::new(lookup);
        self
    }

    /// The variables keys are read from, in rotation order; empty for a compatible server
    /// called without a key.
    pub fn key_vars(&self) -> Vec<String> {
        if self.settings.key_env.is_empty() {
            self.api
                .default_key_env
                .map(str::to_owned)
                .into_iter()
                .collect()
        } else {
            self.settings.key_env.clone()
        }
    }

    /// Whether the service has refused structured output, so calls are asked in plain text.
    pub fn refuses_structured_output(&self) -> bool {
        self.refused_schema.load(Ordering::Relaxed)
    }

    /// The base URL calls go to, after any environment override.
    pub fn base_url(&self) -> String {
        self.api
            .base_url_env
            .and_then(|var| self.var(var))
            .unwrap_or_else(|| self.api.default_base_url.clone())
    }

    /// A variable's value, when it is set and not blank.
    fn var(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|v| !v.trim().is_empty())
    }

    fn ctx(&self) -> Ctx {
        Ctx {
            kind: self.api.kind,
            label: self.spec.to_string(),
            model: self.api.model.clone(),
            key_env: self.key_vars().into_iter().next(),
            base_url: self.base_url(),
            idle_timeout: self.settings.idle_timeout,
        }
    }

    /// Resolves endpoint and limits (a plan without a key) and the keys that are set, as
    /// (variable, key) in rotation order, or says what is missing.
    fn plan(&self) -> Result<(Plan, Vec<(String, String)>), ProviderError> {
        let ctx = self.ctx();
        if let Err(message) = &self.client {
            return Err(ctx.permanent(message.clone(), None));
        }
        let vars = self.key_vars();
        let keys: Vec<(String, String)> = vars
            .iter()
            .filter_map(|var| Some((var.clone(), self.var(var)?.trim().to_owned())))
            .collect();
        if keys.is_empty() && !vars.is_empty() {
            let (message, hint) = match vars.as_slice() {
                [var] => (
                    format!("{var} is not set, so {} has no API key", self.spec),
                    format!("set {var} to your {} API key", self.vendor()),
                ),
                _ => {
                    let list = vars.join(", ");
                    (
                        format!("none of {list} is set, so {} has no API key", self.spec),
                        format!("set one of {list} to your {} API key", self.vendor()),
                    )
                }
            };
            return Err(ctx.permanent(message, Some(hint)));
        }
        let plan = Plan {
            endpoint: self.api.endpoint(&ctx.base_url),
            api: self.api.clone(),
            key: None,
            ctx,
            idle_timeout: self.settings.idle_timeout,
            total_timeout: self.settings.total_timeout,
            schema: None,
        };
        Ok((plan, keys))
    }

    fn vendor(&self) -> &'static str {
        match self.api.wire {
            Wire::Anthropic => "Anthropic",
            Wire::Gemini => "Gemini",
            Wire::Responses => "OpenAI",
            Wire::Chat => "server's",
        }
    }
}

impl Provider for HttpProvider {
    fn describe(&self) -> String {
        self.spec.to_string()
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        self.plan().map(drop)
    }

    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError> {
        if (call.cancelled)() {
            return Err(ProviderError::Cancelled);
        }
        if req.profile.uses_tools() {
            // An API call runs no agent: tools or MCP servers would be silently missing.
            return Err(ProviderError::Permanent {
                provider: self.api.kind.into(),
                message: format!(
                    "the {} API provider runs no agent, so it cannot use tools or MCP servers",
                    self.api.kind
                ),
                hint: Some("use claude:, gemini: or codex: for a call with tools".into()),
            });
        }
        let (mut plan, keys) = self.plan()?;
        plan.schema.clone_from(&req.output_schema);
        if keys.is_empty() {
            return self.attempt(plan, req, call);
        }
        let names: Vec<String> = keys.iter().map(|(var, _)| var.clone()).collect();
        let rotation = Rotation::new(self.api.kind, self.rotation.clone());
        let result = rotation.run(&names, call.cancelled, |i| {
            let mut plan = plan.clone();
            plan.key = Some(keys[i].1.clone());
            plan.ctx.key_env = Some(names[i].clone());
            self.attempt(plan, req, call)
        });
        let secrets: Vec<&str> = keys.iter().map(|(_, key)| key.as_str()).collect();
        result.map_err(|e| redact(e, &secrets))
    }
}

impl HttpProvider {
    /// One call with the key in `plan` (or none). A refusal of structured output is answered
    /// by the same call in plain text, once, and remembered.
    fn attempt(
        &self,
        mut plan: Plan,
        req: &Request,
        call: &Call<'_>,
    ) -> Result<Response, ProviderError> {
        // Checked here, not once per call: another key's attempt may follow a refusal.
        if self.refuses_structured_output() {
            plan.schema = None;
        }
        let asked = plan.schema.is_some();
        let plain = Plan {
            schema: None,
            ..plan.clone()
        };
        // Asked plain because of a refusal: this one, or an earlier call's.
        let (result, after_refusal) = match self.attempt_once(plan, req, call) {
            Err(Failure {
                refused_schema: true,
                ..
            }) if asked => {
                self.refused_schema.store(true, Ordering::Relaxed);
                (self.attempt_once(plain, req, call), true)
            }
            other => (other, !asked && req.output_schema.is_some()),
        };
        let mut response = result.map_err(|f| f.error)?;
        if after_refusal {
            response.form = AnswerForm::PlainAfterRefusal;
        }
        Ok(response)
    }

    /// One HTTP exchange as planned.
    fn attempt_once(
        &self,
        plan: Plan,
        req: &Request,
        call: &Call<'_>,
    ) -> Result<Response, Failure> {
        let ctx = plan.ctx.clone();
        let client = match &self.client {
            Ok(client) => client.clone(),
            Err(message) => return Err(ctx.permanent(message.clone(), None).into()),
        };
        let runtime = runtime().map_err(|message| ctx.permanent(message, None))?;

        // The call runs as a task; this thread relays its progress and watches the cancel flag,
        // so cancellation needs no cooperation from the network code.
        let (tx, rx) = mpsc::channel();
        let progress_tx = tx.clone();
        // A send fails only when this thread has stopped listening; nothing is lost then.
        let report = move |tokens| drop(progress_tx.send(Event::Progress(tokens)));
        let billed_tx = tx.clone();
        let billed = move |b| drop(billed_tx.send(Event::Billed(Box::new(b))));
        let (prompt, max_tokens) = (req.prompt.clone(), req.max_output_tokens);
        let task = runtime.spawn(async move {
            let result = call::run(client, plan, prompt, max_tokens, report, billed).await;
            drop(tx.send(Event::Done(Box::new(result))));
        });
        loop {
            if (call.cancelled)() {
                task.abort();
                return Err(ProviderError::Cancelled.into());
            }
            match rx.recv_timeout(CANCEL_POLL) {
                Ok(Event::Progress(output_tokens)) => (call.progress)(CallProgress::Tokens {
                    output_tokens,
                    attempt: 1,
                }),
                Ok(Event::Billed(attempt)) => (call.progress)(CallProgress::Billed(attempt)),
                Ok(Event::Done(result)) => return *result,
                Err(RecvTimeoutError::Timeout) => {}
                // The task panicked: a bug that retrying the same call would only repeat.
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ctx
                        .permanent(
                            "the HTTP call stopped without an answer (an internal error)"
                                .to_owned(),
                            None,
                        )
                        .into());
                }
            }
        }
    }
}

/// `err` with every key in `secrets` (of a plausible key's length) replaced by `[redacted]`,
/// in case a service or proxy echoed one back in its error.
fn redact(err: ProviderError, secrets: &[&str]) -> ProviderError {
    let clean = |text: String| {
        secrets
            .iter()
            .filter(|s| s.len() >= 8)
            .fold(text, |t, s| t.replace(s, "[redacted]"))
    };
    match err {
        ProviderError::Transient {
            provider,
            message,
            retry_after_ms,
            quota,
        } => ProviderError::Transient {
            provider,
            message: clean(message),
            retry_after_ms,
            quota,
        },
        ProviderError::Permanent {
            provider,
            message,
            hint,
        } => ProviderError::Permanent {
            provider,
            message: clean(message),
            hint: hint.map(clean),
        },
        other => other,
    }
}

/// How often the caller's cancel flag is polled while the call runs.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// What the call's task tells the waiting thread.
enum Event {
    Progress(u64),
    Billed(Box<crate::provider::BilledAttempt>),
    Done(Box<Result<Response, Failure>>),
}

/// The runtime every HTTP call runs on, created on first use.
fn runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("gavel-http")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the HTTP runtime: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}
