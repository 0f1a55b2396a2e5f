//! `gavel-fakeapi`: the fake vendor APIs and the fake GitHub as a program, for trying the real
//! agent CLIs, `curl`, or gavel's HTTP providers and issue filing by hand without network
//! access or keys.
//!
//! ```text
//! gavel-fakeapi [--port N] [--for-secs S] [--github GITHUB.json] [REPLIES.json]
//! ```
//!
//! REPLIES.json is a list of replies, used in order per API:
//! `[{"api": "anthropic", "text": "...", "model": "other-model"},
//!   {"api": "gemini", "error": 429, "retry_after": 1},
//!   {"api": "openai-responses", "stall": 2}, {"api": "openai-chat", "cut": 3},
//!   {"api": "anthropic", "malformed": true}, {"api": "gemini", "quota": true}]`;
//! `"key": "K"` makes a reply apply only to a request made with API key K.
//! `{"api": "openai-chat", "refuse_schema": true}` is no reply but a standing setting: that
//! API answers every request asking for structured output with the vendor's real 400.
//!
//! A tool-use turn, in which the model calls the client's tools (the client runs them and
//! sends the results in its next request, answered by the next reply), names one tool with its
//! input, or several, optionally after some text:
//! `{"api": "anthropic", "tool": "Write", "input": {"file_path": "/tmp/x/hello.py",
//! "content": "print('hi')\n"}}`,
//! `{"api": "openai-responses", "tools": [{"name": "exec_command", "input": {"cmd": "ls"}}],
//! "text": "Looking first."}`.
//! REPLIES.json may be left out when `--github` is given.
//!
//! GITHUB.json sets up the fake GitHub served on the same port:
//!
//! ```json
//! {"tokens": [{"token": "t", "login": "octo", "scopes": "repo, read:org"},
//!             {"token": "fg", "login": "octo"}],
//!  "repos": [{"full_name": "octo/app", "private": false, "has_issues": true,
//!             "archived": false, "permission": "admin", "labels": ["bug"]}],
//!  "faults": [{"on": "POST /repos/octo/app/issues", "status": 502, "message": "Bad Gateway",
//!              "times": 1},
//!             {"on": "POST /issues", "lost": true}, {"slow_ms": 3000},
//!             {"rate_limit_reset_in": 2}, {"secondary_retry_after": 1}]}
//! ```
//!
//! A token without `scopes` is a fine-grained one. A repository's fields other than
//! `full_name` are optional (public, issues on, not archived, `admin`); `permission` is one of
//! `none`, `read`, `triage`, `write`, `maintain`, `admin`. A fault applies to the requests
//! its `on` names (`"METHOD /path-part"`, `"METHOD"` or `"/path-part"`; all when left out),
//! `times` times (default 1), in the order listed: `status` (with `message` and `errors`) is an
//! error answer, `rate_limit_reset_in` the primary rate limit, `secondary_retry_after` a
//! secondary one, `lost` does the work and closes the connection without a reply, `slow_ms`
//! does the work and waits before replying. Then, for example:
//!
//! ```text
//! curl -H "Authorization: Bearer t" http://127.0.0.1:PORT/repos/octo/app/issues
//! curl -H "Authorization: Bearer t" -d '{"title":"Crash"}' \
//!      http://127.0.0.1:PORT/api/v3/repos/octo/app/issues
//! ```
//!
//! It prints its URL and serves until killed (or for `--for-secs`, default one hour).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use gavel_fakeapi::{Api, FakeRepo, FakeServer, Fault, FaultKind, GitHub, Permission, Reply};
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
    let (mut port, mut secs, mut file, mut github) = (0u16, 3600u64, None, None);
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
            "--github" => github = Some(args.next().ok_or("--github needs a file")?),
            other => file = Some(other.to_owned()),
        }
    }
    if file.is_none() && github.is_none() {
        return Err(
            "usage: gavel-fakeapi [--port N] [--for-secs S] [--github GITHUB.json] [REPLIES.json]"
                .into(),
        );
    }
    let replies: Vec<Value> = match &file {
        Some(file) => serde_json::from_str(&read(file)?)
            .map_err(|e| format!("{file} is not a JSON list: {e}"))?,
        None => Vec::new(),
    };
    let setup: Option<Value> = match &github {
        Some(file) => Some(
            serde_json::from_str(&read(file)?).map_err(|e| format!("{file} is not JSON: {e}"))?,
        ),
        None => None,
    };
    let server =
        FakeServer::start_on(port).map_err(|e| format!("cannot listen on port {port}: {e}"))?;
    if let (Some(setup), Some(name)) = (&setup, &github) {
        load_github(&server.github(), setup).map_err(|e| format!("{name}: {e}"))?;
    }
    let file = file.unwrap_or_default();
    load_replies(&server, &replies).map_err(|e| format!("{file}: {e}"))?;
    let _ = writeln!(std::io::stdout(), "{}", server.url());
    let _ = std::io::stdout().flush();
    std::thread::sleep(Duration::from_secs(secs));
    Ok(())
}

