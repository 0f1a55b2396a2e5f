//! Test helpers: one [`Kind`] per HTTP provider kind (what the fake should receive from it) and
//! a [`Harness`] that points a provider at a fresh fake server with a hermetic environment.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use gavel_fakeapi::{Api, FakeServer, Recorded, Reply};
use gavel_llm::{
    Call, CallProgress, HttpProvider, HttpSettings, Provider, ProviderError, ProviderSpec, Request,
    Response, Role,
};
use serde_json::Value;

/// The prompt every test sends.
pub const PROMPT: &str = "Review this patch:\n--- a/x.rs\n+++ b/x.rs\n@@ fn main() {}";
/// The output cap every test asks for.
pub const MAX_TOKENS: u32 = 777;
/// The idle timeout every test uses.
pub const IDLE: Duration = Duration::from_secs(1);

/// What distinguishes one provider kind in these tests.
pub struct Kind {
    pub name: &'static str,
    pub api: Api,
    pub model: &'static str,
    /// The variable the key is read from (for `openai-compatible`, named with `key_env`).
    pub key_var: &'static str,
    /// `key_env` in the settings (only `openai-compatible` needs one).
    pub key_env: Option<&'static str>,
    /// The base-URL variable and the suffix its value takes after the fake's URL.
    pub base_var: Option<(&'static str, &'static str)>,
    /// The path the request must go to.
    pub path: &'static str,
    /// The header that carries the key, and how the key appears in it.
    pub auth_header: &'static str,
    pub auth_prefix: &'static str,
    /// JSON pointers to the one message's role and text, and to the output cap.
    pub role_ptr: &'static str,
    pub prompt_ptr: &'static str,
    pub messages_ptr: &'static str,
    pub max_tokens_ptr: &'static str,
    /// A number of stream events that includes some text but not the final event.
    pub mid_events: usize,
    /// Anthropic reports cache reads beside the input tokens; gavel adds them in.
    pub cache_adds_to_input: bool,
    /// Whether the streamed usage names cached tokens at all.
    pub streams_cached: bool,
    /// What the final event looks like in the raw transcript.
    pub final_marker: &'static str,
}

pub const ANTHROPIC: Kind = Kind {
    name: "anthropic",
    api: Api::Anthropic,
    model: "claude-test-4",
    key_var: "ANTHROPIC_API_KEY",
    key_env: None,
    base_var: Some(("ANTHROPIC_BASE_URL", "")),
    path: "/v1/messages",
    auth_header: "x-api-key",
    auth_prefix: "",
    role_ptr: "/messages/0/role",
    prompt_ptr: "/messages/0/content",
    messages_ptr: "/messages",
    max_tokens_ptr: "/max_tokens",
    mid_events: 4,
    cache_adds_to_input: true,
    streams_cached: true,
    final_marker: "event: message_stop",
};

pub const GOOGLE: Kind = Kind {
    name: "google",
    api: Api::Gemini,
    model: "gemini-test-pro",
    key_var: "GEMINI_API_KEY",
    key_env: None,
    base_var: Some(("GOOGLE_GEMINI_BASE_URL", "")),
    path: "/v1beta/models/gemini-test-pro:streamGenerateContent",
    auth_header: "x-goog-api-key",
    auth_prefix: "",
    role_ptr: "/contents/0/role",
    prompt_ptr: "/contents/0/parts/0/text",
    messages_ptr: "/contents",
    max_tokens_ptr: "/generationConfig/maxOutputTokens",
    mid_events: 1,
    cache_adds_to_input: false,
    streams_cached: true,
    final_marker: "\"finishReason\":\"STOP\"",
};

pub const OPENAI: Kind = Kind {
    name: "openai",
    api: Api::OpenAiResponses,
    model: "gpt-test-5",
    key_var: "OPENAI_API_KEY",
    key_env: None,
    base_var: Some(("OPENAI_BASE_URL", "/v1")),
    path: "/v1/responses",
    auth_header: "authorization",
    auth_prefix: "Bearer ",
    role_ptr: "/input/0/role",
    prompt_ptr: "/input/0/content",
    messages_ptr: "/input",
    max_tokens_ptr: "/max_output_tokens",
    mid_events: 5,
    cache_adds_to_input: false,
    streams_cached: true,
    final_marker: "event: response.completed",
};

pub const COMPATIBLE: Kind = Kind {
    name: "openai-compatible",
    api: Api::OpenAiChat,
    model: "llama-test:8b",
    key_var: "LOCAL_LLM_KEY",
    key_env: Some("LOCAL_LLM_KEY"),
    base_var: None,
    path: "/v1/chat/completions",
    auth_header: "authorization",
    auth_prefix: "Bearer ",
    role_ptr: "/messages/0/role",
    prompt_ptr: "/messages/0/content",
    messages_ptr: "/messages",
    max_tokens_ptr: "/max_tokens",
    mid_events: 2,
    cache_adds_to_input: false,
    streams_cached: false,
    final_marker: "data: [DONE]",
};

pub const KINDS: [&Kind; 4] = [&ANTHROPIC, &GOOGLE, &OPENAI, &COMPATIBLE];

impl Kind {
    /// The provider string for this kind against the fake at `url`.
    pub fn spec(&self, url: &str) -> ProviderSpec {
        let text = match self.api {
            Api::OpenAiChat => format!("{}:{}@{url}/v1", self.name, self.model),
            _ => format!("{}:{}", self.name, self.model),
        };
        text.parse().expect("test provider strings are valid")
    }

