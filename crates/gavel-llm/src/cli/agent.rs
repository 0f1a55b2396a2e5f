//! What differs between the agent CLIs, as one small trait ([`CliAgent`]): which program it
//! is, the command line, environment and per-call files it gets for a profile, and how to read
//! its stream (text, answering model, usage, cost, tool uses, errors and exit-code traps).
//! Everything else (the prompt on stdin, the working folder, timeouts, login rotation, writing
//! and removing per-call files, progress) is [`super::CliProvider`]'s, the same for every CLI.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::process::ProcessOutput;
use crate::profile::{AgentProfile, ProfileError};
use crate::provider::{AnswerForm, OutputSchema, ProviderError, ToolUse};
use crate::tools::CliTool;

/// One agent CLI.
pub(crate) trait CliAgent: Send + Sync + std::fmt::Debug {
    /// gavel's table entry for the CLI: provider kind, program, install and login hints.
    fn tool(&self) -> &'static CliTool;

    /// How the CLI is started for one call.
    fn invocation(&self, setup: &Setup<'_>) -> Result<Invocation, ProfileError>;

    /// The prompt as written to the CLI's stdin.
    fn stdin(&self, prompt: &str) -> String {
        prompt.to_owned()
    }

    /// Where the CLI runs when neither the profile nor gavel's settings name a folder.
    fn fallback_workdir(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// Whether the CLI takes per-call settings for `profile` from files in its working folder
    /// that differ from a text-only call's. Such a call never runs in gavel's shared agent
    /// folder (a concurrent call there would see them): without a folder of its own it gets a
    /// private one.
    fn settings_in_workdir(&self, profile: &AgentProfile) -> bool {
        let _ = profile;
        false
    }

    /// What the CLI itself writes outside its working folder and the temporary folder (its
    /// configuration, sign-in, sessions, logs), in the child's environment (`var` reads a
    /// variable as the child will see it): what a confined call must leave writable.
    fn state_paths(&self, var: &dyn Fn(&str) -> Option<String>) -> Vec<StatePath> {
        let _ = var;
        Vec::new()
    }

    /// The answer text a stream line adds (for the live token estimate).
    fn streamed_text(&self, line: &Value) -> Option<String>;

    /// The tool uses a stream line reports, each with an id that is the same when the CLI
    /// reports one use twice (started, then completed).
    fn tool_uses(&self, line: &Value) -> Vec<(String, ToolUse)>;

    /// The answer in the finished process's output, or the classified error.
    fn answer(&self, model: &str, out: &ProcessOutput) -> Result<Answer, ProviderError>;

    /// What the output of a run that [`Self::answer`] refused still reports of the work done:
    /// its text, model and usage (an error result carries the usage and cost of the turns it
    /// took), or `None` when it reports no usage. The provider puts it in the spend ledger.
    fn usage(&self, model: &str, out: &ProcessOutput) -> Option<Answer>;
}

/// What an adapter knows when it builds an [`Invocation`].
#[derive(Debug, Clone)]
pub(crate) struct Setup<'a> {
    pub model: &'a str,
    pub profile: &'a AgentProfile,
    /// Where the CLI runs (`None`: gavel's own working directory).
    pub workdir: Option<&'a Path>,
    /// Whether `workdir` is gavel's own agent folder (not a folder the profile chose).
    pub own_workdir: bool,
    /// A private folder for this call's files, removed after it (created only if used).
    pub scratch: &'a Path,
    pub idle_timeout: Duration,
    /// The schema the answer should follow, for a CLI with an option that asks for it.
    pub output_schema: Option<&'a OutputSchema>,
}

impl Setup<'_> {
    /// The profile's edit folder when it differs from the working folder: the CLI must be told
    /// about it separately.
    pub fn extra_edit_folder(&self) -> Option<&Path> {
        self.profile
            .tools
            .edit_folder()
            .filter(|dir| Some(*dir) != self.workdir)
    }
}

/// How to start the CLI for one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// The command line (without the program).
    pub args: Vec<String>,
    /// The environment the adapter adds (before gavel's settings, the profile and the login).
    pub env: Vec<(String, String)>,
    /// Files written before the call.
    pub files: Vec<CallFile>,
    /// How the answer is asked for: [`AnswerForm::Schema`] when the CLI was given the
    /// request's schema.
    pub form: AnswerForm,
}

/// A file written for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallFile {
    pub path: std::path::PathBuf,
    pub contents: String,
    /// Removed after the call (with its folder when gavel created it). An existing file is
    /// only overwritten when its first line is the first line of `contents` (gavel wrote it).
    pub temporary: bool,
}

