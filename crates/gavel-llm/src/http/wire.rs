//! What gavel needs to know about each vendor's wire format beyond what genai reports.
//!
//! genai turns a stream into text chunks and usage, but it does not say which model answered and
//! it ends some streams "normally" when the connection closed before the vendor's final event.
//! gavel reads both from the raw server-sent events instead: [`Wire::inspect`] looks at one
//! frame and records the answering model, whether the final event has arrived, and whether the
//! frame was valid JSON. This module also knows each API's endpoint and key conventions.

use genai::adapter::AdapterKind;
use serde_json::Value;

use crate::spec::ProviderSpec;

/// One of the four wire formats gavel speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Gemini `streamGenerateContent?alt=sse`.
    Gemini,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// OpenAI Chat Completions (`/chat/completions`), the lingua franca of compatible servers.
    Chat,
}

/// Where and how to reach one provider: resolved from a [`ProviderSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Api {
    pub wire: Wire,
    /// `"anthropic"`, `"google"`, `"openai"` or `"openai-compatible"`.
    pub kind: &'static str,
    pub model: String,
    /// The variable holding the key when the configuration names none (`None`: no key needed).
    pub default_key_env: Option<&'static str>,
    /// The variable that may override the base URL (first-party APIs only).
    pub base_url_env: Option<&'static str>,
    /// The base URL to use when that variable is unset, in the variable's own convention.
    pub default_base_url: String,
}

impl Api {
    /// `None` for provider kinds that are not HTTP APIs (CLIs, scripted).
    pub fn from_spec(spec: &ProviderSpec) -> Option<Self> {
        let (wire, default_key_env, base_url_env, default_base_url) = match spec {
            ProviderSpec::Anthropic { .. } => (
                Wire::Anthropic,
                Some("ANTHROPIC_API_KEY"),
                Some("ANTHROPIC_BASE_URL"),
                "https://api.anthropic.com".to_owned(),
            ),
            ProviderSpec::Google { .. } => (
                Wire::Gemini,
                Some("GEMINI_API_KEY"),
                Some("GOOGLE_GEMINI_BASE_URL"),
                "https://generativelanguage.googleapis.com".to_owned(),
            ),
            ProviderSpec::OpenAi { .. } => (
                Wire::Responses,
                Some("OPENAI_API_KEY"),
                Some("OPENAI_BASE_URL"),
                "https://api.openai.com/v1".to_owned(),
            ),
            ProviderSpec::OpenAiCompatible { base_url, .. } => {
                (Wire::Chat, None, None, base_url.clone())
            }
            _ => return None,
        };
        Some(Self {
            wire,
            kind: spec.kind(),
            model: spec.model(),
            default_key_env,
            base_url_env,
            default_base_url,
        })
    }

    /// The genai endpoint (ending in `/`) for a base URL in the vendor's usual convention:
    /// `ANTHROPIC_BASE_URL` and `GOOGLE_GEMINI_BASE_URL` stop before the API version (as the
    /// vendors' SDKs and CLIs read them), `OPENAI_BASE_URL` and compatible URLs include it.
    pub fn endpoint(&self, base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        match self.wire {
            Wire::Anthropic => format!("{base}/v1/"),
            Wire::Gemini => format!("{base}/v1beta/"),
            Wire::Responses | Wire::Chat => format!("{base}/"),
        }
    }

    /// The genai adapter for this API. A compatible server without a key goes through genai's
    /// `Omlx` adapter: the same Chat Completions wire format, but the key is optional there.
    pub fn adapter(&self, has_key: bool) -> AdapterKind {
        match self.wire {
            Wire::Anthropic => AdapterKind::Anthropic,
            Wire::Gemini => AdapterKind::Gemini,
            Wire::Responses => AdapterKind::OpenAIResp,
            Wire::Chat if has_key => AdapterKind::OpenAI,
            Wire::Chat => AdapterKind::Omlx,
        }
    }
}

/// What the raw frames of one stream said, beyond text and usage.
#[derive(Debug, Default, Clone)]
pub(crate) struct FrameLog {
    /// The stream as received, re-assembled as server-sent events (kept in [`Response::raw`]).
    ///
    /// [`Response::raw`]: crate::Response::raw
    pub transcript: String,
    /// The model the service says answered.
    pub model: Option<String>,
    /// The vendor's final event arrived: the answer is complete.
    pub finished: bool,
    /// The first frame whose data was not JSON.
    pub malformed: Option<String>,
    /// The vendor's own error event, if one arrived mid-stream.
    pub error_event: Option<Value>,
}

impl Wire {
    /// Records one frame (`event:` name and `data:` payload) in `log`.
    pub fn inspect(self, event: Option<&str>, data: &str, log: &mut FrameLog) {
        if let Some(name) = event {
            log.transcript.push_str("event: ");
            log.transcript.push_str(name);
            log.transcript.push('\n');
        }
        log.transcript.push_str("data: ");
        log.transcript.push_str(data);
        log.transcript.push_str("\n\n");

        if self == Self::Chat && data.trim() == "[DONE]" {
            log.finished = true;
            return;
        }
        let Ok(json) = serde_json::from_str::<Value>(data) else {
            log.malformed.get_or_insert_with(|| data.to_owned());
            return;
        };
        if log.model.is_none() {
            log.model = self.model_of(&json).map(str::to_owned);
        }
        if self.is_final(&json) {
            log.finished = true;
        }
        if self.is_error(event, &json) && log.error_event.is_none() {
            log.error_event = Some(json);
        }
    }

