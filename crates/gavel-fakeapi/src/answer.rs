//! Answering one request: record it, pick the reply (a rule, the key's queue, the API's queue)
//! and turn it into the vendor's response: JSON, a server-sent event stream, or a fault.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::ext::ReasonPhrase;
use hyper::header::{CACHE_CONTROL, CONNECTION, CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::body::{Body, Chunk};
use crate::errors;
use crate::formats::{self, Answer};
use crate::github;
use crate::reply::Reply;
use crate::server::{Api, Recorded, Shared};
use crate::structured;

/// The largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The longest a stalled stream waits (unless the server stops first), so nothing outlives a
/// test.
const MAX_STALL: Duration = Duration::from_secs(600);

/// How long a cut stream waits after its last event before closing, so the events already sent
/// reach the client before the connection goes.
const CUT_GRACE: Duration = Duration::from_millis(50);

/// The parts of a request the fake looks at.
pub(crate) struct Request {
    pub method: String,
    /// The path without the query string.
    pub path: String,
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Answers one request. An error is a reply the fake GitHub was told to lose: hyper then
/// closes the connection without answering.
pub(crate) async fn respond(
    req: hyper::Request<Incoming>,
    shared: &Shared,
) -> io::Result<Response<Body>> {
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let msg = json!({"error": {"message": format!("fake api: cannot read the request body: {e}")}});
            return Ok(full(400, &[], msg.to_string()));
        }
    };
    let req = Request {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (k.as_str().to_owned(), value)
            })
            .collect(),
        body,
    };
    if github::routes::serves(&req.path) {
        return github::routes::respond(&req, shared).await;
    }
    Ok(answer(&req, shared))
}

fn classify(path: &str) -> Option<Api> {
    if path.ends_with("/messages") {
        Some(Api::Anthropic)
    } else if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
        Some(Api::Gemini)
    } else if path.ends_with("/responses") {
        Some(Api::OpenAiResponses)
    } else if path.ends_with("/chat/completions") {
        Some(Api::OpenAiChat)
    } else {
        None
    }
}

/// The API key a request carries, in whichever place its vendor puts it.
fn api_key(req: &Request) -> Option<String> {
    req.header("x-api-key")
        .or_else(|| req.header("x-goog-api-key"))
        .map(str::to_owned)
        .or_else(|| {
            req.query
                .split('&')
                .find_map(|pair| pair.strip_prefix("key="))
                .map(str::to_owned)
        })
        .or_else(|| {
            let auth = req.header("authorization")?;
            auth.strip_prefix("Bearer ")
                .or_else(|| auth.strip_prefix("bearer "))
                .map(|k| k.trim().to_owned())
        })
        .filter(|k| !k.is_empty())
}

