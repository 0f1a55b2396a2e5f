//! Test helpers: a throwaway git repository with a hermetic git configuration. The variables
//! are set on each git command the tests run, never on the test process.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// A git repository in a temporary directory (`<tmp>/repo`), with its own global config.
pub struct TestRepo {
    _dir: TempDir,
    root: PathBuf,
    config: PathBuf,
}

impl TestRepo {
    /// An empty repository (no commits) on branch `main`.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("gitconfig");
        std::fs::write(
            &config,
            "[user]\n\tname = Gate Test\n\temail = gate@gavel.invalid\n\
             [commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n",
        )
        .unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        let repo = Self {
            _dir: dir,
            root,
            config,
        };
        repo.git(&["init", "-q"]);
        repo
    }

    /// A repository whose first commit holds `files`.
    pub fn with_commit(files: &[(&str, &[u8])]) -> Self {
        let repo = Self::new();
        for (path, contents) in files {
            repo.write(path, contents);
        }
        repo.commit_all("initial");
        repo
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Runs git in the repository with the hermetic config; panics unless it succeeds.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.root, args)
    }

    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_command(dir, args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A git command with the hermetic environment, for tests that need to inspect failures.
    pub fn git_command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", &self.config)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0");
        cmd
    }

    pub fn write(&self, path: &str, contents: impl AsRef<[u8]>) {
        let full = self.root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(full, contents).unwrap();
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.root.join(path)).unwrap();
    }

    pub fn stage_all(&self) {
        self.git(&["add", "-A"]);
    }

    pub fn commit_all(&self, message: &str) {
        self.stage_all();
        self.git(&["commit", "-q", "-m", message]);
    }
}

/// `n` numbered lines, each ending in a newline: "<prefix> 0\n<prefix> 1\n...".
pub fn lines(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{prefix} {i}\n")).collect()
}
