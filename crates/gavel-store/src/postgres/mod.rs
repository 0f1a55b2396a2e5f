//! The PostgreSQL store a team shares: every run of every clone in one database.
//!
//! It keeps the SQLite store's promises with PostgreSQL's tools. Each write is one transaction
//! that first locks its run's row (`SELECT ... FOR UPDATE`), so a checkpoint, its events and the
//! run's status land together or not at all and two writers of one run queue up instead of
//! interleaving; creating a run while claiming its slug holds a transaction-level advisory lock,
//! so exactly one of several machines gets the slug. Blobs go through the same codec as SQLite's
//! ([`crate::blobs`]): same content addressing, same deltas. Run locks are session-level advisory
//! locks on a connection of their own ([`lock`]), so the server frees them the moment their
//! holder's connection drops, a `kill -9` included.
//!
//! One [`PgStore`] holds one connection behind a mutex. A connection the server dropped (a
//! restart) is replaced on the next call, so a long-lived process recovers once the server is
//! back; the call that met the dead connection fails and says so. The URL's password is never
//! shown: errors and [`PgStore::shown`] use [`redact`].

mod batch;
mod commit;
mod events;
mod find;
mod journal;
mod ledgers;
mod lock;
mod schema;
mod store;
mod tls;
mod tx;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use gavel_core::StoreError;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::blobs::Blobs;

pub use tls::PgEnv;
pub(crate) use tx::Tx;

/// How long connecting may take before gavel says the server cannot be reached.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a call waits for a server that went away (a restart, a failover) by default.
pub const DEFAULT_RECONNECT_FOR: Duration = Duration::from_secs(30);

/// How many times a write is tried when PostgreSQL aborts it for a deadlock or a serialization
/// failure (both mean "try again", never "this is wrong").
const WRITE_ATTEMPTS: u32 = 4;

/// A [`gavel_core::Store`] in a PostgreSQL database.
pub struct PgStore {
    config: Config,
    /// The TLS connector, or `None` when connections are plain (`sslmode=disable`, a socket).
    tls: Option<MakeRustlsConnect>,
    shown: String,
    /// How long a call keeps reconnecting to a server that went away before it fails.
    reconnect_for: Duration,
    /// The repository this store's runs belong to: every query is scoped to it. `None`: every
    /// project's runs, read-only ([`Self::open_all_projects`]).
    project: Option<String>,
    conn: Mutex<Option<Conn>>,
    blobs: Blobs,
    /// The head of each run this store last wrote, for a step's one-statement write.
    heads: commit::Heads,
    /// The run locks this process holds through this store, to take again after a restart.
    held: Mutex<Vec<lock::HeldLock>>,
}

