//! The server: a thread per connection on 127.0.0.1, replies taken from per-API queues (or
//! persistent rules), optionally only for one API key, every request recorded.

use std::collections::VecDeque;
use std::io::{self, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::formats::{self, Answer};
use crate::http::{self, Request, Streaming};
use crate::reply::{Reply, Rule};

/// Which vendor API a request is for (decided by its path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    Anthropic,
    Gemini,
    OpenAiResponses,
    OpenAiChat,
}

/// A request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub api: Option<Api>,
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The model the request asked for.
    pub model: String,
    pub streamed: bool,
    /// The API key it was made with (`x-api-key`, `x-goog-api-key`, `?key=` or a bearer token).
    pub key: Option<String>,
}

#[derive(Default)]
struct State {
    queues: std::collections::HashMap<Api, VecDeque<Reply>>,
    /// Replies for requests made with one key, used before the general queue.
    keyed: std::collections::HashMap<(Api, String), VecDeque<Reply>>,
    rules: Vec<Rule>,
    requests: Vec<Recorded>,
}

/// A running fake; stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

/// The longest a stalled stream or the whole server waits, so nothing outlives a test.
const MAX_STALL: Duration = Duration::from_secs(600);

impl FakeServer {
    /// Starts on a free port of 127.0.0.1.
    pub fn start() -> io::Result<Self> {
        Self::start_on(0)
    }

