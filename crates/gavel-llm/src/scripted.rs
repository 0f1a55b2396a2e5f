//! The offline provider: answers come from a YAML script instead of a model.
//!
//! Tests and `gavel demo` need a provider that is free, deterministic and able to misbehave on
//! cue (slow answers, transient and permanent failures). Every call is also recorded in a call
//! log next to the script, so tests can prove what a resumed run did and did not repeat.
//!
//! Script format:
//!
//! ```yaml
//! drafter:                    # the n-th drafter call of a run (Request.seq = n) gets entry n
//!   - text: "# Title\n..."
//!   - text: "..."
//!     delay_ms: 1500          # wait before answering; the call can be cancelled meanwhile
//!   - fail: "503 overloaded"  # fail (transiently)...
//!     fail_times: 1           # ...only for the first N attempts, then answer `text`
//!     text: "..."
//!   - fail: "401 invalid api key"
//!     permanent: true         # fail permanently instead
//! reviewer:
//!   - text: "..."
//! model: scripted-model-1     # optional, reported as Response.model (default "scripted")
//! record_prompts: true        # optional: write each prompt to <script>.prompts/{role}-{seq}.md
//! ```
//!
//! An entry may also set `model` (the model the answer claims to come from, to exercise model
//! verification), `cost_usd` (a reported cost), with `fail`, `retry_after_ms`, and `form`: how
//! the answer reports it was asked for when the call carries an output schema (`schema`, or
//! `plain_after_refusal` to stand for a service that refused structured output; default
//! `plain`, since a script has no way to ask). A call without a schema is always `plain`.
//!
//! The script is re-read whenever its size or modification time changes, so it can be edited
//! between runs of a long demo; an unchanged script is parsed once per process.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::provider::{
    AnswerForm, BilledAttempt, Call, CallProgress, Provider, ProviderError, Request, Response, Role,
};

/// Provider name reported in [`Response::provider`] and errors.
const PROVIDER: &str = "scripted";
/// Model name reported when the script does not set `model`.
const DEFAULT_MODEL: &str = "scripted";
/// Longest time a delayed answer goes without checking for cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A provider that answers from a YAML script. See the module docs for the format.
#[derive(Debug, Clone)]
pub struct ScriptedProvider {
    path: PathBuf,
    label: String,
    /// The last parsed script and the file stamp it was parsed from.
    parsed: SharedParse,
}

/// What tells a changed script file from an unchanged one.
type Stamp = (u64, Option<std::time::SystemTime>);
/// A parsed script and the stamp of the file it was parsed from.
type Parsed = (Stamp, Arc<Script>);
/// The last parse of one script file, shared by its providers.
type SharedParse = Arc<Mutex<Option<Parsed>>>;

impl ScriptedProvider {
    /// A provider reading the script at `path` (used as given, not resolved against anything).
    /// Providers of one path share the parsed script (a drafter and a reviewer answering from
    /// one file parse it once).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        static PARSED: Mutex<Vec<(PathBuf, SharedParse)>> = Mutex::new(Vec::new());
        let path = path.into();
        let label = format!("scripted:{}", path.display());
        let mut all = PARSED.lock().unwrap_or_else(PoisonError::into_inner);
        let parsed = match all.iter().find(|(p, _)| *p == path) {
            Some((_, parsed)) => Arc::clone(parsed),
            None => {
                let parsed: SharedParse = Arc::default();
                all.push((path.clone(), Arc::clone(&parsed)));
                parsed
            }
        };
        Self {
            path,
            label,
            parsed,
        }
    }

    /// The script, parsed again only when the file changed since the last call.
    fn script(&self) -> Result<Arc<Script>, ScriptError> {
        let stamp: Option<Stamp> = fs::metadata(&self.path)
            .ok()
            .map(|m| (m.len(), m.modified().ok()));
        let mut parsed = self.parsed.lock().unwrap_or_else(PoisonError::into_inner);
        if let (Some(stamp), Some((cached, script))) = (&stamp, parsed.as_ref())
            && stamp == cached
            && stamp.1.is_some()
        {
            return Ok(script.clone());
        }
        let script = Arc::new(Script::load(&self.path)?);
        *parsed = stamp.map(|s| (s, script.clone()));
        Ok(script)
    }

    /// The same provider, described as `label` (the provider string it came from).
    pub fn labelled(self, label: String) -> Self {
        Self { label, ..self }
    }

    /// The script file this provider reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn permanent(message: String, hint: Option<String>) -> ProviderError {
        ProviderError::Permanent {
            provider: PROVIDER.to_owned(),
            message,
            hint,
        }
    }

    fn script_error(&self, err: &ScriptError) -> ProviderError {
        Self::permanent(
            error_chain(err),
            Some(format!("fix the script {}", self.path.display())),
        )
    }

    fn log_error(&self, err: &CallLogError) -> ProviderError {
        Self::permanent(
            error_chain(err),
            Some(format!(
                "the call log {} must be readable and writable; delete it to start over",
                call_log_path(&self.path).display()
            )),
        )
    }

    fn log(&self, req: &Request, event: CallEvent) -> Result<(), ProviderError> {
        append_call_log(&self.path, req.role, req.seq, event).map_err(|e| self.log_error(&e))
    }
}

