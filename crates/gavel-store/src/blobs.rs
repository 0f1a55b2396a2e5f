//! How a blob sits in the `blobs` table: whole, deflated, or as a delta against other blobs.
//!
//! Every blob is addressed by the sha256 of its content, whatever its encoding, so callers never
//! see the difference. A blob is stored as a [`delta`](crate::delta) when the caller names blobs
//! it shares content with (a prompt names the draft inside it; a checkpoint's state names its
//! parent's state) and the delta copies a good part of it; otherwise it is deflated when that
//! makes it smaller, and kept raw when not. A delta may build on deltas up to [`MAX_DEPTH`]
//! levels, so reading one never touches more than a bounded number of rows. Reading a delta
//! re-checks the sha256 of what it rebuilt: damage is reported as corruption, never returned.
//!
//! The encoding (schema version 2): `codec` 0 raw, 1 raw deflate of the content, 2 raw deflate
//! of `varint base-count, base-count x 32-byte sha256, delta` (see [`crate::delta::serialize`]);
//! `depth` is 0 for whole blobs and one more than the deepest base for a delta.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};

use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::{Compress, Compression, FlushCompress, Status};
use gavel_core::{ContentHash, StoreError};
use rusqlite::{Connection, OptionalExtension, params};

use crate::delta::{self, DeltaError};

pub(crate) const RAW: i64 = 0;
pub(crate) const DEFLATE: i64 = 1;
pub(crate) const DELTA: i64 = 2;
/// A delta too small for deflate to pay (most checkpoint states): stored as is.
pub(crate) const DELTA_PLAIN: i64 = 3;
/// Deltas shorter than this are not deflated.
const MIN_DEFLATE_DELTA: usize = 256;

/// How many delta levels a read may have to follow.
pub(crate) const MAX_DEPTH: i64 = 8;
/// Blobs shorter than this are kept raw: deflate cannot win much on them.
const MIN_COMPRESS: usize = 64;
/// Deflate's level: 2 (zlib-ng's fast strategy). Level 6 made a brief → issue run 0.2 to 0.3 ms
/// slower for 0.2% less storage on the project's benchmark, where deltas hold most bytes.
const LEVEL: u32 = 2;
/// Deflate's window, 8 KiB: a smaller compressor to set up (its tables are zeroed once per
/// process), and text repeats itself within that distance. Any window reads back the same.
const WINDOW_BITS: u8 = 13;
/// Recently written or read contents kept decoded, so the parent state or the draft a new blob
/// is delta-encoded against is not read back and rebuilt from the table every time.
const CACHE_ENTRIES: usize = 16;
const CACHE_BYTES: usize = 8 << 20;

/// The `blobs` table of one backend, as the codec layer needs it (SQLite's connection, a
/// PostgreSQL transaction): the codec is the same for every backend.
pub(crate) trait BlobTable {
    /// Whether blob `hash` has a row.
    fn has(&self, hash: &ContentHash) -> Result<bool, StoreError>;
    /// Blob `hash`'s `(data, codec)`.
    fn row(&self, hash: &ContentHash) -> Result<Option<(Vec<u8>, i64)>, StoreError>;
    /// Blob `hash`'s delta depth.
    fn depth(&self, hash: &ContentHash) -> Result<Option<i64>, StoreError>;
    /// Whether [`Self::has`] is cheap (an in-process look-up). When it is not (a round trip to
    /// a server), the codec skips it: [`Self::put`] must then accept a blob that already has a
    /// row, keeping the row as it is.
    fn has_is_cheap(&self) -> bool {
        true
    }
    /// Adds the row of blob `hash` (it has none yet, unless `has_is_cheap` is false); whether
    /// a row was added (`false`: one was there, and is kept as it is).
    fn put(
        &self,
        hash: &ContentHash,
        data: &[u8],
        codec: i64,
        depth: i64,
    ) -> Result<bool, StoreError>;
}

impl BlobTable for Connection {
    fn has(&self, hash: &ContentHash) -> Result<bool, StoreError> {
        self.prepare_cached("SELECT 1 FROM blobs WHERE hash = ?1")
            .and_then(|mut stmt| stmt.exists([hash.as_str()]))
            .map_err(|e| StoreError::backend("looking up a blob", e))
    }

    fn row(&self, hash: &ContentHash) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        self.prepare_cached("SELECT data, codec FROM blobs WHERE hash = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([hash.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .map_err(|e| StoreError::backend("reading a blob", e))
    }

