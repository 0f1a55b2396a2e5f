//! Tests of the git runner against real repositories in temporary folders.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::testutil;

fn repo() -> (tempfile::TempDir, Git) {
    let dir = tempfile::tempdir().expect("tempdir");
    let git = Git::at(dir.path());
    git.run(&["init", "-q"]).expect("init");
    git.run(&["config", "user.name", "t"]).expect("config");
    git.run(&["config", "user.email", "t@example.invalid"])
        .expect("config");
    git.run(&["config", "commit.gpgsign", "false"])
        .expect("config");
    (dir, git)
}

/// A repository with one commit of `files`.
pub(super) fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Git) {
    let (dir, git) = repo();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
    git.run(&["add", "-A"]).expect("add");
    git.run(&["commit", "-q", "-m", "base"]).expect("commit");
    (dir, git)
}

pub(super) fn make_executable(path: &Path) {
    let mut perms = fs::metadata(path).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(path, perms).expect("chmod");
}

#[test]
fn a_moved_tracked_folder_is_committed_as_a_rename() {
    let (dir, git) = repo();
    fs::create_dir_all(dir.path().join("active/x")).expect("mkdir");
    fs::write(dir.path().join("active/x/001.md"), "one").expect("write");
    fs::write(dir.path().join("active/xy.md"), "a sibling").expect("write");
    git.run(&["add", "-A"]).expect("add");
    git.run(&["commit", "-q", "-m", "base"]).expect("commit");
    fs::create_dir_all(dir.path().join("done")).expect("mkdir");
    fs::rename(dir.path().join("active/x"), dir.path().join("done/1-x")).expect("move");
    fs::remove_file(dir.path().join("active/xy.md")).expect("rm");
    let paths = [PathBuf::from("active/x/"), PathBuf::from("done/1-x")];
    git.commit_paths(&paths, "gavel: move", "gavel-k2", PriorAttempt::None)
        .expect("commit");
    let files = git
        .run(&["show", "--name-status", "--no-renames", "--format=", "HEAD"])
        .expect("show");
    assert_eq!(files, "D\tactive/x/001.md\nA\tdone/1-x/001.md\n");
    let status = git.run(&["status", "--porcelain"]).expect("status");
    assert_eq!(
        status, " D active/xy.md\n",
        "a path that only shares a prefix is left alone"
    );
}

#[test]
fn a_commit_retried_after_a_failed_hook_takes_the_staged_deletion_too() {
    let (dir, git) = repo_with(&[("ideas/active/x.md", "idea")]);
    // A pre-commit hook that fails once, after gavel's `git add` has staged the move.
    let hook = dir.path().join(".git/hooks/pre-commit");
    fs::write(
        &hook,
        "#!/bin/sh\nif [ -e .git/failed-once ]; then exit 0; fi\ntouch .git/failed-once\nexit 1\n",
    )
    .expect("hook");
    make_executable(&hook);
    fs::create_dir_all(dir.path().join("ideas/done")).expect("mkdir");
    fs::rename(
        dir.path().join("ideas/active/x.md"),
        dir.path().join("ideas/done/1-x.md"),
    )
    .expect("move");
    let paths = [
        PathBuf::from("ideas/active/x.md"),
        PathBuf::from("ideas/done/1-x.md"),
    ];
    let first = git.commit_paths(&paths, "gavel: file", "gavel-k3", PriorAttempt::None);
    assert!(
        matches!(first, Err(GitError::Failed { code: Some(1), .. })),
        "the hook fails the first attempt: {first:?}"
    );
    let since = git.head().expect("head");
    git.commit_paths(
        &paths,
        "gavel: file",
        "gavel-k3",
        PriorAttempt::Possible {
            since: since.as_deref(),
        },
    )
    .expect("the retry commits");
    let files = git
        .run(&["show", "--name-status", "--no-renames", "--format=", "HEAD"])
        .expect("show");
    assert_eq!(files, "D\tideas/active/x.md\nA\tideas/done/1-x.md\n");
    let status = git.run(&["status", "--porcelain"]).expect("status");
    assert_eq!(
        status, "",
        "nothing is left staged for the person's next commit"
    );
}