impl Provider for ScriptedProvider {
    fn describe(&self) -> String {
        self.label.clone()
    }

    fn model(&self) -> String {
        self.script()
            .ok()
            .and_then(|s| s.model.clone())
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned())
    }

    fn preflight(&self) -> Result<(), ProviderError> {
        self.script().map(drop).map_err(|e| self.script_error(&e))
    }

    fn complete(&self, req: &Request, call: &Call<'_>) -> Result<Response, ProviderError> {
        let cancelled = call.cancelled;
        let script = self.script().map_err(|e| self.script_error(&e))?;
        let entries = script.entries(req.role);
        let Some(entry) = usize::try_from(req.seq).ok().and_then(|i| entries.get(i)) else {
            return Err(Self::permanent(
                format!(
                    "script has only {} {} responses; call #{} asked for more",
                    entries.len(),
                    req.role,
                    u64::from(req.seq) + 1
                ),
                Some(format!(
                    "add `{}` entries to {}",
                    req.role,
                    self.path.display()
                )),
            ));
        };
        if cancelled() {
            return Err(ProviderError::Cancelled);
        }

        if script.record_prompts {
            let path = prompt_record_path(&self.path, req.role, req.seq);
            let written = path
                .parent()
                .map_or(Ok(()), fs::create_dir_all)
                .and_then(|()| fs::write(&path, &req.prompt));
            written.map_err(|e| {
                Self::permanent(
                    format!("cannot record the prompt at {}: {e}", path.display()),
                    None,
                )
            })?;
        }
        self.log(req, CallEvent::Start)?;
        sleep_unless_cancelled(Duration::from_millis(entry.delay_ms), cancelled)?;

        if let Some(failure) = &entry.fail {
            let fails_so_far = match entry.fail_times {
                Some(_) => read_call_log(&self.path)
                    .map_err(|e| self.log_error(&e))?
                    .iter()
                    .filter(|e| e.role == req.role && e.seq == req.seq)
                    .filter(|e| e.event == CallEvent::Fail)
                    .count(),
                None => 0,
            };
            let still_failing = entry
                .fail_times
                .is_none_or(|times| fails_so_far < usize::try_from(times).unwrap_or(usize::MAX));
            if still_failing {
                self.log(req, CallEvent::Fail)?;
                // A failure that reports a cost stands for a billed one (a CLI's error result
                // with its usage): the caller hears of it as the real providers report it.
                if let Some(cost) = entry.cost_usd {
                    let requested = script
                        .model
                        .clone()
                        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
                    (call.progress)(CallProgress::Billed(Box::new(BilledAttempt {
                        provider: PROVIDER.to_owned(),
                        model: entry.model.clone().unwrap_or_else(|| requested.clone()),
                        requested_model: requested,
                        input_tokens: Some(approximate_tokens(&req.prompt)),
                        output_tokens: Some(approximate_tokens(failure)),
                        cached_tokens: None,
                        cost_micros: crate::price::usd_to_micros(cost),
                        error: failure.clone(),
                        raw: failure.clone(),
                    })));
                }
                return Err(if entry.permanent {
                    Self::permanent(failure.clone(), None)
                } else {
                    ProviderError::Transient {
                        provider: PROVIDER.to_owned(),
                        message: failure.clone(),
                        retry_after_ms: entry.retry_after_ms,
                        quota: false,
                    }
                });
            }
        }

        // `Script::load` guarantees an entry that can succeed has text.
        let text = entry.text.clone().unwrap_or_default();
        self.log(req, CallEvent::Finish)?;
        let requested = script
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        let output_tokens = approximate_tokens(&text);
        (call.progress)(CallProgress::Tokens {
            output_tokens,
            attempt: 1,
        });
        Ok(Response {
            input_tokens: Some(approximate_tokens(&req.prompt)),
            output_tokens: Some(output_tokens),
            cached_tokens: None,
            cost_usd: entry.cost_usd,
            raw: text.clone(),
            text,
            provider: PROVIDER.to_owned(),
            model: entry.model.clone().unwrap_or_else(|| requested.clone()),
            requested_model: requested,
            attempts: 1,
            credential: None,
            quota_exhausted: Vec::new(),
            tool_uses: Vec::new(),
            ended_with: None,
            form: match req.output_schema {
                Some(_) => entry.form.unwrap_or_default(),
                None => AnswerForm::Plain,
            },
        })
    }
}

/// Token counts for scripted answers are an approximation: the number of whitespace-separated
/// words. Good enough to exercise cost accounting, not a real tokenizer.
fn approximate_tokens(text: &str) -> u64 {
    u64::try_from(text.split_whitespace().count()).unwrap_or(u64::MAX)
}

