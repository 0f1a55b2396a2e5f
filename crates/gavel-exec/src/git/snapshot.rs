//! Snapshots of a worktree's files as git tree ids, and putting the files back.
//!
//! Before an agent edits a worktree, the workflow journals [`Git::snapshot`]'s tree id. If the
//! agent step does not finish (a crash, a timeout), the replay first calls [`Git::reset_to`]
//! with that id, so the agent starts again from the same files instead of from its own half
//! done edits. The tree also says what the agent changed (`git diff TREE`), judged from the
//! files, not from the agent's report.
//!
//! Both work in an index of their own passed as `GIT_INDEX_FILE` ([`Scratch`], `survey.rs`):
//! the index the person or the workflow staged into is never touched. Ignored files (build
//! output) are neither recorded nor removed.

use serde::{Deserialize, Serialize};

use super::{Git, GitError, Scratch};

/// A git tree id (hex), as `git write-tree` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TreeId(String);

impl TreeId {
    /// `hex` if it is a full object id (40 or 64 hex digits).
    pub fn parse(hex: &str) -> Option<Self> {
        let ok = matches!(hex.len(), 40 | 64) && hex.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| Self(hex.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for TreeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a path differs between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One path that differs between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeChange {
    pub path: String,
    pub kind: ChangeKind,
    /// The new mode (`100644`, `100755`, `120000` for a symlink, `160000` for a submodule);
    /// the old one for a deletion.
    pub mode: String,
}

impl TreeChange {
    pub fn is_symlink(&self) -> bool {
        self.mode == "120000"
    }
}

/// `git diff-tree --raw -z` output: `:OLDMODE NEWMODE OLDSHA NEWSHA STATUS\0PATH\0` records.
fn parse_raw(out: &str) -> Vec<TreeChange> {
    let mut changes = Vec::new();
    let mut fields = out.split('\0');
    while let Some(meta) = fields.next() {
        let Some(meta) = meta.strip_prefix(':') else {
            continue;
        };
        let Some(path) = fields.next() else { break };
        let parts: Vec<&str> = meta.split(' ').collect();
        let [old_mode, new_mode, _, _, status] = parts.as_slice() else {
            continue;
        };
        let (kind, mode) = match status.chars().next() {
            Some('A') => (ChangeKind::Added, new_mode),
            Some('D') => (ChangeKind::Deleted, old_mode),
            _ => (ChangeKind::Modified, new_mode),
        };
        changes.push(TreeChange {
            path: path.to_owned(),
            kind,
            mode: (*mode).to_owned(),
        });
    }
    changes
}

impl Git {
    /// Records every file of the worktree that is not ignored (tracked or not, staged or not,
    /// as it is on disk) as a tree, and returns its id, hashing every file. The same files give
    /// the same id.
    pub fn snapshot(&self) -> Result<TreeId, GitError> {
        self.snapshot_with(Scratch::Fresh)
    }

    /// [`Self::snapshot`] through the index `scratch` says: one [`Self::survey`], recorded.
    pub fn snapshot_with(&self, scratch: Scratch) -> Result<TreeId, GitError> {
        let survey = self.survey(scratch)?;
        self.record(survey)
    }

    /// Puts the worktree's files back as they were in `tree`: changed files are restored,
    /// deleted ones come back, and files that appeared since (unless ignored) are removed,
    /// with folders they leave empty.
    pub fn reset_to(&self, tree: &TreeId) -> Result<(), GitError> {
        self.reset_to_with(tree, Scratch::Fresh)
    }

    /// [`Self::reset_to`] through the index `scratch` says.
    pub fn reset_to_with(&self, tree: &TreeId, scratch: Scratch) -> Result<(), GitError> {
        // Everything now on disk goes into the scratch index first, so the one-way merge below
        // knows which files are not in `tree` and removes them.
        let survey = self.survey(scratch)?;
        self.update_index(&survey)?;
        self.run_env(
            &super::survey::with_rules(&["read-tree", "--reset", "-u", tree.as_str()]),
            &[("GIT_INDEX_FILE", survey.index_path())],
        )?;
        Ok(())
    }

    /// What differs between two snapshots, path by path (no rename detection: a rename is a
    /// deletion and an addition), in path order.
    pub fn changes(&self, from: &TreeId, to: &TreeId) -> Result<Vec<TreeChange>, GitError> {
        let out = self.run(&[
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            from.as_str(),
            to.as_str(),
        ])?;
        Ok(parse_raw(&out))
    }

    /// Puts `paths` back as they are in `tree` (a path not in `tree` is removed), leaving
    /// every other file, and the index, alone.
    pub fn restore_paths(&self, tree: &TreeId, paths: &[String]) -> Result<(), GitError> {
        for path in paths {
            let in_tree = self
                .run(&["ls-tree", "-z", "--name-only", tree.as_str(), "--", path])?
                .split('\0')
                .any(|p| p == path);
            if in_tree {
                self.run(&[
                    "restore",
                    "--source",
                    tree.as_str(),
                    "--worktree",
                    "--",
                    path,
                ])?;
            } else {
                let abs = self.root.join(path);
                match std::fs::symlink_metadata(&abs) {
                    Ok(m) if m.is_dir() => std::fs::remove_dir_all(&abs),
                    Ok(_) => std::fs::remove_file(&abs),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e),
                }
                .map_err(|source| GitError::Io { path: abs, source })?;
            }
        }
        Ok(())
    }
}