/// One open connection and the statements prepared on it.
pub(crate) struct Conn {
    client: Client,
    stmts: HashMap<&'static str, Statement>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.shown)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db?...`, or the
    /// `key=value` form) and brings its schema up to date, refusing one newer than this gavel.
    /// Its runs belong to the unnamed project `""`; see [`Self::open_project`].
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_project(url, "", &PgEnv::default())
    }

    /// Like [`Self::open_project`], reading the runs of every project; it cannot start runs.
    pub fn open_all_projects(url: &str, env: &PgEnv) -> Result<Self, StoreError> {
        Self::open_scoped(url, None, env)
    }

    /// Like [`Self::open`], for the runs of `project` only (a repository's identity, such as
    /// `github.com/octo/app`): it lists, reads and drives no other project's runs. `env` holds
    /// libpq's variables for what the URL does not say (the password, TLS: see [`tls`]).
    pub fn open_project(url: &str, project: &str, env: &PgEnv) -> Result<Self, StoreError> {
        Self::open_scoped(url, Some(project), env)
    }

    /// This store, refusing every write from now on: its sessions run read-only transactions
    /// (`default_transaction_read_only`), so a reader such as `gavel ui` changes nothing even
    /// through a bug.
    pub fn into_read_only(mut self) -> Self {
        let options = match self.config.get_options() {
            Some(o) if !o.trim().is_empty() => format!("{o} -c default_transaction_read_only=on"),
            _ => "-c default_transaction_read_only=on".to_owned(),
        };
        self.config.options(&options);
        // The next call connects again, with the option.
        *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self
    }

    fn open_scoped(url: &str, project: Option<&str>, env: &PgEnv) -> Result<Self, StoreError> {
        let shown = redact(url);
        let refuse = |why: String| StoreError::Backend {
            message: format!("PostgreSQL at {shown}: {why}"),
            source: None,
        };
        let (rest, tls) = tls::split(url, env).map_err(refuse)?;
        let mut config: Config = rest.parse().map_err(|e| StoreError::Backend {
            message: format!("`{shown}` is not a PostgreSQL URL: {e}"),
            source: None,
        })?;
        if let Some(password) = &env.password
            && config.get_password().is_none()
        {
            config.password(password);
        }
        config.ssl_mode(tls.ssl_mode(config.get_hosts()));
        let tls = tls.connector(config.get_hosts()).map_err(refuse)?;
        if config.get_application_name().is_none() {
            config.application_name("gavel");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let store = Self {
            config,
            tls,
            shown,
            project: project.map(str::to_owned),
            reconnect_for: DEFAULT_RECONNECT_FOR,
            conn: Mutex::new(None),
            blobs: Blobs::default(),
            heads: commit::Heads::default(),
            held: Mutex::new(Vec::new()),
        };
        {
            let mut guard = store.conn()?;
            let conn = guard.as_mut().ok_or_else(|| store.gone())?;
            schema::migrate(&mut conn.client, &store.shown)?;
        }
        Ok(store)
    }

    /// Sets how long a call keeps trying to reach a server that went away before it fails
    /// (zero: fail at once). Only work that never reached its commit is tried again: a
    /// connection lost during a commit may have committed, and is reported.
    pub fn reconnect_for(mut self, window: Duration) -> Self {
        self.reconnect_for = window;
        self
    }

    /// The project whose runs this store holds; `None` when it reads every project's.
    pub fn project(&self) -> Option<&str> {
        self.project.as_deref()
    }

    /// The database's URL with its password hidden.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// A new connection to the database (the store's own, or a run lock's session). Commits
    /// are as durable as the server makes them (`synchronous_commit`, on by default): a run's
    /// journal must outlive a crash of the server, or a resume could repeat a side effect
    /// whose record was lost. A team that prefers speed says so in the URL
    /// (`?options=-c%20synchronous_commit%3Doff`).
    pub(crate) fn connect(&self) -> Result<Client, StoreError> {
        match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        }
        .map_err(|e| self.backend_error("connecting", e))
    }

    /// The store's connection, reconnecting first when there is none or the server dropped it.
    fn conn(&self) -> Result<MutexGuard<'_, Option<Conn>>, StoreError> {
        // A panic while holding the connection rolled its transaction back (Transaction's drop).
        let mut guard = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.as_ref().is_none_or(|c| c.client.is_closed()) {
            *guard = None;
            // A server that went away may come back without its last commits (a failover to a
            // replica): blobs remembered as written are asked about again.
            self.blobs.forget_known();
            self.heads.clear();
            let client = self.connect()?;
            *guard = Some(Conn {
                client,
                stmts: HashMap::new(),
            });
        }
        Ok(guard)
    }

    fn gone(&self) -> StoreError {
        StoreError::Backend {
            message: format!("the connection to PostgreSQL at {} was lost", self.shown),
            source: None,
        }
    }

    /// Runs `work` in one transaction and commits it; retried from the start when PostgreSQL
    /// aborts it for a deadlock or a serialization failure. Reads use it too, so that every
    /// query of one read sees the same committed writes.
    pub(crate) fn tx<T>(
        &self,
        doing: &str,
        work: impl Fn(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.attempts(doing, true, work)
    }

    /// Runs `work`, which only reads, each query on its own (no transaction: the rows gavel
    /// reads together are never changed once written, or only move forward).
    pub(crate) fn read<T>(
        &self,
        doing: &str,
        work: impl Fn(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.attempts(doing, false, work)
    }

    fn attempts<T>(
        &self,
        doing: &str,
        transaction: bool,
        work: impl Fn(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut attempt = 1;
        let started = Instant::now();
        loop {
            match self.once(doing, transaction, &work) {
                Err(Retry::Again(_)) if attempt < WRITE_ATTEMPTS => attempt += 1,
                Err(Retry::Again(e)) => return Err(self.backend_error(doing, e)),
                Err(Retry::Reconnect(e)) if started.elapsed() < self.reconnect_for => {
                    *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = None;
                    std::thread::sleep(RECONNECT_PAUSE);
                    // A restart freed this process's run locks: take them back before any
                    // write, or stop if someone else drives a run now.
                    while !lock::retake(self)? {
                        if started.elapsed() >= self.reconnect_for {
                            return Err(e);
                        }
                        std::thread::sleep(RECONNECT_PAUSE);
                    }
                }
                Err(Retry::Reconnect(e) | Retry::Fail(e)) => return Err(e),
                Ok(value) => return Ok(value),
            }
        }
    }

    fn once<T>(
        &self,
        doing: &str,
        transaction: bool,
        work: &impl Fn(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, Retry> {
        let mut guard = self.conn().map_err(Retry::Reconnect)?;
        // Blob rows this attempt writes count as existing only once it commits; the connection
        // is held throughout, so no other attempt's rows mix in.
        self.blobs.rolled_back();
        let outcome = self.attempt(doing, transaction, work, &mut guard);
        match &outcome {
            Ok(_) => self.blobs.committed(),
            Err(_) => self.blobs.rolled_back(),
        }
        outcome
    }

    fn attempt<T>(
        &self,
        doing: &str,
        transaction: bool,
        work: &impl Fn(&Tx<'_>) -> Result<T, StoreError>,
        guard: &mut MutexGuard<'_, Option<Conn>>,
    ) -> Result<T, Retry> {
        let conn = guard.as_mut().ok_or_else(|| Retry::Fail(self.gone()))?;
        let Conn { client, stmts } = conn;
        let tx = if transaction {
            tx::Session::Transaction(client.transaction().map_err(|e| {
                let lost = is_connection_lost(&e);
                let e = self.backend_error(doing, e);
                if lost {
                    Retry::Reconnect(e)
                } else {
                    Retry::Fail(e)
                }
            })?)
        } else {
            tx::Session::Autocommit(client)
        };
        let tx = Tx::new(tx, stmts, &self.shown);
        let value = work(&tx).map_err(|e| match tx.take_retryable() {
            Some(db) => Retry::Again(db),
            None if tx.connection_lost() => Retry::Reconnect(e),
            None => Retry::Fail(e),
        })?;
        tx.commit().map_err(|e| {
            if is_retryable(&e) {
                Retry::Again(e)
            } else {
                Retry::Fail(self.backend_error(&format!("committing ({doing})"), e))
            }
        })?;
        Ok(value)
    }

    /// A PostgreSQL failure while `doing` something, naming the database (never its password).
    pub(crate) fn backend_error(&self, doing: &str, e: postgres::Error) -> StoreError {
        backend_error(&self.shown, doing, e)
    }

    pub(crate) fn blobs(&self) -> &Blobs {
        &self.blobs
    }
}

/// Why one attempt of a write ended without a commit.
enum Retry {
    /// PostgreSQL aborted it for a reason that a new attempt can get past.
    Again(postgres::Error),
    /// The server could not be reached before the commit: nothing was written.
    Reconnect(StoreError),
    Fail(StoreError),
}

/// A pause between attempts to reach a server that went away.
const RECONNECT_PAUSE: Duration = Duration::from_millis(250);

/// Whether `e` means the server or the connection went away (rather than a refused query).
pub(crate) fn is_connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        // Class 08 (connection exception) and 57P01-57P03 (shutdown, starting up).
        Some(code) => {
            let c = code.code();
            c.starts_with("08") || matches!(c, "57P01" | "57P02" | "57P03")
        }
        None => e.as_db_error().is_none(),
    }
}

/// Whether PostgreSQL aborted a transaction only because of a concurrent one.
pub(crate) fn is_retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// A PostgreSQL failure as a store error: what gavel was doing, where, and the server's words.
pub(crate) fn backend_error(shown: &str, doing: &str, e: postgres::Error) -> StoreError {
    let why = match e.as_db_error() {
        Some(db) => db.message().to_owned(),
        None if e.is_closed() => "the server closed the connection".to_owned(),
        None => std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string()),
    };
    let why = match tls::explain(&why) {
        Some(meaning) => format!("{why} ({meaning})"),
        None => why,
    };
    StoreError::Backend {
        message: format!("{doing} (PostgreSQL at {shown}): {why}"),
        source: Some(Box::new(e)),
    }
}

/// `url` with its password replaced by `***`, in either URL or `key=value` form.
pub fn redact(url: &str) -> String {
    // Any `scheme://` (a wrong URL is shown in its error, and must not leak either).
    if let Some((scheme, rest)) = url.split_once("://")
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        let scheme = format!("{scheme}://");
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let authority = match authority.rfind('@') {
            Some(at) => {
                let (userinfo, host) = authority.split_at(at);
                match userinfo.split_once(':') {
                    Some((user, _)) => format!("{user}:***{host}"),
                    None => authority.to_owned(),
                }
            }
            None => authority.to_owned(),
        };
        return format!("{scheme}{authority}{}", redact_query(tail));
    }
    redact_key_values(url)
}

/// Hides a `password=` parameter of a URL's query.
fn redact_query(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_owned();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => p.to_owned(),
        })
        .collect();
    format!("{path}?{}", params.join("&"))
}

