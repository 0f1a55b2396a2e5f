//! Ending an implementation run without merging, the same way on every path: a gate's `abort`
//! (test timeout, test runner error), a `reject` at the diff gate, and `gavel abort RUN`.
//!
//! The worktree and its branch are removed; the run's lineage is kept in the person's checkout
//! under `{lineage}/active/` (an issue's in `{n}-impl`, a change's in `change-{id}-impl`, out
//! of the change's folder so that the next `gavel change impl` finds the plan as it was
//! committed), written from gavel's own record of each file; and the `STATE.yaml` gavel wrote
//! in the person's checkout (phase `implementing`) is put back to the committed one when no
//! one changed it since. Nothing is left for the person to commit before starting again.

use std::path::{Path, PathBuf};

use gavel_core::{ContentHash, NodeCtx, NodeError, Transition};
use gavel_exec::git::{BRANCH_PREFIX, Git, GitError};

use super::{ChangeTarget, ImplementState, ImplementWorkflow, io_failed};
use crate::fsutil;

/// Where an ended run's lineage is kept in the person's checkout, repository-relative.
pub fn kept_lineage_rel(s: &ImplementState, lineage_dir: &Path) -> PathBuf {
    let active = lineage_dir.join("active");
    match &s.change {
        Some(_) => active.join(format!("{}-impl", s.worktree_name())),
        None => active.join(s.worktree_name()),
    }
}

/// The run's worktree removed, or kept as a spare (at most `spares` are kept) when every step
/// of the run was boxed ([`ImplementState::spare_ok`]; `Git::worktree_retire`).
pub(crate) fn retire(git: &Git, s: &ImplementState, spares: usize) -> Result<(), GitError> {
    let name = s.worktree_name();
    if s.spare_ok {
        git.worktree_retire(&name, spares).map(drop)
    } else {
        git.worktree_remove(&name).map(drop)
    }
}

/// Ends run `s` without merging (see the module doc); `blob` reads a lineage file's content
/// from the store; at most `spares` finished worktrees are kept ([`retire`]). Returns where
/// the lineage went, if the run had any. Idempotent: a second call (a replay, `gavel abort`
/// after a gate's abort) finds nothing left to remove.
pub fn discard_run(
    root: &Path,
    lineage_dir: &Path,
    s: &ImplementState,
    blob: &dyn Fn(&ContentHash) -> Option<Vec<u8>>,
    spares: usize,
) -> Result<Option<PathBuf>, String> {
    let git = Git::at(root);
    let name = s.worktree_name();
    let kept_rel = kept_lineage_rel(s, lineage_dir);
    let kept_abs = root.join(&kept_rel);
    let mut kept = None;
    if !s.lineage_files.is_empty() {
        std::fs::create_dir_all(&kept_abs)
            .map_err(|e| format!("cannot create {}: {e}", kept_abs.display()))?;
        for file in &s.lineage_files {
            let Some(bytes) = blob(&file.blob) else {
                continue;
            };
            let target = kept_abs.join(&file.name);
            fsutil::write_atomic(&target, &bytes)
                .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
        }
        kept = Some(kept_rel.clone());
    }
    // What gavel wrote in the worktree's folder after the last checkpoint (the output of a
    // test run that stopped at a gate, whose record is not checkpointed yet), by name, never
    // replacing a recorded file nor taking what the person's checkout already has there.
    let from = git
        .worktrees()
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|w| w.name == name)
        .map(|w| w.path.join(s.lineage_rel(lineage_dir)));
    if let Some(from) = from.filter(|f| f.is_dir()) {
        let in_checkout = root.join(s.lineage_rel(lineage_dir));
        copy_new_records(&from, &kept_abs, &in_checkout).map_err(|e| e.to_string())?;
        if kept.is_none() && kept_abs.is_dir() {
            kept = Some(kept_rel.clone());
        }
    }
    retire(&git, s, spares).map_err(|e| format!("cannot remove the worktree: {e}"))?;
    let _ = git.run(&["branch", "-D", &format!("{BRANCH_PREFIX}{name}")]);
    if let Some(c) = &s.change {
        restore_change_state(root, c)?;
    }
    Ok(kept)
}