/// Queues the replies of a REPLIES.json list (and applies its standing settings).
fn load_replies(server: &FakeServer, replies: &[Value]) -> Result<(), String> {
    for (i, r) in replies.iter().enumerate() {
        let at = |e: String| format!("reply #{}: {e}", i + 1);
        if r["refuse_schema"].as_bool() == Some(true) {
            server.refuse_structured_output(parse_api(r).map_err(at)?);
            continue;
        }
        let (api, reply) = parse(r).map_err(at)?;
        match r["key"].as_str() {
            Some(key) => server.push_for_key(api, key, reply),
            None => server.push(api, reply),
        }
    }
    Ok(())
}

fn read(file: &str) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))
}

/// Sets up the fake GitHub from a GITHUB.json document (see the module docs).
fn load_github(gh: &GitHub<'_>, setup: &Value) -> Result<(), String> {
    let list = |name: &str| match &setup[name] {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => Ok(items.clone()),
        _ => Err(format!("\"{name}\" must be a list")),
    };
    for (i, t) in list("tokens")?.iter().enumerate() {
        let (Some(token), Some(login)) = (t["token"].as_str(), t["login"].as_str()) else {
            return Err(format!("token #{}: needs \"token\" and \"login\"", i + 1));
        };
        gh.add_token(token, login, t["scopes"].as_str());
    }
    for (i, r) in list("repos")?.iter().enumerate() {
        let repo = parse_repo(r).map_err(|e| format!("repo #{}: {e}", i + 1))?;
        let name = repo.full_name.clone();
        gh.add_repo(repo);
        for label in r["labels"].as_array().into_iter().flatten() {
            let label = label
                .as_str()
                .ok_or_else(|| format!("repo #{}: labels are names", i + 1))?;
            gh.add_label(&name, label);
        }
    }
    for (i, f) in list("faults")?.iter().enumerate() {
        gh.fault(parse_fault(f).map_err(|e| format!("fault #{}: {e}", i + 1))?);
    }
    Ok(())
}

fn parse_repo(r: &Value) -> Result<FakeRepo, String> {
    let name = r["full_name"]
        .as_str()
        .filter(|n| {
            n.split_once('/')
                .is_some_and(|(o, n)| !o.is_empty() && !n.is_empty())
        })
        .ok_or("needs \"full_name\": \"owner/name\"")?;
    let flag = |key: &str, default: bool| r[key].as_bool().unwrap_or(default);
    let permission = match r["permission"].as_str() {
        None => Permission::Admin,
        Some(p) => Permission::parse(p).ok_or_else(|| {
            format!("unknown permission {p:?} (none, read, triage, write, maintain, admin)")
        })?,
    };
    Ok(FakeRepo {
        private: flag("private", false),
        has_issues: flag("has_issues", true),
        archived: flag("archived", false),
        permission,
        ..FakeRepo::new(name)
    })
}

