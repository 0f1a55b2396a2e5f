//! One look at a worktree, shared by its snapshot and by the checks around a model step.
//!
//! A step's guard needs three lists from the worktree (the files that differ from the last
//! snapshot, the untracked entries, the ignored ones) and the snapshot needs the first two
//! again: each list was a walk of the whole tree, so a step walked it four times on each side
//! of the model call. [`Git::survey`] walks it once, with one `git status` through the
//! snapshot's own index, and [`Git::record`] writes what it found into that index with
//! `git update-index --stdin` (only the named paths are hashed) and returns the tree.
//!
//! Which index ([`Scratch`]):
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
//!   gavel takes every file git recorded in that second (its recorded change time, read from
//!   the index) out of the kept index, so git hashes it again (`Git::forget_recent`). git
//!   built with nanosecond times compares finer; the rule holds either way.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::{Git, GitError, TreeId};

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

/// What one look at a worktree found: see the module's doc. Hand it to [`Git::record`] for
/// the tree; its index is the one it was taken through.
pub struct Survey {
    index: ScratchIndex,
    /// Tracked paths whose file differs from the index.
    changed: Vec<String>,
    /// Tracked paths with no file (or whose folder became a symbolic link).
    gone: Vec<String>,
    /// The untracked entries, every file on its own; a nested repository is one entry
    /// ending in `/`.
    pub untracked: Vec<String>,
    /// The ignored entries; an ignored folder is one entry ending in `/`.
    pub ignored: BTreeSet<String>,
    /// Entries whose name is not UTF-8 (repository-relative, as on disk), which gavel's
    /// snapshot cannot name to git: untracked or ignored ones, and tracked ones that changed
    /// (see [`Undecodable`]).
    pub undecodable: Vec<Undecodable>,
}

/// An entry `git status` named whose path is not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable {
    /// The path as on disk, relative to the worktree (an ignored folder without its `/`).
    pub path: PathBuf,
    /// How git listed it.
    pub listed: Listing,
}

/// How `git status` listed an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// A tracked file that changed.
    Changed,
    Untracked,
    Ignored,
}

impl Survey {
    /// The index file it was taken through.
    pub(super) fn index_path(&self) -> &std::ffi::OsStr {
        self.index.path()
    }
}

impl Git {
    /// Looks at the worktree through the index `scratch` names: one `git status`, which also
    /// refreshes that index's stat data (see the module's doc).
    pub fn survey(&self, scratch: Scratch) -> Result<Survey, GitError> {
        let index = self.scratch(scratch)?;
        // What it takes out, git lists as untracked below.
        self.forget_recent(&index)?;
        let listed = self.status(&index, None)?;
        Ok(Survey {
            index,
            changed: listed.changed,
            gone: listed.gone,
            untracked: listed.untracked,
            ignored: listed.ignored,
            undecodable: listed.undecodable,
        })
    }

    /// A survey of the folder `within` (repository-relative) alone, through the kept index,
    /// for a caller that knows nothing outside it changed since that index was last written:
    /// its own writes are in `within`, and no code it does not trust ran since (a boxed run's
    /// processes all end with its box). The ignored entries are `within`'s only. A change
    /// elsewhere is not seen here but by the next full [`Self::survey`], which compares against
    /// what this one records; nothing needs forgetting first ([`Self::forget_recent`] guards
    /// against code running in the second an index is written, and none did).
    pub fn survey_within(&self, within: &str) -> Result<Survey, GitError> {
        let index = self.scratch(Scratch::Kept)?;
        let listed = self.status(&index, Some(within))?;
        Ok(Survey {
            index,
            changed: listed.changed,
            gone: listed.gone,
            untracked: listed.untracked,
            ignored: listed.ignored,
            undecodable: listed.undecodable,
        })
    }

