//! The real local model the end-to-end tests talk to (issue 35): SmolLM2-135M-Instruct run by
//! llama.cpp (node-llama-cpp's prebuilt CPU build) behind the OpenAI Chat Completions wire
//! (`tests/local-model/server.mjs`), provisioned outside the checkout by
//! `tools/local-model/provision` (a missing piece that cannot be installed fails the test with
//! its reason, never skips it). [`LocalModel`] starts one server per test; this module also
//! checks the server speaks the wire as OpenAI does, so a workflow test that fails points at
//! gavel, not at the fixture.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

/// The name the server answers to (any other model name gets OpenAI's 404).
pub const MODEL: &str = "smollm2-135m-instruct";

/// Where the provisioning script put node-llama-cpp and the GGUF.
struct Provisioned {
    node_modules: PathBuf,
    model: PathBuf,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `tools/local-model/provision` once per test binary (it installs under a lock and
/// downloads nothing the second time), panicking with its output when it fails.
fn provisioned() -> &'static Provisioned {
    static ONCE: OnceLock<Provisioned> = OnceLock::new();
    ONCE.get_or_init(|| {
        let script = repo_root().join("tools/local-model/provision");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "the local model could not be provisioned ({}):\n{}\n{}",
            script.display(),
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        let field = |name: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("provision printed no {name}= line:\n{stdout}"))
        };
        Provisioned {
            node_modules: field("node_modules"),
            model: field("model"),
        }
    })
}

/// How to start the server.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Answer any `response_format` with OpenAI's 400 for a model without structured outputs.
    pub refuse_response_format: bool,
}

/// A running fixture server with the real model; stopped when dropped.
pub struct LocalModel {
    child: Child,
    /// Held open: the server exits when it closes (also when this process dies).
    _stdin: ChildStdin,
    pub port: u16,
    dir: TempDir,
}

impl LocalModel {
    /// A server with the default options.
    pub fn start() -> Self {
        Self::start_with(Options::default())
    }

    pub fn start_with(options: Options) -> Self {
        let p = provisioned();
        let dir = tempfile::Builder::new()
            .prefix("gavel-local-model-")
            .tempdir()
            .expect("tempdir");
        let stderr = std::fs::File::create(dir.path().join("stderr")).expect("stderr file");
        let mut cmd = Command::new("node");
        cmd.arg(repo_root().join("crates/gavel-cli/tests/local-model/server.mjs"))
            .arg("--node-modules")
            .arg(&p.node_modules)
            .arg("--model")
            .arg(&p.model)
            .args(["--name", MODEL])
            .arg("--request-log")
            .arg(dir.path().join("requests.jsonl"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        if options.refuse_response_format {
            cmd.arg("--refuse-response-format");
        }
        let mut child = cmd
            .spawn()
            .expect("cannot start node (is Node.js installed?)");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        // The port comes once the model is loaded; a server that dies says why on stderr.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let got = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            drop(tx.send(got));
        });
        let line = rx.recv_timeout(Duration::from_secs(120));
        let port = match &line {
            Ok(Ok(l)) => l.trim().strip_prefix("port=").and_then(|p| p.parse().ok()),
            _ => None,
        };
        let Some(port) = port else {
            drop(child.kill());
            drop(child.wait());
            panic!(
                "the local model server did not start ({line:?}):\n{}",
                std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default()
            );
        };
        Self {
            child,
            _stdin: stdin,
            port,
            dir,
        }
    }

    /// The provider string gavel is configured with.
    pub fn provider(&self) -> String {
        format!(
            "openai-compatible:{MODEL}@http://127.0.0.1:{}/v1",
            self.port
        )
    }

    /// The requests the server answered so far, in order (see the server's `--request-log`).
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("request log line"))
            .collect()
    }

    /// A request to the server: (status, body), the body de-chunked.
    pub fn http(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
        http(self.port, method, path, body)
    }
}

