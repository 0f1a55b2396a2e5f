//! The box: the operating system's fence around code a model wrote or runs (agents, tests,
//! lint), with Linux namespaces and Landlock.
//!
//! An agent CLI told to edit files in its worktree may still write anywhere the person can: a
//! prompt is no fence (Claude Code in `acceptEdits` mode writes `../escape.txt` without asking),
//! and a test a model wrote is the model's code. So the operating system draws the line.
//! [`Confinement::wrap`] turns a [`ProcessSpec`] into the same spec run through a *launcher*:
//! a small process ([`launcher_main`], reached as `gavel __confine` or the `gavel-confine`
//! binary) that
//! 1. enters new mount and PID namespaces (and a network namespace with only loopback when
//!    [`Confinement::network`] is off; a user namespace first when not root), binds the
//!    [`Confinement::read_only`] paths read-only over themselves and mounts a private
//!    `/dev/shm` (`namespaces.rs`);
//! 2. restricts itself with Landlock: the whole tree can create, write, truncate, rename, link
//!    or remove files only beneath the `--write` folders and a few devices
//!    ([`ALWAYS_WRITABLE`]); reading and executing stay allowed everywhere, and a Landlocked
//!    process cannot trace (or read the memory or environment of) gavel or any process
//!    outside its domain;
//! 3. starts itself again as the namespace's init (`init.rs`), which runs the program, reaps
//!    orphans, and exits with the program: the kernel then kills every process left in the
//!    box, so nothing the step started outlives it.
//!
//! The launcher is a separate program, not a `pre_exec` hook, because the workspace denies
//! `unsafe_code`: unsharing, mounting, restricting and starting a process from a fresh process
//! are all safe calls.
//!
//! Confinement is all or nothing. A kernel that cannot enforce the write rules (no Landlock,
//! Landlock disabled, or an ABI older than [`MIN_ABI`], which cannot stop `truncate(2)`) or
//! cannot make the namespaces makes the launcher refuse with exit code [`EXIT_REFUSED`]; it
//! never runs the program unconfined. The environment is the caller's: it passes an
//! allowlisted one ([`crate::sandbox_env`]), boxed or not.

mod init;
mod launcher;
mod mounts;
mod namespaces;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use landlock::{ABI, LandlockStatus, RestrictSelf, RulesetStatus};

pub use self::launcher::{launch, launcher_main};
pub use self::mounts::TMPFS_SIZE;
use crate::process::ProcessSpec;

/// The launcher's exit code when it refuses: the kernel cannot enforce the confinement, a rule
/// cannot be built (a `--write` folder is missing), the program cannot be executed, or the
/// launcher was called wrongly. (The shell's "found but cannot execute".)
pub const EXIT_REFUSED: u8 = 126;

/// The launcher's exit code when the program to run does not exist (the shell's "not found").
pub const EXIT_NOT_FOUND: u8 = 127;

/// The oldest Landlock ABI that can confine writes: ABI 3 (Linux 6.2) is the first to handle
/// truncation (`truncate(2)` of a file outside would otherwise be allowed), and ABI 2 the first
/// to handle linking and renaming across folders. These rights are a hard requirement.
pub const MIN_ABI: u32 = 3;

/// [`MIN_ABI`] as the `landlock` crate names it.
const MIN: ABI = ABI::V3;

