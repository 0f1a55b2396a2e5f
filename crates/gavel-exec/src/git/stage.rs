//! New files made known to git without a `git add` process: intent-to-add entries written to
//! `.git/index` in-process, which `git commit -- PATHS` then fills from the work tree.
//!
//! A run's commit names its paths (`git commit -- PATHS`), and git commits only paths it knows,
//! so the files a run created had to be added first: a whole `git add` process, a real part of
//! a short run's time. What `git commit` needs is less than an add: an index entry marked
//! "intent to add" (what `git add -N` writes) makes the path known, and the commit then reads
//! the file itself, with every filter, attribute and hook as for a person. So the content is
//! always git's own doing; this module only lists the files `git add -A` would have added and
//! writes their placeholder entries.
//!
//! It writes only what it fully understands, and answers `None` otherwise so the caller runs
//! `git add`: a `.git` folder (not a linked worktree), an index of version 2 or 3 with SHA-1
//! ids (its checksum not checked on reading, as git does not), no extension but the cache
//! tree, resolve-undo and the two offset tables (dropped: they are optional and would be
//! stale), no config that changes what adding means (case folding, file modes, sparse or
//! split indexes, fsmonitor, untracked cache, other hash, includes, a global excludes file of
//! its own, `-c` options), only regular files, no ignored file named explicitly (git add
//! refuses it), no path clashing with a tracked one.
//! The index is replaced as git does it: `index.lock` created exclusively, renamed over.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha1::{Digest, Sha1};

use super::config::{Config, entries};
use super::index::{ENTRY_HEAD, EXTENDED, Entry, INTENT_TO_ADD, Parsed, field, parse, stat_data};

/// git's id of the empty blob, what an intent-to-add entry points at.
const EMPTY_BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

/// What [`intend_to_add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Staged {
    /// How many intent-to-add entries it wrote (0: nothing was new).
    pub(crate) added: usize,
    /// The index git will read: the one written, or (nothing new) the one read.
    pub(crate) index: Vec<u8>,
    /// Whether the index held exactly `HEAD`'s tree before (its cache tree's root is valid and
    /// is that tree): nothing else is staged, so committing the whole index after adding the
    /// paths (`git commit --include`) commits exactly those paths.
    pub(crate) index_was_head: bool,
}

/// Makes the untracked, not ignored files among `paths` (files and folders relative to `root`,
/// all existing) known to git's index as intent-to-add entries. `None`: not a repository this
/// module writes, nothing changed, and `git add` must do it.
///
/// `plain_objects` says whether git stores files' raw bytes here
/// ([`super::trees::writes_plain_objects`], asked once per commit by the caller): only then are
/// the entries git left suspect checked again (`refresh`).
///
/// `on_read` is told, once the index is read under its lock and before the new files are
/// listed, what [`Staged::index_was_head`] will say (the caller starts `git commit` then). It
/// is not called when this answers `None` before reading the index.
pub(crate) fn intend_to_add(
    root: &Path,
    paths: &[String],
    config: &Config,
    plain_objects: bool,
    on_read: &mut dyn FnMut(bool),
) -> Option<Staged> {
    intend_to_add_in(
        root,
        paths,
        config,
        plain_objects,
        global_excludes().as_deref(),
        on_read,
    )
}

