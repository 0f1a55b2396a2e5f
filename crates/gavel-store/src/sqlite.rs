//! The SQLite store that real runs are kept in.
//!
//! One database file (WAL mode, `synchronous=NORMAL`) holds every run of a repository; several
//! gavel processes may use it at once, each driving a different run, because every write is a
//! short `BEGIN IMMEDIATE` transaction and waits up to ten seconds for the others. States and
//! step results are stored once per distinct content in `blobs`. Run locks are files next to the
//! database (see [`crate::lock`]), not rows, so the OS releases them when a process dies.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use gavel_core::{
    Checkpoint, CheckpointMeta, ContentHash, Event, LockInfo, NewBlob, RunId, RunLock, RunRecord,
    RunStatus, RunStore, StoreError,
};
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::blobs::Blobs;

mod calls;
mod create;
mod find;
#[cfg(test)]
mod statement_tests;
mod tx;
mod wal;
use crate::lock;
use crate::schema;
use tx::Tx;

/// A [`Store`](gavel_core::Store) in a SQLite database file.
pub struct SqliteStore {
    path: PathBuf,
    lock_dir: PathBuf,
    conn: Mutex<Connection>,
    blobs: Blobs,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A write-ahead log smaller than this is left for the next process when the store closes,
/// instead of being copied into the database then (SQLite's default): that copy syncs the log
/// and the database to disk, two `fsync`s that were a real part of a short run's time. Commits
/// stay as durable as `synchronous=NORMAL` promises: a killed process loses nothing; an OS crash
/// or power loss may lose the last commits (a clean exit used to sync them as a side effect;
/// `[storage] fsync = true` syncs every commit). The next process to open the database reads the
/// log once to index it, which costs less than the syncs at this size. A larger log is copied
/// at close as before, so the files on disk stay at most this much larger than the database
/// (a brief → issue run adds some 0.45 MiB with 2 KiB pages: every fifth run pays for the copy,
/// and for the log's new header, five `fsync`s in all with the directory's). A run long enough
/// to reach SQLite's own checkpoint ([`schema::WAL_AUTOCHECKPOINT_BYTES`], 4 MiB) leaves a log
/// file of that size, which is copied at close. A copy of the store must take `state.db-wal`
/// with `state.db`.
const KEEP_WAL_BELOW: u64 = 2 << 20;

/// The next event number of a run. `+?1`, not `?1`: SQLite (3.54) marks a bare parameter
/// compared with the leading column of the index its `MAX` walks as one the plan depends on,
/// and compiles the statement again every time it is bound, a tenth of a checkpoint's time.
/// The unary plus keeps the same plan (one seek on the primary key) without that.
const NEXT_EVENT_SEQ: &str = "SELECT COALESCE(MAX(seq) + 1, 0) FROM events WHERE run_id = +?1";

/// The runs named `?1` (of workflow `?2` unless it is NULL), from the `runs_by_slug` index.
const RUNS_WITH_SLUG: &str =
    "FROM runs WHERE slug = ?1 AND (?2 IS NULL OR workflow = ?2) ORDER BY id";

impl Drop for SqliteStore {
    fn drop(&mut self) {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        if fs::metadata(&wal).is_ok_and(|m| m.len() < KEEP_WAL_BELOW) {
            // A failure only means SQLite checkpoints as it always did.
            let _ = self.conn().set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            );
        }
    }
}

