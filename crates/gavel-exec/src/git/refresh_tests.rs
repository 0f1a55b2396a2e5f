//! Re-checking entries git marked suspect, against real git: only an entry whose file is
//! provably what the index says gets its size back, and git agrees with the index written.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::super::index::parse;
use super::super::stage::tests::{git, write};
use super::verify;

/// Seconds since the epoch of `t`.
fn secs(t: SystemTime) -> i64 {
    i64::try_from(t.duration_since(UNIX_EPOCH).expect("after 1970").as_secs()).expect("fits")
}

/// A repository whose index holds `a/one.md` and `a/b/two.md` marked suspect (size 0), their
/// files last changed 100 s ago. Returns the folder, that time and now (seconds).
fn suspect_repo() -> (tempfile::TempDir, i64, i64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    write(root, "a/one.md", "one\n");
    write(root, "a/b/two.md", "two two\n");
    let past = SystemTime::now() - Duration::from_secs(100);
    for name in ["a/one.md", "a/b/two.md"] {
        set_mtime(&root.join(name), past);
    }
    git(root, &["add", "-A"]);
    mark_all_suspect(root);
    (dir, secs(past), secs(SystemTime::now()))
}

fn set_mtime(path: &Path, time: SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .expect("open")
        .set_modified(time)
        .expect("set mtime");
}

fn index_sizes(root: &Path) -> Vec<(String, u32)> {
    let bytes = fs::read(root.join(".git/index")).expect("index");
    let (_, entries, _) = parse(&bytes).expect("parse");
    entries
        .iter()
        .map(|e| {
            let size = u32::from_be_bytes(e.raw[36..40].try_into().expect("4 bytes"));
            (String::from_utf8_lossy(e.name).into_owned(), size)
        })
        .collect()
}

#[test]
fn verify_gives_back_the_real_sizes_of_unchanged_files() {
    let (dir, _, now) = suspect_repo();
    let root = dir.path();
    assert_eq!(
        index_sizes(root),
        [("a/b/two.md".to_owned(), 0), ("a/one.md".to_owned(), 0)]
    );
    let bytes = fs::read(root.join(".git/index")).expect("index");
    let (_, entries, _) = parse(&bytes).expect("parse");
    assert_eq!(verify(root, &entries, 0, now), [(0, 8), (1, 4)]);
}

#[test]
fn an_entry_changed_since_or_as_new_as_now_or_under_attributes_is_left_to_git() {
    let (dir, changed, now) = suspect_repo();
    let root = dir.path();
    let bytes = fs::read(root.join(".git/index")).expect("index");
    let (_, entries, _) = parse(&bytes).expect("parse");
    // Changed in this very second: the index written now could not prove it unchanged.
    assert_eq!(verify(root, &entries, 0, changed), []);

    // Another content under the same stat data: the blob id decides.
    let mut forged = parse(&bytes).expect("parse").1;
    forged[1].raw.to_mut()[40] ^= 0xff;
    assert_eq!(verify(root, &forged, 0, now), [(0, 8)]);

    // Rewritten (its mtime put back): the change time differs.
    let mtime = fs::metadata(root.join("a/one.md"))
        .expect("meta")
        .modified()
        .expect("mtime");
    fs::write(root.join("a/one.md"), "eno\n").expect("rewrite");
    set_mtime(&root.join("a/one.md"), mtime);
    assert_eq!(verify(root, &entries, 0, now), [(0, 8)]);

    // An attributes file above may convert what git hashes.
    write(root, "a/b/.gitattributes", "*.md text eol=crlf\n");
    assert_eq!(verify(root, &entries, 0, now), []);
}

/// Zeroes the size of every entry of the index at `root`, as git marks entries it cannot
/// trust, keeping the rest (and a valid checksum).
fn mark_all_suspect(root: &Path) {
    use sha1::{Digest, Sha1};
    let bytes = fs::read(root.join(".git/index")).expect("index");
    let (version, entries, extensions) = parse(&bytes).expect("parse");
    let mut body = b"DIRC".to_vec();
    body.extend_from_slice(&version.to_be_bytes());
    body.extend_from_slice(&u32::try_from(entries.len()).expect("count").to_be_bytes());
    for entry in &entries {
        let mut raw = entry.raw.to_vec();
        raw[36..40].copy_from_slice(&[0; 4]);
        body.extend_from_slice(&raw);
    }
    for (sig, data) in extensions {
        body.extend_from_slice(&sig);
        body.extend_from_slice(&u32::try_from(data.len()).expect("len").to_be_bytes());
        body.extend_from_slice(data);
    }
    let sum = Sha1::digest(&body);
    body.extend_from_slice(&sum);
    fs::write(root.join(".git/index"), body).expect("write index");
}

