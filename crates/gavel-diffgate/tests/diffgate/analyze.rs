//! `analyze_staged` against real repositories: the LLD's scenarios 010-060 and 120, and the
//! cases git makes awkward (binary files, renames, odd names, missing final newlines, no
//! commits yet, worktrees, conflicts).

use gavel_diffgate::{Analysis, ChangeType, DiffGateError, FileAnalysis, analyze_staged};

use crate::util::{TestRepo, lines};

fn analyze(repo: &TestRepo) -> Analysis {
    analyze_staged(&gavel_exec::git::Git::at(repo.path())).unwrap()
}

fn file<'a>(analysis: &'a Analysis, path: &str) -> &'a FileAnalysis {
    analysis
        .files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path:?} not in {analysis:#?}"))
}

/// The 270-line `state.py` of PR #165.
pub fn state_py_270() -> String {
    let mut text = String::from("\"\"\"Workflow state.\"\"\"\nfrom typing import TypedDict\n\n");
    for i in 0..267 {
        text.push_str(&format!("    field_{i}: str  # kept for compatibility\n"));
    }
    text
}

/// The 56 lines that replaced it.
pub fn state_py_56() -> String {
    let mut text = String::from("class WorkflowState(TypedDict):\n");
    for i in 0..55 {
        text.push_str(&format!("    new_field_{i}: int\n"));
    }
    text
}

#[test]
fn t010_analyze_no_changes() {
    let repo = TestRepo::with_commit(&[("a.txt", b"one\ntwo\n")]);
    // Unstaged edits are not staged changes.
    repo.write("a.txt", "one\nTWO\n");
    let analysis = analyze(&repo);
    assert!(analysis.is_empty());
    assert!(analysis.flagged().is_empty());
}

