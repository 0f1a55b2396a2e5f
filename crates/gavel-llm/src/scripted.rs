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
//! The script is re-read on every call, so it can be edited between runs of a long demo.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::provider::{Provider, ProviderError, Request, Response, Role};

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
}

impl ScriptedProvider {
    /// A provider reading the script at `path` (used as given, not resolved against anything).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let label = format!("scripted:{}", path.display());
        Self { path, label }
    }

    pub(crate) fn with_label(path: PathBuf, label: String) -> Self {
        Self { path, label }
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

    fn preflight(&self) -> Result<(), ProviderError> {
        Script::load(&self.path)
            .map(drop)
            .map_err(|e| self.script_error(&e))
    }

    fn complete(
        &self,
        req: &Request,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Response, ProviderError> {
        let script = Script::load(&self.path).map_err(|e| self.script_error(&e))?;
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
                return Err(if entry.permanent {
                    Self::permanent(failure.clone(), None)
                } else {
                    ProviderError::Transient {
                        provider: PROVIDER.to_owned(),
                        message: failure.clone(),
                    }
                });
            }
        }

        // `Script::load` guarantees an entry that can succeed has text.
        let text = entry.text.clone().unwrap_or_default();
        self.log(req, CallEvent::Finish)?;
        Ok(Response {
            input_tokens: Some(approximate_tokens(&req.prompt)),
            output_tokens: Some(approximate_tokens(&text)),
            text,
            provider: PROVIDER.to_owned(),
            model: script.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
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
        match role {
            Role::Drafter => &self.drafter,
            Role::Reviewer => &self.reviewer,
        }
    }

    /// Rejects entries whose keys contradict each other, so a script never silently ignores a
    /// field its author expected to matter.
    fn validate(&self) -> Result<(), String> {
        for role in [Role::Drafter, Role::Reviewer] {
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

/// What happened to a call, as recorded in the call log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallEvent {
    /// The call began (written before any scripted delay).
    Start,
    /// The call returned an answer.
    Finish,
    /// The call returned a scripted failure.
    Fail,
}

/// One line of the call log: `{"role":"drafter","seq":0,"event":"start","pid":123}`.
///
/// A `Start` with no later `Finish` or `Fail` for the same `(role, seq)` is a call that was
/// cancelled or whose process died.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallLogEntry {
    pub role: Role,
    pub seq: u32,
    pub event: CallEvent,
    /// The process that made the call.
    pub pid: u32,
}

/// Why the call log could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CallLogError {
    #[error("cannot read call log {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write call log {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("call log {} line {line} is not a call record", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
}

/// Where a recorded prompt goes (`record_prompts: true`): `<script>.prompts/{role}-{seq}.md`.
pub fn prompt_record_path(script: &Path, role: Role, seq: u32) -> PathBuf {
    let mut dir = OsString::from(script.as_os_str());
    dir.push(".prompts");
    PathBuf::from(dir).join(format!("{role}-{seq}.md"))
}

/// Where the call log of `script` lives: `<script>.calls.jsonl`.
pub fn call_log_path(script: &Path) -> PathBuf {
    let mut path = OsString::from(script.as_os_str());
    path.push(".calls.jsonl");
    PathBuf::from(path)
}

/// Reads every call logged for `script`, oldest first. No log yet means no calls: an empty list.
pub fn read_call_log(script: &Path) -> Result<Vec<CallLogEntry>, CallLogError> {
    let path = call_log_path(script);
    let contents = match fs::read_to_string(&path) {
        Ok(contents) => contents,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(CallLogError::Read { path, source }),
    };
    contents
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|source| CallLogError::Parse {
                path: path.clone(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

/// Appends one event with a single `write_all` of a whole line in append mode, so lines from
/// concurrent processes never interleave.
fn append_call_log(
    script: &Path,
    role: Role,
    seq: u32,
    event: CallEvent,
) -> Result<(), CallLogError> {
    let path = call_log_path(script);
    let entry = CallLogEntry {
        role,
        seq,
        event,
        pid: std::process::id(),
    };
    let write = || -> io::Result<()> {
        let mut line = serde_json::to_string(&entry).map_err(io::Error::other)?;
        line.push('\n');
        let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
        file.write_all(line.as_bytes())?;
        file.flush()
    };
    write().map_err(|source| CallLogError::Write {
        path: path.clone(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        script: PathBuf,
        provider: ScriptedProvider,
    }

    fn fixture(yaml: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.yaml");
        fs::write(&script, yaml).unwrap();
        let provider = ScriptedProvider::new(&script);
        Fixture {
            _dir: dir,
            script,
            provider,
        }
    }

    fn request(role: Role, seq: u32) -> Request {
        Request {
            role,
            prompt: "write the plan please".into(),
            seq,
            step_id: "step".into(),
        }
    }

    fn call(f: &Fixture, role: Role, seq: u32) -> Result<Response, ProviderError> {
        f.provider.complete(&request(role, seq), &|| false)
    }

    fn events(f: &Fixture) -> Vec<(Role, u32, CallEvent)> {
        read_call_log(&f.script)
            .unwrap()
            .into_iter()
            .map(|e| (e.role, e.seq, e.event))
            .collect()
    }

    const TWO_EACH: &str = "\
drafter:
  - text: |
      # First draft
      body
  - text: second draft
reviewer:
  - text: looks good
  - text: ship it
";

    #[test]
    fn answers_follow_seq_per_role_not_call_order() {
        let f = fixture(TWO_EACH);
        assert_eq!(call(&f, Role::Reviewer, 1).unwrap().text, "ship it");
        assert_eq!(call(&f, Role::Drafter, 1).unwrap().text, "second draft");
        assert_eq!(
            call(&f, Role::Drafter, 0).unwrap().text,
            "# First draft\nbody\n"
        );
        assert_eq!(call(&f, Role::Reviewer, 0).unwrap().text, "looks good");
        // Asking again for the same seq gives the same answer.
        assert_eq!(call(&f, Role::Drafter, 1).unwrap().text, "second draft");
    }

    #[test]
    fn response_reports_provider_model_and_approximate_tokens() {
        let f = fixture(TWO_EACH);
        let response = call(&f, Role::Drafter, 0).unwrap();
        assert_eq!(
            response,
            Response {
                text: "# First draft\nbody\n".into(),
                provider: "scripted".into(),
                model: "scripted".into(),
                input_tokens: Some(4),
                output_tokens: Some(4),
            }
        );
        let f = fixture("model: scripted-model-1\nreviewer:\n  - text: ok\n");
        assert_eq!(
            call(&f, Role::Reviewer, 0).unwrap().model,
            "scripted-model-1"
        );
    }

    #[test]
    fn exhausted_script_is_a_permanent_error_naming_the_counts() {
        let f = fixture(TWO_EACH);
        let err = call(&f, Role::Drafter, 2).unwrap_err();
        let ProviderError::Permanent { message, hint, .. } = &err else {
            panic!("expected Permanent, got {err:?}");
        };
        assert_eq!(
            message,
            "script has only 2 drafter responses; call #3 asked for more"
        );
        assert!(hint.as_deref().unwrap().contains("script.yaml"));
        let f = fixture("drafter:\n  - text: x\n");
        let err = call(&f, Role::Reviewer, 0).unwrap_err();
        assert!(
            err.to_string()
                .contains("script has only 0 reviewer responses; call #1 asked for more"),
            "{err}"
        );
    }

    #[test]
    fn fail_times_fails_that_many_attempts_then_answers() {
        let f =
            fixture("drafter:\n  - fail: 503 overloaded\n    fail_times: 2\n    text: finally\n");
        for _ in 0..2 {
            let err = call(&f, Role::Drafter, 0).unwrap_err();
            assert!(err.is_transient(), "{err:?}");
            assert_eq!(
                err.to_string(),
                "scripted call failed (transient): 503 overloaded"
            );
        }
        assert_eq!(call(&f, Role::Drafter, 0).unwrap().text, "finally");
        assert_eq!(call(&f, Role::Drafter, 0).unwrap().text, "finally");
    }

    #[test]
    fn fail_times_counts_failures_of_the_same_role_and_seq_only() {
        let f = fixture(
            "drafter:\n  - fail: boom\n    fail_times: 1\n    text: d0\n\
             reviewer:\n  - fail: boom\n    fail_times: 1\n    text: r0\n",
        );
        assert!(call(&f, Role::Drafter, 0).is_err());
        // The drafter's failure does not use up the reviewer's.
        assert!(call(&f, Role::Reviewer, 0).is_err());
        assert_eq!(call(&f, Role::Reviewer, 0).unwrap().text, "r0");
        assert_eq!(call(&f, Role::Drafter, 0).unwrap().text, "d0");
    }

    #[test]
    fn fail_without_fail_times_fails_every_attempt() {
        let f = fixture("drafter:\n  - fail: 503 overloaded\n");
        for _ in 0..3 {
            assert!(call(&f, Role::Drafter, 0).unwrap_err().is_transient());
        }
    }

    #[test]
    fn permanent_failure_is_permanent() {
        let f = fixture("drafter:\n  - fail: 401 invalid api key\n    permanent: true\n");
        let err = call(&f, Role::Drafter, 0).unwrap_err();
        let ProviderError::Permanent {
            provider, message, ..
        } = &err
        else {
            panic!("expected Permanent, got {err:?}");
        };
        assert_eq!(provider, "scripted");
        assert_eq!(message, "401 invalid api key");
        assert_eq!(err.to_string(), "scripted call failed: 401 invalid api key");
    }

    #[test]
    fn delay_waits_before_answering() {
        let f = fixture("drafter:\n  - text: slow\n    delay_ms: 100\n");
        let started = Instant::now();
        assert_eq!(call(&f, Role::Drafter, 0).unwrap().text, "slow");
        assert!(started.elapsed() >= Duration::from_millis(100));
    }

    #[test]
    fn cancel_during_delay_returns_promptly_and_logs_no_finish() {
        let f = fixture("drafter:\n  - text: slow\n    delay_ms: 10000\n");
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(50));
                flag.store(true, Ordering::SeqCst);
            })
        };
        let started = Instant::now();
        let result = f
            .provider
            .complete(&request(Role::Drafter, 0), &|| flag.load(Ordering::SeqCst));
        setter.join().unwrap();
        assert!(
            matches!(result, Err(ProviderError::Cancelled)),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(events(&f), vec![(Role::Drafter, 0, CallEvent::Start)]);
    }

    #[test]
    fn already_cancelled_call_does_not_start() {
        let f = fixture(TWO_EACH);
        let result = f.provider.complete(&request(Role::Drafter, 0), &|| true);
        assert!(matches!(result, Err(ProviderError::Cancelled)));
        assert!(events(&f).is_empty());
    }

    #[test]
    fn call_log_records_start_then_finish_or_fail() {
        let f = fixture(
            "drafter:\n  - text: a\n  - fail: x\n    fail_times: 1\n    text: b\nreviewer:\n  - text: r\n",
        );
        assert_eq!(
            call_log_path(&f.script),
            f.script.with_file_name("script.yaml.calls.jsonl")
        );
        call(&f, Role::Drafter, 0).unwrap();
        call(&f, Role::Drafter, 1).unwrap_err();
        call(&f, Role::Drafter, 1).unwrap();
        call(&f, Role::Reviewer, 0).unwrap();
        use CallEvent::{Fail, Finish, Start};
        use Role::{Drafter, Reviewer};
        assert_eq!(
            events(&f),
            vec![
                (Drafter, 0, Start),
                (Drafter, 0, Finish),
                (Drafter, 1, Start),
                (Drafter, 1, Fail),
                (Drafter, 1, Start),
                (Drafter, 1, Finish),
                (Reviewer, 0, Start),
                (Reviewer, 0, Finish),
            ]
        );
        let raw = fs::read_to_string(call_log_path(&f.script)).unwrap();
        let first = raw.lines().next().unwrap();
        assert_eq!(
            first,
            format!(
                r#"{{"role":"drafter","seq":0,"event":"start","pid":{}}}"#,
                std::process::id()
            )
        );
        assert!(raw.ends_with('\n'));
    }

    #[test]
    fn missing_call_log_reads_as_no_calls() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_call_log(&dir.path().join("none.yaml"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn corrupt_call_log_names_file_and_line() {
        let f = fixture(TWO_EACH);
        call(&f, Role::Drafter, 0).unwrap();
        let log = call_log_path(&f.script);
        let mut file = OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(b"not json\n").unwrap();
        let err = read_call_log(&f.script).unwrap_err();
        assert!(
            matches!(err, CallLogError::Parse { line: 3, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("script.yaml.calls.jsonl"));
    }

    #[test]
    fn unknown_yaml_key_is_an_error_naming_file_and_key() {
        for yaml in [
            "drafter:\n  - text: a\n    delay: 5\n",
            "drafters:\n  - text: a\n",
        ] {
            let f = fixture(yaml);
            let err = f.provider.preflight().unwrap_err();
            let message = err.to_string();
            assert!(message.contains("script.yaml"), "{message}");
            let key = if yaml.starts_with("drafters") {
                "drafters"
            } else {
                "delay"
            };
            assert!(message.contains(key), "{message}");
            // Calls fail the same way, and before anything is logged.
            assert!(matches!(
                call(&f, Role::Drafter, 0),
                Err(ProviderError::Permanent { .. })
            ));
            assert!(events(&f).is_empty());
        }
    }

    #[test]
    fn preflight_reports_missing_script() {
        let dir = tempfile::tempdir().unwrap();
        let provider = ScriptedProvider::new(dir.path().join("absent.yaml"));
        let err = provider.preflight().unwrap_err();
        let ProviderError::Permanent { message, hint, .. } = &err else {
            panic!("expected Permanent, got {err:?}");
        };
        assert!(message.contains("cannot read script"), "{message}");
        assert!(message.contains("absent.yaml"), "{message}");
        assert!(hint.as_deref().unwrap().contains("absent.yaml"));
    }

    #[test]
    fn preflight_accepts_valid_script() {
        fixture(TWO_EACH).provider.preflight().unwrap();
    }

    #[test]
    fn contradictory_entries_are_rejected() {
        for (yaml, expected) in [
            ("drafter:\n  - delay_ms: 5\n", "neither `text` nor `fail`"),
            (
                "drafter:\n  - text: a\n    fail_times: 1\n",
                "`fail_times` without `fail`",
            ),
            (
                "drafter:\n  - fail: x\n    fail_times: 1\n",
                "no `text` to answer",
            ),
            (
                "drafter:\n  - fail: x\n    text: never\n",
                "its `text` is never used",
            ),
            (
                "reviewer:\n  - text: a\n    permanent: true\n",
                "`permanent` without `fail`",
            ),
        ] {
            let err = fixture(yaml).provider.preflight().unwrap_err();
            let message = err.to_string();
            assert!(message.contains(expected), "{yaml}: {message}");
            assert!(message.contains("script.yaml"), "{message}");
        }
    }

    #[test]
    fn describe_names_the_script() {
        let provider = ScriptedProvider::new("demo.yaml");
        assert_eq!(provider.describe(), "scripted:demo.yaml");
        assert_eq!(provider.path(), Path::new("demo.yaml"));
    }
}
