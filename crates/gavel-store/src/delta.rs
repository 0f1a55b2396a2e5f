//! A byte-level delta: a blob written as copies from other blobs plus the bytes that are new.
//!
//! Why: a revision loop stores the same text many times over. The reviewer's prompt is the
//! rubric around the current draft, the drafter's prompt is the template around the previous
//! draft and the verdicts, and every checkpoint state differs from its parent in a few fields.
//! Keeping each of those whole made the database of a 50-loop run larger than LangGraph's copy
//! of the state per step (issue 5). A delta against the blobs a caller names keeps only what is
//! new; the rest is a list of `(base, offset, length)` copies.
//!
//! The encoder indexes every [`STRIDE`]th [`WINDOW`]-byte window of the bases by a rolling hash,
//! slides the same hash over the target, and on a verified hit extends the match both ways. Any
//! run of at least `WINDOW + STRIDE - 1` bytes shared with a base is found; shorter ones stay
//! literal (and are compressed with the rest of the encoding by the caller). Decoding checks
//! every copy against its base's length, so a damaged encoding is an error, never a panic.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Bytes per indexed window; a shorter shared run is not worth a copy.
const WINDOW: usize = 32;
/// Distance between indexed windows of a base.
const STRIDE: usize = 16;
/// The rolling hash's multiplier (an odd 64-bit constant).
const PRIME: u64 = 0x0100_0000_01b3;

/// One instruction of a delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// Bytes that are in no base.
    Insert(Vec<u8>),
    /// `len` bytes of base `base`, from `offset`.
    Copy {
        base: usize,
        offset: usize,
        len: usize,
    },
}

/// Why an encoded delta cannot be applied.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeltaError {
    #[error("the delta is truncated")]
    Truncated,
    #[error("unknown delta instruction {0}")]
    UnknownOp(u8),
    #[error("a copy reads past the end of base {base} ({offset}+{len} > {size})")]
    OutOfRange {
        base: usize,
        offset: usize,
        len: usize,
        size: usize,
    },
    #[error("the delta names base {0}, which it does not have")]
    NoSuchBase(usize),
    #[error("the delta rebuilt {got} bytes, expected {want}")]
    Length { got: usize, want: usize },
}

/// The delta that rebuilds `target` from `bases`. Bases shorter than [`WINDOW`] are never used.
///
/// The bytes `target` shares at its start and end with the first base (a state and its
/// parent's differ in a few fields) become copies without any indexing, and only what lies
/// between is indexed and searched, so a small change to a large blob costs little.
pub(crate) fn encode(target: &[u8], bases: &[&[u8]]) -> Vec<Op> {
    let (mut head, mut tail) = match bases.first() {
        Some(first) => common_ends(target, first),
        None => (0, 0),
    };
    if head < WINDOW {
        head = 0;
    }
    if tail < WINDOW {
        tail = 0;
    }
    let mut ops = Vec::new();
    if head > 0 {
        ops.push(Op::Copy {
            base: 0,
            offset: 0,
            len: head,
        });
    }
    let first_len = bases.first().map_or(0, |b| b.len());
    // The first base's unshared middle; every other base whole.
    let regions: Vec<(usize, usize, usize)> = bases
        .iter()
        .enumerate()
        .map(|(b, base)| match b {
            0 => (0, head, first_len - tail),
            _ => (b, 0, base.len()),
        })
        .collect();
    encode_middle(target, head, target.len() - tail, bases, &regions, &mut ops);
    if tail > 0 {
        ops.push(Op::Copy {
            base: 0,
            offset: first_len - tail,
            len: tail,
        });
    }
    ops
}

/// How many bytes `a` and `b` share at the start, and then at the end of what is left.
fn common_ends(a: &[u8], b: &[u8]) -> (usize, usize) {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut head = 0;
    while head + BLOCK <= n && a[head..head + BLOCK] == b[head..head + BLOCK] {
        head += BLOCK;
    }
    while head < n && a[head] == b[head] {
        head += 1;
    }
    let (ra, rb) = (&a[head..], &b[head..]);
    let m = ra.len().min(rb.len());
    let mut tail = 0;
    while tail + BLOCK <= m
        && ra[ra.len() - tail - BLOCK..ra.len() - tail]
            == rb[rb.len() - tail - BLOCK..rb.len() - tail]
    {
        tail += BLOCK;
    }
    while tail < m && ra[ra.len() - tail - 1] == rb[rb.len() - tail - 1] {
        tail += 1;
    }
    (head, tail)
}

