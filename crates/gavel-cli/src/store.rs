//! The store a command works on: this clone's SQLite file, or the team's PostgreSQL database
//! scoped to this repository's project. Commands see a [`gavel_core::Store`] either way; the
//! few things only a shared database has (other projects, whose a run is) are asked here.

use gavel_core::{RunId, RunRecord, Store};
use gavel_exec::git::Git;
use gavel_store::{PgStore, SqliteStore};

use crate::error::CliError;
use crate::settings::Settings;
use crate::settings::storage::{Backend, project_from_remote};

/// An open store of either kind (boxed: the stores are a few hundred bytes each).
#[derive(Debug)]
pub enum AnyStore {
    Sqlite(Box<SqliteStore>),
    Postgres(Box<PgStore>),
}

/// Every [`Store`] method of the open backend: `store.runs()` works on an `AnyStore`, and
/// `&*store` is the `&dyn Store` the engine and workflows take. (A `Store` impl forwarding each
/// method would silently fall back to the trait's defaults for any method it forgot.)
impl std::ops::Deref for AnyStore {
    type Target = dyn Store;

    fn deref(&self) -> &Self::Target {
        match self {
            Self::Sqlite(s) => s.as_ref(),
            Self::Postgres(s) => s.as_ref(),
        }
    }
}

impl AnyStore {
    /// `store` as the SQLite store `settings` configure.
    fn sqlite(store: SqliteStore, settings: &Settings) -> Result<Self, CliError> {
        if settings.fsync {
            store.sync_every_commit()?;
        }
        Ok(Self::Sqlite(Box::new(store)))
    }

    /// Opens the store `settings` name; `create` false opens a SQLite store only if its file
    /// exists (read-only commands create nothing), answering `None` otherwise.
    pub fn open(settings: &Settings, create: bool) -> Result<Option<Self>, CliError> {
        match &settings.backend {
            Backend::Sqlite => {
                let path = settings.db_path();
                if !create && !path.exists() {
                    return Ok(None);
                }
                Ok(Some(Self::sqlite(SqliteStore::open(&path)?, settings)?))
            }
            Backend::Postgres {
                url,
                project,
                reconnect,
            } => {
                let project = match project {
                    Some(p) => p.clone(),
                    None => project_of_clone(settings)?,
                };
                let env = gavel_store::PgEnv::from_process();
                let store = PgStore::open_project(url, &project, &env)
                    .map_err(|e| {
                        CliError::from(e).hint(
                            "check GAVEL_DATABASE_URL or [storage] url, and that the server is up (`gavel doctor` checks it)",
                        )
                    })?;
                Ok(Some(Self::Postgres(Box::new(
                    store.reconnect_for(*reconnect),
                ))))
            }
        }
    }

    /// This store, refusing every write from now on (for readers: `gavel ui`, `gavel report`).
    pub fn read_only(self) -> Result<Self, CliError> {
        Ok(match self {
            Self::Sqlite(s) => {
                s.set_read_only()?;
                Self::Sqlite(s)
            }
            Self::Postgres(p) => Self::Postgres(Box::new(p.into_read_only())),
        })
    }

    /// Opens the store to list every project's runs: a shared database read across projects
    /// (it cannot start runs); a SQLite store holds one project, so it is the usual one.
    pub fn open_every_project(settings: &Settings) -> Result<Option<Self>, CliError> {
        match &settings.backend {
            Backend::Sqlite => Self::open(settings, false),
            Backend::Postgres { url, .. } => {
                let env = gavel_store::PgEnv::from_process();
                let store = PgStore::open_all_projects(url, &env)?;
                Ok(Some(Self::Postgres(Box::new(store))))
            }
        }
    }

    /// Where the runs are, for messages: the database file, or the database and project.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite(s) => s.path().display().to_string(),
            Self::Postgres(s) => match s.project() {
                Some(p) => format!("{} (project {p})", s.shown()),
                None => format!("{} (every project)", s.shown()),
            },
        }
    }

    /// Why run `id` is not in this store, when a shared database has it under another
    /// project: the error for a clone of a different repository.
    pub fn foreign_run(&self, id: RunId) -> Result<Option<CliError>, CliError> {
        let Self::Postgres(pg) = self else {
            return Ok(None);
        };
        let mine = pg.project().unwrap_or_default().to_owned();
        Ok(pg.project_of(id)?.filter(|other| *other != mine).map(|other| {
            CliError::error(format!(
                "run {id} belongs to project `{other}`, not to this clone's `{mine}`"
            ))
            .hint("resume it from a clone of that repository (projects come from the origin remote or [storage] project)")
        }))
    }

    /// The newest `limit` runs, newest first, each with its project when the store reads
    /// every project's.
    pub fn recent(&self, limit: usize) -> Result<Vec<(Option<String>, RunRecord)>, CliError> {
        match self {
            Self::Postgres(pg) if pg.project().is_none() => Ok(pg
                .runs_of_all_projects(u32::try_from(limit).unwrap_or(u32::MAX))?
                .into_iter()
                .map(|(p, r)| (Some(p), r))
                .collect()),
            _ => Ok(self
                .recent_runs(limit)?
                .into_iter()
                .map(|r| (None, r))
                .collect()),
        }
    }
}

impl AnyStore {
    /// Opens the store at `target` for this clone: a PostgreSQL URL (scoped to this clone's
    /// project, as `[storage] project` or the origin remote says) or a SQLite file's path.
    pub fn open_target(settings: &Settings, target: &str) -> Result<Self, CliError> {
        let target = target.trim();
        let is_postgres = target.starts_with("postgres://")
            || target.starts_with("postgresql://")
            || (!target.contains("://") && target.contains('='));
        if !is_postgres {
            if target.contains("://") {
                return Err(CliError::usage(format!(
                    "--to `{}` is neither a PostgreSQL URL nor a file path",
                    gavel_store::redact_url(target)
                )));
            }
            let path = crate::context::absolute(std::path::Path::new(target));
            return Ok(Self::Sqlite(Box::new(SqliteStore::open(&path)?)));
        }
        let project = match &settings.project {
            Some(p) => p.clone(),
            None => project_of_clone(settings)?,
        };
        let env = gavel_store::PgEnv::from_process();
        let store = PgStore::open_project(target, &project, &env)?;
        Ok(Self::Postgres(Box::new(store)))
    }
}

/// This clone's project in a shared database: its `origin` remote, whatever the URL's form.
fn project_of_clone(settings: &Settings) -> Result<String, CliError> {
    let url = Git::at(&settings.repo_root).origin_url().map_err(|_| {
            CliError::error(
                "a shared PostgreSQL store needs to know which repository this is, and this clone has no `origin` remote",
            )
            .hint("set [storage] project = \"NAME\" in gavel.toml, or add the remote: git remote add origin URL")
        })?;
    Ok(project_from_remote(&url))
}