fn parse_fault(f: &Value) -> Result<Fault, String> {
    let secs = |key: &str| f[key].as_u64();
    let kind = if let Some(status) = secs("status") {
        FaultKind::Status {
            status: u16::try_from(status).map_err(|_| "status must be an HTTP status")?,
            message: f["message"].as_str().unwrap_or("Server Error").to_owned(),
            errors: Some(f["errors"].clone()).filter(|e| !e.is_null()),
        }
    } else if let Some(reset_in_secs) = secs("rate_limit_reset_in") {
        FaultKind::RateLimit { reset_in_secs }
    } else if let Some(retry_after_secs) = secs("secondary_retry_after") {
        FaultKind::SecondaryRateLimit { retry_after_secs }
    } else if f["lost"].as_bool() == Some(true) {
        FaultKind::Lost
    } else if let Some(millis) = secs("slow_ms") {
        FaultKind::Slow { millis }
    } else {
        return Err(
            "needs status, rate_limit_reset_in, secondary_retry_after, lost or slow_ms".into(),
        );
    };
    let mut fault = Fault::new(kind);
    if let Some(on) = f["on"].as_str() {
        fault = match on.trim().split_once(' ') {
            Some((method, path)) => fault.on(method, path.trim()),
            None if on.starts_with('/') => fault.on("", on),
            None => fault.on(on, ""),
        };
    }
    if let Some(times) = f["times"].as_u64() {
        fault = fault.times(usize::try_from(times).map_err(|_| "times is too large")?);
    }
    Ok(fault)
}

fn parse_api(r: &Value) -> Result<Api, String> {
    match r["api"].as_str() {
        Some("anthropic") => Ok(Api::Anthropic),
        Some("gemini") => Ok(Api::Gemini),
        Some("openai-responses") => Ok(Api::OpenAiResponses),
        Some("openai-chat") => Ok(Api::OpenAiChat),
        other => Err(format!(
            "unknown api {other:?} (anthropic, gemini, openai-responses, openai-chat)"
        )),
    }
}

fn parse(r: &Value) -> Result<(Api, Reply), String> {
    let api = parse_api(r)?;
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
    } else if r.get("tool").is_some() || r.get("tools").is_some() {
        let mut reply = Reply::tool_uses(tool_calls(r)?);
        if let Some(text) = r["text"].as_str() {
            reply = reply.with_text(text);
        }
        if let Some(m) = r["model"].as_str() {
            reply = reply.with_model(m);
        }
        reply
    } else {
        let text = r["text"]
            .as_str()
            .ok_or("a reply needs text, tool, tools, error, quota, stall, cut or malformed")?;
        let mut reply = Reply::text(text);
        if let Some(m) = r["model"].as_str() {
            reply = reply.with_model(m);
        }
        reply
    };
    Ok((api, reply))
}