#[test]
fn commits_only_its_paths_and_never_twice() {
    let (dir, git) = repo();
    fs::write(dir.path().join("old.md"), "idea").expect("write");
    fs::write(dir.path().join("mine.txt"), "the person's").expect("write");
    git.run(&["add", "old.md", "mine.txt"]).expect("add");
    git.run(&["commit", "-q", "-m", "base", "--", "old.md"])
        .expect("commit");
    let base = git.head().expect("head");
    fs::rename(dir.path().join("old.md"), dir.path().join("new.md")).expect("move");
    let paths = [
        PathBuf::from("old.md"),
        PathBuf::from("new.md"),
        PathBuf::from("never-existed"),
    ];
    let first = git
        .commit_paths(&paths, "gavel: file", "gavel-k1", PriorAttempt::None)
        .expect("commit");
    let since = base.as_deref();
    let again = git
        .commit_paths(
            &paths,
            "gavel: file",
            "gavel-k1",
            PriorAttempt::Possible { since },
        )
        .expect("replay");
    assert_eq!(first, again, "a replay finds the commit by its trailer");
    assert_eq!(
        first,
        git.run(&["rev-parse", "HEAD"]).expect("rev-parse").trim(),
    );
    let files = git
        .run(&["show", "--name-status", "--no-renames", "--format=", "HEAD"])
        .expect("show");
    assert_eq!(files, "A\tnew.md\nD\told.md\n");
    let staged = git.run(&["diff", "--cached", "--name-only"]).expect("diff");
    assert_eq!(
        staged, "mine.txt\n",
        "what the person staged stays staged, uncommitted"
    );
    assert!(
        git.find_step_commit("gavel-k", None)
            .expect("search")
            .is_none(),
        "keys match whole lines"
    );
}

#[test]
fn a_first_commit_needs_no_index_and_leaves_ignored_files_out() {
    let (dir, git) = repo();
    let root = dir.path();
    fs::write(root.join(".gitignore"), "*.log\n").expect("write");
    fs::create_dir_all(root.join("docs/run")).expect("mkdir");
    fs::write(root.join("docs/run/a.md"), "a\n").expect("write");
    fs::write(root.join("docs/run/debug.log"), "noise\n").expect("write");
    fs::write(root.join("b.md"), "b\n").expect("write");
    let paths = [PathBuf::from("docs"), PathBuf::from("b.md")];
    let id = git
        .commit_paths(&paths, "first", "gavel-first", PriorAttempt::None)
        .expect("commit");
    assert_eq!(id, git.head().expect("head").expect("a commit"));
    assert_eq!(
        git.run(&["ls-files"]).expect("ls-files"),
        "b.md\ndocs/run/a.md\n"
    );
    assert_eq!(
        git.run(&["status", "--porcelain"]).expect("status"),
        "?? .gitignore\n",
        "only the named paths were committed, ignored files stayed out"
    );
    git.run(&["fsck", "--strict"]).expect("fsck");
}

/// Regression: the workflows' git runner kept `GIT_DIR`, `GIT_INDEX_FILE` and `GIT_WORK_TREE`,
/// so gavel run from a git hook (where git sets them) read and committed into the hook's
/// repository and index instead of its own.
#[test]
fn regression_git_run_from_a_hook_commits_into_its_own_repository() {
    let (dir, git) = repo_with(&[("base.md", "base")]);
    let (other, other_git) = repo_with(&[("theirs.md", "theirs")]);
    let other_head = other_git.head().expect("head");
    let other_index = fs::read(other.path().join(".git/index")).expect("index");
    let git_dir = other.path().join(".git");
    let index = git_dir.join("index");
    testutil::rerun(
        "git::tests::child_commits_inside_a_hook_environment",
        &dir.path().display().to_string(),
        false,
        &[
            ("GIT_DIR", Some(&git_dir.display().to_string())),
            ("GIT_INDEX_FILE", Some(&index.display().to_string())),
            ("GIT_WORK_TREE", Some(&other.path().display().to_string())),
        ],
    );
    let commit = git.find_step_commit("gavel-hook", None).expect("search");
    assert!(commit.is_some(), "the commit is in gavel's own repository");
    let files = git
        .run(&["show", "--name-only", "--format=", "HEAD"])
        .expect("show");
    assert_eq!(files, "new.md\n");
    assert_eq!(
        other_git.head().expect("head"),
        other_head,
        "not committed there"
    );
    assert_eq!(
        fs::read(other.path().join(".git/index")).expect("index"),
        other_index,
        "the hook's index is untouched"
    );
}

