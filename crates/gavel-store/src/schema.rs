//! Opening the SQLite database safely and bringing its schema up to date.
//!
//! The schema version lives in `PRAGMA user_version`. Migrations run in one `BEGIN IMMEDIATE`
//! transaction, so two processes opening a fresh database at once cannot both apply them, and a
//! crash mid-migration leaves the old schema intact. A database written by a newer gavel, or a
//! file that is not a SQLite database at all, is refused before anything is written to it.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use gavel_core::StoreError;
use rusqlite::{Connection, ErrorCode, TransactionBehavior};

/// The schema version this build writes and understands.
pub(crate) const SCHEMA_VERSION: i64 = 4;

/// How many compiled statements a connection keeps: more than the store uses (a brief → issue
/// run compiles 35 statements in all), so none is pushed out and compiled again (rusqlite's
/// default keeps 16).
const STATEMENT_CACHE: usize = 128;

/// How long a write waits for another process's write to finish before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The page size of a database this build creates. A checkpoint changes a few small rows in
/// five tables and the log gets each changed page whole, so smaller pages write less: with 2 KiB
/// pages a step (`gavel-bench steps 200`) took 0.033 ms against 0.055 ms with SQLite's 4 KiB,
/// a brief → issue run writes 0.45 MiB of log instead of 0.7, and the 10,000-run pages of
/// `bench/ui.sh` were as fast. (1 KiB pages were faster still per step, but the spend page,
/// which reads every model call's event, took 30% longer: those events no longer fit in a
/// page.) A database keeps the page size it was created with.
pub(crate) const NEW_PAGE_SIZE: i64 = 2048;

/// SQLite copies its log into the database once the log holds this many bytes of pages (its
/// default, 1,000 pages, is 4 MiB at 4 KiB pages): set per connection in pages of the database's
/// own size, so a database with smaller pages keeps the same log behaviour.
pub(crate) const WAL_AUTOCHECKPOINT_BYTES: i64 = 4 << 20;

/// The first 16 bytes of every SQLite 3 database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Whether the event JSON `$j` (an SQL expression) is a model call its run's ledger counts: what
/// decodes as an `EventKind::ModelCall` with a ledger (`instr` only skips the JSON parse for
/// every other event).
#[rustfmt::skip]
macro_rules! is_counted_call {
    ($j:literal) => {
        concat!(
            "instr(", $j, ", '\"model_call\"') > 0",
            " AND json_extract(", $j, ", '$.event') = 'model_call'",
            " AND json_type(", $j, ", '$.ledger') = 'object'",
            " AND json_type(", $j, ", '$.ledger.n') = 'integer'",
            " AND json_type(", $j, ", '$.at') = 'text'",
            " AND json_type(", $j, ", '$.role') = 'text'"
        )
    };
}

/// A `model_calls` row's values from the event JSON `$j`: the call's number in its run's
/// ledger, its day (the first 10 characters of its time, UTC), role and cost (NULL: unpriced).
#[rustfmt::skip]
macro_rules! call_values {
    ($j:literal) => {
        concat!(
            "json_extract(", $j, ", '$.ledger.n'), ",
            "substr(json_extract(", $j, ", '$.at'), 1, 10), ",
            "json_extract(", $j, ", '$.role'), ",
            "json_extract(", $j, ", '$.ledger.cost_micros')"
        )
    };
}

/// Adds the `model_calls` row `$row` (`NEW` or `OLD`) to its day, workflow and role's total
/// (`$sign` `+`), or takes it away (`-`).
#[rustfmt::skip]
macro_rules! count_call {
    ($row:literal, $sign:literal) => {
        concat!(
            "INSERT INTO spend_totals (day, workflow, role, calls, unpriced, micros)
             SELECT ", $row, ".day, workflow, ", $row, ".role, ", $sign, "1, ",
                 $sign, "(", $row, ".cost_micros IS NULL), ",
                 $sign, "COALESCE(", $row, ".cost_micros, 0)
             FROM runs WHERE id = ", $row, ".run_id
             ON CONFLICT (day, workflow, role) DO UPDATE SET calls = calls + excluded.calls,
                 unpriced = unpriced + excluded.unpriced, micros = micros + excluded.micros;"
        )
    };
}