/// Devices beneath which writing is always allowed, because ordinary programs open them for
/// writing: `/dev/null`, `/dev/zero` and `/dev/full` (discarding output, `dd` sources and
/// sinks); `/dev/random` and `/dev/urandom` (some runtimes open them read-write to add entropy);
/// `/dev/tty` (a program talking to its controlling terminal: prompts, `git` and `ssh`
/// asking for a passphrase); `/dev/ptmx` and `/dev/pts` (programs that start others on a
/// pseudo-terminal, such as `script`, `expect` and node-pty); `/dev/shm` (POSIX shared memory
/// and semaphores: Python's `multiprocessing`, browsers that tests drive). None of them holds
/// the person's files. Missing ones are skipped.
pub const ALWAYS_WRITABLE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// The Landlock ABI whose rights the launcher handles when the kernel has them: ABI 5 adds
/// device `ioctl`s, which then are allowed only on [`ALWAYS_WRITABLE`] devices and beneath the
/// `--write` folders; ABI 6 adds the scopes, so the box can neither signal a process outside it
/// (gavel, the person's shell) nor connect to an abstract unix socket outside it. Socket files
/// are hidden by the mount namespace instead (a private `/tmp` and `/run`).
const TARGET_ABI: ABI = ABI::V6;

/// The program that confines itself and then becomes the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    /// The launcher binary: the running `gavel` (`std::env::current_exe()`) or `gavel-confine`.
    pub program: PathBuf,
    /// Arguments before the launcher's own (`["__confine"]` for `gavel`, none for
    /// `gavel-confine`).
    pub args: Vec<String>,
}

/// Where a confined process may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub launcher: Launcher,
    /// Absolute paths of folders (or single files) the process tree may write beneath: the
    /// worktree, a private temporary folder, the agent CLI's own state folder. Each must exist
    /// when the process starts, or the launcher refuses.
    pub writable: Vec<PathBuf>,
    /// Absolute paths (files or folders) bound read-only over themselves, so they stay
    /// unwritable inside a writable folder (the worktree's `.git`). Each must exist.
    pub read_only: Vec<PathBuf>,
    /// Whether the process tree may use the network. `false`: it gets a network namespace of
    /// its own with only a loopback interface.
    pub network: bool,
}

/// Why a process could not be confined (and so was not run).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfineError {
    /// The kernel cannot enforce the write rules.
    #[error("this system cannot confine an agent's writes: {reason}")]
    Unsupported { reason: String },
    /// The rules could not be built or applied (a `--write` folder is missing, say).
    #[error("cannot set up the confinement: {message}")]
    Rules { message: String },
    /// The confined program could not be executed.
    #[error("cannot run `{program}`: {source}")]
    Exec {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// The launcher's arguments are wrong.
    #[error("usage: {0}")]
    Usage(String),
}

impl ConfineError {
    /// The launcher's exit code for this error: [`EXIT_NOT_FOUND`] for a program that does not
    /// exist, [`EXIT_REFUSED`] for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                EXIT_NOT_FOUND
            }
            _ => EXIT_REFUSED,
        }
    }
}

/// The running kernel's Landlock ABI version, or [`ConfineError::Unsupported`] saying why
/// writes cannot be confined here (no Landlock, Landlock disabled, an ABI older than
/// [`MIN_ABI`]). It only asks the kernel; nothing is restricted.
pub fn support() -> Result<u32, ConfineError> {
    // Without flags and without `no_new_privs`, `apply` only probes the kernel.
    let status = RestrictSelf::default()
        .no_new_privs(false)
        .apply()
        .map_err(|e| ConfineError::Unsupported {
            reason: format!("asking the kernel for its Landlock version failed: {e}"),
        })?;
    usable_abi(status.landlock)
}

/// Builds the box for real once, around `true`, with `dir` (an existing folder) writable and
/// no network: what a step will need, checked before a run starts, so a system without
/// Landlock or namespaces (unprivileged user namespaces disabled, say) is named up front
/// instead of failing the first test run. Returns the launcher's own message on failure.
pub fn probe(launcher: &Launcher, dir: &std::path::Path) -> Result<(), ConfineError> {
    let out = std::process::Command::new(&launcher.program)
        .args(&launcher.args)
        .arg("--no-network")
        .arg("--write")
        .arg(dir)
        .args(["--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| ConfineError::Exec {
            program: launcher.program.to_string_lossy().into_owned(),
            source,
        })?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said
        .lines()
        .find_map(|l| l.strip_prefix("gavel confine: "))
        .unwrap_or("the launcher failed without saying why");
    Err(ConfineError::Unsupported {
        reason: said.to_owned(),
    })
}

