//! [`CliProvider`]: one provider for every agent CLI, over a [`CliAgent`] that says what
//! differs. It checks the request's [`AgentProfile`], picks the working folder, writes the
//! CLI's per-call files (and removes them after), starts the CLI with the prompt on stdin under
//! gavel's timeouts, rotates logins (`logins.rs`), reports progress and tool uses while the CLI
//! streams, and builds the [`Response`]. Retries are outside, in [`crate::Retrying`].
//!
//! A run the CLI reports as failed but with usage (Claude Code's `error_max_turns` result
//! carries the tokens and cost of every turn) is reported as [`CallProgress::Billed`] before
//! its error, so the caller ledgers it. When the profile names an
//! [`AgentProfile::answer_file`] and the agent wrote it before the CLI failed, the handed-in
//! answer is the call's answer (with the run's usage, and the error in
//! [`Response::ended_with`]): it is not retried.
//!
//! A profile with a confinement ([`AgentProfile::confine`]) runs the CLI through its Landlock
//! launcher. The writable paths are the profile's, a private temporary folder made for the
//! call (the child's `TMPDIR`, `TMP` and `TEMP`; removed with everything in it after the
//! call) and the CLI's own state ([`CliAgent::state_paths`]). The launcher's refusals (exit
//! 126: the kernel cannot confine, a path is missing; 127: the CLI is not there) are
//! permanent errors that say so, never an unconfined run.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gavel_exec::confine::Confinement;
use serde_json::Value;

use super::agent::{Answer, CallFile, CliAgent, Setup};
use super::claude::Claude;
use super::codex::Codex;
use super::gemini::Gemini;
use super::{CliSettings, LoginEnv, approx_tokens, logins, not_installed};
use crate::process::{self, ProcessError, ProcessOutput, ProcessSpec};
use crate::profile::{AgentProfile, ProfileError};
use crate::provider::{
    BilledAttempt, Call, CallProgress, Provider, ProviderError, Request, Response, ToolUse,
};
use crate::tools::CliTool;

/// An agent CLI as a provider (`claude:`, `gemini:`, `codex:`).
#[derive(Debug, Clone)]
pub struct CliProvider {
    agent: &'static dyn CliAgent,
    model: String,
    settings: CliSettings,
}

impl CliProvider {
    /// `claude:MODEL`: Claude Code.
    pub fn claude(model: impl Into<String>, settings: CliSettings) -> Self {
        Self::new(&Claude, model, settings)
    }

    /// `gemini:MODEL`: the Gemini CLI.
    pub fn gemini(model: impl Into<String>, settings: CliSettings) -> Self {
        Self::new(&Gemini, model, settings)
    }

    /// `codex:MODEL`: Codex.
    pub fn codex(model: impl Into<String>, settings: CliSettings) -> Self {
        Self::new(&Codex, model, settings)
    }

    pub(crate) fn new(
        agent: &'static dyn CliAgent,
        model: impl Into<String>,
        settings: CliSettings,
    ) -> Self {
        Self {
            agent,
            model: model.into(),
            settings,
        }
    }
}

impl Provider for CliProvider {
    fn describe(&self) -> String {
        format!("{}:{}", self.agent.tool().kind, self.model)
    }

    fn model(&self) -> String {
        self.model.clone()
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        super::preflight(self.agent.tool(), &self.settings)
    }

    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError> {
        req.profile.check().map_err(|e| self.refused(&e))?;
        logins::with_logins(self.agent.tool(), &self.settings, call, |login| {
            self.complete_as(req, call, login)
        })
    }
}

