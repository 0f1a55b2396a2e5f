//! Finding the GitHub token: `GH_TOKEN`, then `GITHUB_TOKEN`, then `gh auth token` when the gh
//! CLI is installed and logged in (the order gh itself uses).
//!
//! The token is held in a [`Token`] whose `Debug` and `Display` never show it, so no log line,
//! error, checkpoint or lineage file can carry it by accident; only the HTTP layer reads it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use gavel_exec::process::{self, ProcessSpec};

/// A GitHub token and where it came from.
#[derive(Clone)]
pub struct Token {
    secret: String,
    /// `GH_TOKEN`, `GITHUB_TOKEN` or `gh auth token`: for messages.
    pub source: String,
}

impl Token {
    /// A token from `source` (for tests and callers that found one themselves).
    pub fn new(secret: impl Into<String>, source: impl Into<String>) -> Self {
        Self {
            secret: secret.into(),
            source: source.into(),
        }
    }

    /// The secret, for the `Authorization` header only.
    pub(super) fn expose(&self) -> &str {
        &self.secret
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(from {}, redacted)", self.source)
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the token from {}", self.source)
    }
}

/// Where to look for a token.
pub struct TokenLookup<'a> {
    /// Reads an environment variable (the process environment in production).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The `gh` program, when it is on the PATH.
    pub gh: Option<PathBuf>,
    /// The host gh is asked about (`github.com`, or a GitHub Enterprise host).
    pub host: String,
}

/// Why no token was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoToken {
    /// What was tried, for the message.
    pub tried: Vec<String>,
}

impl fmt::Display for NoToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no GitHub token found (tried {}); run `gh auth login`, or set GH_TOKEN to a token that can create issues",
            self.tried.join(", ")
        )
    }
}

/// The first token found, in gh's order.
pub fn find_token(lookup: &TokenLookup<'_>) -> Result<Token, NoToken> {
    let mut tried = Vec::new();
    for var in ["GH_TOKEN", "GITHUB_TOKEN"] {
        match (lookup.env)(var) {
            Some(v) if !v.trim().is_empty() => return Ok(Token::new(v.trim(), var)),
            _ => tried.push(format!("{var} (not set)")),
        }
    }
    let Some(gh) = &lookup.gh else {
        tried.push("`gh auth token` (gh is not installed)".into());
        return Err(NoToken { tried });
    };
    match gh_token(gh, &lookup.host) {
        Ok(token) => Ok(Token::new(token, "`gh auth token`")),
        Err(why) => {
            tried.push(format!(
                "`gh auth token --hostname {}` ({why})",
                lookup.host
            ));
            Err(NoToken { tried })
        }
    }
}

/// Asks gh for its token for `host`. gh prints the token and nothing else; anything it says
/// on stderr is about why it has none, and is never the token.
fn gh_token(gh: &std::path::Path, host: &str) -> Result<String, String> {
    let spec = ProcessSpec {
        program: gh.to_path_buf(),
        args: vec![
            "auth".into(),
            "token".into(),
            "--hostname".into(),
            host.into(),
        ],
        env: Vec::new(),
        // gh would answer with these itself; they were already found unset or empty.
        env_remove: vec!["GH_TOKEN".into(), "GITHUB_TOKEN".into()],
        cwd: None,
        stdin: String::new(),
        idle_timeout: Duration::from_secs(10),
        total_timeout: Duration::from_secs(10),
    };
    let out = process::run(&spec, &|| false, &mut |_| {}).map_err(|e| e.to_string())?;
    let token = out.stdout.trim();
    if !out.status.success() || token.is_empty() {
        let said = out.stderr.trim();
        return Err(if said.is_empty() {
            "gh is not logged in".into()
        } else {
            format!("gh says: {}", said.lines().next().unwrap_or(said))
        });
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn gh_token_wins_over_github_token_and_blank_is_unset() {
        let env = env_of(&[("GH_TOKEN", "a"), ("GITHUB_TOKEN", "b")]);
        let lookup = TokenLookup {
            env: &env,
            gh: None,
            host: "github.com".into(),
        };
        let t = find_token(&lookup).expect("token");
        assert_eq!((t.expose(), t.source.as_str()), ("a", "GH_TOKEN"));
        let env = env_of(&[("GH_TOKEN", "  "), ("GITHUB_TOKEN", "b")]);
        let lookup = TokenLookup {
            env: &env,
            gh: None,
            host: "github.com".into(),
        };
        assert_eq!(find_token(&lookup).expect("token").source, "GITHUB_TOKEN");
    }

    #[test]
    fn no_token_says_what_was_tried_and_what_to_do() {
        let env = env_of(&[]);
        let lookup = TokenLookup {
            env: &env,
            gh: None,
            host: "github.com".into(),
        };
        let e = find_token(&lookup).expect_err("none").to_string();
        assert!(e.contains("GH_TOKEN (not set)"), "{e}");
        assert!(e.contains("gh is not installed"), "{e}");
        assert!(e.contains("gh auth login"), "{e}");
    }

    #[test]
    fn the_secret_is_never_formatted() {
        let t = Token::new("ghp_SECRET", "GH_TOKEN");
        assert!(!format!("{t:?} {t}").contains("SECRET"));
    }
}
