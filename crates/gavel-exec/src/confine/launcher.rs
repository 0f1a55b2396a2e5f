//! The launcher's body: parse `[--no-network] [--ro PATH]... --write DIR ... -- PROGRAM ARGS...`,
//! enter the box's namespaces ([`super::namespaces`]), restrict this process with Landlock,
//! then start the box's init ([`super::init`], this same launcher with `--init`), which runs
//! PROGRAM; the launcher exits with PROGRAM's exit code once init has ended, and with it
//! every process of the step.
//!
//! It runs once for every confined step, before the program, so it reads no configuration
//! and opens no store: its arguments are all it knows. It writes to stderr only when it fails
//! (`gavel confine: ...`), and then exits with [`EXIT_REFUSED`](super::EXIT_REFUSED) or
//! [`EXIT_NOT_FOUND`](super::EXIT_NOT_FOUND) instead of running anything.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use landlock::{
    AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, Scope, path_beneath_rules,
};

use super::{ALWAYS_WRITABLE, ConfineError, MIN, TARGET_ABI, init, judge, mounts, namespaces};

/// How the launcher is called (after its own name or subcommand).
pub(crate) const USAGE: &str =
    "[--no-network] [--ro PATH]... [--write DIR]... -- PROGRAM [ARGS]...";

/// What the launcher was asked to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Invocation {
    pub(crate) writable: Vec<PathBuf>,
    /// Bound read-only over themselves (a file in a writable folder stays unwritable).
    pub(crate) read_only: Vec<PathBuf>,
    /// `false` with `--no-network`: the program gets a network namespace with only loopback.
    pub(crate) network: bool,
    /// `--init` (the launcher's own second stage): run the program as the box's init.
    pub(crate) init: bool,
    /// `--as UID:GID` (with `--init`): the person's user and group, given back to the program
    /// in a nested user namespace (see `namespaces::become_person`).
    pub(crate) person: Option<(u32, u32)>,
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
}

/// Parses `args` (those after the launcher's name), boxes and confines this process, and runs
/// the program in the box; exits with the program's exit code (128 + N when signal N ended
/// it). When boxing or starting fails it prints `gavel confine: ...` to stderr and exits 126
/// (refused) or 127 (the program does not exist).
pub fn launcher_main(args: Vec<OsString>) -> ExitCode {
    ExitCode::from(launch(&[], args))
}

/// [`launcher_main`], returning the exit code as a number, for a caller that must end the
/// process itself (`gavel __confine`, whose dispatcher does not return an `ExitCode`).
/// `prefix` is what the running program needs before the launcher's own arguments to be the
/// launcher again (`["__confine"]` for `gavel`, nothing for `gavel-confine`): the box's init
/// is this launcher started again with `--init`.
pub fn launch(prefix: &[&str], args: Vec<OsString>) -> u8 {
    let error = match parse(args) {
        Ok(invocation) => match run(prefix, invocation) {
            Ok(code) => return code,
            Err(error) => error,
        },
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

/// Reads `--write DIR` and `--ro PATH` (or `--write=DIR`, `--ro=PATH`; repeatable, absolute
/// paths), `--no-network` and `--init`, then `--`, the program and its arguments. No `--write`
/// at all is allowed: the program may then write nowhere.
pub(crate) fn parse(args: Vec<OsString>) -> Result<Invocation, ConfineError> {
    let mut args = args.into_iter();
    let mut writable = Vec::new();
    let mut read_only = Vec::new();
    let mut network = true;
    let mut init = false;
    let mut person = None;
    loop {
        let Some(arg) = args.next() else {
            return Err(ConfineError::Usage(
                "missing `--` and the program to run".to_owned(),
            ));
        };
        if arg == "--" {
            break;
        } else if arg == "--no-network" {
            network = false;
            continue;
        } else if arg == "--init" {
            init = true;
            continue;
        } else if arg == "--as" {
            let ids = args.next().unwrap_or_default();
            let parsed = ids
                .to_str()
                .and_then(|t| t.split_once(':'))
                .and_then(|(u, g)| Some((u.parse().ok()?, g.parse().ok()?)));
            person =
                Some(parsed.ok_or_else(|| {
                    ConfineError::Usage("`--as` needs UID:GID after it".to_owned())
                })?);
            continue;
        }
        let (flag, path) = if arg == "--write" || arg == "--ro" {
            let flag = if arg == "--ro" { "--ro" } else { "--write" };
            let path = args
                .next()
                .ok_or_else(|| ConfineError::Usage(format!("`{flag}` needs a path after it")))?;
            (flag, path)
        } else if let Some(rest) = arg.as_bytes().strip_prefix(b"--write=") {
            ("--write", OsStr::from_bytes(rest).to_owned())
        } else if let Some(rest) = arg.as_bytes().strip_prefix(b"--ro=") {
            ("--ro", OsStr::from_bytes(rest).to_owned())
        } else {
            return Err(ConfineError::Usage(format!(
                "unexpected argument `{}`",
                arg.to_string_lossy()
            )));
        };
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return Err(ConfineError::Usage(format!(
                "`{flag}` needs an absolute path, not `{}`",
                path.display()
            )));
        }
        if flag == "--ro" {
            read_only.push(path);
        } else {
            writable.push(path);
        }
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
        read_only,
        network,
        init,
        person,
        program,
        args: args.collect(),
    })
}

