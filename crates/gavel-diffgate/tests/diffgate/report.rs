//! `report` against real repositories: the summary, the banners, the diffs a reviewer must see,
//! the 500-line cap, and that nothing in a file can take over the reviewer's terminal.

use gavel_diffgate::{MAX_DIFF_LINES, analyze_staged, report};

use crate::analyze::{ODD_NAMES, flagged_rename, state_py_56, state_py_270};
use crate::util::{TestRepo, lines};

fn report_of(repo: &TestRepo) -> String {
    let analysis = analyze_staged(&gavel_exec::git::Git::at(repo.path())).unwrap();
    report(&gavel_exec::git::Git::at(repo.path()), &analysis).unwrap()
}

#[test]
fn t070_format_report_with_warnings() {
    let repo = TestRepo::with_commit(&[("state.py", state_py_270().as_bytes())]);
    repo.write("state.py", state_py_56());
    repo.stage_all();
    let text = report_of(&repo);
    // The --stat summary first.
    assert!(
        text.starts_with("Staged changes (git diff --cached --stat):\n"),
        "{text}"
    );
    assert!(text.contains(" state.py | 326 "), "{text}");
    assert!(
        text.contains("1 file changed, 56 insertions(+), 270 deletions(-)"),
        "{text}"
    );
    // Then the banner with the before/after counts (the PR #165 recreation, scenario 120).
    assert!(
        text.contains("WARNING: state.py was REPLACED: 270 lines before, 56 after (ratio 0.60)"),
        "{text}"
    );
    assert!(
        text.contains("270 of 270 original lines deleted, 56 added"),
        "{text}"
    );
    // Then the actual diff, not just stats.
    assert!(text.contains("diff --git a/state.py b/state.py"), "{text}");
    assert!(
        text.contains("\n-    field_0: str  # kept for compatibility\n"),
        "{text}"
    );
    assert!(
        text.contains("\n+class WorkflowState(TypedDict):\n"),
        "{text}"
    );
    assert!(!text.contains("truncated"), "{text}");
    assert!(text.ends_with('\n'));
}

#[test]
fn t150_large_diff_truncation() {
    // A 1000-line file deleted: a diff of 1000+ lines, shown up to the cap.
    let repo = TestRepo::with_commit(&[("big.txt", lines("big", 1000).as_bytes())]);
    repo.git(&["rm", "-q", "big.txt"]);
    let text = report_of(&repo);
    assert!(
        text.contains("WARNING: big.txt was DELETED: 1000 lines before, 0 after"),
        "{text}"
    );
    let diff_start = text.find("diff --git").unwrap();
    let body: Vec<&str> = text[diff_start..].lines().collect();
    let note = body
        .iter()
        .position(|l| l.starts_with("... diff truncated"))
        .unwrap_or_else(|| panic!("no truncation note in {text}"));
    assert_eq!(
        note, MAX_DIFF_LINES,
        "exactly {MAX_DIFF_LINES} diff lines before the note"
    );
    assert_eq!(
        body[note],
        "... diff truncated: showing the first 500 lines; the file has 0 lines added and 1000 \
         deleted (see `git diff --cached -- big.txt`)"
    );
    // The last line shown is the 500th diff line: 6 header lines (diff, deleted file mode,
    // index, ---, +++, @@), then "-big 0".."-big 493".
    assert_eq!(body[note - 1], "-big 493");
    assert!(!text.contains("-big 494"));
}

#[test]
fn a_diff_of_exactly_the_cap_is_not_truncated() {
    // 6 header lines + 494 deletions = 500 lines.
    let repo = TestRepo::with_commit(&[("f.txt", lines("f", 494).as_bytes())]);
    repo.git(&["rm", "-q", "f.txt"]);
    let text = report_of(&repo);
    assert!(text.contains("\n-f 493\n"), "{text}");
    assert!(!text.contains("truncated"), "{text}");
}

#[test]
fn multiple_mixed_files_only_the_flagged_one_gets_a_banner() {
    // Scenario 060.
    let repo = TestRepo::with_commit(&[
        ("small.txt", lines("s", 100).as_bytes()),
        ("big.txt", lines("b", 50).as_bytes()),
    ]);
    repo.write("small.txt", format!("{}extra\n", lines("s", 100)));
    repo.write("big.txt", lines("rewritten", 50));
    repo.write("added.txt", lines("a", 5));
    repo.stage_all();
    let text = report_of(&repo);
    assert_eq!(text.matches("WARNING:").count(), 1, "{text}");
    assert!(text.contains("WARNING: big.txt was REPLACED"), "{text}");
    assert!(
        text.contains("3 files staged; 1 flagged for review"),
        "{text}"
    );
    // Every file is in the summary; only the flagged one's diff is shown.
    for name in ["small.txt", "big.txt", "added.txt"] {
        assert!(
            text.contains(&format!(" {name} ")),
            "{name} missing from {text}"
        );
    }
    assert!(text.contains("diff --git a/big.txt b/big.txt"), "{text}");
    assert!(!text.contains("diff --git a/small.txt"), "{text}");
    assert!(!text.contains("+extra"), "{text}");
}

