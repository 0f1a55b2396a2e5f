//! Where context files come from: resolving the paths a person gave, walking folders, reading.
//!
//! Every path is canonicalized (symlinks followed) and must land inside the canonical
//! repository root and outside any `.git` folder, so `../x`, `/etc/passwd` and a symlink that
//! points out of the repository are refused whatever their spelling. Folders are walked the way
//! ripgrep walks them (the `ignore` crate): `.gitignore`d files such as `target/` or
//! `node_modules/` are skipped, hidden files are kept so that the name rules see `.env`.
//! A regular file found in a walked folder is not canonicalized again: the folder is canonical
//! and the walk follows no link, so its path already is (on an 18,000-file tree that saves
//! about ten system calls a file); a link found there is resolved and checked like a given
//! path.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use ignore::WalkBuilder;

use super::Refusal;

/// Bytes looked at for a NUL to call a file binary.
const BINARY_PROBE: usize = 8 * 1024;

/// A file to validate.
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// The path as the person gave it, or as found in a folder they gave.
    pub shown: String,
    /// Repository-relative, `/`-separated, symlinks resolved.
    pub rel: String,
    /// Canonical absolute path.
    pub abs: PathBuf,
}

/// Resolves `paths` (relative ones against `cwd`) inside the canonical repository `root`,
/// expanding folders. The result is sorted by `rel` with duplicates removed (the first
/// spelling of a file wins); every path that cannot be used is a refusal.
pub(super) fn collect(
    root: &Path,
    cwd: &Path,
    paths: &[PathBuf],
    refusals: &mut Vec<Refusal>,
) -> Vec<Found> {
    let mut found = BTreeMap::new();
    for given in paths {
        let shown = given.to_string_lossy().into_owned();
        let joined = if given.is_absolute() {
            given.clone()
        } else {
            cwd.join(given)
        };
        match place(root, &shown, &joined) {
            Ok(Placed::File(file)) => {
                found.entry(file.rel.clone()).or_insert(file);
            }
            Ok(Placed::Dir(dir)) => walk(root, &shown, &dir, &mut found, refusals),
            Err(refusal) => refusals.push(refusal),
        }
    }
    found.into_values().collect()
}

enum Placed {
    File(Found),
    Dir(PathBuf),
}

/// Canonicalizes `path` and checks it is a regular file or a folder inside `root` and not in
/// `.git`.
fn place(root: &Path, shown: &str, path: &Path) -> Result<Placed, Refusal> {
    let outside = |abs: &Path| {
        Refusal::new(
            shown,
            "outside-repository",
            format!(
                "`{shown}` resolves to {}, outside the repository {}",
                abs.display(),
                root.display()
            ),
        )
    };
    let abs = fs::canonicalize(path).map_err(|e| match e.kind() {
        // A missing `../x` is still a traversal: say so rather than "not found".
        io::ErrorKind::NotFound => match resolve_missing(path) {
            Some(abs) if !abs.starts_with(root) => outside(&abs),
            _ => Refusal::new(
                shown,
                "not-found",
                format!("`{shown}` does not exist (or is a broken symlink)"),
            ),
        },
        _ => Refusal::new(
            shown,
            "unreadable",
            format!("`{shown}` cannot be read: {e}"),
        ),
    })?;
    let Ok(rel) = abs.strip_prefix(root) else {
        return Err(outside(&abs));
    };
    if rel
        .components()
        .any(|c| c == Component::Normal(".git".as_ref()))
    {
        return Err(Refusal::new(
            shown,
            "git-folder",
            format!("`{shown}` is inside the repository's `.git` folder"),
        ));
    }
    let meta = fs::metadata(&abs).map_err(|e| {
        Refusal::new(
            shown,
            "unreadable",
            format!("`{shown}` cannot be read: {e}"),
        )
    })?;
    if meta.is_dir() {
        return Ok(Placed::Dir(abs));
    }
    if !meta.is_file() {
        return Err(Refusal::new(
            shown,
            "not-a-file",
            format!("`{shown}` is neither a regular file nor a folder"),
        ));
    }
    let rel = slash_path(rel);
    Ok(Placed::File(Found {
        shown: shown.to_owned(),
        rel,
        abs,
    }))
}