/// A repository whose last commit's two files are marked suspect in the index (and 100 s old),
/// with a new file to stage; stages it (`plain_objects` as given) and returns the sizes the
/// index then holds.
fn stage_after_a_commit(root: &Path, plain_objects: bool) -> Vec<(String, u32)> {
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.invalid"]);
    write(root, "docs/lineage/done/1-x/001-brief.md", "# X\n");
    write(root, "docs/issues/0001-x.md", "---\nnumber: 1\n---\n");
    let past = SystemTime::now() - Duration::from_secs(100);
    for name in [
        "docs/lineage/done/1-x/001-brief.md",
        "docs/issues/0001-x.md",
    ] {
        set_mtime(&root.join(name), past);
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "run 1"]);
    mark_all_suspect(root);
    assert!(index_sizes(root).iter().all(|(_, size)| *size == 0));

    write(root, "docs/issues/0002-y.md", "---\nnumber: 2\n---\n");
    let config = super::super::config::Config::from_files(&[root.join(".git/config")])
        .expect("readable config");
    let staged = super::super::stage::intend_to_add_in(
        root,
        &["docs/issues/0002-y.md".to_owned()],
        &config,
        plain_objects,
        None,
        &mut |_| {},
    )
    .expect("staged");
    assert_eq!(staged.added, 1);
    index_sizes(root)
}

#[test]
fn where_git_may_convert_files_the_suspect_entries_are_left_to_git() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(
        stage_after_a_commit(dir.path(), false),
        [
            ("docs/issues/0001-x.md".to_owned(), 0),
            ("docs/issues/0002-y.md".to_owned(), 18),
            ("docs/lineage/done/1-x/001-brief.md".to_owned(), 0),
        ]
    );
}

#[test]
fn staging_a_new_file_gives_the_last_commit_s_files_their_sizes_back_and_git_agrees() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let sizes = stage_after_a_commit(root, true);
    assert_eq!(
        sizes,
        [
            ("docs/issues/0001-x.md".to_owned(), 18),
            ("docs/issues/0002-y.md".to_owned(), 18),
            ("docs/lineage/done/1-x/001-brief.md".to_owned(), 4),
        ]
    );
    // git trusts what was written: the old files are unchanged, the new one is to be added.
    assert_eq!(
        git(root, &["diff-files", "--name-only"]),
        "docs/issues/0002-y.md\n"
    );
    git(
        root,
        &[
            "commit",
            "-q",
            "--include",
            "-m",
            "run 2",
            "--",
            "docs/issues/0002-y.md",
        ],
    );
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}

#[test]
fn an_entry_changed_in_the_second_its_index_was_written_is_suspect_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    write(root, "a/one.md", "one\n");
    let past = SystemTime::now() - Duration::from_secs(100);
    set_mtime(&root.join("a/one.md"), past);
    git(root, &["add", "-A"]);
    let bytes = fs::read(root.join(".git/index")).expect("index");
    let (_, entries, _) = parse(&bytes).expect("parse");
    let now = secs(SystemTime::now());
    assert_eq!(index_sizes(root), [("a/one.md".to_owned(), 4)]);
    // Written in an index of that same second: suspect, and checked.
    assert_eq!(verify(root, &entries, secs(past), now), [(0, 4)]);
    // In an older index's second: trusted as it is, nothing to check.
    assert_eq!(verify(root, &entries, secs(past) + 1, now), []);
    // A recorded size the file no longer has is left to git.
    fs::write(root.join("a/one.md"), "one more\n").expect("rewrite");
    set_mtime(&root.join("a/one.md"), past);
    assert_eq!(verify(root, &entries, secs(past), now), []);
}
