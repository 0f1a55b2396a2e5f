//! The objects a commit is about to write, written ahead while `git commit` starts, by the
//! thread that started it (which would otherwise only wait for it).
//!
//! After it has added the files, `git commit` builds a tree object for every folder on the
//! path of a changed file (a new lineage folder, its parents, the issues folder, the root) and
//! writes the new ones, as it writes the blob of each new file: on a disk, each a new file and
//! often a new fan-out folder. The trees were the largest part of a short commit measured here
//! (1.1 of 3.8 ms). All of them follow from the index gavel has just written and from the
//! files themselves, so this module computes them the way git does and writes the missing
//! ones (the same objects, stored as git stores them: [`super::objects::write_loose`])
//! while git starts up: before it is given its paths (`started`), or while it also refreshes
//! the index when it has them as arguments; git then hashes the same objects and finds them
//! present. The commit stays git's own: it reads and hashes every file itself, builds
//! every tree itself, runs hooks and signs. git never takes an object from here: an object computed differently
//! (a file changed meanwhile, a case this module does not model) is only unused, an
//! unreachable loose object that `git gc` prunes like any other; one git writes at the same
//! moment is written with identical bytes.
//!
//! Like `git commit`, it builds only the folders the commit changes: any other keeps the id
//! git's cache tree holds for it ([`super::cache_tree::folders`]), so the work follows the
//! run's own paths, not the number of folders a long history has left in the index.
//!
//! Nothing is written where git could store other bytes or write objects otherwise: a
//! repository that is not a plain `.git` folder, SHA-256 objects, a shared repository (other
//! permissions), objects git syncs (`core.fsync*`), line-ending or filter settings, attribute
//! files (at the top, in `.git/info`, the user's), or config this module cannot see through
//! (includes, `-c` options).

use std::path::Path;

use super::config::Config;
use super::index::{ENTRY_HEAD, EXTENDED, INTENT_TO_ADD, field, parse, stat_data};
use super::objects;

/// Writes the objects `git commit --include -- SPECS` is about to write for the repository at
/// `root` (whose index already holds the commit's new files), asking `running` before each
/// object and stopping once git is done. Only for a repository where git stores files' raw
/// bytes ([`writes_plain_objects`], the caller's check).
pub(crate) fn write_ahead(
    root: &Path,
    git_dir: &Path,
    index: Option<&[u8]>,
    specs: &[String],
    running: &mut dyn FnMut() -> bool,
) {
    // A failure only means git writes the objects itself.
    let _ = compute_and_write(root, git_dir, index, specs, running, None);
}

/// [`write_ahead`] for a `git commit` that has not yet been given its paths, so nothing races
/// it; `false`, with nothing written, when the files to hash hold more than `budget` bytes
/// (counted from their sizes before any is read): git, given its paths, then hashes and writes
/// them while this thread writes ahead as usual, rather than waiting for all of it.
pub(crate) fn write_ahead_before(
    root: &Path,
    git_dir: &Path,
    index: Option<&[u8]>,
    specs: &[String],
    budget: usize,
) -> bool {
    // A failure means git writes the objects itself: there is nothing to overlap either.
    compute_and_write(root, git_dir, index, specs, &mut || true, Some(budget)) != Some(false)
}

/// Whether git, in the repository at `root` with `config` (the config git reads there) and the
/// user's attributes file `attributes`, writes new objects as plain loose objects the way
/// [`objects::write_object`] does, with no setting likely to make it store other bytes.
pub(super) fn writes_plain_objects(
    root: &Path,
    git_dir: &Path,
    config: &Config,
    attributes: Option<&Path>,
) -> bool {
    const CHANGES_OBJECTS: [&str; 10] = [
        "objectformat",
        "sharedrepository",
        "fsync",
        "autocrlf",
        "eol",
        "safecrlf",
        "attributesfile",
        "[filter",
        "[include",
        "worktreeconfig",
    ];
    if !git_dir.is_dir()
        || std::env::var_os("GIT_OBJECT_DIRECTORY").is_some()
        || root.join(".gitattributes").exists()
        || git_dir.join("info/attributes").exists()
        || attributes.is_some_and(Path::exists)
    {
        return false;
    }
    !CHANGES_OBJECTS.iter().any(|k| config.mentions(k))
}