/// `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the initial schema.
    "
    CREATE TABLE runs (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        workflow    TEXT NOT NULL,
        slug        TEXT NOT NULL,
        status      TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        head_seq    INTEGER NOT NULL
    );
    CREATE TABLE blobs (
        hash  TEXT PRIMARY KEY,
        data  BLOB NOT NULL
    );
    CREATE TABLE checkpoints (
        run_id      INTEGER NOT NULL REFERENCES runs(id),
        seq         INTEGER NOT NULL,
        parent_seq  INTEGER,
        node        TEXT,
        next_node   TEXT,
        state_hash  TEXT NOT NULL REFERENCES blobs(hash),
        format      INTEGER NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE writes (
        run_id      INTEGER NOT NULL REFERENCES runs(id),
        step_id     TEXT NOT NULL,
        value_hash  TEXT NOT NULL REFERENCES blobs(hash),
        created_at  TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id)
    ) WITHOUT ROWID;
    CREATE TABLE events (
        run_id  INTEGER NOT NULL REFERENCES runs(id),
        seq     INTEGER NOT NULL,
        json    TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    ",
    // 1 -> 2: blobs may be deflated or stored as a delta against other blobs (see blobs.rs).
    // Existing rows are raw (codec 0) and whole (depth 0), which is what they are.
    "
    ALTER TABLE blobs ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE blobs ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
    ",
    // 2 -> 3: runs found by their name (a new start's collision check, `gavel resume SLUG`)
    // without reading every run.
    "
    CREATE INDEX runs_by_slug ON runs (slug, workflow);
    ",
    // 3 -> 4: the spend page's totals by day, workflow and role, kept as calls are recorded
    // (`SpendStore::spend_totals`) instead of every call's event being read and decoded. The
    // triggers keep them, whichever way an event is inserted: `model_calls` holds each call's
    // last record (a replay's record of the same number replaces the one before, and moves its
    // cost), `spend_totals` the sums. Both are filled from the events recorded before.
    concat!(
        "
    CREATE TABLE model_calls (
        run_id       INTEGER NOT NULL REFERENCES runs(id),
        n            INTEGER NOT NULL,
        day          TEXT NOT NULL,
        role         TEXT NOT NULL,
        cost_micros  INTEGER,
        PRIMARY KEY (run_id, n)
    ) WITHOUT ROWID;
    CREATE TABLE spend_totals (
        day       TEXT NOT NULL,
        workflow  TEXT NOT NULL,
        role      TEXT NOT NULL,
        calls     INTEGER NOT NULL,
        unpriced  INTEGER NOT NULL,
        micros    INTEGER NOT NULL,
        PRIMARY KEY (day, workflow, role)
    ) WITHOUT ROWID;
    INSERT INTO model_calls (run_id, n, day, role, cost_micros)
    SELECT run_id, ",
        call_values!("json"),
        " FROM (
        SELECT run_id, json, row_number() OVER (
            PARTITION BY run_id, json_extract(json, '$.ledger.n') ORDER BY seq DESC
        ) AS newest
        FROM events WHERE ",
        is_counted_call!("json"),
        "
    ) WHERE newest = 1;
    INSERT INTO spend_totals (day, workflow, role, calls, unpriced, micros)
    SELECT c.day, r.workflow, c.role, COUNT(*), COUNT(*) - COUNT(c.cost_micros),
           COALESCE(SUM(c.cost_micros), 0)
    FROM model_calls c JOIN runs r ON r.id = c.run_id GROUP BY c.day, r.workflow, c.role;
    CREATE TRIGGER model_call_recorded AFTER INSERT ON events WHEN ",
        is_counted_call!("NEW.json"),
        "
    BEGIN
        INSERT INTO model_calls (run_id, n, day, role, cost_micros)
        VALUES (NEW.run_id, ",
        call_values!("NEW.json"),
        ")
        ON CONFLICT (run_id, n) DO UPDATE SET day = excluded.day, role = excluded.role,
            cost_micros = excluded.cost_micros;
    END;
    CREATE TRIGGER model_call_counted AFTER INSERT ON model_calls
    BEGIN
        ",
        count_call!("NEW", "+"),
        "
    END;
    CREATE TRIGGER model_call_replaced AFTER UPDATE ON model_calls
    BEGIN
        ",
        count_call!("OLD", "-"),
        "
        ",
        count_call!("NEW", "+"),
        "
    END;
    "
    ),
];

