//! What the fake answers: a [`Reply`] taken from a queue, or a standing [`Rule`], optionally
//! only for requests made with one API key.

use serde_json::Value;

use crate::server::Api;

/// One tool the model "decides" to call in a [`Reply::ToolUse`] turn: the tool's name as the
/// client offered it (Claude Code's `Write`, Codex's `exec_command`, ...) and its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub name: String,
    /// The arguments, a JSON object (sent as an object or as a JSON string, as each vendor
    /// does).
    pub input: Value,
}

/// What the fake answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A successful answer (streamed when the request asks for a stream).
    Text {
        text: String,
        /// The model named in the answer (default: the model asked for).
        model: Option<String>,
        input_tokens: u64,
        output_tokens: u64,
        cached_tokens: u64,
        /// Pause between streamed events.
        event_delay_ms: u64,
    },
    /// A successful answer in which the model calls tools: the vendor's tool-use content
    /// (Anthropic `tool_use` blocks, Responses `function_call` items, Gemini `functionCall`
    /// parts, Chat Completions `tool_calls`), after `text` when it is not empty, with the
    /// vendor's "stopped to use tools" reason. The client runs the tools and sends their
    /// results in its next request, which the next reply answers.
    ToolUse {
        calls: Vec<ToolCall>,
        /// What the model says before calling the tools (often nothing).
        text: String,
        model: Option<String>,
        input_tokens: u64,
        output_tokens: u64,
        /// Pause between streamed events.
        event_delay_ms: u64,
    },
    /// An HTTP error in the vendor's format, with an optional `retry-after` (seconds).
    Error {
        status: u16,
        message: String,
        retry_after: Option<u64>,
    },
    /// A stream that sends `after_events` events and then goes silent (until the server stops).
    Stall { after_events: usize },
    /// A stream cut after `after_events` events: the connection closes mid-message.
    Cut { after_events: usize },
    /// HTTP 429 with the vendor's own "quota exhausted" body: Anthropic's `rate_limit_error`,
    /// Gemini's `RESOURCE_EXHAUSTED` with a `QuotaFailure`, OpenAI's `insufficient_quota`; with
    /// an optional `retry-after` (seconds, and Gemini's `RetryInfo`).
    QuotaExhausted { retry_after: Option<u64> },
    /// HTTP 200 with a body that is not valid JSON.
    Malformed,
}

impl Reply {
    /// A plain successful answer.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        let output_tokens = text.split_whitespace().count() as u64;
        Self::Text {
            text,
            model: None,
            input_tokens: 100,
            output_tokens,
            cached_tokens: 0,
            event_delay_ms: 0,
        }
    }

    /// A turn in which the model calls one tool, `name`, with `input` (a JSON object).
    pub fn tool_use(name: &str, input: Value) -> Self {
        Self::tool_uses(vec![(name, input)])
    }

    /// A turn in which the model calls several tools at once, in this order.
    pub fn tool_uses(calls: Vec<(&str, Value)>) -> Self {
        let calls: Vec<ToolCall> = calls
            .into_iter()
            .map(|(name, input)| ToolCall {
                name: name.to_owned(),
                input,
            })
            .collect();
        let output_tokens = calls
            .iter()
            .map(|c| c.input.to_string().len() as u64 / 4 + 10)
            .sum();
        Self::ToolUse {
            calls,
            text: String::new(),
            model: None,
            input_tokens: 100,
            output_tokens,
            event_delay_ms: 0,
        }
    }

    /// What the model says before its tool calls (a tool-use reply only).
    pub fn with_text(mut self, said: impl Into<String>) -> Self {
        if let Self::ToolUse { text, .. } = &mut self {
            *text = said.into();
        }
        self
    }

    /// Names a different answering model.
    pub fn with_model(mut self, name: &str) -> Self {
        if let Self::Text { model, .. } | Self::ToolUse { model, .. } = &mut self {
            *model = Some(name.to_owned());
        }
        self
    }

    /// Sets token counts (a tool-use reply has no cached tokens).
    pub fn with_usage(mut self, input: u64, output: u64, cached: u64) -> Self {
        match &mut self {
            Self::Text {
                input_tokens,
                output_tokens,
                cached_tokens,
                ..
            } => (*input_tokens, *output_tokens, *cached_tokens) = (input, output, cached),
            Self::ToolUse {
                input_tokens,
                output_tokens,
                ..
            } => (*input_tokens, *output_tokens) = (input, output),
            _ => {}
        }
        self
    }

    /// Slows a stream down.
    pub fn with_event_delay(mut self, ms: u64) -> Self {
        if let Self::Text { event_delay_ms, .. } | Self::ToolUse { event_delay_ms, .. } = &mut self
        {
            *event_delay_ms = ms;
        }
        self
    }

    /// An error answer.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Self::Error {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The vendor's "quota exhausted" answer.
    pub fn quota_exhausted() -> Self {
        Self::QuotaExhausted { retry_after: None }
    }

    /// Adds `retry-after` to an error or a quota answer.
    pub fn retry_after(mut self, secs: u64) -> Self {
        if let Self::Error { retry_after, .. } | Self::QuotaExhausted { retry_after } = &mut self {
            *retry_after = Some(secs);
        }
        self
    }
}

/// A standing answer for requests whose model contains `model_contains` (auxiliary calls such
/// as a CLI's title or routing requests) and, when `key` is set, that were made with that API
/// key; checked before the queues and never used up.
#[derive(Debug, Clone)]
pub struct Rule {
    pub api: Api,
    pub model_contains: String,
    pub key: Option<String>,
    pub reply: Reply,
}

impl Rule {
    /// Every request to `api` made with API key `key` gets `reply` (e.g. a key whose quota is
    /// exhausted).
    pub fn for_key(api: Api, key: impl Into<String>, reply: Reply) -> Self {
        Self {
            api,
            model_contains: String::new(),
            key: Some(key.into()),
            reply,
        }
    }

    /// Whether this rule answers a request to `api` for `model` made with `key`.
    pub(crate) fn matches(&self, api: Api, model: &str, key: Option<&str>) -> bool {
        self.api == api
            && model.contains(&self.model_contains)
            && self.key.as_deref().is_none_or(|k| Some(k) == key)
    }
}
