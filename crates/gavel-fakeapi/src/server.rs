//! The server handle: hyper's HTTP/1.1 server on 127.0.0.1, driven by a tokio runtime on a
//! thread of its own (so tests, sync or async, only hold a handle), with the replies it will
//! give (per-API queues, per-key queues, standing rules) and every request it has received.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::answer;
use crate::github::{self, GitHub};
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
    /// `None` for requests to no vendor API, GitHub's included.
    pub api: Option<Api>,
    pub method: String,
    /// The path without the query string.
    pub path: String,
    pub query: String,
    /// The request's headers in the order sent, names in lower case (as hyper gives them).
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The model the request asked for.
    pub model: String,
    pub streamed: bool,
    /// The API key it was made with (`x-api-key`, `x-goog-api-key`, `?key=` or a bearer token);
    /// `None` for GitHub requests, whose token is only in `headers`.
    pub key: Option<String>,
}

/// The replies to give and the requests received.
#[derive(Default)]
pub(crate) struct State {
    pub queues: HashMap<Api, VecDeque<Reply>>,
    /// Replies for requests made with one key, used before the general queue.
    pub keyed: HashMap<(Api, String), VecDeque<Reply>>,
    pub rules: Vec<Rule>,
    /// The APIs that refuse structured output (with the vendor's 400).
    pub refuse_schema: HashSet<Api>,
    pub requests: Vec<Recorded>,
    pub github: github::State,
}

/// What every connection shares.
pub(crate) struct Shared {
    pub state: Mutex<State>,
    /// Numbers the answers' ids.
    pub ids: AtomicU64,
    /// Turns `true` (or loses its sender) when the server stops; ends stalled streams.
    pub stop: watch::Receiver<bool>,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running fake; stops when dropped (its open connections are closed, stalled streams
/// included).
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

impl FakeServer {
    /// Starts on a free port of 127.0.0.1.
    pub fn start() -> io::Result<Self> {
        Self::start_on(0)
    }

    /// Starts on `port` of 127.0.0.1 (0: any free port).
    pub fn start_on(port: u16) -> io::Result<Self> {
        // Bound here, so a port in use is this call's error, not the server thread's.
        let listener = StdListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = watch::channel(false);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            ids: AtomicU64::new(1),
            stop: stopped,
        });
        let serving = Arc::clone(&shared);
        thread::Builder::new()
            .name(format!("gavel-fakeapi {addr}"))
            .spawn(move || {
                // Returns when the server stops; dropping the runtime then closes every
                // connection it still holds.
                runtime.block_on(async move {
                    if let Ok(listener) = TcpListener::from_std(listener) {
                        accept(listener, serving).await;
                    }
                });
            })?;
        Ok(Self { addr, shared, stop })
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply for the next request to `api`.
    pub fn push(&self, api: Api, reply: Reply) {
        self.shared
            .lock()
            .queues
            .entry(api)
            .or_default()
            .push_back(reply);
    }

    /// Queues a reply for the next request to `api` made with API key `key`.
    pub fn push_for_key(&self, api: Api, key: &str, reply: Reply) {
        self.shared
            .lock()
            .keyed
            .entry((api, key.to_owned()))
            .or_default()
            .push_back(reply);
    }

    /// Adds a standing rule.
    pub fn rule(&self, rule: Rule) {
        self.shared.lock().rules.push(rule);
    }

    /// From now on, every request to `api` that asks for structured output (a JSON schema for
    /// the answer) gets the vendor's real HTTP 400 refusing it, as a server or model without
    /// structured output answers; other requests are answered as usual.
    pub fn refuse_structured_output(&self, api: Api) {
        self.shared.lock().refuse_schema.insert(api);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// The fake GitHub served on the same port (tokens, repositories, issues, faults).
    pub fn github(&self) -> GitHub<'_> {
        GitHub::new(&self.shared)
    }

    /// Replies still queued for `api`.
    pub fn pending(&self, api: Api) -> usize {
        self.shared.lock().queues.get(&api).map_or(0, VecDeque::len)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// Accepts connections until the server stops, each served by hyper's HTTP/1.1 connection
/// (keep-alive, request bodies by length or chunked) in a task of its own.
async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    let mut stop = shared.stop.clone();
    loop {
        let conn = tokio::select! {
            conn = listener.accept() => conn,
            _ = stop.wait_for(|stopped| *stopped) => return,
        };
        let Ok((stream, _)) = conn else { continue };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let shared = Arc::clone(&shared);
                async move { answer::respond(req, &shared).await }
            });
            // A cut stream or a lost GitHub reply ends its connection with an error, by design.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