    /// `git status` through `index`, of the whole worktree or of the folder `within`.
    fn status(&self, index: &ScratchIndex, within: Option<&str>) -> Result<Listed, GitError> {
        let env = [("GIT_INDEX_FILE", index.path())];
        let scope = within.map(|w| format!(":(top,literal){w}"));
        let mut args = vec![
            "status",
            "--porcelain=v2",
            "-z",
            "--no-renames",
            "--untracked-files=all",
            "--ignored=matching",
            "--ignore-submodules=none",
        ];
        if let Some(scope) = &scope {
            args.extend(["--", scope.as_str()]);
        }
        let out = self.run_env_bytes(&with_rules(&args), &env)?;
        Ok(parse_status(&out))
    }

    /// Writes what `survey` found into its index (only those paths are read and hashed) and
    /// returns the tree of every file that is not ignored, as on disk when it was surveyed.
    pub fn record(&self, survey: Survey) -> Result<TreeId, GitError> {
        self.update_index(&survey)?;
        let env = [("GIT_INDEX_FILE", survey.index.path())];
        let out = self.run_env(&with_rules(&["write-tree"]), &env)?;
        TreeId::parse(out.trim()).ok_or_else(|| GitError::Failed {
            args: "write-tree".into(),
            stderr: format!("unexpected output {:?}", out.trim()),
            code: None,
        })
    }

    /// Brings `survey`'s index to the files it found: changed and gone paths updated or
    /// removed, untracked ones added (a nested repository by its folder, as `git add` would).
    pub(super) fn update_index(&self, survey: &Survey) -> Result<(), GitError> {
        if !survey.gone.is_empty() {
            // Taken out by name: `--remove` would refuse a path beyond a symbolic link (a
            // folder replaced by a link), which is gone all the same.
            let mut list = Vec::new();
            for path in &survey.gone {
                list.extend_from_slice(path.as_bytes());
                list.push(0);
            }
            self.feed(
                &["update-index", "--force-remove", "-z", "--stdin"],
                survey.index.path(),
                &list,
            )?;
        }
        if survey.changed.is_empty() && survey.untracked.is_empty() {
            return Ok(());
        }
        let mut list = String::new();
        for path in survey.changed.iter().chain(&survey.untracked) {
            list.push_str(path.strip_suffix('/').unwrap_or(path));
            list.push('\0');
        }
        self.feed(
            &[
                "update-index",
                "--add",
                "--remove",
                "--replace",
                "-z",
                "--stdin",
            ],
            survey.index.path(),
            list.as_bytes(),
        )
    }

    /// Runs `git args` (after [`STAT_RULES`]) on `index`, with `input` on its stdin and its
    /// stdout dropped.
    fn feed(&self, args: &[&str], index: &std::ffi::OsStr, input: &[u8]) -> Result<(), GitError> {
        let mut cmd = self.command(&with_rules(args));
        cmd.env("GIT_INDEX_FILE", index)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut git = super::GitProcess::spawn(cmd, args.join(" "))?;
        let wrote = git
            .child
            .stdin
            .take()
            .map(|mut stdin| std::io::Write::write_all(&mut stdin, input));
        // git's own failure first (it explains a broken pipe), then ours.
        git.finish()?;
        if let Some(Err(e)) = wrote {
            return Err(GitError::Spawn(e));
        }
        Ok(())
    }

    /// Takes out of a kept index every file whose recorded change time falls in the second the
    /// index was last written, so the next `git status` lists it and [`Self::record`] hashes
    /// it again (see the module's doc): git cannot tell such a file's own change from a rewrite
    /// that kept its size and put its modification time back. The recorded times are read
    /// from the index ([`super::recorded`]). A fresh index has nothing to take out.
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
        let recent = match super::recorded::recorded_since(path, written) {
            Some(recent) => recent,
            None => self.changed_since(path, written)?,
        };
        if recent.is_empty() {
            return Ok(());
        }
        // Named on stdin, as paths (not pathspecs: matching tens of thousands of pathspecs
        // against every entry would cost their product); a fresh checkout may name them all.
        let mut list = Vec::new();
        for rel in &recent {
            list.extend_from_slice(rel);
            list.push(0);
        }
        self.feed(
            &["update-index", "--force-remove", "-z", "--stdin"],
            path.as_os_str(),
            &list,
        )
    }

    /// The files of the index at `path` whose change time on disk is at or after `written`,
    /// by stating every one: for an index gix cannot read ([`super::recorded`]). A superset
    /// of the entries git recorded in that second (a file changed since is in it too).
    fn changed_since(
        &self,
        path: &std::path::Path,
        written: i64,
    ) -> Result<Vec<Vec<u8>>, GitError> {
        let env = [("GIT_INDEX_FILE", path.as_os_str())];
        let listed = self.run_env(&["ls-files", "-z"], &env)?;
        Ok(listed
            .split('\0')
            .filter(|rel| !rel.is_empty())
            .filter(|rel| {
                // Gone or unreadable: git sees that by itself.
                std::fs::symlink_metadata(self.root.join(rel)).is_ok_and(|m| m.ctime() >= written)
            })
            .map(|rel| rel.as_bytes().to_vec())
            .collect())
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
pub(super) fn with_rules<'a>(args: &[&'a str]) -> Vec<&'a str> {
    STAT_RULES
        .iter()
        .copied()
        .chain(args.iter().copied())
        .collect()
}

