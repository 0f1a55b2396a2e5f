//! Run locks that the server frees when their holder dies.
//!
//! A run's lock is the session-level advisory lock `(LOCK_CLASS, run id)`, taken on a
//! connection opened only for it and kept for as long as the holder drives the run. When the
//! holder drops the lock, exits or is killed (`kill -9`, a lost machine), its connection closes
//! and PostgreSQL releases the lock: no lease to expire, no stale row to clean. Two machines can
//! never both hold it. The holder's name goes to `run_holders` with the server process id of its
//! lock connection, so someone refused (or a listing) names the live holder, never a previous
//! one whose row was left behind.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use gavel_core::{LockInfo, RunId, RunLock, StoreError};
use postgres::{Client, Row};

use super::PgStore;
use super::schema::LOCK_CLASS;
use crate::lock::CONTENDED_FOR;

/// The lock's connection: dropping it ends the session, which releases the lock. The store
/// keeps a weak handle on it ([`HeldLock`]) to take the lock again on a new connection when
/// the server went away and came back (a restart frees every lock).
struct Held {
    client: Arc<Mutex<Client>>,
}

impl Drop for Held {
    /// Releases the lock before the connection closes: the server ends a closed session a
    /// moment later, and until then the lock still shows as held (a `holder` probe right after
    /// the drop named the old holder). The connection holds this one lock only. A failure
    /// (the server is gone) leaves the release to the session's end, as before.
    fn drop(&mut self) {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = client.simple_query("SELECT pg_advisory_unlock_all()");
    }
}

/// A lock this store's process holds, as the store remembers it.
pub(crate) struct HeldLock {
    run: RunId,
    holder: LockInfo,
    client: Weak<Mutex<Client>>,
}

/// Takes the lock of `run` on `client` if it is free, naming `holder` as its holder.
fn try_take(client: &mut Client, run: RunId, holder: &LockInfo) -> Result<bool, postgres::Error> {
    let got: bool = client
        .query_one(
            "SELECT pg_try_advisory_lock($1, $2)",
            &[&LOCK_CLASS, &key_or_zero(run)],
        )?
        .get(0);
    if got {
        let pid = i64::from(holder.pid);
        client.execute(
            "INSERT INTO run_holders (run_id, backend_pid, pid, host, command, since)
             VALUES ($1, pg_backend_pid(), $2, $3, $4, $5)
             ON CONFLICT (run_id) DO UPDATE SET backend_pid = EXCLUDED.backend_pid,
                 pid = EXCLUDED.pid, host = EXCLUDED.host,
                 command = EXCLUDED.command, since = EXCLUDED.since",
            &[&run.0, &pid, &holder.host, &holder.command, &holder.since],
        )?;
    }
    Ok(got)
}

fn key_or_zero(run: RunId) -> i32 {
    i32::try_from(run.0).unwrap_or(0)
}

/// After the server came back: checks every lock this process holds and takes again, on a
/// new connection, each one whose connection died. `Ok(false)`: the server cannot be reached
/// yet. A lock someone else took meanwhile is [`StoreError::Locked`]: this process must stop
/// driving that run.
pub(crate) fn retake(store: &PgStore) -> Result<bool, StoreError> {
    let mut held = store.held.lock().unwrap_or_else(PoisonError::into_inner);
    held.retain(|h| h.client.strong_count() > 0);
    for lock in held.iter() {
        let Some(client) = lock.client.upgrade() else {
            continue;
        };
        let mut client = client.lock().unwrap_or_else(PoisonError::into_inner);
        if client.simple_query("SELECT 1").is_ok() {
            continue;
        }
        let Ok(mut fresh) = store.connect() else {
            return Ok(false);
        };
        match try_take(&mut fresh, lock.run, &lock.holder) {
            Ok(true) => *client = fresh,
            Ok(false) => {
                let named = holder_on(store, &mut fresh, lock.run)?;
                return Err(StoreError::Locked {
                    run: lock.run,
                    holder: named.unwrap_or_else(unknown_holder),
                });
            }
            Err(_) => return Ok(false),
        }
    }
    Ok(true)
}

