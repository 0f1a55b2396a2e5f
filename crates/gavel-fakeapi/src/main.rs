//! `gavel-fakeapi`: the fake vendor APIs as a program, for trying the real agent CLIs (or
//! gavel's HTTP providers) by hand without network access or keys.
//!
//! ```text
//! gavel-fakeapi [--port N] [--for-secs S] REPLIES.json
//! ```
//!
//! REPLIES.json is a list of replies, used in order per API:
//! `[{"api": "anthropic", "text": "...", "model": "other-model"},
//!   {"api": "gemini", "error": 429, "retry_after": 1},
//!   {"api": "openai-responses", "stall": 2}, {"api": "openai-chat", "cut": 3},
//!   {"api": "anthropic", "malformed": true}, {"api": "gemini", "quota": true}]`;
//! `"key": "K"` makes a reply apply only to a request made with API key K.
//! It prints its URL and serves until killed (or for `--for-secs`, default one hour).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use gavel_fakeapi::{Api, FakeServer, Reply};
use serde_json::Value;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "gavel-fakeapi: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut port, mut secs, mut file) = (0u16, 3600u64, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--port needs a number")?
            }
            "--for-secs" => {
                secs = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--for-secs needs a number")?
            }
            other => file = Some(other.to_owned()),
        }
    }
    let file = file.ok_or("usage: gavel-fakeapi [--port N] [--for-secs S] REPLIES.json")?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let replies: Vec<Value> =
        serde_json::from_str(&text).map_err(|e| format!("{file} is not a JSON list: {e}"))?;
    let server =
        FakeServer::start_on(port).map_err(|e| format!("cannot listen on port {port}: {e}"))?;
    for (i, r) in replies.iter().enumerate() {
        let (api, reply) = parse(r).map_err(|e| format!("{file}: reply #{}: {e}", i + 1))?;
        match r["key"].as_str() {
            Some(key) => server.push_for_key(api, key, reply),
            None => server.push(api, reply),
        }
    }
    let _ = writeln!(std::io::stdout(), "{}", server.url());
    let _ = std::io::stdout().flush();
    std::thread::sleep(Duration::from_secs(secs));
    Ok(())
}

fn parse(r: &Value) -> Result<(Api, Reply), String> {
    let api = match r["api"].as_str() {
        Some("anthropic") => Api::Anthropic,
        Some("gemini") => Api::Gemini,
        Some("openai-responses") => Api::OpenAiResponses,
        Some("openai-chat") => Api::OpenAiChat,
        other => {
            return Err(format!(
                "unknown api {other:?} (anthropic, gemini, openai-responses, openai-chat)"
            ));
        }
    };
    let reply = if let Some(status) = r["error"].as_u64() {
        let status = u16::try_from(status).map_err(|_| "error must be an HTTP status")?;
        let mut reply = Reply::error(status, r["message"].as_str().unwrap_or("fake error"));
        if let Some(secs) = r["retry_after"].as_u64() {
            reply = reply.retry_after(secs);
        }
        reply
    } else if let Some(n) = r["stall"].as_u64() {
        Reply::Stall {
            after_events: usize::try_from(n).unwrap_or(0),
        }
    } else if let Some(n) = r["cut"].as_u64() {
        Reply::Cut {
            after_events: usize::try_from(n).unwrap_or(0),
        }
    } else if r["quota"].as_bool() == Some(true) {
        let mut reply = Reply::quota_exhausted();
        if let Some(secs) = r["retry_after"].as_u64() {
            reply = reply.retry_after(secs);
        }
        reply
    } else if r["malformed"].as_bool() == Some(true) {
        Reply::Malformed
    } else {
        let text = r["text"]
            .as_str()
            .ok_or("a reply needs text, error, quota, stall, cut or malformed")?;
        let mut reply = Reply::text(text);
        if let Some(m) = r["model"].as_str() {
            reply = reply.with_model(m);
        }
        reply
    };
    Ok((api, reply))
}
