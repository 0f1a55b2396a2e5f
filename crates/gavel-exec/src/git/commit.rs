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
        // the commit if git tracks it, and `git commit -- PATH` records its deletion. Parallel
        // runs commit into the same repository; git's index.lock would make one fail.
        let _guard = self.lock()?;
        // New files must be known to git before `git commit -- PATHS` takes them: git adds
        // them (and records changes and deletions under the named folders), with every
        // filter, attribute and ignore rule as for the person. Which gone paths git tracks is
        // asked at the same time: the two git processes touch different paths, and git
        // replaces the index in one rename, so `ls-files` reads it whole either way.
        let existing = specs.len();
        let gone = std::thread::scope(|scope| {
            let gone = (!missing.is_empty()).then(|| scope.spawn(|| self.tracked(&missing)));
            if existing > 0 {
                let mut add = vec!["add", "--all", "--"];
                add.extend(specs.iter().map(String::as_str));
                self.run(&add)?;
            }
            match gone {
                Some(thread) => thread.join().unwrap_or_else(|_| {
                    Err(GitError::Failed {
                        args: "ls-files".into(),
                        stderr: "the thread asking git panicked".into(),
                        code: None,
                    })
                }),
                None => Ok(Vec::new()),
            }
        })?;
        specs.extend(gone);
        if specs.is_empty() {
            return Err(GitError::Failed {
                args: "commit".into(),
                stderr: "nothing to commit".into(),
                code: None,
            });
        }
        // Paths after `--` make it `git commit --only`: exactly these paths are committed,
        // from a temporary index, and whatever else the person staged stays staged.
        let full = format!("{message}\n\nGavel-Step: {key}\n");
        let mut commit = vec!["commit", "--quiet", "-m", &full, "--"];
        commit.extend(specs.iter().map(String::as_str));
        self.run(&commit)?;
        Ok(self.run(&["rev-parse", "HEAD"])?.trim().to_owned())
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
