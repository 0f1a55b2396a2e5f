//! Logins of the agent CLIs, for credential rotation (`[logins]` in gavel.toml).
//!
//! A login is either one of the CLI's config homes (a folder the person signed in from once:
//! `CLAUDE_CONFIG_DIR` for Claude Code, `GEMINI_CLI_HOME` for the Gemini CLI, whose login lives
//! in its `.gemini/`, `CODEX_HOME` for Codex), or a variable holding an API key, whose value
//! the CLI gets in its own key variable (`ANTHROPIC_API_KEY`, `GEMINI_API_KEY`,
//! `CODEX_API_KEY`). With a folder login the CLI's key variable is removed from the child's
//! environment, so the folder's sign-in is what answers. A folder that does not exist or a
//! variable that is not set is skipped; calls rotate through the rest as
//! [`crate::credentials`] describes, and are recorded under the login's name: the folder's
//! path or the variable's name, never a key.

use std::path::PathBuf;

use crate::credentials::Rotation;
use crate::provider::{Call, ProviderError, Response};
use crate::tools::CliTool;

use super::CliSettings;

/// One login of an agent CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// A config home of the CLI (absolute; the caller expands `~`).
    Folder(PathBuf),
    /// The name of a variable holding an API key.
    KeyVar(String),
}

impl Login {
    /// The name calls made with this login are recorded under.
    pub fn name(&self) -> String {
        match self {
            Self::Folder(path) => path.display().to_string(),
            Self::KeyVar(var) => var.clone(),
        }
    }
}

/// What a login changes in a CLI child's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoginEnv {
    pub set: Vec<(String, String)>,
    pub remove: Vec<String>,
}

impl LoginEnv {
    /// `settings` with this login's environment added.
    pub fn apply(&self, mut settings: CliSettings) -> CliSettings {
        settings.env.extend(self.set.iter().cloned());
        settings.env_remove.extend(self.remove.iter().cloned());
        settings
    }
}

