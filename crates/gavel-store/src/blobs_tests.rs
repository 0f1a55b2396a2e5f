//! The blob codec against a real SQLite table: encodings chosen, deltas rebuilt and checked.

use super::*;

fn conn() -> Connection {
    let conn = Connection::open_in_memory().expect("open");
    conn.execute_batch(
        "CREATE TABLE blobs (hash TEXT PRIMARY KEY, data BLOB NOT NULL,
             codec INTEGER NOT NULL DEFAULT 0, depth INTEGER NOT NULL DEFAULT 0);",
    )
    .expect("schema");
    conn
}

fn text(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b"abcdefgh ijklmnop\n"[(x % 18) as usize]
        })
        .collect()
}

fn codec(conn: &Connection, hash: &ContentHash) -> (i64, i64, i64) {
    conn.query_row(
        "SELECT codec, depth, length(data) FROM blobs WHERE hash = ?1",
        [hash.as_str()],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .expect("row")
}

#[test]
fn small_blobs_stay_raw_and_text_is_deflated() {
    let conn = conn();
    let blobs = Blobs::default();
    let small = blobs.insert(&conn, b"tiny", &[]).expect("insert");
    assert_eq!(codec(&conn, &small).0, RAW);
    let big = text(1, 10_000);
    let h = blobs.insert(&conn, &big, &[]).expect("insert");
    let (c, d, len) = codec(&conn, &h);
    assert_eq!((c, d), (DEFLATE, 0));
    assert!(len < 8_000, "{len}");
    blobs.forget();
    assert_eq!(
        &blobs.read(&conn, &h).expect("read").expect("some")[..],
        &big[..]
    );
    assert_eq!(h, ContentHash::of(&big));
}

#[test]
fn a_blob_around_a_base_is_a_small_delta_and_reads_back() {
    let conn = conn();
    let blobs = Blobs::default();
    let draft = text(2, 40_000);
    let d = blobs.insert(&conn, &draft, &[]).expect("draft");
    let mut prompt = b"Review this:\n\n".to_vec();
    prompt.extend_from_slice(&draft[10..]);
    prompt.extend_from_slice(b"\nAnswer in JSON.\n");
    let missing = ContentHash::of(b"not stored");
    let p = blobs
        .insert(&conn, &prompt, &[missing, d.clone(), d.clone()])
        .expect("prompt");
    let (c, depth, len) = codec(&conn, &p);
    assert_eq!(
        (c, depth),
        (DELTA_PLAIN, 1),
        "a small delta is not deflated"
    );
    assert!(len < 100, "{len}");
    // Much new text around the copy: the delta is deflated.
    let mut long = text(9, 2_000);
    long.extend_from_slice(&draft);
    let l = blobs.insert(&conn, &long, &[d]).expect("long");
    let (c, depth, len) = codec(&conn, &l);
    assert_eq!((c, depth), (DELTA, 1));
    assert!(len < 1_800, "{len}");
    blobs.forget();
    assert_eq!(
        &blobs.read(&conn, &p).expect("read").expect("some")[..],
        &prompt[..]
    );
    assert_eq!(
        &blobs.read(&conn, &l).expect("read").expect("some")[..],
        &long[..]
    );
}

#[test]
fn delta_chains_stop_at_the_maximum_depth() {
    let conn = conn();
    let blobs = Blobs::default();
    let mut state = text(3, 3_000);
    let mut parent = blobs.insert(&conn, &state, &[]).expect("first");
    let mut depths = Vec::new();
    let mut all = vec![(parent.clone(), state.clone())];
    for i in 0..20u8 {
        state[100] = i;
        let h = blobs.insert(&conn, &state, &[parent]).expect("next");
        depths.push(codec(&conn, &h).1);
        all.push((h.clone(), state.clone()));
        parent = h;
    }
    assert!(depths.iter().all(|d| *d <= MAX_DEPTH), "{depths:?}");
    assert!(
        depths.contains(&0),
        "a whole blob restarts the chain: {depths:?}"
    );
    blobs.forget();
    for (h, want) in all {
        assert_eq!(
            &blobs.read(&conn, &h).expect("read").expect("some")[..],
            &want[..]
        );
    }
}

#[test]
fn a_damaged_delta_is_reported_not_returned() {
    let conn = conn();
    let blobs = Blobs::default();
    let base = text(4, 5_000);
    let b = blobs.insert(&conn, &base, &[]).expect("base");
    let mut target = base.clone();
    target.extend_from_slice(b"more");
    let t = blobs
        .insert(&conn, &target, std::slice::from_ref(&b))
        .expect("target");
    assert_eq!(codec(&conn, &t).0, DELTA_PLAIN);
    blobs.forget();
    // Replace the base's content with other bytes under the same hash.
    conn.execute(
        "UPDATE blobs SET data = ?1, codec = 0 WHERE hash = ?2",
        params![text(42, 5_000), b.as_str()],
    )
    .expect("tamper");
    let Err(err) = blobs.read(&conn, &t) else {
        panic!("a delta over a damaged base was returned");
    };
    assert!(err.to_string().contains(t.as_str()), "{err}");
    assert!(
        blobs
            .read(&conn, &ContentHash::of(b"x"))
            .expect("read")
            .is_none()
    );
}

/// A stored row: data, codec, depth.
type Stored = (Vec<u8>, i64, i64);

/// A table behind a server: look-ups are not cheap, so the codec skips them. With `local`, the
/// same table in this process (SQLite's): look-ups are cheap, yet each one outside a
/// transaction is a read transaction of its own.
#[derive(Default)]
struct Remote {
    rows: std::cell::RefCell<std::collections::HashMap<String, Stored>>,
    puts: std::cell::Cell<usize>,
    lookups: std::cell::Cell<usize>,
    local: bool,
}

impl BlobTable for Remote {
    fn has(&self, hash: &ContentHash) -> Result<bool, StoreError> {
        self.lookups.set(self.lookups.get() + 1);
        Ok(self.rows.borrow().contains_key(hash.as_str()))
    }
    fn row(&self, hash: &ContentHash) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        self.lookups.set(self.lookups.get() + 1);
        Ok(self
            .rows
            .borrow()
            .get(hash.as_str())
            .map(|(d, c, _)| (d.clone(), *c)))
    }
    fn depth(&self, hash: &ContentHash) -> Result<Option<i64>, StoreError> {
        self.lookups.set(self.lookups.get() + 1);
        Ok(self.rows.borrow().get(hash.as_str()).map(|(_, _, d)| *d))
    }
    fn has_is_cheap(&self) -> bool {
        self.local
    }
    fn put(
        &self,
        hash: &ContentHash,
        data: &[u8],
        codec: i64,
        depth: i64,
    ) -> Result<bool, StoreError> {
        self.puts.set(self.puts.get() + 1);
        let mut rows = self.rows.borrow_mut();
        if rows.contains_key(hash.as_str()) {
            return Ok(false);
        }
        rows.insert(hash.as_str().to_owned(), (data.to_vec(), codec, depth));
        Ok(true)
    }
}