impl CliProvider {
    /// One call under one login (the CLI's default sign-in when `login` is empty).
    fn complete_as(
        &self,
        req: &Request,
        call: &Call<'_>,
        login: &LoginEnv,
    ) -> Result<Response, ProviderError> {
        let tool = self.agent.tool();
        let profile = &req.profile;
        let scratch = scratch_path();
        let mut written = Written::default();
        let (workdir, own_workdir) = self.workdir(profile, &scratch, &mut written)?;
        let setup = Setup {
            model: &self.model,
            profile,
            workdir: workdir.as_deref(),
            own_workdir,
            scratch: &scratch,
            idle_timeout: self.settings.idle_timeout,
            output_schema: req.output_schema.as_ref(),
        };
        let invocation = self
            .agent
            .invocation(&setup)
            .map_err(|e| self.refused(&e))?;
        for file in &invocation.files {
            written
                .write(file)
                .map_err(|message| self.permanent(message))?;
        }
        let form = invocation.form;
        let mut env = invocation.env;
        env.extend(self.settings.env.iter().cloned());
        env.extend(profile.env.iter().cloned());
        let mut settings = login.apply(CliSettings {
            env,
            workdir,
            ..self.settings.clone()
        });
        let confinement = match &profile.confine {
            Some(c) => Some(self.confinement(c, &scratch, &mut settings, &mut written)?),
            None => None,
        };
        let mut streamed = 0u64;
        let mut seen = HashSet::new();
        let mut tool_uses: Vec<ToolUse> = Vec::new();
        let stdin = self.agent.stdin(&req.prompt);
        let confined = confinement.as_ref();
        let out = run_cli(
            tool,
            invocation.args,
            &stdin,
            &settings,
            confined,
            call,
            |line| {
                let Ok(v) = serde_json::from_str::<Value>(line) else {
                    return;
                };
                if let Some(text) = self.agent.streamed_text(&v) {
                    streamed += approx_tokens(&text);
                    (call.progress)(CallProgress::Tokens {
                        output_tokens: streamed,
                        attempt: 1,
                    });
                }
                for (id, used) in self.agent.tool_uses(&v) {
                    // Without an id a use cannot be told from another: each counts.
                    if id.is_empty() || seen.insert(id) {
                        (call.progress)(CallProgress::ToolUse(used.clone()));
                        tool_uses.push(used);
                    }
                }
            },
        );
        drop(written);
        let out = out?;
        if let Some(c) = confined {
            self.launcher_refused(c, &out)?;
        }
        let (answer, ended_with) = match self.agent.answer(&self.model, &out) {
            Ok(answer) => (answer, None),
            Err(e) => {
                let usage = self.agent.usage(&self.model, &out);
                let handed_in = profile.answer_file.as_deref().is_some_and(handed_in);
                match usage {
                    // The agent handed its answer in through a tool before the CLI failed:
                    // that is the call's answer, with the usage of the whole run.
                    _ if handed_in => (
                        usage.unwrap_or_else(|| self.no_usage()),
                        Some(e.to_string()),
                    ),
                    Some(usage) => {
                        let billed = BilledAttempt {
                            provider: tool.kind.into(),
                            model: usage.model,
                            requested_model: self.model.clone(),
                            input_tokens: usage.input_tokens,
                            output_tokens: usage.output_tokens,
                            cached_tokens: usage.cached_tokens,
                            cost_micros: usage.cost_usd.and_then(crate::price::usd_to_micros),
                            error: e.to_string(),
                            raw: out.stdout,
                        };
                        (call.progress)(CallProgress::Billed(Box::new(billed)));
                        return Err(e);
                    }
                    None => return Err(e),
                }
            }
        };
        Ok(Response {
            text: answer.text,
            provider: tool.kind.into(),
            model: answer.model,
            requested_model: self.model.clone(),
            input_tokens: answer.input_tokens,
            output_tokens: answer.output_tokens,
            cached_tokens: answer.cached_tokens,
            cost_usd: answer.cost_usd,
            raw: out.stdout,
            attempts: 1,
            credential: None,
            quota_exhausted: Vec::new(),
            tool_uses,
            ended_with,
            form,
        })
    }

    /// An answer that reported nothing (the model is the one asked for).
    fn no_usage(&self) -> Answer {
        Answer {
            text: String::new(),
            model: self.model.clone(),
            input_tokens: None,
            output_tokens: None,
            cached_tokens: None,
            cost_usd: None,
        }
    }

    /// The folder the CLI runs in and whether it is gavel's own agent folder. gavel's folder
    /// is created when missing; a folder the profile chose must exist. A CLI whose per-call
    /// settings live in its working folder gets a private one when the profile changes them,
    /// so a concurrent call in gavel's shared folder never sees them.
    fn workdir(
        &self,
        profile: &AgentProfile,
        scratch: &Path,
        written: &mut Written,
    ) -> Result<(Option<PathBuf>, bool), ProviderError> {
        if let Some(dir) = profile.working_folder() {
            if !dir.is_dir() {
                return Err(self.permanent(format!(
                    "the agent's working folder {} does not exist",
                    dir.display()
                )));
            }
            return Ok((Some(dir.to_path_buf()), false));
        }
        if self.agent.settings_in_workdir(profile) {
            written
                .create_dir(scratch)
                .map_err(|message| self.permanent(message))?;
            return Ok((Some(scratch.to_path_buf()), false));
        }
        let dir = self
            .settings
            .workdir
            .clone()
            .or_else(|| self.agent.fallback_workdir());
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir).map_err(|e| {
                self.permanent(format!(
                    "cannot create the agent working folder {}: {e}",
                    dir.display()
                ))
            })?;
        }
        Ok((dir, true))
    }

    fn permanent(&self, message: String) -> ProviderError {
        ProviderError::Permanent {
            provider: self.agent.tool().kind.into(),
            message,
            hint: None,
        }
    }

    /// A profile the CLI cannot run: the workflow that chose it must change.
    fn refused(&self, e: &ProfileError) -> ProviderError {
        ProviderError::Permanent {
            provider: self.agent.tool().kind.into(),
            message: format!("the agent profile cannot be used: {e}"),
            hint: Some(
                "the workflow chose this profile for the call; see ARCHITECTURE.md, \"Models\", \
                 for what each agent CLI can do"
                    .into(),
            ),
        }
    }
}

