//! In-process intent-to-add against real git: a commit made after it is the commit `git add`
//! would have led to, byte for byte, and everything this module does not write is left alone.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::*;

/// git in `dir` with no user or system config (the module is given the same view).
pub(in crate::git) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", "2026-01-30T14:33:20Z")
        .env("GIT_COMMITTER_DATE", "2026-01-30T14:33:20Z")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `intend_to_add` with only the repository's own config and no global excludes.
fn stage(root: &Path, paths: &[String]) -> Option<Staged> {
    let config = Config::from_files(&[root.join(".git/config")]).expect("readable config");
    let plain = super::super::trees::writes_plain_objects(root, &root.join(".git"), &config, None);
    let mut told = None;
    let staged = intend_to_add_in(root, paths, &config, plain, None, &mut |was_head| {
        assert!(told.is_none(), "told twice");
        told = Some(was_head);
    });
    if let Some(staged) = &staged {
        // What the caller is told before staging is what staging then says, and the index it
        // is handed is the one git will read.
        assert_eq!(told, Some(staged.index_was_head));
        let on_disk = std::fs::read(root.join(".git/index")).unwrap_or_default();
        assert!(staged.index == on_disk, "the staged index is the file's");
    }
    staged
}

/// Writes `text` to `path` under `root`, making its folders.
pub(in crate::git) fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

/// A repository with a first commit, ignore rules of three kinds, and a run's changes on top:
/// new lineage files (some ignored), an executable, a changed issue list, a moved idea.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.invalid"]);
    write(root, ".gitignore", "*.log\nsecret/\n");
    write(root, "docs/.gitignore", "!keep.log\n");
    write(root, "ideas/active/dark-mode.md", "# Dark mode\n");
    write(root, "docs/issues/labels.txt", "ui\n");
    write(root, "src/deep/a.rs", "fn a() {}\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    write(root, ".git/info/exclude", "tmp.txt\n");
    write(
        root,
        "docs/lineage/done/1-dark-mode/001-brief.md",
        "# Dark mode\n",
    );
    write(
        root,
        "docs/lineage/done/1-dark-mode/002-draft.md",
        "draft\n",
    );
    write(root, "docs/lineage/done/1-dark-mode/run.log", "ignored\n");
    write(
        root,
        "docs/lineage/done/1-dark-mode/keep.log",
        "kept by docs/.gitignore\n",
    );
    write(
        root,
        "docs/lineage/done/1-dark-mode/secret/key.md",
        "ignored folder\n",
    );
    write(
        root,
        "docs/lineage/done/1-dark-mode/tmp.txt",
        "info/exclude\n",
    );
    write(root, "docs/lineage/done/1-dark-mode/run.sh", "#!/bin/sh\n");
    let script = root.join("docs/lineage/done/1-dark-mode/run.sh");
    let mut perms = fs::metadata(&script).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&script, perms).expect("chmod");
    write(root, "docs/issues/0001-dark-mode.md", "# Dark mode\n");
    write(root, "docs/issues/labels.txt", "ui\nenhancement\n");
    fs::create_dir_all(root.join("ideas/done")).expect("mkdir");
    fs::rename(
        root.join("ideas/active/dark-mode.md"),
        root.join("ideas/done/1-dark-mode.md"),
    )
    .expect("move the idea");
    dir
}

const PATHS: [&str; 4] = [
    "docs/lineage/done/1-dark-mode",
    "ideas/done/1-dark-mode.md",
    "docs/issues/0001-dark-mode.md",
    "docs/issues/labels.txt",
];

fn commit(root: &Path) -> String {
    let mut args = vec!["commit", "-q", "-m", "file", "--"];
    args.extend(PATHS);
    args.push("ideas/active/dark-mode.md");
    git(root, &args);
    git(root, &["rev-parse", "HEAD"])
}