/// Appends the ops for `target[lo..hi]`, searching `regions` (`(base, start, end)`) of `bases`.
fn encode_middle(
    target: &[u8],
    lo: usize,
    hi: usize,
    bases: &[&[u8]],
    regions: &[(usize, usize, usize)],
    ops: &mut Vec<Op>,
) {
    let top = top_power();
    let capacity: usize = regions.iter().map(|(_, s, e)| (e - s) / STRIDE + 1).sum();
    let mut index: HashMap<u64, (usize, usize), BuildHasherDefault<Prehashed>> =
        HashMap::with_capacity_and_hasher(capacity, BuildHasherDefault::default());
    for &(b, start, end) in regions {
        let base = bases[b];
        if end < start + WINDOW {
            continue;
        }
        let mut h = hash(&base[start..start + WINDOW]);
        for pos in start..=end - WINDOW {
            if pos > start {
                h = roll(h, base[pos - 1], base[pos + WINDOW - 1], top);
            }
            if (pos - start) % STRIDE == 0 {
                index.entry(h).or_insert((b, pos));
            }
        }
    }
    if index.is_empty() || hi < lo + WINDOW {
        if hi > lo {
            ops.push(Op::Insert(target[lo..hi].to_vec()));
        }
        return;
    }
    let mut literal_start = lo;
    let mut pos = lo;
    let mut h = hash(&target[pos..pos + WINDOW]);
    while pos + WINDOW <= hi {
        let hit = index.get(&h).and_then(|&(b, at)| {
            let base = bases[b];
            (base[at..at + WINDOW] == target[pos..pos + WINDOW]).then_some((b, at))
        });
        if let Some((b, at)) = hit {
            let base = bases[b];
            let mut start = pos;
            let mut from = at;
            while start > literal_start && from > 0 && target[start - 1] == base[from - 1] {
                start -= 1;
                from -= 1;
            }
            let mut end = pos + WINDOW;
            while end < hi && from + (end - start) < base.len() {
                if target[end] != base[from + (end - start)] {
                    break;
                }
                end += 1;
            }
            if start > literal_start {
                ops.push(Op::Insert(target[literal_start..start].to_vec()));
            }
            ops.push(Op::Copy {
                base: b,
                offset: from,
                len: end - start,
            });
            literal_start = end;
            pos = end;
            if pos + WINDOW <= hi {
                h = hash(&target[pos..pos + WINDOW]);
            }
            continue;
        }
        if pos + WINDOW < hi {
            h = roll(h, target[pos], target[pos + WINDOW], top);
        }
        pos += 1;
    }
    if literal_start < hi {
        ops.push(Op::Insert(target[literal_start..hi].to_vec()));
    }
}

/// The index's keys are already hashes: use them as they are.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        // A polynomial hash's low bits are weak (the lowest is a parity); the table picks
        // buckets by them, so fold the high bits in.
        let n = (n ^ (n >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 = n ^ (n >> 32);
    }
}

