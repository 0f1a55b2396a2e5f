//! Worktrees named by the workflow, so adding and removing them is idempotent on replay.
//!
//! A workflow that lets an agent edit code gives it a worktree of its own. The worktree's
//! folder (`{home}/{name}`) and branch (`gavel/{name}`) both derive from a name the workflow
//! chooses, such as the run's key, so a node replayed after a crash asks for the same worktree
//! and gets the one it made before: [`Git::worktree_add`] twice is one worktree. Only
//! worktrees under the home folder are gavel's; [`Git::worktrees`] lists those.
//!
//! A `git worktree add` killed half way leaves a worktree git marks as locked
//! ("initializing"); adding it again removes that remnant and starts over. Removing keeps the
//! branch (it holds the work; a later step may merge it).

use std::path::{Path, PathBuf};

use super::{Git, GitError};

/// Where worktrees go unless [`Git::with_worktree_home`] says otherwise, relative to the
/// repository's top-level folder (gavel's git-ignored state folder).
pub const DEFAULT_WORKTREE_HOME: &str = ".gavel/worktrees";

/// The prefix of the branch of each gavel worktree: `gavel/{name}`.
pub const BRANCH_PREFIX: &str = "gavel/";

/// One of gavel's worktrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// The name the workflow gave it.
    pub name: String,
    /// Its folder, as git records it (absolute, symlinks resolved).
    pub path: PathBuf,
    /// The branch checked out in it (`gavel/{name}`), `None` when detached.
    pub branch: Option<String>,
    /// The commit checked out, `None` before the first.
    pub head: Option<String>,
    /// Made just now from a spare worktree (`spare.rs`) rather than checked out afresh.
    pub from_spare: bool,
}

/// One record of `git worktree list --porcelain -z`.
#[derive(Debug, Default)]
pub(super) struct Listed {
    pub(super) path: PathBuf,
    head: Option<String>,
    branch: Option<String>,
    pub(super) locked: Option<String>,
    pub(super) prunable: bool,
}

impl Git {
    /// The worktree called `name`, made from `base` (a commit, branch or tag) on a new branch
    /// `gavel/{name}` if it does not exist yet; if it does, it is returned as it is. A branch
    /// `gavel/{name}` left by an earlier worktree of that name is checked out again, not
    /// recreated from `base`.
    pub fn worktree_add(&self, name: &str, base: &str) -> Result<Worktree, GitError> {
        check_name(name)?;
        let home = self.worktree_home_created()?;
        let path = home.join(name);
        let branch = format!("{BRANCH_PREFIX}{name}");
        if let Some(found) = self.listed_at(&path)? {
            if matches!(
                found.locked.as_deref(),
                Some("initializing" | super::spare::TAKING)
            ) {
                // A `git worktree add`, or the taking of a spare, that never finished: start
                // over.
                self.force_remove(&found.path)?;
            } else if found.prunable {
                self.run(&["worktree", "prune"])?;
            } else {
                let worktree = to_worktree(name, found);
                if worktree.branch.as_deref() != Some(branch.as_str()) {
                    return Err(GitError::Worktree {
                        path,
                        detail: format!(
                            "it is checked out at {} instead of branch {branch}",
                            worktree.branch.as_deref().unwrap_or("a detached HEAD")
                        ),
                    });
                }
                return Ok(worktree);
            }
        }
        let folder = path.to_string_lossy().into_owned();
        let exists = self
            .run(&[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ])
            .map(|_| true)
            .or_else(|e| match e {
                GitError::Failed { .. } => Ok(false),
                e => Err(e),
            })?;
        let from_spare = self.take_spare(name, &branch, base, exists)?;
        if from_spare {
            // A spare made ready (spare.rs).
        } else if exists {
            self.run(&["worktree", "add", "--quiet", &folder, &branch])?;
        } else {
            self.run(&[
                "worktree",
                "add",
                "--quiet",
                "--no-track",
                "-b",
                &branch,
                &folder,
                base,
            ])?;
        }
        self.listed_at(&path)?
            .map(|found| Worktree {
                from_spare,
                ..to_worktree(name, found)
            })
            .ok_or_else(|| GitError::Worktree {
                path,
                detail: "git added it but does not list it".into(),
            })
    }

    /// Removes the worktree called `name` (and whatever is in it, committed or not); its
    /// branch stays. Returns whether there was one. Removing one that is gone is a no-op.
    pub fn worktree_remove(&self, name: &str) -> Result<bool, GitError> {
        check_name(name)?;
        let path = self.worktree_home_resolved().join(name);
        match self.listed_at(&path)? {
            None => Ok(false),
            Some(found) if found.prunable || !found.path.exists() => {
                self.run(&["worktree", "prune"])?;
                Ok(true)
            }
            Some(found) => self.force_remove(&found.path).map(|()| true),
        }
    }

