//! A git command started before its input exists, so that git's own start-up (loading,
//! reading its configuration, finding the repository and `HEAD`) overlaps work gavel still
//! has to do before the command can go on.
//!
//! `git commit --pathspec-from-file=-` reads its paths from stdin before it reads or locks the
//! index, so gavel starts it as soon as it knows the commit's arguments and stages the new
//! files while git starts. Until git has its input it has read configuration and refs and
//! written nothing: a [`Started`] dropped before [`Started::finish`] (an error while staging)
//! is killed and reaped. If gavel itself dies, git reads an empty path list, and
//! `--include` or `--only` without a path makes it stop ("No paths with --include/--only does
//! not make sense") before it touches the index; callers must pass one of them.

use std::io::Write;
use std::process::{Child, Stdio};

use super::{Git, GitError, check};

/// A git process waiting for its input on stdin.
pub(crate) struct Started {
    /// `None` once finished.
    child: Option<Child>,
    /// The arguments, for errors.
    args: String,
}

impl Git {
    /// Starts `git args...` with stdin, stdout and stderr piped; it runs until it reads stdin.
    pub(crate) fn start(&self, args: &[&str]) -> Result<Started, GitError> {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().map_err(GitError::Spawn)?;
        Ok(Started {
            child: Some(child),
            args: args.join(" "),
        })
    }
}

