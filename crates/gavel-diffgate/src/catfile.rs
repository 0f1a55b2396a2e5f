//! Counting the lines of many blobs through ONE `git cat-file --batch --buffer` process: a
//! writer thread feeds object ids while a reader thread streams each blob in fixed-size chunks
//! and counts its newlines, never holding a blob in memory (a 500 MB diff costs one 64 KiB
//! buffer). Requests are made while `git diff` is still computing its numstat, so the two git
//! processes work at the same time.
//!
//! Blobs are requested by object id (taken from the raw diff section), not as `HEAD:<path>`.
//! git 2.47 does support `cat-file --batch -Z` (NUL-terminated requests and answers), which
//! would make `HEAD:<path>` safe for any name, but object ids are the more robust choice:
//! * they are the exact blobs the diff compared, so a `HEAD` that moves between the two git
//!   calls cannot make the counts disagree with the numstat;
//! * they are hex, so no name (newline, leading `./`, `:`) can be misread, and `-Z` is not
//!   needed (it only arrived in 2023; 2.38's `-z` made only the input NUL-terminated, leaving a
//!   `missing` answer for a name with a newline unparsable): any git with `--batch` works;
//! * the old side of a rename comes for free (the raw entry names the old blob);
//! * identical blobs are read once.

use gavel_exec::git::Git;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::Stdio;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;

use crate::DiffGateError;
use crate::git::{self, Running};

/// The size of the read buffer: the most blob content held in memory at once.
const CHUNK: usize = 64 * 1024;

const ARGS: &[&str] = &["cat-file", "--batch", "--buffer"];

/// A running `git cat-file --batch` that counts the lines of the blobs it is asked for while
/// the caller goes on with other work (reading the rest of the diff).
pub(crate) struct LineCounter {
    requests: Option<Sender<(String, String)>>,
    writer: JoinHandle<std::io::Result<()>>,
    reader: JoinHandle<Result<HashMap<String, u64>, DiffGateError>>,
    running: Running,
}

impl LineCounter {
    /// Starts `git cat-file --batch --buffer` in `repo`.
    pub(crate) fn start(repo: &Git) -> Result<Self, DiffGateError> {
        let command = git::describe(ARGS);
        let mut cmd = git::command(repo, ARGS);
        cmd.stdin(Stdio::piped());
        let mut running = Running::spawn(cmd, command.clone(), repo.root())?;
        let child = running.child();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            running.stop();
            return Err(DiffGateError::UnexpectedOutput {
                command,
                detail: "git's pipes were not opened".to_owned(),
            });
        };
        let (requests, incoming) = mpsc::channel::<(String, String)>();
        let (expect, expected) = mpsc::channel::<(String, String)>();
        let writer = std::thread::spawn(move || feed(&incoming, &expect, stdin));
        let reader = std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(CHUNK, stdout);
            let mut counts = HashMap::new();
            // One answer per request, in order; the channel closes after the last request.
            for (oid, path) in expected {
                let lines = read_one(&mut reader, &oid, &path, &command)?;
                counts.insert(oid, lines);
            }
            Ok(counts)
            // On an error the pipe is dropped here: cat-file and the writer stop on EPIPE.
        });
        Ok(Self {
            requests: Some(requests),
            writer,
            reader,
            running,
        })
    }

    /// Asks for the line count of blob `oid` (named `path` in errors). Each id must be asked
    /// for once. A failure shows up in [`finish`](Self::finish).
    pub(crate) fn request(&self, oid: &str, path: String) {
        if let Some(requests) = &self.requests {
            let _ = requests.send((oid.to_owned(), path));
        }
    }

    /// Waits for every requested count.
    pub(crate) fn finish(mut self) -> Result<HashMap<String, u64>, DiffGateError> {
        self.requests.take(); // the writer sends its last requests and closes git's stdin
        let command = self.running.command.clone();
        let panicked = |what: &str| DiffGateError::GitIo {
            command: command.clone(),
            source: std::io::Error::other(format!("the thread {what} git cat-file panicked")),
        };
        let written = self.writer.join().map_err(|_| panicked("feeding"))?;
        let counts = self.reader.join().map_err(|_| panicked("reading"))?;
        // The reader's error explains a failed write or exit better than they do themselves.
        let counts = match counts {
            Ok(counts) => counts,
            Err(err) => {
                self.running.stop();
                return Err(err);
            }
        };
        self.running.finish()?;
        written.map_err(|source| DiffGateError::GitIo { command, source })?;
        Ok(counts)
    }

    /// Stops git and the threads without waiting for the counts.
    pub(crate) fn abort(mut self) {
        self.requests.take();
        self.running.stop();
        let _ = self.writer.join();
        let _ = self.reader.join();
    }
}

