//! Which paths git ignores, asked path by path: the `.gitignore` files from the repository's
//! top down to the path's folder, then `.git/info/exclude`, then the global excludes file, each
//! file's last matching pattern deciding and a deeper file overriding a shallower one, and a
//! path inside an ignored folder ignored whatever a deeper file says (git does not look inside
//! an ignored folder). A file of plain patterns is matched by [`super::ignore_simple`] with a
//! few comparisons; any other by the `ignore` crate's (ripgrep's) gitignore matcher, which
//! compiles its globs. Asking about one path reads only the ignore files on its way, never a
//! folder's listing, so the cost does not grow with the number of issues in `docs/issues/`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::ignore_simple::{self, Simple, Verdict};

/// The patterns of one ignore file.
enum Matcher {
    /// Plain patterns, relative to this folder.
    Simple { root: PathBuf, patterns: Simple },
    /// Anything else, compiled by the `ignore` crate.
    Full(Gitignore),
}

impl Matcher {
    fn matched(&self, path: &Path, is_dir: bool) -> Verdict {
        match self {
            Self::Simple { root, patterns } => match path.strip_prefix(root) {
                Ok(rel) => patterns.matched(rel, is_dir),
                Err(_) => Verdict::None,
            },
            Self::Full(rules) => match rules.matched(path, is_dir) {
                ignore::Match::None => Verdict::None,
                ignore::Match::Ignore(_) => Verdict::Ignore,
                ignore::Match::Whitelist(_) => Verdict::Whitelist,
            },
        }
    }
}

/// The ignore rules of one repository, read as they are needed.
pub(crate) struct Rules {
    root: PathBuf,
    /// `.git/info/exclude` then the global excludes file: the lowest precedence.
    base: Vec<Matcher>,
    /// Each folder's own `.gitignore` (`None`: it has none).
    folders: HashMap<PathBuf, Option<Matcher>>,
}

impl Rules {
    /// The rules of the repository at `root`, with the global excludes file `global`.
    /// `None` when one of the files cannot be read as gitignore patterns.
    pub(crate) fn new(root: &Path, global: Option<&Path>) -> Option<Self> {
        let mut base = Vec::new();
        let exclude = root.join(".git/info/exclude");
        for file in [Some(exclude.as_path()), global].into_iter().flatten() {
            if let Some(rules) = read(root, file)? {
                base.push(rules);
            }
        }
        Some(Self {
            root: root.to_path_buf(),
            base,
            folders: HashMap::new(),
        })
    }

    /// Whether git ignores `path` (absolute, inside the repository), a folder when `is_dir`.
    /// `None` when an ignore file on the way cannot be read.
    pub(crate) fn ignored(&mut self, path: &Path, is_dir: bool) -> Option<bool> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let mut prefix = self.root.clone();
        let parts: Vec<_> = rel.components().collect();
        for (i, part) in parts.iter().enumerate() {
            prefix.push(part);
            let last = i + 1 == parts.len();
            let as_dir = !last || is_dir;
            if self.decide(&prefix, as_dir)? == Verdict::Ignore {
                return Some(true);
            }
        }
        Some(false)
    }

    /// The first decision for `path` from its folder's `.gitignore` up to the top one, then
    /// the base rules.
    fn decide(&mut self, path: &Path, is_dir: bool) -> Option<Verdict> {
        let mut folder = path.parent()?.to_path_buf();
        loop {
            if let Some(rules) = self.folder(&folder)? {
                match rules.matched(path, is_dir) {
                    Verdict::None => {}
                    decided => return Some(decided),
                }
            }
            if folder == self.root || !folder.pop() {
                break;
            }
        }
        for rules in &self.base {
            match rules.matched(path, is_dir) {
                Verdict::None => {}
                decided => return Some(decided),
            }
        }
        Some(Verdict::None)
    }

    fn folder(&mut self, folder: &Path) -> Option<Option<&Matcher>> {
        if !self.folders.contains_key(folder) {
            let rules = read(folder, &folder.join(".gitignore"))?;
            self.folders.insert(folder.to_path_buf(), rules);
        }
        Some(self.folders.get(folder)?.as_ref())
    }
}

/// The patterns of `file`, relative to `root`; `Some(None)` when there is no such file.
fn read(root: &Path, file: &Path) -> Option<Option<Matcher>> {
    let text = match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
        Ok(meta) if !meta.is_file() => return None,
        Ok(_) => std::fs::read(file).ok()?,
    };
    if let Some(patterns) = ignore_simple::parse(&text) {
        return Some(Some(Matcher::Simple {
            root: root.to_path_buf(),
            patterns,
        }));
    }
    let mut builder = GitignoreBuilder::new(root);
    if builder.add(file).is_some() {
        return None; // a pattern it cannot read: git may read it otherwise
    }
    builder.build().ok().map(|rules| Some(Matcher::Full(rules)))
}