fn holder_on(
    store: &PgStore,
    client: &mut Client,
    run: RunId,
) -> Result<Option<LockInfo>, StoreError> {
    let objid = key(run)?.cast_unsigned();
    probe(|| {
        client
            .query_opt(HOLDER_SQL, &[&LOCK_CLASS.cast_unsigned(), &objid, &run.0])
            .map_err(|e| store.backend_error("looking for a run's holder", e))
    })
}

/// The advisory-lock key of `run`: lock keys are 32-bit.
fn key(run: RunId) -> Result<i32, StoreError> {
    i32::try_from(run.0).map_err(|e| {
        StoreError::backend(
            format!("run id {run} is too large for a PostgreSQL run lock"),
            e,
        )
    })
}

/// Takes `run`'s lock for `holder`, or names whoever holds it.
pub(crate) fn lock_run(
    store: &PgStore,
    run: RunId,
    holder: &LockInfo,
) -> Result<RunLock, StoreError> {
    key(run)?;
    let mut client = store.connect()?;
    let started = Instant::now();
    loop {
        let got = try_take(&mut client, run, holder)
            .map_err(|e| store.backend_error("locking a run", e))?;
        if got {
            let client = Arc::new(Mutex::new(client));
            store
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(HeldLock {
                    run,
                    holder: holder.clone(),
                    client: Arc::downgrade(&client),
                });
            return Ok(RunLock::new(Box::new(Held { client })));
        }
        // A holder that is just exiting releases the lock a moment after it says so.
        if started.elapsed() >= CONTENDED_FOR {
            let named = holder_on(store, &mut client, run)?;
            return Err(StoreError::Locked {
                run,
                holder: named.unwrap_or_else(unknown_holder),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Who holds a run's lock: one row when the lock is held, its name columns null while the
/// holder has not written its name yet. `pg_locks` lists every database's locks; its keys are
/// OIDs (u32), gavel's are positive.
const HOLDER_SQL: &str = "SELECT h.pid, h.host, h.command, h.since
     FROM pg_locks l
     LEFT JOIN run_holders h ON h.run_id = $3 AND h.backend_pid = l.pid
     WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = $2
       AND l.objsubid = 2 AND l.granted
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// Whether someone holds `run`'s lock, and who, without taking it (on the store's connection:
/// a listing asks this of every run it shows).
pub(crate) fn holder(store: &PgStore, run: RunId) -> Result<Option<LockInfo>, StoreError> {
    let objid = key(run)?.cast_unsigned();
    probe(|| {
        store.read("looking for a run's holder", |tx| {
            tx.query_opt(
                "looking for a run's holder",
                HOLDER_SQL,
                &[&LOCK_CLASS.cast_unsigned(), &objid, &run.0],
            )
        })
    })
}

/// Reads the holder with `query` (which runs [`HOLDER_SQL`]), again for a moment while the
/// holder has not written its name.
fn probe(
    mut query: impl FnMut() -> Result<Option<Row>, StoreError>,
) -> Result<Option<LockInfo>, StoreError> {
    let started = Instant::now();
    loop {
        let Some(row) = query()? else {
            return Ok(None);
        };
        if let Some(pid) = row.get::<_, Option<i64>>(0) {
            return Ok(Some(LockInfo {
                pid: u32::try_from(pid).unwrap_or(0),
                host: row.get::<_, Option<String>>(1).unwrap_or_default(),
                command: row.get::<_, Option<String>>(2).unwrap_or_default(),
                since: row.get::<_, Option<String>>(3).unwrap_or_default(),
            }));
        }
        if started.elapsed() >= Duration::from_millis(200) {
            return Ok(Some(unknown_holder()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn unknown_holder() -> LockInfo {
    LockInfo {
        pid: 0,
        host: String::new(),
        command: "a process that has not written its name".into(),
        since: String::new(),
    }
}
