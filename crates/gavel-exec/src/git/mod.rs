//! The one way gavel runs git: the real `git` binary, in a known repository, with a scrubbed
//! environment.
//!
//! gavel uses the `git` program rather than a library so hooks, signing and configuration
//! behave exactly as they do for the person. What it does not inherit is anything that would
//! point git at another repository, index, work tree or object store ([`SCRUBBED_ENV`]): gavel
//! started from a git hook (where git sets `GIT_DIR` and `GIT_INDEX_FILE`) must still read and
//! commit the repository it was asked about. Every command also gets `GIT_TERMINAL_PROMPT=0`
//! (nothing prompts) and `LC_ALL=C` (messages gavel reads are not translated).
//!
//! Every file in git's own formats (the index, objects, refs, config, a worktree's `.git`
//! pointer) is written by git, and every question about them (what is tracked, ignored or
//! configured, which commit `HEAD` names) is answered by git: those formats change between git
//! versions and repository setups (split and sparse indexes, index v4, SHA-256, filters,
//! attributes), and keeping a copy of git's rules in step would be a maintenance cost no
//! saving of a millisecond pays for (ARCHITECTURE.md, "git"). gavel only looks for a `.git`
//! to find a repository without a process ([`Git::discover`]).
//!
//! On top of that runner:
//! - commits made by workflows are idempotent: each carries a `Gavel-Step:` trailer, and a
//!   commit whose trailer is already in the history is not made again (a replay after a crash
//!   between committing and journaling) ([`Git::commit_paths`]);
//! - worktrees are named by the workflow (the run's key), so adding one twice returns the same
//!   worktree ([`Git::worktree_add`], `worktree.rs`);
//! - a worktree's files can be recorded as a tree id and restored from it without touching the
//!   real index ([`Git::snapshot`], [`Git::reset_to`], `snapshot.rs`);
//! - a long-lived git process (the diff gate's `diff` and `cat-file --batch`) is a
//!   [`GitProcess`] (`child.rs`).

mod child;
mod commit;
#[cfg(test)]
mod kept_tests;
#[cfg(test)]
mod linked_tests;
mod recorded;
mod remote;
mod snapshot;
mod spare;
#[cfg(test)]
mod spare_tests;
mod survey;
#[cfg(test)]
mod survey_tests;
#[cfg(test)]
mod tests;
mod worktree;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

pub use self::child::GitProcess;
pub use self::commit::PriorAttempt;
pub use self::snapshot::{ChangeKind, TreeChange, TreeId};
pub use self::survey::{Listing, Scratch, Survey, Undecodable};
pub use self::worktree::{BRANCH_PREFIX, DEFAULT_WORKTREE_HOME, Worktree};
use crate::process::capped::Capped;

/// Variables removed from every git command's environment. They would point git at another
/// repository, index, work tree or object store than the one gavel names (for example when
/// gavel runs inside a git hook), run an external diff program, or change how pathspecs are
/// read (gavel passes literal paths and `:(top,literal)` pathspecs).
pub const SCRUBBED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
];

/// How much of git's stderr an error keeps (head and tail).
const STDERR_KEEP: usize = 8 * 1024;