/// The calls of a tool-use reply: `"tool"` with `"input"`, or `"tools"`, a list of `"name"`
/// and `"input"`.
fn tool_calls(r: &Value) -> Result<Vec<(&str, Value)>, String> {
    fn call<'a>(name: &'a Value, input: &Value) -> Result<(&'a str, Value), String> {
        let name = name.as_str().ok_or("a tool's name is a string")?;
        match input {
            Value::Object(_) => Ok((name, input.clone())),
            Value::Null => Ok((name, Value::Object(serde_json::Map::new()))),
            _ => Err(format!("tool {name}: \"input\" must be a JSON object")),
        }
    }
    if let Some(name) = r.get("tool") {
        return Ok(vec![call(name, &r["input"])?]);
    }
    let calls = r["tools"].as_array().ok_or("\"tools\" must be a list")?;
    if calls.is_empty() {
        return Err("\"tools\" lists no tool".into());
    }
    calls
        .iter()
        .map(|c| call(&c["name"], &c["input"]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_github_file_sets_up_tokens_repositories_labels_and_faults() {
        let setup: Value = serde_json::from_str(
            r#"{"tokens": [{"token": "t", "login": "octo", "scopes": "repo"}],
                "repos": [{"full_name": "octo/app", "private": true, "permission": "triage",
                           "labels": ["bug", "docs"]}],
                "faults": [{"on": "POST /repos/octo/app/issues", "status": 502,
                            "message": "Bad Gateway", "times": 2},
                           {"lost": true, "on": "POST"}, {"slow_ms": 3000},
                           {"rate_limit_reset_in": 2}, {"secondary_retry_after": 1}]}"#,
        )
        .expect("JSON");
        let server = FakeServer::start().expect("start");
        let gh = server.github();
        load_github(&gh, &setup).expect("loads");
        let labels: Vec<String> = gh.labels("octo/app").into_iter().map(|l| l.name).collect();
        assert_eq!(labels, ["bug", "docs"]);

        let faults = setup["faults"].as_array().expect("faults");
        let first = parse_fault(&faults[0]).expect("fault");
        assert_eq!(first.method.as_deref(), Some("POST"));
        assert_eq!(
            first.path_contains.as_deref(),
            Some("/repos/octo/app/issues")
        );
        assert_eq!(first.times, 2);
        assert_eq!(first.kind, FaultKind::status(502, "Bad Gateway"));
        let lost = parse_fault(&faults[1]).expect("fault");
        assert_eq!(
            (lost.method.as_deref(), lost.path_contains),
            (Some("POST"), None)
        );
        assert_eq!(lost.kind, FaultKind::Lost);
        assert_eq!(
            parse_fault(&faults[2]).map(|f| f.kind),
            Ok(FaultKind::Slow { millis: 3000 })
        );
        assert_eq!(
            parse_fault(&faults[3]).map(|f| f.kind),
            Ok(FaultKind::RateLimit { reset_in_secs: 2 })
        );
        assert_eq!(
            parse_fault(&faults[4]).map(|f| f.kind),
            Ok(FaultKind::SecondaryRateLimit {
                retry_after_secs: 1
            })
        );
        let repo = parse_repo(&setup["repos"][0]).expect("repo");
        assert!(repo.private && repo.has_issues && !repo.archived);
        assert_eq!(repo.permission, Permission::Triage);
    }

    #[test]
    fn a_tool_use_reply_names_its_tools_and_their_input() {
        let reply = |text: &str| parse(&serde_json::from_str(text).expect("JSON"));
        let input = serde_json::json!({"file_path": "/tmp/x/hello.py", "content": "hi\n"});
        assert_eq!(
            reply(
                r#"{"api": "anthropic", "tool": "Write", "input": {"file_path": "/tmp/x/hello.py", "content": "hi\n"}}"#
            ),
            Ok((Api::Anthropic, Reply::tool_use("Write", input)))
        );
        assert_eq!(
            reply(
                r#"{"api": "openai-responses", "text": "Looking.", "tools": [
                    {"name": "exec_command", "input": {"cmd": "ls"}}, {"name": "list"}]}"#
            ),
            Ok((
                Api::OpenAiResponses,
                Reply::tool_uses(vec![
                    ("exec_command", serde_json::json!({"cmd": "ls"})),
                    ("list", serde_json::json!({})),
                ])
                .with_text("Looking.")
            ))
        );
        let bad = |text: &str| reply(text).expect_err("refused");
        assert!(bad(r#"{"api": "anthropic", "tool": "Write", "input": "x"}"#).contains("object"));
        assert!(bad(r#"{"api": "anthropic", "tools": []}"#).contains("no tool"));
        assert!(bad(r#"{"api": "anthropic", "tool": 3}"#).contains("name"));
    }

    #[test]
    fn refuse_schema_is_a_standing_setting_not_a_reply() {
        let server = FakeServer::start().expect("start");
        let replies: Vec<Value> = serde_json::from_str(
            r#"[{"api": "openai-chat", "refuse_schema": true}, {"api": "openai-chat", "text": "hi"}]"#,
        )
        .expect("JSON");
        load_replies(&server, &replies).expect("loads");
        assert_eq!(server.pending(Api::OpenAiChat), 1);
        let asked = serde_json::json!({"model": "m", "messages": [],
            "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {}}}});
        let answer = reqwest::blocking::Client::new()
            .post(format!("{}/v1/chat/completions", server.url()))
            .json(&asked)
            .send()
            .expect("answered");
        assert_eq!(answer.status(), 400);
        let bad: Vec<Value> =
            serde_json::from_str(r#"[{"api": "nope", "refuse_schema": true}]"#).expect("JSON");
        let err = load_replies(&server, &bad).expect_err("refused");
        assert!(err.contains("reply #1") && err.contains("nope"), "{err}");
    }

    #[test]
    fn a_bad_github_file_says_what_is_wrong() {
        let server = FakeServer::start().expect("start");
        let bad = |text: &str| {
            let setup: Value = serde_json::from_str(text).expect("JSON");
            load_github(&server.github(), &setup).expect_err("refused")
        };
        assert!(bad(r#"{"repos": [{"full_name": "no-slash"}]}"#).contains("repo #1"));
        assert!(bad(r#"{"repos": [{"full_name": "o/r", "permission": "god"}]}"#).contains("god"));
        assert!(bad(r#"{"tokens": [{"token": "t"}]}"#).contains("login"));
        assert!(bad(r#"{"faults": [{"on": "GET"}]}"#).contains("fault #1"));
        assert!(bad(r#"{"faults": {}}"#).contains("faults"));
    }
}
