//! Structured output: asking each API to make its answer follow a JSON schema
//! ([`crate::Request::output_schema`]), and telling a service's refusal of it from other errors.
//!
//! Each vendor has its own way to ask, all spoken by genai's public API:
//! - **OpenAI Responses**: `text.format` `{"type": "json_schema", "strict": true, ...}`, and
//!   **Chat Completions** servers (`openai-compatible:`): `response_format` with a strict
//!   `json_schema` (genai's `ChatResponseFormat::JsonSpec`). The answer is the JSON as text.
//! - **Gemini**: `generationConfig.responseMimeType: application/json` with the schema in
//!   `responseJsonSchema`, the JSON-Schema form of `responseSchema` (genai's `JsonSpec` again).
//!   The answer is the JSON as a text part.
//! - **Anthropic**: a forced tool: the schema is the one tool's `input_schema` and
//!   `tool_choice` names it, so the model must answer by calling it; the answer is the tool's
//!   input, taken as the JSON text the model streamed (`input_json_delta`). genai also speaks
//!   Anthropic's newer `output_config.format`, but only recent models accept it, while every
//!   Claude model with tools accepts a forced tool.
//!
//! A schema is a request, never trust: the caller parses the answer as strictly as a plain
//! one. A service that cannot do it answers HTTP 400 naming the parameter ([`refusal`]); the
//! provider then asks the same call in plain text, once, and in plain text from then on.

use genai::chat::{ChatOptions, ChatRequest, JsonSpec, Tool, ToolChoice};

use super::wire::Wire;
use crate::provider::OutputSchema;

/// What the Anthropic tool that carries the schema tells the model.
const TOOL_DESCRIPTION: &str =
    "Give your whole answer by calling this tool once, with input that follows its schema.";

/// `chat` and `options` asking `wire` for an answer that follows `schema`, and the forced
/// tool's name when the answer comes as a tool call (Anthropic).
pub(crate) fn ask(
    wire: Wire,
    schema: &OutputSchema,
    chat: ChatRequest,
    options: ChatOptions,
) -> (ChatRequest, ChatOptions, Option<String>) {
    match wire {
        Wire::Anthropic => {
            let tool = Tool::new(schema.name.clone())
                .with_description(TOOL_DESCRIPTION)
                .with_schema(schema.schema.clone());
            (
                chat.append_tool(tool),
                options.with_tool_choice(ToolChoice::tool(schema.name.clone())),
                Some(schema.name.clone()),
            )
        }
        Wire::Gemini | Wire::Responses | Wire::Chat => {
            let spec = JsonSpec::new(schema.name.clone(), schema.schema.clone());
            (chat, options.with_response_format(spec), None)
        }
    }
}

/// The words a refusal of structured output names: the request parameters of each vendor
/// (and of the compatible servers), and the feature's name.
const PARAMETERS: &[&str] = &[
    "response_format",
    "json_schema",
    "text.format",
    "responseschema",
    "responsejsonschema",
    "response_schema",
    "response_json_schema",
    "responsemimetype",
    "response_mime_type",
    "tool_choice",
    "input_schema",
    "structured output",
];

/// Whether an HTTP error answering a structured-output request is the service refusing
/// structured output: a 400 whose body names one of [`PARAMETERS`] (compared without case).
/// Any other error stays an error.
pub(crate) fn refusal(status: u16, body: &str) -> bool {
    if status != 400 {
        return false;
    }
    let body = body.to_ascii_lowercase();
    PARAMETERS.iter().any(|p| body.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_400_naming_the_structured_output_parameter_is_a_refusal() {
        // The vendors' and servers' real answers.
        for body in [
            r#"{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error","param":null,"code":null}}"#,
            r#"{"error":{"message":"Invalid parameter: 'text.format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error","param":"text.format","code":null}}"#,
            r#"{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"responseJsonSchema\" at 'generation_config': Cannot find field.","status":"INVALID_ARGUMENT"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Thinking may not be enabled when tool_choice forces tool use."}}"#,
        ] {
            assert!(refusal(400, body), "{body}");
        }
    }

    #[test]
    fn other_errors_are_not_refusals() {
        let model = r#"{"error":{"message":"The model `gpt-x` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#;
        assert!(!refusal(400, model));
        assert!(!refusal(400, ""));
        // The parameter named in an answer that is not a 400.
        let busy = r#"{"error":{"message":"response_format is slow today","type":"server_error"}}"#;
        assert!(!refusal(500, busy));
        assert!(!refusal(429, busy));
    }
}
