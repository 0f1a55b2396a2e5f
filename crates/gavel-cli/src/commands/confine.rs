//! `gavel __confine [--no-network] [--ro PATH]... --write DIR ... -- PROGRAM ARGS...` (hidden):
//! the launcher that boxes an agent's or a test's process tree (namespaces and Landlock), so an
//! installed `gavel` is its own launcher (`std::env::current_exe()` with `["__confine"]`, see
//! `gavel_exec::confine`).
//!
//! It runs before every boxed step, so it reads no gavel.toml and opens no store: the
//! arguments go to the launcher, which checks them, boxes this process and runs PROGRAM in the
//! box (through `gavel __confine --init`, the box's init). It exits with PROGRAM's exit code,
//! or the launcher's own (126 refused, 127 program not found), as the `gavel-confine` binary
//! does; only a command line clap cannot parse (no `--` before the program) ends earlier, with
//! gavel's usage code 2.

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
    /// An absolute path bound read-only over itself (it stays unwritable inside a writable
    /// folder); repeatable.
    #[arg(long, value_name = "PATH")]
    pub ro: Vec<OsString>,
    /// No network: only a loopback interface of the box's own.
    #[arg(long)]
    pub no_network: bool,
    /// The launcher's second stage: run PROGRAM as the box's init.
    #[arg(long, hide = true)]
    pub init: bool,
    /// With `--init`: the person's UID:GID, given back to PROGRAM.
    #[arg(long = "as", hide = true, value_name = "UID:GID")]
    pub person: Option<OsString>,
    /// The program to run and its arguments, after `--`.
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    pub command: Vec<OsString>,
}

pub fn cmd_confine(args: ConfineArgs) -> Result<Exit, CliError> {
    // clap has checked the shape (`--` before the program); the launcher checks the rest and
    // reports it the same way as `gavel-confine` does.
    let mut raw = Vec::with_capacity(args.write.len() * 2 + args.command.len() + 4);
    if args.no_network {
        raw.push(OsString::from("--no-network"));
    }
    if args.init {
        raw.push(OsString::from("--init"));
    }
    if let Some(ids) = args.person {
        raw.push(OsString::from("--as"));
        raw.push(ids);
    }
    for path in args.ro {
        raw.push(OsString::from("--ro"));
        raw.push(path);
    }
    for dir in args.write {
        raw.push(OsString::from("--write"));
        raw.push(dir);
    }
    raw.push(OsString::from("--"));
    raw.extend(args.command);
    let code = gavel_exec::confine::launch(&["__confine"], raw);
    // The program's exit code, or the launcher's refusal (it has said why on stderr).
    std::process::exit(i32::from(code))
}
