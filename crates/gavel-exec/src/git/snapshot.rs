//! Snapshots of a worktree's files as git tree ids, and putting the files back.
//!
//! Before an agent edits a worktree, the workflow journals [`Git::snapshot`]'s tree id. If the
//! agent step does not finish (a crash, a timeout), the replay first calls [`Git::reset_to`]
//! with that id, so the agent starts again from the same files instead of from its own half
//! done edits. The tree also says what the agent changed (`git diff TREE`), judged from the
//! files, not from the agent's report.
//!
//! Both work in an index of their own passed as `GIT_INDEX_FILE`: the index the person or the
//! workflow staged into is never touched. Ignored files (build output) are neither recorded nor
//! removed. Which index ([`Scratch`]):
//! - [`Scratch::Fresh`], a new empty one each time: every file is hashed afresh, a cost that
//!   follows the size of everything in the tree. Right where the index could have been written
//!   by someone else (an unboxed agent can reach anything the person can; a copy of the real
//!   index would let git trust a size and mtime that a file rewritten within the same clock
//!   tick keeps, and miss the change, which would let an edited test through).
//! - [`Scratch::Kept`], one index per worktree kept in its git folder (where a boxed agent or
//!   test cannot write) and written by git alone: git re-hashes only the files whose stat data
//!   changed, as `git status` does, so a snapshot costs what `git status` costs. git's own
//!   rules keep that safe: a file changed in the same tick as the index was written is
//!   re-checked by content (git marks such entries racily clean when it writes the index), and
//!   the change time, which no unprivileged process can set back, is compared
//!   (`core.trustctime` and `core.checkStat` forced to git's defaults, `core.fsmonitor` and the
//!   untracked cache forced off for these commands whatever the configuration says). git
//!   compares times to the second, so a file rewritten in the second the index was written,
//!   its size kept and its modification time put back, would look unchanged: before each use
//!   gavel takes every file whose change time falls in that second out of the kept index, so
//!   git hashes it again (`Git::forget_recent`).

use std::os::unix::fs::MetadataExt;
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

/// The index a snapshot (or a reset) records the files through; see the module's doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scratch {
    /// A new, empty index: every file hashed afresh.
    Fresh,
    /// The worktree's own index in its git folder, kept between snapshots: only files whose
    /// stat data changed are hashed. Only where nothing but gavel's git can write that folder.
    Kept,
}

/// The index file a [`Scratch::Kept`] snapshot uses, under the worktree's git folder.
const KEPT_INDEX: &str = "gavel-snapshot-index";

/// Settings every snapshot command runs with, whatever the configuration says: a change is
/// seen from the files' own stat data (change time included), never from a cache or a daemon.
const STAT_RULES: [&str; 8] = [
    "-c",
    "core.trustctime=true",
    "-c",
    "core.checkStat=default",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
];

impl Git {
    /// Records every file of the worktree that is not ignored (tracked or not, staged or not,
    /// as it is on disk) as a tree, and returns its id, hashing every file. The same files give
    /// the same id.
    pub fn snapshot(&self) -> Result<TreeId, GitError> {
        self.snapshot_with(Scratch::Fresh)
    }

    /// [`Self::snapshot`] through the index `scratch` says.
    pub fn snapshot_with(&self, scratch: Scratch) -> Result<TreeId, GitError> {
        let index = self.scratch(scratch)?;
        let env = [("GIT_INDEX_FILE", index.path())];
        self.forget_recent(&index)?;
        self.run_env(&with_rules(&["add", "--all", "--", ":/"]), &env)?;
        let out = self.run_env(&with_rules(&["write-tree"]), &env)?;
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
        self.reset_to_with(tree, Scratch::Fresh)
    }