    fn depth(&self, hash: &ContentHash) -> Result<Option<i64>, StoreError> {
        self.prepare_cached("SELECT depth FROM blobs WHERE hash = ?1")
            .and_then(|mut stmt| stmt.query_row([hash.as_str()], |r| r.get(0)).optional())
            .map_err(|e| StoreError::backend("reading a blob", e))
    }

    fn put(
        &self,
        hash: &ContentHash,
        data: &[u8],
        codec: i64,
        depth: i64,
    ) -> Result<bool, StoreError> {
        self.prepare_cached("INSERT INTO blobs (hash, data, codec, depth) VALUES (?1, ?2, ?3, ?4)")
            .and_then(|mut stmt| stmt.execute(params![hash.as_str(), data, codec, depth]))
            .map(|added| added > 0)
            .map_err(|e| StoreError::backend("storing a blob", e))
    }
}

/// A delta as it would be stored: `(data, codec, depth, bytes copied from bases)`.
type Encoded = (Vec<u8>, i64, i64, usize);

/// The codec layer over one connection's `blobs` table.
#[derive(Default)]
pub(crate) struct Blobs {
    cache: Mutex<Vec<(ContentHash, Arc<[u8]>)>>,
    /// Blobs whose rows a committed transaction of this process wrote or found, with their
    /// depths: rows are never deleted, so they need no look-up again. Even SQLite's look-up is
    /// not free: one outside a transaction is a read transaction of its own, with its locks.
    known: Mutex<std::collections::HashMap<ContentHash, i64>>,
    /// The rows the current transaction wrote or found, known once it commits
    /// ([`Self::committed`]).
    pending: Mutex<Vec<(ContentHash, i64)>>,
}

/// How many committed blobs [`Blobs`] remembers before it starts again.
const KNOWN_ENTRIES: usize = 4096;

impl Blobs {
    /// Stores `bytes` (idempotent), as a delta against `bases` when that pays off.
    pub(crate) fn insert(
        &self,
        conn: &dyn BlobTable,
        bytes: &[u8],
        bases: &[ContentHash],
    ) -> Result<ContentHash, StoreError> {
        let hash = ContentHash::of(bytes);
        if self.known_depth(&hash).is_some() {
            // A committed row: nothing to write or ask.
        } else if conn.has_is_cheap() {
            // The row's depth, if it has one, answers whether it exists and is remembered with
            // the transaction (it may be this transaction's own row, which a rollback undoes).
            let depth = match conn.depth(&hash)? {
                Some(depth) => depth,
                None => {
                    let (data, codec, depth) = self.encode(conn, bytes, bases)?;
                    conn.put(&hash, &data, codec, depth)?;
                    depth
                }
            };
            lock(&self.pending).push((hash.clone(), depth));
        } else {
            // One round trip: the row is added unless it exists (then it is kept as it is).
            let (data, codec, depth) = self.encode(conn, bytes, bases)?;
            // Only a row this transaction added has the depth chosen here (an existing one
            // may be encoded otherwise): remember only those.
            if conn.put(&hash, &data, codec, depth)? {
                lock(&self.pending).push((hash.clone(), depth));
            }
        }
        self.remember(&hash, Arc::from(bytes));
        Ok(hash)
    }

    /// Blob `hash` has a row of `depth` once the current transaction commits: for a backend
    /// that writes the rows [`Self::insert`] encoded later, in one statement, and learns then
    /// which it added and which were there.
    pub(crate) fn found(&self, hash: ContentHash, depth: i64) {
        lock(&self.pending).push((hash, depth));
    }

    /// The depth of a blob a committed transaction of this process wrote.
    fn known_depth(&self, hash: &ContentHash) -> Option<i64> {
        lock(&self.known).get(hash).copied()
    }

    /// The transaction that wrote the pending rows committed: they exist from now on.
    pub(crate) fn committed(&self) {
        let pending = std::mem::take(&mut *lock(&self.pending));
        let mut known = lock(&self.known);
        if known.len() + pending.len() > KNOWN_ENTRIES {
            known.clear();
        }
        known.extend(pending);
    }

    /// Forgets every blob remembered as written (the connection was replaced).
    pub(crate) fn forget_known(&self) {
        lock(&self.known).clear();
    }

    /// The transaction that wrote the pending rows did not commit: forget them.
    pub(crate) fn rolled_back(&self) {
        lock(&self.pending).clear();
    }

