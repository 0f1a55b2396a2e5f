//! The `origin` remote's URL: what names a repository for the GitHub tracker and for a shared
//! store's project. Read from a plain `.git/config` without a git process (a run is a few git
//! processes in all); git answers whenever that file, or the user's or system's git config,
//! uses what only git resolves (`insteadOf` rewrites, includes), or there is no such file.

use std::path::Path;

use super::{Git, GitError};

impl Git {
    /// The URL of the `origin` remote, as `git remote get-url origin` says it.
    pub fn origin_url(&self) -> Result<String, GitError> {
        if !rewrites_elsewhere()
            && let Some(url) = origin_from_config(&self.root.join(".git/config"))
        {
            return Ok(url);
        }
        Ok(self
            .run(&["remote", "get-url", "origin"])?
            .trim()
            .to_owned())
    }
}

/// Whether a user or system git config may rewrite URLs (`insteadOf`, or includes that could):
/// then only git knows what `origin` resolves to.
fn rewrites_elsewhere() -> bool {
    config_files(None).into_iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            let t = t.to_ascii_lowercase();
            t.contains("insteadof") || t.contains("[include")
        })
    })
}

/// The config files git reads (system, global, and with `git_dir` the repository's), as the
/// environment selects them: `GIT_CONFIG_GLOBAL` replaces the user's files,
/// `GIT_CONFIG_SYSTEM` the system's, `GIT_CONFIG_NOSYSTEM` drops it. Some may not exist.
pub(crate) fn config_files(git_dir: Option<&Path>) -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
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

/// `origin`'s URL in the config file at `path`; `None` (ask git) when the file is missing, has
/// no such remote, or uses rewrites or includes.
fn origin_from_config(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let lower = text.to_ascii_lowercase();
    if lower.contains("insteadof") || lower.contains("[include") {
        return None;
    }
    let mut in_origin = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_origin = line.replace(' ', "") == "[remote\"origin\"]";
            continue;
        }
        if in_origin
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            let value = value.trim().trim_matches('"');
            return (!value.is_empty()).then(|| value.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_url_is_read_from_a_plain_config_and_git_decides_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config");
        let write = |text: &str| std::fs::write(&path, text).expect("write");
        write(
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:octo/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        );
        assert_eq!(
            origin_from_config(&path).as_deref(),
            Some("git@github.com:octo/app.git")
        );
        write("[remote \"upstream\"]\n\turl = https://x/y\n");
        assert_eq!(origin_from_config(&path), None);
        write(
            "[url \"git@github.com:\"]\n\tinsteadOf = gh:\n[remote \"origin\"]\n\turl = gh:octo/app\n",
        );
        assert_eq!(origin_from_config(&path), None, "git rewrites it");
        assert_eq!(origin_from_config(&dir.path().join("missing")), None);
    }

    #[test]
    fn git_answers_what_the_config_reader_leaves_and_both_agree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = Git::at(dir.path());
        git.run(&["init", "-q"]).expect("init");
        assert!(git.origin_url().is_err(), "no origin");
        git.run(&["remote", "add", "origin", "https://example.invalid/o/r.git"])
            .expect("remote");
        assert_eq!(
            git.origin_url().expect("url"),
            "https://example.invalid/o/r.git"
        );
        git.run(&["config", "url.https://example.invalid/.insteadOf", "ex:"])
            .expect("config");
        git.run(&["remote", "set-url", "origin", "ex:o/r"])
            .expect("set-url");
        assert_eq!(
            git.origin_url().expect("url"),
            "https://example.invalid/o/r",
            "git's rewrite applies"
        );
    }
}
