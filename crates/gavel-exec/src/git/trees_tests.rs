//! Tests of [`super`]: the objects written ahead are the ones `git commit` makes.

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

/// Commits everything in `root`'s work tree as the base the tests' runs commit on.
fn base_commit(root: &Path) {
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.invalid"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
}

/// Commits `specs` as a filing does (`git commit --include -- SPECS`) and checks that every
/// tree of the new commit is among `ahead`, the loose objects before it.
fn commit_finds_every_tree_written(root: &Path, specs: &[String], ahead: &[String]) {
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
            "tree {id} was there before the commit"
        );
    }
}

#[test]
fn the_trees_are_the_ones_the_commit_makes() {
    let dir = repo();
    let root = dir.path();
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
    base_commit(root);
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
        !write_ahead_before(root, &root.join(".git"), None, &specs, 16),
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
        None,
        &specs,
        1 << 20
    ));
    commit_finds_every_tree_written(root, &specs, &loose_objects(root));
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
    write_ahead(
        root,
        &root.join(".git"),
        None,
        &["x.md".to_owned()],
        &mut || {
            asked += 1;
            false
        },
    );
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
    write_ahead(
        root,
        &root.join(".git"),
        None,
        &["docs".to_owned()],
        &mut || true,
    );
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

#[test]
fn folders_the_commit_leaves_alone_keep_the_cache_trees_id() {
    let dir = repo();
    let root = dir.path();
    write(root, "docs/lineage/done/1-x/001-brief.md", "brief");
    write(root, "docs/issues/0001-x.md", "one");
    base_commit(root);
    // The next run's files, known to git as intent-to-add (which marks their folders unknown
    // in the cache tree, as staging does).
    write(root, "docs/lineage/done/2-y/001-brief.md", "brief two");
    write(root, "docs/issues/0002-y.md", "two");
    git(
        root,
        &[
            "add",
            "-N",
            "docs/lineage/done/2-y",
            "docs/issues/0002-y.md",
        ],
    );
    let specs = ["docs/lineage/done/2-y", "docs/issues/0002-y.md"].map(String::from);
    // The first run's folder is in the cache tree. With its object set aside, only building
    // that folder again would bring it back.
    let old = git(root, &["rev-parse", "HEAD:docs/lineage/done/1-x"]);
    let old = old.trim();
    let old_path = root.join(".git/objects").join(&old[..2]).join(&old[2..]);
    let old_bytes = std::fs::read(&old_path).expect("the old folder's tree");
    std::fs::remove_file(&old_path).expect("set it aside");
    assert!(write_ahead_before(
        root,
        &root.join(".git"),
        None,
        &specs,
        1 << 20
    ));
    assert!(
        !old_path.exists(),
        "a folder the commit leaves alone is not built again"
    );
    std::fs::write(&old_path, old_bytes).expect("put it back");
    // The folders on the new paths were built, with the kept id inside their parent: every
    // tree of the commit is one that was there.
    commit_finds_every_tree_written(root, &specs, &loose_objects(root));
}
