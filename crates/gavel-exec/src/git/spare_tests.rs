//! Spare worktrees (`spare.rs`): a retired worktree is taken by the next `worktree_add`,
//! brought to the new base with nothing of the last run left in it, whatever that run's code
//! did to the files.

use std::fs;
use std::time::Duration;

use super::tests::repo_with;
use super::{Git, Scratch, TreeId};

fn base_tree(git: &Git, commit: &str) -> TreeId {
    TreeId::parse(
        git.run(&["rev-parse", &format!("{commit}^{{tree}}")])
            .expect("tree")
            .trim(),
    )
    .expect("a tree id")
}

/// A repository with two commits, and a worktree `1-impl` at the first one, boxed-run style
/// (its snapshots through the kept index).
fn setup() -> (tempfile::TempDir, Git, String, String) {
    let (dir, person) = repo_with(&[
        ("a.py", "x = 1\n"),
        ("tests/test_a.py", "assert True\n"),
        (".gitignore", "build/\n"),
    ]);
    let first = person.head().expect("head").expect("a commit");
    fs::write(dir.path().join("b.py"), "y = 2\n").expect("write");
    person.run(&["add", "-A"]).expect("add");
    person
        .run(&["commit", "-q", "-m", "second"])
        .expect("commit");
    let second = person.head().expect("head").expect("a commit");
    person.worktree_add("1-impl", &first).expect("add");
    (dir, person, first, second)
}

#[test]
fn a_retired_worktree_is_taken_by_the_next_run_with_nothing_of_the_last_left() {
    let (dir, person, _first, second) = setup();
    let wt = person.linked("1-impl").expect("linked");
    wt.snapshot_with(Scratch::Kept).expect("snapshot");
    // What the last run left: a change, a new file, build output, a nested repository.
    fs::write(wt.root().join("a.py"), "x = 999\n").expect("write");
    fs::write(wt.root().join("new.py"), "n\n").expect("write");
    fs::create_dir_all(wt.root().join("build/deep")).expect("mkdir");
    fs::write(wt.root().join("build/deep/conftest.py"), "steer").expect("write");
    fs::create_dir_all(wt.root().join("sub")).expect("mkdir");
    Git::at(&wt.root().join("sub"))
        .run(&["init", "-q"])
        .expect("init");
    assert!(person.worktree_retire("1-impl", 1).expect("retire"));
    person
        .run(&["branch", "-D", "gavel/1-impl"])
        .expect("the branch is free to go");
    assert!(
        person.worktrees().expect("list").is_empty(),
        "a spare is not a run's worktree"
    );
    assert_eq!(person.spares().expect("spares").len(), 1);

    let taken = person.worktree_add("2-impl", &second).expect("add");
    assert!(
        person.spares().expect("spares").is_empty(),
        "the spare was taken"
    );
    assert_eq!(taken.branch.as_deref(), Some("gavel/2-impl"));
    assert_eq!(taken.head.as_deref(), Some(second.as_str()));
    let wt = person.linked("2-impl").expect("linked");
    assert_eq!(
        fs::read_to_string(wt.root().join("a.py")).expect("a"),
        "x = 1\n"
    );
    assert_eq!(
        fs::read_to_string(wt.root().join("b.py")).expect("b"),
        "y = 2\n"
    );
    for gone in ["new.py", "build", "sub"] {
        assert!(!wt.root().join(gone).exists(), "{gone} was left");
    }
    assert_eq!(wt.snapshot().expect("fresh"), base_tree(&person, &second));
    assert!(dir.path().join(".gavel/worktrees/2-impl").is_dir());
}