/// The environment `login` gives `tool`, or why the login cannot be used now. Variables are
/// read through `lookup` (blank counts as unset).
pub fn login_env(
    tool: &CliTool,
    login: &Login,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<LoginEnv, String> {
    match login {
        Login::Folder(path) if path.is_dir() => Ok(LoginEnv {
            set: vec![(tool.home_env.to_owned(), path.display().to_string())],
            remove: vec![tool.key_env.to_owned()],
        }),
        Login::Folder(_) => Err("no such folder".to_owned()),
        Login::KeyVar(var) => match lookup(var).filter(|v| !v.trim().is_empty()) {
            Some(key) => Ok(LoginEnv {
                set: vec![(tool.key_env.to_owned(), key.trim().to_owned())],
                remove: Vec::new(),
            }),
            None => Err("not set".to_owned()),
        },
    }
}

/// The usable logins of `settings` with their names and environments, or a permanent error
/// that names every login and why it cannot be used.
pub(crate) fn usable(
    tool: &CliTool,
    settings: &CliSettings,
) -> Result<Vec<(String, LoginEnv)>, ProviderError> {
    let lookup = |name: &str| std::env::var(name).ok();
    let mut usable = Vec::new();
    let mut why = Vec::new();
    for login in &settings.logins {
        match login_env(tool, login, &lookup) {
            Ok(env) => usable.push((login.name(), env)),
            Err(reason) => why.push(format!("{} ({reason})", login.name())),
        }
    }
    if usable.is_empty() && !settings.logins.is_empty() {
        return Err(ProviderError::Permanent {
            provider: tool.kind.to_owned(),
            message: format!(
                "none of the {} logins can be used: {}",
                tool.kind,
                why.join(", ")
            ),
            hint: Some(format!(
                "fix `[logins] {}` in gavel.toml: a folder must exist (sign in once with \
                 {}=FOLDER {}), a variable must hold an API key",
                tool.kind, tool.home_env, tool.program
            )),
        });
    }
    Ok(usable)
}

/// Makes a call through `once` under each usable login in turn (see [`crate::credentials`]);
/// without configured logins, once under the CLI's own default sign-in.
pub(crate) fn with_logins(
    tool: &CliTool,
    settings: &CliSettings,
    call: &Call<'_>,
    mut once: impl FnMut(&LoginEnv) -> Result<Response, ProviderError>,
) -> Result<Response, ProviderError> {
    if settings.logins.is_empty() {
        return once(&LoginEnv::default());
    }
    let usable = usable(tool, settings)?;
    let names: Vec<String> = usable.iter().map(|(name, _)| name.clone()).collect();
    Rotation::new(tool.kind, settings.rotation.clone())
        .run(&names, call.cancelled, |i| once(&usable[i].1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::cli_tool;

    fn tool(kind: &str) -> &'static CliTool {
        cli_tool(kind).expect("a CLI kind")
    }

    #[test]
    fn each_login_gives_the_cli_its_config_home_or_its_key_variable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().to_path_buf();
        let folder = Login::Folder(home.clone());
        let shown = home.display().to_string();
        let lookup = |name: &str| (name == "WORK_KEY").then(|| " sk-secret-1 ".to_owned());
        for (kind, home_var, key_var) in [
            ("claude", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"),
            ("gemini", "GEMINI_CLI_HOME", "GEMINI_API_KEY"),
            ("codex", "CODEX_HOME", "CODEX_API_KEY"),
        ] {
            assert_eq!(
                login_env(tool(kind), &folder, &lookup),
                Ok(LoginEnv {
                    set: vec![(home_var.to_owned(), shown.clone())],
                    // The folder's sign-in answers, not a key from gavel's environment.
                    remove: vec![key_var.to_owned()],
                }),
                "{kind}"
            );
            assert_eq!(
                login_env(tool(kind), &Login::KeyVar("WORK_KEY".into()), &lookup),
                Ok(LoginEnv {
                    set: vec![(key_var.to_owned(), "sk-secret-1".to_owned())],
                    remove: Vec::new(),
                }),
                "{kind}"
            );
        }
        let missing = Login::Folder(home.join("absent"));
        assert_eq!(
            login_env(tool("claude"), &missing, &lookup),
            Err("no such folder".to_owned())
        );
        let unset = Login::KeyVar("UNSET_KEY".into());
        assert_eq!(
            login_env(tool("claude"), &unset, &lookup),
            Err("not set".to_owned())
        );
    }

    #[test]
    fn a_login_is_named_by_its_folder_or_variable_never_its_key() {
        assert_eq!(Login::KeyVar("WORK_KEY".into()).name(), "WORK_KEY");
        assert_eq!(
            Login::Folder(PathBuf::from("/home/p/.claude-2")).name(),
            "/home/p/.claude-2"
        );
    }

    #[test]
    fn unusable_logins_are_skipped_and_none_usable_is_a_permanent_error_naming_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = CliSettings {
            logins: vec![
                Login::Folder(dir.path().join("gone")),
                Login::Folder(dir.path().to_path_buf()),
            ],
            ..CliSettings::default()
        };
        let found = usable(tool("codex"), &settings).expect("one usable");
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, [dir.path().display().to_string()]);

        let settings = CliSettings {
            logins: vec![
                Login::Folder(dir.path().join("gone")),
                Login::KeyVar("GAVEL_TEST_SURELY_UNSET_KEY".into()),
            ],
            ..CliSettings::default()
        };
        let err = usable(tool("codex"), &settings).expect_err("none usable");
        let text = err.to_string();
        assert!(!err.is_transient(), "{err:?}");
        assert!(
            text.contains("gone (no such folder)")
                && text.contains("GAVEL_TEST_SURELY_UNSET_KEY (not set)"),
            "{text}"
        );
        assert!(err.hint().is_some_and(|h| h.contains("CODEX_HOME")));
    }
}