/// Opens (creating if missing) the database at `path`, configured and migrated.
pub(crate) fn open(path: &Path) -> Result<Connection, StoreError> {
    check_header(path)?;
    let mut conn = Connection::open(path).map_err(|e| classify(path, "opening the database", e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(path, "setting the busy timeout", e))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Refuse a newer schema before anything (even the journal mode) is written.
    let version =
        user_version(&conn).map_err(|e| classify(path, "reading the schema version", e))?;
    check_version(path, version)?;
    if version == 0 {
        check_not_foreign(path, &conn)?;
        // Only takes effect on an empty database (before its first page is written, which the
        // switch to WAL does): an existing one keeps its page size.
        conn.pragma_update(None, "page_size", NEW_PAGE_SIZE)
            .map_err(|e| classify(path, "choosing the page size", e))?;
    }
    let mode = switch_to_wal(&conn).map_err(|e| classify(path, "switching to WAL mode", e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Corrupt {
            path: path.display().to_string(),
            message: format!("cannot switch to WAL mode (the journal mode stayed `{mode}`)"),
        });
    }
    // NORMAL in WAL mode survives a killed process; only an OS crash can lose the last commits.
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| classify(path, "setting synchronous mode", e))?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(|e| classify(path, "enabling foreign keys", e))?;
    let page_size: i64 = conn
        .pragma_query_value(None, "page_size", |row| row.get(0))
        .map_err(|e| classify(path, "reading the page size", e))?;
    conn.pragma_update(
        None,
        "wal_autocheckpoint",
        WAL_AUTOCHECKPOINT_BYTES / page_size.max(512),
    )
    .map_err(|e| classify(path, "setting the log's checkpoint size", e))?;
    if version < SCHEMA_VERSION {
        migrate(path, &mut conn)?;
    }
    Ok(conn)
}

/// Refuses a SQLite database that is not gavel's: schema version 0 (gavel's own start at 1)
/// with tables in it. Checked by reading only, so such a file is left exactly as it was (no
/// schema added, no switch to WAL).
fn check_not_foreign(path: &Path, conn: &Connection) -> Result<(), StoreError> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
        .and_then(|mut stmt| stmt.query_map([], |row| row.get(0))?.collect())
        .map_err(|e| classify(path, "reading the database's tables", e))?;
    // gavel's own tables at version 0: another process is creating the store right now
    // (its version is written after them), so this is gavel's, not a foreign file.
    const OURS: [&str; 8] = [
        "blobs",
        "checkpoints",
        "events",
        "model_calls",
        "runs",
        "spend_totals",
        "sqlite_sequence",
        "writes",
    ];
    let foreign: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| !OURS.contains(t))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    let tables = foreign;
    let shown: Vec<&str> = tables.iter().take(5).copied().collect();
    Err(StoreError::Corrupt {
        path: path.display().to_string(),
        message: format!(
            "it is a SQLite database but not gavel's (it has {}{}); gavel left it untouched",
            shown.join(", "),
            if tables.len() > 5 { ", ..." } else { "" }
        ),
    })
}

/// Puts the database in WAL mode (a persistent setting, so usually already on). Switching needs
/// an exclusive lock and SQLite does not call the busy handler for it, so two processes creating
/// the database at once retry here for up to the busy timeout.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<String> {
    let current: String = conn.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    if current.eq_ignore_ascii_case("wal") {
        return Ok(current);
    }
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(15));
            }
            other => return other,
        }
    }
}

