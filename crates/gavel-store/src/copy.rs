//! Copying every run from one store to another (SQLite to PostgreSQL when a team moves to a
//! shared database, and back), through the [`RunStore`] contract alone, so any pair of backends
//! works.
//!
//! A run is copied whole: its checkpoints in order (states byte for byte), its journal, every
//! blob its states, journal and events name (prompts, answers, lineage files), its events and
//! its status. Ids are the target's own (a shared database numbers runs for every project), so
//! the report maps each source id to its new one. A run is recognised in the target by its
//! fingerprint (workflow, slug, creation time and the hash of its initial state), which makes a
//! second copy skip what the first one copied: running it twice copies nothing twice. Every
//! run, copied now or before, is then verified: the same checkpoints (seq, parent, nodes, state
//! hash, format, time), journal, events, status and blobs on both sides, or the copy fails
//! naming the run and what differs. A run that some process is driving is refused: copy when
//! nothing runs.

use std::collections::{BTreeSet, HashMap};

use gavel_core::{Checkpoint, ContentHash, RunId, RunRecord, RunStore, StoreError};

/// What a copy did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// Runs copied now: (source id, target id).
    pub copied: Vec<(RunId, RunId)>,
    /// Runs the target already had (an earlier copy): (source id, target id).
    pub present: Vec<(RunId, RunId)>,
    /// Checkpoints, events, journal entries and blobs written now.
    pub checkpoints: usize,
    pub events: usize,
    pub journal: usize,
    pub blobs: usize,
}

/// Why a copy stopped.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run {run} is being driven ({holder}); copy when no run is running")]
    Driven {
        run: RunId,
        holder: gavel_core::LockInfo,
    },
    #[error("run {from} was copied as run {to}, but its {what} differ")]
    Mismatch {
        from: RunId,
        to: RunId,
        what: &'static str,
    },
}

/// Copies every run of `from` that `to` lacks, then verifies every run on both sides.
pub fn copy_runs(from: &dyn RunStore, to: &dyn RunStore) -> Result<CopyReport, CopyError> {
    let runs = from.runs()?;
    for r in &runs {
        if let Some(holder) = from.holder(r.id)? {
            return Err(CopyError::Driven { run: r.id, holder });
        }
    }
    let mut existing: HashMap<String, RunId> = HashMap::new();
    for r in to.runs()? {
        existing.insert(fingerprint(to, &r)?, r.id);
    }
    let mut report = CopyReport::default();
    for r in &runs {
        match existing.get(&fingerprint(from, r)?) {
            Some(&target) => report.present.push((r.id, target)),
            None => {
                let target = copy_run(from, to, r, &mut report)?;
                report.copied.push((r.id, target));
            }
        }
    }
    for &(source, target) in report.copied.iter().chain(&report.present) {
        verify(from, to, source, target)?;
    }
    Ok(report)
}

/// What identifies a run in any store: its workflow, slug, creation time and initial state.
fn fingerprint(store: &dyn RunStore, r: &RunRecord) -> Result<String, StoreError> {
    let first = store
        .checkpoints(r.id)?
        .into_iter()
        .next()
        .map(|cp| cp.state_hash.as_str().to_owned())
        .unwrap_or_default();
    Ok(format!(
        "{}\u{0}{}\u{0}{}\u{0}{first}",
        r.workflow, r.slug, r.created_at
    ))
}