/// The largest index this module reads (about 20,000 entries).
const MAX_INDEX_BYTES: u64 = 2 << 20;
/// The largest file of the commit it reads and hashes; a larger one leaves everything to git.
const MAX_FILE_BYTES: u64 = 32 << 20;

/// An object to write: its kind, body and id.
type Object = (&'static str, Vec<u8>, String);

/// One index entry as a tree sees it.
struct Item {
    name: Vec<u8>,
    mode: u32,
    id: [u8; 20],
}

/// Computes the blobs and trees `git commit --include -- SPECS` will write for the index of
/// `git_dir` (work tree `root`; `index`: its bytes, when the caller has just written them) and
/// writes those that are missing while `running` says git
/// is. `None` when the index is one this module does not read, or git is done (git then does
/// or did it all, as always); `Some(false)`, with nothing read past it and nothing written,
/// when the files to hash hold more than `budget` bytes.
fn compute_and_write(
    root: &Path,
    git_dir: &Path,
    index: Option<&[u8]>,
    specs: &[String],
    running: &mut dyn FnMut() -> bool,
    budget: Option<usize>,
) -> Option<bool> {
    // A large index (tens of thousands of files) is git's own business: it updates only the
    // trees its cache tree marks stale, where this module would still go through every entry.
    let from_disk;
    let bytes = match index {
        Some(bytes) => bytes,
        None => {
            let path = git_dir.join("index");
            if std::fs::metadata(&path).ok()?.len() > MAX_INDEX_BYTES {
                return None;
            }
            from_disk = std::fs::read(&path).ok()?;
            &from_disk
        }
    };
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return None;
    }
    let (_, entries, extensions) = parse(bytes)?;
    let named = |name: &[u8]| {
        specs.iter().any(|s| {
            let s = s.trim_end_matches('/').as_bytes();
            name == s || (name.starts_with(s) && name.get(s.len()) == Some(&b'/'))
        })
    };
    // A folder the commit changes (one holding a path of it, or inside a folder of it) gets
    // its tree built; any other keeps the id git's cache tree holds for it, as `git commit`
    // itself does: the work stays with the run's own paths however large the history is.
    let touched = |folder: &[u8]| {
        named(folder)
            || specs.iter().any(|s| {
                let s = s.trim_end_matches('/').as_bytes();
                s.starts_with(folder) && s.get(folder.len()) == Some(&b'/')
            })
    };
    let cached = extensions
        .iter()
        .find(|(sig, _)| sig == b"TREE")
        .and_then(|(_, data)| super::cache_tree::folders(data));
    let mut items = Vec::with_capacity(entries.len());
    // The bytes of the files read so far, against `budget`: over it, nothing more is read.
    let mut read = 0u64;
    let mut objects_to_write: Vec<Object> = Vec::new();
    for entry in &entries {
        if entry.stage != 0 {
            return None;
        }
        let raw = &entry.raw;
        let intent = entry.flags()? & EXTENDED != 0
            && u16::from_be_bytes(raw.get(ENTRY_HEAD..ENTRY_HEAD + 2)?.try_into().ok()?)
                & INTENT_TO_ADD
                != 0;
        let mut item = Item {
            name: entry.name.to_vec(),
            mode: entry.field(field::MODE)?,
            id: raw.get(40..60)?.try_into().ok()?,
        };
        if named(entry.name) {
            // The commit takes these from the work tree: as they are now.
            let path = root.join(std::str::from_utf8(entry.name).ok()?);
            let meta = match std::fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return None,
            };
            if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
                return None;
            }
            // The index's stat data says whether its id is still the file's (a smudged,
            // racily clean entry has size 0 and does not match).
            let stat = stat_data(&meta);
            let unchanged = !intent
                && [field::SIZE, field::MTIME, field::MTIME + 1, field::INO]
                    .iter()
                    .all(|&i| entry.field(i) == Some(stat[i]));
            if !unchanged {
                read += meta.len();
                if budget.is_some_and(|budget| read > budget as u64) {
                    return Some(false);
                }
                let content = std::fs::read(&path).ok()?;
                let id = objects::object_id("blob", &content);
                item.id = hex20(&id)?;
                objects_to_write.push(("blob", content, id));
            }
            let executable = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111;
            item.mode = if executable != 0 { 0o100755 } else { 0o100644 };
        } else if intent {
            continue; // not part of this commit
        }
        items.push(item);
    }
    let folders = Folders {
        cached: cached.as_ref(),
        touched: &touched,
    };
    tree(&items, 0, folders, &mut objects_to_write)?;
    // Those missing now, in the order git writes them (blobs as it adds the files, then trees
    // from the deepest up). One that appears meanwhile was written by git, which has caught up
    // and goes on ahead in the same order: from there on it is git's work alone.
    let mut seen = std::collections::HashSet::new();
    let missing: Vec<_> = objects_to_write
        .into_iter()
        .filter(|(_, _, id)| seen.insert(id.clone()) && !objects::has_loose(git_dir, id))
        .collect();
    // Only a git that has its paths can write them too: then each is looked for again.
    let racing = budget.is_none();
    for (kind, body, id) in missing {
        if !running() || (racing && objects::has_loose(git_dir, &id)) {
            return None;
        }
        objects::write_loose(git_dir, kind, &body, &id).ok()?;
    }
    Some(true)
}

