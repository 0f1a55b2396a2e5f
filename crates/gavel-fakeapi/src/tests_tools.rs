//! Tool-use turns checked with a plain HTTP client: each vendor's tool-call shape, complete and
//! streamed, and the follow-up request carrying the tool's result.

use serde_json::{Value, json};

use crate::{Api, FakeServer, Reply};

fn post(server: &FakeServer, path: &str, body: &Value) -> (String, String) {
    let resp = reqwest::blocking::Client::new()
        .post(format!("{}{path}", server.url()))
        .header("x-api-key", "k")
        .json(body)
        .send()
        .expect("send");
    assert_eq!(resp.status(), 200);
    let kind = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (kind, resp.text().expect("body"))
}

fn json_of(server: &FakeServer, path: &str, body: &Value) -> Value {
    let (kind, text) = post(server, path, body);
    assert_eq!(kind, "application/json");
    serde_json::from_str(&text).expect("JSON body")
}

/// The `data:` payloads of an event stream, with their `event:` names (if any).
fn events(server: &FakeServer, path: &str, body: &Value) -> Vec<(Option<String>, Value)> {
    let (kind, text) = post(server, path, body);
    assert_eq!(kind, "text/event-stream");
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .map(str::to_owned);
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            (data != "[DONE]").then(|| (name, serde_json::from_str(data).expect("event JSON")))
        })
        .collect()
}

fn write_input() -> Value {
    json!({"file_path": "/tmp/t/hello.py", "content": "print('hi')\n"})
}

#[test]
fn anthropic_answers_a_tool_use_block_with_stop_reason_tool_use() {
    let server = FakeServer::start().expect("start");
    server.push(Api::Anthropic, Reply::tool_use("Write", write_input()));
    let body = json_of(
        &server,
        "/v1/messages",
        &json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []}),
    );
    assert_eq!(body["stop_reason"], "tool_use");
    let content = body["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "no empty text block: {content:?}");
    assert_eq!(content[0]["type"], "tool_use");
    assert_eq!(content[0]["name"], "Write");
    assert_eq!(content[0]["input"], write_input());
    let id = content[0]["id"].as_str().expect("id");
    assert!(id.starts_with("toolu_"), "{id}");
}

#[test]
fn anthropic_streams_text_then_the_tool_input_as_partial_json() {
    let server = FakeServer::start().expect("start");
    let input =
        json!({"file_path": "/tmp/t/a-rather-long-name.py", "content": "x = 1\n".repeat(10)});
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", input.clone()).with_text("I'll write it."),
    );
    let ev = events(
        &server,
        "/v1/messages",
        &json!({"model": "m", "stream": true, "max_tokens": 100, "messages": []}),
    );
    for (name, data) in &ev {
        assert_eq!(name.as_deref(), data["type"].as_str(), "event name = type");
    }
    let starts: Vec<&Value> = ev
        .iter()
        .filter(|(_, d)| d["type"] == "content_block_start")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["content_block"]["type"], "text");
    let tool = &starts[1];
    assert_eq!(tool["index"], 1);
    assert_eq!(tool["content_block"]["type"], "tool_use");
    assert_eq!(tool["content_block"]["name"], "Write");
    assert_eq!(tool["content_block"]["input"], json!({}));
    let deltas: Vec<&Value> = ev
        .iter()
        .filter(|(_, d)| d["type"] == "content_block_delta" && d["index"] == 1)
        .map(|(_, d)| &d["delta"])
        .collect();
    assert!(deltas.len() > 2, "the input comes in pieces");
    assert!(deltas.iter().all(|d| d["type"] == "input_json_delta"));
    let json_text: String = deltas
        .iter()
        .map(|d| d["partial_json"].as_str().expect("partial_json"))
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&json_text).expect("JSON"),
        input
    );
    let stops = ev
        .iter()
        .filter(|(_, d)| d["type"] == "content_block_stop")
        .count();
    assert_eq!(stops, 2);
    let delta = ev
        .iter()
        .find(|(_, d)| d["type"] == "message_delta")
        .expect("message_delta");
    assert_eq!(delta.1["delta"]["stop_reason"], "tool_use");
    assert_eq!(
        ev.last().map(|(_, d)| d["type"].clone()),
        Some(json!("message_stop"))
    );
}

#[test]
fn responses_answers_function_call_items_with_arguments_as_a_json_string() {
    let server = FakeServer::start().expect("start");
    let calls = vec![
        ("exec_command", json!({"cmd": "ls"})),
        ("exec_command", json!({"cmd": "pwd"})),
    ];
    server.push(Api::OpenAiResponses, Reply::tool_uses(calls.clone()));
    let body = json_of(
        &server,
        "/v1/responses",
        &json!({"model": "gpt-5", "input": []}),
    );
    assert_eq!(body["status"], "completed");
    let output = body["output"].as_array().expect("output");
    assert_eq!(output.len(), 2, "{output:?}");
    for (item, (name, input)) in output.iter().zip(&calls) {
        assert_eq!(item["type"], "function_call");
        assert_eq!(item["name"], *name);
        let args = item["arguments"].as_str().expect("arguments string");
        assert_eq!(&serde_json::from_str::<Value>(args).expect("JSON"), input);
        assert!(
            item["call_id"]
                .as_str()
                .is_some_and(|c| c.starts_with("call_"))
        );
    }
    assert_ne!(output[0]["call_id"], output[1]["call_id"]);
}