fn copy_run(
    from: &dyn RunStore,
    to: &dyn RunStore,
    r: &RunRecord,
    report: &mut CopyReport,
) -> Result<RunId, CopyError> {
    let metas = from.checkpoints(r.id)?;
    let state = |hash: &ContentHash| -> Result<Vec<u8>, StoreError> {
        from.get_blob(hash)?
            .ok_or_else(|| StoreError::MissingBlob(hash.clone()))
    };
    let Some(first) = metas.first() else {
        return Err(StoreError::Backend {
            message: format!("run {} has no initial checkpoint", r.id),
            source: None,
        }
        .into());
    };
    let journal = from.journal(r.id)?;
    let events = from.events(r.id)?;
    // The blobs the run names, before anything that names them.
    let mut named = BTreeSet::new();
    for (_, value) in &journal {
        hashes_in(value, &mut named);
    }
    for meta in &metas {
        hashes_in(&state(&meta.state_hash)?, &mut named);
    }
    hashes_in_events(&events, &mut named)?;
    for hash in named {
        let hash = ContentHash::from_hex(hash);
        if to.get_blob(&hash)?.is_some() {
            continue;
        }
        if let Some(bytes) = from.get_blob(&hash)? {
            to.put_blob(&bytes)?;
            report.blobs += 1;
        }
    }
    let target = to.create_run(
        &r.workflow,
        &r.slug,
        &state(&first.state_hash)?,
        first.next.as_deref().unwrap_or_default(),
        &r.created_at,
    )?;
    for meta in &metas[1..] {
        let cp = Checkpoint {
            run: target,
            seq: meta.seq,
            parent: meta.parent,
            node: meta.node.clone(),
            next: meta.next.clone(),
            state: state(&meta.state_hash)?,
            format: meta.format,
            created_at: meta.created_at.clone(),
        };
        to.commit(&cp, &[], &gavel_core::RunStatus::Running)?;
        report.checkpoints += 1;
    }
    for (step, value) in &journal {
        to.put_write(target, step, value, &r.updated_at)?;
        report.journal += 1;
    }
    to.set_status(target, &r.status, &events, &r.updated_at)?;
    report.events += events.len();
    Ok(target)
}

/// Checks that run `source` of `from` and run `target` of `to` hold the same run.
fn verify(
    from: &dyn RunStore,
    to: &dyn RunStore,
    source: RunId,
    target: RunId,
) -> Result<(), CopyError> {
    let differ = |what| CopyError::Mismatch {
        from: source,
        to: target,
        what,
    };
    let (Some(a), Some(b)) = (from.run(source)?, to.run(target)?) else {
        return Err(differ("records"));
    };
    if (
        a.workflow,
        a.slug,
        a.status,
        a.created_at,
        a.updated_at,
        a.head_seq,
    ) != (
        b.workflow,
        b.slug,
        b.status,
        b.created_at,
        b.updated_at,
        b.head_seq,
    ) {
        return Err(differ("records (status, times or head)"));
    }
    if from.checkpoints(source)? != to.checkpoints(target)? {
        return Err(differ("checkpoints"));
    }
    if from.journal(source)? != to.journal(target)? {
        return Err(differ("journals"));
    }
    let events = from.events(source)?;
    if events != to.events(target)? {
        return Err(differ("events"));
    }
    let mut named = BTreeSet::new();
    hashes_in_events(&events, &mut named)?;
    for hash in named {
        let hash = ContentHash::from_hex(hash);
        if let Some(bytes) = from.get_blob(&hash)?
            && to.get_blob(&hash)?.as_deref() != Some(&bytes[..])
        {
            return Err(differ("blobs"));
        }
    }
    Ok(())
}

/// Adds the blob hashes `events` name (a call's prompt and answer, an artifact's content).
fn hashes_in_events(
    events: &[gavel_core::Event],
    out: &mut BTreeSet<String>,
) -> Result<(), StoreError> {
    for event in events {
        let json =
            serde_json::to_vec(event).map_err(|e| StoreError::backend("encoding an event", e))?;
        hashes_in(&json, out);
    }
    Ok(())
}

/// Adds every 64-hex-digit word of `bytes` (how states, journal values and events name blobs)
/// to `out`; a word that names no blob is skipped by the caller.
fn hashes_in(bytes: &[u8], out: &mut BTreeSet<String>) {
    let mut start = None;
    for (i, b) in bytes
        .iter()
        .copied()
        .chain(std::iter::once(b' '))
        .enumerate()
    {
        let hex = b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        match (hex, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s == 64 {
                    out.insert(String::from_utf8_lossy(&bytes[s..i]).into_owned());
                }
                start = None;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_64_digit_words_are_hashes() {
        let a = "a".repeat(64);
        let long = "b".repeat(65);
        let text = format!(
            "{{\"h\":\"{a}\",\"x\":\"{long}\",\"y\":\"{}\"}}{a}",
            &a[..63]
        );
        let mut out = BTreeSet::new();
        hashes_in(text.as_bytes(), &mut out);
        assert_eq!(out.into_iter().collect::<Vec<_>>(), vec![a]);
    }
}