/// Boxes and confines this process, then runs the program through the box's init; returns
/// the program's exit code, or why it could not run.
fn run(prefix: &[&str], invocation: Invocation) -> Result<u8, ConfineError> {
    if invocation.init {
        // PID 1 of the box: dies with the launcher (so a killed launcher leaves no box), in a
        // session of its own without a terminal (so nothing typed into gavel's terminal comes
        // from the box), with its own /proc (gavel and the person's other processes are not in
        // it, so their environments cannot be read through it), then Landlock, then the
        // program.
        namespaces::detach()?;
        namespaces::private_proc()?;
        if let Some((uid, gid)) = invocation.person {
            namespaces::become_person(uid, gid)?;
        }
        restrict(&invocation.writable)?;
        return init::run(&invocation.program, &invocation.args);
    }
    // Ask first, so a kernel without Landlock is named as such, not as a failed rule.
    super::support()?;
    // A gavel that dies (kill -9, a closed terminal) takes the box with it: the launcher dies
    // with the thread that started it, which waits for it, and the box's init with the
    // launcher.
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).map_err(|e| {
        ConfineError::Rules {
            message: format!("cannot tie the launcher to gavel: {e}"),
        }
    })?;
    let person = namespaces::enter(invocation.network)?;
    mounts::apply(&invocation.writable, &invocation.read_only)?;
    // The box's own /tmp is writable (after the folders it was given, so a path beneath
    // /tmp given as writable is the person's folder, bound over the private one).
    let mut writable = vec![PathBuf::from("/tmp")];
    writable.extend(invocation.writable.iter().cloned());
    // This very program, by the kernel's own link to it: its path may now be hidden (a
    // launcher under /tmp, beneath the box's private /tmp).
    let me = PathBuf::from("/proc/self/exe");
    let mut again: Vec<OsString> = vec![OsString::from("--init")];
    if let Some((uid, gid)) = person {
        again.push(OsString::from("--as"));
        again.push(OsString::from(format!("{uid}:{gid}")));
    }
    for path in &writable {
        again.push(OsString::from("--write"));
        again.push(path.clone().into_os_string());
    }
    again.push(OsString::from("--"));
    again.push(invocation.program.clone());
    again.extend(invocation.args.iter().cloned());
    let status = Command::new(&me)
        .args(prefix)
        .args(&again)
        .status()
        .map_err(|source| ConfineError::Exec {
            program: me.to_string_lossy().into_owned(),
            source,
        })?;
    if let Some(code) = status.code() {
        return Ok(u8::try_from(code & 0xff).unwrap_or(u8::MAX));
    }
    // Init itself was killed (only from outside the box): end the same way.
    let signal = status.signal().unwrap_or(9);
    if let Ok(signal) = nix::sys::signal::Signal::try_from(signal) {
        let _ = nix::sys::signal::raise(signal);
    }
    Ok(128u8.saturating_add(u8::try_from(signal).unwrap_or(0)))
}

/// Restricts this process (and so everything it starts) to writing beneath
/// `writable` and [`ALWAYS_WRITABLE`]; returns the kernel's Landlock ABI.
fn restrict(writable: &[PathBuf]) -> Result<u32, ConfineError> {
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
        // ... the newer ones (device ioctls, the signal and abstract-socket scopes) are
        // enforced where the kernel has them.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(wanted)
        .map_err(refused)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
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
