//! The `origin` remote's URL: what names a repository for the GitHub tracker and for a shared
//! store's project, as git resolves it (`insteadOf` rewrites, includes, every config file git
//! reads): `git remote get-url origin`. gavel reads no git config file itself.

use super::{Git, GitError};

impl Git {
    /// The URL of the `origin` remote, as `git remote get-url origin` says it.
    pub fn origin_url(&self) -> Result<String, GitError> {
        Ok(self
            .run(&["remote", "get-url", "origin"])?
            .trim()
            .to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_url_is_what_git_resolves() {
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
