//! Blob rows gathered for one statement instead of written one round trip each.
//!
//! A step's write is one statement on PostgreSQL ([`super::commit`]): its blobs travel in it as
//! arrays. The shared codec ([`crate::blobs`]) still chooses each blob's encoding; this table
//! keeps the rows it would write, answers for them when a later blob of the same write is
//! encoded against one, and asks the server only about older blobs it does not remember. The
//! statement reports which rows it added and which were already there ([`Batch::settle`]), and
//! only then does the codec count them as stored.

use std::cell::RefCell;

use gavel_core::{ContentHash, StoreError};

use super::Tx;
use crate::blobs::{BlobTable, Blobs};

/// One blob row waiting for its statement.
struct Row {
    hash: String,
    data: Vec<u8>,
    codec: i64,
    depth: i64,
}

/// The blob rows of one write, as the statement's array parameters want them.
pub(crate) struct Batch<'t, 'a> {
    tx: &'t Tx<'a>,
    rows: RefCell<Vec<Row>>,
}

impl<'t, 'a> Batch<'t, 'a> {
    pub(crate) fn new(tx: &'t Tx<'a>) -> Self {
        Self {
            tx,
            rows: RefCell::new(Vec::new()),
        }
    }

    /// The rows' hashes, contents, codecs and depths, one array each (the batch is empty
    /// afterwards).
    pub(crate) fn take_columns(&self) -> (Vec<String>, Vec<Vec<u8>>, Vec<i64>, Vec<i64>) {
        let rows = std::mem::take(&mut *self.rows.borrow_mut());
        let mut columns = (
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
        );
        for row in rows {
            columns.0.push(row.hash);
            columns.1.push(row.data);
            columns.2.push(row.codec);
            columns.3.push(row.depth);
        }
        columns
    }

    /// The statement committed: each row it added has the depth chosen here, each it found
    /// has its stored depth; the codec remembers both once the transaction is over.
    pub(crate) fn settle(blobs: &Blobs, hashes: Vec<String>, depths: Vec<i64>) {
        for (hash, depth) in hashes.into_iter().zip(depths) {
            blobs.found(ContentHash::from_hex(hash), depth);
        }
    }

    fn pending(&self, hash: &ContentHash) -> Option<(Vec<u8>, i64, i64)> {
        self.rows
            .borrow()
            .iter()
            .find(|r| r.hash == hash.as_str())
            .map(|r| (r.data.clone(), r.codec, r.depth))
    }
}

impl BlobTable for Batch<'_, '_> {
    fn has(&self, hash: &ContentHash) -> Result<bool, StoreError> {
        match self.pending(hash) {
            Some(_) => Ok(true),
            None => self.tx.has(hash),
        }
    }

    fn row(&self, hash: &ContentHash) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        match self.pending(hash) {
            Some((data, codec, _)) => Ok(Some((data, codec))),
            None => self.tx.row(hash),
        }
    }

    fn depth(&self, hash: &ContentHash) -> Result<Option<i64>, StoreError> {
        match self.pending(hash) {
            Some((_, _, depth)) => Ok(Some(depth)),
            None => self.tx.depth(hash),
        }
    }

    /// Asking is a round trip: the codec encodes every blob it does not remember, and the
    /// statement keeps a row that exists as it is.
    fn has_is_cheap(&self) -> bool {
        false
    }

    /// Keeps the row for the statement. Nothing is written yet, so the answer is `false`: the
    /// codec learns what was written from [`Batch::settle`].
    fn put(
        &self,
        hash: &ContentHash,
        data: &[u8],
        codec: i64,
        depth: i64,
    ) -> Result<bool, StoreError> {
        if self.pending(hash).is_none() {
            self.rows.borrow_mut().push(Row {
                hash: hash.as_str().to_owned(),
                data: data.to_vec(),
                codec,
                depth,
            });
        }
        Ok(false)
    }
}
