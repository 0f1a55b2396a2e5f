//! Spare worktrees: a finished run's worktree kept, so that the next run starts from it instead
//! of checking out every file again.
//!
//! `git worktree add` writes every file of the tree: seconds on a repository of tens of
//! thousands of files (issue 34), most of a run's start. A worktree that outlives its run is
//! instead moved aside (`{home}/.spare/`, out of [`Git::worktrees`]'s listing) with its
//! branch let go, and [`Git::worktree_add`] takes one before it makes a new worktree: moved
//! to the new name with git (`git worktree move`), brought to the new base with `git checkout
//! --force` (only the files that differ are written), everything untracked or ignored removed
//! (`git clean -ffdx`: a build folder the last run's code wrote is that code's, not the new
//! run's), and then checked: a snapshot through the worktree's kept index must be the base's
//! own tree, or the files that differ are put back through it, or the spare is removed and a
//! new worktree made as before.
//!
//! Only a worktree whose git folder the model's code could not write is kept (the caller
//! says: a boxed run); the check above then rests on git's stat data as every kept-index
//! snapshot does (`survey.rs`). Hooks do not run in it ([`Git::linked`]).

use std::path::{Path, PathBuf};

use super::{Git, GitError, Scratch, TreeId};

/// Where spares wait, under the worktree home.
const SPARE_DIR: &str = ".spare";

/// The lock reason a spare carries from the moment it is taken until it is ready: a worktree
/// found with it (gavel stopped half way) is removed and made again.
pub(super) const TAKING: &str = "gavel: taking a spare";

impl Git {
    /// Keeps the worktree `name` as a spare (see the module's doc) when fewer than `keep` are
    /// kept already, else removes it; either way it is gone under `name` and its branch is no
    /// longer checked out (the caller deletes or keeps the branch). Returns whether it was
    /// kept. Removing one that is gone is a no-op.
    pub fn worktree_retire(&self, name: &str, keep: usize) -> Result<bool, GitError> {
        super::worktree::check_name(name)?;
        let path = self.worktree_home_resolved().join(name);
        let Some(found) = self.listed_at(&path)? else {
            return Ok(false);
        };
        if keep == 0
            || found.locked.is_some()
            || found.prunable
            || self.spares()?.len() >= keep
            || !self.park(name, &path).unwrap_or(false)
        {
            self.worktree_remove(name)?;
            return Ok(false);
        }
        Ok(true)
    }

    /// Detaches the worktree at `path` and moves it among the spares; `false` when it cannot
    /// be kept as it is (its `.git` pointer rewritten, no commit).
    fn park(&self, name: &str, path: &Path) -> Result<bool, GitError> {
        let linked = self.linked(name)?;
        if !linked.linkage_intact() {
            return Ok(false);
        }
        let Some(head) = linked.head()? else {
            return Ok(false);
        };
        // Detached where it is: no file or index touched, the branch free to go.
        linked.run(&["update-ref", "--no-deref", "HEAD", &head])?;
        let dir = self.worktree_home_created()?.join(SPARE_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| GitError::Io {
            path: dir.clone(),
            source,
        })?;
        let to = dir.join(format!("{name}-{}", std::process::id()));
        self.run(&[
            "worktree",
            "move",
            &path.to_string_lossy(),
            &to.to_string_lossy(),
        ])?;
        Ok(true)
    }

    /// The spare worktrees, oldest name first.
    pub fn spares(&self) -> Result<Vec<PathBuf>, GitError> {
        let dir = self.worktree_home_resolved().join(SPARE_DIR);
        let mut spares: Vec<PathBuf> = self
            .listed()?
            .into_iter()
            .filter(|w| w.path.parent() == Some(dir.as_path()) && w.locked.is_none())
            .filter(|w| !w.prunable)
            .map(|w| w.path)
            .collect();
        spares.sort();
        Ok(spares)
    }

    /// A spare made into the worktree `name` at `branch` (checked out if it exists, else made
    /// from `base`), checked as the module's doc says; `false` when there is no spare or none
    /// could be taken (the caller makes a new worktree). A spare that fails its check is
    /// removed, with the branch it made.
    pub(super) fn take_spare(
        &self,
        name: &str,
        branch: &str,
        base: &str,
        branch_exists: bool,
    ) -> Result<bool, GitError> {
        let target = self.worktree_home_created()?.join(name);
        for spare in self.spares()? {
            // Another gavel may take the same spare: whoever moves it first has it.
            let moved = self.run(&[
                "worktree",
                "move",
                &spare.to_string_lossy(),
                &target.to_string_lossy(),
            ]);
            if moved.is_err() {
                continue;
            }
            // From here until it is ready, a gavel stopped half way leaves it locked, and the
            // next `worktree_add` of this name starts over.
            let target_str = target.to_string_lossy();
            let locked = self.run(&["worktree", "lock", "--reason", TAKING, &target_str]);
            if locked.is_ok()
                && self
                    .ready(name, branch, base, branch_exists)
                    .unwrap_or(false)
            {
                self.run(&["worktree", "unlock", &target_str])?;
                return Ok(true);
            }
            self.worktree_remove(name)?;
            if !branch_exists {
                // Made by the checkout above, if it got that far; `worktree add` makes it anew.
                let _ = self.run(&["branch", "-D", branch]);
            }
            return Ok(false);
        }
        Ok(false)
    }

    /// Brings the taken spare `name` to `branch` and checks it (the module's doc).
    fn ready(
        &self,
        name: &str,
        branch: &str,
        base: &str,
        branch_exists: bool,
    ) -> Result<bool, GitError> {
        let linked = self.linked(name)?;
        if !linked.linkage_intact() {
            return Ok(false);
        }
        if branch_exists {
            linked.run(&["checkout", "--force", "--quiet", branch])?;
        } else {
            linked.run(&[
                "checkout",
                "--force",
                "--quiet",
                "--no-track",
                "-b",
                branch,
                base,
            ])?;
        }
        linked.run(&["clean", "-ffdxq"])?;
        let want = linked.run(&["rev-parse", "--verify", "HEAD^{tree}"])?;
        let want = TreeId::parse(want.trim()).ok_or_else(|| GitError::Failed {
            args: "rev-parse HEAD^{tree}".into(),
            stderr: format!("unexpected output {:?}", want.trim()),
            code: None,
        })?;
        if linked.snapshot_with(Scratch::Kept)? == want {
            return Ok(true);
        }
        linked.reset_to_with(&want, Scratch::Kept)?;
        Ok(linked.snapshot_with(Scratch::Kept)? == want)
    }
}