    /// The worktree called `name` as a [`Git`] of its own whose commands name its git folder
    /// and work tree explicitly (and run no hooks): what the model's code does to the
    /// worktree's `.git` pointer cannot change which repository gavel's git acts on. The git
    /// folder is found from the repository's side (the `gitdir` file of each of
    /// `.git/worktrees/*` names its worktree), never from the pointer. Fails when git knows
    /// no worktree there; [`Git::linkage_intact`] tells whether the pointer still matches.
    pub fn linked(&self, name: &str) -> Result<Git, GitError> {
        check_name(name)?;
        let path = self.worktree_home_resolved().join(name);
        let admin = self.common_dir()?.join("worktrees");
        let expected = path.join(".git");
        let found = std::fs::read_dir(&admin).ok().and_then(|entries| {
            entries.flatten().map(|e| e.path()).find(|dir| {
                std::fs::read_to_string(dir.join("gitdir"))
                    .is_ok_and(|t| Path::new(t.trim_end_matches('\n')) == expected)
            })
        });
        let git_dir = found.ok_or_else(|| GitError::Worktree {
            path: path.clone(),
            detail: format!(
                "git has no worktree there (nothing in {} names it)",
                admin.display()
            ),
        })?;
        Ok(Git {
            root: path,
            worktree_home: self.worktree_home.clone(),
            git_dir: Some(git_dir),
        })
    }

    /// Whether a linked worktree's `.git` pointer still names its git folder (always true for
    /// a repository that is not one made by [`Git::linked`]).
    pub fn linkage_intact(&self) -> bool {
        let Some(git_dir) = &self.git_dir else {
            return true;
        };
        let pointer = self.root.join(".git");
        match std::fs::symlink_metadata(&pointer) {
            Ok(m) if m.is_file() => std::fs::read_to_string(&pointer)
                .is_ok_and(|t| t.trim_end() == format!("gitdir: {}", git_dir.display())),
            _ => false,
        }
    }

    /// Has git write a linked worktree's `.git` pointer back (`git worktree repair`, run from
    /// the main repository); whatever is in its place (a folder, a link, a rewritten file) is
    /// removed first.
    pub fn restore_linkage(&self) -> Result<(), GitError> {
        if self.git_dir.is_none() {
            return Ok(());
        }
        let pointer = self.root.join(".git");
        let io = |source| GitError::Io {
            path: pointer.clone(),
            source,
        };
        match std::fs::symlink_metadata(&pointer) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&pointer).map_err(io)?,
            Ok(_) => std::fs::remove_file(&pointer).map_err(io)?,
            Err(_) => {}
        }
        // git repairs a missing or broken pointer and still exits 1, having reported the
        // breakage it found; whether the pointer is right again is checked below.
        let common = self.common_dir()?;
        let out = super::command(&common)
            .arg("--git-dir")
            .arg(&common)
            .args(["worktree", "repair", "--"])
            .arg(&self.root)
            .output()
            .map_err(GitError::Spawn)?;
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
            return Err(GitError::Killed {
                args: "worktree repair".into(),
                signal,
            });
        }
        if self.linkage_intact() {
            Ok(())
        } else {
            Err(GitError::Worktree {
                path: self.root.clone(),
                detail: "`git worktree repair` did not restore the `.git` pointer".into(),
            })
        }
    }

    /// gavel's worktrees: those in the worktree home folder.
    pub fn worktrees(&self) -> Result<Vec<Worktree>, GitError> {
        let home = self.worktree_home_resolved();
        Ok(self
            .listed()?
            .into_iter()
            .filter(|w| w.path.parent() == Some(home.as_path()))
            .filter_map(|w| {
                let name = w.path.file_name()?.to_string_lossy().into_owned();
                Some(to_worktree(&name, w))
            })
            .collect())
    }

    /// `git worktree remove` with both `--force`s (uncommitted changes, a lock). When git
    /// cannot (a folder half deleted by an interrupted remove), the folder, which is gavel's,
    /// is deleted here and git forgets it.
    fn force_remove(&self, path: &Path) -> Result<(), GitError> {
        let folder = path.to_string_lossy().into_owned();
        match self.run(&["worktree", "remove", "--force", "--force", &folder]) {
            Ok(_) => Ok(()),
            Err(GitError::Failed { .. }) => {
                if path.exists() {
                    std::fs::remove_dir_all(path).map_err(|source| GitError::Io {
                        path: path.to_path_buf(),
                        source,
                    })?;
                }
                self.run(&["worktree", "prune"]).map(drop)
            }
            Err(e) => Err(e),
        }
    }

    /// The worktree home, created, with symlinks resolved as git records worktree paths.
    pub(super) fn worktree_home_created(&self) -> Result<PathBuf, GitError> {
        let home = &self.worktree_home;
        std::fs::create_dir_all(home)
            .and_then(|()| home.canonicalize())
            .map_err(|source| GitError::Io {
                path: home.clone(),
                source,
            })
    }

    /// The worktree home with symlinks resolved as far as it exists.
    pub(super) fn worktree_home_resolved(&self) -> PathBuf {
        let home = &self.worktree_home;
        if let Ok(real) = home.canonicalize() {
            return real;
        }
        // Resolve the nearest folder that exists and keep the rest as given.
        let mut missing = Vec::new();
        let mut base = home.as_path();
        while let Some(parent) = base.parent() {
            missing.push(base.file_name().unwrap_or_default().to_owned());
            if let Ok(real) = parent.canonicalize() {
                return missing.iter().rev().fold(real, |p, part| p.join(part));
            }
            base = parent;
        }
        home.clone()
    }

    /// The worktree git lists at `path`.
    pub(super) fn listed_at(&self, path: &Path) -> Result<Option<Listed>, GitError> {
        Ok(self.listed()?.into_iter().find(|w| w.path == path))
    }

    pub(super) fn listed(&self) -> Result<Vec<Listed>, GitError> {
        let out = self.run(&["worktree", "list", "--porcelain", "-z"])?;
        Ok(parse_list(&out))
    }
}

