//! [`Git::survey`] and [`Git::record`] against `git add --all` into an empty index (what a
//! snapshot was before): the same tree after every kind of change a step can make, through a
//! kept index and a fresh one, and the lists the guard reads.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;

use super::survey::parse_status;
use super::tests::{make_executable, repo_with};
use super::{Git, Listing, Scratch, TreeId};

/// What `git add --all` into a new empty index records: the oracle.
fn added_all(git: &Git) -> TreeId {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = dir.path().join("index");
    let run = |args: &[&str]| {
        let out = git
            .command(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .expect("git");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    run(&["add", "--all", "--", ":/"]);
    TreeId::parse(run(&["write-tree"]).trim()).expect("a tree id")
}

fn linked_worktree() -> (tempfile::TempDir, Git) {
    let (dir, person) = repo_with(&[
        ("src/a.py", "x = 1\n"),
        ("src/deep/b.py", "y = 2\n"),
        ("gone/one.txt", "1\n"),
        ("gone/two.txt", "2\n"),
        ("becomes_dir", "a file\n"),
        ("becomes_link", "a file\n"),
        ("run.sh", "echo hi\n"),
        (".gitignore", "build/\n*.log\n"),
    ]);
    let base = person.head().expect("head").expect("a commit");
    person.worktree_add("1-impl", &base).expect("add");
    let wt = person.linked("1-impl").expect("linked");
    (dir, wt)
}

#[test]
fn a_surveyed_snapshot_is_what_git_add_all_records_after_every_kind_of_change() {
    let (_dir, wt) = linked_worktree();
    let root = wt.root().to_path_buf();
    for scratch in [Scratch::Kept, Scratch::Fresh] {
        assert_eq!(wt.snapshot_with(scratch).expect("snap"), added_all(&wt));
    }
    // Every kind of change at once.
    fs::write(root.join("src/a.py"), "x = 100\n").expect("modify");
    fs::write(root.join("src/new file with spaces.py"), "z\n").expect("add");
    fs::create_dir_all(root.join("fresh/dir")).expect("mkdir");
    fs::write(root.join("fresh/dir/c.py"), "c\n").expect("add deep");
    fs::write(root.join("fresh/ünïcode.txt"), "u\n").expect("add unicode");
    fs::remove_dir_all(root.join("gone")).expect("delete a folder");
    fs::remove_file(root.join("becomes_dir")).expect("rm");
    fs::create_dir_all(root.join("becomes_dir")).expect("file to folder");
    fs::write(root.join("becomes_dir/inner.txt"), "in\n").expect("write");
    fs::remove_file(root.join("becomes_link")).expect("rm");
    symlink("src/a.py", root.join("becomes_link")).expect("file to link");
    make_executable(&root.join("run.sh"));
    fs::create_dir_all(root.join("build")).expect("mkdir");
    fs::write(root.join("build/out.o"), "ignored").expect("ignored");
    fs::write(root.join("src/debug.log"), "ignored").expect("ignored");
    fs::create_dir_all(root.join("empty/folder")).expect("an empty folder");
    let expected = added_all(&wt);
    let survey = wt.survey(Scratch::Kept).expect("survey");
    assert_eq!(
        survey.ignored.iter().cloned().collect::<Vec<_>>(),
        ["build/", "src/debug.log"]
    );
    assert!(
        survey.untracked.contains(&"fresh/dir/c.py".to_owned()),
        "every untracked file on its own: {:?}",
        survey.untracked
    );
    assert_eq!(wt.record(survey).expect("record"), expected);
    assert_eq!(wt.snapshot_with(Scratch::Fresh).expect("fresh"), expected);
    // A folder turned back into a file, a link back into a file: still the same as git's.
    fs::remove_dir_all(root.join("becomes_dir")).expect("rm dir");
    fs::write(root.join("becomes_dir"), "a file again\n").expect("folder to file");
    fs::remove_file(root.join("becomes_link")).expect("rm link");
    fs::write(root.join("becomes_link"), "a file again\n").expect("link to file");
    fs::remove_dir_all(root.join("src")).expect("delete everything under src");
    assert_eq!(
        wt.snapshot_with(Scratch::Kept).expect("kept"),
        added_all(&wt)
    );
}

#[test]
fn regression_a_folder_replaced_by_a_link_records_the_link_not_the_files_behind_it() {
    let (_dir, wt) = linked_worktree();
    let root = wt.root().to_path_buf();
    wt.snapshot_with(Scratch::Kept).expect("first");
    // A second later, so the kept index's entries are not taken out as recorded in the second
    // it was written: git's status names `src/deep/b.py` as gone (it is beyond a link), and
    // `update-index --remove` refuses such a path.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // `src/deep` becomes a link to a folder holding a `b.py` of its own: git must record the
    // link, not read `src/deep/b.py` through it.
    fs::create_dir_all(root.join("elsewhere")).expect("mkdir");
    fs::write(root.join("elsewhere/b.py"), "through the link\n").expect("write");
    fs::remove_dir_all(root.join("src/deep")).expect("rm");
    symlink("../elsewhere", root.join("src/deep")).expect("link");
    assert_eq!(
        wt.snapshot_with(Scratch::Kept).expect("kept"),
        added_all(&wt)
    );
}

#[test]
fn a_nested_repository_is_one_untracked_entry() {
    let (_dir, wt) = linked_worktree();
    let root = wt.root().to_path_buf();
    fs::create_dir_all(root.join("sub")).expect("mkdir");
    Git::at(&root.join("sub"))
        .run(&["init", "-q"])
        .expect("init");
    fs::write(root.join("sub/x"), "x").expect("write");
    let survey = wt.survey(Scratch::Kept).expect("survey");
    assert!(
        survey.untracked.contains(&"sub/".to_owned()),
        "{:?}",
        survey.untracked
    );
}

#[test]
fn status_records_are_read_by_their_kind() {
    let out = concat!(
        "1 .M N... 100644 100644 100644 aaaa bbbb src/a b.py\0",
        "1 M. N... 100644 100644 100644 aaaa bbbb staged-only.py\0",
        "1 .D N... 100644 100644 000000 aaaa aaaa gone.py\0",
        "2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.py\0old.py\0",
        "u UU N... 100644 100644 100644 100644 aaaa bbbb cccc both.py\0",
        "? fresh/c.py\0",
        "? sub/\0",
        "! build/\0",
    );
    let listed = parse_status(out.as_bytes());
    assert_eq!(listed.changed, ["src/a b.py", "both.py"]);
    assert_eq!(listed.gone, ["gone.py"]);
    assert_eq!(listed.untracked, ["fresh/c.py", "sub/"]);
    assert_eq!(listed.ignored.into_iter().collect::<Vec<_>>(), ["build/"]);
}

#[test]
fn a_survey_within_a_folder_records_that_folder_and_leaves_the_rest_to_the_next_full_one() {
    let (_dir, wt) = linked_worktree();
    let root = wt.root().to_path_buf();
    let first = wt.snapshot_with(Scratch::Kept).expect("first");
    fs::create_dir_all(root.join("docs/lineage/1-impl")).expect("mkdir");
    fs::write(root.join("docs/lineage/1-impl/001-lld.md"), "# LLD\n").expect("lineage");
    // A new file outside the folder, which the caller says cannot happen: not recorded here.
    fs::write(root.join("src/new.py"), "n = 1\n").expect("outside");
    let within = wt.survey_within("docs/lineage").expect("survey within");
    assert_eq!(within.untracked, ["docs/lineage/1-impl/001-lld.md"]);
    let tree = wt.record(within).expect("record");
    let changed: Vec<String> = wt
        .changes(&first, &tree)
        .expect("changes")
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(changed, ["docs/lineage/1-impl/001-lld.md"]);
    // The next full survey sees the outside change against what was recorded.
    let full = wt.snapshot_with(Scratch::Kept).expect("full");
    let changed: Vec<String> = wt
        .changes(&tree, &full)
        .expect("changes")
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(changed, ["src/new.py"]);
    assert_eq!(full, added_all(&wt));
}

#[test]
fn regression_a_rewrite_hidden_in_the_second_a_survey_within_wrote_is_seen_by_the_next_full_one() {
    // A survey within a folder writes the kept index too: a file it recorded, rewritten by the
    // next untrusted run in that same second with its size and modification time kept, is
    // still read again by the full survey after that run.
    let (_dir, wt) = linked_worktree();
    let dir = wt.root().join("docs/lineage");
    fs::create_dir_all(&dir).expect("mkdir");
    let note = dir.join("001-note.md");
    wt.snapshot_with(Scratch::Kept).expect("first");
    let mut seen_in_one_second = 0;
    for round in 0..20 {
        fs::write(&note, format!("note {round:02}\n")).expect("write");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        fs::File::options()
            .write(true)
            .open(&note)
            .expect("open")
            .set_modified(old)
            .expect("an old mtime");
        let second = now_secs();
        let within = wt.survey_within("docs/lineage").expect("within");
        let recorded = wt.record(within).expect("record");
        fs::write(&note, format!("evil {round:02}\n")).expect("rewrite");
        fs::File::options()
            .write(true)
            .open(&note)
            .expect("open")
            .set_modified(old)
            .expect("the mtime back");
        let same_second = now_secs() == second;
        let full = wt.snapshot_with(Scratch::Kept).expect("full");
        assert_ne!(recorded, full, "round {round}: the rewrite is seen");
        assert_eq!(full, added_all(&wt));
        seen_in_one_second += usize::from(same_second);
    }
    assert!(seen_in_one_second > 0, "no round fell within one second");
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

#[test]
fn a_name_that_is_not_utf8_is_kept_as_it_is_on_disk_never_mangled() {
    let listed = parse_status(
        b"? new/a\xff.py\0! build\xfe/\0\
          1 .M N... 100644 100644 100644 aaaa bbbb old\xfd.py\0? fine.py\0",
    );
    assert_eq!(listed.untracked, ["fine.py"]);
    assert!(listed.ignored.is_empty() && listed.changed.is_empty());
    let names: Vec<(Vec<u8>, Listing)> = listed
        .undecodable
        .iter()
        .map(|u| (u.path.as_os_str().as_bytes().to_vec(), u.listed))
        .collect();
    assert_eq!(
        names,
        [
            (b"new/a\xff.py".to_vec(), Listing::Untracked),
            (b"build\xfe".to_vec(), Listing::Ignored),
            (b"old\xfd.py".to_vec(), Listing::Changed),
        ]
    );

    // And from git itself: a file the model's code names with bytes that are not UTF-8.
    let (_dir, wt) = linked_worktree();
    let name = std::ffi::OsStr::from_bytes(b"test_\xff.py");
    fs::write(wt.root().join(name), "def test_x(): pass\n").expect("write");
    let survey = wt.survey(Scratch::Kept).expect("survey");
    assert!(survey.untracked.iter().all(|p| !p.contains('\u{fffd}')));
    assert_eq!(
        survey.undecodable,
        [super::Undecodable {
            path: std::path::PathBuf::from(name),
            listed: Listing::Untracked,
        }]
    );
}
