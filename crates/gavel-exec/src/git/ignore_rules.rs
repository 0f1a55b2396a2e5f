//! Which paths git ignores, asked path by path: the `.gitignore` files from the repository's
//! top down to the path's folder, then `.git/info/exclude`, then the global excludes file, each
//! file's last matching pattern deciding and a deeper file overriding a shallower one, and a
//! path inside an ignored folder ignored whatever a deeper file says (git does not look inside
//! an ignored folder). The patterns themselves are the `ignore` crate's (ripgrep's) gitignore
//! matcher. Asking about one path reads only the ignore files on its way, never a folder's
//! listing, so the cost does not grow with the number of issues in `docs/issues/`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore rules of one repository, read as they are needed.
pub(crate) struct Rules {
    root: PathBuf,
    /// `.git/info/exclude` then the global excludes file: the lowest precedence.
    base: Vec<Gitignore>,
    /// Each folder's own `.gitignore` (`None`: it has none).
    folders: HashMap<PathBuf, Option<Gitignore>>,
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
            if self.decide(&prefix, as_dir)?.is_ignore() {
                return Some(true);
            }
        }
        Some(false)
    }

    /// The first decision for `path` from its folder's `.gitignore` up to the top one, then
    /// the base rules.
    fn decide(&mut self, path: &Path, is_dir: bool) -> Option<Match<()>> {
        let mut folder = path.parent()?.to_path_buf();
        loop {
            if let Some(rules) = self.folder(&folder)? {
                match rules.matched(path, is_dir) {
                    Match::None => {}
                    Match::Ignore(_) => return Some(Match::Ignore(())),
                    Match::Whitelist(_) => return Some(Match::Whitelist(())),
                }
            }
            if folder == self.root || !folder.pop() {
                break;
            }
        }
        for rules in &self.base {
            match rules.matched(path, is_dir) {
                Match::None => {}
                Match::Ignore(_) => return Some(Match::Ignore(())),
                Match::Whitelist(_) => return Some(Match::Whitelist(())),
            }
        }
        Some(Match::None)
    }

    fn folder(&mut self, folder: &Path) -> Option<Option<&Gitignore>> {
        if !self.folders.contains_key(folder) {
            let rules = read(folder, &folder.join(".gitignore"))?;
            self.folders.insert(folder.to_path_buf(), rules);
        }
        Some(self.folders.get(folder)?.as_ref())
    }
}

/// The patterns of `file`, relative to `root`; `Some(None)` when there is no such file.
fn read(root: &Path, file: &Path) -> Option<Option<Gitignore>> {
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
        Ok(meta) if !meta.is_file() => return None,
        Ok(_) => {}
    }
    let mut builder = GitignoreBuilder::new(root);
    if builder.add(file).is_some() {
        return None; // a pattern it cannot read: git may read it otherwise
    }
    builder.build().ok().map(Some)
}