#[test]
#[ignore = "run by regression_git_run_from_a_hook_commits_into_its_own_repository"]
fn child_commits_inside_a_hook_environment() {
    let Some(root) = testutil::child_arg() else {
        return;
    };
    assert!(
        std::env::var_os("GIT_DIR").is_some(),
        "a hook's environment"
    );
    let root = PathBuf::from(root);
    let git = Git::discover(&root).expect("discover");
    assert_eq!(
        git.root().canonicalize().expect("canonical"),
        root.canonicalize().expect("canonical"),
        "discovered its own repository, not the hook's"
    );
    fs::write(root.join("new.md"), "new").expect("write");
    git.commit_paths(
        &[PathBuf::from("new.md")],
        "gavel: from a hook",
        "gavel-hook",
        PriorAttempt::None,
    )
    .expect("commit");
}

#[test]
fn a_git_stopped_by_a_signal_is_killed_not_failed() {
    let (dir, git) = repo_with(&[("a.md", "a")]);
    let hook = dir.path().join(".git/hooks/pre-commit");
    // The hook's parent is the `git commit` gavel started.
    // SIGTERM, not SIGINT: a job started in the background by a non-interactive shell (as CI
    // may start this suite) inherits SIGINT ignored, and git would then not die of it.
    fs::write(&hook, "#!/bin/sh\nkill -TERM $PPID\nexit 1\n").expect("hook");
    make_executable(&hook);
    fs::write(dir.path().join("a.md"), "changed").expect("write");
    let err = git
        .commit_paths(
            &[PathBuf::from("a.md")],
            "m",
            "gavel-sig",
            PriorAttempt::None,
        )
        .expect_err("interrupted");
    assert!(err.is_killed(), "{err:?}");
}

#[test]
fn a_worktree_added_twice_is_one_worktree_and_removing_cleans_up() {
    let (_dir, git) = repo_with(&[("base.md", "base")]);
    let base = git.head().expect("head").expect("a commit");
    let first = git.worktree_add("k1", &base).expect("add");
    assert_eq!(first.name, "k1");
    assert_eq!(first.branch.as_deref(), Some("gavel/k1"));
    assert_eq!(first.head.as_deref(), Some(base.as_str()));
    assert_eq!(
        fs::read_to_string(first.path.join("base.md")).expect("read"),
        "base"
    );
    fs::write(first.path.join("work.txt"), "the agent's").expect("write");

    let again = git.worktree_add("k1", &base).expect("replayed add");
    assert_eq!(again, first, "the same worktree");
    assert!(first.path.join("work.txt").exists(), "left as it was");
    assert_eq!(git.worktrees().expect("list"), std::slice::from_ref(&first));

    assert!(git.worktree_remove("k1").expect("remove"));
    assert!(!first.path.exists(), "the folder is gone");
    assert!(git.worktrees().expect("list").is_empty());
    assert!(!git.worktree_remove("k1").expect("again"), "a no-op");
    let listed = git.run(&["worktree", "list", "--porcelain"]).expect("list");
    assert!(!listed.contains("k1"), "git forgot it: {listed}");

    let branch = git
        .run(&["rev-parse", "gavel/k1"])
        .expect("the branch stays");
    assert_eq!(branch.trim(), base);
    let back = git.worktree_add("k1", "no-such-base").expect("re-add");
    assert_eq!(back.branch.as_deref(), Some("gavel/k1"), "its branch again");
}

