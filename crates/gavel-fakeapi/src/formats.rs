//! The vendors' wire formats: answer bodies, server-sent event sequences and error bodies for
//! Anthropic Messages, Gemini generateContent, OpenAI Responses and Chat Completions.

use serde_json::{Value, json};

use crate::server::Api;

/// What to say and how it was "computed".
pub struct Answer<'a> {
    pub id: u64,
    pub text: &'a str,
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
}

/// Splits text into a few deltas, as a real stream would.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(24);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    if out.is_empty() {
        out.push("");
    }
    out
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The complete (non-streaming) answer body.
pub fn full_body(api: Api, a: &Answer<'_>) -> Value {
    match api {
        Api::Anthropic => json!({
            "id": format!("msg_fake_{}", a.id), "type": "message", "role": "assistant", "model": a.model,
            "content": [{"type": "text", "text": a.text}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": a.input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": a.cached_tokens, "output_tokens": a.output_tokens}
        }),
        Api::Gemini => gemini_chunk(a, a.text, true),
        Api::OpenAiResponses => responses_object(a, "completed", true),
        Api::OpenAiChat => json!({
            "id": format!("chatcmpl-fake{}", a.id), "object": "chat.completion", "created": 1_767_000_000, "model": a.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": a.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": a.input_tokens, "completion_tokens": a.output_tokens, "total_tokens": a.input_tokens + a.output_tokens,
                      "prompt_tokens_details": {"cached_tokens": a.cached_tokens}}
        }),
    }
}

fn gemini_chunk(a: &Answer<'_>, text: &str, last: bool) -> Value {
    let mut candidate =
        json!({"content": {"parts": [{"text": text}], "role": "model"}, "index": 0});
    let mut chunk =
        json!({"candidates": [], "modelVersion": a.model, "responseId": format!("fake-{}", a.id)});
    if last {
        candidate["finishReason"] = json!("STOP");
        chunk["usageMetadata"] = json!({"promptTokenCount": a.input_tokens, "candidatesTokenCount": a.output_tokens,
            "totalTokenCount": a.input_tokens + a.output_tokens, "cachedContentTokenCount": a.cached_tokens});
    }
    chunk["candidates"] = json!([candidate]);
    chunk
}

fn responses_object(a: &Answer<'_>, status: &str, with_output: bool) -> Value {
    let output = if with_output {
        json!([{"id": format!("msg_fake_{}", a.id), "type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": a.text, "annotations": []}]}])
    } else {
        json!([])
    };
    let usage = if with_output {
        json!({"input_tokens": a.input_tokens, "input_tokens_details": {"cached_tokens": a.cached_tokens},
               "output_tokens": a.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
               "total_tokens": a.input_tokens + a.output_tokens})
    } else {
        Value::Null
    };
    json!({"id": format!("resp_fake_{}", a.id), "object": "response", "created_at": 1_767_000_000, "status": status,
           "model": a.model, "output": output, "usage": usage, "error": null, "incomplete_details": null})
}

