//! The line framing in front of rmcp's stdio transport, so that a message gavel cannot take is
//! answered instead of dropped.
//!
//! rmcp 3.11 reads newline-delimited JSON itself, but drops a line over its size limit, and a
//! line that is not JSON, without a word to the client (the SDKs chose silence, rust-sdk #938):
//! an agent whose message was lost waits for an answer that never comes. So gavel reads stdin
//! itself, one line at a time, never holding more than the cap of one line
//! ([`MAX_MESSAGE_BYTES`]); a line over the cap is answered with JSON-RPC 2.0's Invalid
//! Request (-32600) and one that is not JSON with its Parse error (-32700), both with a null
//! id, as JSON-RPC says when the id cannot be read. Every other line goes on to rmcp
//! unchanged, which keeps the protocol (and answers well-formed JSON that is no message).
//! One task owns stdout, so an answer of ours never lands inside one of rmcp's.
//!
//! The end of stdin is the end of rmcp's input: the session ends whatever a call is doing.
//! Nothing here names rmcp; [`serve_framed`] hands the session a pair of in-memory pipes.

use std::future::Future;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The most bytes one incoming message may have (its line, without the newline). A review or
/// a challenge is some kilobytes; a client sending more is refused, not buffered.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The buffer of each in-memory pipe between the framing and rmcp.
const PIPE_BYTES: usize = 64 * 1024;

/// JSON-RPC 2.0's code for input that is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0's code for a message that is not a valid request (here: too long to read).
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// One step of reading stdin.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line, without its newline (a last line without one counts too).
    Complete(Vec<u8>),
    /// A line longer than the cap; none of it was kept, the rest of it is skipped.
    Oversized,
    /// The input is closed.
    End,
}

/// Reads lines, never holding more than `cap` bytes of one.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    cap: usize,
    line: Vec<u8>,
    /// Skipping the rest of a line already answered as too long.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(read: R, cap: usize) -> Self {
        Self {
            read: BufReader::new(read),
            cap,
            line: Vec::new(),
            discarding: false,
        }
    }

    pub(crate) async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                self.discarding = false;
                if self.line.is_empty() {
                    return Ok(Line::End);
                }
                return Ok(Line::Complete(std::mem::take(&mut self.line)));
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            let used = newline.map_or(available.len(), |i| i + 1);
            let outcome = if self.discarding {
                self.discarding = newline.is_none();
                None
            } else if self.line.len().saturating_add(chunk.len()) > self.cap {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(Line::Oversized)
            } else {
                self.line.extend_from_slice(chunk);
                newline.map(|_| Line::Complete(std::mem::take(&mut self.line)))
            };
            self.read.consume(used);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }
}

/// What to do with one line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict<'a> {
    /// JSON: rmcp's to read (without a byte order mark or surrounding blanks).
    Forward(&'a [u8]),
    /// A blank line: nothing to answer.
    Skip,
    /// Not JSON: this answer goes back.
    Answer(Vec<u8>),
}

/// Judges one line: JSON goes on, anything else is answered with a parse error.
pub(crate) fn judge(line: &[u8]) -> Verdict<'_> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.trim_ascii();
    if line.is_empty() {
        return Verdict::Skip;
    }
    let why = match std::str::from_utf8(line) {
        // Skipping a string does not check its UTF-8; the text as a whole is checked first.
        Err(e) => format!("it is not UTF-8: {e}"),
        Ok(text) => match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => return Verdict::Forward(line),
            Err(e) => e.to_string(),
        },
    };
    Verdict::Answer(error_reply(
        PARSE_ERROR,
        &format!("Parse error: the message is not JSON ({why})"),
    ))
}

/// A JSON-RPC error response with a null id, as one line.
pub(crate) fn error_reply(code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// Runs `session` on a pair of pipes (what it reads, where it writes) between `input` and
/// `output`, with the framing above in between; returns what the session returns, once its
/// output is written out.
pub(crate) async fn serve_framed<I, O, F, Fut, T>(input: I, output: O, cap: usize, session: F) -> T
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(DuplexStream, DuplexStream) -> Fut,
    Fut: Future<Output = T>,
{
    let (to_session, session_in) = tokio::io::duplex(PIPE_BYTES);
    let (session_out, from_session) = tokio::io::duplex(PIPE_BYTES);
    let (lines_tx, lines_rx) = mpsc::channel::<Vec<u8>>(16);
    let writer = tokio::spawn(write_out(lines_rx, output));
    let pump = tokio::spawn(pump_out(from_session, lines_tx.clone()));
    let reader = tokio::spawn(read_in(input, to_session, lines_tx, cap));
    let result = session(session_in, session_out).await;
    // The session is over: a read still waiting on stdin has nothing left to feed.
    reader.abort();
    // Both end once the session's end of its output pipe is gone and all is written.
    let _ = pump.await;
    let _ = writer.await;
    result
}

/// stdin to the session, line by line; bad lines answered on `answers`.
async fn read_in<I: AsyncRead + Unpin>(
    input: I,
    mut to_session: DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
    cap: usize,
) {
    let mut lines = LineReader::new(input, cap);
    loop {
        let answer = match lines.next().await {
            Ok(Line::Complete(line)) => match judge(&line) {
                Verdict::Forward(message) => {
                    let sent = async {
                        to_session.write_all(message).await?;
                        to_session.write_all(b"\n").await
                    };
                    if sent.await.is_err() {
                        break;
                    }
                    continue;
                }
                Verdict::Skip => continue,
                Verdict::Answer(answer) => {
                    tracing::warn!("answered a message that is not JSON with a parse error");
                    answer
                }
            },
            Ok(Line::Oversized) => {
                tracing::warn!(cap, "answered a message over the size limit");
                error_reply(
                    INVALID_REQUEST,
                    &format!("Invalid Request: the message is longer than {cap} bytes"),
                )
            }
            Ok(Line::End) => break,
            Err(e) => {
                tracing::warn!(error = %e, "could not read stdin");
                break;
            }
        };
        if answers.send(answer).await.is_err() {
            break;
        }
    }
    // Closing the pipe is the end of the session's input.
    let _ = to_session.shutdown().await;
}

/// The session's output, a whole line at a time, to the writer.
async fn pump_out(from_session: DuplexStream, lines: mpsc::Sender<Vec<u8>>) {
    let mut from_session = BufReader::new(from_session);
    loop {
        let mut line = Vec::new();
        match from_session.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if lines.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The one writer of `output`.
async fn write_out<O: AsyncWrite + Unpin>(mut lines: mpsc::Receiver<Vec<u8>>, mut output: O) {
    while let Some(line) = lines.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
