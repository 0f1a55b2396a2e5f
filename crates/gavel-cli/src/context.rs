//! What every run-driving command sets up: the repository, settings, the store, the clock,
//! Ctrl-C handling, the test hooks, and the providers every workflow's roles are built from.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};

use crate::store::AnyStore;
use gavel_core::{CancelToken, Clock, CrashHook, FixedClock, LockInfo, SystemClock};
use gavel_workflows::git::Git;

use crate::error::CliError;
use crate::kinds::ImplementSettingsToml;
use crate::settings::{Overrides, Settings};
use crate::ui::{IN_PROMPT, Ui};

/// Test hook: an RFC 3339 instant every timestamp uses (hermetic tests).
pub const ENV_NOW: &str = "GAVEL_NOW";
/// Test hook: comma-separated crash points (`after:N2_draft`, `after-effect:create`, ...) at
/// which the process kills itself with SIGKILL, to prove crash safety.
pub const ENV_CRASH_AT: &str = "GAVEL_CRASH_AT";

/// A command's environment.
pub struct Context {
    pub ui: Ui,
    pub settings: Settings,
    pub clock: Box<dyn Clock>,
    /// When the command started (by [`Self::clock`]), until a drive claims it: see
    /// [`Self::take_start`].
    started: Mutex<Option<jiff::Timestamp>>,
}

impl Context {
    /// Finds the repository around the current folder (or the one `--repo` names) and loads
    /// its settings.
    pub fn load(overrides: &Overrides) -> Result<Self, CliError> {
        Self::load_in(&work_dir()?, overrides)
    }

    /// Like [`Context::load`], from `dir`.
    pub fn load_in(dir: &Path, overrides: &Overrides) -> Result<Self, CliError> {
        let clock = clock()?;
        let started = clock.now();
        let git = Git::discover(dir).map_err(|e| {
            CliError::error(e.to_string())
                .hint("gavel works inside a git repository: run `git init` first")
        })?;
        let settings = Settings::load(git.root(), overrides)?;
        gavel_workflows::fsutil::set_fsync(settings.fsync);
        Ok(Self {
            ui: Ui::detect(),
            settings,
            clock,
            started: Mutex::new(Some(started)),
        })
    }

    /// Opens the store (creating the SQLite database if needed; a PostgreSQL one is migrated).
    pub fn open_store(&self) -> Result<AnyStore, CliError> {
        AnyStore::open(&self.settings, true)?
            .ok_or_else(|| CliError::error("the store could not be opened"))
    }

    /// Opens the store only if there is one (read-only commands create no SQLite file).
    pub fn open_existing_store(&self) -> Result<Option<AnyStore>, CliError> {
        AnyStore::open(&self.settings, false)
    }

    /// The store opened to read only (writes refused even through a bug), for commands that
    /// show runs; none yet is an error whose hint names `again`, the command to run after.
    pub fn open_reader(&self, again: &str) -> Result<AnyStore, CliError> {
        self.open_existing_store()?
            .ok_or_else(|| {
                CliError::error("there are no runs yet (no store)").hint(format!(
                    "start one with `gavel issue BRIEF.md`, then run `{again}` again"
                ))
            })?
            .read_only()
    }

    /// The provider for a role's provider string, with this repository's timeouts, keys,
    /// logins and retry policy (every workflow's model calls go through one of these).
    pub fn provider(&self, spec: &gavel_llm::ProviderSpec) -> Box<dyn gavel_llm::Provider> {
        let s = &self.settings;
        let provider_settings = gavel_llm::ProviderSettings {
            idle_timeout: s.idle_timeout,
            total_timeout: s.total_timeout,
            key_env: s.key_env.clone(),
            logins: s.logins.clone(),
            cli_workdir: Some(s.state_dir.join("agent-workdir")),
            pass_env: s.section::<ImplementSettingsToml>().pass_env.clone(),
            rotation: rotation_state(),
        };
        Box::new(gavel_llm::Retrying::new(
            gavel_llm::build_with(spec, &s.repo_root, &provider_settings),
            s.retry,
        ))
    }

    /// When the command started, for the first run it drives: the command's own work before
    /// the run (its checks, the context's validation) is gavel's time too. `None` after the
    /// first call, and once a person was asked anything (their time is not gavel's).
    pub fn take_start(&self) -> Option<jiff::Timestamp> {
        let start = self.started.lock().ok()?.take();
        start.filter(|_| !crate::ui::asked())
    }