#[test]
fn a_remote_table_is_asked_only_about_what_no_committed_transaction_wrote() {
    let table = Remote::default();
    let blobs = Blobs::default();
    let parent: Vec<u8> = (0..4000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
    let mut child = parent.clone();
    child[100] ^= 1;
    // Written, then rolled back: not known, so written again next time.
    let p = blobs.insert(&table, &parent, &[]).expect("insert");
    blobs.rolled_back();
    table.rows.borrow_mut().clear(); // the transaction's rows are gone with it
    blobs.insert(&table, &parent, &[]).expect("insert again");
    assert_eq!(
        table.puts.get(),
        2,
        "a rolled-back row is not taken for granted"
    );
    blobs.committed();
    // Committed: no put and no look-up for it again, and it serves as a delta base for free.
    let lookups = table.lookups.get();
    blobs.insert(&table, &parent, &[]).expect("known");
    assert_eq!(table.puts.get(), 2);
    let c = blobs
        .insert(&table, &child, std::slice::from_ref(&p))
        .expect("child");
    assert_eq!(
        table.lookups.get(),
        lookups,
        "the base's depth and content came from memory"
    );
    assert_eq!(
        table.rows.borrow()[c.as_str()].1,
        DELTA_PLAIN,
        "stored as a delta"
    );
    blobs.committed();
    assert_eq!(
        blobs.read(&table, &c).expect("read").as_deref(),
        Some(child.as_slice())
    );
}

#[test]
fn a_row_another_process_wrote_keeps_its_own_depth() {
    let table = Remote::default();
    let bytes: Vec<u8> = (0..4000u32).flat_map(|i| (i % 241).to_le_bytes()).collect();
    let hash = ContentHash::of(&bytes);
    // Someone else stored it as a deep delta.
    table
        .rows
        .borrow_mut()
        .insert(hash.as_str().to_owned(), (bytes.clone(), RAW, 7));
    let blobs = Blobs::default();
    blobs.insert(&table, &bytes, &[]).expect("insert");
    blobs.committed();
    let mut child = bytes.clone();
    child[7] ^= 1;
    let before = table.lookups.get();
    let c = blobs
        .insert(&table, &child, std::slice::from_ref(&hash))
        .expect("child");
    assert!(
        table.lookups.get() > before,
        "the base's depth is asked, not assumed"
    );
    assert_eq!(
        table.rows.borrow()[c.as_str()].2,
        8,
        "one deeper than the stored base"
    );
}

#[test]
fn a_local_table_is_not_asked_again_about_a_committed_blob() {
    let table = Remote {
        local: true,
        ..Remote::default()
    };
    let blobs = Blobs::default();
    let bytes: Vec<u8> = (0..3000u32).flat_map(|i| (i % 239).to_le_bytes()).collect();
    let hash = blobs.insert(&table, &bytes, &[]).expect("insert");
    // Rolled back: the row is gone with its transaction, and is looked up and written again.
    blobs.rolled_back();
    table.rows.borrow_mut().clear();
    blobs.insert(&table, &bytes, &[]).expect("insert again");
    assert_eq!(
        table.puts.get(),
        2,
        "a rolled-back row is not taken for granted"
    );
    blobs.committed();
    let lookups = table.lookups.get();
    blobs.insert(&table, &bytes, &[]).expect("known");
    assert_eq!(
        blobs.read(&table, &hash).expect("read").as_deref(),
        Some(bytes.as_slice())
    );
    assert_eq!(table.puts.get(), 2, "not written again");
    assert_eq!(
        table.lookups.get(),
        lookups,
        "neither the insert nor the cached read asked the table"
    );
}
