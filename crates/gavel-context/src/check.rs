//! Checking the files found: each one's name, size, encoding and content, on every core.
//!
//! A folder of 20,000 files is 20,000 independent checks, each mostly reading and scanning
//! text, so they run on as many threads as the machine has cores. They are taken in batches in
//! path order and handed back in that order, so what comes after (the token count, which
//! depends on the files before it) is the same on any machine, and at most one batch of texts
//! is held at a time.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Refusal;
use super::names::NameRules;
use super::paths::{self, Found};
use super::scan;

/// Files per batch: enough to keep every thread busy, few enough that a batch of texts (at
/// most this many times the size limit, usually far less) is small.
const BATCH: usize = 512;

/// The most threads used, whatever the machine.
const MAX_THREADS: usize = 8;

/// What one file's check found.
pub(super) enum Checked {
    /// It may be sent: its text.
    Passed(String),
    /// Why not (one refusal, or one per secret found).
    Refused(Vec<Refusal>),
}

/// Checks one file: its name against the secret names and the deny list, then its size and
/// encoding, then its content against the secret rules.
pub(super) fn check(file: &Found, names: &NameRules, max_bytes: u64) -> Checked {
    if let Some(refusal) = names.check(file) {
        return Checked::Refused(vec![refusal]);
    }
    let text = match paths::read_text(file, max_bytes) {
        Ok(text) => text,
        Err(refusal) => return Checked::Refused(vec![refusal]),
    };
    let findings = scan::scan(&text);
    if findings.is_empty() {
        return Checked::Passed(text);
    }
    Checked::Refused(
        findings
            .into_iter()
            .map(|f| {
                Refusal::new(
                    &file.shown,
                    format!("secret-content:{}", f.rule),
                    format!(
                        "`{}` line {} holds what looks like {}; remove it or leave the file out",
                        file.shown, f.line, f.description
                    ),
                )
            })
            .collect(),
    )
}

/// Checks every file in `found` ([`check`]) and hands each result to `sink` in `found`'s
/// order.
pub(super) fn each_in_order(
    found: &[Found],
    names: &NameRules,
    max_bytes: u64,
    mut sink: impl FnMut(&Found, Checked),
) {
    let threads = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .clamp(1, MAX_THREADS);
    for batch in found.chunks(BATCH) {
        let results = if threads == 1 || batch.len() == 1 {
            batch
                .iter()
                .map(|file| check(file, names, max_bytes))
                .collect()
        } else {
            check_batch(batch, names, max_bytes, threads)
        };
        for (file, checked) in batch.iter().zip(results) {
            sink(file, checked);
        }
    }
}

/// Checks `batch` on `threads` threads, each taking the next unchecked file; the results in
/// `batch`'s order.
fn check_batch(batch: &[Found], names: &NameRules, max_bytes: u64, threads: usize) -> Vec<Checked> {
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Checked)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(batch.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = batch.get(i) else {
                            return mine;
                        };
                        mine.push((i, check(file, names, max_bytes)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| match worker.join() {
                Ok(mine) => mine,
                // A check does not panic on any input; if one did, its panic is this thread's.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, checked)| checked).collect()
}
