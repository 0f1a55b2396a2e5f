//! The environment of boxed processes: an allowlist, never gavel's own.
//!
//! gavel's environment holds what the model's code must never see: the team store's URL with
//! its password (`GAVEL_DATABASE_URL`, libpq's `PG*`), a GitHub token, the vendors' API keys.
//! A test a model wrote that reads them can forge the run's state in the store or file issues
//! as the person. So a boxed process (a test or lint command, an agent CLI) gets only the
//! variables on [`ALLOWED`] (and those beginning with [`ALLOWED_PREFIXES`]), those the person
//! adds with `[implement] pass_env`, and the ones the caller sets itself (an agent CLI's own
//! credential, `TMPDIR`). Whatever else is in gavel's environment is removed
//! ([`removed_names`]). gavel's own secrets cannot be passed even when asked
//! ([`never_passed`]).

/// Variables every boxed process keeps: where programs are, who and where the person is, the
/// terminal, the locale and time zone, and where the tool chains live (without which a test
/// command finds no compiler or interpreter), plus TLS trust settings and proxies.
pub const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    // Rust
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    // Go
    "GOPATH",
    "GOROOT",
    "GOMODCACHE",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "GOPROXY",
    "GONOSUMDB",
    "GOPRIVATE",
    // Python
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "CONDA_PREFIX",
    // Node
    "NODE_PATH",
    "NVM_DIR",
    // Java
    "JAVA_HOME",
];

/// Prefixes of variables every boxed process keeps (the locale's categories).
pub const ALLOWED_PREFIXES: &[&str] = &["LC_"];

/// Why `name` is gavel's own and never enters any box, whatever `[implement] pass_env` says:
/// gavel's settings and store (`GAVEL_*`), libpq's connection settings (`PG*`) and the GitHub
/// tokens gavel files issues with. `None`: not gavel's own.
pub fn gavels_own(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if upper.starts_with("GAVEL_") {
        Some("gavel's own settings and store credentials stay with gavel")
    } else if upper.starts_with("PG") {
        Some("PostgreSQL connection settings (libpq's PG* variables) stay with gavel")
    } else if matches!(
        upper.as_str(),
        "GH_TOKEN" | "GITHUB_TOKEN" | "GH_ENTERPRISE_TOKEN" | "GITHUB_ENTERPRISE_TOKEN"
    ) {
        Some("the GitHub token gavel files issues with stays with gavel")
    } else {
        None
    }
}

/// Why `name` may never be passed into a test or lint run, even when `[implement] pass_env`
/// names it: [`gavels_own`], and any variable named as a key, token, secret or password
/// (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`). (An agent CLI may get such a variable
/// when `pass_env` names it: see [`kept_by_agent`].) `None`: it may be passed.
pub fn never_passed(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if let Some(why) = gavels_own(name) {
        Some(why)
    } else if upper.ends_with("_API_KEY")
        || upper.ends_with("_TOKEN")
        || upper.ends_with("_SECRET")
        || upper.contains("PASSWORD")
        || upper.contains("SECRET_KEY")
    {
        Some("credentials never enter the box (an agent CLI gets its own key from gavel)")
    } else {
        None
    }
}

/// Whether `name` matches one of `patterns`: a name, or a prefix ending in `*` (`MY_APP_*`).
pub fn matches(name: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == p,
    })
}

/// Whether a boxed process keeps `name`: it is on [`ALLOWED`], begins with one of
/// [`ALLOWED_PREFIXES`], or matches `pass` (see [`matches`]); and [`never_passed`] does not
/// refuse it.
pub fn kept(name: &str, pass: &[String]) -> bool {
    if never_passed(name).is_some() {
        return false;
    }
    ALLOWED.contains(&name)
        || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
        || matches(name, pass)
}