impl SqliteStore {
    /// Opens the database at `path`, creating it (and its directory) if missing and migrating
    /// it to the current schema. Run lock files go to `locks/` next to it.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&dir).map_err(|e| {
            StoreError::backend(format!("creating the state directory {}", dir.display()), e)
        })?;
        let conn = schema::open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            lock_dir: dir.join("locks"),
            conn: Mutex::new(conn),
            blobs: Blobs::default(),
        })
    }

    /// Makes every later commit wait until it is on disk (`synchronous=FULL`), so an OS crash
    /// or power loss cannot lose it either. By default (`NORMAL` in WAL mode) a commit survives
    /// a killed process, and an OS crash may lose the last commits but never corrupts the file.
    pub fn sync_every_commit(&self) -> Result<(), StoreError> {
        self.conn()
            .pragma_update(None, "synchronous", "FULL")
            .map_err(self.err("setting synchronous mode"))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses every write through this store from now on (`PRAGMA query_only`), so a reader
    /// such as `gavel ui` changes nothing even through a bug.
    pub fn set_read_only(&self) -> Result<(), StoreError> {
        self.conn()
            .pragma_update(None, "query_only", true)
            .map_err(self.err("making the store read-only"))
    }

    /// The size of the database on disk: the main file plus its write-ahead log.
    pub fn db_size_bytes(&self) -> Result<u64, StoreError> {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        let mut total = 0;
        for file in [self.path.clone(), PathBuf::from(wal)] {
            match fs::metadata(&file) {
                Ok(meta) => total += meta.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(StoreError::backend(
                        format!("reading the size of {}", file.display()),
                        e,
                    ));
                }
            }
        }
        Ok(total)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the connection rolled back its transaction (Transaction's drop),
        // so the connection is still consistent.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Maps a SQLite failure while `doing` something.
    fn err(&self, doing: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        let doing = doing.to_owned();
        move |e| schema::classify(&self.path, &doing, e)
    }

    fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.display().to_string(),
            message,
        }
    }

    fn write_tx<'c>(&'c self, conn: &'c mut Connection) -> Result<Tx<'c>, StoreError> {
        Tx::begin(conn, true, Some(&self.blobs)).map_err(self.err("starting a write transaction"))
    }

    fn read_tx<'c>(&self, conn: &'c mut Connection) -> Result<Tx<'c>, StoreError> {
        Tx::begin(conn, false, None).map_err(self.err("starting a read transaction"))
    }

    /// The head seq of `run`, or [`StoreError::UnknownRun`].
    fn head_seq(&self, conn: &Connection, run: RunId) -> Result<u64, StoreError> {
        conn.prepare_cached("SELECT head_seq FROM runs WHERE id = ?1")
            .and_then(|mut stmt| stmt.query_row([run.0], |row| get_u64(row, 0)).optional())
            .map_err(self.err("reading a run"))?
            .ok_or(StoreError::UnknownRun(run))
    }

    fn insert_blob(
        &self,
        conn: &Connection,
        bytes: &[u8],
        bases: &[ContentHash],
    ) -> Result<ContentHash, StoreError> {
        self.blobs.insert(conn, bytes, bases)
    }

    fn insert_events(
        &self,
        conn: &Connection,
        run: RunId,
        events: &[Event],
    ) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let first: i64 = conn
            .prepare_cached(NEXT_EVENT_SEQ)
            .and_then(|mut stmt| stmt.query_row([run.0], |row| row.get(0)))
            .map_err(self.err("reading the event timeline"))?;
        let mut stmt = conn
            .prepare_cached("INSERT INTO events (run_id, seq, json) VALUES (?1, ?2, ?3)")
            .map_err(self.err("appending events"))?;
        for (seq, event) in (first..).zip(events) {
            let json = serde_json::to_string(event)
                .map_err(|e| StoreError::backend("encoding an event", e))?;
            stmt.execute(params![run.0, seq, json])
                .map_err(self.err("appending events"))?;
        }
        Ok(())
    }

    fn decode_status(&self, run: i64, json: &str) -> Result<RunStatus, StoreError> {
        serde_json::from_str(json)
            .map_err(|e| self.corrupt(format!("the status of run {run} cannot be read: {e}")))
    }

    fn record(&self, raw: RawRun) -> Result<RunRecord, StoreError> {
        Ok(RunRecord {
            id: RunId(raw.id),
            status: self.decode_status(raw.id, &raw.status)?,
            workflow: raw.workflow,
            slug: raw.slug,
            created_at: raw.created_at,
            updated_at: raw.updated_at,
            head_seq: raw.head_seq,
        })
    }
}

/// A `runs` row before its status JSON is decoded.
struct RawRun {
    id: i64,
    workflow: String,
    slug: String,
    status: String,
    created_at: String,
    updated_at: String,
    head_seq: u64,
}

const RUN_COLUMNS: &str = "id, workflow, slug, status, created_at, updated_at, head_seq";

