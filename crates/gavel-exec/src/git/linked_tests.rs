//! A linked worktree as gavel's git reaches it ([`Git::linked`]): by its git folder, never by
//! the `.git` pointer in it, which the model's code could rewrite.

use std::fs;

use super::tests::repo_with;

#[test]
fn regression_a_rewritten_git_pointer_does_not_move_gavels_git_onto_the_persons_branch() {
    let (dir, person) = repo_with(&[("base.md", "base\n")]);
    let base = person.head().expect("head").expect("a commit");
    person.worktree_add("1-impl", &base).expect("add");
    let wt = person.linked("1-impl").expect("linked");
    assert!(wt.linkage_intact());
    // The person has a change staged in their checkout.
    fs::write(dir.path().join("staged.md"), "staged\n").expect("write");
    person.run(&["add", "staged.md"]).expect("stage");

    // The attack: the worktree's pointer now names the person's repository.
    let pointer = wt.root().join(".git");
    fs::write(
        &pointer,
        format!("gitdir: {}\n", dir.path().join(".git").display()),
    )
    .expect("rewrite the pointer");
    assert!(!wt.linkage_intact(), "the changed linkage is seen");

    // gavel's git still acts on the worktree: its commit lands on gavel/1-impl, and the
    // person's branch and staged change are untouched.
    fs::write(wt.root().join("code.py"), "x = 1\n").expect("write");
    wt.run(&["add", "--all"]).expect("add in the worktree");
    wt.run(&["commit", "-q", "-m", "work"])
        .expect("commit in the worktree");
    wt.run(&["reset", "--soft", "-q", &base])
        .expect("reset in the worktree");
    assert_eq!(person.head().expect("head"), Some(base.clone()));
    assert_eq!(
        person
            .run(&["diff", "--cached", "--name-only"])
            .expect("staged"),
        "staged.md\n"
    );
    let branch = person
        .run(&["log", "-1", "--format=%s", "gavel/1-impl@{1}"])
        .expect("the worktree's branch moved");
    assert_eq!(branch.trim(), "work");

    // And the pointer is put back as git made it.
    wt.restore_linkage().expect("restore");
    assert!(wt.linkage_intact());
    let plain = super::Git::at(wt.root());
    assert_eq!(
        plain
            .run(&["rev-parse", "--abbrev-ref", "HEAD"])
            .expect("head")
            .trim(),
        "gavel/1-impl"
    );
}

#[test]
fn a_linked_worktrees_hooks_do_not_run() {
    let (dir, person) = repo_with(&[("base.md", "base\n")]);
    let hook = dir.path().join(".git/hooks/pre-commit");
    fs::create_dir_all(hook.parent().expect("hooks")).expect("mkdir");
    fs::write(
        &hook,
        "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/hook-ran\"\nexit 1\n",
    )
    .expect("hook");
    super::tests::make_executable(&hook);
    person.worktree_add("w", "HEAD").expect("add");
    let wt = person.linked("w").expect("linked");
    fs::write(wt.root().join("f"), "f\n").expect("write");
    wt.run(&["add", "f"]).expect("add");
    wt.run(&["commit", "-q", "-m", "no hook"])
        .expect("a commit no hook refuses");
    assert!(!wt.root().join("hook-ran").exists());
    assert!(person.linked("no-such").is_err());
}