/// `git` run in `dir` with the scrubbed environment. Arguments and stdio are the caller's.
///
/// git is found on `PATH` once per process ([`crate::process::on_path`]) and, when `dir` is a
/// folder, told it with `-C` rather than started in it: the C library then starts git with
/// `posix_spawn`, which does not copy gavel's memory, where a child's own working folder makes
/// a statically linked gavel copy its whole address space first (`fork`), a real part of every
/// git command's time. A `dir` that is not a folder is still git's working folder, so starting
/// git fails as it always did ([`GitError::Spawn`], naming the missing folder's error).
pub fn command(dir: &Path) -> Command {
    let mut cmd = match crate::process::on_path("git") {
        Some(git) => Command::new(git),
        None => Command::new("git"),
    };
    if dir.is_dir() {
        cmd.arg("-C").arg(dir);
    } else {
        cmd.current_dir(dir);
    }
    for name in SCRUBBED_ENV {
        cmd.env_remove(name);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0").env("LC_ALL", "C");
    cmd
}

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    /// git ran and exited with an error (`code`; `None` for a failure gavel reports itself).
    #[error("`git {args}` failed: {stderr}")]
    Failed {
        args: String,
        stderr: String,
        code: Option<i32>,
    },
    #[error("{0} is not inside a git repository")]
    NotARepo(PathBuf),
    /// git was ended by a signal (Ctrl-C at a terminal reaches git as well as gavel).
    #[error("`git {args}` was stopped by signal {signal}")]
    Killed { args: String, signal: i32 },
    /// A file gavel keeps beside git's own (a lock, a temporary index, a worktree folder)
    /// could not be used.
    #[error("cannot use {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A worktree name that cannot be a folder and branch name.
    #[error("{name:?} cannot name a worktree: {reason}")]
    BadName { name: String, reason: &'static str },
    /// The place a named worktree belongs is taken by something else.
    #[error("cannot use worktree {}: {detail}", .path.display())]
    Worktree { path: PathBuf, detail: String },
}

impl GitError {
    /// Whether git was stopped by a signal rather than failing on its own.
    pub fn is_killed(&self) -> bool {
        matches!(self, Self::Killed { .. })
    }
}

/// A repository (or linked worktree), addressed by its top-level folder.
#[derive(Debug, Clone)]
pub struct Git {
    root: PathBuf,
    worktree_home: PathBuf,
    /// A linked worktree's own git folder (`.git/worktrees/NAME` of its repository), named to
    /// every git command with `--git-dir` and `--work-tree`, so the worktree's `.git` pointer
    /// (a file the model's code could rewrite) is never read ([`Git::linked`]).
    git_dir: Option<PathBuf>,
}

impl Git {
    /// The repository containing `dir`: the nearest folder at or above it holding a `.git`
    /// folder or file, found without a git process (a run is a few git processes in all);
    /// git itself decides anything less plain (`dir` inside a `.git` folder, a bare
    /// repository).
    pub fn discover(dir: &Path) -> Result<Self, GitError> {
        let canonical = dir.canonicalize();
        let dir = canonical.as_deref().unwrap_or(dir);
        let inside_git_dir = dir
            .ancestors()
            .any(|a| a.file_name().is_some_and(|n| n == ".git"));
        if !inside_git_dir
            && let Some(top) = dir.ancestors().find(|a| {
                let dot_git = a.join(".git");
                dot_git.is_dir() && dot_git.join("HEAD").is_file() || dot_git.is_file()
            })
        {
            return Ok(Self::at(top));
        }
        let out = command(dir)
            .args(["rev-parse", "--show-toplevel"])
            .output()
            .map_err(GitError::Spawn)?;
        if !out.status.success() {
            return Err(GitError::NotARepo(dir.to_path_buf()));
        }
        let top = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok(Self::at(Path::new(&top)))
    }

    /// A repository at a known top-level folder.
    pub fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            worktree_home: root.join(DEFAULT_WORKTREE_HOME),
            git_dir: None,
        }
    }

    /// The same repository, keeping the worktrees it adds in `dir` (relative to the root)
    /// instead of [`DEFAULT_WORKTREE_HOME`].
    #[must_use]
    pub fn with_worktree_home(mut self, dir: &Path) -> Self {
        self.worktree_home = self.root.join(dir);
        self
    }

    /// The top-level folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `git args...` in the repository, with the scrubbed environment; stdio is the caller's.
    /// A linked worktree's git folder and work tree are named explicitly, with its hooks off.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = command(&self.root);
        if let Some(git_dir) = &self.git_dir {
            cmd.arg("--git-dir")
                .arg(git_dir)
                .arg("--work-tree")
                .arg(&self.root)
                .args(["-c", "core.hooksPath=/dev/null"]);
        }
        cmd.args(args);
        cmd
    }

    /// The git folder: a linked worktree's own, or `.git` beneath the top-level folder.
    pub fn git_dir(&self) -> PathBuf {
        self.git_dir
            .clone()
            .unwrap_or_else(|| self.root.join(".git"))
    }

    /// Runs `git args...` in the repository and returns stdout.
    pub fn run(&self, args: &[&str]) -> Result<String, GitError> {
        self.run_env(args, &[])
    }

    /// Runs `git args...` with `env` set on top of the scrubbed environment.
    fn run_env(&self, args: &[&str], env: &[(&str, &OsStr)]) -> Result<String, GitError> {
        let out = self.run_env_bytes(args, env)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// [`Self::run_env`]'s stdout as git wrote it: paths that are not UTF-8 stay themselves.
    fn run_env_bytes(&self, args: &[&str], env: &[(&str, &OsStr)]) -> Result<Vec<u8>, GitError> {
        let mut cmd = self.command(args);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let out = cmd.output().map_err(GitError::Spawn)?;
        check(&args.join(" "), out.status, &out.stderr)?;
        Ok(out.stdout)
    }

    /// The current commit, or `None` in a repository without commits.
    pub fn head(&self) -> Result<Option<String>, GitError> {
        match self.run(&["rev-parse", "--verify", "--quiet", "HEAD"]) {
            Ok(sha) => Ok(Some(sha.trim().to_owned())),
            Err(GitError::Failed { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The repository's common git folder (shared by all its worktrees). A plain repository's
    /// `.git` folder is it; a linked worktree (`.git` is a file) asks git.
    fn common_dir(&self) -> Result<PathBuf, GitError> {
        let plain = self.root.join(".git");
        if self.git_dir.is_none() && plain.is_dir() {
            return Ok(plain);
        }
        let dir = self.run(&["rev-parse", "--git-common-dir"])?;
        Ok(self.root.join(dir.trim()))
    }
}

/// Turns a finished git's status into an error: a signal is [`GitError::Killed`], any other
/// failure [`GitError::Failed`] with git's stderr (head and tail, at most 8 KiB).
pub(crate) fn check(args: &str, status: ExitStatus, stderr: &[u8]) -> Result<(), GitError> {
    if status.success() {
        return Ok(());
    }
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Err(GitError::Killed {
            args: args.to_owned(),
            signal,
        });
    }
    let mut kept = Capped::new(STDERR_KEEP);
    kept.push(stderr);
    Err(GitError::Failed {
        args: args.to_owned(),
        stderr: kept.text().trim().to_owned(),
        code: status.code(),
    })
}