impl Drop for LocalModel {
    fn drop(&mut self) {
        drop(self.child.kill());
        drop(self.child.wait());
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`).
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let raw = String::from_utf8(raw).expect("UTF-8 answer");
    let (head, rest) = raw.split_once("\r\n\r\n").expect("headers");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    (status, if chunked { dechunk(rest) } else { rest.into() })
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, tail) = rest.split_once("\r\n").expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&tail[..size]);
        rest = &tail[size + 2..];
    }
}

/// The data lines of a server-sent event stream.
fn events(body: &str) -> Vec<&str> {
    body.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .collect()
}

/// The verdict grammar's JSON form (crates/gavel-workflows/src/verdict.rs).
fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["APPROVED", "REVISE", "BLOCK"]},
            "findings": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["verdict", "findings"],
        "additionalProperties": false
    })
}

fn ask(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "model": MODEL,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
    })
}

/// A review question the model answers with complete JSON under the grammar (greedy sampling:
/// the same answer every time; other wordings send it round a finding until the token cap).
const REVIEW: &str = "Is this issue draft ready to file? Answer with a verdict (APPROVED, REVISE or BLOCK) and a list of findings.\n\n# Add dark mode\n\n## Why\nToo bright at night.\n";

#[test]
fn the_local_model_streams_as_openai_does_with_usage_last_and_done() {
    let server = LocalModel::start();
    let mut body = ask("Say hello in three words.", 24);
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
    let (status, text) = server.http("POST", "/v1/chat/completions", Some(&body));
    assert_eq!(status, 200, "{text}");
    let data = events(&text);
    assert_eq!(data.last(), Some(&"[DONE]"), "{text}");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).expect("JSON chunk"))
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert!(
        !content.trim().is_empty(),
        "the model said something: {text}"
    );
    // Then the finishing chunk, then the usage chunk with no choices; every other chunk has
    // `usage: null`, as OpenAI sends them with include_usage.
    let [.., finish, usage] = chunks.as_slice() else {
        panic!("too few chunks: {text}");
    };
    assert!(
        matches!(
            finish["choices"][0]["finish_reason"].as_str(),
            Some("stop" | "length")
        ),
        "{text}"
    );
    assert_eq!(usage["choices"], json!([]), "{text}");
    let (prompt, completion) = (
        usage["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        usage["usage"]["completion_tokens"].as_u64().unwrap_or(0),
    );
    assert!(prompt > 5 && (1..=24).contains(&completion), "{usage}");
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c["usage"].is_null())
    );
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["model"], MODEL);
    // Without include_usage there is no usage chunk.
    body["stream_options"] = json!({"include_usage": false});
    let (_, text) = server.http("POST", "/v1/chat/completions", Some(&body));
    assert!(!text.contains("\"usage\""), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
}

#[test]
fn the_local_model_follows_a_json_schema_by_grammar() {
    let server = LocalModel::start();
    let mut body = ask(REVIEW, 96);
    body["response_format"] = json!({
        "type": "json_schema",
        "json_schema": {"name": "gavel_verdict", "strict": true, "schema": verdict_schema()}
    });
    let (status, text) = server.http("POST", "/v1/chat/completions", Some(&body));
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).expect("a chat.completion");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop", "{text}");
    let content = answer["choices"][0]["message"]["content"]
        .as_str()
        .expect("content");
    let verdict: Value = serde_json::from_str(content)
        .unwrap_or_else(|e| panic!("the grammar makes the answer JSON ({e}): {content}"));
    assert!(
        ["APPROVED", "REVISE", "BLOCK"].contains(&verdict["verdict"].as_str().unwrap_or("")),
        "{verdict}"
    );
    assert!(verdict["findings"].is_array(), "{verdict}");
    assert_eq!(
        verdict.as_object().map(|o| o.len()),
        Some(2),
        "no other members: {verdict}"
    );
    assert!(answer["usage"]["completion_tokens"].as_u64().unwrap_or(0) > 0);
}

#[test]
fn a_refusing_local_model_answers_response_format_with_openais_400() {
    let server = LocalModel::start_with(Options {
        refuse_response_format: true,
    });
    let mut body = ask(REVIEW, 8);
    body["response_format"] = json!({
        "type": "json_schema",
        "json_schema": {"name": "gavel_verdict", "schema": verdict_schema()}
    });
    let (status, text) = server.http("POST", "/v1/chat/completions", Some(&body));
    assert_eq!(status, 400, "{text}");
    let error: Value = serde_json::from_str(&text).expect("JSON error");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert_eq!(error["error"]["param"], "response_format");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("'response_format' of type 'json_schema' is not supported")),
        "{text}"
    );
    // The same question asked plain is answered.
    let (status, text) = server.http("POST", "/v1/chat/completions", Some(&ask(REVIEW, 8)));
    assert_eq!(status, 200, "{text}");
    let log = server.requests();
    assert_eq!(
        log.iter().map(|r| r["status"].as_u64()).collect::<Vec<_>>(),
        [Some(400), Some(200)]
    );
    assert_eq!(log[0]["response_format"], "json_schema");
}

#[test]
fn the_local_model_lists_itself_and_refuses_other_models_and_routes_as_openai_does() {
    let server = LocalModel::start();
    let (status, text) = server.http("GET", "/v1/models", None);
    assert_eq!(status, 200, "{text}");
    let list: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(list["object"], "list");
    assert_eq!(list["data"][0]["id"], MODEL);
    let mut other = ask("hi", 4);
    other["model"] = json!("gpt-5");
    let (status, text) = server.http("POST", "/v1/chat/completions", Some(&other));
    assert_eq!(status, 404, "{text}");
    assert!(text.contains("\"code\":\"model_not_found\""), "{text}");
    let (status, text) = server.http("POST", "/v1/responses", Some(&ask("hi", 4)));
    assert_eq!(status, 404, "{text}");
    assert!(text.contains("Invalid URL (POST /v1/responses)"), "{text}");
    let mut empty = ask("hi", 4);
    empty["messages"] = json!([]);
    let (status, text) = server.http("POST", "/v1/chat/completions", Some(&empty));
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("'messages'"), "{text}");
}

/// The server's log path, for a test's failure message.
pub fn describe(server: &LocalModel) -> String {
    format!(
        "requests: {:#?}\nserver stderr: {}",
        server.requests(),
        std::fs::read_to_string(Path::new(server.dir.path()).join("stderr")).unwrap_or_default()
    )
}
