//! What gavel knows about the agent CLIs and API keys it can use: program names, npm packages,
//! install and login commands, and key variables. `gavel doctor` and the providers' pre-flight
//! checks read this one table, so their advice never disagrees.

use std::path::PathBuf;
use std::time::Duration;

use crate::process::{self, ProcessSpec};

/// An agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CliTool {
    /// The provider kind (`claude`, `gemini`, `codex`).
    pub kind: &'static str,
    /// The program on PATH.
    pub program: &'static str,
    pub name: &'static str,
    pub npm_package: &'static str,
    /// How to log in (or which key the CLI can use instead).
    pub login: &'static str,
    /// The variable naming the CLI's config home, where a login lives (`[logins]` folders).
    pub home_env: &'static str,
    /// The variable the CLI reads an API key from (`[logins]` key variables are passed in it).
    pub key_env: &'static str,
    /// Prefixes of the variables that belong to this CLI (its vendor's key, base URL and
    /// settings): the only credentials its process keeps from gavel's environment
    /// (`gavel_exec::sandbox_env` removes every other vendor's).
    pub own_env: &'static [&'static str],
}

/// The agent CLIs gavel drives.
pub const CLI_TOOLS: &[CliTool] = &[
    CliTool {
        kind: "claude",
        program: "claude",
        name: "Claude Code",
        npm_package: "@anthropic-ai/claude-code",
        login: "run `claude` once and /login, or set ANTHROPIC_API_KEY",
        home_env: "CLAUDE_CONFIG_DIR",
        key_env: "ANTHROPIC_API_KEY",
        own_env: &["ANTHROPIC_", "CLAUDE_", "DISABLE_", "MAX_THINKING_TOKENS"],
    },
    CliTool {
        kind: "gemini",
        program: "gemini",
        name: "Gemini CLI",
        npm_package: "@google/gemini-cli",
        login: "run `gemini` once and sign in, or set GEMINI_API_KEY",
        // The Gemini CLI keeps a login in `$GEMINI_CLI_HOME/.gemini/` (default: the home
        // folder), as its `homedir()` in packages/core/src/utils/paths.ts reads it.
        home_env: "GEMINI_CLI_HOME",
        key_env: "GEMINI_API_KEY",
        own_env: &["GEMINI_", "GOOGLE_"],
    },
    CliTool {
        kind: "codex",
        program: "codex",
        name: "Codex CLI",
        npm_package: "@openai/codex",
        login: "run `codex login`, or set OPENAI_API_KEY",
        home_env: "CODEX_HOME",
        // The key variable `codex exec` documents for API-key sign-in.
        key_env: "CODEX_API_KEY",
        own_env: &["CODEX_", "OPENAI_"],
    },
];

/// The CLI behind a provider kind, if it is one.
pub fn cli_tool(kind: &str) -> Option<&'static CliTool> {
    CLI_TOOLS.iter().find(|t| t.kind == kind)
}

impl CliTool {
    /// The names of gavel's environment variables this CLI's process must not see: all but
    /// the box's allowlist, the CLI's own ([`Self::own_env`]) and `pass` (patterns, see
    /// `gavel_exec::sandbox_env::kept_by_agent`); gavel's own secrets always.
    pub fn env_removed(&self, pass: &[String]) -> Vec<String> {
        let own: Vec<String> = self.own_env.iter().map(|p| format!("{p}*")).collect();
        std::env::vars_os()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .filter(|name| !gavel_exec::sandbox_env::kept_by_agent(name, pass, &own))
            .collect()
    }

    /// The install command.
    pub fn install(&self) -> String {
        format!("npm install -g {}", self.npm_package)
    }

    /// How messages name the CLI: `the Claude Code CLI`, `the Gemini CLI`, `the Codex CLI`
    /// (a name that already ends in "CLI" does not get a second one).
    pub fn display_name(&self) -> String {
        if self.name.ends_with("CLI") {
            format!("the {}", self.name)
        } else {
            format!("the {} CLI", self.name)
        }
    }
}

/// The default variable holding the API key of an HTTP provider kind.
pub fn default_key_env(kind: &str) -> Option<&'static str> {
    match kind {
        "anthropic" => Some("ANTHROPIC_API_KEY"),
        "google" => Some("GEMINI_API_KEY"),
        "openai" | "openai-compatible" => Some("OPENAI_API_KEY"),
        _ => None,
    }
}

/// A CLI as found on this machine.
#[derive(Debug, Clone)]
pub struct Installed {
    pub path: PathBuf,
    /// The first line of `PROGRAM --version`, if it answered within a few seconds.
    pub version: Option<String>,
}

/// Looks for `tool` on PATH and asks its version.
pub fn probe(tool: &CliTool) -> Option<Installed> {
    let path = find_on_path(tool.program)?;
    let spec = ProcessSpec {
        program: path.clone(),
        args: vec!["--version".into()],
        env: vec![],
        env_remove: vec![],
        cwd: None,
        stdin: String::new(),
        idle_timeout: Duration::from_secs(15),
        total_timeout: Duration::from_secs(20),
    };
    let version = process::run(&spec, &|| false, &mut |_| {})
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            o.stdout
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_owned())
        });
    Some(Installed { path, version })
}

/// The full path of `program` on PATH (gavel's one lookup, in [`crate::which`]).
pub use crate::which::find_program as find_on_path;

/// The full path of `program` in the folders of `path` (a PATH value): the CLI a child will
/// find on the PATH it is given.
pub fn find_in(program: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .map(|d| d.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_cli_is_never_called_gemini_cli_cli() {
        // Regression: messages said "the Gemini CLI CLI" and "the Codex CLI CLI".
        let names: Vec<String> = CLI_TOOLS.iter().map(CliTool::display_name).collect();
        assert_eq!(
            names,
            ["the Claude Code CLI", "the Gemini CLI", "the Codex CLI"]
        );
        for tool in CLI_TOOLS {
            let message = crate::cli::not_installed(tool).to_string();
            assert!(!message.contains("CLI CLI"), "{message}");
        }
    }
}