#[test]
fn a_worktree_add_killed_half_way_is_made_again() {
    let (_dir, git) = repo_with(&[("base.md", "base")]);
    let first = git.worktree_add("k2", "HEAD").expect("add");
    // What a `git worktree add` killed during its checkout leaves: the worktree still locked
    // as "initializing", files missing.
    let dot_git = fs::read_to_string(first.path.join(".git")).expect(".git file");
    let admin = PathBuf::from(dot_git.trim().trim_start_matches("gitdir: "));
    fs::write(admin.join("locked"), "initializing").expect("lock");
    fs::remove_file(first.path.join("base.md")).expect("rm");
    let again = git.worktree_add("k2", "HEAD").expect("re-add");
    assert_eq!(again.path, first.path);
    assert!(again.path.join("base.md").exists(), "checked out in full");
    let listed = git.run(&["worktree", "list", "--porcelain"]).expect("list");
    assert!(!listed.contains("locked"), "{listed}");
}

#[test]
fn worktree_names_that_are_not_one_folder_are_refused() {
    let (_dir, git) = repo_with(&[("base.md", "base")]);
    for name in ["../escape", "a/b", "", "x.lock"] {
        assert!(
            matches!(
                git.worktree_add(name, "HEAD"),
                Err(GitError::BadName { .. })
            ),
            "{name:?}"
        );
    }
}

#[test]
fn reset_to_a_snapshot_restores_files_and_removes_new_ones_without_touching_the_index() {
    let (dir, git) = repo_with(&[("a.txt", "a0"), ("b.txt", "b0"), (".gitignore", "*.log\n")]);
    let path = |p: &str| dir.path().join(p);
    // The state before the agent: a staged change, an unstaged one, an untracked file and an
    // ignored one.
    fs::write(path("a.txt"), "a1").expect("write");
    git.run(&["add", "a.txt"]).expect("stage");
    fs::write(path("a.txt"), "a2").expect("write");
    fs::write(path("c.txt"), "c0").expect("write");
    fs::write(path("build.log"), "log0").expect("write");
    let index = || fs::read(path(".git/index")).expect("index");
    let index_before = index();

    let tree = git.snapshot().expect("snapshot");
    assert_eq!(
        index(),
        index_before,
        "the snapshot does not touch the index"
    );
    assert_eq!(git.snapshot().expect("again"), tree, "same files, same id");
    let listed = git
        .run(&["ls-tree", "-r", "--name-only", tree.as_str()])
        .expect("ls-tree");
    assert_eq!(listed, ".gitignore\na.txt\nb.txt\nc.txt\n");

    // The agent's half-done work.
    fs::write(path("a.txt"), "a3").expect("write");
    fs::remove_file(path("b.txt")).expect("rm");
    fs::write(path("c.txt"), "c1").expect("write");
    fs::create_dir_all(path("new/deep")).expect("mkdir");
    fs::write(path("new/deep/d.txt"), "d").expect("write");
    fs::write(path("build.log"), "log1").expect("write");

    git.reset_to(&tree).expect("reset");
    assert_eq!(fs::read_to_string(path("a.txt")).expect("a"), "a2");
    assert_eq!(fs::read_to_string(path("b.txt")).expect("b"), "b0");
    assert_eq!(fs::read_to_string(path("c.txt")).expect("c"), "c0");
    assert!(
        !path("new").exists(),
        "new files and their folders are removed"
    );
    assert_eq!(
        fs::read_to_string(path("build.log")).expect("log"),
        "log1",
        "ignored files are not the snapshot's business"
    );
    assert_eq!(index(), index_before, "the index is untouched");
    let staged = git.run(&["diff", "--cached", "--name-only"]).expect("diff");
    assert_eq!(staged, "a.txt\n", "what was staged stays staged");
    assert_eq!(git.snapshot().expect("after"), tree);
    let left: Vec<_> = fs::read_dir(path(".git"))
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("gavel-index-"))
        .collect();
    assert!(left.is_empty(), "no scratch index is left behind");
}

