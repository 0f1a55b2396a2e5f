//! The store a command works on: this clone's SQLite file, or the team's PostgreSQL database
//! scoped to this repository's project. Commands see a [`gavel_core::Store`] either way; the
//! few things only a shared database has (other projects, whose a run is) are asked here.

use gavel_core::{
    Checkpoint, CheckpointMeta, ContentHash, Event, LockInfo, RunId, RunLock, RunRecord, RunStatus,
    Store, StoreError,
};
use gavel_exec::git::Git;
use gavel_store::{PgStore, SqliteStore};

use crate::error::CliError;
use crate::settings::Settings;
use crate::settings::storage::{Backend, project_from_remote};

/// An open store of either kind.
#[derive(Debug)]
pub enum AnyStore {
    Sqlite(SqliteStore),
    Postgres(Box<PgStore>),
}

impl AnyStore {
    fn inner(&self) -> &dyn Store {
        match self {
            Self::Sqlite(s) => s,
            Self::Postgres(s) => s.as_ref(),
        }
    }
}

/// Every [`Store`] method, passed to the open backend.
impl Store for AnyStore {
    fn create_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.inner().create_run(workflow, slug, state, next, now)
    }

    fn create_run_claiming_slug(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.inner()
            .create_run_claiming_slug(workflow, slug, state, next, now)
    }

    fn run(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        self.inner().run(id)
    }

    fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.inner().runs()
    }

    fn recent_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.inner().recent_runs(limit)
    }

    fn spent_in_month(&self, month: &str) -> Result<u64, StoreError> {
        self.inner().spent_in_month(month)
    }

    fn record_audit(&self, line: &str) -> Result<(), StoreError> {
        self.inner().record_audit(line)
    }

    fn audit_lines(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        self.inner().audit_lines(limit)
    }

    fn set_status(
        &self,
        id: RunId,
        status: &RunStatus,
        events: &[Event],
        now: &str,
    ) -> Result<(), StoreError> {
        self.inner().set_status(id, status, events, now)
    }

    fn commit(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
    ) -> Result<(), StoreError> {
        self.inner().commit(cp, events, status)
    }

    fn head(&self, id: RunId) -> Result<Option<Checkpoint>, StoreError> {
        self.inner().head(id)
    }

    fn checkpoints(&self, id: RunId) -> Result<Vec<CheckpointMeta>, StoreError> {
        self.inner().checkpoints(id)
    }

    fn get_write(&self, id: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner().get_write(id, step)
    }

    fn put_write(&self, id: RunId, step: &str, value: &[u8], now: &str) -> Result<(), StoreError> {
        self.inner().put_write(id, step, value, now)
    }

    fn put_write_with_blobs(
        &self,
        id: RunId,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        self.inner()
            .put_write_with_blobs(id, step, value, blobs, now)
    }

    fn journal(&self, id: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.inner().journal(id)
    }

    fn events(&self, id: RunId) -> Result<Vec<Event>, StoreError> {
        self.inner().events(id)
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        self.inner().put_blob(bytes)
    }

    fn put_blob_sharing(
        &self,
        bytes: &[u8],
        similar: &[ContentHash],
    ) -> Result<ContentHash, StoreError> {
        self.inner().put_blob_sharing(bytes, similar)
    }

    fn get_blob(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner().get_blob(hash)
    }

    fn lock(&self, id: RunId, holder: &LockInfo) -> Result<RunLock, StoreError> {
        self.inner().lock(id, holder)
    }

    fn holder(&self, id: RunId) -> Result<Option<LockInfo>, StoreError> {
        self.inner().holder(id)
    }
}

impl AnyStore {
    /// Opens the store `settings` name; `create` false opens a SQLite store only if its file
    /// exists (read-only commands create nothing), answering `None` otherwise.
    pub fn open(settings: &Settings, create: bool) -> Result<Option<Self>, CliError> {
        match &settings.backend {
            Backend::Sqlite => {
                let path = settings.db_path();
                if !create && !path.exists() {
                    return Ok(None);
                }
                let store = SqliteStore::open(&path)?;
                if settings.fsync {
                    store.sync_every_commit()?;
                }
                Ok(Some(Self::Sqlite(store)))
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
                let password = std::env::var("PGPASSWORD").ok();
                let store = PgStore::open_project(url, &project, password.as_deref())
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

    /// Opens the store to list every project's runs: a shared database read across projects
    /// (it cannot start runs); a SQLite store holds one project, so it is the usual one.
    pub fn open_every_project(settings: &Settings) -> Result<Option<Self>, CliError> {
        match &settings.backend {
            Backend::Sqlite => Self::open(settings, false),
            Backend::Postgres { url, .. } => {
                let password = std::env::var("PGPASSWORD").ok();
                let store = PgStore::open_all_projects(url, password.as_deref())?;
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
            return Ok(Self::Sqlite(SqliteStore::open(&crate::context::absolute(
                std::path::Path::new(target),
            ))?));
        }
        let project = match &settings.project {
            Some(p) => p.clone(),
            None => project_of_clone(settings)?,
        };
        let password = std::env::var("PGPASSWORD").ok();
        let store = PgStore::open_project(target, &project, password.as_deref())?;
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