#[test]
fn nothing_flagged_says_so() {
    let repo = TestRepo::with_commit(&[("a.txt", lines("a", 100).as_bytes())]);
    repo.write("a.txt", format!("{}tail\n", lines("a", 100)));
    repo.write("new.txt", lines("n", 100));
    repo.stage_all();
    let text = report_of(&repo);
    assert!(!text.contains("WARNING"), "{text}");
    assert!(text.contains("2 files staged; none needs review"), "{text}");
    assert!(
        text.contains(" new.txt "),
        "new files appear in the summary: {text}"
    );
}

#[test]
fn no_staged_changes() {
    let repo = TestRepo::with_commit(&[("a.txt", b"a\n")]);
    assert_eq!(report_of(&repo), "No staged changes.\n");
}

#[test]
fn deleted_binary_file_is_called_binary() {
    let repo = TestRepo::with_commit(&[
        ("logo.png", b"\x89PNG\0\0\0\x01"),
        ("pic.jpg", b"\xff\xd8\0\x01"),
    ]);
    repo.git(&["rm", "-q", "logo.png"]);
    repo.write("pic.jpg", b"\xff\xd8\0\x02");
    repo.stage_all();
    let text = report_of(&repo);
    assert!(
        text.contains("WARNING: logo.png was DELETED (binary file)"),
        "{text}"
    );
    assert!(
        text.contains(
            "Binary files (no lines to count):\n  logo.png (DELETED)\n  pic.jpg (MODIFIED)\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("WARNING:").count(), 1, "{text}");
}

#[test]
fn rename_is_reported_as_old_to_new_with_its_diff() {
    let repo = TestRepo::new();
    flagged_rename(&repo);
    let text = report_of(&repo);
    assert!(
        text.contains("WARNING: before.txt -> after.txt was REPLACED: 10 lines before, 10 after"),
        "{text}"
    );
    assert!(
        text.contains("rename from before.txt\nrename to after.txt\n"),
        "{text}"
    );
    assert!(text.contains("\n-short 0\n"), "{text}");
    assert!(text.contains("\n+other 0\n"), "{text}");
}

#[test]
fn odd_file_names_get_their_own_diffs() {
    let mut files: Vec<(&str, Vec<u8>)> = ODD_NAMES
        .iter()
        .map(|name| (*name, lines("old", 10).into_bytes()))
        .collect();
    files.push(("starry.txt", lines("starry", 10).into_bytes()));
    let borrowed: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_slice())).collect();
    let repo = TestRepo::with_commit(&borrowed);
    for name in ODD_NAMES {
        repo.write(name, lines("rewritten", 4));
    }
    repo.stage_all();
    let text = report_of(&repo);
    assert_eq!(text.matches("WARNING:").count(), ODD_NAMES.len(), "{text}");
    // Each flagged file shows one diff: the literal pathspec matched exactly that file.
    assert_eq!(
        text.matches("diff --git").count(),
        ODD_NAMES.len(),
        "{text}"
    );
    assert!(
        !text.contains("starry"),
        "a glob leaked into a pathspec: {text}"
    );
    assert!(!text.contains("git showed no diff"), "{text}");
    // A newline or tab in a name cannot break the banner.
    assert!(
        text.contains("WARNING: new\\nline.txt was REPLACED"),
        "{text}"
    );
    assert!(
        text.contains("WARNING: tab\\there.txt was REPLACED"),
        "{text}"
    );
    assert!(
        text.contains("WARNING: ünïcødé-日本語.txt was REPLACED"),
        "{text}"
    );
    assert!(
        text.contains("WARNING: with space.txt was REPLACED"),
        "{text}"
    );
}

