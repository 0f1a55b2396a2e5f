//! `[storage]`: where runs are kept. The SQLite file under the state directory by default; a
//! shared PostgreSQL database when `GAVEL_DATABASE_URL` or `[storage] url` names one, with the
//! project (repository) this clone's runs belong to.

use std::time::Duration;

use serde::Deserialize;

use crate::error::CliError;

/// The variable naming a PostgreSQL database, over `[storage] url` (a CI job sets it; a
/// password belongs in it or in `PGPASSWORD`, never in the committed gavel.toml).
pub const DATABASE_URL_ENV: &str = "GAVEL_DATABASE_URL";

/// `[storage]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StorageConfig {
    pub(super) fsync: Option<bool>,
    /// `postgres://...`: keep runs in this PostgreSQL database instead of the SQLite file.
    url: Option<String>,
    /// The project this clone's runs belong to in a shared database (default: from `origin`).
    project: Option<String>,
    /// How long a call waits for a database server that went away (restart, failover).
    reconnect_secs: Option<u64>,
    /// What every run in the store may spend on model calls in a calendar month (UTC).
    pub(super) team_budget_usd: Option<f64>,
}

/// Where runs are kept, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// `state.db` in the state directory.
    Sqlite,
    /// A PostgreSQL database (the URL as given, password included: never print it; show
    /// [`gavel_store::redact_url`] of it).
    Postgres {
        url: String,
        /// `[storage] project`, when set; else the `origin` remote decides.
        project: Option<String>,
        /// `[storage] reconnect_secs`: how long a call waits for a server that went away.
        reconnect: Duration,
    },
}

impl StorageConfig {
    /// `[storage] project`, checked: the project this clone's runs belong to in a shared store.
    pub(super) fn project(&self) -> Result<Option<String>, CliError> {
        match &self.project {
            Some(p) if p.trim().is_empty() || p.chars().any(char::is_control) => {
                Err(CliError::error(format!(
                    "[storage] project `{}` is not a project name",
                    p.escape_debug()
                ))
                .hint("name the repository, for example project = \"github.com/octo/app\""))
            }
            Some(p) => Ok(Some(p.trim().to_owned())),
            None => Ok(None),
        }
    }

    /// The backend, with `env_url` (the value of [`DATABASE_URL_ENV`]) over `[storage] url`.
    pub(super) fn backend(&self, env_url: Option<String>) -> Result<Backend, CliError> {
        let (url, source) = match env_url.filter(|u| !u.trim().is_empty()) {
            Some(url) => (url, DATABASE_URL_ENV.to_owned()),
            None => match &self.url {
                Some(url) => (url.clone(), "[storage] url".to_owned()),
                None => return Ok(Backend::Sqlite),
            },
        };
        let url = url.trim().to_owned();
        let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let is_key_values = !url.contains("://") && url.contains('=');
        if !is_url && !is_key_values {
            return Err(CliError::error(format!(
                "{source} `{}` is not a PostgreSQL URL",
                gavel_store::redact_url(&url)
            ))
            .hint("use postgres://USER@HOST:PORT/DATABASE (a unix socket: postgres://USER@%2Frun%2Fpostgresql/DATABASE)"));
        }
        let project = self.project()?;
        let reconnect = self
            .reconnect_secs
            .map_or(gavel_store::DEFAULT_PG_RECONNECT, Duration::from_secs);
        Ok(Backend::Postgres {
            url,
            project,
            reconnect,
        })
    }
}

/// A repository's identity in a shared store, from its `origin` remote's URL: the same for
/// every clone of it, whichever form the URL takes (`https://github.com/o/r.git`,
/// `git@github.com:o/r`, `ssh://git@github.com/o/r`) and without any credentials.
pub fn project_from_remote(url: &str) -> String {
    if let Ok(repo) = gavel_tracker::github::remote::parse_remote(url) {
        return format!("{}/{}", repo.host, repo.repo);
    }
    // Another host or a path on this machine: drop credentials, a trailing `/` and `.git`.
    let url = url.trim();
    let rest = match url.split_once("://") {
        Some((_, rest)) => match rest.split_once('/') {
            Some((authority, path)) => {
                let host = authority.rsplit('@').next().unwrap_or(authority);
                format!("{host}/{path}")
            }
            None => rest.rsplit('@').next().unwrap_or(rest).to_owned(),
        },
        None => url.to_owned(),
    };
    let rest = rest.trim_end_matches('/');
    rest.strip_suffix(".git").unwrap_or(rest).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> StorageConfig {
        toml::from_str(text).expect("valid toml")
    }

    #[test]
    fn the_environment_wins_over_the_file_and_sqlite_is_the_default() {
        assert_eq!(config("").backend(None).expect("ok"), Backend::Sqlite);
        assert_eq!(
            config("").backend(Some("  ".into())).expect("ok"),
            Backend::Sqlite
        );
        let file = config("url = \"postgres://db/a\"\nproject = \"acme/app\"");
        assert_eq!(
            file.backend(None).expect("ok"),
            Backend::Postgres {
                url: "postgres://db/a".into(),
                project: Some("acme/app".into()),
                reconnect: gavel_store::DEFAULT_PG_RECONNECT,
            }
        );
        assert_eq!(
            file.backend(Some("postgresql://db/b".into())).expect("ok"),
            Backend::Postgres {
                url: "postgresql://db/b".into(),
                project: Some("acme/app".into()),
                reconnect: gavel_store::DEFAULT_PG_RECONNECT,
            }
        );
    }

    #[test]
    fn a_bad_url_is_named_without_its_password() {
        let e = config("url = \"mysql://ann:hunter2@db/a\"")
            .backend(None)
            .expect_err("not postgres");
        assert!(e.message.contains("[storage] url"), "{}", e.message);
        assert!(!e.message.contains("hunter2"), "{}", e.message);
        let e = config("")
            .backend(Some("sqlite.db".into()))
            .expect_err("not postgres");
        assert!(e.message.contains(DATABASE_URL_ENV), "{}", e.message);
        let e = config("url = \"postgres://db/a\"\nproject = \" \"")
            .backend(None)
            .expect_err("empty project");
        assert!(e.message.contains("[storage] project"), "{}", e.message);
    }

    #[test]
    fn every_form_of_one_remote_is_one_project() {
        for url in [
            "https://github.com/octo/app.git",
            "https://ann:ghp_x@github.com/octo/app",
            "git@github.com:octo/app.git",
            "ssh://git@github.com/octo/app",
        ] {
            assert_eq!(project_from_remote(url), "github.com/octo/app", "{url}");
        }
        assert_eq!(
            project_from_remote("https://ann:pw@gitlab.example/group/sub/app.git"),
            "gitlab.example/group/sub/app"
        );
        assert_eq!(project_from_remote("/srv/git/app.git/"), "/srv/git/app");
    }
}
