//! The framing on its own (lines, the cap, what is answered) and a whole session over in-memory
//! pipes: a bad message is answered and the session goes on; the end of input ends it.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::*;
use crate::{GavelMcp, ServerConfig};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn all_lines(input: &[u8], cap: usize) -> Vec<Line> {
    let mut reader = LineReader::new(input, cap);
    let mut out = Vec::new();
    loop {
        let line = reader.next().await.expect("read");
        let end = line == Line::End;
        out.push(line);
        if end {
            return out;
        }
    }
}

#[test]
fn lines_over_the_cap_are_skipped_whole_and_the_next_line_is_read() {
    let long = "x".repeat(100);
    let input = format!("{{}}\n{long}\n{{\"a\":1}}\nlast");
    let lines = runtime().block_on(all_lines(input.as_bytes(), 16));
    assert_eq!(
        lines,
        [
            Line::Complete(b"{}".to_vec()),
            Line::Oversized,
            Line::Complete(b"{\"a\":1}".to_vec()),
            Line::Complete(b"last".to_vec()),
            Line::End,
        ]
    );
    // A line exactly at the cap is kept; one byte more is not.
    let lines = runtime().block_on(all_lines(b"0123456789abcdef\n0123456789abcdefg\n", 16));
    assert_eq!(lines[0], Line::Complete(b"0123456789abcdef".to_vec()));
    assert_eq!(lines[1], Line::Oversized);
}

#[test]
fn only_json_goes_on_and_anything_else_gets_a_parse_error() {
    assert_eq!(judge(b" {\"id\":1}\r"), Verdict::Forward(b"{\"id\":1}"));
    assert_eq!(judge(b"\xEF\xBB\xBF[1]"), Verdict::Forward(b"[1]"));
    assert_eq!(judge(b"  \r"), Verdict::Skip);
    for bad in [&b"not json"[..], b"{\"id\":1", b"\"\xff\""] {
        let Verdict::Answer(answer) = judge(bad) else {
            panic!("{bad:?} went on");
        };
        let answer: Value = serde_json::from_slice(&answer).expect("JSON");
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["jsonrpc"], "2.0");
    }
}

/// A server for an empty change folder on in-memory pipes, with a small message cap; returns
/// the client's ends (what it writes, what it reads) and the session.
fn session(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    journal: Option<std::path::PathBuf>,
    cap: usize,
) -> (
    DuplexStream,
    BufReader<DuplexStream>,
    tokio::task::JoinHandle<Result<(), crate::McpError>>,
) {
    let server = GavelMcp::new(ServerConfig {
        change_dir: dir.to_owned(),
        change_id: "add-login".into(),
        journal,
        tools: None,
    })
    .expect("server");
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_out) = tokio::io::duplex(1 << 16);
    let task = rt.spawn(crate::server::run_framed(
        server, server_in, server_out, cap,
    ));
    (client_in, BufReader::new(client_out), task)
}

async fn reply(out: &mut BufReader<DuplexStream>) -> Value {
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(60), out.read_line(&mut line))
        .await
        .expect("an answer within a minute")
        .expect("read");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

#[test]
fn a_message_that_is_not_json_or_is_too_long_is_answered_and_the_session_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let (mut input, mut output, task) = session(&rt, dir.path(), None, 1024);
    rt.block_on(async {
        input.write_all(b"this is not json\n").await.expect("send");
        let parse = reply(&mut output).await;
        assert_eq!(parse["error"]["code"], -32700, "{parse}");
        assert_eq!(parse["id"], Value::Null);

        let huge = json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"pad": "x".repeat(2000)}});
        input
            .write_all(format!("{huge}\n").as_bytes())
            .await
            .expect("send");
        let invalid = reply(&mut output).await;
        assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
        assert!(
            invalid["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("1024 bytes")),
            "{invalid}"
        );

        // The session still answers a real request.
        let answer = initialize(&mut input, &mut output).await;
        assert_eq!(answer["result"]["serverInfo"]["name"], "gavel", "{answer}");

        // The end of input ends the session.
        drop(input);
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the session ends when its input does")
            .expect("joined")
            .expect("a clean end");
    });
}

async fn send(input: &mut DuplexStream, message: Value) {
    input
        .write_all(format!("{message}\n").as_bytes())
        .await
        .expect("send");
}

/// MCP's handshake; returns the answer to `initialize`.
async fn initialize(input: &mut DuplexStream, output: &mut BufReader<DuplexStream>) -> Value {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    send(input, init).await;
    let answer = reply(output).await;
    assert_eq!(answer["id"], 1, "{answer}");
    send(
        input,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    answer
}

#[test]
fn a_failed_submit_challenge_is_an_error_result_and_leaves_no_journal_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let proposal = "# Proposal\n";
    std::fs::write(dir.path().join("proposal.md"), proposal).expect("proposal");
    std::fs::create_dir_all(dir.path().join("challenge.json/x")).expect("a folder");
    let journal = dir.path().join("mcp.jsonl");
    let rt = runtime();
    let (mut input, mut output, task) =
        session(&rt, dir.path(), Some(journal.clone()), MAX_MESSAGE_BYTES);
    rt.block_on(async {
        initialize(&mut input, &mut output).await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "submit_challenge",
            "arguments": {"verdict": "REJECTED", "findings": ["No spec."]}}});
        send(&mut input, call).await;
        let answer = reply(&mut output).await;
        assert_eq!(answer["id"], 2, "{answer}");
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        drop(input);
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the session ends")
            .expect("joined")
            .expect("a clean end");
    });
    assert_eq!(
        std::fs::read_to_string(dir.path().join("proposal.md")).expect("proposal"),
        proposal
    );
    let recorded = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!recorded.contains("submit_challenge"), "{recorded}");
}