    /// The content of blob `hash`, or `None` if there is no such blob.
    pub(crate) fn read(
        &self,
        conn: &dyn BlobTable,
        hash: &ContentHash,
    ) -> Result<Option<Arc<[u8]>>, StoreError> {
        self.read_at(conn, hash, 0)
    }

    fn read_at(
        &self,
        conn: &dyn BlobTable,
        hash: &ContentHash,
        level: i64,
    ) -> Result<Option<Arc<[u8]>>, StoreError> {
        if let Some(hit) = self.cached(hash) {
            // Only a blob that is in the table counts: the cache may remember one whose
            // transaction was rolled back.
            if self.known_depth(hash).is_some() || conn.has(hash)? {
                return Ok(Some(hit));
            }
        }
        let Some((data, codec)) = conn.row(hash)? else {
            return Ok(None);
        };
        let content: Arc<[u8]> = match codec {
            RAW => Arc::from(data),
            DEFLATE => Arc::from(inflate(&data).map_err(|e| damaged(hash, &e))?),
            DELTA | DELTA_PLAIN => {
                if level >= MAX_DEPTH {
                    return Err(damaged(
                        hash,
                        &"its deltas nest deeper than gavel writes them",
                    ));
                }
                let plain = match codec {
                    DELTA => inflate(&data).map_err(|e| damaged(hash, &e))?,
                    _ => data,
                };
                let built = self.rebuild(conn, hash, &plain, level)?;
                if ContentHash::of(&built) != *hash {
                    return Err(damaged(
                        hash,
                        &"the rebuilt content does not match its hash",
                    ));
                }
                Arc::from(built)
            }
            other => return Err(damaged(hash, &format!("unknown codec {other}"))),
        };
        self.remember(hash, content.clone());
        Ok(Some(content))
    }

    fn rebuild(
        &self,
        conn: &dyn BlobTable,
        hash: &ContentHash,
        plain: &[u8],
        level: i64,
    ) -> Result<Vec<u8>, StoreError> {
        let mut rest = plain;
        let count = delta::take_varint(&mut rest).map_err(|e| damaged(hash, &e))?;
        let mut bases = Vec::new();
        for _ in 0..count {
            let (raw, tail) = rest
                .split_at_checked(32)
                .ok_or_else(|| damaged(hash, &DeltaError::Truncated))?;
            rest = tail;
            let base = ContentHash::from_hex(to_hex(raw));
            let content = self
                .read_at(conn, &base, level + 1)?
                .ok_or_else(|| damaged(hash, &format!("its base {base} is missing")))?;
            bases.push(content);
        }
        let slices: Vec<&[u8]> = bases.iter().map(|b| &b[..]).collect();
        delta::apply(rest, &slices).map_err(|e| damaged(hash, &e))
    }

    /// `(data, codec, depth)` for a new blob.
    fn encode(
        &self,
        conn: &dyn BlobTable,
        bytes: &[u8],
        bases: &[ContentHash],
    ) -> Result<(Vec<u8>, i64, i64), StoreError> {
        if bytes.len() < MIN_COMPRESS {
            return Ok((bytes.to_vec(), RAW, 0));
        }
        let delta = self.delta(conn, bytes, bases)?;
        if let Some((data, codec, depth, copied)) = &delta
            && *copied * 2 >= bytes.len()
        {
            return Ok((data.clone(), *codec, *depth));
        }
        let deflated = deflate(bytes);
        let best = match delta {
            Some((data, codec, depth, _)) if data.len() < deflated.len() => (data, codec, depth),
            _ if deflated.len() < bytes.len() => (deflated, DEFLATE, 0),
            _ => (bytes.to_vec(), RAW, 0),
        };
        Ok(best)
    }

