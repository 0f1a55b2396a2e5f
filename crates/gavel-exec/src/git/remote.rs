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

/// Whether a user or system git config may rewrite URLs (`insteadOf`, or includes that could),
/// or cannot be read here: then only git knows what `origin` resolves to.
fn rewrites_elsewhere() -> bool {
    super::config::Config::read(None)
        .is_none_or(|c| c.mentions("insteadof") || c.mentions("[include"))
}

/// `origin`'s URL in the config file at `path`; `None` (ask git) when the file is missing, has
/// no such remote, or uses rewrites or includes.
fn origin_from_config(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let lower = text.to_ascii_lowercase();
    if lower.contains("insteadof") || lower.contains("[include") {
        return None;
    }
    super::config::entries(&text)
        .filter(|e| e.section == "remote\"origin\"" && e.key.eq_ignore_ascii_case("url"))
        .map(|e| e.value.to_owned())
        .find(|url| !url.is_empty())
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