#[test]
fn responses_streams_a_function_call_as_added_argument_deltas_done_and_completed() {
    let server = FakeServer::start().expect("start");
    let input = json!({"cmd": "printf 'print(1)\\n' > hello.py", "workdir": "/tmp/somewhere"});
    server.push(
        Api::OpenAiResponses,
        Reply::tool_use("exec_command", input.clone()),
    );
    let ev = events(
        &server,
        "/v1/responses",
        &json!({"model": "gpt-5", "stream": true, "input": []}),
    );
    let kinds: Vec<&str> = ev
        .iter()
        .map(|(_, d)| d["type"].as_str().unwrap_or_default())
        .collect();
    let deltas = kinds
        .iter()
        .filter(|k| **k == "response.function_call_arguments.delta")
        .count();
    assert!(deltas > 1, "{kinds:?}");
    let mut expected = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
    ];
    expected.extend(std::iter::repeat_n(
        "response.function_call_arguments.delta",
        deltas,
    ));
    expected.extend([
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(kinds, expected);
    let seqs: Vec<u64> = ev
        .iter()
        .map(|(_, d)| d["sequence_number"].as_u64().expect("seq"))
        .collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
    let added = &ev[2].1["item"];
    assert_eq!(
        (&added["type"], &added["name"], &added["arguments"]),
        (&json!("function_call"), &json!("exec_command"), &json!(""))
    );
    let streamed: String = ev
        .iter()
        .filter(|(_, d)| d["type"] == "response.function_call_arguments.delta")
        .map(|(_, d)| {
            assert_eq!(d["item_id"], added["id"]);
            d["delta"].as_str().expect("delta")
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&streamed).expect("JSON"),
        input
    );
    let done = &ev[kinds.len() - 2].1["item"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["call_id"], added["call_id"]);
    assert_eq!(done["arguments"].as_str(), Some(streamed.as_str()));
    let completed = &ev[kinds.len() - 1].1["response"]["output"];
    assert_eq!(completed, &json!([done]));
}

#[test]
fn gemini_answers_function_call_parts_complete_and_streamed() {
    let server = FakeServer::start().expect("start");
    let input = json!({"file_path": "hello.py", "content": "print('hi')\n"});
    server.push(Api::Gemini, Reply::tool_use("write_file", input.clone()));
    server.push(
        Api::Gemini,
        Reply::tool_use("write_file", input.clone()).with_text("Writing it now."),
    );
    let body = json_of(
        &server,
        "/v1beta/models/gemini-2.5-pro:generateContent",
        &json!({"contents": []}),
    );
    let parts = &body["candidates"][0]["content"]["parts"];
    assert_eq!(
        parts,
        &json!([{"functionCall": {"name": "write_file", "args": input}}])
    );
    assert_eq!(body["candidates"][0]["finishReason"], "STOP");

    let ev = events(
        &server,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
        &json!({"contents": []}),
    );
    let (_, last) = ev.last().expect("a chunk");
    assert_eq!(
        last["candidates"][0]["content"]["parts"],
        json!([{"functionCall": {"name": "write_file", "args": input}}])
    );
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert!(last["usageMetadata"].is_object());
    let said: String = ev[..ev.len() - 1]
        .iter()
        .map(|(_, c)| {
            c["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .expect("text")
        })
        .collect();
    assert_eq!(said, "Writing it now.");
}

#[test]
fn chat_completions_answers_tool_calls_complete_and_streamed() {
    let server = FakeServer::start().expect("start");
    let input = json!({"path": "hello.py"});
    server.push(Api::OpenAiChat, Reply::tool_use("read", input.clone()));
    server.push(Api::OpenAiChat, Reply::tool_use("read", input.clone()));
    let body = json_of(
        &server,
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "messages": []}),
    );
    let choice = &body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(
        (&call["type"], &call["function"]["name"]),
        (&json!("function"), &json!("read"))
    );
    let args = call["function"]["arguments"].as_str().expect("arguments");
    assert_eq!(serde_json::from_str::<Value>(args).expect("JSON"), input);

    let ev = events(
        &server,
        "/v1/chat/completions",
        &json!({"model": "gpt-4o", "stream": true, "messages": []}),
    );
    let calls: Vec<&Value> = ev
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(calls[0]["function"]["name"], "read");
    assert_eq!(calls[0]["type"], "function");
    assert!(
        calls[0]["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("call_"))
    );
    assert!(
        calls[1..].iter().all(|c| c.get("id").is_none()),
        "only the first chunk names the call"
    );
    let streamed: String = calls
        .iter()
        .map(|c| c["function"]["arguments"].as_str().expect("arguments"))
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&streamed).expect("JSON"),
        input
    );
    let finish: Vec<&Value> = ev
        .iter()
        .map(|(_, c)| &c["choices"][0]["finish_reason"])
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, [&json!("tool_calls")]);
}

#[test]
fn the_next_reply_answers_the_request_that_carries_the_tool_result() {
    let server = FakeServer::start().expect("start");
    server.push(Api::Anthropic, Reply::tool_use("Write", write_input()));
    server.push(Api::Anthropic, Reply::text("done"));
    let first = json_of(
        &server,
        "/v1/messages",
        &json!({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "write it"}]}),
    );
    let tool_id = first["content"][0]["id"].clone();
    let follow_up = json!({"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "write it"},
        {"role": "assistant", "content": first["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "File created"}]}]});
    let second = json_of(&server, "/v1/messages", &follow_up);
    assert_eq!(second["content"][0]["text"], "done");
    assert_eq!(second["stop_reason"], "end_turn");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].body["messages"][2]["content"][0]["tool_use_id"],
        tool_id
    );
}