/// Whether an agent CLI's process keeps `name`: never [`gavels_own`]; always one of the CLI's
/// own variables (`own`: patterns, see [`matches`]) and the allowlist; and what `pass` names
/// explicitly, credentials included (a CLI configured to read its key from a variable of its
/// own choosing). Any other key, token or secret stays out.
pub fn kept_by_agent(name: &str, pass: &[String], own: &[String]) -> bool {
    if gavels_own(name).is_some() {
        return false;
    }
    matches(name, own) || matches(name, pass) || kept(name, &[])
}

/// The names of this process's variables that a boxed process must not inherit: every one
/// that is not [`kept`]. Put them in a [`crate::process::ProcessSpec::env_remove`]; variables
/// the caller sets itself (in `env`) are set after the removal.
pub fn removed_names(pass: &[String]) -> Vec<String> {
    removed_from(std::env::vars_os().map(|(k, _)| k), pass)
}

/// [`removed_names`] over the given variable names (tests pass their own).
pub fn removed_from(
    names: impl IntoIterator<Item = std::ffi::OsString>,
    pass: &[String],
) -> Vec<String> {
    names
        .into_iter()
        .filter_map(|k| match k.into_string() {
            Ok(name) if kept(&name, pass) => None,
            Ok(name) => Some(name),
            // A name that is not UTF-8 cannot be on the allowlist; removing it needs its
            // name as a String, which it has not: such variables are rare enough that the
            // lossy form is removed (and the original stays). Name them for what they are.
            Err(raw) => Some(raw.to_string_lossy().into_owned()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_removed_and_tool_chains_kept() {
        let names = [
            "PATH",
            "HOME",
            "LC_ALL",
            "CARGO_HOME",
            "GAVEL_DATABASE_URL",
            "PGPASSWORD",
            "PGHOST",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "MY_APP_MODE",
            "RANDOM_THING",
        ];
        let removed = removed_from(names.iter().map(Into::into), &["MY_APP_*".to_owned()]);
        assert_eq!(
            removed,
            [
                "GAVEL_DATABASE_URL",
                "PGPASSWORD",
                "PGHOST",
                "GH_TOKEN",
                "GITHUB_TOKEN",
                "ANTHROPIC_API_KEY",
                "OPENAI_API_KEY",
                "AWS_SECRET_ACCESS_KEY",
                "RANDOM_THING",
            ]
        );
    }

    #[test]
    fn pass_env_cannot_let_gavels_secrets_in() {
        let pass = [
            "GAVEL_DATABASE_URL".to_owned(),
            "PG*".to_owned(),
            "GITHUB_TOKEN".to_owned(),
        ];
        for name in ["GAVEL_DATABASE_URL", "PGPASSWORD", "GITHUB_TOKEN"] {
            assert!(!kept(name, &pass), "{name}");
            assert!(never_passed(name).is_some(), "{name}");
        }
        assert!(kept("PYTEST_ADDOPTS", &["PYTEST_*".to_owned()]));
        assert!(!kept("PYTEST_ADDOPTS", &[]));
    }

    #[test]
    fn an_agent_keeps_its_own_and_a_named_credential_never_gavels() {
        let own = ["ANTHROPIC_*".to_owned(), "CLAUDE_*".to_owned()];
        let pass = ["AZURE_OPENAI_API_KEY".to_owned(), "GITHUB_TOKEN".to_owned()];
        assert!(kept_by_agent("ANTHROPIC_API_KEY", &[], &own));
        assert!(kept_by_agent("PATH", &[], &own));
        assert!(
            !kept_by_agent("OPENAI_API_KEY", &[], &own),
            "another vendor's key"
        );
        assert!(
            kept_by_agent("AZURE_OPENAI_API_KEY", &pass, &own),
            "named on purpose"
        );
        assert!(!kept("AZURE_OPENAI_API_KEY", &pass), "never a test's");
        for name in ["GITHUB_TOKEN", "GAVEL_DATABASE_URL", "PGPASSWORD"] {
            assert!(!kept_by_agent(name, &pass, &own), "{name}");
        }
    }
}