fn sleep_unless_cancelled(
    delay: Duration,
    cancelled: &dyn Fn() -> bool,
) -> Result<(), ProviderError> {
    let deadline = Instant::now() + delay;
    loop {
        if cancelled() {
            return Err(ProviderError::Cancelled);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(());
        }
        thread::sleep((deadline - now).min(CANCEL_POLL));
    }
}

/// Formats an error and its `source()` chain on one line, for errors that must travel as text.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// Why a script could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    #[error("cannot read script {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot parse script {}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: Box<serde_saphyr::Error>,
    },
    #[error("invalid script {}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    /// Answers per role name (`roles: {planner: [...], reviewer: [...]}`).
    #[serde(default)]
    roles: std::collections::BTreeMap<String, Vec<Entry>>,
    /// `drafter:` and `reviewer:` at the top level: aliases kept from before `roles:`.
    #[serde(default)]
    drafter: Vec<Entry>,
    #[serde(default)]
    reviewer: Vec<Entry>,
    #[serde(default)]
    model: Option<String>,
    /// Write every prompt to `<script>.prompts/{role}-{seq}.md`, so tests can read what a
    /// model was sent.
    #[serde(default)]
    record_prompts: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    delay_ms: u64,
    #[serde(default)]
    fail: Option<String>,
    #[serde(default)]
    fail_times: Option<u32>,
    #[serde(default)]
    permanent: bool,
    /// With `fail`: the `retry-after` the failure carries, in milliseconds.
    #[serde(default)]
    retry_after_ms: Option<u64>,
    /// The model this answer claims to come from (default: the script's `model`).
    #[serde(default)]
    model: Option<String>,
    /// The cost this answer reports, in USD (default: none reported). With `fail`, the failed
    /// attempt reports it (a billed failure, as a CLI's error result with usage).
    #[serde(default)]
    cost_usd: Option<f64>,
    /// The form the answer reports when the call asked for a schema (default `plain`).
    #[serde(default)]
    form: Option<AnswerForm>,
}

impl Script {
    fn load(path: &Path) -> Result<Self, ScriptError> {
        let source = fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        let script: Self =
            serde_saphyr::from_str(&source).map_err(|source| ScriptError::Parse {
                path: path.to_owned(),
                source: Box::new(source),
            })?;
        script.validate().map_err(|message| ScriptError::Invalid {
            path: path.to_owned(),
            message,
        })?;
        Ok(script)
    }

    fn entries(&self, role: Role) -> &[Entry] {
        if let Some(entries) = self.roles.get(role.as_str()) {
            return entries;
        }
        match role {
            Role::DRAFTER => &self.drafter,
            Role::REVIEWER => &self.reviewer,
            _ => &[],
        }
    }

    /// Every role the script answers for.
    fn role_names(&self) -> Vec<Role> {
        let mut roles: Vec<Role> = self.roles.keys().map(|r| Role::named(r)).collect();
        for alias in [Role::DRAFTER, Role::REVIEWER] {
            if !roles.contains(&alias) {
                roles.push(alias);
            }
        }
        roles
    }

    /// Rejects entries whose keys contradict each other, so a script never silently ignores a
    /// field its author expected to matter.
    fn validate(&self) -> Result<(), String> {
        for (alias, entries) in [("drafter", &self.drafter), ("reviewer", &self.reviewer)] {
            if !entries.is_empty() && self.roles.contains_key(alias) {
                return Err(format!(
                    "`{alias}` is given both at the top level and under `roles`; keep one"
                ));
            }
        }
        for role in self.role_names() {
            for (i, entry) in self.entries(role).iter().enumerate() {
                let at = || format!("{role} entry #{}", i + 1);
                match (&entry.fail, entry.fail_times, &entry.text) {
                    (None, _, None) => {
                        return Err(format!("{} has neither `text` nor `fail`", at()));
                    }
                    (None, Some(_), _) => {
                        return Err(format!("{} has `fail_times` without `fail`", at()));
                    }
                    (Some(_), Some(_), None) => {
                        return Err(format!(
                            "{} has `fail_times` but no `text` to answer once the failures are \
                             used up",
                            at()
                        ));
                    }
                    (Some(_), None, Some(_)) => {
                        return Err(format!(
                            "{} fails on every attempt, so its `text` is never used; add \
                             `fail_times` or remove `text`",
                            at()
                        ));
                    }
                    _ => {}
                }
                if entry.permanent && entry.fail.is_none() {
                    return Err(format!("{} has `permanent` without `fail`", at()));
                }
            }
        }
        Ok(())
    }
}

mod log;

use log::append_call_log;
pub use log::{
    CallEvent, CallLogEntry, CallLogError, call_log_path, prompt_record_path, read_call_log,
};

#[cfg(test)]
mod tests;