#[test]
fn a_commit_after_intent_to_add_is_the_commit_git_add_makes() {
    let (with_git, in_process) = (repo(), repo());
    let mut add = vec!["add", "-A", "--"];
    add.extend(PATHS);
    git(with_git.path(), &add);
    let expected = commit(with_git.path());

    let root = in_process.path();
    let paths: Vec<String> = PATHS.iter().map(|p| (*p).to_owned()).collect();
    // The lineage's 001, 002, keep.log and run.sh, the new issue and the moved idea: not the
    // three ignored files.
    assert_eq!(
        stage(root, &paths).map(|s| (s.added, s.index_was_head)),
        Some((6, true))
    );
    // Known to git now, content still to come (what `git add -N` leaves).
    let known = git(root, &["ls-files", "--stage", "ideas/done/1-dark-mode.md"]);
    assert!(
        known.starts_with(&format!("100644 {EMPTY_BLOB} 0\t")),
        "{known}"
    );
    let run_sh = git(
        root,
        &[
            "ls-files",
            "--stage",
            "docs/lineage/done/1-dark-mode/run.sh",
        ],
    );
    assert!(run_sh.starts_with("100755 "), "{run_sh}");
    let got = commit(root);
    assert_eq!(
        got, expected,
        "the same tree, parents and message: the same commit"
    );
    assert_eq!(
        git(root, &["ls-files", "--stage"]),
        git(with_git.path(), &["ls-files", "--stage"])
    );
    assert_eq!(
        git(root, &["status", "--porcelain", "--ignored"]),
        git(with_git.path(), &["status", "--porcelain", "--ignored"])
    );
    git(root, &["fsck", "--strict"]);
    // The cache tree was marked stale where it changed, so git's own tree matches the commit.
    assert_eq!(
        git(root, &["write-tree"]),
        git(root, &["rev-parse", "HEAD^{tree}"])
    );
}

#[test]
fn nothing_new_changes_nothing() {
    let dir = repo();
    let root = dir.path();
    let before = fs::read(root.join(".git/index")).expect("index");
    let tracked = vec!["docs/issues/labels.txt".to_owned()];
    assert_eq!(stage(root, &tracked).map(|s| s.added), Some(0));
    assert_eq!(fs::read(root.join(".git/index")).expect("index"), before);
}

#[test]
fn what_this_module_does_not_write_is_left_to_git_add() {
    let dir = repo();
    let root = dir.path();
    let index = || fs::read(root.join(".git/index")).expect("index");
    let before = index();
    let ask = |paths: &[&str]| {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        stage(root, &paths)
    };
    // An ignored file named explicitly: git add refuses it, and says so. Also one a deeper
    // rule re-includes inside an ignored folder (git never looks inside that folder).
    assert_eq!(ask(&["docs/lineage/done/1-dark-mode/run.log"]), None);
    write(root, "docs/lineage/.gitignore", "!secret/key.md\n");
    assert_eq!(ask(&["docs/lineage/done/1-dark-mode/secret/key.md"]), None);
    fs::remove_file(root.join("docs/lineage/.gitignore")).expect("rm");
    // A symbolic link.
    std::os::unix::fs::symlink(
        "002-draft.md",
        root.join("docs/lineage/done/1-dark-mode/l.md"),
    )
    .expect("symlink");
    assert_eq!(ask(&["docs/lineage/done/1-dark-mode"]), None);
    fs::remove_file(root.join("docs/lineage/done/1-dark-mode/l.md")).expect("rm");
    // Someone else holds the index.
    fs::write(root.join(".git/index.lock"), "").expect("lock");
    assert_eq!(ask(&["docs/issues/0001-dark-mode.md"]), None);
    fs::remove_file(root.join(".git/index.lock")).expect("unlock");
    // An index version git compresses.
    git(root, &["update-index", "--index-version", "4"]);
    let v4 = index();
    assert_eq!(ask(&["docs/issues/0001-dark-mode.md"]), None);
    assert_eq!(index(), v4);
    git(root, &["update-index", "--index-version", "2"]);
    // Config that changes what adding means.
    git(root, &["config", "core.ignorecase", "true"]);
    assert_eq!(ask(&["docs/issues/0001-dark-mode.md"]), None);
    git(root, &["config", "--unset", "core.ignorecase"]);
    git(root, &["config", "core.untrackedCache", "true"]);
    assert_eq!(ask(&["docs/issues/0001-dark-mode.md"]), None);
    git(root, &["config", "--unset", "core.untrackedCache"]);
    // A file where the index has a folder.
    fs::remove_dir_all(root.join("src/deep")).expect("rm");
    write(root, "src/deep", "now a file\n");
    assert_eq!(ask(&["src/deep"]), None);
    assert!(!root.join(".git/index.lock").exists());
    assert_eq!(index(), before);
}