/// [`intend_to_add`] with the global excludes file given.
pub(crate) fn intend_to_add_in(
    root: &Path,
    paths: &[String],
    config: &Config,
    plain_objects: bool,
    excludes: Option<&Path>,
    on_read: &mut dyn FnMut(bool),
) -> Option<Staged> {
    let git_dir = root.join(".git");
    if !git_dir.is_dir() || !plain_config(config) {
        return None;
    }
    let lock_path = git_dir.join("index.lock");
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(&lock_path)
        .ok()?;
    // Removed however this ends (an error, a panic) unless renamed over the index.
    let mut lock = IndexLock {
        path: lock_path,
        file: Some(file),
    };
    // Read under the lock, so no other writer's change is lost.
    let index_path = git_dir.join("index");
    let (bytes, written_at) = match fs::read(&index_path) {
        Ok(bytes) => (bytes, fs::metadata(&index_path).ok()?.mtime()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (empty_index(), 0),
        Err(_) => return None,
    };
    let index = parse(&bytes)?;
    let index_was_head = super::cache_tree::is_head(&git_dir, &index.2);
    on_read(index_was_head);
    // The entries git left suspect are checked again (see `refresh`) on a second thread while
    // this one lists the new files.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_secs()).ok())?;
    let recheck = plain_objects
        && index
            .1
            .iter()
            .any(|e| super::refresh::suspect(e, written_at));
    let (candidates, verified) = std::thread::scope(|scope| {
        let checking = recheck
            .then(|| scope.spawn(|| super::refresh::verify(root, &index.1, written_at, now)));
        let candidates = files_to_add(root, paths, excludes);
        let verified = checking
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default();
        (candidates, verified)
    });
    let read = Read {
        bytes: &bytes,
        written_at,
        index,
        index_was_head,
        verified,
    };
    let staged = write_index(root, &git_dir, read, &candidates?, lock.file.as_mut()?)?;
    if staged.added > 0 {
        drop(lock.file.take());
        fs::rename(&lock.path, git_dir.join("index")).ok()?;
        lock.path = PathBuf::new();
    }
    Some(staged)
}

/// `index.lock` while this module writes it: deleted on drop unless it became the index.
struct IndexLock {
    path: PathBuf,
    file: Option<fs::File>,
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.path.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Whether nothing in `config` changes what adding a file means here.
fn plain_config(config: &Config) -> bool {
    const CHANGES_ADDING: [&str; 11] = [
        "ignorecase",
        "precomposeunicode",
        "splitindex",
        "sparse",
        "fsmonitor",
        "untrackedcache",
        "skiphash",
        "objectformat",
        "excludesfile",
        "[include",
        "symlinks",
    ];
    let filemode_off = config.texts().iter().any(|text| {
        entries(text).any(|e| {
            e.section == "core"
                && e.key == "filemode"
                && matches!(e.value, "false" | "no" | "off" | "0")
        })
    });
    !filemode_off && !CHANGES_ADDING.iter().any(|k| config.mentions(k))
}

/// The files `git add -A -- PATHS` would add that the index lacks, sorted; `None` when one of
/// them is not a regular file, an explicitly named one is ignored (git add refuses it: let it
/// say so), or an ignore file cannot be read.
fn files_to_add(
    root: &Path,
    paths: &[String],
    excludes: Option<&Path>,
) -> Option<BTreeSet<String>> {
    let mut rules = super::ignore_rules::Rules::new(root, excludes)?;
    let mut found = BTreeSet::new();
    for path in paths {
        let path = path.trim_end_matches('/');
        // Only plain relative names go into the index as they are (git normalises the rest).
        if path.is_empty()
            || path.starts_with('/')
            || path
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == ".." || c == ".git")
        {
            return None;
        }
        let full = root.join(path);
        let meta = fs::symlink_metadata(&full).ok()?;
        if meta.is_file() {
            if rules.ignored(&full, false)? {
                return None;
            }
            found.insert(path.to_owned());
        } else if meta.is_dir() {
            if rules.ignored(&full, true)? {
                return None; // git add refuses an ignored folder named explicitly
            }
            walk(root, &full, &mut rules, &mut found)?;
        } else {
            return None;
        }
    }
    Some(found)
}

/// Adds the regular files under `dir` (not ignored itself) that git add would, skipping
/// ignored ones and the insides of ignored folders.
fn walk(
    root: &Path,
    dir: &Path,
    rules: &mut super::ignore_rules::Rules,
    found: &mut BTreeSet<String>,
) -> Option<()> {
    for entry in fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let kind = entry.file_type().ok()?;
        let path = entry.path();
        if entry.file_name() == ".git" {
            return None; // a nested repository: git add makes it a submodule
        }
        if rules.ignored(&path, kind.is_dir())? {
            continue;
        }
        if kind.is_dir() {
            walk(root, &path, rules, found)?;
        } else if kind.is_file() {
            found.insert(path.strip_prefix(root).ok()?.to_str()?.to_owned());
        } else {
            return None;
        }
    }
    Some(())
}

