//! Structured output in the fake: each vendor's way of asking is answered the vendor's way, and
//! a server told to refuse it answers the vendor's real 400 without using up its replies.

use serde_json::{Value, json};

use crate::tests::{raw, sse_data};
use crate::{Api, FakeServer, Reply};

const VERDICT: &str = r#"{"verdict":"APPROVED","findings":[]}"#;

fn schema() -> Value {
    json!({"type": "object", "properties": {"verdict": {"type": "string", "enum": ["APPROVED", "REVISE", "BLOCK"]},
        "findings": {"type": "array", "items": {"type": "string"}}},
        "required": ["verdict", "findings"], "additionalProperties": false})
}

/// The status code and the (complete, `content-length`) body of a raw response.
fn status_and_body(raw: &str) -> (u16, Value) {
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// One structured-output request per API: (api, path, body).
fn structured_requests() -> Vec<(Api, &'static str, Value)> {
    vec![
        (
            Api::OpenAiChat,
            "/v1/chat/completions",
            json!({"model": "m", "messages": [], "response_format": {"type": "json_schema",
                "json_schema": {"name": "gavel_verdict", "strict": true, "schema": schema()}}}),
        ),
        (
            Api::OpenAiResponses,
            "/v1/responses",
            json!({"model": "m", "input": [], "stream": true, "text": {"format": {"type": "json_schema",
                "name": "gavel_verdict", "strict": true, "schema": schema()}}}),
        ),
        (
            Api::Gemini,
            "/v1beta/models/g:generateContent",
            json!({"contents": [], "generationConfig": {"responseMimeType": "application/json",
                "responseJsonSchema": schema()}}),
        ),
        (
            Api::Anthropic,
            "/v1/messages",
            json!({"model": "m", "max_tokens": 10, "messages": [],
                "tools": [{"name": "gavel_verdict", "input_schema": schema()}],
                "tool_choice": {"type": "tool", "name": "gavel_verdict"}}),
        ),
    ]
}

#[test]
fn json_schema_requests_get_the_json_as_their_text() {
    let server = FakeServer::start().expect("start");
    for (api, path, body) in structured_requests()
        .into_iter()
        .filter(|(api, ..)| *api != Api::Anthropic)
    {
        server.push(api, Reply::text(VERDICT));
        let out = raw(&server, path, &body.to_string());
        let text = match api {
            Api::OpenAiChat => status_and_body(&out).1["choices"][0]["message"]["content"].clone(),
            Api::Gemini => {
                status_and_body(&out).1["candidates"][0]["content"]["parts"][0]["text"].clone()
            }
            _ => {
                let done = sse_data(&out)
                    .into_iter()
                    .find(|e| e["type"] == "response.output_text.done")
                    .expect("the text's done event");
                done["text"].clone()
            }
        };
        assert_eq!(text, VERDICT, "{api:?}: {out}");
    }
}

#[test]
fn an_anthropic_forced_tool_is_answered_by_a_call_of_that_tool() {
    let server = FakeServer::start().expect("start");
    let (_, path, mut body) = structured_requests().remove(3);
    server.push(Api::Anthropic, Reply::text(VERDICT));
    let (status, answer) = status_and_body(&raw(&server, path, &body.to_string()));
    assert_eq!(status, 200);
    assert_eq!(answer["stop_reason"], "tool_use");
    let content = answer["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "no text beside the call: {answer}");
    assert_eq!(content[0]["type"], "tool_use");
    assert_eq!(content[0]["name"], "gavel_verdict");
    assert_eq!(
        content[0]["input"],
        json!({"verdict": "APPROVED", "findings": []})
    );

    // Streamed: the input arrives as pieces of its JSON text.
    body["stream"] = json!(true);
    server.push(Api::Anthropic, Reply::text(VERDICT));
    let events = sse_data(&raw(&server, path, &body.to_string()));
    let start = events
        .iter()
        .find(|e| e["type"] == "content_block_start")
        .expect("a block");
    assert_eq!(start["content_block"]["type"], "tool_use");
    assert_eq!(start["content_block"]["name"], "gavel_verdict");
    let input: String = events
        .iter()
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    let input: Value = serde_json::from_str(&input).expect("JSON input");
    assert_eq!(input, json!({"verdict": "APPROVED", "findings": []}));

    // A text that is not a JSON object stays text (the model "ignored" the tool).
    body["stream"] = json!(false);
    server.push(Api::Anthropic, Reply::text("APPROVED, no findings"));
    let (_, answer) = status_and_body(&raw(&server, path, &body.to_string()));
    assert_eq!(answer["content"][0]["type"], "text");
    assert_eq!(answer["content"][0]["text"], "APPROVED, no findings");
}

#[test]
fn a_refusing_server_answers_the_vendors_400_and_keeps_its_replies() {
    for (api, path, body) in structured_requests() {
        let server = FakeServer::start().expect("start");
        server.refuse_structured_output(api);
        server.push(api, Reply::text("plain answer"));
        let (status, error) = status_and_body(&raw(&server, path, &body.to_string()));
        assert_eq!(status, 400, "{api:?}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        let named = match api {
            Api::OpenAiChat => "'response_format'",
            Api::OpenAiResponses => "'text.format'",
            Api::Gemini => "\"responseJsonSchema\"",
            Api::Anthropic => "tool_choice",
        };
        assert!(message.contains(named), "{api:?}: {error}");
        let kind = match api {
            Api::Gemini => &error["error"]["status"],
            _ => &error["error"]["type"],
        };
        assert!(
            kind == "invalid_request_error" || kind == "INVALID_ARGUMENT",
            "{api:?}: {error}"
        );
        assert_eq!(server.pending(api), 1, "{api:?}: the reply is still queued");
        assert_eq!(server.requests().len(), 1, "{api:?}: recorded");

        // The same request without the schema is answered.
        let mut plain = body.clone();
        for field in ["response_format", "text", "tools", "tool_choice"] {
            plain.as_object_mut().expect("object").remove(field);
        }
        plain["generationConfig"] = json!({});
        let out = raw(&server, path, &plain.to_string());
        assert!(out.starts_with("HTTP/1.1 200"), "{api:?}: {out}");
        assert!(out.contains("plain answer"), "{api:?}: {out}");
        assert_eq!(server.pending(api), 0);
    }
}

#[test]
fn anthropic_output_config_gets_the_json_as_text_or_its_refusal() {
    let server = FakeServer::start().expect("start");
    let body = json!({"model": "m", "max_tokens": 10, "messages": [],
        "output_config": {"format": {"type": "json_schema", "schema": schema()}}});
    server.push(Api::Anthropic, Reply::text(VERDICT));
    let (status, answer) = status_and_body(&raw(&server, "/v1/messages", &body.to_string()));
    assert_eq!(status, 200);
    assert_eq!(answer["content"][0]["type"], "text");
    assert_eq!(answer["content"][0]["text"], VERDICT);

    server.refuse_structured_output(Api::Anthropic);
    let (status, error) = status_and_body(&raw(&server, "/v1/messages", &body.to_string()));
    assert_eq!(status, 400);
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("output_config.format"), "{error}");
}