impl Confinement {
    /// The same spec, run through the launcher: `program` is the launcher, `args` are the
    /// launcher's own, then `--no-network` when the network is not allowed, `--ro R` for each
    /// read-only path and `--write W` for each writable path, then `--`, the original program
    /// and its arguments. The environment, folder, stdin and timeouts are unchanged (the
    /// launcher passes them on by `exec`). A path that is not UTF-8 is passed lossily (and then
    /// names a folder that does not exist, so the launcher refuses rather than widening).
    pub fn wrap(&self, spec: &ProcessSpec) -> ProcessSpec {
        let mut args = self.launcher.args.clone();
        if !self.network {
            args.push("--no-network".to_owned());
        }
        for path in &self.read_only {
            args.push("--ro".to_owned());
            args.push(path.to_string_lossy().into_owned());
        }
        for path in &self.writable {
            args.push("--write".to_owned());
            args.push(path.to_string_lossy().into_owned());
        }
        args.push("--".to_owned());
        args.push(spec.program.to_string_lossy().into_owned());
        args.extend(spec.args.iter().cloned());
        ProcessSpec {
            program: self.launcher.program.clone(),
            args,
            ..spec.clone()
        }
    }
}

/// The ABI number of an available Landlock that can confine writes, or why not.
fn usable_abi(landlock: LandlockStatus) -> Result<u32, ConfineError> {
    let (effective, reported) = match landlock {
        LandlockStatus::NotEnabled => {
            return Err(ConfineError::Unsupported {
                reason: "the kernel has Landlock but it is not enabled (add `landlock` to the \
                         `lsm=` boot parameter)"
                    .to_owned(),
            });
        }
        LandlockStatus::NotImplemented => {
            return Err(ConfineError::Unsupported {
                reason: "the kernel has no Landlock (it needs Linux 6.2 or later built with \
                         CONFIG_SECURITY_LANDLOCK), or a seccomp filter hides it"
                    .to_owned(),
            });
        }
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => (
            effective_abi as i32,
            kernel_abi.unwrap_or(effective_abi as i32),
        ),
    };
    let version = u32::try_from(reported).unwrap_or(0);
    if u32::try_from(effective).unwrap_or(0) < MIN_ABI {
        return Err(ConfineError::Unsupported {
            reason: format!(
                "the kernel's Landlock ABI {version} is too old: confining truncation, links and \
                 renames needs ABI {MIN_ABI} (Linux 6.2)"
            ),
        });
    }
    Ok(version)
}

/// Whether an enforced ruleset confines writes well enough to run the program: the decision
/// the launcher takes on `restrict_self`'s status. Accepted: fully enforced; or partly
/// enforced on a kernel older than [`TARGET_ABI`] (only rights that kernel lacks, beyond the
/// hard-required [`MIN_ABI`] ones, were dropped). Refused: no usable Landlock, nothing
/// enforced, or a partial enforcement the kernel's ABI does not explain.
pub(crate) fn judge(landlock: LandlockStatus, ruleset: RulesetStatus) -> Result<u32, ConfineError> {
    let version = usable_abi(landlock)?;
    let effective = match landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi,
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => ABI::Unsupported,
    };
    match ruleset {
        RulesetStatus::FullyEnforced => Ok(version),
        RulesetStatus::PartiallyEnforced if effective < TARGET_ABI => Ok(version),
        RulesetStatus::PartiallyEnforced => Err(ConfineError::Unsupported {
            reason: format!(
                "the kernel enforced only part of the write rules although it has Landlock \
                 ABI {version}"
            ),
        }),
        RulesetStatus::NotEnforced => Err(ConfineError::Unsupported {
            reason: "the kernel did not enforce the write rules".to_owned(),
        }),
    }
}