#[test]
fn a_snapshot_works_in_a_repository_without_commits_or_index() {
    let (dir, git) = repo();
    fs::write(dir.path().join("x.txt"), "x").expect("write");
    let tree = git.snapshot().expect("snapshot");
    fs::write(dir.path().join("y.txt"), "y").expect("write");
    git.reset_to(&tree).expect("reset");
    assert!(!dir.path().join("y.txt").exists());
    assert!(dir.path().join("x.txt").exists());
    assert!(!dir.path().join(".git/index").exists(), "still no index");
    assert!(TreeId::parse("not hex").is_none());
}

#[test]
fn changes_between_snapshots_are_judged_from_the_files_and_can_be_put_back() {
    let (dir, git) = repo_with(&[
        ("src/a.py", "a0"),
        ("tests/test_a.py", "t0"),
        ("gone.py", "g"),
    ]);
    let path = |p: &str| dir.path().join(p);
    let before = git.snapshot().expect("before");
    fs::write(path("src/a.py"), "a1").expect("write");
    fs::write(path("tests/test_a.py"), "t1").expect("write");
    fs::write(path("src/new.py"), "n").expect("write");
    fs::remove_file(path("gone.py")).expect("rm");
    std::os::unix::fs::symlink("/etc/passwd", path("link")).expect("symlink");
    let after = git.snapshot().expect("after");
    let changes = git.changes(&before, &after).expect("changes");
    let seen: Vec<(&str, ChangeKind, bool)> = changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind, c.is_symlink()))
        .collect();
    assert_eq!(
        seen,
        [
            ("gone.py", ChangeKind::Deleted, false),
            ("link", ChangeKind::Added, true),
            ("src/a.py", ChangeKind::Modified, false),
            ("src/new.py", ChangeKind::Added, false),
            ("tests/test_a.py", ChangeKind::Modified, false),
        ]
    );
    // Put back only what the step may not touch: the test, the deletion, the new link.
    let index_before = fs::read(path(".git/index")).expect("index");
    git.restore_paths(
        &before,
        &["tests/test_a.py".into(), "gone.py".into(), "link".into()],
    )
    .expect("restore");
    assert_eq!(
        fs::read_to_string(path("tests/test_a.py")).expect("t"),
        "t0"
    );
    assert_eq!(fs::read_to_string(path("gone.py")).expect("g"), "g");
    assert!(
        fs::symlink_metadata(path("link")).is_err(),
        "the new link is gone"
    );
    assert_eq!(
        fs::read_to_string(path("src/a.py")).expect("a"),
        "a1",
        "allowed changes stay"
    );
    assert!(path("src/new.py").exists());
    assert_eq!(fs::read(path(".git/index")).expect("index"), index_before);
    let now = git.snapshot().expect("now");
    let left: Vec<String> = git
        .changes(&before, &now)
        .expect("changes")
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(left, ["src/a.py", "src/new.py"]);
}

#[test]
fn discover_finds_the_top_level_from_a_subfolder_without_git_and_defers_inside_dot_git() {
    let (dir, git) = repo();
    let top = git.root().canonicalize().expect("canonical");
    let deep = dir.path().join("a/b/c");
    fs::create_dir_all(&deep).expect("mkdir");
    let found = Git::discover(&deep).expect("discover");
    assert_eq!(found.root(), top);
    let outside = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        Git::discover(outside.path()),
        Err(GitError::NotARepo(_))
    ));
}

#[test]
fn git_is_told_its_folder_with_dash_c_and_a_missing_folder_still_fails_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cmd = command(dir.path());
    let args: Vec<&std::ffi::OsStr> = cmd.get_args().collect();
    assert_eq!(args, [std::ffi::OsStr::new("-C"), dir.path().as_os_str()]);
    assert_eq!(
        cmd.get_current_dir(),
        None,
        "a working folder makes a static gavel fork"
    );
    // git's full path (PATH finds it here: these tests run it), so no execve is tried in vain.
    assert!(Path::new(cmd.get_program()).is_absolute(), "{cmd:?}");

    let missing = dir.path().join("nope");
    let err = Git::at(&missing).run(&["status"]).expect_err("no folder");
    assert!(matches!(err, GitError::Spawn(_)), "{err:?}");
}