#[test]
fn t020_analyze_small_modification() {
    let repo = TestRepo::with_commit(&[("lib.rs", lines("line", 100).as_bytes())]);
    let edited: String = (0..100)
        .map(|i| {
            if i % 10 == 0 {
                format!("edited {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    repo.write("lib.rs", edited);
    repo.stage_all();
    let analysis = analyze(&repo);
    let f = file(&analysis, "lib.rs");
    assert_eq!(
        (f.added, f.deleted, f.original_lines, f.new_lines),
        (10, 10, 100, 100)
    );
    assert_eq!(f.change_type, ChangeType::Modified);
    assert!((f.change_ratio - 0.1).abs() < 1e-9);
    assert!(!f.flagged);
    assert!(analysis.flagged().is_empty());
}

#[test]
fn t030_analyze_major_replacement() {
    // Scenario 030: 200 deleted, 50 added in a 270-line file (ratio 0.46: the ratio alone
    // would not flag it, the replacement rule must).
    let repo = TestRepo::with_commit(&[("core.py", lines("orig", 270).as_bytes())]);
    let kept: String = lines("orig", 70);
    repo.write("core.py", format!("{kept}{}", lines("new", 50)));
    repo.stage_all();
    let analysis = analyze(&repo);
    let f = file(&analysis, "core.py");
    assert_eq!(
        (f.added, f.deleted, f.original_lines, f.new_lines),
        (50, 200, 270, 120)
    );
    assert_eq!(f.change_type, ChangeType::Replaced);
    assert!(f.change_ratio < gavel_diffgate::THRESHOLD);
    assert!(f.flagged);
    assert_eq!(analysis.flagged().len(), 1);
}

#[test]
fn pr165_state_py_270_to_56_is_flagged_replaced() {
    let repo = TestRepo::with_commit(&[("src/workflows/state.py", state_py_270().as_bytes())]);
    repo.write("src/workflows/state.py", state_py_56());
    repo.stage_all();
    let analysis = analyze(&repo);
    let f = file(&analysis, "src/workflows/state.py");
    assert_eq!((f.original_lines, f.new_lines), (270, 56));
    assert_eq!((f.added, f.deleted), (56, 270));
    assert_eq!(f.change_type, ChangeType::Replaced);
    assert!(f.flagged);
    assert!((f.change_ratio - 326.0 / 540.0).abs() < 1e-9);
}

#[test]
fn new_file_is_new_and_not_flagged() {
    // Scenario 040.
    let repo = TestRepo::with_commit(&[("README", b"hi\n")]);
    repo.write("src/new.rs", lines("fresh", 100));
    repo.stage_all();
    let analysis = analyze(&repo);
    let f = file(&analysis, "src/new.rs");
    assert_eq!(f.change_type, ChangeType::New);
    assert_eq!(
        (f.added, f.deleted, f.original_lines, f.new_lines),
        (100, 0, 0, 100)
    );
    assert!((f.change_ratio - 1.0).abs() < f64::EPSILON);
    assert!(!f.flagged);
}

#[test]
fn deleted_file_is_deleted_and_flagged() {
    // Scenario 050.
    let repo = TestRepo::with_commit(&[
        ("keep.txt", b"k\n"),
        ("gone.txt", lines("g", 40).as_bytes()),
    ]);
    repo.git(&["rm", "-q", "gone.txt"]);
    let analysis = analyze(&repo);
    assert_eq!(analysis.files.len(), 1);
    let f = file(&analysis, "gone.txt");
    assert_eq!(f.change_type, ChangeType::Deleted);
    assert_eq!(
        (f.added, f.deleted, f.original_lines, f.new_lines),
        (0, 40, 40, 0)
    );
    assert!(f.flagged);
}

#[test]
fn multiple_mixed_files_only_the_replaced_one_is_flagged() {
    // Scenario 060: three files, one flagged.
    let repo = TestRepo::with_commit(&[
        ("small.txt", lines("s", 100).as_bytes()),
        ("big.txt", lines("b", 50).as_bytes()),
    ]);
    repo.write("small.txt", format!("{}extra\n", lines("s", 100)));
    repo.write("big.txt", lines("rewritten", 50));
    repo.write("added.txt", lines("a", 5));
    repo.stage_all();
    let analysis = analyze(&repo);
    assert_eq!(analysis.files.len(), 3);
    let flagged: Vec<&str> = analysis.flagged().iter().map(|f| f.path.as_str()).collect();
    assert_eq!(flagged, ["big.txt"]);
    assert_eq!(
        file(&analysis, "small.txt").change_type,
        ChangeType::Modified
    );
    assert_eq!(file(&analysis, "big.txt").change_type, ChangeType::Replaced);
    assert_eq!(file(&analysis, "added.txt").change_type, ChangeType::New);
    // git's order: sorted by path.
    let order: Vec<&str> = analysis.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(order, ["added.txt", "big.txt", "small.txt"]);
}

#[test]
fn binary_files_are_not_line_counted_and_flagged_only_when_deleted() {
    let repo = TestRepo::with_commit(&[
        ("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("old.bin", b"\0\x01\x02\n\x03"),
    ]);
    repo.write(
        "logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR changed entirely",
    );
    repo.remove("old.bin");
    repo.write("new.bin", b"\0\0\0");
    repo.stage_all();
    let analysis = analyze(&repo);
    let logo = file(&analysis, "logo.png");
    assert!(logo.binary);
    assert_eq!((logo.added, logo.deleted, logo.original_lines), (0, 0, 0));
    assert_eq!(logo.change_type, ChangeType::Modified);
    assert!(!logo.flagged);
    let old = file(&analysis, "old.bin");
    assert!(old.binary);
    assert_eq!(old.change_type, ChangeType::Deleted);
    assert!(old.flagged);
    let new = file(&analysis, "new.bin");
    assert!(new.binary && !new.flagged);
    assert_eq!(new.change_type, ChangeType::New);
}

#[test]
fn rename_reads_original_lines_from_the_old_path() {
    let repo = TestRepo::with_commit(&[("old/name.rs", lines("l", 100).as_bytes())]);
    std::fs::create_dir(repo.path().join("new")).unwrap();
    repo.git(&["mv", "old/name.rs", "new/name.rs"]);
    let mut text = lines("l", 100);
    text.push_str("one more\ntwo more\n");
    repo.write("new/name.rs", text);
    repo.stage_all();
    let analysis = analyze(&repo);
    assert_eq!(analysis.files.len(), 1, "{analysis:#?}");
    let f = &analysis.files[0];
    assert_eq!(f.path, "new/name.rs");
    assert_eq!(f.old_path.as_deref(), Some("old/name.rs"));
    assert_eq!(
        (f.added, f.deleted, f.original_lines, f.new_lines),
        (2, 0, 100, 102)
    );
    assert_eq!(f.display_name(), "old/name.rs -> new/name.rs");
    assert!(!f.flagged);
}

/// A rename git still detects (one long line keeps the bytes similar) whose short lines were
/// all rewritten: flagged, and measured against the old file.
pub fn flagged_rename(repo: &TestRepo) {
    let long = "x".repeat(2000);
    let before: String = format!("{long}\n{}", lines("short", 9));
    repo.write("before.txt", before);
    repo.commit_all("before");
    repo.git(&["mv", "before.txt", "after.txt"]);
    repo.write("after.txt", format!("{long}\n{}", lines("other", 9)));
    repo.stage_all();
}

#[test]
fn rename_with_rewrite_is_flagged_against_the_old_file() {
    let repo = TestRepo::new();
    flagged_rename(&repo);
    let analysis = analyze(&repo);
    assert_eq!(analysis.files.len(), 1, "{analysis:#?}");
    let f = &analysis.files[0];
    assert_eq!(f.old_path.as_deref(), Some("before.txt"));
    assert_eq!((f.original_lines, f.added, f.deleted), (10, 9, 9));
    assert_eq!(f.change_type, ChangeType::Replaced);
    assert!(f.flagged);
}

#[test]
fn a_last_line_without_newline_is_counted() {
    let repo = TestRepo::with_commit(&[("a.txt", b"a\nb\nc"), ("b.txt", b"a\nb")]);
    repo.write("a.txt", "a\nb\nC");
    repo.remove("b.txt");
    repo.stage_all();
    let analysis = analyze(&repo);
    let a = file(&analysis, "a.txt");
    assert_eq!(
        (a.original_lines, a.added, a.deleted, a.new_lines),
        (3, 1, 1, 3)
    );
    assert_eq!(a.change_type, ChangeType::Modified);
    let b = file(&analysis, "b.txt");
    assert_eq!((b.original_lines, b.deleted), (2, 2));
}

/// Names git would quote or a shell would split.
pub const ODD_NAMES: &[&str] = &[
    "with space.txt",
    "ünïcødé-日本語.txt",
    "new\nline.txt",
    "tab\there.txt",
    ":colon.txt",
    "-dash.txt",
    "star*.txt",
    "quote\"'.txt",
];

#[test]
fn file_names_with_spaces_unicode_and_newlines() {
    let mut files: Vec<(&str, Vec<u8>)> = ODD_NAMES
        .iter()
        .map(|name| (*name, lines("old", 10).into_bytes()))
        .collect();
    // A file the glob in "star*.txt" would match if pathspecs were not literal.
    files.push(("starry.txt", lines("starry", 10).into_bytes()));
    let borrowed: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_slice())).collect();
    let repo = TestRepo::with_commit(&borrowed);
    for name in ODD_NAMES {
        repo.write(name, lines("rewritten", 4));
    }
    repo.stage_all();
    let analysis = analyze(&repo);
    assert_eq!(analysis.files.len(), ODD_NAMES.len(), "{analysis:#?}");
    for name in ODD_NAMES {
        let f = file(&analysis, name);
        assert_eq!(
            (f.original_lines, f.added, f.deleted),
            (10, 4, 10),
            "{name:?}"
        );
        assert_eq!(f.change_type, ChangeType::Replaced, "{name:?}");
    }
}

#[test]
fn empty_repository_makes_every_staged_file_new() {
    let repo = TestRepo::new();
    repo.write("a.txt", lines("a", 3));
    repo.write("dir/b.txt", "no newline");
    repo.stage_all();
    let analysis = analyze(&repo);
    assert_eq!(analysis.files.len(), 2);
    for f in &analysis.files {
        assert_eq!(f.change_type, ChangeType::New, "{f:?}");
        assert!(!f.flagged);
    }
    assert_eq!(file(&analysis, "dir/b.txt").new_lines, 1);
}

#[test]
fn empty_repository_with_nothing_staged() {
    let repo = TestRepo::new();
    assert!(analyze(&repo).is_empty());
}

#[test]
fn identical_contents_are_counted_once_and_right() {
    // Two files with the same blob: one cat-file request, both measured.
    let text = lines("same", 30);
    let repo = TestRepo::with_commit(&[("a.txt", text.as_bytes()), ("b.txt", text.as_bytes())]);
    repo.write("a.txt", lines("other", 30));
    repo.write("b.txt", format!("{text}x\n"));
    repo.stage_all();
    let analysis = analyze(&repo);
    assert_eq!(file(&analysis, "a.txt").original_lines, 30);
    assert_eq!(file(&analysis, "b.txt").original_lines, 30);
    assert!(file(&analysis, "a.txt").flagged);
    assert!(!file(&analysis, "b.txt").flagged);
}

#[test]
fn emptied_file_is_flagged_and_growing_an_empty_file_is_too() {
    let repo = TestRepo::with_commit(&[("full.txt", lines("f", 8).as_bytes()), ("empty.txt", b"")]);
    repo.write("full.txt", "");
    repo.write("empty.txt", lines("e", 3));
    repo.stage_all();
    let analysis = analyze(&repo);
    let full = file(&analysis, "full.txt");
    assert_eq!(
        (full.change_type, full.flagged, full.new_lines),
        (ChangeType::Modified, true, 0)
    );
    let empty = file(&analysis, "empty.txt");
    assert_eq!((empty.original_lines, empty.added), (0, 3));
    assert!(empty.flagged, "an empty original fails closed: {empty:?}");
}

#[test]
fn analysis_from_a_subdirectory_and_a_worktree() {
    let repo = TestRepo::with_commit(&[
        ("top.txt", lines("t", 10).as_bytes()),
        ("sub/s.txt", b"s\n"),
    ]);
    repo.write("top.txt", lines("changed", 10));
    repo.stage_all();
    let from_sub = analyze_staged(&gavel_exec::git::Git::at(&repo.path().join("sub"))).unwrap();
    assert_eq!(from_sub.files.len(), 1);
    assert_eq!(from_sub.files[0].path, "top.txt");
    assert!(from_sub.files[0].flagged);

    let worktree = repo.path().with_file_name("wt");
    let wt = worktree.to_str().unwrap();
    repo.git(&["worktree", "add", "-q", "-b", "side", wt]);
    repo.git_in(&worktree, &["rm", "-q", "sub/s.txt"]);
    let in_worktree = analyze_staged(&gavel_exec::git::Git::at(&worktree)).unwrap();
    assert_eq!(in_worktree.files.len(), 1);
    assert_eq!(in_worktree.files[0].change_type, ChangeType::Deleted);
}

#[test]
fn unmerged_paths_fail_closed() {
    let repo = TestRepo::with_commit(&[("c.txt", b"base\n")]);
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("c.txt", "theirs\n");
    repo.commit_all("theirs");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("c.txt", "ours\n");
    repo.commit_all("ours");
    let merge = repo
        .git_command(repo.path(), &["merge", "-q", "other"])
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge should conflict");
    let err = analyze_staged(&gavel_exec::git::Git::at(repo.path())).unwrap_err();
    assert!(
        matches!(err, DiffGateError::Unmerged { ref path } if path == "c.txt"),
        "{err:?}"
    );
}

#[test]
fn not_a_repository_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let err = analyze_staged(&gavel_exec::git::Git::at(dir.path())).unwrap_err();
    assert!(
        matches!(err, DiffGateError::NotARepository { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().ends_with("is not inside a git repository"),
        "{err}"
    );
    let missing = analyze_staged(&gavel_exec::git::Git::at(&dir.path().join("nope"))).unwrap_err();
    assert!(
        matches!(missing, DiffGateError::SpawnGit { .. }),
        "{missing:?}"
    );
}

#[test]
fn analysis_serializes_for_the_cli() {
    let repo = TestRepo::with_commit(&[("state.py", state_py_270().as_bytes())]);
    repo.write("state.py", state_py_56());
    repo.stage_all();
    let analysis = analyze(&repo);
    let json = serde_json::to_value(&analysis).unwrap();
    assert_eq!(json["files"][0]["change_type"], "REPLACED");
    assert_eq!(json["files"][0]["flagged"], true);
    let back: Analysis = serde_json::from_value(json).unwrap();
    assert_eq!(back, analysis);
}