    /// Starts on `port` of 127.0.0.1 (0: any free port).
    pub fn start_on(port: u16) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&state), Arc::clone(&stop));
        let ids = Arc::new(AtomicU64::new(1));
        thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (s, st, ids) = (Arc::clone(&s), Arc::clone(&st), Arc::clone(&ids));
                thread::spawn(move || {
                    let _ = serve(conn, &s, &st, &ids);
                });
            }
        });
        Ok(Self { addr, state, stop })
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply for the next request to `api`.
    pub fn push(&self, api: Api, reply: Reply) {
        lock(&self.state)
            .queues
            .entry(api)
            .or_default()
            .push_back(reply);
    }

    /// Queues a reply for the next request to `api` made with API key `key`.
    pub fn push_for_key(&self, api: Api, key: &str, reply: Reply) {
        lock(&self.state)
            .keyed
            .entry((api, key.to_owned()))
            .or_default()
            .push_back(reply);
    }

    /// Adds a standing rule.
    pub fn rule(&self, rule: Rule) {
        lock(&self.state).rules.push(rule);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    /// Replies still queued for `api`.
    pub fn pending(&self, api: Api) -> usize {
        lock(&self.state).queues.get(&api).map_or(0, VecDeque::len)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn classify(req: &Request) -> Option<Api> {
    let p = req.path.as_str();
    if p.ends_with("/messages") {
        Some(Api::Anthropic)
    } else if p.contains(":generateContent") || p.contains(":streamGenerateContent") {
        Some(Api::Gemini)
    } else if p.ends_with("/responses") {
        Some(Api::OpenAiResponses)
    } else if p.ends_with("/chat/completions") {
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

fn serve(
    conn: TcpStream,
    state: &Mutex<State>,
    stop: &AtomicBool,
    ids: &AtomicU64,
) -> io::Result<()> {
    let mut writer = conn.try_clone()?;
    let mut reader = BufReader::new(conn);
    while let Some(req) = http::read_request(&mut reader)? {
        let keep = handle(&req, &mut writer, state, stop, ids)?;
        let close = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        if !keep || close {
            let _ = writer.shutdown(std::net::Shutdown::Both);
            break;
        }
    }
    Ok(())
}

/// Answers one request; `false` closes the connection.
fn handle(
    req: &Request,
    out: &mut TcpStream,
    state: &Mutex<State>,
    stop: &AtomicBool,
    ids: &AtomicU64,
) -> io::Result<bool> {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let api = classify(req);
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
    lock(state).requests.push(Recorded {
        api,
        method: req.method.clone(),
        path: req.path.clone(),
        query: req.query.clone(),
        headers: req.headers.clone(),
        body: body.clone(),
        model: model.clone(),
        streamed,
        key: key.clone(),
    });

    // Token counting and model listing answer by themselves.
    if req.path.ends_with("/messages/count_tokens") {
        let n = req.body.len() as u64 / 4;
        http::write_full(
            out,
            200,
            "application/json",
            &[],
            json!({"input_tokens": n}).to_string().as_bytes(),
        )?;
        return Ok(true);
    }
    if req.path.contains(":countTokens") {
        let n = req.body.len() as u64 / 4;
        http::write_full(
            out,
            200,
            "application/json",
            &[],
            json!({"totalTokens": n}).to_string().as_bytes(),
        )?;
        return Ok(true);
    }
    let Some(api) = api else {
        if req.method == "GET" && req.path.ends_with("/models") {
            let list = json!({"object": "list", "data": [], "models": []});
            http::write_full(
                out,
                200,
                "application/json",
                &[],
                list.to_string().as_bytes(),
            )?;
            return Ok(true);
        }
        let msg = json!({"error": {"message": format!("fake api: no such endpoint {} {}", req.method, req.path)}});
        http::write_full(
            out,
            404,
            "application/json",
            &[],
            msg.to_string().as_bytes(),
        )?;
        return Ok(true);
    };

    let reply = {
        let mut st = lock(state);
        let rule = st
            .rules
            .iter()
            .find(|r| r.matches(api, &model, key.as_deref()))
            .map(|r| r.reply.clone());
        match rule {
            Some(reply) => Some(reply),
            None => {
                let keyed = key
                    .clone()
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
    let id = ids.fetch_add(1, Ordering::SeqCst);
    match reply {
        Reply::Error {
            status,
            message,
            retry_after,
        } => {
            let mut extra = Vec::new();
            if let Some(secs) = retry_after {
                extra.push(("retry-after".to_owned(), secs.to_string()));
            }
            let body = formats::error_body(api, status, &message, retry_after);
            http::write_full(
                out,
                status,
                "application/json",
                &extra,
                body.to_string().as_bytes(),
            )?;
            Ok(true)
        }
        Reply::QuotaExhausted { retry_after } => {
            let mut extra = Vec::new();
            if let Some(secs) = retry_after {
                extra.push(("retry-after".to_owned(), secs.to_string()));
            }
            if api == Api::Anthropic {
                extra.push((
                    "anthropic-ratelimit-requests-remaining".to_owned(),
                    "0".to_owned(),
                ));
            }
            let body = formats::quota_body(api, &model, retry_after);
            http::write_full(
                out,
                429,
                "application/json",
                &extra,
                body.to_string().as_bytes(),
            )?;
            Ok(true)
        }
        Reply::Malformed => {
            if streamed {
                let mut s = Streaming::start(out, "text/event-stream")?;
                s.send(b"data: {\"this is\": not json\n\n")?;
                s.finish()?;
            } else {
                http::write_full(
                    out,
                    200,
                    "application/json",
                    &[],
                    b"{\"id\": \"broken\", \"content\": [",
                )?;
            }
            Ok(false)
        }
        Reply::Text {
            text,
            model: answer_model,
            input_tokens,
            output_tokens,
            cached_tokens,
            event_delay_ms,
        } => {
            let answer_model = answer_model.unwrap_or_else(|| model.clone());
            let a = Answer {
                id,
                text: &text,
                model: &answer_model,
                input_tokens,
                output_tokens,
                cached_tokens,
            };
            if !streamed {
                let body = formats::full_body(api, &a);
                http::write_full(
                    out,
                    200,
                    "application/json",
                    &[],
                    body.to_string().as_bytes(),
                )?;
                return Ok(true);
            }
            let mut s = Streaming::start(out, "text/event-stream")?;
            for event in formats::stream_events(api, &a) {
                s.send(event.as_bytes())?;
                if event_delay_ms > 0 {
                    thread::sleep(Duration::from_millis(event_delay_ms));
                }
            }
            s.finish()?;
            Ok(true)
        }
        Reply::Stall { after_events } | Reply::Cut { after_events } => {
            let stall = matches!(reply, Reply::Stall { .. });
            let a = Answer {
                id,
                text: "This answer never finishes: the stream stops in the middle of it.",
                model: &model,
                input_tokens: 10,
                output_tokens: 12,
                cached_tokens: 0,
            };
            let mut s = Streaming::start(out, "text/event-stream")?;
            for event in formats::stream_events(api, &a)
                .into_iter()
                .take(after_events)
            {
                s.send(event.as_bytes())?;
            }
            if stall {
                let started = Instant::now();
                while started.elapsed() < MAX_STALL && !stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(50));
                }
            }
            s.cut()?;
            Ok(false)
        }
    }
}