/// git's default global excludes file, when it exists (a configured one makes
/// [`plain_config`] refuse).
fn global_excludes() -> Option<PathBuf> {
    super::config::user_git_file("ignore").filter(|file| file.is_file())
}

/// The index as read under the lock.
struct Read<'a> {
    bytes: &'a [u8],
    /// The index file's modification time (whole seconds; 0 when there was none).
    written_at: i64,
    /// Its version, entries and extensions ([`parse`]).
    index: Parsed<'a>,
    /// Whether it held exactly `HEAD`'s tree ([`super::cache_tree::is_head`]).
    index_was_head: bool,
    /// Entries to write with their real size again (`refresh`): position and size.
    verified: Vec<(usize, u32)>,
}

/// Writes the index `read` with intent-to-add entries for `candidates` it lacks into `out`
/// (nothing when every candidate is already in the index: `added` 0).
fn write_index(
    root: &Path,
    git_dir: &Path,
    read: Read<'_>,
    candidates: &BTreeSet<String>,
    out: &mut fs::File,
) -> Option<Staged> {
    let Read {
        bytes,
        written_at,
        index: (version, mut entries, extensions),
        index_was_head,
        verified,
    } = read;
    // The index is sorted by name (git keeps it so): look names up by binary search.
    let names: Vec<&[u8]> = entries.iter().map(|e| e.name).collect();
    let new: Vec<&String> = candidates
        .iter()
        .filter(|c| names.binary_search(&c.as_bytes()).is_err())
        .collect();
    if new.is_empty() {
        return Some(Staged {
            added: 0,
            index: bytes.to_vec(),
            index_was_head,
        });
    }
    if entries.iter().any(|e| e.stage != 0) {
        return None; // a merge in progress: git add knows what to do
    }
    // An entry whose file changed in the same second the index was written looks clean by its
    // stat data; git re-checks it because the index is no older than the file ("racily
    // clean"). Written into a newer index it would no longer be suspect, so, as git does when
    // it writes an index, its size is set to 0: git then reads the file before trusting it.
    for entry in &mut entries {
        if i64::from(entry.field(field::MTIME)?) >= written_at {
            let raw = entry.raw.to_mut();
            raw.get_mut(36..40)?.copy_from_slice(&[0; 4]);
        }
    }
    // Entries checked again since git marked them (older than this second, so not suspect in
    // the index written now) get their size back.
    for (at, size) in verified {
        let raw = entries.get_mut(at)?.raw.to_mut();
        raw.get_mut(36..40)?.copy_from_slice(&size.to_be_bytes());
    }
    let owned: Vec<(Vec<u8>, &String)> = new
        .iter()
        .map(|path| Some((intent_entry(&root.join(path), path)?, *path)))
        .collect::<Option<_>>()?;
    if owned
        .iter()
        .any(|(_, path)| clashes(&names, path.as_bytes()))
    {
        return None;
    }
    if names.windows(2).any(|w| w[0] >= w[1]) {
        return None; // not sorted as git writes it: let git read it
    }
    // Both lists are sorted (the candidates are a BTreeSet): merge them.
    let name_at = ENTRY_HEAD + 2;
    let mut added_entries = owned.iter().map(|(raw, path)| Entry {
        raw: std::borrow::Cow::Borrowed(raw.as_slice()),
        name: &raw[name_at..name_at + path.len()],
        stage: 0,
    });
    let mut merged = Vec::with_capacity(entries.len() + owned.len());
    let mut next_new = added_entries.next();
    for entry in entries.drain(..) {
        while let Some(new_entry) = next_new.take_if(|n| n.name < entry.name) {
            merged.push(new_entry);
            next_new = added_entries.next();
        }
        merged.push(entry);
    }
    merged.extend(next_new);
    merged.extend(added_entries);
    let entries = merged;
    ensure_empty_blob(git_dir)?;
    let mut body = Vec::with_capacity(bytes.len() + owned.len() * 128);
    body.extend_from_slice(b"DIRC");
    body.extend_from_slice(&version.max(3).to_be_bytes());
    body.extend_from_slice(&u32::try_from(entries.len()).ok()?.to_be_bytes());
    for entry in &entries {
        body.extend_from_slice(&entry.raw);
    }
    let added: Vec<&[u8]> = owned.iter().map(|(_, p)| p.as_bytes()).collect();
    for (sig, data) in extensions {
        let data = match &sig {
            b"TREE" => super::cache_tree::invalidate(data, &added)?,
            b"REUC" => data.to_vec(),
            // Offsets into the old file: optional, and stale now.
            b"EOIE" | b"IEOT" => continue,
            _ => return None,
        };
        body.extend_from_slice(&sig);
        body.extend_from_slice(&u32::try_from(data.len()).ok()?.to_be_bytes());
        body.extend_from_slice(&data);
    }
    let sum = Sha1::digest(&body);
    body.extend_from_slice(&sum);
    // Not synced, as git does not sync its index by default: the commit rewrites it at once.
    out.write_all(&body).ok()?;
    Some(Staged {
        added: owned.len(),
        index: body,
        index_was_head,
    })
}