    /// [`Self::reset_to`] through the index `scratch` says.
    pub fn reset_to_with(&self, tree: &TreeId, scratch: Scratch) -> Result<(), GitError> {
        let index = self.scratch(scratch)?;
        let env = [("GIT_INDEX_FILE", index.path())];
        // Everything now on disk goes into the scratch index first, so the one-way merge below
        // knows which files are not in `tree` and removes them.
        self.forget_recent(&index)?;
        self.run_env(&with_rules(&["add", "--all", "--", ":/"]), &env)?;
        self.run_env(
            &with_rules(&["read-tree", "--reset", "-u", tree.as_str()]),
            &env,
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

    /// Takes out of a kept index every file whose change time falls in the second the index
    /// was last written, so the next `git add` hashes it again (see the module's doc): git
    /// cannot tell such a file's own change from a rewrite that kept its size and put its
    /// modification time back. A fresh index has nothing to take out.
    fn forget_recent(&self, index: &ScratchIndex) -> Result<(), GitError> {
        let ScratchIndex::Kept(path) = index else {
            return Ok(());
        };
        let written = match std::fs::metadata(path) {
            Ok(m) => m.mtime(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(GitError::Io {
                    path: path.clone(),
                    source,
                });
            }
        };
        let env = [("GIT_INDEX_FILE", path.as_os_str())];
        let listed = self.run_env(&["ls-files", "-z"], &env)?;
        let recent: Vec<&str> = listed
            .split('\0')
            .filter(|rel| !rel.is_empty())
            .filter(|rel| {
                // Gone or unreadable: git sees that by itself.
                std::fs::symlink_metadata(self.root.join(rel)).is_ok_and(|m| m.ctime() >= written)
            })
            .collect();
        if recent.is_empty() {
            return Ok(());
        }
        // Named on stdin, as paths (not pathspecs: matching tens of thousands of pathspecs
        // against every entry would cost their product); a fresh checkout may name them all.
        let mut cmd = self.command(&["update-index", "--force-remove", "-z", "--stdin"]);
        cmd.env("GIT_INDEX_FILE", path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut git = super::GitProcess::spawn(cmd, "update-index --force-remove --stdin")?;
        let mut list = recent.join("\0");
        list.push('\0');
        let wrote = git
            .child
            .stdin
            .take()
            .map(|mut stdin| std::io::Write::write_all(&mut stdin, list.as_bytes()));
        // git's own failure first (it explains a broken pipe), then ours.
        git.finish()?;
        if let Some(Err(e)) = wrote {
            return Err(GitError::Spawn(e));
        }
        Ok(())
    }

    /// The index file for `scratch`: a new one (removed when dropped) or the kept one.
    fn scratch(&self, scratch: Scratch) -> Result<ScratchIndex, GitError> {
        match scratch {
            Scratch::Fresh => Ok(ScratchIndex::Fresh(self.scratch_index()?)),
            Scratch::Kept => {
                let out =
                    self.run(&["rev-parse", "--git-path", KEPT_INDEX, "--git-path", "index"])?;
                let mut lines = out.lines().map(|l| self.root.join(l.trim()));
                let (Some(kept), Some(real)) = (lines.next(), lines.next()) else {
                    return Err(GitError::Failed {
                        args: "rev-parse --git-path".into(),
                        stderr: format!("unexpected output {out:?}"),
                        code: None,
                    });
                };
                if !kept.exists() {
                    seed(&kept, &real)?;
                }
                Ok(ScratchIndex::Kept(kept))
            }
        }
    }

    /// A path for a temporary index beside the real one, with no file there yet (git reads a
    /// missing index as an empty one). Deleted when dropped, if git made it.
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
        // An empty file is not a valid index; no file is an empty one.
        std::fs::remove_file(&scratch).map_err(io(&scratch))?;
        Ok(scratch)
    }
}

/// Starts a kept index as a copy of the worktree's own index, which git wrote when it checked
/// the worktree out (only gavel's git writes it: a boxed agent or test cannot reach the git
/// folder), so the first snapshot hashes only what changed since, not every file. The copy
/// keeps the original's modification time, so git judges racily clean entries as it would
/// in the original, and [`Git::forget_recent`] re-hashes every file changed from the second
/// the original was written on. The bytes are copied as they are, never read or written as
/// an index by gavel. No worktree index (a fresh repository): the kept one starts empty.
fn seed(kept: &std::path::Path, real: &std::path::Path) -> Result<(), GitError> {
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| GitError::Io { path, source }
    };
    let written = match std::fs::metadata(real) {
        Ok(m) => m.modified().map_err(io(real))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(real)(e)),
    };
    // Copied beside, then renamed: a kept index is never half there.
    let dir = kept.parent().unwrap_or(std::path::Path::new("."));
    let partial = tempfile::Builder::new()
        .prefix("gavel-snapshot-seed-")
        .tempfile_in(dir)
        .map_err(io(dir))?;
    std::fs::copy(real, partial.path()).map_err(io(real))?;
    partial
        .as_file()
        .set_modified(written)
        .map_err(io(partial.path()))?;
    partial.persist(kept).map_err(|e| io(kept)(e.error))?;
    Ok(())
}

/// An index file a snapshot command is given.
enum ScratchIndex {
    Fresh(tempfile::TempPath),
    Kept(PathBuf),
}

impl ScratchIndex {
    fn path(&self) -> &std::ffi::OsStr {
        match self {
            Self::Fresh(p) => p.as_os_str(),
            Self::Kept(p) => p.as_os_str(),
        }
    }
}

/// `args` after [`STAT_RULES`].
fn with_rules<'a>(args: &[&'a str]) -> Vec<&'a str> {
    STAT_RULES
        .iter()
        .copied()
        .chain(args.iter().copied())
        .collect()
}
