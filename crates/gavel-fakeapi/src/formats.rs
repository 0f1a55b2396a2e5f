//! The vendors' wire formats for a successful answer: complete bodies and server-sent event
//! sequences for Anthropic Messages, Gemini generateContent, OpenAI Responses and Chat
//! Completions, with text, tool calls (a tool-use turn), or both.

use serde_json::{Value, json};

use crate::reply::ToolCall;
use crate::server::Api;

/// What to say and how it was "computed".
pub struct Answer<'a> {
    pub id: u64,
    pub text: &'a str,
    /// The tools the model calls after its text (none: a plain answer).
    pub calls: &'a [ToolCall],
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
}

impl Answer<'_> {
    /// Whether the answer has a text part: any text, or no tool call at all.
    fn has_text(&self) -> bool {
        !self.text.is_empty() || self.calls.is_empty()
    }
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

/// A tool call's input as the JSON string the OpenAI APIs and Anthropic's stream carry.
fn arguments(call: &ToolCall) -> String {
    call.input.to_string()
}

fn anthropic_tool_id(a: &Answer<'_>, i: usize) -> String {
    format!("toolu_fake_{}_{i}", a.id)
}

fn openai_call_id(a: &Answer<'_>, i: usize) -> String {
    format!("call_fake_{}_{i}", a.id)
}

/// The complete (non-streaming) answer body.
pub fn full_body(api: Api, a: &Answer<'_>) -> Value {
    match api {
        Api::Anthropic => {
            let mut content = Vec::new();
            if a.has_text() {
                content.push(json!({"type": "text", "text": a.text}));
            }
            for (i, c) in a.calls.iter().enumerate() {
                content.push(json!({"type": "tool_use", "id": anthropic_tool_id(a, i), "name": c.name, "input": c.input}));
            }
            let stop = if a.calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            };
            json!({
                "id": format!("msg_fake_{}", a.id), "type": "message", "role": "assistant", "model": a.model,
                "content": content, "stop_reason": stop, "stop_sequence": null,
                "usage": {"input_tokens": a.input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": a.cached_tokens, "output_tokens": a.output_tokens}
            })
        }
        Api::Gemini => {
            let text = a.has_text().then_some(a.text);
            gemini_chunk(a, &gemini_parts(a, text, true), true)
        }
        Api::OpenAiResponses => responses_object(a, "completed", true),
        Api::OpenAiChat => {
            let mut message = json!({"role": "assistant", "content": a.text});
            let mut finish = "stop";
            if !a.calls.is_empty() {
                let calls: Vec<Value> = a
                    .calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        json!({"id": openai_call_id(a, i), "type": "function",
                    "function": {"name": c.name, "arguments": arguments(c)}})
                    })
                    .collect();
                message["tool_calls"] = json!(calls);
                if a.text.is_empty() {
                    message["content"] = Value::Null;
                }
                finish = "tool_calls";
            }
            json!({
                "id": format!("chatcmpl-fake{}", a.id), "object": "chat.completion", "created": 1_767_000_000, "model": a.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": a.input_tokens, "completion_tokens": a.output_tokens, "total_tokens": a.input_tokens + a.output_tokens,
                          "prompt_tokens_details": {"cached_tokens": a.cached_tokens}}
            })
        }
    }
}

/// A Gemini candidate's parts: `text` when given, then the `functionCall` parts when `calls`.
fn gemini_parts(a: &Answer<'_>, text: Option<&str>, calls: bool) -> Vec<Value> {
    let mut parts: Vec<Value> = text.map(|t| json!({"text": t})).into_iter().collect();
    if calls {
        for c in a.calls {
            parts.push(json!({"functionCall": {"name": c.name, "args": c.input}}));
        }
    }
    parts
}