fn to_worktree(name: &str, listed: Listed) -> Worktree {
    Worktree {
        name: name.to_owned(),
        path: listed.path,
        branch: listed
            .branch
            .map(|b| b.strip_prefix("refs/heads/").unwrap_or(&b).to_owned()),
        head: listed.head,
        from_spare: false,
    }
}

/// Parses `git worktree list --porcelain -z`: NUL-terminated `key value` fields, each record
/// ended by an empty field.
fn parse_list(out: &str) -> Vec<Listed> {
    let mut all = Vec::new();
    let mut current: Option<Listed> = None;
    for field in out.split('\0') {
        if field.is_empty() {
            all.extend(current.take());
            continue;
        }
        let (key, value) = field.split_once(' ').unwrap_or((field, ""));
        if key == "worktree" {
            all.extend(current.take());
            current = Some(Listed {
                path: PathBuf::from(value),
                ..Listed::default()
            });
            continue;
        }
        let Some(w) = current.as_mut() else { continue };
        match key {
            "HEAD" => w.head = Some(value.to_owned()),
            "branch" => w.branch = Some(value.to_owned()),
            "locked" => w.locked = Some(value.to_owned()),
            "prunable" => w.prunable = true,
            _ => {}
        }
    }
    all.extend(current);
    all
}

/// A name is one folder and one branch-name component: ASCII letters, digits, `.`, `_` and `-`,
/// starting with a letter or digit, at most 100 characters, not ending in `.lock`.
pub(super) fn check_name(name: &str) -> Result<(), GitError> {
    let bad = |reason| {
        Err(GitError::BadName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() || name.len() > 100 {
        return bad("it must be 1 to 100 characters long");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return bad("it must start with a letter or a digit");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad("only letters, digits, '.', '_' and '-' are allowed");
    }
    if name.contains("..") || name.ends_with('.') || name.ends_with(".lock") {
        return bad("git does not allow it in a branch name");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_folder_and_branch_safe() {
        for good in ["a1b2c3d4e5f6a7b8", "run-12", "v1.2_x"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-x", ".x", "a/b", "a..b", "x.lock", "x.", "a b", "ü"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_the_porcelain_list() {
        let out = "worktree /r\0HEAD abc\0branch refs/heads/main\0\0\
                   worktree /r/.gavel/worktrees/k\0HEAD def\0detached\0locked initializing\0\0\
                   worktree /gone\0HEAD 123\0branch refs/heads/gavel/gone\0prunable gitdir file points to non-existent location\0\0";
        let all = parse_list(out);
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].branch.as_deref(), Some("refs/heads/main"));
        assert_eq!(all[1].locked.as_deref(), Some("initializing"));
        assert_eq!(all[1].branch, None);
        assert!(all[2].prunable && !all[1].prunable);
    }
}
