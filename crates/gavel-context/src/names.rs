//! Refusing files by name: the conventional secret file names and the `[context] deny` list.
//!
//! Both are `.gitignore`-style pattern sets (the `ignore` crate's matcher). The built-in names
//! ([`SECRET_NAMES`], and [`BROAD_SECRET_NAMES`] unless the file is source code) are matched
//! case-insensitively against the file name alone, both as the person spelled it and as the
//! symlink resolves, so `notes.txt -> .env` is caught too. The deny list is matched against the
//! repository-relative path, like a `.gitignore` at the root.

use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::Refusal;
use super::paths::Found;
use super::rules::{BROAD_SECRET_NAMES, SECRET_NAMES, SOURCE_EXTENSIONS};

/// The two pattern sets, built once per validation.
pub(super) struct NameRules {
    secret_names: Gitignore,
    broad_names: Gitignore,
    deny: Gitignore,
}

impl NameRules {
    /// Builds the matchers; a deny pattern that does not parse is a refusal (the person sees
    /// it next to everything else instead of the list silently shrinking).
    pub(super) fn new(root: &Path, deny: &[String], refusals: &mut Vec<Refusal>) -> Self {
        let builtin = |patterns: &[&str]| {
            let mut builder = GitignoreBuilder::new("");
            builder.case_insensitive(true).ok();
            for pattern in patterns {
                if let Err(e) = builder.add_line(None, pattern) {
                    // The tables are constants covered by tests; go on without the pattern.
                    tracing::error!("built-in secret-name pattern {pattern:?} is invalid: {e}");
                }
            }
            builder
        };
        let mut user = GitignoreBuilder::new(root);
        for pattern in deny {
            if let Err(e) = user.add_line(None, pattern) {
                refusals.push(Refusal::new(
                    pattern,
                    "invalid-deny-pattern",
                    format!("the [context] deny pattern `{pattern}` is not valid: {e}"),
                ));
            }
        }
        let build = |builder: GitignoreBuilder, what: &str| {
            builder.build().unwrap_or_else(|e| {
                tracing::error!("{what} patterns could not be built: {e}");
                Gitignore::empty()
            })
        };
        Self {
            secret_names: build(builtin(SECRET_NAMES), "secret-name"),
            broad_names: build(builtin(BROAD_SECRET_NAMES), "secret-name"),
            deny: build(user, "deny"),
        }
    }

    /// The refusal for `file` when its name marks it as a secret or the deny list names it.
    pub(super) fn check(&self, file: &Found) -> Option<Refusal> {
        let shown = &file.shown;
        let names = [
            Path::new(shown).file_name(),
            Path::new(&file.rel).file_name(),
        ];
        for name in names.into_iter().flatten() {
            let name = Path::new(name);
            let mut matched = self.secret_names.matched(name, false);
            if !matched.is_ignore() && !is_source(name) {
                matched = self.broad_names.matched(name, false);
            }
            if let Match::Ignore(glob) = matched {
                return Some(Refusal::new(
                    shown,
                    "secret-name",
                    format!(
                        "`{shown}` has a name secrets are kept under (it matches `{}`); \
                         secret files are never sent to a model",
                        glob.original()
                    ),
                ));
            }
        }
        let rel = PathBuf::from(&file.rel);
        if let Match::Ignore(glob) = self.deny.matched_path_or_any_parents(&rel, false) {
            return Some(Refusal::new(
                shown,
                "denied",
                format!(
                    "`{shown}` matches the [context] deny pattern `{}`",
                    glob.original()
                ),
            ));
        }
        None
    }
}

/// Whether `name`'s extension marks it as source code or prose ([`SOURCE_EXTENSIONS`]).
fn is_source(name: &Path) -> bool {
    name.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}