/// Puts the change's `STATE.yaml` in the person's checkout back to the committed one, when it
/// is still the one gavel wrote (a person's own edit since is theirs and stays).
pub(crate) fn restore_change_state(root: &Path, c: &ChangeTarget) -> Result<(), String> {
    let state_rel = PathBuf::from(&c.changes_root)
        .join("changes")
        .join(&c.id)
        .join("STATE.yaml");
    let Some(written) = &c.checkout_state else {
        return Ok(());
    };
    let Ok(now) = std::fs::read(root.join(&state_rel)) else {
        return Ok(());
    };
    if ContentHash::of(&now).to_string() != *written {
        return Ok(());
    }
    Git::at(root)
        .run(&["checkout", "HEAD", "--", &state_rel.to_string_lossy()])
        .map(|_| ())
        .map_err(|e| format!("cannot put back {}: {e}", state_rel.display()))
}

impl ImplementWorkflow {
    /// Ends the run from a node (see the module doc): `why` says who ended it and where.
    pub(super) fn abandon(
        &self,
        s: &ImplementState,
        cx: &NodeCtx<'_>,
        why: &str,
    ) -> Result<Transition, NodeError> {
        let kept = discard_run(
            self.root(),
            &self.settings.lineage_dir,
            s,
            &|h| cx.get_blob(h).ok(),
            self.settings.spare_worktrees,
        )
        .map_err(NodeError::Failed)?;
        Ok(Transition::Abort {
            reason: format!(
                "{why}; the worktree and branch {BRANCH_PREFIX}{} are removed{}",
                s.worktree_name(),
                kept.map(|p| format!(", its lineage kept in {}", p.display()))
                    .unwrap_or_default()
            ),
        })
    }
}

/// Whether a file name is one gavel gives a lineage record: `NNN-name.md` (or `.json`,
/// `.jsonl`, `.txt`, `.yaml`).
fn lineage_named(name: &str) -> bool {
    let Some((number, rest)) = name.split_once('-') else {
        return false;
    };
    number.len() >= 3
        && number.bytes().all(|b| b.is_ascii_digit())
        && [".md", ".json", ".jsonl", ".txt", ".yaml"]
            .iter()
            .any(|ext| rest.ends_with(ext))
}

/// Copies the regular files of `from` named as gavel names its records that are neither in
/// `to` already nor in `skip` (the same folder in the person's checkout).
fn copy_new_records(from: &Path, to: &Path, skip: &Path) -> Result<(), NodeError> {
    let entries = std::fs::read_dir(from).map_err(|e| io_failed("read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_failed("read", from, e))?;
        let name = entry.file_name();
        let kind = entry
            .file_type()
            .map_err(|e| io_failed("read", &entry.path(), e))?;
        if !kind.is_file()
            || !lineage_named(&name.to_string_lossy())
            || to.join(&name).exists()
            || skip.join(&name).exists()
        {
            continue;
        }
        let mut bytes = Vec::new();
        std::fs::File::open(entry.path())
            .and_then(|f| {
                std::io::Read::read_to_end(&mut std::io::Read::take(f, 16 << 20), &mut bytes)
            })
            .map_err(|e| io_failed("read", &entry.path(), e))?;
        std::fs::create_dir_all(to).map_err(|e| io_failed("create", to, e))?;
        let target = to.join(&name);
        fsutil::write_atomic(&target, &bytes).map_err(|e| io_failed("write", &target, e))?;
    }
    Ok(())
}

/// Copies a folder's regular files and folders (a lineage is one or two levels deep; deeper
/// ones, links and anything else are left out, so a link loop or a link out of the worktree
/// is never followed), replacing files of the same name.
pub(super) fn copy_dir(from: &Path, to: &Path, depth: u32) -> Result<(), NodeError> {
    match std::fs::symlink_metadata(from) {
        Ok(m) if m.is_dir() && depth <= 2 => {}
        // A replay after the worktree was removed (the copy was made before), or not a folder.
        _ => return Ok(()),
    }
    std::fs::create_dir_all(to).map_err(|e| io_failed("create", to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| io_failed("read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_failed("read", from, e))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| io_failed("read", &path, e))?;
        if kind.is_dir() {
            copy_dir(&path, &target, depth + 1)?;
        } else if kind.is_file() && lineage_named(&entry.file_name().to_string_lossy()) {
            // Named as gavel names its records, and at most 16 MiB of it: a `conftest.py` or a
            // sparse 100 GB file in the folder is not a lineage record.
            let mut bytes = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| {
                    std::io::Read::read_to_end(&mut std::io::Read::take(f, 16 << 20), &mut bytes)
                })
                .map_err(|e| io_failed("read", &path, e))?;
            fsutil::write_atomic(&target, &bytes).map_err(|e| io_failed("write", &target, e))?;
        }
    }
    Ok(())
}