impl Started {
    /// Gives git `input` (then end of file), runs `meanwhile` while git works (told, when it
    /// asks, whether git is still running), and waits for git like [`Git::run`]: its stdout,
    /// or its failure. A git that refused its arguments before reading anything fails with
    /// `code: Some(129)`.
    pub(crate) fn finish(
        mut self,
        input: &[u8],
        meanwhile: impl FnOnce(&mut dyn FnMut() -> bool),
    ) -> Result<String, GitError> {
        let Some(mut child) = self.child.take() else {
            return Err(GitError::Failed {
                args: self.args.clone(),
                stderr: "finished twice".into(),
                code: None,
            });
        };
        if let Some(mut stdin) = child.stdin.take() {
            // A git that already stopped cannot take it (a broken pipe): its status says why.
            let _ = stdin.write_all(input);
        }
        meanwhile(&mut || matches!(child.try_wait(), Ok(None)));
        let out = child.wait_with_output().map_err(GitError::Spawn)?;
        check(&self.args, out.status, &out.stderr)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Not given its input: it has done nothing yet.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
impl Started {
    /// The process id of the git waiting, for tests that check it is gone.
    fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::super::PriorAttempt;
    use super::super::tests::repo_with;
    use super::*;

    /// A repository with one commit, for commits made after it.
    fn repo() -> (tempfile::TempDir, Git) {
        repo_with(&[("base.md", "base\n")])
    }

    /// `git commit` waiting for its paths on stdin, with `mode` (`--include` or `--only`).
    fn start_commit(git: &Git, message: &str, mode: &str) -> Started {
        git.start(&[
            "commit",
            "--quiet",
            "-m",
            message,
            mode,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ])
        .expect("git starts")
    }

    #[test]
    fn git_waits_for_its_input_and_then_runs() {
        let (_dir, git) = repo();
        let started = git.start(&["hash-object", "--stdin"]).expect("git starts");
        let out = started.finish(b"hello\n", |_| {}).expect("git runs");
        assert_eq!(out.trim(), "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    #[test]
    fn dropped_before_its_input_git_is_stopped_and_reaped() {
        let (dir, git) = repo();
        std::fs::write(dir.path().join("a.txt"), "a\n").expect("a file");
        let started = start_commit(&git, "never", "--only");
        let pid = started.id().expect("a running git");
        drop(started);
        // Reaped: not even a zombie is left in the process table.
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "git {pid} left behind"
        );
        let log = git.run(&["log", "--format=%s"]).expect("a log");
        assert!(!log.contains("never"), "{log}");
        assert!(!dir.path().join(".git/index.lock").exists());
    }

    #[test]
    fn a_commit_given_no_paths_commits_nothing() {
        let (dir, git) = repo();
        std::fs::write(dir.path().join("a.txt"), "a\n").expect("a file");
        git.run(&["add", "a.txt"]).expect("staged");
        for mode in ["--include", "--only"] {
            let started = start_commit(&git, "empty paths", mode);
            let err = started
                .finish(b"", |_| {})
                .expect_err("no paths, no commit");
            assert!(err.to_string().contains("No paths"), "{mode}: {err}");
        }
        let log = git.run(&["log", "--format=%s"]).expect("a log");
        assert!(!log.contains("empty paths"), "{log}");
    }

    #[test]
    fn refused_arguments_fail_with_git_usage_code() {
        let (_dir, git) = repo();
        let started = git
            .start(&["commit", "--no-such-option-here"])
            .expect("git starts");
        match started.finish(b"", |_| {}) {
            Err(GitError::Failed { code, .. }) => assert_eq!(code, Some(129)),
            other => panic!("expected a usage failure, got {other:?}"),
        }
    }

    #[test]
    fn a_commit_larger_than_the_objects_written_first_commits_every_file() {
        let (dir, git) = repo();
        // Over the budget of objects written before git has its paths.
        let big = "a line of a large generated file\n".repeat(40_000);
        assert!(big.len() > super::super::commit::AHEAD_BEFORE_PATHS);
        std::fs::write(dir.path().join("big.txt"), &big).expect("a large file");
        std::fs::write(dir.path().join("small.md"), "small\n").expect("a small file");
        let paths = [PathBuf::from("big.txt"), PathBuf::from("small.md")];
        git.commit_paths(&paths, "gavel: large", "gavel-large", PriorAttempt::None)
            .expect("committed");
        assert_eq!(git.run(&["show", "HEAD:big.txt"]).expect("big.txt"), big);
        assert_eq!(git.run(&["status", "--porcelain"]).expect("status"), "");
        git.run(&["fsck", "--strict", "--no-dangling"])
            .expect("git fsck accepts every object");
    }

    /// Runs the ignored test `child` in a child process whose `git` on `PATH` logs each
    /// command's arguments and runs the real git (refusing `--pathspec-from-file` as a git
    /// before 2.25 does, with `refuse`), on a new repository; the `git commit` commands it ran.
    fn commits_through_a_wrapped_git(child: &str, refuse: bool) -> Vec<String> {
        let (dir, _git) = repo();
        let tools = tempfile::tempdir().expect("a temp dir");
        let log = tools.path().join("git.log");
        let real = crate::process::on_path("git").expect("git on PATH");
        let bin = tools.path().join("bin");
        std::fs::create_dir_all(&bin).expect("a bin folder");
        let refusal = if refuse {
            "case \"$*\" in *--pathspec-from-file*) echo 'error: unknown option' >&2; exit 129;; esac\n"
        } else {
            ""
        };
        // Each command's arguments end in 0x1e: a commit message has newlines.
        let script = format!(
            "#!/bin/sh\nprintf '%s\\036' \"$*\" >> '{}'\n{refusal}exec '{}' \"$@\"\n",
            log.display(),
            real.display()
        );
        let wrapper = bin.join("git");
        std::fs::write(&wrapper, script).expect("the wrapper");
        let mut perms = std::fs::metadata(&wrapper).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&wrapper, perms).expect("chmod");
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        crate::testutil::rerun(
            &format!("git::started::tests::{child}"),
            &dir.path().display().to_string(),
            false,
            &[("PATH", Some(&path))],
        );
        std::fs::read_to_string(&log)
            .expect("the log")
            .split('\u{1e}')
            .filter(|l| l.contains(" commit "))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_commit_takes_its_paths_on_stdin_and_an_older_git_still_commits() {
        let commits = commits_through_a_wrapped_git("child_commits_a_new_file", false);
        assert_eq!(commits.len(), 1, "{commits:?}");
        assert!(
            commits[0].contains("--include --pathspec-from-file=- --pathspec-file-nul"),
            "{commits:?}"
        );
        let commits = commits_through_a_wrapped_git("child_commits_a_new_file", true);
        assert_eq!(commits.len(), 2, "tried again the older way: {commits:?}");
        assert!(commits[0].contains("--pathspec-from-file"), "{commits:?}");
        assert!(commits[1].ends_with("--include -- new.md"), "{commits:?}");
    }

    /// In the child process of a wrapped-git test: writes `paths` as new files in the
    /// repository it was given, commits them with `message`, checks nothing is left over, and
    /// answers the commit's subject and files (`None` in an ordinary test run).
    fn commit_in_child(paths: &[PathBuf], message: &str) -> Option<(String, Vec<String>)> {
        let root = crate::testutil::child_arg()?;
        let git = Git::at(Path::new(&root));
        for path in paths {
            std::fs::write(git.root().join(path), "a file\n").expect("a new file");
        }
        git.commit_paths(paths, message, "gavel-started", PriorAttempt::None)
            .expect("committed");
        assert_eq!(git.run(&["status", "--porcelain"]).expect("status"), "");
        let subject = git.run(&["log", "-1", "--format=%s"]).expect("log");
        let files = git
            .run(&["show", "--name-only", "--format=", "HEAD"])
            .expect("show");
        Some((
            subject.trim().to_owned(),
            files.lines().map(str::to_owned).collect(),
        ))
    }

    #[test]
    #[ignore = "run by a_commit_takes_its_paths_on_stdin_and_an_older_git_still_commits"]
    fn child_commits_a_new_file() {
        if let Some((subject, files)) = commit_in_child(&[PathBuf::from("new.md")], "gavel: new") {
            assert_eq!(subject, "gavel: new");
            assert_eq!(files, ["new.md"]);
        }
    }

    #[test]
    fn paths_too_many_to_reach_git_whole_go_as_arguments() {
        let commits = commits_through_a_wrapped_git("child_commits_many_files", false);
        assert_eq!(commits.len(), 1, "{commits:?}");
        assert!(
            !commits[0].contains("--pathspec-from-file"),
            "{}",
            commits[0]
        );
        assert!(commits[0].contains(" -- "), "{}", commits[0]);
    }

    #[test]
    #[ignore = "run by paths_too_many_to_reach_git_whole_go_as_arguments"]
    fn child_commits_many_files() {
        // 60 paths of 80 bytes: more than a pipe takes in one piece.
        let paths: Vec<PathBuf> = (0..60)
            .map(|i| PathBuf::from(format!("{i:03}-{}.md", "x".repeat(75))))
            .collect();
        if let Some((_, files)) = commit_in_child(&paths, "gavel: many") {
            assert_eq!(files.len(), 60);
        }
    }
}