fn raw_run(row: &Row<'_>) -> rusqlite::Result<RawRun> {
    Ok(RawRun {
        id: row.get(0)?,
        workflow: row.get(1)?,
        slug: row.get(2)?,
        status: row.get(3)?,
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
        head_seq: get_u64(row, 6)?,
    })
}

const CHECKPOINT_COLUMNS: &str = "seq, parent_seq, node, next_node, state_hash, format, created_at";

fn checkpoint_meta(row: &Row<'_>) -> rusqlite::Result<CheckpointMeta> {
    Ok(CheckpointMeta {
        seq: get_u64(row, 0)?,
        parent: row
            .get::<_, Option<i64>>(1)?
            .map(|v| to_u64(1, v))
            .transpose()?,
        node: row.get(2)?,
        next: row.get(3)?,
        state_hash: ContentHash::from_hex(row.get::<_, String>(4)?),
        format: row.get(5)?,
        created_at: row.get(6)?,
    })
}

/// A non-negative integer column (seqs), which SQLite stores as `i64`.
fn get_u64(row: &Row<'_>, idx: usize) -> rusqlite::Result<u64> {
    to_u64(idx, row.get(idx)?)
}

fn to_u64(idx: usize, value: i64) -> rusqlite::Result<u64> {
    u64::try_from(value).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, value))
}

/// A sequence number as SQLite stores it.
fn sql_seq(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq)
        .map_err(|e| StoreError::backend(format!("sequence number {seq} is too large"), e))
}

fn encode_status(status: &RunStatus) -> Result<String, StoreError> {
    serde_json::to_string(status).map_err(|e| StoreError::backend("encoding a run status", e))
}

impl RunStore for SqliteStore {
    fn create_run(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.new_run(workflow, slug, state, next, now, false)
    }

    fn create_run_claiming_slug(
        &self,
        workflow: &str,
        slug: &str,
        state: &[u8],
        next: &str,
        now: &str,
    ) -> Result<RunId, StoreError> {
        self.new_run(workflow, slug, state, next, now, true)
    }

    fn run(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        let conn = self.conn();
        let raw = conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"))
            .and_then(|mut stmt| stmt.query_row([id.0], raw_run).optional())
            .map_err(self.err("reading a run"))?;
        raw.map(|raw| self.record(raw)).transpose()
    }

    fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let raws = conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id"))
            .and_then(|mut stmt| stmt.query_map([], raw_run)?.collect::<Result<Vec<_>, _>>())
            .map_err(self.err("listing runs"))?;
        raws.into_iter().map(|raw| self.record(raw)).collect()
    }

    fn runs_with_slug(
        &self,
        slug: &str,
        workflow: Option<&str>,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn();
        let raws = conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} {RUNS_WITH_SLUG}"))
            .and_then(|mut stmt| {
                stmt.query_map(params![slug, workflow], raw_run)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.err("looking for runs by name"))?;
        raws.into_iter().map(|raw| self.record(raw)).collect()
    }

    fn recent_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let conn = self.conn();
        let raws = conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT ?1"
            ))
            .and_then(|mut stmt| {
                stmt.query_map([limit], raw_run)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.err("listing runs"))?;
        raws.into_iter().map(|raw| self.record(raw)).collect()
    }

    fn find_runs(
        &self,
        filter: &gavel_core::RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<gavel_core::RunPage, StoreError> {
        self.select_runs(filter, offset, limit)
    }

    fn workflows(&self) -> Result<Vec<String>, StoreError> {
        self.select_workflows()
    }

    /// Copies the write-ahead log into the database on another thread while `wait` runs (a
    /// git commit leaves one core idle), and starts the log again from its beginning there
    /// ([`wal`]), so the next process to open the store reads a few frames to index it, not
    /// the whole run's, and closing rarely has a log large enough to copy. The copy is
    /// SQLite's own passive checkpoint: it waits for no one and syncs as a checkpoint does.
    fn while_waiting(&self, wait: &mut dyn FnMut()) {
        std::thread::scope(|s| {
            s.spawn(|| wal::copy_and_restart(&mut self.conn(), schema::BUSY_TIMEOUT));
            wait();
        });
    }

    fn set_status(
        &self,
        id: RunId,
        status: &RunStatus,
        events: &[Event],
        now: &str,
    ) -> Result<(), StoreError> {
        let status = encode_status(status)?;
        let mut conn = self.conn();
        let tx = self.write_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        tx.prepare_cached("UPDATE runs SET status = ?1, updated_at = ?2 WHERE id = ?3")
            .and_then(|mut stmt| stmt.execute(params![status, now, id.0]))
            .map_err(self.err("updating a run's status"))?;
        self.insert_events(&tx, id, events)?;
        tx.commit().map_err(self.err("committing a status change"))
    }

    fn commit_with_blobs(
        &self,
        cp: &Checkpoint,
        events: &[Event],
        status: &RunStatus,
        blobs: &[NewBlob<'_>],
    ) -> Result<(), StoreError> {
        let status = encode_status(status)?;
        let seq = sql_seq(cp.seq)?;
        let parent = cp.parent.map(sql_seq).transpose()?;
        let mut conn = self.conn();
        let tx = self.write_tx(&mut conn)?;
        let head = self.head_seq(&tx, cp.run)?;
        gavel_core::check_commit(cp, head)?;
        for blob in blobs {
            self.insert_blob(&tx, blob.bytes, blob.similar)?;
        }
        // A state differs from its parent's in a few fields: store it as a delta against it.
        let parent_state = match parent {
            Some(p) => tx
                .prepare_cached("SELECT state_hash FROM checkpoints WHERE run_id = ?1 AND seq = ?2")
                .and_then(|mut stmt| {
                    stmt.query_row(params![cp.run.0, p], |row| row.get::<_, String>(0))
                        .optional()
                })
                .map_err(self.err("reading the parent checkpoint"))?
                .map(ContentHash::from_hex),
            None => None,
        };
        let hash = self.insert_blob(&tx, &cp.state, parent_state.as_slice())?;
        tx.prepare_cached(
            "INSERT INTO checkpoints
                 (run_id, seq, parent_seq, node, next_node, state_hash, format, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                cp.run.0,
                seq,
                parent,
                cp.node,
                cp.next,
                hash.as_str(),
                cp.format,
                cp.created_at,
            ])
        })
        .map_err(self.err("writing a checkpoint"))?;
        self.insert_events(&tx, cp.run, events)?;
        tx.prepare_cached(
            "UPDATE runs SET status = ?1, head_seq = ?2, updated_at = ?3 WHERE id = ?4",
        )
        .and_then(|mut stmt| stmt.execute(params![status, seq, cp.created_at, cp.run.0]))
        .map_err(self.err("advancing a run's head"))?;
        tx.commit().map_err(self.err("committing a checkpoint"))
    }

    fn head(&self, id: RunId) -> Result<Option<Checkpoint>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        let head = self.head_seq(&tx, id)?;
        let head = sql_seq(head)?;
        let meta = tx
            .prepare_cached(&format!(
                "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE run_id = ?1 AND seq = ?2"
            ))
            .and_then(|mut stmt| {
                stmt.query_row(params![id.0, head], checkpoint_meta)
                    .optional()
            })
            .map_err(self.err("reading the head checkpoint"))?;
        let Some(meta) = meta else {
            return Ok(None);
        };
        let state = self
            .blob(&tx, &meta.state_hash)?
            .ok_or_else(|| StoreError::MissingBlob(meta.state_hash.clone()))?;
        Ok(Some(Checkpoint {
            run: id,
            seq: meta.seq,
            parent: meta.parent,
            node: meta.node,
            next: meta.next,
            state,
            format: meta.format,
            created_at: meta.created_at,
        }))
    }

    fn checkpoints(&self, id: RunId) -> Result<Vec<CheckpointMeta>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        tx.prepare_cached(&format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE run_id = ?1 ORDER BY seq"
        ))
        .and_then(|mut stmt| stmt.query_map([id.0], checkpoint_meta)?.collect())
        .map_err(self.err("listing checkpoints"))
    }

    fn journal(&self, id: RunId) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        let rows: Vec<(String, String)> = tx
            .prepare_cached(
                "SELECT step_id, value_hash FROM writes WHERE run_id = ?1 ORDER BY step_id",
            )
            .and_then(|mut stmt| {
                stmt.query_map([id.0], |row| Ok((row.get(0)?, row.get(1)?)))?
                    .collect()
            })
            .map_err(self.err("listing step results"))?;
        rows.into_iter()
            .map(|(step, hash)| {
                let hash = ContentHash::from_hex(hash);
                let value = self
                    .blob(&tx, &hash)?
                    .ok_or(StoreError::MissingBlob(hash))?;
                Ok((step, value))
            })
            .collect()
    }

    fn journal_steps(&self, id: RunId) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        tx.prepare_cached("SELECT step_id FROM writes WHERE run_id = ?1")
            .and_then(|mut stmt| stmt.query_map([id.0], |row| row.get(0))?.collect())
            .map_err(self.err("listing step results"))
    }

    fn get_write(&self, id: RunId, step: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        let hash = self.write_hash(&tx, id, step)?;
        match hash {
            None => Ok(None),
            Some(hash) => self
                .blob(&tx, &hash)?
                .map(Some)
                .ok_or(StoreError::MissingBlob(hash)),
        }
    }

    fn put_write(&self, id: RunId, step: &str, value: &[u8], now: &str) -> Result<(), StoreError> {
        self.put_write_with_blobs(id, step, value, &[], now)
    }

    fn put_write_with_blobs(
        &self,
        id: RunId,
        step: &str,
        value: &[u8],
        blobs: &[&[u8]],
        now: &str,
    ) -> Result<(), StoreError> {
        self.journal(id, step, value, blobs, now)
    }

    fn events(&self, id: RunId) -> Result<Vec<Event>, StoreError> {
        let mut conn = self.conn();
        let tx = self.read_tx(&mut conn)?;
        self.head_seq(&tx, id)?;
        let rows: Vec<(u64, String)> = tx
            .prepare_cached("SELECT seq, json FROM events WHERE run_id = ?1 ORDER BY seq")
            .and_then(|mut stmt| {
                stmt.query_map([id.0], |row| Ok((get_u64(row, 0)?, row.get(1)?)))?
                    .collect()
            })
            .map_err(self.err("reading the event timeline"))?;
        rows.into_iter()
            .map(|(seq, json)| {
                serde_json::from_str(&json).map_err(|e| {
                    self.corrupt(format!("event {seq} of run {id} cannot be read: {e}"))
                })
            })
            .collect()
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<ContentHash, StoreError> {
        self.put_blob_sharing(bytes, &[])
    }

    fn put_blob_sharing(
        &self,
        bytes: &[u8],
        similar: &[ContentHash],
    ) -> Result<ContentHash, StoreError> {
        let mut conn = self.conn();
        let tx = self.write_tx(&mut conn)?;
        let hash = self.insert_blob(&tx, bytes, similar)?;
        tx.commit().map_err(self.err("committing a blob"))?;
        Ok(hash)
    }

    fn get_blob(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        let conn = self.conn();
        self.blob(&conn, hash)
    }

    fn lock(&self, id: RunId, holder: &LockInfo) -> Result<RunLock, StoreError> {
        {
            let conn = self.conn();
            self.head_seq(&conn, id)?;
        }
        lock::lock_run(&self.lock_dir, id, holder)
    }

    fn holder(&self, id: RunId) -> Result<Option<LockInfo>, StoreError> {
        {
            let conn = self.conn();
            self.head_seq(&conn, id)?;
        }
        lock::probe(&self.lock_dir, id)
    }
}

impl SqliteStore {
    fn blob(&self, conn: &Connection, hash: &ContentHash) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.blobs.read(conn, hash)?.map(|b| b.to_vec()))
    }

    fn write_hash(
        &self,
        conn: &Connection,
        id: RunId,
        step: &str,
    ) -> Result<Option<ContentHash>, StoreError> {
        conn.prepare_cached("SELECT value_hash FROM writes WHERE run_id = ?1 AND step_id = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![id.0, step], |row| row.get::<_, String>(0))
                    .optional()
            })
            .map_err(self.err("reading a step result"))
            .map(|hash| hash.map(ContentHash::from_hex))
    }
}
