//! One PostgreSQL transaction as the store's code uses it: statements prepared once per
//! connection, failures mapped to store errors that name the database, and the `blobs` table
//! for the shared codec.

use std::cell::RefCell;
use std::collections::HashMap;

use gavel_core::{ContentHash, StoreError};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Row, Statement, Transaction};

use super::{backend_error, is_connection_lost, is_retryable};
use crate::blobs::BlobTable;

/// Query parameters.
pub(crate) type Params<'p> = [&'p (dyn ToSql + Sync)];

/// An open transaction. Its methods take `&self` (the codec's [`BlobTable`] does), so the
/// transaction sits in a `RefCell`; nothing here is shared between threads.
pub(crate) struct Tx<'a> {
    tx: RefCell<Session<'a>>,
    stmts: RefCell<&'a mut HashMap<&'static str, Statement>>,
    shown: &'a str,
    /// A failure that only means "try the transaction again" (deadlock, serialization).
    retryable: RefCell<Option<postgres::Error>>,
    /// Whether a query failed because the connection went away.
    lost: std::cell::Cell<bool>,
}

/// Where a [`Tx`]'s queries go: an open transaction, or (a read) the connection itself, each
/// query on its own, which saves the `BEGIN` and `COMMIT` round trips.
pub(crate) enum Session<'a> {
    Transaction(Transaction<'a>),
    Autocommit(&'a mut postgres::Client),
}

impl Session<'_> {
    fn prepare(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        match self {
            Self::Transaction(t) => t.prepare(sql),
            Self::Autocommit(c) => c.prepare(sql),
        }
    }

    fn query(
        &mut self,
        stmt: &Statement,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, postgres::Error> {
        match self {
            Self::Transaction(t) => t.query(stmt, params),
            Self::Autocommit(c) => c.query(stmt, params),
        }
    }

    fn query_opt(
        &mut self,
        stmt: &Statement,
        params: &Params<'_>,
    ) -> Result<Option<Row>, postgres::Error> {
        match self {
            Self::Transaction(t) => t.query_opt(stmt, params),
            Self::Autocommit(c) => c.query_opt(stmt, params),
        }
    }

    fn execute(&mut self, stmt: &Statement, params: &Params<'_>) -> Result<u64, postgres::Error> {
        match self {
            Self::Transaction(t) => t.execute(stmt, params),
            Self::Autocommit(c) => c.execute(stmt, params),
        }
    }
}

impl<'a> Tx<'a> {
    pub(crate) fn new(
        tx: Session<'a>,
        stmts: &'a mut HashMap<&'static str, Statement>,
        shown: &'a str,
    ) -> Self {
        Self {
            tx: RefCell::new(tx),
            stmts: RefCell::new(stmts),
            shown,
            retryable: RefCell::new(None),
            lost: std::cell::Cell::new(false),
        }
    }

    /// Commits (a read has nothing to commit); the error is PostgreSQL's own, so the caller
    /// can tell a retryable one.
    pub(crate) fn commit(self) -> Result<(), postgres::Error> {
        match self.tx.into_inner() {
            Session::Transaction(t) => t.commit(),
            Session::Autocommit(_) => Ok(()),
        }
    }

    /// The failure that aborted this transaction, when trying again can get past it.
    pub(crate) fn take_retryable(&self) -> Option<postgres::Error> {
        self.retryable.borrow_mut().take()
    }

    fn statement(&self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(stmt) = self.stmts.borrow().get(sql) {
            return Ok(stmt.clone());
        }
        let stmt = self.tx.borrow_mut().prepare(sql)?;
        self.stmts.borrow_mut().insert(sql, stmt.clone());
        Ok(stmt)
    }

    /// Whether a query failed because the connection or the server went away.
    pub(crate) fn connection_lost(&self) -> bool {
        self.lost.get()
    }

    fn fail(&self, doing: &str, e: postgres::Error) -> StoreError {
        if is_connection_lost(&e) {
            self.lost.set(true);
        }
        if is_retryable(&e) {
            let message = format!("{doing}: {e}");
            *self.retryable.borrow_mut() = Some(e);
            return StoreError::Backend {
                message,
                source: None,
            };
        }
        backend_error(self.shown, doing, e)
    }

    /// Every row `sql` returns.
    pub(crate) fn query(
        &self,
        doing: &str,
        sql: &'static str,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, StoreError> {
        self.statement(sql)
            .and_then(|stmt| self.tx.borrow_mut().query(&stmt, params))
            .map_err(|e| self.fail(doing, e))
    }

    /// The one row `sql` returns, if any.
    pub(crate) fn query_opt(
        &self,
        doing: &str,
        sql: &'static str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, StoreError> {
        self.statement(sql)
            .and_then(|stmt| self.tx.borrow_mut().query_opt(&stmt, params))
            .map_err(|e| self.fail(doing, e))
    }

    /// Runs `sql`, answering how many rows it changed.
    pub(crate) fn execute(
        &self,
        doing: &str,
        sql: &'static str,
        params: &Params<'_>,
    ) -> Result<u64, StoreError> {
        self.statement(sql)
            .and_then(|stmt| self.tx.borrow_mut().execute(&stmt, params))
            .map_err(|e| self.fail(doing, e))
    }
}

/// Whether `e` is PostgreSQL refusing a row whose key another transaction took (a one-statement
/// write then leaves the work to a transaction that looks under the run's lock).
pub(crate) fn is_unique_violation(e: &StoreError) -> bool {
    let StoreError::Backend {
        source: Some(source),
        ..
    } = e
    else {
        return false;
    };
    source
        .downcast_ref::<postgres::Error>()
        .and_then(postgres::Error::code)
        .is_some_and(|c| *c == SqlState::UNIQUE_VIOLATION)
}

impl BlobTable for Tx<'_> {
    fn has(&self, hash: &ContentHash) -> Result<bool, StoreError> {
        self.query_opt(
            "looking up a blob",
            "SELECT 1 FROM blobs WHERE hash = $1",
            &[&hash.as_str()],
        )
        .map(|row| row.is_some())
    }

    fn row(&self, hash: &ContentHash) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        self.query_opt(
            "reading a blob",
            "SELECT data, codec FROM blobs WHERE hash = $1",
            &[&hash.as_str()],
        )
        .map(|row| row.map(|r| (r.get(0), r.get(1))))
    }

    fn depth(&self, hash: &ContentHash) -> Result<Option<i64>, StoreError> {
        self.query_opt(
            "reading a blob",
            "SELECT depth FROM blobs WHERE hash = $1",
            &[&hash.as_str()],
        )
        .map(|row| row.map(|r| r.get(0)))
    }

    /// A look-up is a round trip to the server: the codec skips it and relies on `put`
    /// keeping an existing row.
    fn has_is_cheap(&self) -> bool {
        false
    }

    fn put(
        &self,
        hash: &ContentHash,
        data: &[u8],
        codec: i64,
        depth: i64,
    ) -> Result<bool, StoreError> {
        // Another machine may store the same content at the same moment: theirs is as good.
        self.execute(
            "storing a blob",
            "INSERT INTO blobs (hash, data, codec, depth) VALUES ($1, $2, $3, $4)
             ON CONFLICT (hash) DO NOTHING",
            &[&hash.as_str(), &data, &codec, &depth],
        )
        .map(|added| added > 0)
    }
}