#[test]
fn regression_a_file_rewritten_behind_the_stat_data_does_not_survive_into_the_next_run() {
    let (_dir, person, first, _second) = setup();
    let wt = person.linked("1-impl").expect("linked");
    let a = wt.root().join("a.py");
    wt.snapshot_with(Scratch::Kept).expect("snapshot");
    // The last run's code rewrites the file as committed with its modification time put
    // back and has git stage it (git writes the worktree's index in this second, recording
    // the file's change time, in this second too), then rewrites it again in the same second,
    // keeping its size and its modification time: to git's checkout the file looks as
    // committed, and the base is the same commit, so nothing rewrites it.
    std::thread::sleep(Duration::from_millis(1100));
    let rewrite = |text: &str| {
        let mtime = fs::metadata(&a).expect("meta").modified().expect("mtime");
        fs::write(&a, text).expect("rewrite");
        fs::File::options()
            .write(true)
            .open(&a)
            .expect("open")
            .set_modified(mtime)
            .expect("mtime back");
    };
    rewrite("x = 1\n");
    wt.run(&["add", "a.py"]).expect("stage");
    rewrite("x = 7\n");
    assert!(person.worktree_retire("1-impl", 1).expect("retire"));
    person
        .run(&["branch", "-D", "gavel/1-impl"])
        .expect("branch");
    person.worktree_add("2-impl", &first).expect("add");
    let wt = person.linked("2-impl").expect("linked");
    assert_eq!(
        fs::read_to_string(wt.root().join("a.py")).expect("a"),
        "x = 1\n",
        "the next run starts from the base, not from what the last run hid"
    );
}

#[test]
fn no_spare_is_kept_past_the_limit_or_from_a_worktree_whose_link_was_rewritten() {
    let (_dir, person, first, _second) = setup();
    assert!(!person.worktree_retire("1-impl", 0).expect("retire"));
    assert!(person.spares().expect("spares").is_empty());
    assert!(person.worktrees().expect("list").is_empty(), "removed");

    person.worktree_add("3-impl", &first).expect("add");
    let wt = person.linked("3-impl").expect("linked");
    fs::write(wt.root().join(".git"), "gitdir: /elsewhere\n").expect("rewrite the link");
    assert!(!person.worktree_retire("3-impl", 1).expect("retire"));
    assert!(person.spares().expect("spares").is_empty());

    person.worktree_add("4-impl", &first).expect("add");
    person.worktree_add("5-impl", &first).expect("add");
    assert!(person.worktree_retire("4-impl", 1).expect("retire"));
    assert!(
        !person.worktree_retire("5-impl", 1).expect("retire"),
        "one is kept"
    );
    assert_eq!(person.spares().expect("spares").len(), 1);
}

#[test]
fn a_spare_checks_out_a_branch_left_by_an_earlier_worktree_of_that_name() {
    let (dir, person, first, second) = setup();
    assert!(person.worktree_retire("1-impl", 1).expect("retire"));
    person
        .run(&["branch", "-f", "gavel/1-impl", &second])
        .expect("an earlier run's branch");
    let taken = person.worktree_add("1-impl", &first).expect("add");
    assert_eq!(taken.head.as_deref(), Some(second.as_str()));
    assert!(dir.path().join(".gavel/worktrees/1-impl/b.py").is_file());
}

#[test]
fn a_spare_taken_half_way_is_made_again_by_the_next_add() {
    let (dir, person, first, _second) = setup();
    assert!(person.worktree_retire("1-impl", 1).expect("retire"));
    person
        .run(&["branch", "-D", "gavel/1-impl"])
        .expect("branch");
    // A gavel stopped after moving the spare to its new name and locking it.
    let spare = person.spares().expect("spares").remove(0);
    let target = dir.path().join(".gavel/worktrees/2-impl");
    let target = target.to_string_lossy();
    person
        .run(&["worktree", "move", &spare.to_string_lossy(), &target])
        .expect("move");
    person
        .run(&[
            "worktree",
            "lock",
            "--reason",
            super::spare::TAKING,
            &target,
        ])
        .expect("lock");
    fs::write(dir.path().join(".gavel/worktrees/2-impl/left.txt"), "x").expect("write");
    let made = person.worktree_add("2-impl", &first).expect("add");
    assert_eq!(made.branch.as_deref(), Some("gavel/2-impl"));
    assert!(!dir.path().join(".gavel/worktrees/2-impl/left.txt").exists());
    assert!(
        !person
            .run(&["worktree", "list", "--porcelain"])
            .expect("list")
            .contains("locked"),
        "nothing is left locked"
    );
}