/// The answer as a sequence of server-sent events (each a complete `event:`/`data:` block).
pub fn stream_events(api: Api, a: &Answer<'_>) -> Vec<String> {
    let parts = pieces(a.text);
    match api {
        Api::Anthropic => {
            let mut ev = vec![
                sse(
                    Some("message_start"),
                    &json!({"type": "message_start", "message": {"id": format!("msg_fake_{}", a.id), "type": "message", "role": "assistant",
                    "model": a.model, "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": a.input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": a.cached_tokens, "output_tokens": 1}}}),
                ),
                sse(
                    Some("content_block_start"),
                    &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                ),
                sse(Some("ping"), &json!({"type": "ping"})),
            ];
            for p in parts {
                ev.push(sse(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}})));
            }
            ev.push(sse(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            ev.push(sse(Some("message_delta"), &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": a.output_tokens}})));
            ev.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
            ev
        }
        Api::Gemini => {
            let n = parts.len();
            parts
                .iter()
                .enumerate()
                .map(|(i, p)| sse(None, &gemini_chunk(a, p, i + 1 == n)))
                .collect()
        }
        Api::OpenAiResponses => {
            let item_id = format!("msg_fake_{}", a.id);
            let mut seq = 0u64;
            let mut next = |mut v: Value| {
                v["sequence_number"] = json!(seq);
                seq += 1;
                let name = v["type"].as_str().unwrap_or_default().to_owned();
                sse(Some(&name), &v)
            };
            let mut ev = vec![
                next(
                    json!({"type": "response.created", "response": responses_object(a, "in_progress", false)}),
                ),
                next(
                    json!({"type": "response.in_progress", "response": responses_object(a, "in_progress", false)}),
                ),
                next(
                    json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
                ),
                next(
                    json!({"type": "response.content_part.added", "item_id": item_id, "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                ),
            ];
            for p in parts {
                ev.push(next(json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0, "content_index": 0, "delta": p})));
            }
            ev.push(next(json!({"type": "response.output_text.done", "item_id": item_id, "output_index": 0, "content_index": 0, "text": a.text})));
            ev.push(next(json!({"type": "response.content_part.done", "item_id": item_id, "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": a.text, "annotations": []}})));
            ev.push(next(json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": a.text, "annotations": []}]}})));
            ev.push(next(json!({"type": "response.completed", "response": responses_object(a, "completed", true)})));
            ev
        }
        Api::OpenAiChat => {
            let id = format!("chatcmpl-fake{}", a.id);
            let chunk = |delta: Value, finish: Value| {
                sse(
                    None,
                    &json!({"id": id, "object": "chat.completion.chunk", "created": 1_767_000_000, "model": a.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            let mut ev = vec![chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            )];
            for p in parts {
                ev.push(chunk(json!({"content": p}), Value::Null));
            }
            ev.push(chunk(json!({}), json!("stop")));
            ev.push(sse(None, &json!({"id": id, "object": "chat.completion.chunk", "created": 1_767_000_000, "model": a.model, "choices": [],
                "usage": {"prompt_tokens": a.input_tokens, "completion_tokens": a.output_tokens, "total_tokens": a.input_tokens + a.output_tokens}})));
            ev.push("data: [DONE]\n\n".to_owned());
            ev
        }
    }
}

/// The vendor's error body for `status`.
pub fn error_body(api: Api, status: u16, message: &str, retry_after: Option<u64>) -> Value {
    match api {
        Api::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Api::Gemini => {
            let status_name = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            let mut details = Vec::new();
            if let Some(secs) = retry_after {
                details.push(json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}));
            }
            json!({"error": {"code": status, "message": message, "status": status_name, "details": details}})
        }
        Api::OpenAiResponses | Api::OpenAiChat => {
            let (kind, code) = match status {
                400 => ("invalid_request_error", "invalid_request"),
                401 => ("invalid_request_error", "invalid_api_key"),
                404 => ("invalid_request_error", "model_not_found"),
                429 => ("rate_limit_exceeded", "rate_limit_exceeded"),
                _ => ("server_error", "server_error"),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
    }
}

/// The vendor's 429 body for a key whose quota is exhausted, as the real services send it.
pub fn quota_body(api: Api, model: &str, retry_after: Option<u64>) -> Value {
    match api {
        Api::Anthropic => {
            let message = format!(
                "This request would exceed your organization's rate limit of 50,000 input tokens \
                 per minute (org: fake, model: {model}). For details, refer to: \
                 https://docs.claude.com/en/api/rate-limits."
            );
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": message},
                   "request_id": "req_fake_quota"})
        }
        Api::Gemini => {
            let mut details = vec![
                json!({"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                    "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                    "quotaDimensions": {"location": "global", "model": model}, "quotaValue": "50"}]}),
                json!({"@type": "type.googleapis.com/google.rpc.Help", "links": [{
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}),
            ];
            if let Some(secs) = retry_after {
                details.push(json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}));
            }
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": details,
                "message": "You exceeded your current quota, please check your plan and billing details. \
                            For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}})
        }
        Api::OpenAiResponses | Api::OpenAiChat => json!({"error": {
            "message": "You exceeded your current quota, please check your plan and billing details. For more \
                        information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}),
    }
}
