//! gavel's MCP server: the tools a reviewer agent (Claude Code, Codex) calls to hand in its
//! structured review, served over stdio with the official Rust SDK `rmcp`.
//!
//! gavel starts `gavel mcp --change-dir DIR` for one agent call; the agent submits its verdict
//! through `create_review` or `submit_challenge`, and gavel reads what the tool wrote
//! ([`read_review`]) instead of grepping the agent's prose. The server writes only inside the
//! one change folder it was given, under file names it chooses itself; with a journal, a
//! repeated tool call (same MCP request id) returns its recorded result without writing again.
//!
//! rmcp churns by major versions, so every rmcp type stays in [`server`]; the tool logic
//! ([`review`], [`challenge`], [`change`]) is plain Rust over a [`ChangeDir`].

mod challenge;
mod change;
mod framing;
mod fsafe;
mod journal;
mod review;
mod server;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use challenge::{Challenge, ChallengeVerdict};
pub use change::ChangeInfo;
pub use framing::MAX_MESSAGE_BYTES;
pub use fsafe::{ChangeDir, MAX_FILE_BYTES, validate_change_id};
pub use journal::Journal;
pub use review::{Issue, Review, ReviewVerdict, Severity, TestResults, read_review};
pub use server::GavelMcp;

/// What one server may touch.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The one change folder the server may write in (absolute).
    pub change_dir: PathBuf,
    /// The change's id (`[a-z0-9-]`, at most 64 characters).
    pub change_id: String,
    /// Where tool calls are recorded by request id (a JSON lines file, which must lie inside
    /// the change folder: [`Journal::inside`]).
    pub journal: Option<PathBuf>,
    /// Serve only these tools (`None`: all three). A reviewer is given `create_review` alone.
    pub tools: Option<Vec<String>>,
}

/// Why the server, or one of its tools, could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the change folder must be an absolute path: {0}")]
    RelativeChangeDir(PathBuf),
    #[error("refusing a symbolic link: {0}")]
    Symlink(PathBuf),
    #[error("not a folder: {0}")]
    NotADir(PathBuf),
    #[error("invalid change id {0:?}: use a-z, 0-9 and '-', at most 64 characters")]
    InvalidChangeId(String),
    #[error("unknown tool {0:?}: the tools are create_review, submit_challenge and get_change")]
    UnknownTool(String),
    #[error("{path} is a {kind}, not a regular file: gavel reads only regular files")]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("{path} is larger than {cap} bytes, the most gavel reads of one file")]
    TooLarge { path: PathBuf, cap: u64 },
    #[error(
        "refusing the journal {given}: it must be a file inside the change folder {root} \
         (an absolute path, in a folder that exists, without `..` or a symbolic link out)"
    )]
    JournalOutside { given: PathBuf, root: PathBuf },
    #[error("{0} not found in the change folder")]
    Missing(&'static str),
    #[error("could not {action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} holds no structured review")]
    NoReviewData { path: PathBuf },
    #[error("{path}: the front matter's verdict {front} differs from the review's {data}")]
    VerdictMismatch {
        path: PathBuf,
        front: String,
        data: String,
    },
    #[error("could not parse the review in {path}")]
    ReviewJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("could not read the journal {path}")]
    Journal {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("could not start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// Serves the tools over stdin/stdout until the client closes stdin (blocking: runs a tokio
/// current-thread runtime), and returns then even if a call is still running. Nothing but the
/// protocol goes to stdout; a message over [`MAX_MESSAGE_BYTES`] or one that is not JSON is
/// answered with a JSON-RPC error.
pub fn serve_stdio(config: ServerConfig) -> Result<(), McpError> {
    let server = GavelMcp::new(config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    let served = runtime.block_on(server::run_stdio(server));
    // A call still running (file work cannot be interrupted) or a read of stdin still waiting
    // must not keep the process alive once the session is over.
    runtime.shutdown_background();
    served
}