#[test]
fn escape_sequences_in_contents_and_names_are_sanitized() {
    let hostile = "clear\x1b[2J\x1b[H\nretitle\x1b]0;owned\x07\nlink \x1b]8;;https://evil.invalid\x1b\\here\x1b]8;;\x1b\\\nbidi \u{202E}txt.exe\u{202C}\ncarriage\rreturn\nbell\x07 nul\x01\n";
    let repo = TestRepo::with_commit(&[("doc.txt", lines("plain", 6).as_bytes())]);
    repo.write("doc.txt", hostile);
    repo.write("evil\x1b[31mname\u{2067}.txt", lines("x", 3));
    repo.stage_all();
    let text = report_of(&repo);
    for bad in [
        '\x1b', '\x07', '\r', '\x01', '\u{202E}', '\u{202C}', '\u{2067}',
    ] {
        assert!(!text.contains(bad), "{bad:?} reached the report: {text:?}");
    }
    // The content is still there to be reviewed, minus the control sequences.
    assert!(text.contains("+clear\n"), "{text}");
    assert!(text.contains("+link here\n"), "{text}");
    assert!(text.contains("+bidi txt.exe\n"), "{text}");
    assert!(text.contains("+carriagereturn\n"), "{text}");
}

#[test]
fn long_lines_are_cut() {
    let long = "y".repeat(50_000);
    let repo = TestRepo::with_commit(&[("min.js", format!("{long}\n").as_bytes())]);
    repo.write("min.js", "z\n");
    repo.stage_all();
    let text = report_of(&repo);
    assert!(
        text.contains("[... line cut at 1000 characters]"),
        "{}",
        &text[..200]
    );
    assert!(text.len() < 10_000, "report is {} bytes", text.len());
}

#[test]
fn emptied_file_gets_a_banner() {
    let repo = TestRepo::with_commit(&[("state.py", state_py_270().as_bytes())]);
    repo.write("state.py", "");
    repo.stage_all();
    let text = report_of(&repo);
    assert!(
        text.contains("WARNING: state.py lost most of its lines: 270 lines before, 0 after"),
        "{text}"
    );
}

#[test]
fn issue10_new_files_are_listed_with_a_new_marker_and_their_line_counts() {
    // Regression (issue 10, defect 1): new files were only a line of git's `--stat`,
    // indistinguishable from edits, so a person could approve without seeing what a commit adds.
    let repo = TestRepo::with_commit(&[("big.txt", lines("b", 50).as_bytes())]);
    repo.write("big.txt", lines("rewritten", 50));
    repo.write("src/added.rs", lines("a", 5));
    repo.write("one.txt", "single\n");
    repo.write("logo.png", b"\x89PNG\0\0\0\x01");
    repo.stage_all();
    let text = report_of(&repo);
    let block = "New files (not flagged: the gate protects existing code; still committed):\n  \
                 NEW  logo.png (binary file)\n  NEW  one.txt (1 line)\n  \
                 NEW  src/added.rs (5 lines)\n\n";
    assert!(text.contains(block), "{text}");
    // Listed before the banners, and still not flagged.
    assert!(
        text.find("NEW  src/added.rs") < text.find("WARNING:"),
        "{text}"
    );
    assert_eq!(text.matches("WARNING:").count(), 1, "{text}");
    assert!(
        text.contains("4 files staged; 1 flagged for review"),
        "{text}"
    );
}

#[test]
fn no_new_files_no_new_block() {
    let repo = TestRepo::with_commit(&[("a.txt", lines("a", 10).as_bytes())]);
    repo.write("a.txt", lines("b", 10));
    repo.stage_all();
    assert!(!report_of(&repo).contains("New files"));
}

#[test]
fn snapshot_a_mixed_report() {
    // The whole report a reviewer reads (summary, NEW files, one banner and its diff, the
    // counts) as a reviewed snapshot: any change to it shows up as a snapshot diff.
    let repo = TestRepo::with_commit(&[
        ("small.txt", lines("s", 10).as_bytes()),
        ("big.txt", lines("b", 8).as_bytes()),
    ]);
    repo.write("small.txt", format!("{}extra\n", lines("s", 10)));
    repo.write("big.txt", lines("rewritten", 8));
    repo.write("added.txt", lines("a", 3));
    repo.stage_all();
    insta::assert_snapshot!(report_of(&repo));
}

#[test]
fn symlinks_and_gitlinks_are_named_as_such() {
    let repo = TestRepo::with_commit(&[("a.txt", b"a\n")]);
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("innocent.txt")).expect("link");
    let head = repo.git(&["rev-parse", "HEAD"]);
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{},vendor/lib", head.trim()),
    ]);
    repo.git(&["add", "innocent.txt"]);
    let text = report_of(&repo);
    assert!(
        text.contains("Links and submodules (not regular files):"),
        "{text}"
    );
    assert!(text.contains("innocent.txt (symlink, NEW)"), "{text}");
    assert!(
        text.contains("vendor/lib (gitlink (submodule), NEW)"),
        "{text}"
    );
}