/// What [`tree`] knows of a folder besides its items: git's cache tree for it, and whether
/// the commit changes a path in it.
#[derive(Clone, Copy)]
struct Folders<'a> {
    cached: Option<&'a super::cache_tree::Node>,
    touched: &'a dyn Fn(&[u8]) -> bool,
}

/// The id of the tree of `items` (sorted, all under one folder whose path is `prefix` bytes
/// long, slash included), with it and the subtrees it builds added to `out` (subtrees first);
/// `Some(None)` for a folder with nothing in it, which a tree leaves out. A subfolder the
/// commit leaves alone whose id `folders` has (for as many entries) is not built again.
fn tree(
    items: &[Item],
    prefix: usize,
    folders: Folders<'_>,
    out: &mut Vec<Object>,
) -> Option<Option<[u8; 20]>> {
    let mut body = Vec::with_capacity(items.len() * 48);
    let mut i = 0;
    while i < items.len() {
        let rest = items[i].name.get(prefix..)?;
        match rest.iter().position(|b| *b == b'/') {
            None => {
                body.extend_from_slice(format!("{:o} ", items[i].mode).as_bytes());
                body.extend_from_slice(rest);
                body.push(0);
                body.extend_from_slice(&items[i].id);
                i += 1;
            }
            Some(slash) => {
                let folder = &rest[..=slash];
                let end = i + items[i..]
                    .iter()
                    .take_while(|it| it.name.get(prefix..).is_some_and(|r| r.starts_with(folder)))
                    .count();
                let name = &folder[..slash];
                let cached = folders.cached.and_then(|node| node.child(name));
                let path = items[i].name.get(..prefix + slash)?;
                let kept = cached
                    .and_then(|node| node.id_covering(end - i))
                    .filter(|_| !(folders.touched)(path));
                let sub = Folders { cached, ..folders };
                let id = match kept {
                    Some(id) => Some(id),
                    None => tree(&items[i..end], prefix + slash + 1, sub, out)?,
                };
                if let Some(id) = id {
                    body.extend_from_slice(b"40000 ");
                    body.extend_from_slice(name);
                    body.push(0);
                    body.extend_from_slice(&id);
                }
                i = end;
            }
        }
    }
    if body.is_empty() {
        return Some(None);
    }
    let id = objects::object_id("tree", &body);
    let raw = hex20(&id)?;
    out.push(("tree", body, id));
    Some(Some(raw))
}

fn hex20(hex: &str) -> Option<[u8; 20]> {
    let mut out = [0u8; 20];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
#[path = "trees_tests.rs"]
mod tests;