/// Whether the agent handed an answer in through `path`: a regular file with something in it.
fn handed_in(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// A fresh path for one call's private folder (not created yet).
fn scratch_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("gavel-call-{}-{n}", std::process::id()))
}

/// The files and folders written for one call that are removed when it ends (on drop, so also
/// when the call fails or panics).
#[derive(Debug, Default)]
struct Written {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    /// Folders removed with everything in them (the call's temporary folder).
    trees: Vec<PathBuf>,
}

impl Written {
    /// Creates `dir` (private to this user, failing if it exists) and removes it with all it
    /// holds after the call.
    fn create_tree(&mut self, dir: &Path) -> Result<(), String> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        self.trees.push(dir.to_path_buf());
        Ok(())
    }

    /// Creates `dir` (private to this user) and removes it after the call.
    fn create_dir(&mut self, dir: &Path) -> Result<(), String> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        self.dirs.push(dir.to_path_buf());
        Ok(())
    }

    /// Writes `file` (readable by this user only when created), refusing to overwrite a
    /// temporary file's path that holds someone else's file.
    fn write(&mut self, file: &CallFile) -> Result<(), String> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = &file.path;
        if let Some(parent) = path.parent().filter(|p| !p.exists()) {
            if file.temporary {
                self.create_dir(parent)?;
            } else {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
        }
        if file.temporary && path.exists() {
            let first = |text: &str| text.lines().next().unwrap_or("").to_owned();
            let existing = std::fs::read_to_string(path).unwrap_or_default();
            if first(&existing) != first(&file.contents) {
                return Err(format!(
                    "{} exists and was not written by gavel; gavel will not overwrite it \
                     (run the agent in another folder, or move the file)",
                    path.display()
                ));
            }
        }
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut f| f.write_all(file.contents.as_bytes()));
        if file.temporary {
            self.files.push(path.clone());
        }
        written.map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        for file in self.files.drain(..).rev() {
            let _ = std::fs::remove_file(file);
        }
        // Only emptied folders go: `remove_dir` leaves one that still holds anything.
        for dir in self.dirs.drain(..).rev() {
            let _ = std::fs::remove_dir(dir);
        }
        for tree in self.trees.drain(..) {
            let _ = std::fs::remove_dir_all(tree);
        }
    }
}

/// Runs a CLI with `stdin` as its input (through `confine`'s launcher when given), calling
/// `on_line` for each line it prints.
pub(crate) fn run_cli(
    tool: &CliTool,
    args: Vec<String>,
    stdin: &str,
    settings: &CliSettings,
    confine: Option<&Confinement>,
    call: &Call<'_>,
    mut on_line: impl FnMut(&str),
) -> Result<ProcessOutput, ProviderError> {
    let program = super::find_program(tool, settings)?;
    let mut spec = ProcessSpec {
        program,
        args,
        env: settings.env.clone(),
        // Only the allowlist, the CLI's own variables and what the person passes: no store URL,
        // no GitHub token, no other vendor's key reaches the agent or what it runs.
        env_remove: {
            let mut removed = tool.env_removed(&settings.pass_env);
            removed.extend(settings.env_remove.iter().cloned());
            removed
        },
        cwd: settings.workdir.clone(),
        stdin: stdin.to_owned(),
        idle_timeout: settings.idle_timeout,
        total_timeout: settings.total_timeout,
    };
    if let Some(c) = confine {
        spec = c.wrap(&spec);
    }
    match process::run(&spec, call.cancelled, &mut on_line) {
        // The answer is parsed from stdout: one whose middle was cut to the cap would be read
        // wrong, silently. Fail instead (transiently: a retry may answer shorter).
        Ok(out) if out.stdout_omitted > 0 => Err(ProviderError::Transient {
            provider: tool.kind.into(),
            message: format!(
                "the {} CLI wrote more than gavel keeps ({} bytes of its output were cut); its answer cannot be read whole",
                tool.name, out.stdout_omitted
            ),
            retry_after_ms: None,
            quota: false,
        }),
        Ok(out) => Ok(out),
        Err(ProcessError::Cancelled) => Err(ProviderError::Cancelled),
        Err(ProcessError::NotFound { .. }) if confine.is_some() => Err(ProviderError::Permanent {
            provider: tool.kind.into(),
            message: format!(
                "the confinement launcher {} cannot be run",
                spec.program.display()
            ),
            hint: None,
        }),
        Err(ProcessError::NotFound { .. }) => Err(not_installed(tool)),
        Err(e @ (ProcessError::IdleTimeout { .. } | ProcessError::TotalTimeout { .. })) => {
            Err(ProviderError::Transient {
                provider: tool.kind.into(),
                message: e.to_string(),
                retry_after_ms: None,
                quota: false,
            })
        }
        Err(e @ ProcessError::Spawn { .. }) => Err(ProviderError::Permanent {
            provider: tool.kind.into(),
            message: e.to_string(),
            hint: None,
        }),
    }
}

mod confined;
#[cfg(test)]
mod tests;
