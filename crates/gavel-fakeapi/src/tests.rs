//! The fake checked with a raw HTTP client: formats, faults, recording.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use crate::{Api, FakeServer, Reply, Rule};

/// Sends one request with `Connection: close` and returns the raw response.
pub(crate) fn raw(server: &FakeServer, path: &str, body: &str) -> String {
    raw_with(server, path, &[], body)
}

/// Like [`raw`], with extra request headers.
fn raw_with(server: &FakeServer, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("write");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn sse_data(raw: &str) -> Vec<Value> {
    raw.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("event JSON"))
        .collect()
}

/// Reads one response with a `content-length` body from a connection that stays open.
fn read_response(s: &mut TcpStream) -> String {
    let mut buf = vec![0; 65536];
    let mut got = String::new();
    loop {
        if let Some((head, body)) = got.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|n| n.trim().parse::<usize>().ok())
                .expect("a content-length");
            if body.len() >= len {
                return got;
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
}

#[test]
fn anthropic_stream_has_the_real_event_sequence_and_the_answering_model() {
    let server = FakeServer::start().expect("start");
    server.push(
        Api::Anthropic,
        Reply::text("Hello from a fake model")
            .with_model("claude-haiku-9")
            .with_usage(42, 5, 7),
    );
    let out = raw(
        &server,
        "/v1/messages",
        r#"{"model":"claude-sonnet-4","stream":true,"max_tokens":10,"messages":[]}"#,
    );
    assert!(
        out.starts_with("HTTP/1.1 200")
            && out
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked"),
        "{out}"
    );
    let events = sse_data(&out);
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(types.first(), Some(&"message_start"));
    assert_eq!(types.last(), Some(&"message_stop"));
    assert_eq!(events[0]["message"]["model"], "claude-haiku-9");
    assert_eq!(events[0]["message"]["usage"]["input_tokens"], 42);
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello from a fake model");
    assert!(
        out.ends_with("0\r\n\r\n"),
        "a finished stream has the terminating chunk"
    );
    let recorded = server.requests();
    assert_eq!(
        (
            recorded[0].api,
            recorded[0].model.as_str(),
            recorded[0].streamed
        ),
        (Some(Api::Anthropic), "claude-sonnet-4", true)
    );
}

#[test]
fn gemini_openai_and_chat_answers_parse() {
    let server = FakeServer::start().expect("start");
    server.push(Api::Gemini, Reply::text("gemini says hi"));
    let out = raw(
        &server,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
        "{}",
    );
    let chunks = sse_data(&out);
    let text: String = chunks
        .iter()
        .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "gemini says hi");
    assert_eq!(
        chunks.last().map(|c| c["modelVersion"].clone()),
        Some(Value::from("gemini-2.5-pro"))
    );

    server.push(Api::OpenAiResponses, Reply::text("responses hi"));
    let out = raw(
        &server,
        "/v1/responses",
        r#"{"model":"gpt-5","stream":true}"#,
    );
    let events = sse_data(&out);
    assert_eq!(
        events.last().map(|e| e["type"].clone()),
        Some(Value::from("response.completed"))
    );
    assert_eq!(
        events
            .last()
            .map(|e| e["response"]["output"][0]["content"][0]["text"].clone()),
        Some(Value::from("responses hi"))
    );

    server.push(Api::OpenAiChat, Reply::text("chat hi"));
    let out = raw(&server, "/v1/chat/completions", r#"{"model":"gpt-4o"}"#);
    let body: Value =
        serde_json::from_str(out.split("\r\n\r\n").nth(1).unwrap_or_default()).expect("json body");
    assert_eq!(body["choices"][0]["message"]["content"], "chat hi");
}

#[test]
fn faults_look_like_the_real_ones() {
    let server = FakeServer::start().expect("start");
    server.push(
        Api::Anthropic,
        Reply::error(429, "slow down").retry_after(3),
    );
    let out = raw(&server, "/v1/messages", r#"{"model":"m"}"#);
    assert!(
        out.starts_with("HTTP/1.1 429")
            && out.contains("retry-after: 3")
            && out.contains("rate_limit_error"),
        "{out}"
    );

    server.push(Api::Anthropic, Reply::Cut { after_events: 3 });
    let out = raw(&server, "/v1/messages", r#"{"model":"m","stream":true}"#);
    assert!(
        out.contains("message_start")
            && !out.contains("message_stop")
            && !out.ends_with("0\r\n\r\n"),
        "{out}"
    );

    server.push(Api::Anthropic, Reply::Malformed);
    let out = raw(&server, "/v1/messages", r#"{"model":"m"}"#);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert!(serde_json::from_str::<Value>(body).is_err());

    let out = raw(&server, "/v1/messages", r#"{"model":"m"}"#);
    assert!(
        out.starts_with("HTTP/1.1 500") && out.contains("no reply queued"),
        "an unexpected call is loud: {out}"
    );
}

#[test]
fn a_stalled_stream_sends_nothing_more() {
    let server = FakeServer::start().expect("start");
    server.push(Api::OpenAiResponses, Reply::Stall { after_events: 2 });
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let body = r#"{"model":"m","stream":true}"#;
    s.write_all(
        format!(
            "POST /v1/responses HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .expect("write");
    let mut buf = vec![0; 65536];
    let mut got = String::new();
    loop {
        match s.read(&mut buf) {
            Ok(0) => panic!("a stall must not close the stream"),
            Ok(n) => got.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(_) => break,
        }
    }
    assert!(
        got.contains("response.in_progress") && !got.contains("response.completed"),
        "{got}"
    );
}

#[test]
fn replies_can_apply_to_one_api_key_only() {
    let server = FakeServer::start().expect("start");
    server.rule(Rule::for_key(
        Api::Anthropic,
        "key-a",
        Reply::quota_exhausted(),
    ));
    server.push(Api::Anthropic, Reply::text("for any other key"));
    let body = r#"{"model":"m"}"#;
    // The rule answers key-a every time and leaves the queue alone.
    for _ in 0..2 {
        let out = raw_with(&server, "/v1/messages", &[("x-api-key", "key-a")], body);
        assert!(out.starts_with("HTTP/1.1 429"), "{out}");
    }
    let out = raw_with(&server, "/v1/messages", &[("x-api-key", "key-b")], body);
    assert!(out.contains("for any other key"), "{out}");

    // A queued reply for one key is used by that key only, before the general queue.
    server.push_for_key(Api::OpenAiResponses, "key-o", Reply::text("for key-o"));
    let bearer = [("Authorization", "Bearer key-x")];
    let out = raw_with(&server, "/v1/responses", &bearer, body);
    assert!(out.contains("no reply queued"), "{out}");
    let bearer = [("Authorization", "Bearer key-o")];
    let out = raw_with(&server, "/v1/responses", &bearer, body);
    assert!(out.contains("for key-o"), "{out}");

    // Gemini's key travels in a header or in the query.
    let path = "/v1beta/models/g:generateContent";
    raw_with(&server, path, &[("x-goog-api-key", "key-g")], "{}");
    raw(&server, &format!("{path}?key=key-q"), "{}");
    let keys: Vec<Option<String>> = server.requests().into_iter().map(|r| r.key).collect();
    let key = |k: &str| Some(k.to_owned());
    assert_eq!(
        keys,
        [
            key("key-a"),
            key("key-a"),
            key("key-b"),
            key("key-x"),
            key("key-o"),
            key("key-g"),
            key("key-q")
        ]
    );
}

#[test]
fn an_exhausted_quota_is_each_vendors_own_429() {
    let server = FakeServer::start().expect("start");
    let body = r#"{"model":"m"}"#;
    server.push(Api::Anthropic, Reply::quota_exhausted().retry_after(4));
    let out = raw(&server, "/v1/messages", body);
    assert!(
        out.starts_with("HTTP/1.1 429")
            && out.contains("retry-after: 4")
            && out.contains(r#""type":"rate_limit_error""#),
        "{out}"
    );

    server.push(Api::Gemini, Reply::quota_exhausted().retry_after(7));
    let out = raw(
        &server,
        "/v1beta/models/gemini-2.5-pro:generateContent",
        "{}",
    );
    let json: Value =
        serde_json::from_str(out.split("\r\n\r\n").nth(1).unwrap_or_default()).expect("json");
    assert_eq!(json["error"]["status"], "RESOURCE_EXHAUSTED");
    assert_eq!(json["error"]["code"], 429);
    let details = json["error"]["details"].as_array().expect("details");
    assert!(details.iter().any(|d| {
        d["@type"]
            .as_str()
            .is_some_and(|t| t.ends_with("QuotaFailure"))
    }));
    assert!(details.iter().any(|d| d["retryDelay"] == "7s"));

    for (api, path) in [
        (Api::OpenAiResponses, "/v1/responses"),
        (Api::OpenAiChat, "/v1/chat/completions"),
    ] {
        server.push(api, Reply::quota_exhausted());
        let out = raw(&server, path, body);
        assert!(
            out.starts_with("HTTP/1.1 429") && out.contains(r#""code":"insufficient_quota""#),
            "{out}"
        );
    }
}

#[test]
fn a_cut_stream_closes_a_kept_alive_connection_mid_message() {
    let server = FakeServer::start().expect("start");
    server.push(Api::OpenAiChat, Reply::Cut { after_events: 2 });
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let body = r#"{"model":"m","stream":true}"#;
    // No `Connection: close`: only the cut may end this connection.
    s.write_all(
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .expect("write");
    let mut out = Vec::new();
    let read = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(
        read.is_ok(),
        "the connection is closed, not left open: {read:?} {out}"
    );
    assert!(
        out.contains("chat.completion.chunk")
            && !out.contains("[DONE]")
            && !out.ends_with("0\r\n\r\n"),
        "{out}"
    );
}

#[test]
fn one_connection_carries_several_requests_with_chunked_bodies() {
    let server = FakeServer::start().expect("start");
    server.push(Api::Anthropic, Reply::text("first"));
    server.push(Api::Anthropic, Reply::error(529, "Overloaded"));
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let body = r#"{"model":"claude-x"}"#;
    let chunked = format!(
        "POST /v1/messages HTTP/1.1\r\nHost: fake\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    s.write_all(chunked.as_bytes()).expect("write");
    let first = read_response(&mut s);
    assert!(
        first.starts_with("HTTP/1.1 200") && first.contains("first"),
        "{first}"
    );
    s.write_all(chunked.as_bytes()).expect("write again");
    let second = read_response(&mut s);
    assert!(
        second.starts_with("HTTP/1.1 529 Site Overloaded") && second.contains("overloaded_error"),
        "{second}"
    );
    let models: Vec<String> = server.requests().into_iter().map(|r| r.model).collect();
    assert_eq!(
        models,
        ["claude-x", "claude-x"],
        "both chunked bodies were read"
    );
}