/// Where a path that does not exist would be: its longest existing ancestor canonicalized,
/// the rest applied lexically (`..` pops, `.` is skipped).
fn resolve_missing(path: &Path) -> Option<PathBuf> {
    let mut base = path;
    let mut abs = loop {
        if let Ok(abs) = fs::canonicalize(base) {
            break abs;
        }
        base = base.parent()?;
    };
    for c in path.strip_prefix(base).ok()?.components() {
        match c {
            Component::ParentDir => {
                abs.pop();
            }
            Component::Normal(name) => abs.push(name),
            _ => {}
        }
    }
    Some(abs)
}

/// Adds the files under `dir` (canonical), skipping what `.gitignore` excludes and `.git`.
fn walk(
    root: &Path,
    shown: &str,
    dir: &Path,
    found: &mut BTreeMap<String, Found>,
    refusals: &mut Vec<Refusal>,
) {
    let prefix = shown.trim_end_matches(['/', std::path::MAIN_SEPARATOR]);
    let walker = WalkBuilder::new(dir)
        .standard_filters(true)
        .hidden(false)
        // A repository without `.git` (an export, a test) still has its `.gitignore` honoured:
        // sending less is the safe side.
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                refusals.push(Refusal::new(
                    shown,
                    "unreadable",
                    format!("`{shown}` could not be walked: {e}"),
                ));
                continue;
            }
        };
        if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let sub = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let child = if prefix == "." || prefix.is_empty() {
            slash_path(sub)
        } else {
            format!("{prefix}/{}", slash_path(sub))
        };
        if entry.file_type().is_some_and(|t| t.is_file())
            && let Ok(rel) = entry.path().strip_prefix(root)
        {
            // Canonical already (see the module doc), inside the root, and not in `.git`
            // (the walk never enters one).
            let file = Found {
                shown: child,
                rel: slash_path(rel),
                abs: entry.path().to_path_buf(),
            };
            found.entry(file.rel.clone()).or_insert(file);
            continue;
        }
        match place(root, &child, entry.path()) {
            Ok(Placed::File(file)) => {
                found.entry(file.rel.clone()).or_insert(file);
            }
            // A symlink to a folder: not followed (no loops, no surprises).
            Ok(Placed::Dir(_)) => {}
            Err(refusal) => refusals.push(refusal),
        }
    }
}

/// A relative path with `/` separators.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Reads a file as UTF-8 text of at most `max_bytes` bytes, or says why not.
pub(super) fn read_text(file: &Found, max_bytes: u64) -> Result<String, Refusal> {
    let shown = &file.shown;
    let unreadable = |e: io::Error| {
        Refusal::new(
            shown,
            "unreadable",
            format!("`{shown}` cannot be read: {e}"),
        )
    };
    let handle = File::open(&file.abs).map_err(unreadable)?;
    let len = handle.metadata().map_err(unreadable)?.len();
    let too_large = |len: u64| {
        Refusal::new(
            shown,
            "too-large",
            format!(
                "`{shown}` is {len} bytes, over the limit of {max_bytes} bytes per file \
                 ([context] max_file_bytes)"
            ),
        )
    };
    if len > max_bytes {
        return Err(too_large(len));
    }
    // Sized for the whole file (and the read that finds its end), so it is read in one go
    // rather than in growing pieces.
    let mut bytes = Vec::with_capacity(usize::try_from(len).map_or(0, |n| n.saturating_add(1)));
    handle
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Err(Refusal::new(
            shown,
            "binary",
            format!("`{shown}` is a binary file (it holds NUL bytes)"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Refusal::new(
            shown,
            "not-utf8",
            format!("`{shown}` is not UTF-8 text (first invalid byte on line {line})"),
        )
    })
}