/// Refuses an existing, non-empty file that does not start with the SQLite header, without
/// letting SQLite touch it. (An empty file is a valid, empty database.)
fn check_header(path: &Path) -> Result<(), StoreError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(StoreError::backend(
                format!("opening {}", path.display()),
                e,
            ));
        }
    };
    let mut header = Vec::with_capacity(SQLITE_HEADER.len());
    file.by_ref()
        .take(SQLITE_HEADER.len() as u64)
        .read_to_end(&mut header)
        .map_err(|e| StoreError::backend(format!("reading {}", path.display()), e))?;
    if header.is_empty() || header == SQLITE_HEADER {
        return Ok(());
    }
    Err(StoreError::Corrupt {
        path: path.display().to_string(),
        message: "this file is not a SQLite database (it does not start with the SQLite header); \
                  move it away or point gavel at another state directory"
            .into(),
    })
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

fn check_version(path: &Path, version: i64) -> Result<(), StoreError> {
    if version > SCHEMA_VERSION {
        return Err(StoreError::Corrupt {
            path: path.display().to_string(),
            message: format!(
                "schema version {version} is newer than this gavel supports ({SCHEMA_VERSION})"
            ),
        });
    }
    if version < 0 {
        return Err(StoreError::Corrupt {
            path: path.display().to_string(),
            message: format!("schema version {version} is not one gavel ever wrote"),
        });
    }
    Ok(())
}

/// Applies every missing migration in one transaction.
fn migrate(path: &Path, conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| classify(path, "starting the schema migration", e))?;
    // Read again under the write lock: another process may have migrated meanwhile.
    let version = user_version(&tx).map_err(|e| classify(path, "reading the schema version", e))?;
    check_version(path, version)?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    let mut current = version;
    while current < SCHEMA_VERSION {
        let sql = usize::try_from(current)
            .ok()
            .and_then(|i| MIGRATIONS.get(i))
            .ok_or_else(|| StoreError::Corrupt {
                path: path.display().to_string(),
                message: format!("no migration from schema version {current}"),
            })?;
        tx.execute_batch(sql).map_err(|e| {
            classify(
                path,
                &format!("migrating the schema from version {current}"),
                e,
            )
        })?;
        current += 1;
    }
    tx.pragma_update(None, "user_version", current)
        .map_err(|e| classify(path, "recording the schema version", e))?;
    tx.commit()
        .map_err(|e| classify(path, "committing the schema migration", e))
}

/// Maps a SQLite error to [`StoreError::Corrupt`] when the file itself is damaged, and to
/// [`StoreError::Backend`] (with `doing` as the message) otherwise.
pub(crate) fn classify(path: &Path, doing: &str, err: rusqlite::Error) -> StoreError {
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::Corrupt {
            path: path.display().to_string(),
            message: "this file is not a SQLite database".into(),
        },
        Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.display().to_string(),
            message: format!("the database is damaged ({doing}: {err})"),
        },
        _ => StoreError::backend(doing.to_owned(), err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_reach_the_current_version() {
        assert_eq!(
            MIGRATIONS.len(),
            usize::try_from(SCHEMA_VERSION).unwrap_or(0)
        );
    }

    #[test]
    fn the_log_is_copied_at_4_mib_whatever_the_page_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let new = dir.path().join("new.db");
        let conn = open(&new).expect("a new database");
        let pages: i64 = conn
            .pragma_query_value(None, "wal_autocheckpoint", |row| row.get(0))
            .expect("pragma");
        assert_eq!(pages * NEW_PAGE_SIZE, WAL_AUTOCHECKPOINT_BYTES);

        let old = dir.path().join("old.db");
        Connection::open(&old)
            .and_then(|c| c.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;"))
            .expect("a database with 4 KiB pages");
        let conn = open(&old).expect("the old database");
        let pages: i64 = conn
            .pragma_query_value(None, "wal_autocheckpoint", |row| row.get(0))
            .expect("pragma");
        assert_eq!(pages, 1024);
    }
}