/// The writer thread: sends each request to git, flushing whenever no more requests are
/// waiting so git never sits idle on a half-full buffer, and tells the reader what to expect.
fn feed(
    incoming: &Receiver<(String, String)>,
    expect: &Sender<(String, String)>,
    stdin: std::process::ChildStdin,
) -> std::io::Result<()> {
    let mut stdin = BufWriter::with_capacity(CHUNK, stdin);
    loop {
        let request = match incoming.try_recv() {
            Ok(request) => request,
            Err(TryRecvError::Empty) => {
                stdin.flush()?;
                match incoming.recv() {
                    Ok(request) => request,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        stdin.write_all(request.0.as_bytes())?;
        stdin.write_all(b"\n")?;
        if expect.send(request).is_err() {
            // The reader stopped on an error; it reports it.
            return Ok(());
        }
    }
    stdin.flush()
    // Dropping stdin closes the pipe: cat-file flushes its answers and exits.
}

/// Reads one `<oid> <type> <size>\n<content>\n` answer and returns the content's line count.
fn read_one(
    reader: &mut impl BufRead,
    oid: &str,
    path: &str,
    command: &str,
) -> Result<u64, DiffGateError> {
    let io = |source| DiffGateError::GitIo {
        command: command.to_owned(),
        source,
    };
    let unexpected = |detail: String| DiffGateError::UnexpectedOutput {
        command: command.to_owned(),
        detail,
    };
    let mut header = Vec::with_capacity(128);
    // An answer header is short; a limit keeps a confused stream from filling memory.
    reader
        .by_ref()
        .take(512)
        .read_until(b'\n', &mut header)
        .map_err(io)?;
    if header.pop() != Some(b'\n') {
        return Err(unexpected(format!("no answer for object {oid}")));
    }
    let header = String::from_utf8_lossy(&header);
    let fields: Vec<&str> = header.split(' ').collect();
    match fields[..] {
        [got, "missing"] if got == oid => Err(DiffGateError::MissingObject {
            path: path.to_owned(),
            oid: oid.to_owned(),
        }),
        [got, "blob", size] if got == oid => {
            let size: u64 = size
                .parse()
                .map_err(|_| unexpected(format!("bad size in {header:?}")))?;
            let lines = count_stream(reader, size).map_err(io)?;
            let mut newline = [0u8; 1];
            reader.read_exact(&mut newline).map_err(io)?;
            if newline != *b"\n" {
                return Err(unexpected(format!(
                    "object {oid} is not followed by a newline"
                )));
            }
            Ok(lines)
        }
        _ => Err(unexpected(format!(
            "expected blob {oid} (for {path}), got {header:?}"
        ))),
    }
}

/// Counts the lines in the next `size` bytes of `reader`, a final line without a newline
/// included, consuming them chunk by chunk.
fn count_stream(reader: &mut impl BufRead, size: u64) -> std::io::Result<u64> {
    let mut remaining = size;
    let mut lines = 0u64;
    let mut last = b'\n';
    while remaining > 0 {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let take = buf
            .len()
            .min(usize::try_from(remaining).unwrap_or(usize::MAX));
        let chunk = &buf[..take];
        lines += count_newlines(chunk);
        if let Some(&b) = chunk.last() {
            last = b;
        }
        reader.consume(take);
        remaining -= take as u64;
    }
    if last != b'\n' {
        lines += 1;
    }
    Ok(lines)
}

fn count_newlines(chunk: &[u8]) -> u64 {
    // Written so the compiler vectorises it; a u64 per byte would be slower.
    let mut total = 0u64;
    for block in chunk.chunks(255) {
        let mut n = 0u8;
        for &b in block {
            n += u8::from(b == b'\n');
        }
        total += u64::from(n);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8]) -> u64 {
        let mut reader = BufReader::with_capacity(3, text);
        count_stream(&mut reader, text.len() as u64).unwrap()
    }

    #[test]
    fn counts_a_last_line_without_newline() {
        assert_eq!(lines(b""), 0);
        assert_eq!(lines(b"a"), 1);
        assert_eq!(lines(b"a\n"), 1);
        assert_eq!(lines(b"a\nb"), 2);
        assert_eq!(lines(b"\n\n\n"), 3);
        let big = "x\n".repeat(1000);
        assert_eq!(lines(big.as_bytes()), 1000);
    }

    #[test]
    fn reads_batch_answers() {
        let oid = "a".repeat(40);
        let answer = format!("{oid} blob 3\na\nb\n{oid} missing\n");
        let mut reader = BufReader::with_capacity(2, answer.as_bytes());
        assert_eq!(read_one(&mut reader, &oid, "p", "git").unwrap(), 2);
        let err = read_one(&mut reader, &oid, "p", "git").unwrap_err();
        assert!(matches!(err, DiffGateError::MissingObject { .. }));
    }

    #[test]
    fn truncated_blob_is_an_error() {
        let oid = "b".repeat(40);
        let answer = format!("{oid} blob 10\nab");
        let mut reader = BufReader::new(answer.as_bytes());
        assert!(read_one(&mut reader, &oid, "p", "git").is_err());
    }
}
