//! `full_report` (the implementation workflows' diff gate) against real repositories: every
//! new and changed file's diff, tests and implementation apart, binaries, links and
//! submodules named and not dumped, both caps stated and kept, and the stated `git` command
//! showing the whole diff from another directory.

use gavel_diffgate::{
    FullReport, MAX_FILE_DIFF_LINES, MAX_TOTAL_DIFF_LINES, analyze_staged, full_report, git_at,
};
use gavel_exec::git::Git;

use crate::util::{TestRepo, lines};

fn is_test(path: &str) -> bool {
    path.starts_with("tests/")
}

fn full_of(repo: &TestRepo) -> String {
    let git = Git::at(repo.path());
    let analysis = analyze_staged(&git).unwrap();
    full_report(&git, &analysis, &FullReport { is_test: &is_test }).unwrap()
}

/// The regression: a test-first change is nearly all new files, and the gate showed them only
/// as `NEW calc.py (2 lines)`.
#[test]
fn every_new_and_changed_file_is_shown_tests_first() {
    let repo = TestRepo::with_commit(&[
        ("calc.py", lines("old", 10).as_bytes()),
        ("README.md", b"A project.\n"),
    ]);
    repo.write(
        "calc.py",
        format!("{}def add(a, b):\n    return a + b\n", lines("old", 10)),
    );
    repo.write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    );
    repo.write("ops.py", "def sub(a, b):\n    return a - b\n");
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0binary\0");
    std::os::unix::fs::symlink("README.md", repo.path().join("link.md")).unwrap();
    repo.stage_all();
    // A submodule pointer (gitlink), staged as git stages one.
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        "160000,1111111111111111111111111111111111111111,vendor/lib",
    ]);
    let text = full_of(&repo);

    let tests_at = text.find("######## Tests (1 file) ########").expect(&text);
    let code_at = text
        .find("######## Implementation (5 files) ########")
        .expect(&text);
    assert!(tests_at < code_at, "{text}");
    // The test file's whole content, in the tests' section.
    let test_body = text.find("+    assert add(2, 3) == 5\n").expect(&text);
    assert!(tests_at < test_body && test_body < code_at, "{text}");
    // Every new and changed implementation file's diff, in its section.
    for line in [
        "+def sub(a, b):\n",
        "+    return a - b\n",
        "+def add(a, b):\n",
    ] {
        let at = text
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} missing:\n{text}"));
        assert!(
            at > code_at,
            "{line:?} is not in the implementation section:\n{text}"
        );
    }
    assert!(text.contains("---- NEW ops.py (2 lines) ----"), "{text}");
    assert!(
        text.contains("---- MODIFIED calc.py (+2 -0, 10 lines before, 12 after) ----"),
        "{text}"
    );
    // Binary files and links are named, never dumped.
    assert!(
        text.contains("---- NEW logo.png (binary file) ----"),
        "{text}"
    );
    assert!(text.contains("(binary file: named, not shown;"), "{text}");
    assert!(!text.contains("PNG"), "{text}");
    assert!(text.contains("---- NEW link.md (symlink) ----"), "{text}");
    assert!(!text.contains("+README.md"), "{text}");
    assert!(
        text.contains("---- NEW vendor/lib (gitlink (submodule)) ----"),
        "{text}"
    );
    assert!(!text.contains("Subproject commit"), "{text}");
    // The caps and the whole diff's command are stated at the top.
    let git = git_at(&Git::at(repo.path()));
    assert!(
        text.contains(&format!(
            "at most {MAX_FILE_DIFF_LINES} lines per file and {MAX_TOTAL_DIFF_LINES} in all"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "The whole diff, from any directory: {git} diff --cached -M\n"
        )),
        "{text}"
    );
}

#[test]
fn the_caps_are_kept_and_the_stated_command_shows_the_whole_diff() {
    let repo = TestRepo::with_commit(&[("README.md", b"A project.\n")]);
    // One file past the per-file cap, then enough files to pass the total.
    repo.write("big.py", lines("big", MAX_FILE_DIFF_LINES * 2));
    let files = MAX_TOTAL_DIFF_LINES / MAX_FILE_DIFF_LINES + 2;
    for i in 0..files {
        repo.write(
            &format!("more/m{i:02}.py"),
            lines(&format!("m{i}"), MAX_FILE_DIFF_LINES),
        );
    }
    repo.stage_all();
    let text = full_of(&repo);
    let git = git_at(&Git::at(repo.path()));
    assert!(
        text.contains(&format!(
            "... diff truncated: showing the first {MAX_FILE_DIFF_LINES} lines; the file has {} lines added and 0 deleted (see `{git} diff --cached -- big.py`)",
            MAX_FILE_DIFF_LINES * 2
        )),
        "{text}"
    );
    assert!(
        !text.contains(&format!("+big {MAX_FILE_DIFF_LINES}\n")),
        "cut at the cap"
    );
    let last = format!("more/m{:02}.py", files - 1);
    assert!(
        text.contains(&format!(
            "(not shown: the report's {MAX_TOTAL_DIFF_LINES}-line total is reached; see `{git} diff --cached -M -- {last}`)"
        )),
        "{text}"
    );
    let diff_lines = text
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .count();
    assert!(
        diff_lines <= MAX_TOTAL_DIFF_LINES,
        "{diff_lines} lines shown"
    );

    // The command the report states, run by a shell elsewhere, shows everything.
    let command = format!("{git} diff --cached -M");
    let elsewhere = tempfile::tempdir().unwrap();
    let whole = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(elsewhere.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(whole.status.success(), "{command}: {whole:?}");
    let whole = String::from_utf8_lossy(&whole.stdout);
    assert!(whole.contains(&format!("+big {}\n", MAX_FILE_DIFF_LINES * 2 - 1)));
    assert!(whole.contains(&format!("+m{} {}\n", files - 1, MAX_FILE_DIFF_LINES - 1)));
}
