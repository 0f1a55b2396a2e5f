//! Transactions whose `BEGIN`, `COMMIT` and `ROLLBACK` stay compiled.
//!
//! rusqlite's `Transaction` runs each of them as a new statement (`execute_batch`), compiled
//! every time. A brief → issue run then began and ended about a hundred transactions (45 since
//! the engine reads the journal once per session and stores a node's blobs with its
//! checkpoint): 220 of the 241 statements it compiled were these three words. [`Tx`] runs them from the connection's
//! statement cache and otherwise behaves like rusqlite's: it reads as the connection, commits
//! with [`Tx::commit`], and rolls back when dropped uncommitted (an error, a panic). It also
//! tells the store's blob codec how the transaction ended, so that the blob rows it wrote are
//! known from then on (or forgotten).

use std::ops::Deref;

use rusqlite::Connection;

use crate::blobs::Blobs;

/// An open transaction on a connection.
pub(super) struct Tx<'c> {
    conn: &'c Connection,
    /// Committed: nothing to roll back.
    done: bool,
    /// The codec whose blob rows this transaction may write.
    blobs: Option<&'c Blobs>,
}

impl<'c> Tx<'c> {
    /// Begins a transaction: `IMMEDIATE` (takes the write lock now) or `DEFERRED`. A write
    /// transaction names the blob codec it writes through.
    pub(super) fn begin(
        conn: &'c mut Connection,
        immediate: bool,
        blobs: Option<&'c Blobs>,
    ) -> rusqlite::Result<Self> {
        let sql = if immediate {
            "BEGIN IMMEDIATE"
        } else {
            "BEGIN DEFERRED"
        };
        conn.prepare_cached(sql)?.execute([])?;
        if let Some(blobs) = blobs {
            // Whatever an unfinished earlier transaction left pending did not commit.
            blobs.rolled_back();
        }
        Ok(Self {
            conn,
            done: false,
            blobs,
        })
    }

    /// Commits. On failure the transaction is rolled back (as the value is dropped).
    pub(super) fn commit(mut self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.done = true;
        if let Some(blobs) = self.blobs {
            blobs.committed();
        }
        Ok(())
    }
}

impl Deref for Tx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if let (false, Some(blobs)) = (self.done, self.blobs) {
            blobs.rolled_back();
        }
        if !self.done && !self.conn.is_autocommit() {
            // A failure leaves the connection as SQLite left it; the next BEGIN reports it.
            let _ = self
                .conn
                .prepare_cached("ROLLBACK")
                .and_then(|mut stmt| stmt.execute([]));
        }
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, StatementStatus};

    use super::Tx;

    fn table() -> Connection {
        let conn = Connection::open_in_memory().expect("a database");
        conn.execute_batch("CREATE TABLE t (x INTEGER)")
            .expect("a table");
        conn
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .expect("a count")
    }

    #[test]
    fn commits_keep_rolled_back_and_dropped_transactions_do_not() {
        let mut conn = table();
        let tx = Tx::begin(&mut conn, true, None).expect("begin");
        tx.execute("INSERT INTO t VALUES (1)", []).expect("insert");
        tx.commit().expect("commit");
        assert_eq!(count(&conn), 1);
        {
            let tx = Tx::begin(&mut conn, true, None).expect("begin");
            tx.execute("INSERT INTO t VALUES (2)", []).expect("insert");
        }
        assert_eq!(count(&conn), 1, "dropped uncommitted: rolled back");
        assert!(conn.is_autocommit(), "no transaction left open");
        let tx = Tx::begin(&mut conn, false, None).expect("a read transaction");
        assert_eq!(count(&tx), 1);
        drop(tx);
        assert!(conn.is_autocommit());
    }

    #[test]
    fn begin_and_commit_are_compiled_once() {
        let mut conn = table();
        for i in 0..5 {
            let tx = Tx::begin(&mut conn, true, None).expect("begin");
            tx.execute("INSERT INTO t VALUES (?1)", [i])
                .expect("insert");
            tx.commit().expect("commit");
        }
        for sql in ["BEGIN IMMEDIATE", "COMMIT"] {
            let stmt = conn.prepare_cached(sql).expect("cached");
            assert_eq!(stmt.get_status(StatementStatus::Run), 5, "{sql}");
        }
        assert_eq!(count(&conn), 5);
    }
}