    /// Who holds a run's lock while this process drives it.
    pub fn holder(&self) -> LockInfo {
        // args_os: an argument that is not UTF-8 (a file name) must not panic here.
        let command = std::env::args_os()
            .map(|a| a.to_string_lossy().replace('\n', " "))
            .collect::<Vec<_>>()
            .join(" ");
        LockInfo {
            pid: std::process::id(),
            host: gavel_exec::process::host_name(),
            command,
            since: self.clock.now_rfc3339(),
        }
    }

    /// A path relative to the repository root, for display.
    pub fn rel(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.settings.repo_root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Which credential of each provider kind last answered, for the whole process: every
/// workflow this process builds starts its calls with it (see `gavel_llm::credentials`).
fn rotation_state() -> gavel_llm::RotationState {
    static STATE: OnceLock<gavel_llm::RotationState> = OnceLock::new();
    STATE.get_or_init(gavel_llm::RotationState::default).clone()
}

fn clock() -> Result<Box<dyn Clock>, CliError> {
    match std::env::var(ENV_NOW) {
        Ok(v) if !v.is_empty() => {
            let ts = v.parse().map_err(|e| {
                CliError::usage(format!("{ENV_NOW}={v:?} is not an RFC 3339 time: {e}"))
            })?;
            Ok(Box::new(FixedClock(ts)))
        }
        _ => Ok(Box::new(SystemClock)),
    }
}

/// The process-wide cancellation token, wired to Ctrl-C on first use. At a prompt, Ctrl-C
/// exits at once (the run is already saved at its gate); otherwise the engine stops at the next
/// safe point, and a second Ctrl-C exits at once.
pub fn cancel_token() -> CancelToken {
    static TOKEN: OnceLock<CancelToken> = OnceLock::new();
    TOKEN
        .get_or_init(|| {
            let token = CancelToken::new();
            let handler_token = token.clone();
            let _ = ctrlc::set_handler(move || {
                if IN_PROMPT.load(Ordering::SeqCst) || handler_token.is_cancelled() {
                    std::process::exit(i32::from(crate::exit::Exit::Interrupted.code()));
                }
                handler_token.cancel();
            });
            token
        })
        .clone()
}

/// The crash hook from [`ENV_CRASH_AT`], if set.
pub fn crash_hook() -> Option<Box<CrashHook>> {
    let points: Vec<String> = std::env::var(ENV_CRASH_AT)
        .ok()?
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    if points.is_empty() {
        return None;
    }
    Some(Box::new(move |point: &str| {
        // `panic:POINT` panics there instead, to prove what a panic leaves behind.
        if points
            .iter()
            .any(|p| p.strip_prefix("panic:") == Some(point))
        {
            panic!("injected panic at {point} ({ENV_CRASH_AT})");
        }
        if points.iter().any(|p| p == point) {
            // A real SIGKILL, exactly as `kill -9` would deliver it: no destructors, no flushes.
            let _ = Command::new("kill")
                .arg("-9")
                .arg(std::process::id().to_string())
                .status();
            loop {
                std::thread::park();
            }
        }
    }))
}

/// The repository `--repo PATH` names, set once from the command line before any command runs.
static REPO: OnceLock<PathBuf> = OnceLock::new();

/// Makes every command work in the repository at `path` instead of the current folder's
/// (seed 001's `repo_root`). Paths the person types (a brief, a feedback file) are still
/// relative to the current folder.
pub fn set_repo(path: &Path) -> Result<(), CliError> {
    let abs = absolute(path);
    if !abs.is_dir() {
        return Err(
            CliError::error(format!("--repo {}: no such folder", abs.display()))
                .hint("--repo takes the path of a git repository"),
        );
    }
    let _ = REPO.set(abs);
    Ok(())
}

/// Where a command looks for its repository: `--repo`'s folder, else the current folder.
pub fn work_dir() -> Result<PathBuf, CliError> {
    if let Some(repo) = REPO.get() {
        return Ok(repo.clone());
    }
    std::env::current_dir()
        .map_err(|e| CliError::error(format!("cannot read the current folder: {e}")))
}

/// Resolves a user-supplied path against the current folder.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|c| c.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}
