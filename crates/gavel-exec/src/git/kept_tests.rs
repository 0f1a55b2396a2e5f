//! Snapshots through a worktree's kept index ([`Scratch::Kept`]): only changed files are
//! hashed, and a change is still seen when the model's code hides it from the stat data it can
//! set (a rewrite that keeps the size and puts the modification time back).

use std::fs;
use std::time::{Duration, SystemTime};

use super::tests::repo_with;
use super::{Git, Scratch};

/// `path` rewritten with `text` (of the same length), its modification time set back to what
/// it was.
fn rewrite_keeping_mtime(path: &std::path::Path, text: &str) {
    let mtime = fs::metadata(path).expect("meta").modified().expect("mtime");
    fs::write(path, text).expect("rewrite");
    let file = fs::File::options().write(true).open(path).expect("open");
    file.set_modified(mtime).expect("set the mtime back");
}

fn linked_worktree() -> (tempfile::TempDir, Git) {
    let (dir, person) = repo_with(&[("tests/test_a.py", "assert 1 == 1\n"), ("a.py", "x = 1\n")]);
    let base = person.head().expect("head").expect("a commit");
    person.worktree_add("1-impl", &base).expect("add");
    let wt = person.linked("1-impl").expect("linked");
    (dir, wt)
}

#[test]
fn a_kept_snapshot_is_the_fresh_one_and_lives_in_the_worktree_s_git_folder() {
    let (dir, wt) = linked_worktree();
    let fresh = wt.snapshot().expect("fresh");
    let kept = wt.snapshot_with(Scratch::Kept).expect("kept");
    assert_eq!(fresh, kept);
    assert!(
        dir.path()
            .join(".git/worktrees/1-impl/gavel-snapshot-index")
            .is_file(),
        "the kept index is in the worktree's git folder, out of the box's reach"
    );
    assert!(!wt.root().join("gavel-snapshot-index").exists());
    // Unchanged files: the same id again; a new file and a change are recorded.
    assert_eq!(wt.snapshot_with(Scratch::Kept).expect("again"), kept);
    fs::write(wt.root().join("new.py"), "y = 2\n").expect("write");
    fs::write(wt.root().join("a.py"), "x = 22\n").expect("write");
    let after = wt.snapshot_with(Scratch::Kept).expect("after");
    assert_eq!(after, wt.snapshot().expect("fresh after"));
    let changes: Vec<String> = wt
        .changes(&kept, &after)
        .expect("changes")
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(changes, ["a.py", "new.py"]);
    // Put back through the kept index: the new file goes, the change is undone.
    wt.reset_to_with(&kept, Scratch::Kept).expect("reset");
    assert!(!wt.root().join("new.py").exists());
    assert_eq!(
        fs::read_to_string(wt.root().join("a.py")).expect("read"),
        "x = 1\n"
    );
    assert_eq!(wt.snapshot_with(Scratch::Kept).expect("reset snap"), kept);
}

#[test]
fn regression_a_test_rewritten_with_its_size_and_mtime_kept_is_still_a_change() {
    let (_dir, wt) = linked_worktree();
    let test = wt.root().join("tests/test_a.py");
    let before = wt.snapshot_with(Scratch::Kept).expect("before");
    // Past git's racy window (the index was written in an earlier second), so only the stat
    // data can tell: the size and the modification time are as they were, the change time
    // (which no unprivileged process sets) is not.
    std::thread::sleep(Duration::from_millis(1100));
    rewrite_keeping_mtime(&test, "assert 1 == 2\n");
    assert!(
        fs::metadata(&test)
            .expect("meta")
            .modified()
            .expect("mtime")
            < SystemTime::now()
    );
    let after = wt.snapshot_with(Scratch::Kept).expect("after");
    assert_ne!(before, after, "the edited test is seen");
    assert_eq!(
        after,
        wt.snapshot().expect("fresh"),
        "as a fresh snapshot sees it"
    );

    // The configuration cannot turn the change time off for gavel's snapshots.
    wt.run(&["config", "core.trustctime", "false"])
        .expect("config");
    wt.run(&["config", "core.checkStat", "minimal"])
        .expect("config");
    let before = after;
    std::thread::sleep(Duration::from_millis(1100));
    rewrite_keeping_mtime(&test, "assert 2 == 2\n");
    let after = wt.snapshot_with(Scratch::Kept).expect("after");
    assert_ne!(before, after, "seen whatever core.trustctime says");
}

#[test]
fn regression_a_rewrite_in_the_second_the_index_was_written_is_still_a_change() {
    // git compares times to the second. A file whose modification time is old (so git does not
    // treat it as racily clean) but whose change time falls in the second the index is
    // written, rewritten in that same second with its size and modification time kept, has the
    // same stat data to git. gavel takes such files out of the kept index first.
    let (_dir, wt) = linked_worktree();
    let test = wt.root().join("tests/test_a.py");
    let mut seen_in_one_second = 0;
    for round in 0..20 {
        fs::write(&test, format!("assert {round} == {round}\n")).expect("write");
        let old = SystemTime::now() - Duration::from_secs(10);
        let file = fs::File::options().write(true).open(&test).expect("open");
        file.set_modified(old)
            .expect("an old mtime; the change time is now");
        let second = now_secs();
        let before = wt.snapshot_with(Scratch::Kept).expect("before");
        rewrite_keeping_mtime(&test, &format!("assert {round} != {round}\n"));
        let same_second = now_secs() == second;
        let after = wt.snapshot_with(Scratch::Kept).expect("after");
        assert_ne!(before, after, "round {round}: the rewrite is seen");
        assert_eq!(after, wt.snapshot().expect("fresh"));
        seen_in_one_second += usize::from(same_second);
    }
    assert!(seen_in_one_second > 0, "no round fell within one second");
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

#[test]
fn the_first_kept_snapshot_starts_from_the_checkout_s_index_and_still_sees_a_hidden_rewrite() {
    let (dir, wt) = linked_worktree();
    let kept = dir
        .path()
        .join(".git/worktrees/1-impl/gavel-snapshot-index");
    assert!(!kept.exists());
    // A rewrite after the checkout, before any snapshot, hiding in the stat data it can set;
    // in the checkout's own second and a second later.
    rewrite_keeping_mtime(&wt.root().join("a.py"), "x = 2\n");
    let first = wt.snapshot_with(Scratch::Kept).expect("first");
    assert!(kept.is_file(), "seeded from the worktree's index");
    assert_eq!(first, wt.snapshot().expect("fresh"));
    std::thread::sleep(Duration::from_millis(1100));
    rewrite_keeping_mtime(&wt.root().join("a.py"), "x = 3\n");
    assert_eq!(
        wt.snapshot_with(Scratch::Kept).expect("second"),
        wt.snapshot().expect("fresh")
    );
}
