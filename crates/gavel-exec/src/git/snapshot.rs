//! Snapshots of a worktree's files as git tree ids, and putting the files back.
//!
//! Before an agent edits a worktree, the workflow journals [`Git::snapshot`]'s tree id. If the
//! agent step does not finish (a crash, a timeout), the replay first calls [`Git::reset_to`]
//! with that id, so the agent starts again from the same files instead of from its own half
//! done edits. The tree also says what the agent changed (`git diff TREE`), judged from the
//! files, not from the agent's report.
//!
//! Both work in a temporary index (a copy of the real one, so unchanged files are not read
//! again) passed as `GIT_INDEX_FILE`: the index the person or the workflow staged into is never
//! touched. Ignored files (build output) are neither recorded nor removed.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Git, GitError};

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

impl Git {
    /// Records every file of the worktree that is not ignored (tracked or not, staged or not,
    /// as it is on disk) as a tree, and returns its id. The same files give the same id.
    pub fn snapshot(&self) -> Result<TreeId, GitError> {
        let index = self.scratch_index()?;
        let env = [("GIT_INDEX_FILE", index.as_os_str())];
        self.run_env(&["add", "--all", "--", ":/"], &env)?;
        let out = self.run_env(&["write-tree"], &env)?;
        TreeId::parse(out.trim()).ok_or_else(|| GitError::Failed {
            args: "write-tree".into(),
            stderr: format!("unexpected output {:?}", out.trim()),
            code: None,
        })
    }

    /// Puts the worktree's files back as they were in `tree`: changed files are restored,
    /// deleted ones come back, and files that appeared since (unless ignored) are removed,
    /// with folders they leave empty.
    pub fn reset_to(&self, tree: &TreeId) -> Result<(), GitError> {
        let index = self.scratch_index()?;
        let env = [("GIT_INDEX_FILE", index.as_os_str())];
        // Everything now on disk goes into the scratch index first, so the one-way merge below
        // knows which files are not in `tree` and removes them.
        self.run_env(&["add", "--all", "--", ":/"], &env)?;
        self.run_env(&["read-tree", "--reset", "-u", tree.as_str()], &env)?;
        Ok(())
    }

    /// A temporary index file beside the real one, holding a copy of it (or absent, which git
    /// reads as empty, when there is no real index yet). Deleted when dropped.
    fn scratch_index(&self) -> Result<tempfile::TempPath, GitError> {
        let real = self
            .root
            .join(self.run(&["rev-parse", "--git-path", "index"])?.trim());
        let dir = real
            .parent()
            .map_or_else(|| self.root.clone(), PathBuf::from);
        let io = |path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| GitError::Io { path, source }
        };
        let scratch = tempfile::Builder::new()
            .prefix("gavel-index-")
            .tempfile_in(&dir)
            .map_err(io(&dir))?
            .into_temp_path();
        match std::fs::copy(&real, &scratch) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // An empty file is not a valid index; no file is an empty one.
                std::fs::remove_file(&scratch).map_err(io(&scratch))?;
            }
            Err(e) => return Err(io(&real)(e)),
        }
        Ok(scratch)
    }
}