/// [`Git::survey`]'s lists, from `git status --porcelain=v2 -z --no-renames`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Listed {
    pub(super) changed: Vec<String>,
    pub(super) gone: Vec<String>,
    pub(super) undecodable: Vec<Undecodable>,
    pub(super) untracked: Vec<String>,
    pub(super) ignored: BTreeSet<String>,
}

/// Reads `git status --porcelain=v2 -z` records: `1 XY ... PATH`, `2 XY ... PATH\0ORIG`,
/// `u XY ... PATH`, `? PATH`, `! PATH`. A tracked path counts as gone when its worktree side
/// (`Y`) is `D` (no file there, or one beyond a symbolic link), as changed when it is another
/// letter; an unmerged one always counts as changed.
pub(super) fn parse_status(out: &[u8]) -> Listed {
    let mut listed = Listed::default();
    let mut records = out.split(|b| *b == 0);
    while let Some(record) = records.next() {
        let Some(space) = record.iter().position(|b| *b == b' ') else {
            continue;
        };
        let (kind, rest) = (&record[..space], &record[space + 1..]);
        match kind {
            b"?" | b"!" => {
                let listing = if kind == b"?" {
                    Listing::Untracked
                } else {
                    Listing::Ignored
                };
                let Some(path) = decoded(rest, listing, &mut listed) else {
                    continue;
                };
                if kind == b"?" {
                    listed.untracked.push(path);
                } else {
                    listed.ignored.insert(path);
                }
            }
            b"1" | b"2" | b"u" => {
                // Fields before the path: XY sub mH mI mW hH hI (1), then a score (2); XY sub
                // m1 m2 m3 mW h1 h2 h3 (u).
                let before = match kind {
                    b"1" => 7,
                    b"2" => 8,
                    _ => 9,
                };
                let mut fields = rest.splitn(before + 1, |b| *b == b' ');
                let xy = fields.next().unwrap_or(b"..");
                let Some(path) = fields.nth(before - 1) else {
                    continue;
                };
                if kind == b"2" {
                    // The original path follows as a record of its own.
                    records.next();
                }
                let y = xy.get(1).copied();
                let changed = kind == b"u" || y.is_some_and(|y| y != b'.');
                if !changed {
                    continue;
                }
                let Some(path) = decoded(path, Listing::Changed, &mut listed) else {
                    continue;
                };
                if kind != b"u" && y == Some(b'D') {
                    listed.gone.push(path);
                } else {
                    listed.changed.push(path);
                }
            }
            _ => {}
        }
    }
    listed
}

/// `path` as a string, or `None` with it kept in `listed.undecodable` when it is not UTF-8.
fn decoded(path: &[u8], listing: Listing, listed: &mut Listed) -> Option<String> {
    match std::str::from_utf8(path) {
        Ok(path) => Some(path.to_owned()),
        Err(_) => {
            use std::os::unix::ffi::OsStrExt;
            let path = std::ffi::OsStr::from_bytes(path.strip_suffix(b"/").unwrap_or(path));
            listed.undecodable.push(Undecodable {
                path: PathBuf::from(path),
                listed: listing,
            });
            None
        }
    }
}
