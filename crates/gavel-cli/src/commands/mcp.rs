//! `gavel mcp --change-dir DIR [--change-id ID] [--journal PATH]`: gavel's MCP server over
//! stdio, which a reviewer agent is given for one call to submit its structured review
//! (see `gavel_mcp`).
//!
//! An agent CLI starts it, so it reads no gavel.toml and opens no store: stdout carries only the
//! MCP protocol, and logs go to stderr (`GAVEL_LOG` sets the level; `warn` by default).

use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The change folder the tools may write in (REVIEW.md, proposal.md, challenge.json).
    #[arg(long, value_name = "DIR")]
    pub change_dir: PathBuf,
    /// The change's id (default: the folder's name).
    #[arg(long, value_name = "ID")]
    pub change_id: Option<String>,
    /// Record each tool call here by request id, so a repeated call is answered from the record.
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
    /// Serve only this tool (repeatable; default: all three).
    #[arg(long = "tool", value_name = "NAME")]
    pub tools: Vec<String>,
}

pub fn cmd_mcp(args: McpArgs) -> Result<Exit, CliError> {
    log_to_stderr();
    let absolute = |p: PathBuf| -> Result<PathBuf, CliError> {
        if p.is_absolute() {
            return Ok(p);
        }
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::from_error(&e).hint("run it from an existing folder"))?;
        Ok(cwd.join(p))
    };
    let change_dir = absolute(args.change_dir)?;
    let change_id = match args.change_id {
        Some(id) => {
            // The id names the folder: a server for one change never writes as another.
            gavel_workflows::change::check_folder_id(&change_dir, &id).map_err(|e| {
                CliError::usage(e.to_string()).hint("--change-id must be the change folder's name")
            })?;
            id
        }
        None => change_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| CliError::usage("give --change-id: the folder has no name"))?,
    };
    let journal = args.journal.map(absolute).transpose()?;
    let config = gavel_mcp::ServerConfig {
        change_dir,
        change_id,
        journal,
        tools: (!args.tools.is_empty()).then_some(args.tools),
    };
    gavel_mcp::serve_stdio(config).map_err(|e| {
        let err = CliError::from_error(&e);
        match e {
            gavel_mcp::McpError::InvalidChangeId(_) | gavel_mcp::McpError::UnknownTool(_) => {
                err.with_exit(Exit::Usage)
            }
            gavel_mcp::McpError::Symlink(_) => {
                err.hint("pass the change folder itself, not a symbolic link to it")
            }
            _ => err,
        }
    })?;
    Ok(Exit::Success)
}

/// Tracing to stderr: stdout belongs to the protocol.
fn log_to_stderr() {
    let level = std::env::var("GAVEL_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::WARN);
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(level)
        .finish();
    let _ = tracing::subscriber::set_global_default(subscriber);
}