#[test]
fn a_repository_without_an_index_or_commits_gets_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.invalid"]);
    write(root, "docs/a.md", "a\n");
    write(root, "b.md", "b\n");
    let paths = vec!["docs".to_owned(), "b.md".to_owned()];
    assert_eq!(
        stage(root, &paths).map(|s| (s.added, s.index_was_head)),
        Some((2, false))
    );
    git(root, &["commit", "-q", "-m", "first", "--", "docs", "b.md"]);
    assert_eq!(git(root, &["ls-files"]), "b.md\ndocs/a.md\n");
    assert_eq!(git(root, &["status", "--porcelain"]), "");
    git(root, &["fsck", "--strict"]);
}

#[test]
fn commit_paths_with_nothing_else_staged_makes_the_commit_git_add_makes() {
    let (with_git, in_process) = (repo(), repo());
    let mut add = vec!["add", "-A", "--"];
    add.extend(PATHS);
    git(with_git.path(), &add);
    let expected_tree = {
        commit(with_git.path());
        git(with_git.path(), &["rev-parse", "HEAD^{tree}"])
    };
    let root = in_process.path();
    let mut paths: Vec<PathBuf> = PATHS.iter().map(PathBuf::from).collect();
    paths.push(PathBuf::from("ideas/active/dark-mode.md"));
    let repo = super::super::Git::at(root);
    let id = repo
        .commit_paths(&paths, "file", "k1", super::super::PriorAttempt::None)
        .expect("commit");
    assert_eq!(id, git(root, &["rev-parse", "HEAD"]).trim());
    assert_eq!(git(root, &["rev-parse", "HEAD^{tree}"]), expected_tree);
    assert_eq!(
        git(root, &["status", "--porcelain", "--ignored"]),
        git(with_git.path(), &["status", "--porcelain", "--ignored"])
    );
    git(root, &["fsck", "--strict"]);
}

#[test]
fn a_file_changed_in_the_second_the_index_was_written_is_not_taken_for_clean() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.invalid"]);
    write(root, "labels.txt", "ui\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    // Same size, written after (or in the same second as) the index git just wrote.
    write(root, "labels.txt", "ux\n");
    write(root, "new.md", "n\n");
    let added = stage(root, &["new.md".to_owned()]).map(|s| s.added);
    assert_eq!(added, Some(1));
    // Written no earlier than the index, so its entry is smudged (size 0), as git smudges it:
    // read before any git command refreshes the index.
    let debug = git(root, &["ls-files", "--debug", "labels.txt"]);
    assert!(debug.contains("size: 0\t"), "{debug}");
    let status = git(root, &["status", "--porcelain"]);
    assert!(status.contains(" M labels.txt"), "{status}");
    git(root, &["commit", "-q", "-m", "new", "--", "new.md"]);
    assert_eq!(git(root, &["show", "HEAD:labels.txt"]), "ui\n");
    assert!(git(root, &["status", "--porcelain"]).contains(" M labels.txt"));
}

#[test]
fn names_git_would_normalise_and_an_ignored_folder_are_left_to_git_add() {
    let dir = repo();
    let root = dir.path();
    for odd in [
        "./docs/issues/0001-dark-mode.md",
        "docs/../docs/issues",
        "/etc/passwd",
    ] {
        assert_eq!(stage(root, &[odd.to_owned()]), None, "{odd}");
    }
    assert_eq!(
        stage(root, &["docs/lineage/done/1-dark-mode/secret".to_owned()]),
        None
    );
}

#[test]
fn a_merge_in_progress_is_never_concluded_by_include() {
    let dir = repo();
    let root = dir.path();
    let head = git(root, &["rev-parse", "HEAD"]);
    fs::write(root.join(".git/MERGE_HEAD"), head).expect("merge head");
    let staged = stage(root, &["docs/issues/0001-dark-mode.md".to_owned()]).expect("staged");
    assert!(!staged.index_was_head);
}