    /// The stored delta of `bytes` against the usable `bases` (deflated when large enough to
    /// gain), its codec, its depth and how many bytes it copies; `None` when no base is usable
    /// or nothing is shared.
    fn delta(
        &self,
        conn: &dyn BlobTable,
        bytes: &[u8],
        bases: &[ContentHash],
    ) -> Result<Option<Encoded>, StoreError> {
        let mut usable: Vec<(ContentHash, Arc<[u8]>, i64)> = Vec::new();
        for base in bases {
            if usable.iter().any(|(h, _, _)| h == base) || from_hex(base).is_none() {
                continue;
            }
            let depth = match self.known_depth(base) {
                Some(depth) => Some(depth),
                None => conn.depth(base)?,
            };
            let Some(depth) = depth.filter(|d| *d < MAX_DEPTH) else {
                continue;
            };
            // The row exists (it has a depth): a cached content needs no second look-up.
            let content = match self.cached(base) {
                Some(hit) => Some(hit),
                None => self.read(conn, base)?,
            };
            if let Some(content) = content {
                usable.push((base.clone(), content, depth));
            }
        }
        if usable.is_empty() {
            return Ok(None);
        }
        let slices: Vec<&[u8]> = usable.iter().map(|(_, c, _)| &c[..]).collect();
        let mut ops = delta::encode(bytes, &slices);
        let copied = delta::copied(&ops);
        if copied == 0 {
            return Ok(None);
        }
        // Keep only the bases a copy uses, renumbered in order.
        let mut used: Vec<usize> = Vec::new();
        for op in &mut ops {
            if let delta::Op::Copy { base, .. } = op {
                let at = used.iter().position(|u| u == base).unwrap_or_else(|| {
                    used.push(*base);
                    used.len() - 1
                });
                *base = at;
            }
        }
        let mut plain = Vec::with_capacity(bytes.len() / 8 + 64);
        delta::put_varint(&mut plain, used.len() as u64);
        let mut depth = 0;
        for &u in &used {
            let (hash, _, d) = &usable[u];
            plain.extend_from_slice(&from_hex(hash).unwrap_or([0; 32]));
            depth = depth.max(d + 1);
        }
        delta::serialize(&ops, bytes.len(), &mut plain);
        if plain.len() < MIN_DEFLATE_DELTA {
            return Ok(Some((plain, DELTA_PLAIN, depth, copied)));
        }
        Ok(Some((deflate(&plain), DELTA, depth, copied)))
    }

    fn cached(&self, hash: &ContentHash) -> Option<Arc<[u8]>> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache
            .iter()
            .find(|(h, _)| h == hash)
            .map(|(_, c)| c.clone())
    }

    fn remember(&self, hash: &ContentHash, content: Arc<[u8]>) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.retain(|(h, _)| h != hash);
        cache.push((hash.clone(), content));
        let mut total: usize = cache.iter().map(|(_, c)| c.len()).sum();
        while cache.len() > CACHE_ENTRIES || (total > CACHE_BYTES && cache.len() > 1) {
            total -= cache[0].1.len();
            cache.remove(0);
        }
    }

    /// Forgets every cached content.
    #[cfg(test)]
    fn forget(&self) {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

thread_local! {
    /// One compressor per thread, reset between blobs: a new one zeroes a few hundred KB of
    /// tables, which was a visible part of a short run's time. Level 2 with an 8 KiB window
    /// ([`LEVEL`], [`WINDOW_BITS`]).
    static COMPRESSOR: RefCell<Compress> =
        RefCell::new(Compress::new_with_window_bits(Compression::new(LEVEL), false, WINDOW_BITS));
}

/// Raw deflate of `bytes`.
fn deflate(bytes: &[u8]) -> Vec<u8> {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        c.reset();
        let mut out = Vec::with_capacity(bytes.len() / 2 + 64);
        loop {
            let consumed = usize::try_from(c.total_in()).unwrap_or(usize::MAX);
            let input = bytes.get(consumed..).unwrap_or_default();
            match c.compress_vec(input, &mut out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => return out,
                Ok(_) => out.reserve(out.capacity().max(1024)),
                // Cannot happen for in-memory input; fall back to a fresh encoder.
                Err(_) => return deflate_fresh(bytes),
            }
        }
    })
}

fn deflate_fresh(bytes: &[u8]) -> Vec<u8> {
    let mut enc = DeflateEncoder::new(Vec::with_capacity(bytes.len() / 3), Compression::new(LEVEL));
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

fn inflate(data: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::with_capacity(data.len() * 4);
    DeflateDecoder::new(data).read_to_end(&mut out)?;
    Ok(out)
}

fn damaged(hash: &ContentHash, why: &dyn std::fmt::Display) -> StoreError {
    StoreError::backend(
        format!("reading blob {hash}"),
        std::io::Error::other(format!("the stored blob is damaged: {why}")),
    )
}

fn from_hex(hash: &ContentHash) -> Option<[u8; 32]> {
    let hex = hash.as_str().as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks_exact(2).enumerate() {
        let hi = char::from(pair[0]).to_digit(16)?;
        let lo = char::from(pair[1]).to_digit(16)?;
        out[i] = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(out)
}

fn to_hex(raw: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(raw.len() * 2);
    for b in raw {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    s
}

/// `mutex`'s value; a panic while it was held left nothing half-done in these lists.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
#[path = "blobs_tests.rs"]
mod tests;