/// Writes `ops` (which rebuild `len` bytes) in the stored form: the length, then each op as a
/// tag byte (0 insert, 1 copy) and LEB128 numbers.
pub(crate) fn serialize(ops: &[Op], len: usize, out: &mut Vec<u8>) {
    put_varint(out, len as u64);
    for op in ops {
        match op {
            Op::Insert(bytes) => {
                out.push(0);
                put_varint(out, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
            Op::Copy { base, offset, len } => {
                out.push(1);
                put_varint(out, *base as u64);
                put_varint(out, *offset as u64);
                put_varint(out, *len as u64);
            }
        }
    }
}

/// Rebuilds the target from a [`serialize`]d delta and its bases.
pub(crate) fn apply(mut encoded: &[u8], bases: &[&[u8]]) -> Result<Vec<u8>, DeltaError> {
    let want = take_len(&mut encoded)?;
    let mut out = Vec::with_capacity(want.min(1 << 26));
    while let Some((&tag, rest)) = encoded.split_first() {
        encoded = rest;
        match tag {
            0 => {
                let n = take_len(&mut encoded)?;
                let (bytes, rest) = encoded.split_at_checked(n).ok_or(DeltaError::Truncated)?;
                out.extend_from_slice(bytes);
                encoded = rest;
            }
            1 => {
                let base = take_len(&mut encoded)?;
                let offset = take_len(&mut encoded)?;
                let len = take_len(&mut encoded)?;
                let bytes = bases.get(base).ok_or(DeltaError::NoSuchBase(base))?;
                let slice = offset
                    .checked_add(len)
                    .and_then(|end| bytes.get(offset..end))
                    .ok_or(DeltaError::OutOfRange {
                        base,
                        offset,
                        len,
                        size: bytes.len(),
                    })?;
                out.extend_from_slice(slice);
            }
            other => return Err(DeltaError::UnknownOp(other)),
        }
        if out.len() > want {
            break;
        }
    }
    if out.len() != want {
        return Err(DeltaError::Length {
            got: out.len(),
            want,
        });
    }
    Ok(out)
}

/// The number of bytes a delta's copies take from bases (how much it saved).
pub(crate) fn copied(ops: &[Op]) -> usize {
    ops.iter()
        .map(|op| match op {
            Op::Copy { len, .. } => *len,
            Op::Insert(_) => 0,
        })
        .sum()
}

fn hash(window: &[u8]) -> u64 {
    window.iter().fold(0u64, |h, &b| {
        h.wrapping_mul(PRIME).wrapping_add(u64::from(b) + 1)
    })
}

/// `PRIME^(WINDOW-1)`: the weight of the byte leaving the window.
fn top_power() -> u64 {
    (1..WINDOW).fold(1u64, |p, _| p.wrapping_mul(PRIME))
}

fn roll(h: u64, out: u8, inn: u8, top: u64) -> u64 {
    h.wrapping_sub((u64::from(out) + 1).wrapping_mul(top))
        .wrapping_mul(PRIME)
        .wrapping_add(u64::from(inn) + 1)
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn take_varint(input: &mut &[u8]) -> Result<u64, DeltaError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = input.split_first().ok_or(DeltaError::Truncated)?;
        *input = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DeltaError::Truncated)
}

fn take_len(input: &mut &[u8]) -> Result<usize, DeltaError> {
    usize::try_from(take_varint(input)?).map_err(|_| DeltaError::Truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random prose, like a model's draft.
    fn prose(seed: u64, bytes: usize) -> Vec<u8> {
        const WORDS: &[&str] = &[
            "the", "draft", "review", "night", "mode", "screen", "budget", "commit", "resume",
            "brief", "node", "verdict", "issue", "dark", "colour", "setting",
        ];
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut out = Vec::new();
        while out.len() < bytes {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(WORDS[(x % WORDS.len() as u64) as usize].as_bytes());
            out.push(if x.is_multiple_of(11) { b'\n' } else { b' ' });
        }
        out.truncate(bytes);
        out
    }

    fn roundtrip(target: &[u8], bases: &[&[u8]]) -> Vec<Op> {
        let ops = encode(target, bases);
        let mut enc = Vec::new();
        serialize(&ops, target.len(), &mut enc);
        assert_eq!(apply(&enc, bases).expect("apply"), target);
        ops
    }

    #[test]
    fn a_prompt_around_a_draft_copies_the_draft() {
        let draft = prose(1, 40_000);
        let mut prompt = b"You are a reviewer.\n\n## Draft\n\n".to_vec();
        prompt.extend_from_slice(draft.trim_ascii());
        prompt.extend_from_slice(b"\n\n## Answer format\n\nJSON please.\n");
        let ops = roundtrip(&prompt, &[&draft]);
        assert!(copied(&ops) >= draft.trim_ascii().len(), "{ops:?}");
        assert!(ops.len() <= 3, "one copy between two inserts: {ops:?}");
    }

    #[test]
    fn edits_in_the_middle_keep_both_sides_as_copies() {
        let base = prose(2, 10_000);
        let mut target = base[..4_000].to_vec();
        target.extend_from_slice(b" an edited sentence. ");
        target.extend_from_slice(&base[4_100..]);
        let ops = roundtrip(&target, &[b"short", &base]);
        assert!(copied(&ops) >= 9_800, "{ops:?}");
    }

    #[test]
    fn a_state_changed_in_a_few_places_is_copies_around_small_inserts() {
        let parent = prose(10, 6_000);
        let mut state = parent.clone();
        state[20] = b'#';
        state[3_000] = b'#';
        state.truncate(5_990);
        state.extend_from_slice(b"\"one more verdict\"]}");
        let ops = roundtrip(&state, &[&parent]);
        assert!(copied(&ops) >= 5_900, "{ops:?}");
        assert_eq!(
            roundtrip(&parent, &[&parent]),
            [Op::Copy {
                base: 0,
                offset: 0,
                len: 6_000
            }]
        );
        roundtrip(&parent[..3_000], &[&parent]);
        roundtrip(&parent[3_000..], &[&parent]);
        roundtrip(&parent, &[&parent[..10]]);
    }

    #[test]
    fn unrelated_or_tiny_inputs_are_one_insert() {
        let ops = roundtrip(&prose(3, 5_000), &[&prose(4, 5_000)]);
        assert!(copied(&ops) < 200, "{ops:?}");
        assert_eq!(roundtrip(b"tiny", &[&prose(5, 100)]).len(), 1);
        assert!(roundtrip(b"", &[]).is_empty());
        roundtrip(&prose(6, 1_000), &[]);
    }

    #[test]
    fn several_bases_each_contribute() {
        let a = prose(7, 3_000);
        let b = prose(8, 3_000);
        let mut target = b.clone();
        target.extend_from_slice(b"\n---\n");
        target.extend_from_slice(&a);
        target.extend_from_slice(&b[..500]);
        let ops = roundtrip(&target, &[&a, &b]);
        assert!(copied(&ops) >= 6_400, "{ops:?}");
    }

    #[test]
    fn a_damaged_delta_is_an_error_not_a_panic() {
        let base = prose(9, 2_000);
        let mut target = base.clone();
        target.extend_from_slice(b"tail");
        let mut enc = Vec::new();
        serialize(&encode(&target, &[&base]), target.len(), &mut enc);
        for cut in 0..enc.len() {
            assert!(apply(&enc[..cut], &[&base]).is_err(), "cut at {cut}");
        }
        assert!(apply(&enc, &[]).is_err(), "missing base");
        assert!(apply(&enc, &[&base[..100]]).is_err(), "short base");
        let mut bad = enc.clone();
        bad[1] = 9;
        assert!(apply(&bad, &[&base]).is_err(), "unknown op");
    }

    #[test]
    fn varints_roundtrip() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut slice = out.as_slice();
            assert_eq!(take_varint(&mut slice).expect("varint"), v);
            assert!(slice.is_empty());
        }
    }
}
