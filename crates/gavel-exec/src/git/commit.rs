//! Idempotent commits: exactly the paths a workflow names, one `Gavel-Step:` trailer, never
//! made twice.
//!
//! A crash between `git commit` and the journal entry that records it replays the commit step;
//! the trailer lets the replay find the commit instead of making a second one.

use std::path::PathBuf;

use super::{Git, GitError};

/// Whether an earlier attempt at a commit may have made it already.
#[derive(Debug, Clone, Copy)]
pub enum PriorAttempt<'a> {
    /// This is the first attempt: nothing to look for.
    None,
    /// A replay: look for the commit among those made after `since` (all history if `None`).
    Possible { since: Option<&'a str> },
}

/// What POSIX guarantees a pipe takes in one piece (`PIPE_BUF`).
const PIPE_BUF: usize = 4096;

/// The most bytes of new objects written before `git commit` gets its paths (some
/// milliseconds of hashing and compressing); a larger commit writes them while git runs.
pub(super) const AHEAD_BEFORE_PATHS: usize = 1 << 20;

impl Git {
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
        specs.extend(self.tracked(&missing, matches!(prior, PriorAttempt::None))?);
        if specs.is_empty() {
            return Err(GitError::Failed {
                args: "commit".into(),
                stderr: "nothing to commit".into(),
                code: None,
            });
        }
        // Parallel runs commit into the same repository; git's index.lock would make one fail.
        let _guard = self.lock()?;
        // A first attempt makes its new files known to git in-process (intent-to-add entries,
        // which the commit fills from the work tree); anything that module does not write
        // itself, and every replay, runs `git add`.
        // The config git will read, read once for staging and the maintenance check (`None`:
        // only git knows it, and both are left to git).
        let git_dir = self.git_dir();
        let config = git_dir
            .is_dir()
            .then(|| super::config::Config::read(Some(&git_dir)))
            .flatten();
        // Whether git stores the files' raw bytes here, asked once: staging then re-checks the
        // entries git left suspect, and the objects are written ahead.
        let plain_objects = config.as_ref().is_some_and(|config| {
            let attributes = super::config::user_git_file("attributes");
            super::trees::writes_plain_objects(&self.root, &git_dir, config, attributes.as_deref())
        });
        let full = format!("{message}\n\nGavel-Step: {key}\n");
        let mut commit = Vec::new();
        // git's automatic maintenance after the commit is a second process; skipped when git's
        // own check, made here, says it would do nothing (see `maintenance`).
        if config
            .as_ref()
            .is_some_and(|config| !super::maintenance::may_be_due(&git_dir, config))
        {
            commit.extend(["-c", "maintenance.auto=false"]);
        }
        commit.extend(["commit", "--quiet", "-m", &full]);
        // When gavel stages the new files itself, `git commit` starts as soon as the index is
        // read and takes the paths on stdin, which it reads before the index: its start-up
        // overlaps the staging (see `started`). `--include` or `--only`, always one of them, as
        // below; without paths (gavel gone) either makes git stop. The paths must reach git
        // whole, or git (which cannot tell a cut list from a full one) would commit part of
        // them if gavel were killed halfway through writing them: a write of at most
        // `PIPE_BUF` bytes to a pipe is all or nothing.
        let paths_fit = specs.iter().map(|s| s.len() + 1).sum::<usize>() <= PIPE_BUF;
        let mut started = None;
        let staged = match &config {
            Some(config) if existing > 0 && matches!(prior, PriorAttempt::None) => {
                let mut start = |index_was_head: bool| {
                    if paths_fit {
                        let mut args = commit.clone();
                        args.push(if index_was_head {
                            "--include"
                        } else {
                            "--only"
                        });
                        args.extend(["--pathspec-from-file=-", "--pathspec-file-nul"]);
                        // Not started: git is run after staging, as below.
                        started = self.start(&args).ok();
                    }
                };
                super::stage::intend_to_add(
                    &self.root,
                    &specs[..existing],
                    config,
                    plain_objects,
                    &mut start,
                )
            }
            _ => None,
        };
        // The objects git is about to write for the commit's new files and folders, written
        // ahead by this thread (see `trees`) while git works; it stops as soon as git is done.
        let index = staged.as_ref().map(|s| s.index.as_slice());
        let ahead = |running: &mut dyn FnMut() -> bool| {
            if index.is_some() && plain_objects {
                super::trees::write_ahead(&self.root, &git_dir, index, &specs, running);
            }
        };
        // Staged in-process, git was told what staging then found (`--include` when the
        // index was `HEAD`'s tree), so the git started then commits as it is.
        let done = match (index, started) {
            (Some(index), Some(git)) => {
                self.finish_started(git, &git_dir, index, &specs, plain_objects, ahead)?
            }
            (None, started) => {
                drop(started);
                if existing > 0 {
                    let mut add = vec!["add", "-A", "--"];
                    add.extend(specs[..existing].iter().map(String::as_str));
                    self.run(&add)?;
                }
                false
            }
            (Some(_), None) => false,
        };
        if !done {
            // `--only` (git's default with paths) commits the paths from a temporary index,
            // leaving what else the person staged alone. When nothing else is staged (the
            // index was HEAD's tree), `--include` commits the same tree from the index itself,
            // with less work.
            if staged.as_ref().is_some_and(|s| s.index_was_head) {
                commit.push("--include");
            }
            commit.push("--");
            commit.extend(specs.iter().map(String::as_str));
            self.run_meanwhile(&commit, ahead)?;
        }
        if let Some(sha) = self.new_commit(key) {
            return Ok(sha);
        }
        Ok(self.run(&["rev-parse", "HEAD"])?.trim().to_owned())
    }

    /// Gives the `git commit` started during staging its paths (`specs`) and waits for it;
    /// `false` when that git refused `--pathspec-from-file` (older than 2.25, which refuses
    /// before doing anything), for the caller to commit with the paths as arguments.
    ///
    /// Up to [`AHEAD_BEFORE_PATHS`], the objects are written before git has its paths: git,
    /// which reads them before anything else, then finds every object there instead of
    /// writing the first blobs itself at the same moment (a second file for the same object,
    /// one of the two deleted again: on a disk, inodes allocated and freed for nothing). A
    /// larger commit gets its paths first and `ahead` writes them while git runs, so git never
    /// waits long for objects it would hash and write itself.
    fn finish_started(
        &self,
        git: super::started::Started,
        git_dir: &std::path::Path,
        index: &[u8],
        specs: &[String],
        plain_objects: bool,
        ahead: impl FnOnce(&mut dyn FnMut() -> bool),
    ) -> Result<bool, GitError> {
        let paths: Vec<u8> = specs
            .iter()
            .flat_map(|spec| spec.bytes().chain([0]))
            .collect();
        let before = plain_objects
            && super::trees::write_ahead_before(
                &self.root,
                git_dir,
                Some(index),
                specs,
                AHEAD_BEFORE_PATHS,
            );
        match git.finish(&paths, |running| {
            if !before {
                ahead(running);
            }
        }) {
            Ok(_) => Ok(true),
            Err(GitError::Failed {
                code: Some(129), ..
            }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The full id of the commit `git commit` just made: the one `HEAD` names, read from the
    /// branch's ref file, if it is a loose commit carrying this step's trailer. `None` (ask git
    /// instead) unless everything is plainly as expected. (git runs with the scrubbed
    /// environment, so a `GIT_DIR` of gavel's own cannot have sent the commit elsewhere.)
    pub(super) fn new_commit(&self, key: &str) -> Option<String> {
        let git_dir = self.git_dir();
        if !git_dir.is_dir() {
            return None;
        }
        let id = super::objects::head_id(&git_dir)?;
        super::objects::commit_has_line(&git_dir, &id, &format!("Gavel-Step: {key}"))?.then_some(id)
    }

    /// An exclusive lock on `gavel.lock` in the common git folder, held while gavel stages and
    /// commits.
    fn lock(&self) -> Result<std::fs::File, GitError> {
        let path = self.common_dir()?.join("gavel.lock");
        let io = |source| GitError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        file.lock().map_err(io)?;
        Ok(file)
    }

    /// Which of `paths` (files or folders) git tracks in the index or in HEAD, in one
    /// `git ls-files`. HEAD counts because an earlier attempt whose `git commit` failed (a
    /// hook, a signal) has already staged the deletion: the index alone no longer knows the
    /// path, and the commit would leave the deletion behind, staged. A `first` attempt cannot
    /// have staged anything, so the index decides, read without a git process when it is a
    /// plain one ([`super::index`]).
    fn tracked(&self, paths: &[String], first: bool) -> Result<Vec<String>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let git_dir = self.git_dir();
        if first
            && git_dir.is_dir()
            && let Some(found) = super::index::tracked(&git_dir, paths)
        {
            return Ok(paths
                .iter()
                .zip(found)
                .filter(|(_, tracked)| *tracked)
                .map(|(p, _)| p.clone())
                .collect());
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
