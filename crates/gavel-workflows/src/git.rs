//! The few git commands gavel runs, through the real `git` binary.
//!
//! gavel uses the `git` program rather than a library so hooks, signing and configuration
//! behave exactly as they do for the person. Commits made by workflows are idempotent: each
//! carries a `Gavel-Step:` trailer, and a commit whose trailer is already in the history is not
//! made again (a replay after a crash between committing and journaling).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("`git {args}` failed: {stderr}")]
    Failed { args: String, stderr: String },
    #[error("{0} is not inside a git repository")]
    NotARepo(PathBuf),
    /// git was ended by a signal (Ctrl-C at a terminal reaches git as well as gavel).
    #[error("`git {args}` was stopped by signal {signal}")]
    Killed { args: String, signal: i32 },
}

impl GitError {
    /// Whether git was stopped by a signal rather than failing on its own.
    pub fn is_killed(&self) -> bool {
        matches!(self, Self::Killed { .. })
    }
}

/// Whether an earlier attempt at a commit may have made it already.
#[derive(Debug, Clone, Copy)]
pub enum PriorAttempt<'a> {
    /// This is the first attempt: nothing to look for.
    None,
    /// A replay: look for the commit among those made after `since` (all history if `None`).
    Possible { since: Option<&'a str> },
}

/// A repository, addressed by its top-level folder.
#[derive(Debug, Clone)]
pub struct Git {
    root: PathBuf,
}

impl Git {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Self, GitError> {
        let out = command(dir)
            .args(["rev-parse", "--show-toplevel"])
            .output()
            .map_err(GitError::Spawn)?;
        if !out.status.success() {
            return Err(GitError::NotARepo(dir.to_path_buf()));
        }
        let top = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok(Self {
            root: PathBuf::from(top),
        })
    }