    fn model_of(self, json: &Value) -> Option<&str> {
        let pointer = match self {
            Self::Anthropic => "/message/model",
            Self::Gemini => "/modelVersion",
            Self::Responses => "/response/model",
            Self::Chat => "/model",
        };
        json.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
    }

    fn is_final(self, json: &Value) -> bool {
        let kind = json.get("type").and_then(Value::as_str);
        match self {
            Self::Anthropic => kind == Some("message_stop"),
            // `response.incomplete` is a complete answer cut by the output cap, not a lost stream.
            Self::Responses => matches!(kind, Some("response.completed" | "response.incomplete")),
            Self::Gemini => any_set(json, "candidates", "finishReason"),
            // Usage follows the finishing chunk before `[DONE]`, but the text is complete here.
            Self::Chat => any_set(json, "choices", "finish_reason"),
        }
    }

    fn is_error(self, event: Option<&str>, json: &Value) -> bool {
        let kind = json.get("type").and_then(Value::as_str);
        match self {
            Self::Anthropic => event == Some("error") || kind == Some("error"),
            Self::Responses => matches!(kind, Some("error" | "response.failed")),
            Self::Gemini | Self::Chat => json.get("error").is_some_and(|e| !e.is_null()),
        }
    }
}

/// Whether any element of the array `json[list]` has a non-null `field`.
fn any_set(json: &Value, list: &str, field: &str) -> bool {
    json.get(list)
        .and_then(Value::as_array)
        .is_some_and(|items| {
            items
                .iter()
                .any(|item| item.get(field).is_some_and(|v| !v.is_null()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(wire: Wire, frames: &[(Option<&str>, &str)]) -> FrameLog {
        let mut log = FrameLog::default();
        for (event, data) in frames {
            wire.inspect(*event, data, &mut log);
        }
        log
    }

    #[test]
    fn endpoints_follow_each_vendors_base_url_convention() {
        let api = |s: &str| Api::from_spec(&s.parse().unwrap()).unwrap();
        assert_eq!(api("anthropic:m").endpoint("http://h:1/"), "http://h:1/v1/");
        assert_eq!(api("google:m").endpoint("http://h:1"), "http://h:1/v1beta/");
        assert_eq!(api("openai:m").endpoint("http://h:1/v1"), "http://h:1/v1/");
        let compatible = api("openai-compatible:m@http://h:1/v1");
        assert_eq!(
            compatible.endpoint(&compatible.default_base_url),
            "http://h:1/v1/"
        );
        assert!(Api::from_spec(&"claude:opus".parse().unwrap()).is_none());
        assert!(Api::from_spec(&"scripted:x.yaml".parse().unwrap()).is_none());
    }

    #[test]
    fn a_stream_without_its_final_event_is_unfinished() {
        let start = r#"{"type":"message_start","message":{"model":"claude-x"}}"#;
        let log = log_of(Wire::Anthropic, &[(Some("message_start"), start)]);
        assert_eq!(log.model.as_deref(), Some("claude-x"));
        assert!(!log.finished);
        let stop = r#"{"type":"message_stop"}"#;
        let log = log_of(
            Wire::Anthropic,
            &[(Some("message_start"), start), (Some("message_stop"), stop)],
        );
        assert!(log.finished);
        assert_eq!(
            log.transcript,
            format!("event: message_start\ndata: {start}\n\nevent: message_stop\ndata: {stop}\n\n")
        );
    }

    #[test]
    fn gemini_and_chat_finish_on_a_finish_reason() {
        let chunk = r#"{"candidates":[{"content":{}}],"modelVersion":"g-1"}"#;
        let last = r#"{"candidates":[{"finishReason":"STOP"}],"modelVersion":"g-1"}"#;
        assert!(!log_of(Wire::Gemini, &[(None, chunk)]).finished);
        assert!(log_of(Wire::Gemini, &[(None, chunk), (None, last)]).finished);
        let open = r#"{"model":"c-1","choices":[{"delta":{},"finish_reason":null}]}"#;
        let done = r#"{"model":"c-1","choices":[{"delta":{},"finish_reason":"stop"}]}"#;
        let log = log_of(Wire::Chat, &[(None, open)]);
        assert_eq!(log.model.as_deref(), Some("c-1"));
        assert!(!log.finished);
        assert!(log_of(Wire::Chat, &[(None, open), (None, done)]).finished);
        assert!(log_of(Wire::Chat, &[(None, "[DONE]")]).finished);
    }

    #[test]
    fn non_json_data_is_recorded_as_malformed() {
        let log = log_of(Wire::Responses, &[(None, "{\"this is\": not json")]);
        assert_eq!(log.malformed.as_deref(), Some("{\"this is\": not json"));
        assert!(!log.finished);
    }

    #[test]
    fn error_events_are_kept() {
        let err = r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#;
        let log = log_of(Wire::Anthropic, &[(Some("error"), err)]);
        assert_eq!(
            log.error_event.unwrap()["error"]["type"],
            "overloaded_error"
        );
    }
}
