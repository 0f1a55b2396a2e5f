//! The objects a commit is about to write, written ahead while `git commit` starts, by the
//! thread that started it (which would otherwise only wait for it).
//!
//! After it has added the files, `git commit` builds a tree object for every folder on the
//! path of a changed file (a new lineage folder, its parents, the issues folder, the root) and
//! writes the new ones, as it writes the blob of each new file: on a disk, each a new file and
//! often a new fan-out folder. The trees were the largest part of a short commit measured here
//! (1.1 of 3.8 ms). All of them follow from the index gavel has just written and from the
//! files themselves, so this module computes them the way git does and writes the missing
//! ones (the same objects, stored as git stores them: [`super::objects::write_object`])
//! while git starts up: before it is given its paths (`started`), or while it also refreshes
//! the index when it has them as arguments; git then hashes the same objects and finds them
//! present. The commit stays git's own: it reads and hashes every file itself, builds
//! every tree itself, runs hooks and signs. git never takes an object from here: an object computed differently
//! (a file changed meanwhile, a case this module does not model) is only unused, an
//! unreachable loose object that `git gc` prunes like any other; one git writes at the same
//! moment is written with identical bytes.
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
    specs: &[String],
    running: &mut dyn FnMut() -> bool,
) {
    // A failure only means git writes the objects itself.
    let _ = compute_and_write(root, git_dir, specs, running, None);
}