    /// A repository at a known top-level folder.
    pub fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    /// The top-level folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs `git args...` in the repository and returns stdout.
    pub fn run(&self, args: &[&str]) -> Result<String, GitError> {
        let out = command(&self.root)
            .args(args)
            .output()
            .map_err(GitError::Spawn)?;
        check(args, &out)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The current commit, or `None` in a repository without commits.
    pub fn head(&self) -> Result<Option<String>, GitError> {
        match self.run(&["rev-parse", "--verify", "--quiet", "HEAD"]) {
            Ok(sha) => Ok(Some(sha.trim().to_owned())),
            Err(GitError::Failed { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The commit whose message carries the line `Gavel-Step: {key}`, searching only commits
    /// made after `since` (all history when `since` is `None`).
    pub fn find_step_commit(
        &self,
        key: &str,
        since: Option<&str>,
    ) -> Result<Option<String>, GitError> {
        match (self.head()?, since) {
            (None, _) => return Ok(None),
            // Nothing was committed since: no need to search the history.
            (Some(head), Some(base)) if head == base => return Ok(None),
            _ => {}
        }
        let line = format!("Gavel-Step: {key}");
        let grep = format!("--grep={line}");
        let range = since.map(|base| format!("{base}..HEAD"));
        let mut args = vec!["log", "-F", &grep, "--format=%H%n%B%x1e"];
        if let Some(range) = &range {
            args.push(range);
        }
        let out = self.run(&args)?;
        for record in out.split('\u{1e}') {
            let mut lines = record.trim_start_matches('\n').lines();
            let Some(sha) = lines.next() else { continue };
            if lines.any(|l| l.trim_end() == line) {
                return Ok(Some(sha.to_owned()));
            }
        }
        Ok(None)
    }

    /// Commits exactly `paths` (new, changed or deleted) in one commit with `message` and a
    /// `Gavel-Step: {key}` trailer, leaving anything else the person staged alone. Returns the
    /// commit id. `prior` says whether an earlier attempt may have committed already: then a
    /// commit with this key made after `since` (the HEAD recorded before the first attempt) is
    /// returned without committing again.
    pub fn commit_paths(
        &self,
        paths: &[PathBuf],
        message: &str,
        key: &str,
        prior: PriorAttempt<'_>,
    ) -> Result<String, GitError> {
        if let PriorAttempt::Possible { since } = prior
            && let Some(existing) = self.find_step_commit(key, since)?
        {
            return Ok(existing);
        }
        let mut specs: Vec<String> = Vec::new();
        let mut missing: Vec<String> = Vec::new();
        for p in paths {
            let s = p.to_string_lossy().into_owned();
            if self.root.join(p).exists() {
                specs.push(s);
            } else {
                missing.push(s);
            }
        }
        // Only what exists is added (new files must be); a path that is gone still belongs in
        // the commit if git tracks it, and `git commit -- PATH` records its deletion.
        let existing = specs.len();
        specs.extend(self.tracked(&missing)?);
        if specs.is_empty() {
            return Err(GitError::Failed {
                args: "commit".into(),
                stderr: "nothing to commit".into(),
            });
        }
        // Parallel runs commit into the same repository; git's index.lock would make one fail.
        let _guard = self.lock()?;
        if existing > 0 {
            let mut add = vec!["add", "-A", "--"];
            add.extend(specs[..existing].iter().map(String::as_str));
            self.run(&add)?;
        }
        let full = format!("{message}\n\nGavel-Step: {key}\n");
        let mut commit = vec!["commit", "-m", &full, "--"];
        commit.extend(specs.iter().map(String::as_str));
        let summary = self.run(&commit)?;
        if let Some(sha) = self.new_head(&summary) {
            return Ok(sha);
        }
        Ok(self.run(&["rev-parse", "HEAD"])?.trim().to_owned())
    }

    /// The full id of the commit `git commit` just made, read from the branch's ref file and
    /// checked against the abbreviated id in its summary line (`[main 1a2b3c4] ...`), without
    /// another git process. `None` (ask git instead) unless everything is plainly as expected:
    /// a `.git` folder, `HEAD` naming a loose ref or holding an id, and the ids agreeing.
    fn new_head(&self, summary: &str) -> Option<String> {
        let first = summary.lines().next()?;
        let inside = first.strip_prefix('[')?.split(']').next()?;
        let abbrev = inside.rsplit(' ').next()?;
        if abbrev.len() < 4 || !abbrev.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let git_dir = self.root.join(".git");
        if !git_dir.is_dir() || std::env::var_os("GIT_DIR").is_some() {
            return None;
        }
        let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
        let head = head.trim();
        let id = match head.strip_prefix("ref: ") {
            Some(name) if name.starts_with("refs/") && !name.contains("..") => {
                std::fs::read_to_string(git_dir.join(name)).ok()?
            }
            Some(_) => return None,
            None => head.to_owned(),
        };
        let id = id.trim();
        let full = matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit());
        (full && id.starts_with(abbrev)).then(|| id.to_owned())
    }

    /// An exclusive lock on `.git/gavel.lock`, held while gavel stages and commits.
    fn lock(&self) -> Result<std::fs::File, GitError> {
        let path = self.common_dir()?.join("gavel.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(GitError::Spawn)?;
        file.lock().map_err(GitError::Spawn)?;
        Ok(file)
    }

    /// The repository's common git folder. A plain repository's `.git` folder is it; a linked
    /// worktree (`.git` is a file) or a `GIT_DIR` set in the environment asks git.
    fn common_dir(&self) -> Result<PathBuf, GitError> {
        let plain = self.root.join(".git");
        let overridden = ["GIT_DIR", "GIT_COMMON_DIR"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        if !overridden && plain.is_dir() {
            return Ok(plain);
        }
        let dir = self.run(&["rev-parse", "--git-common-dir"])?;
        Ok(self.root.join(dir.trim()))
    }

    /// Which of `paths` (files or folders) git tracks in the index or in HEAD, in one
    /// `git ls-files`. HEAD counts because an earlier attempt whose `git commit` failed (a
    /// hook, a signal) has already staged the deletion: the index alone no longer knows the
    /// path, and the commit would leave the deletion behind, staged.
    fn tracked(&self, paths: &[String]) -> Result<Vec<String>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["ls-files", "-z", "--with-tree=HEAD", "--"];
        args.extend(paths.iter().map(String::as_str));
        let out = match self.run(&args) {
            Ok(out) => out,
            // No HEAD yet (a repository without commits): the index is all there is.
            Err(GitError::Failed { .. }) => {
                args.remove(2);
                self.run(&args)?
            }
            Err(e) => return Err(e),
        };
        let files: Vec<&str> = out.split('\0').filter(|f| !f.is_empty()).collect();
        Ok(paths
            .iter()
            .filter(|p| {
                let p = p.trim_end_matches('/');
                files
                    .iter()
                    .any(|f| *f == p || f.strip_prefix(p).is_some_and(|r| r.starts_with('/')))
            })
            .cloned()
            .collect())
    }
}

fn command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
    c
}

fn check(args: &[&str], out: &Output) -> Result<(), GitError> {
    if out.status.success() {
        return Ok(());
    }
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
        return Err(GitError::Killed {
            args: args.join(" "),
            signal,
        });
    }
    Err(GitError::Failed {
        args: args.join(" "),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn repo() -> (tempfile::TempDir, Git) {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = Git::at(dir.path());
        git.run(&["init", "-q"]).expect("init");
        git.run(&["config", "user.name", "t"]).expect("config");
        git.run(&["config", "user.email", "t@example.invalid"])
            .expect("config");
        git.run(&["config", "commit.gpgsign", "false"])
            .expect("config");
        (dir, git)
    }

    #[test]
    fn a_moved_tracked_folder_is_committed_as_a_rename() {
        let (dir, git) = repo();
        fs::create_dir_all(dir.path().join("active/x")).expect("mkdir");
        fs::write(dir.path().join("active/x/001.md"), "one").expect("write");
        fs::write(dir.path().join("active/xy.md"), "a sibling").expect("write");
        git.run(&["add", "-A"]).expect("add");
        git.run(&["commit", "-q", "-m", "base"]).expect("commit");
        fs::create_dir_all(dir.path().join("done")).expect("mkdir");
        fs::rename(dir.path().join("active/x"), dir.path().join("done/1-x")).expect("move");
        fs::remove_file(dir.path().join("active/xy.md")).expect("rm");
        let paths = [PathBuf::from("active/x/"), PathBuf::from("done/1-x")];
        git.commit_paths(&paths, "gavel: move", "gavel-k2", PriorAttempt::None)
            .expect("commit");
        let files = git
            .run(&["show", "--name-status", "--no-renames", "--format=", "HEAD"])
            .expect("show");
        assert_eq!(files, "D\tactive/x/001.md\nA\tdone/1-x/001.md\n");
        let status = git.run(&["status", "--porcelain"]).expect("status");
        assert_eq!(
            status, " D active/xy.md\n",
            "a path that only shares a prefix is left alone"
        );
    }

    #[test]
    fn a_commit_retried_after_a_failed_hook_takes_the_staged_deletion_too() {
        let (dir, git) = repo();
        fs::create_dir_all(dir.path().join("ideas/active")).expect("mkdir");
        fs::write(dir.path().join("ideas/active/x.md"), "idea").expect("write");
        git.run(&["add", "-A"]).expect("add");
        git.run(&["commit", "-q", "-m", "base"]).expect("commit");
        // A pre-commit hook that fails once, after gavel's `git add` has staged the move.
        let hook = dir.path().join(".git/hooks/pre-commit");
        fs::write(
            &hook,
            "#!/bin/sh
if [ -e .git/failed-once ]; then exit 0; fi
touch .git/failed-once
exit 1
",
        )
        .expect("hook");
        let mut perms = fs::metadata(&hook).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        fs::set_permissions(&hook, perms).expect("chmod");
        fs::create_dir_all(dir.path().join("ideas/done")).expect("mkdir");
        fs::rename(
            dir.path().join("ideas/active/x.md"),
            dir.path().join("ideas/done/1-x.md"),
        )
        .expect("move");
        let paths = [
            PathBuf::from("ideas/active/x.md"),
            PathBuf::from("ideas/done/1-x.md"),
        ];
        let first = git.commit_paths(&paths, "gavel: file", "gavel-k3", PriorAttempt::None);
        assert!(first.is_err(), "the hook fails the first attempt");
        let since = git.head().expect("head");
        git.commit_paths(
            &paths,
            "gavel: file",
            "gavel-k3",
            PriorAttempt::Possible {
                since: since.as_deref(),
            },
        )
        .expect("the retry commits");
        let files = git
            .run(&["show", "--name-status", "--no-renames", "--format=", "HEAD"])
            .expect("show");
        assert_eq!(files, "D\tideas/active/x.md\nA\tideas/done/1-x.md\n");
        let status = git.run(&["status", "--porcelain"]).expect("status");
        assert_eq!(
            status, "",
            "nothing is left staged for the person's next commit"
        );
    }

    #[test]
    fn commits_only_its_paths_and_never_twice() {
        let (dir, git) = repo();
        fs::write(dir.path().join("old.md"), "idea").expect("write");
        fs::write(dir.path().join("mine.txt"), "the person's").expect("write");
        git.run(&["add", "old.md", "mine.txt"]).expect("add");
        git.run(&["commit", "-q", "-m", "base", "--", "old.md"])
            .expect("commit");
        let base = git.head().expect("head");
        fs::rename(dir.path().join("old.md"), dir.path().join("new.md")).expect("move");
        let paths = [
            PathBuf::from("old.md"),
            PathBuf::from("new.md"),
            PathBuf::from("never-existed"),
        ];
        let first = git
            .commit_paths(&paths, "gavel: file", "gavel-k1", PriorAttempt::None)
            .expect("commit");
        let since = base.as_deref();
        let again = git
            .commit_paths(
                &paths,
                "gavel: file",
                "gavel-k1",
                PriorAttempt::Possible { since },
            )
            .expect("replay");
        assert_eq!(first, again, "a replay finds the commit by its trailer");
        assert_eq!(
            first,
            git.run(&["rev-parse", "HEAD"]).expect("rev-parse").trim(),
            "the id read from the ref file is the commit's"
        );
        let short = &first[..7];
        assert_eq!(
            git.new_head(&format!("[main (root-commit) {short}] gavel: file")),
            Some(first.clone())
        );
        assert_eq!(git.new_head("[main 0000000] another commit"), None);
        assert_eq!(git.new_head("nothing like a summary"), None);
        let files = git
            .run(&["show", "--name-status", "--no-renames", "--format=", "HEAD"])
            .expect("show");
        assert_eq!(files, "A\tnew.md\nD\told.md\n");
        let staged = git.run(&["diff", "--cached", "--name-only"]).expect("diff");
        assert_eq!(
            staged, "mine.txt\n",
            "what the person staged stays staged, uncommitted"
        );
        assert!(
            git.find_step_commit("gavel-k", None)
                .expect("search")
                .is_none(),
            "keys match whole lines"
        );
    }
}