/// The bytes of an index without entries.
fn empty_index() -> Vec<u8> {
    let mut body = b"DIRC\0\0\0\x02\0\0\0\0".to_vec();
    let sum = Sha1::digest(&body);
    body.extend_from_slice(&sum);
    body
}

/// Whether adding `path` would put a file where the index has a folder, or under a file.
fn clashes(names: &[&[u8]], path: &[u8]) -> bool {
    let under_a_file = path
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .any(|(i, _)| names.binary_search(&&path[..i]).is_ok());
    let mut folder = path.to_vec();
    folder.push(b'/');
    let first = names.partition_point(|n| *n < folder.as_slice());
    let over_a_folder = names.get(first).is_some_and(|n| n.starts_with(&folder));
    under_a_file || over_a_folder
}

/// The on-disk entry `git add -N` writes for the file at `full` named `name`: its stat data,
/// the empty blob's id, and the intent-to-add flag (version 3).
fn intent_entry(full: &Path, name: &str) -> Option<Vec<u8>> {
    let meta = fs::symlink_metadata(full).ok()?;
    if !meta.is_file() || name.len() >= 0x0fff || name.contains('\0') {
        return None;
    }
    let mut raw = Vec::with_capacity(ENTRY_HEAD + 2 + name.len() + 8);
    for v in stat_data(&meta) {
        raw.extend_from_slice(&v.to_be_bytes());
    }
    raw.extend_from_slice(&hex(EMPTY_BLOB)?);
    let flags = EXTENDED | u16::try_from(name.len()).ok()?;
    raw.extend_from_slice(&flags.to_be_bytes());
    raw.extend_from_slice(&INTENT_TO_ADD.to_be_bytes());
    raw.extend_from_slice(name.as_bytes());
    let size = (raw.len() + 8) & !7;
    raw.resize(size, 0);
    Some(raw)
}

fn hex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Writes the empty blob to the object store when it is not there loose (`git add -N` does).
fn ensure_empty_blob(git_dir: &Path) -> Option<()> {
    let id = super::objects::write_blob(git_dir, b"").ok()?;
    (id == EMPTY_BLOB).then_some(())
}

#[cfg(test)]
#[path = "stage_tests.rs"]
pub(super) mod tests;