fn gemini_chunk(a: &Answer<'_>, parts: &[Value], last: bool) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
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

/// The Responses API's output items: the message (when there is text), then one
/// `function_call` item per tool call.
fn responses_items(a: &Answer<'_>) -> Vec<Value> {
    let mut items = Vec::new();
    if a.has_text() {
        items.push(json!({"id": format!("msg_fake_{}", a.id), "type": "message", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": a.text, "annotations": []}]}));
    }
    for (i, c) in a.calls.iter().enumerate() {
        items.push(json!({"id": format!("fc_fake_{}_{i}", a.id), "type": "function_call", "status": "completed",
                          "call_id": openai_call_id(a, i), "name": c.name, "arguments": arguments(c)}));
    }
    items
}

fn responses_object(a: &Answer<'_>, status: &str, with_output: bool) -> Value {
    let output = if with_output {
        json!(responses_items(a))
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
    match api {
        Api::Anthropic => anthropic_events(a),
        Api::Gemini => {
            // Text in pieces; the function calls come whole, in the last chunk, which has the
            // finish reason and the usage.
            let mut chunks: Vec<Vec<Value>> = Vec::new();
            if a.has_text() {
                chunks.extend(
                    pieces(a.text)
                        .into_iter()
                        .map(|p| gemini_parts(a, Some(p), false)),
                );
            }
            if !a.calls.is_empty() {
                chunks.push(gemini_parts(a, None, true));
            }
            let n = chunks.len();
            chunks
                .iter()
                .enumerate()
                .map(|(i, parts)| sse(None, &gemini_chunk(a, parts, i + 1 == n)))
                .collect()
        }
        Api::OpenAiResponses => responses_events(a),
        Api::OpenAiChat => chat_events(a),
    }
}

fn anthropic_events(a: &Answer<'_>) -> Vec<String> {
    let mut ev = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": format!("msg_fake_{}", a.id), "type": "message", "role": "assistant",
        "model": a.model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": a.input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": a.cached_tokens, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    let mut block = |ev: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        ev.push(sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if index == 0 {
            ev.push(sse(Some("ping"), &json!({"type": "ping"})));
        }
        for d in deltas {
            ev.push(sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": d}),
            ));
        }
        ev.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if a.has_text() {
        let deltas = pieces(a.text)
            .into_iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut ev, json!({"type": "text", "text": ""}), deltas);
    }
    for (i, c) in a.calls.iter().enumerate() {
        // The input arrives as pieces of its JSON text, after an empty first piece.
        let args = arguments(c);
        let deltas = std::iter::once("")
            .chain(pieces(&args))
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        let start =
            json!({"type": "tool_use", "id": anthropic_tool_id(a, i), "name": c.name, "input": {}});
        block(&mut ev, start, deltas);
    }
    let stop = if a.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev.push(sse(Some("message_delta"), &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": a.output_tokens}})));
    ev.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    ev
}

fn responses_events(a: &Answer<'_>) -> Vec<String> {
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
    ];
    for (index, item) in responses_items(a).into_iter().enumerate() {
        let item_id = item["id"].clone();
        if item["type"] == "message" {
            ev.push(next(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}})));
            ev.push(next(json!({"type": "response.content_part.added", "item_id": item_id, "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})));
            for p in pieces(a.text) {
                ev.push(next(json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": index, "content_index": 0, "delta": p})));
            }
            ev.push(next(json!({"type": "response.output_text.done", "item_id": item_id, "output_index": index, "content_index": 0, "text": a.text})));
            ev.push(next(json!({"type": "response.content_part.done", "item_id": item_id, "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": a.text, "annotations": []}})));
        } else {
            let args = item["arguments"].as_str().unwrap_or_default().to_owned();
            let mut added = item.clone();
            added["status"] = json!("in_progress");
            added["arguments"] = json!("");
            ev.push(next(
                json!({"type": "response.output_item.added", "output_index": index, "item": added}),
            ));
            for p in pieces(&args) {
                ev.push(next(json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": index, "delta": p})));
            }
            ev.push(next(json!({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": index, "name": item["name"], "arguments": args})));
        }
        ev.push(next(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
    }
    ev.push(next(
        json!({"type": "response.completed", "response": responses_object(a, "completed", true)}),
    ));
    ev
}

fn chat_events(a: &Answer<'_>) -> Vec<String> {
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
    if a.has_text() {
        for p in pieces(a.text) {
            ev.push(chunk(json!({"content": p}), Value::Null));
        }
    }
    for (i, c) in a.calls.iter().enumerate() {
        // The first chunk of a call names it; the rest carry pieces of its arguments.
        ev.push(chunk(
            json!({"tool_calls": [{"index": i, "id": openai_call_id(a, i), "type": "function", "function": {"name": c.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for p in pieces(&arguments(c)) {
            ev.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if a.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    ev.push(chunk(json!({}), json!(finish)));
    ev.push(sse(None, &json!({"id": id, "object": "chat.completion.chunk", "created": 1_767_000_000, "model": a.model, "choices": [],
        "usage": {"prompt_tokens": a.input_tokens, "completion_tokens": a.output_tokens, "total_tokens": a.input_tokens + a.output_tokens}})));
    ev.push("data: [DONE]\n\n".to_owned());
    ev
}