/// Hides the value of `password` in a `key=value key='v a l'` string.
fn redact_key_values(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("password") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let after_key = &after["password".len()..];
        let trimmed = after_key.trim_start();
        let starts_word = before.is_empty() || before.ends_with(char::is_whitespace);
        if !(starts_word && trimmed.starts_with('=')) {
            out.push_str("password");
            rest = after_key;
            continue;
        }
        let value = trimmed[1..].trim_start();
        out.push_str("password=***");
        rest = skip_value(value);
    }
    out.push_str(rest);
    out
}

/// What follows one `key=value` value (quoted with `'` and `\` escapes, or up to a space).
fn skip_value(value: &str) -> &str {
    if let Some(quoted) = value.strip_prefix('\'') {
        let mut escaped = false;
        for (i, c) in quoted.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '\'' => return &quoted[i + 1..],
                _ => {}
            }
        }
        return "";
    }
    let end = value.find(char::is_whitespace).unwrap_or(value.len());
    &value[end..]
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_are_hidden_in_every_form() {
        assert_eq!(
            redact("postgres://ann:s3cret@db.example:5432/gavel?sslmode=require"),
            "postgres://ann:***@db.example:5432/gavel?sslmode=require"
        );
        assert_eq!(
            redact("postgresql://ann:p%40ss@db/gavel"),
            "postgresql://ann:***@db/gavel"
        );
        assert_eq!(redact("postgres://ann@db/gavel"), "postgres://ann@db/gavel");
        assert_eq!(
            redact("postgres:///gavel?host=/run/pg&password=hunter2"),
            "postgres:///gavel?host=/run/pg&password=***"
        );
        assert_eq!(
            redact("host=/tmp user=ann password='a b\\'c' dbname=gavel"),
            "host=/tmp user=ann password=*** dbname=gavel"
        );
        assert_eq!(redact("host=db password = hunter2"), "host=db password=***");
        assert_eq!(
            redact("host=db dbname=mypassword"),
            "host=db dbname=mypassword"
        );
        assert_eq!(redact("mysql://ann:pw@db/a"), "mysql://ann:***@db/a");
    }
}
