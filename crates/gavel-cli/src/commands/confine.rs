//! `gavel __confine --write DIR ... -- PROGRAM ARGS...` (hidden): the launcher that confines an
//! agent's process tree with Landlock, so an installed `gavel` is its own launcher
//! (`std::env::current_exe()` with `["__confine"]`, see `gavel_exec::confine`).
//!
//! It runs before every confined agent step, so it reads no gavel.toml and opens no store: the
//! arguments go to the launcher, which checks them, restricts this process and becomes
//! PROGRAM. It returns only on failure, with the launcher's exit code (126 refused, 127 program
//! not found), as the `gavel-confine` binary does; only a command line clap cannot parse (no
//! `--` before the program) ends earlier, with gavel's usage code 2.

use std::ffi::OsString;

use clap::Args;

use crate::error::CliError;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct ConfineArgs {
    /// An absolute folder (or file) the program and everything it starts may write beneath;
    /// repeatable. With none, nothing may be written.
    #[arg(long, value_name = "DIR")]
    pub write: Vec<OsString>,
    /// The program to run and its arguments, after `--`.
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    pub command: Vec<OsString>,
}

pub fn cmd_confine(args: ConfineArgs) -> Result<Exit, CliError> {
    // clap has checked the shape (`--` before the program); the launcher checks the rest and
    // reports it the same way as `gavel-confine` does.
    let mut raw = Vec::with_capacity(args.write.len() * 2 + args.command.len() + 1);
    for dir in args.write {
        raw.push(OsString::from("--write"));
        raw.push(dir);
    }
    raw.push(OsString::from("--"));
    raw.extend(args.command);
    let code = gavel_exec::confine::launch(raw);
    // Only reached when confining or executing failed; the launcher has said why on stderr.
    std::process::exit(i32::from(code))
}
