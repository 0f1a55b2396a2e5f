//! The git configuration gavel reads itself, so a run needs no `git config` process: which
//! files git reads, read once per commit ([`Config`]), and a reader of their plain
//! `[section] key = value` lines ([`entries`]). Callers look only for what they understand and
//! let git decide everything else (includes, `-c` options, forms this reader does not parse).

use std::path::{Path, PathBuf};

/// The texts (lower-cased) of every config file git reads here that exists.
pub(crate) struct Config {
    texts: Vec<String>,
}

impl Config {
    /// The config git reads for the repository whose git folder is `git_dir` (or only the
    /// user's and system's); `None` when only git can know it: `-c` options given to this
    /// process (`GIT_CONFIG_PARAMETERS`), or a file that exists but cannot be read.
    pub(crate) fn read(git_dir: Option<&Path>) -> Option<Self> {
        if ["GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
        {
            return None;
        }
        Self::from_files(&files(git_dir))
    }

    /// The config in `files` (a missing one is skipped).
    pub(crate) fn from_files(files: &[PathBuf]) -> Option<Self> {
        let mut texts = Vec::new();
        for file in files {
            match std::fs::read_to_string(file) {
                Ok(text) => texts.push(text.to_ascii_lowercase()),
                Err(_) if !file.exists() => {}
                Err(_) => return None,
            }
        }
        Some(Self { texts })
    }

    /// Each file's text, lower-cased, in the order git reads them (later ones win).
    pub(crate) fn texts(&self) -> &[String] {
        &self.texts
    }

    /// Whether any file contains `needle` (lower case) anywhere.
    pub(crate) fn mentions(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
    }
}

/// The user's git file `name` where git looks for it by default (`$XDG_CONFIG_HOME/git/NAME`,
/// else `~/.config/git/NAME`), whether or not it exists: the global excludes (`ignore`) and
/// attributes (`attributes`) files.
pub(crate) fn user_git_file(name: &str) -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let xdg = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(xdg.join("git").join(name))
}

/// The config files git reads (system, global, and with `git_dir` the repository's), as the
/// environment selects them: `GIT_CONFIG_GLOBAL` replaces the user's files,
/// `GIT_CONFIG_SYSTEM` the system's, `GIT_CONFIG_NOSYSTEM` drops it. Some may not exist.
pub(crate) fn files(git_dir: Option<&Path>) -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut files = Vec::new();
    if var("GIT_CONFIG_NOSYSTEM").is_none() {
        files.push(
            var("GIT_CONFIG_SYSTEM").map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
        );
    }
    match var("GIT_CONFIG_GLOBAL") {
        Some(global) => files.push(PathBuf::from(global)),
        None => {
            let home = var("HOME").map(PathBuf::from);
            let xdg = var("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".config")));
            files.extend(xdg.map(|x| x.join("git/config")));
            files.extend(home.map(|h| h.join(".gitconfig")));
        }
    }
    if let Some(dir) = git_dir {
        files.push(dir.join("config"));
        files.push(dir.join("config.worktree"));
    }
    files
}

/// One `key = value` line of a config text.
pub(crate) struct Entry<'a> {
    /// The section header without brackets and spaces: `core`, `remote"origin"`.
    pub(crate) section: String,
    /// The key, compared case-insensitively by callers.
    pub(crate) key: &'a str,
    /// The value without surrounding quotes or a trailing comment (`true` for a bare key).
    pub(crate) value: &'a str,
}

/// The `key = value` lines of `text`, each with the section it is in. A header line holding a
/// key as well (`[core] bare = true`) keeps that key out: callers that care look at
/// [`Entry::section`] forms they know and treat the rest as git's to read.
pub(crate) fn entries(text: &str) -> impl Iterator<Item = Entry<'_>> {
    let mut section = String::new();
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            section = header.split(']').next().unwrap_or("").replace(' ', "");
            return None;
        }
        if line.is_empty() || line.starts_with(['#', ';']) {
            return None;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, "true"));
        let value = value.trim();
        let value = match value.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or(""),
            None => value.split(['#', ';']).next().unwrap_or("").trim(),
        };
        Some(Entry {
            section: section.clone(),
            key: key.trim(),
            value,
        })
    })
}