    pub fn key(&self) -> String {
        format!("test-key-{}", self.name)
    }
}

/// A fake server and a provider pointed at it.
pub struct Harness {
    pub fake: FakeServer,
    pub provider: HttpProvider,
    pub kind: &'static Kind,
}

impl Harness {
    /// The default test setup: key set, base URL at the fake, 1 s idle timeout.
    pub fn new(kind: &'static Kind) -> Self {
        Self::build(kind, settings(kind), |_| {})
    }

    /// Like [`Harness::new`], with changes to the settings and the environment.
    pub fn build(
        kind: &'static Kind,
        settings: HttpSettings,
        edit_env: impl FnOnce(&mut HashMap<String, String>),
    ) -> Self {
        let fake = FakeServer::start().expect("the fake server starts");
        let mut env = HashMap::new();
        env.insert(kind.key_var.to_owned(), kind.key());
        if let Some((var, suffix)) = kind.base_var {
            env.insert(var.to_owned(), format!("{}{suffix}", fake.url()));
        }
        edit_env(&mut env);
        let provider = HttpProvider::new(&kind.spec(&fake.url()), settings)
            .expect("an HTTP kind builds an HTTP provider")
            .with_env(move |name| env.get(name).cloned());
        Self {
            fake,
            provider,
            kind,
        }
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.fake.push(self.kind.api, reply);
        self
    }

    /// Sends the test prompt with no cancellation.
    pub fn ask(&self) -> Result<Response, ProviderError> {
        self.provider.complete(&request(), &Call::new(&|| false))
    }

    /// Sends the test prompt, collecting token progress reports.
    pub fn ask_with_progress(&self) -> (Result<Response, ProviderError>, Vec<Progress>) {
        let seen = RefCell::new(Vec::new());
        let progress = |p: CallProgress| {
            if let CallProgress::Tokens {
                output_tokens,
                attempt,
            } = p
            {
                seen.borrow_mut().push(Progress {
                    output_tokens,
                    attempt,
                });
            }
        };
        let call = Call {
            cancelled: &|| false,
            progress: &progress,
        };
        let result = self.provider.complete(&request(), &call);
        (result, seen.into_inner())
    }

    /// The one request the fake received.
    pub fn only_request(&self) -> Recorded {
        let mut requests = self.fake.requests();
        assert_eq!(requests.len(), 1, "{}: {requests:#?}", self.kind.name);
        requests.remove(0)
    }
}

/// A token progress report ([`CallProgress::Tokens`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub output_tokens: u64,
    pub attempt: u32,
}

/// The settings every test starts from.
pub fn settings(kind: &Kind) -> HttpSettings {
    HttpSettings {
        idle_timeout: IDLE,
        total_timeout: Duration::from_secs(20),
        key_env: kind.key_env.map(str::to_owned).into_iter().collect(),
    }
}

pub fn request() -> Request {
    Request {
        role: Role::REVIEWER,
        prompt: PROMPT.to_owned(),
        seq: 0,
        step_id: "review".to_owned(),
        max_output_tokens: MAX_TOKENS,
        profile: gavel_llm::AgentProfile::text_only(),
        output_schema: None,
    }
}

/// A recorded request's header, by case-insensitive name.
pub fn header<'a>(req: &'a Recorded, name: &str) -> Option<&'a str> {
    req.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The body field at `pointer`, or a readable panic.
pub fn field<'a>(req: &'a Recorded, pointer: &str) -> &'a Value {
    req.body
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in {}", req.body))
}

/// Unwraps a `Transient` error into (message, retry_after_ms).
pub fn transient(kind: &Kind, result: Result<Response, ProviderError>) -> (String, Option<u64>) {
    match result {
        Err(ProviderError::Transient {
            provider,
            message,
            retry_after_ms,
            ..
        }) => {
            assert_eq!(provider, kind.name);
            (message, retry_after_ms)
        }
        other => panic!("{}: expected a transient error, got {other:?}", kind.name),
    }
}

/// Unwraps a `Permanent` error into (message, hint).
pub fn permanent<T: std::fmt::Debug>(
    kind: &Kind,
    result: Result<T, ProviderError>,
) -> (String, String) {
    match result {
        Err(ProviderError::Permanent {
            provider,
            message,
            hint,
        }) => {
            assert_eq!(provider, kind.name);
            (
                message,
                hint.unwrap_or_else(|| panic!("{}: no hint", kind.name)),
            )
        }
        other => panic!("{}: expected a permanent error, got {other:?}", kind.name),
    }
}

/// Calls the provider with a cancel flag that turns true the first time some text has arrived;
/// returns the result and how many progress reports the call relayed after the flag was raised
/// (none, when it stops at once: a call that went on would relay the rest of the answer).
pub fn cancel_after_first_text(
    provider: &HttpProvider,
) -> (Result<Response, ProviderError>, usize) {
    let raised = Cell::new(false);
    let after = Cell::new(0usize);
    let cancelled = || raised.get();
    let progress = |p: CallProgress| {
        if raised.get() {
            after.set(after.get() + 1);
        } else if matches!(p, CallProgress::Tokens { output_tokens, .. } if output_tokens > 0) {
            raised.set(true);
        }
    };
    let call = Call {
        cancelled: &cancelled,
        progress: &progress,
    };
    let result = provider.complete(&request(), &call);
    assert!(
        raised.get(),
        "no text arrived before the call ended: {result:?}"
    );
    (result, after.get())
}
