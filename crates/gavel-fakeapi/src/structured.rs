//! Structured output, as each vendor does it: which requests ask for an answer that follows a
//! JSON schema, how the answer then comes back, and the vendor's real 400 when a server is told
//! to refuse it ([`crate::FakeServer::refuse_structured_output`]).
//!
//! The requests that ask:
//! - Anthropic: a forced tool (`tool_choice` `{"type": "tool", "name": N}`): the answer is a
//!   `tool_use` block of tool N whose input is the reply's text, a JSON object (a text that is
//!   not one is answered as a text block, as if the model ignored the tool, so a test can show
//!   what a client does then); or `output_config.format` `json_schema`: the answer is the
//!   JSON as text.
//! - Gemini: `generationConfig.responseJsonSchema` or `responseSchema` (or their snake_case
//!   spellings): the JSON as a text part.
//! - OpenAI Responses: `text.format` `json_schema`; Chat Completions: `response_format`
//!   `json_schema`: the JSON as the message's text.
//!
//! In every case the reply's text is what the model "wrote": the fake never checks it against
//! the schema, so tests can send answers a client must refuse.

use serde_json::{Value, json};

use crate::reply::ToolCall;
use crate::server::Api;

/// How a request asked for structured output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ask {
    /// The answer is JSON text; `field` is the request parameter that asked.
    Text { field: &'static str },
    /// The answer is a call of this tool (Anthropic's forced tool).
    Tool { name: String },
}

/// How `body`, a request to `api`, asks for structured output, if it does.
pub(crate) fn asked(api: Api, body: &Value) -> Option<Ask> {
    let is_schema = |v: Option<&Value>| v.and_then(Value::as_str) == Some("json_schema");
    match api {
        Api::Anthropic => {
            let choice = &body["tool_choice"];
            if choice["type"] == "tool"
                && let Some(name) = choice["name"].as_str()
            {
                return Some(Ask::Tool {
                    name: name.to_owned(),
                });
            }
            is_schema(body.pointer("/output_config/format/type")).then_some(Ask::Text {
                field: "output_config.format",
            })
        }
        Api::Gemini => {
            let config = body
                .get("generationConfig")
                .or_else(|| body.get("generation_config"))?;
            [
                "responseJsonSchema",
                "responseSchema",
                "response_json_schema",
                "response_schema",
            ]
            .into_iter()
            .find(|f| config.get(*f).is_some_and(|v| !v.is_null()))
            .map(|field| Ask::Text { field })
        }
        Api::OpenAiResponses => is_schema(body.pointer("/text/format/type")).then_some(Ask::Text {
            field: "text.format",
        }),
        Api::OpenAiChat => is_schema(body.pointer("/response_format/type")).then_some(Ask::Text {
            field: "response_format",
        }),
    }
}

/// The tool call that answers a forced-tool request with `text`, when `text` is a JSON object.
pub(crate) fn forced_call(ask: Option<&Ask>, text: &str) -> Option<ToolCall> {
    let Some(Ask::Tool { name }) = ask else {
        return None;
    };
    let input: Value = serde_json::from_str(text).ok()?;
    input.is_object().then(|| ToolCall {
        name: name.clone(),
        input,
    })
}

/// The vendor's real 400 answer refusing structured output asked for as `ask`.
pub(crate) fn refusal_body(api: Api, ask: &Ask) -> Value {
    match (api, ask) {
        (Api::Anthropic, Ask::Tool { .. }) => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": "Thinking may not be enabled when tool_choice forces tool use."},
            "request_id": "req_fake_refused"}),
        (Api::Anthropic, Ask::Text { field }) => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": format!("{field}: Extra inputs are not permitted")},
            "request_id": "req_fake_refused"}),
        (Api::Gemini, ask) => {
            let field = match ask {
                Ask::Text { field } => *field,
                Ask::Tool { .. } => "responseSchema",
            };
            let message = format!(
                "Invalid JSON payload received. Unknown name \"{field}\" at 'generation_config': \
                 Cannot find field."
            );
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": "generation_config", "description": message}]}]}})
        }
        (Api::OpenAiResponses | Api::OpenAiChat, _) => {
            let (param, shown) = if api == Api::OpenAiResponses {
                (json!("text.format"), "text.format")
            } else {
                (Value::Null, "response_format")
            };
            json!({"error": {
                "message": format!(
                    "Invalid parameter: '{shown}' of type 'json_schema' is not supported with \
                     this model. Learn more about supported models at the Structured Outputs \
                     guide: https://platform.openai.com/docs/guides/structured-outputs"),
                "type": "invalid_request_error", "param": param, "code": null}})
        }
    }
}
