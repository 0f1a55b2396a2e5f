//! The person's checkout, fingerprinted before and after every model step when the step runs
//! unboxed (`[implement] sandbox = "none"`): its HEAD, its index and its files (tracked and
//! untracked, as they are on disk). Any difference means something wrote where the agent had
//! no business, and the run halts naming the paths. Boxed, the step cannot write there, so the
//! person's edits meanwhile are theirs and nothing is fingerprinted.
//!
//! The files are recorded as a git tree through a scratch index (see `gavel-exec`'s
//! snapshots), so the person's index is never touched and an unchanged checkout costs little.
//! Ignored files (build output, a `.env`) are not part of the fingerprint; the operating
//! system's confinement of the agent is what keeps those safe.

use gavel_exec::git::{Git, GitError, TreeId};
use serde::{Deserialize, Serialize};

/// What a checkout looked like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The commit checked out (`None` before the first).
    pub head: Option<String>,
    /// The index as a tree (what is staged).
    pub index: String,
    /// Every file that is not ignored, as on disk.
    pub files: TreeId,
}

impl Fingerprint {
    /// The checkout at `git`'s root now.
    pub fn of(git: &Git) -> Result<Self, GitError> {
        let index = git.run(&["write-tree"])?.trim().to_owned();
        Ok(Self {
            head: git.head()?,
            index,
            files: git.snapshot()?,
        })
    }

    /// What differs between `self` (before) and `after`, for a person: the moved HEAD, a
    /// changed index, and each changed path.
    pub fn differences(&self, git: &Git, after: &Self) -> Result<Vec<String>, GitError> {
        let mut out = Vec::new();
        if self.head != after.head {
            out.push(format!(
                "HEAD moved from {} to {}",
                self.head.as_deref().unwrap_or("nothing"),
                after.head.as_deref().unwrap_or("nothing")
            ));
        }
        if self.index != after.index {
            out.push("the index (staged changes) changed".into());
        }
        for c in git.changes(&self.files, &after.files)? {
            out.push(format!("{} ({:?})", c.path, c.kind).to_lowercase());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_change_to_the_checkout_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = Git::at(dir.path());
        for args in [
            &["init", "-q"][..],
            &["config", "user.name", "t"],
            &["config", "user.email", "t@x"],
            &["config", "commit.gpgsign", "false"],
        ] {
            git.run(args).expect("git");
        }
        std::fs::write(dir.path().join("a.txt"), "a").expect("write");
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").expect("write");
        git.run(&["add", "-A"]).expect("add");
        git.run(&["commit", "-qm", "a"]).expect("commit");
        std::fs::write(dir.path().join("wip.txt"), "uncommitted").expect("write");
        let before = Fingerprint::of(&git).expect("before");
        std::fs::write(dir.path().join("x.log"), "ignored").expect("write");
        assert_eq!(
            Fingerprint::of(&git).expect("same"),
            before,
            "ignored files do not count"
        );
        std::fs::write(dir.path().join("wip.txt"), "clobbered").expect("write");
        std::fs::write(dir.path().join("new.txt"), "n").expect("write");
        git.run(&["add", "a.txt"]).expect("stage");
        let after = Fingerprint::of(&git).expect("after");
        let diff = before.differences(&git, &after).expect("diff");
        assert_eq!(diff, ["new.txt (added)", "wip.txt (modified)"]);
    }
}