/// A path an agent CLI writes for its own state, which a confined call leaves writable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StatePath {
    pub path: std::path::PathBuf,
    /// A folder (created when missing) or a single file (left writable only if it exists:
    /// Landlock can only name an existing file).
    pub folder: bool,
}

impl StatePath {
    pub fn folder(path: impl Into<std::path::PathBuf>) -> Self {
        Self {
            path: path.into(),
            folder: true,
        }
    }

    pub fn file(path: impl Into<std::path::PathBuf>) -> Self {
        Self {
            path: path.into(),
            folder: false,
        }
    }
}

/// `$NAME` when set and not empty, else `$HOME/default` (`None` without either).
pub(crate) fn var_or_home(
    var: &dyn Fn(&str) -> Option<String>,
    name: &str,
    default: &str,
) -> Option<std::path::PathBuf> {
    match var(name).filter(|v| !v.is_empty()) {
        Some(v) => Some(v.into()),
        None => home(var).map(|h| h.join(default)),
    }
}

/// `$HOME` in the child's environment, when set and absolute.
pub(crate) fn home(var: &dyn Fn(&str) -> Option<String>) -> Option<std::path::PathBuf> {
    var("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// What a finished call answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Answer {
    pub text: String,
    /// The answering model.
    pub model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

/// The longest tool-use summary kept, in characters.
const SUMMARY_CHARS: usize = 160;

/// A one-line summary of a tool's arguments: the first of the usual fields (a path, a command,
/// a pattern, a URL, a query), else the arguments as JSON; shortened, without control
/// characters.
pub(crate) fn summarize(input: &Value) -> String {
    const KEYS: &[&str] = &[
        "file_path",
        "absolute_path",
        "path",
        "dir_path",
        "command",
        "pattern",
        "url",
        "query",
    ];
    let text = KEYS
        .iter()
        .find_map(|k| input[k].as_str().map(str::to_owned))
        .unwrap_or_else(|| match input {
            Value::Null => String::new(),
            Value::Object(map) if map.is_empty() => String::new(),
            other => other.to_string(),
        });
    one_line(&text)
}

/// `text` on one line (control characters become spaces), at most [`SUMMARY_CHARS`] long.
pub(crate) fn one_line(text: &str) -> String {
    let flat: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= SUMMARY_CHARS {
        return flat;
    }
    let mut short: String = flat.chars().take(SUMMARY_CHARS - 1).collect();
    short.push('…');
    short
}

/// The JSON lines of a CLI's output (other lines, such as warnings, are skipped).
pub(crate) fn json_lines(stdout: &str) -> impl Iterator<Item = Value> + '_ {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
}

/// Variables as a JSON object (an MCP server's `env` in a CLI's settings).
pub(crate) fn env_object(env: &[(String, String)]) -> Value {
    env.iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The owned strings of `items`.
pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// A [`Setup`] for adapter tests: model `m`, a 120 s idle timeout, scratch `/tmp/gavel-call-t`.
#[cfg(test)]
pub(crate) fn test_setup<'a>(
    profile: &'a AgentProfile,
    workdir: &'a Path,
    own_workdir: bool,
) -> Setup<'a> {
    Setup {
        model: "m",
        profile,
        workdir: Some(workdir),
        own_workdir,
        scratch: Path::new("/tmp/gavel-call-t"),
        idle_timeout: Duration::from_secs(120),
        output_schema: None,
    }
}

/// The values after `flag` in a command line, up to the next flag (for adapter tests).
#[cfg(test)]
pub(crate) fn flag_values<'a>(args: &'a [String], flag: &str) -> Vec<&'a str> {
    args.iter()
        .skip_while(|a| *a != flag)
        .skip(1)
        .take_while(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_summary_names_what_the_tool_touched_on_one_short_line() {
        assert_eq!(
            summarize(&json!({"file_path": "/w/src/lib.rs", "old_string": "a"})),
            "/w/src/lib.rs"
        );
        assert_eq!(
            summarize(&json!({"command": "cargo test\n  -p x"})),
            "cargo test   -p x"
        );
        assert_eq!(summarize(&json!({"n": 1})), r#"{"n":1}"#);
        assert_eq!(summarize(&json!({})), "");
        let long = summarize(&json!({"path": "é".repeat(400)}));
        assert_eq!(long.chars().count(), SUMMARY_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(one_line("\u{1b}[31mred"), " [31mred");
    }
}
