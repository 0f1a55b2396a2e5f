//! The launcher's body: parse `--write DIR ... -- PROGRAM ARGS...`, restrict this process with
//! Landlock, then become PROGRAM by `exec`.
//!
//! It runs once for every confined agent step, before the agent, so it reads no configuration
//! and opens no store: its arguments are all it knows. It writes to stderr only when it fails
//! (`gavel confine: ...`), and then exits with [`EXIT_REFUSED`](super::EXIT_REFUSED) or
//! [`EXIT_NOT_FOUND`](super::EXIT_NOT_FOUND) instead of running anything.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use landlock::{
    AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, path_beneath_rules,
};

use super::{ALWAYS_WRITABLE, ConfineError, MIN, TARGET_ABI, judge};

/// How the launcher is called (after its own name or subcommand).
pub(crate) const USAGE: &str = "--write DIR [--write DIR]... -- PROGRAM [ARGS]...";

/// What the launcher was asked to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Invocation {
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
}

/// Parses `args` (those after the launcher's name), confines this process to writing beneath
/// the `--write` paths, and replaces it with the program. Returns only when that fails, after
/// printing `gavel confine: ...` to stderr: exit code 126 when confining (or executing) was
/// refused, 127 when the program does not exist.
pub fn launcher_main(args: Vec<OsString>) -> ExitCode {
    ExitCode::from(launch(args))
}

/// [`launcher_main`], returning the exit code as a number, for a caller that must end the
/// process itself (`gavel __confine`, whose dispatcher does not return an `ExitCode`).
pub fn launch(args: Vec<OsString>) -> u8 {
    let error = match parse(args) {
        Ok(invocation) => run(invocation),
        Err(error) => error,
    };
    let mut message = format!("gavel confine: {error}");
    if let ConfineError::Exec { source, program } = &error
        && source.kind() == std::io::ErrorKind::NotFound
    {
        message = format!("gavel confine: `{program}` not found (not a file, nor on PATH)");
    }
    if matches!(error, ConfineError::Usage(_)) {
        message.push_str(&format!("\ngavel confine: expected {USAGE}"));
    }
    // Nothing else can be done if stderr is gone; the exit code still says it.
    let _ = writeln!(std::io::stderr().lock(), "{message}");
    error.exit_code()
}

/// Reads `--write DIR` (or `--write=DIR`, repeatable, absolute paths), then `--`, the program
/// and its arguments. No `--write` at all is allowed: the program may then write nowhere.
pub(crate) fn parse(args: Vec<OsString>) -> Result<Invocation, ConfineError> {
    let mut args = args.into_iter();
    let mut writable = Vec::new();
    loop {
        let Some(arg) = args.next() else {
            return Err(ConfineError::Usage(
                "missing `--` and the program to run".to_owned(),
            ));
        };
        let path = if arg == "--" {
            break;
        } else if arg == "--write" {
            args.next().ok_or_else(|| {
                ConfineError::Usage("`--write` needs a folder after it".to_owned())
            })?
        } else if let Some(rest) = arg.as_bytes().strip_prefix(b"--write=") {
            OsStr::from_bytes(rest).to_owned()
        } else {
            return Err(ConfineError::Usage(format!(
                "unexpected argument `{}`",
                arg.to_string_lossy()
            )));
        };
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return Err(ConfineError::Usage(format!(
                "`--write` needs an absolute path, not `{}`",
                path.display()
            )));
        }
        writable.push(path);
    }
    let program = match args.next() {
        Some(program) if !program.is_empty() => program,
        _ => {
            return Err(ConfineError::Usage(
                "no program to run after `--`".to_owned(),
            ));
        }
    };
    Ok(Invocation {
        writable,
        program,
        args: args.collect(),
    })
}

/// Confines this process, then becomes the program; returns why either failed.
fn run(invocation: Invocation) -> ConfineError {
    if let Err(error) = restrict(&invocation.writable) {
        return error;
    }
    let source = Command::new(&invocation.program)
        .args(&invocation.args)
        .exec();
    ConfineError::Exec {
        program: invocation.program.to_string_lossy().into_owned(),
        source,
    }
}

/// Restricts this process (and so everything it will become or start) to writing beneath
/// `writable` and [`ALWAYS_WRITABLE`]; returns the kernel's Landlock ABI.
fn restrict(writable: &[PathBuf]) -> Result<u32, ConfineError> {
    // Ask first, so a kernel without Landlock is named as such, not as a failed rule.
    super::support()?;
    let required = AccessFs::from_write(MIN);
    let wanted = AccessFs::from_write(TARGET_ABI);
    let refused = |e: RulesetError| ConfineError::Unsupported {
        reason: e.to_string(),
    };
    let mut ruleset = Ruleset::default()
        // The rights of MIN_ABI must be enforced, or nothing runs ...
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(required)
        .map_err(refused)?
        // ... the newer ones (device ioctls) are enforced where the kernel has them.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(wanted)
        .map_err(refused)?
        .create()
        .map_err(refused)?;
    for path in writable {
        let meta = std::fs::metadata(path).map_err(|e| ConfineError::Rules {
            message: format!("the writable path {} cannot be used: {e}", path.display()),
        })?;
        let fd = PathFd::new(path).map_err(|e| ConfineError::Rules {
            message: e.to_string(),
        })?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights(wanted, meta.is_dir())))
            .map_err(rule_error)?;
    }
    // The devices every program may write; missing ones are skipped, and files get only the
    // rights a file can have.
    ruleset = ruleset
        .add_rules(path_beneath_rules(ALWAYS_WRITABLE, wanted))
        .map_err(rule_error)?;
    let status = ruleset.restrict_self().map_err(refused)?;
    judge(status.landlock, status.ruleset)
}

/// `wanted`, narrowed to what a rule on a file (not a folder) can grant.
fn rights(wanted: BitFlags<AccessFs>, is_dir: bool) -> BitFlags<AccessFs> {
    if is_dir {
        wanted
    } else {
        wanted & AccessFs::from_file(TARGET_ABI)
    }
}

fn rule_error(e: RulesetError) -> ConfineError {
    ConfineError::Rules {
        message: e.to_string(),
    }
}