/// [`write_ahead`] for a `git commit` that has not yet been given its paths, so nothing races
/// it; `false`, with nothing written, when the files to hash hold more than `budget` bytes
/// (counted from their sizes before any is read): git, given its paths, then hashes and writes
/// them while this thread writes ahead as usual, rather than waiting for all of it.
pub(crate) fn write_ahead_before(
    root: &Path,
    git_dir: &Path,
    specs: &[String],
    budget: usize,
) -> bool {
    // A failure means git writes the objects itself: there is nothing to overlap either.
    compute_and_write(root, git_dir, specs, &mut || true, Some(budget)) != Some(false)
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
/// `git_dir` (work tree `root`) and writes those that are missing while `running` says git
/// is. `None` when the index is one this module does not read, or git is done (git then does
/// or did it all, as always); `Some(false)`, with nothing read past it and nothing written,
/// when the files to hash hold more than `budget` bytes.
fn compute_and_write(
    root: &Path,
    git_dir: &Path,
    specs: &[String],
    running: &mut dyn FnMut() -> bool,
    budget: Option<usize>,
) -> Option<bool> {
    let index = git_dir.join("index");
    // A large index (tens of thousands of files) is git's own business: it updates only the
    // trees its cache tree marks stale, where this module would hash them all.
    if std::fs::metadata(&index).ok()?.len() > MAX_INDEX_BYTES {
        return None;
    }
    let bytes = std::fs::read(&index).ok()?;
    let (_, entries, _) = parse(&bytes)?;
    let named = |name: &[u8]| {
        specs.iter().any(|s| {
            let s = s.trim_end_matches('/').as_bytes();
            name == s || (name.starts_with(s) && name.get(s.len()) == Some(&b'/'))
        })
    };
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
    tree(&items, 0, &mut objects_to_write)?;
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

/// The id of the tree of `items` (sorted, all under one folder whose path is `prefix` bytes
/// long, slash included), with it and its subtrees added to `out` (subtrees first);
/// `Some(None)` for a folder with nothing in it, which a tree leaves out.
fn tree(items: &[Item], prefix: usize, out: &mut Vec<Object>) -> Option<Option<[u8; 20]>> {
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
                if let Some(id) = tree(&items[i..end], prefix + slash + 1, out)? {
                    body.extend_from_slice(b"40000 ");
                    body.extend_from_slice(&folder[..slash]);
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
mod tests {
    use super::super::stage::tests::{git, write};
    use super::*;

    /// The repository's own config, as the tests' git (no user or system config) sees it.
    fn config(root: &Path) -> Config {
        Config::from_files(&[root.join(".git/config")]).expect("readable config")
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        git(dir.path(), &["init", "-q"]);
        dir
    }

    /// The ids of the loose objects in `root`'s repository.
    fn loose_objects(root: &Path) -> Vec<String> {
        let mut ids = Vec::new();
        for fan in std::fs::read_dir(root.join(".git/objects"))
            .expect("objects")
            .flatten()
        {
            let fan_name = fan.file_name().to_string_lossy().into_owned();
            if fan_name.len() != 2 {
                continue;
            }
            for obj in std::fs::read_dir(fan.path()).expect("fan-out").flatten() {
                ids.push(format!("{fan_name}{}", obj.file_name().to_string_lossy()));
            }
        }
        ids
    }

    #[test]
    fn the_trees_are_the_ones_the_commit_makes() {
        let dir = repo();
        let root = dir.path();
        git(root, &["config", "user.name", "t"]);
        git(root, &["config", "user.email", "t@example.invalid"]);
        for (path, text) in [
            ("a.md", "a"),
            ("a-b.md", "ab"),
            ("a/z.md", "z"),
            ("docs/issues/0001-x.md", "one"),
            ("docs/lineage/done/1-x/001-brief.md", "brief"),
            ("ideas/active/x.md", "idea"),
            ("tool.sh", "#!/bin/sh\n"),
        ] {
            write(root, path, text);
        }
        std::fs::set_permissions(
            root.join("tool.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        // A run: new files known as intent-to-add, the idea moved, an issue changed, and a
        // file the person added on the side (staged, so it goes with `--include`).
        for (path, text) in [
            ("docs/lineage/done/2-y/001-brief.md", "brief two"),
            ("docs/lineage/done/2-y/002-draft.md", "draft"),
            // The same content twice: one blob, written once.
            ("docs/lineage/done/2-y/004-draft.md", "draft"),
            ("docs/issues/0002-y.md", "two"),
            ("ideas/done/2-y.md", "idea"),
            ("docs/issues/0001-x.md", "one, edited"),
            ("side.md", "staged by a person"),
        ] {
            write(root, path, text);
        }
        std::fs::remove_file(root.join("ideas/active/x.md")).expect("move");
        git(root, &["add", "side.md"]);
        git(
            root,
            &[
                "add",
                "-N",
                "docs/lineage/done/2-y",
                "docs/issues/0002-y.md",
                "ideas/done/2-y.md",
            ],
        );
        let specs: Vec<String> = [
            "docs/lineage/done/2-y",
            "docs/issues/0002-y.md",
            "docs/issues/0001-x.md",
            "ideas/done/2-y.md",
            "ideas/active/x.md",
        ]
        .map(String::from)
        .to_vec();
        let before = loose_objects(root);
        assert!(
            // The commit's changed files hold 37 bytes.
            !write_ahead_before(root, &root.join(".git"), &specs, 16),
            "over the budget"
        );
        assert_eq!(
            loose_objects(root),
            before,
            "nothing written over the budget"
        );
        assert!(write_ahead_before(
            root,
            &root.join(".git"),
            &specs,
            1 << 20
        ));
        let ahead = loose_objects(root);
        let mut args = vec!["commit", "-q", "-m", "run", "--include", "--"];
        args.extend(specs.iter().map(String::as_str));
        git(root, &args);
        let trees = git(
            root,
            &["ls-tree", "-r", "-d", "--format=%(objectname)", "HEAD"],
        );
        let root_tree = git(root, &["rev-parse", "HEAD^{tree}"]);
        for id in trees.lines().chain(root_tree.lines()) {
            assert!(
                ahead.iter().any(|a| a == id),
                "tree {id} was written ahead of the commit"
            );
        }
        // Nothing was computed differently: every object written ahead is in the commit
        // (the empty blob is `git add -N`'s own placeholder).
        let lost = git(root, &["fsck", "--unreachable", "--no-reflogs"]);
        let lost: Vec<&str> = lost
            .lines()
            .filter(|l| !l.ends_with("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"))
            .collect();
        assert!(lost.is_empty(), "objects the commit did not use: {lost:?}");
    }

    #[test]
    fn only_repositories_where_git_stores_the_same_bytes_get_objects() {
        let plain = repo();
        let git_dir = plain.path().join(".git");
        assert!(writes_plain_objects(
            plain.path(),
            &git_dir,
            &config(plain.path()),
            None
        ));

        let attributes = repo();
        write(attributes.path(), ".gitattributes", "*.md text\n");
        let git_dir = attributes.path().join(".git");
        let config_of = config(attributes.path());
        assert!(!writes_plain_objects(
            attributes.path(),
            &git_dir,
            &config_of,
            None
        ));

        let users = repo();
        write(users.path(), "home/git/attributes", "*.md text\n");
        let git_dir = users.path().join(".git");
        let mine = users.path().join("home/git/attributes");
        let config_of = config(users.path());
        assert!(!writes_plain_objects(
            users.path(),
            &git_dir,
            &config_of,
            Some(&mine)
        ));

        let eol = repo();
        git(eol.path(), &["config", "core.autocrlf", "input"]);
        let git_dir = eol.path().join(".git");
        assert!(!writes_plain_objects(
            eol.path(),
            &git_dir,
            &config(eol.path()),
            None
        ));

        let linked = tempfile::tempdir().expect("tempdir");
        write(linked.path(), ".git", "gitdir: ../elsewhere\n");
        let git_dir = linked.path().join(".git");
        let empty = Config::from_files(&[]).expect("no config");
        assert!(!writes_plain_objects(linked.path(), &git_dir, &empty, None));
    }

    #[test]
    fn nothing_is_written_once_git_is_done() {
        let dir = repo();
        let root = dir.path();
        write(root, "x.md", "late\n");
        git(root, &["add", "-N", "x.md"]);
        let before = loose_objects(root);
        let mut asked = 0;
        write_ahead(root, &root.join(".git"), &["x.md".to_owned()], &mut || {
            asked += 1;
            false
        });
        assert_eq!(asked, 1, "asked before the first object, and stopped");
        assert_eq!(loose_objects(root), before);
    }

    #[test]
    fn a_plain_repository_gets_the_blob_git_would_write() {
        let dir = repo();
        let root = dir.path();
        let content = "# A draft\n\nwith text\n".repeat(40);
        write(root, "docs/002-draft.md", &content);
        git(root, &["add", "-N", "docs"]);
        assert!(writes_plain_objects(
            root,
            &root.join(".git"),
            &config(root),
            None
        ));
        write_ahead(root, &root.join(".git"), &["docs".to_owned()], &mut || true);
        let id = git(root, &["hash-object", "docs/002-draft.md"]);
        let id = id.trim();
        assert!(
            objects::has_loose(&root.join(".git"), id),
            "written ahead, before the commit"
        );
        assert_eq!(git(root, &["cat-file", "-t", id]).trim(), "blob");
        assert_eq!(git(root, &["cat-file", "-p", id]), content);
        let fan_out = root.join(".git/objects").join(&id[..2]);
        let leftovers = std::fs::read_dir(fan_out)
            .expect("fan-out")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("tmp_obj_"))
            .count();
        assert_eq!(leftovers, 0, "no temporary file is left");
        git(root, &["fsck", "--strict", "--no-dangling"]);
    }
}