fn answer(req: &Request, shared: &Shared) -> Response<Body> {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let api = classify(&req.path);
    let gemini_model = req
        .path
        .rsplit('/')
        .next()
        .and_then(|m| m.split(':').next())
        .unwrap_or_default();
    let model = match api {
        Some(Api::Gemini) => gemini_model.to_owned(),
        _ => body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    };
    let streamed = match api {
        Some(Api::Gemini) => req.path.contains(":streamGenerateContent"),
        _ => body.get("stream").and_then(Value::as_bool).unwrap_or(false),
    };
    let key = api_key(req);
    let ask = api.and_then(|api| structured::asked(api, &body));
    shared.lock().requests.push(Recorded {
        api,
        method: req.method.clone(),
        path: req.path.clone(),
        query: req.query.clone(),
        headers: req.headers.clone(),
        body,
        model: model.clone(),
        streamed,
        key: key.clone(),
    });

    // Token counting and model listing answer by themselves.
    if req.path.ends_with("/messages/count_tokens") {
        let n = req.body.len() as u64 / 4;
        return full(200, &[], json!({"input_tokens": n}).to_string());
    }
    if req.path.contains(":countTokens") {
        let n = req.body.len() as u64 / 4;
        return full(200, &[], json!({"totalTokens": n}).to_string());
    }
    let Some(api) = api else {
        if req.method == "GET" && req.path.ends_with("/models") {
            let list = json!({"object": "list", "data": [], "models": []});
            return full(200, &[], list.to_string());
        }
        let msg = json!({"error": {"message": format!("fake api: no such endpoint {} {}", req.method, req.path)}});
        return full(404, &[], msg.to_string());
    };
    // A server told to refuse structured output answers such a request with its 400, whatever
    // is queued.
    if let Some(ask) = &ask
        && shared.lock().refuse_schema.contains(&api)
    {
        return full(400, &[], structured::refusal_body(api, ask).to_string());
    }

    let reply = {
        let mut st = shared.lock();
        let rule = st
            .rules
            .iter()
            .find(|r| r.matches(api, &model, key.as_deref()))
            .map(|r| r.reply.clone());
        match rule {
            Some(reply) => Some(reply),
            None => {
                let keyed = key
                    .and_then(|k| st.keyed.get_mut(&(api, k)))
                    .and_then(VecDeque::pop_front);
                keyed.or_else(|| st.queues.get_mut(&api).and_then(VecDeque::pop_front))
            }
        }
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::error(
            500,
            format!("fake api: no reply queued for {api:?} (model {model})"),
        )
    });
    let id = shared.ids.fetch_add(1, Ordering::SeqCst);
    match reply {
        Reply::Error {
            status,
            message,
            retry_after,
        } => {
            let extra: Vec<_> = retry_after.map(retry_after_header).into_iter().collect();
            let body = errors::error_body(api, status, &message, retry_after);
            full(status, &extra, body.to_string())
        }
        Reply::QuotaExhausted { retry_after } => {
            let mut extra: Vec<_> = retry_after.map(retry_after_header).into_iter().collect();
            if api == Api::Anthropic {
                extra.push((
                    HeaderName::from_static("anthropic-ratelimit-requests-remaining"),
                    HeaderValue::from(0),
                ));
            }
            let body = errors::quota_body(api, &model, retry_after);
            full(429, &extra, body.to_string())
        }
        Reply::Malformed => {
            let mut resp = if streamed {
                let (tx, resp) = event_stream();
                tokio::spawn(async move {
                    let _ = tx
                        .send(Ok(Bytes::from_static(b"data: {\"this is\": not json\n\n")))
                        .await;
                });
                resp
            } else {
                full(
                    200,
                    &[],
                    Bytes::from_static(b"{\"id\": \"broken\", \"content\": ["),
                )
            };
            // Nothing more on a connection that has said something broken.
            resp.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            resp
        }
        Reply::Text {
            text,
            model: answer_model,
            input_tokens,
            output_tokens,
            cached_tokens,
            event_delay_ms,
        } => {
            let answer_model = answer_model.unwrap_or(model);
            // A forced tool's answer is a call of that tool with the text as its input.
            let forced: Vec<_> = structured::forced_call(ask.as_ref(), &text)
                .into_iter()
                .collect();
            let a = Answer {
                id,
                text: if forced.is_empty() { &text } else { "" },
                calls: &forced,
                model: &answer_model,
                input_tokens,
                output_tokens,
                cached_tokens,
            };
            success(api, &a, streamed, event_delay_ms)
        }
        Reply::ToolUse {
            calls,
            text,
            model: answer_model,
            input_tokens,
            output_tokens,
            event_delay_ms,
        } => {
            let answer_model = answer_model.unwrap_or(model);
            let a = Answer {
                id,
                text: &text,
                calls: &calls,
                model: &answer_model,
                input_tokens,
                output_tokens,
                cached_tokens: 0,
            };
            success(api, &a, streamed, event_delay_ms)
        }
        Reply::Stall { after_events } | Reply::Cut { after_events } => {
            let stall = matches!(reply, Reply::Stall { .. });
            let a = Answer {
                id,
                text: "This answer never finishes: the stream stops in the middle of it.",
                calls: &[],
                model: &model,
                input_tokens: 10,
                output_tokens: 12,
                cached_tokens: 0,
            };
            let events: Vec<String> = formats::stream_events(api, &a)
                .into_iter()
                .take(after_events)
                .collect();
            let (tx, resp) = event_stream();
            let mut stop = shared.stop.clone();
            tokio::spawn(async move {
                for event in events {
                    if tx.send(Ok(Bytes::from(event))).await.is_err() {
                        return;
                    }
                }
                if stall {
                    // Silence, with the connection open, until the server stops or the client
                    // gives up.
                    tokio::select! {
                        () = tokio::time::sleep(MAX_STALL) => {}
                        _ = stop.wait_for(|stopped| *stopped) => {}
                        () = tx.closed() => return,
                    }
                } else {
                    tokio::time::sleep(CUT_GRACE).await;
                }
                let _ = tx.send(Err(cut())).await;
            });
            resp
        }
    }
}

/// A successful answer: the complete body, or its event stream (`event_delay_ms` apart).
fn success(api: Api, a: &Answer<'_>, streamed: bool, event_delay_ms: u64) -> Response<Body> {
    if !streamed {
        return full(200, &[], formats::full_body(api, a).to_string());
    }
    let events = formats::stream_events(api, a);
    let (tx, resp) = event_stream();
    tokio::spawn(async move {
        for event in events {
            if tx.send(Ok(Bytes::from(event))).await.is_err() {
                return;
            }
            if event_delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(event_delay_ms)).await;
            }
        }
        // Dropping the sender ends the stream with its terminating chunk.
    });
    resp
}

/// The error that makes hyper close a streaming connection without its terminating chunk.
fn cut() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "fake api: stream cut mid-message",
    )
}

fn retry_after_header(secs: u64) -> (HeaderName, HeaderValue) {
    (
        HeaderName::from_static("retry-after"),
        HeaderValue::from(secs),
    )
}

/// A JSON response with a complete body (sent with `content-length`).
fn full(
    status: u16,
    extra: &[(HeaderName, HeaderValue)],
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut resp = Response::new(Body::full(body));
    set_status(&mut resp, status);
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in extra {
        headers.append(name, value.clone());
    }
    resp
}

/// A `200` server-sent event stream (sent chunked) and the sender that feeds it.
fn event_stream() -> (mpsc::Sender<Chunk>, Response<Body>) {
    let (tx, body) = Body::channel();
    let mut resp = Response::new(body);
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    (tx, resp)
}

/// Sets the status, with a reason phrase where HTTP has no standard one (Anthropic's 529).
fn set_status(resp: &mut Response<Body>, status: u16) {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    *resp.status_mut() = code;
    if code.canonical_reason().is_none() {
        let reason: &'static [u8] = match status {
            529 => b"Site Overloaded",
            _ => b"Status",
        };
        resp.extensions_mut()
            .insert(ReasonPhrase::from_static(reason));
    }
}
