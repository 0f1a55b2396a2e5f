//! The implementation workflows' diff gate shows what a person approves: every new and changed
//! file's diff, tests and implementation apart, in the terminal and in the report `gavel show`
//! names, with the `git` command that shows the whole diff from the person's checkout while
//! the run waits (issue 32: new files showed only as `NEW calc.py (2 lines)`).

use crate::util::*;

/// The report `gavel show RUN` names at the waiting diff gate, and its text.
fn shown_report(env: &Env, run: &str) -> String {
    let out = env.run(&["show", run]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("read:"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("`gavel show` names no report:\n{text}"));
    assert!(path.ends_with("diff-review.md"), "{text}");
    std::fs::read_to_string(path).expect("the report gavel show names")
}

/// Checks the report shows `test_line` in the tests' section and `code_line` in the
/// implementation's, and returns the whole-diff command it states.
fn check_sections(text: &str, test_line: &str, code_line: &str) -> String {
    let tests = text.find("######## Tests (").expect(text);
    let code = text.find("######## Implementation (").expect(text);
    assert!(tests < code, "tests first:\n{text}");
    let t = text
        .find(test_line)
        .unwrap_or_else(|| panic!("{test_line:?}:\n{text}"));
    assert!(tests < t && t < code, "{text}");
    let c = text
        .find(code_line)
        .unwrap_or_else(|| panic!("{code_line:?}:\n{text}"));
    assert!(c > code, "{text}");
    assert!(!text.contains("NEW  calc.py (2 lines)"), "{text}");
    assert!(
        text.contains("at most 400 lines per file and 4000 in all"),
        "{text}"
    );
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("The whole diff, from any directory: ")
        })
        .expect(text)
        .to_owned()
}

/// Runs `command` with a shell in the person's checkout.
fn run_in_checkout(env: &Env, command: &str) -> String {
    let mut sh = std::process::Command::new("sh");
    env.clean_env(&mut sh);
    let out = sh
        .arg("-c")
        .arg(command)
        .current_dir(&env.repo)
        .output()
        .expect("sh");
    assert!(out.status.success(), "{command}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn regression_the_implement_diff_gate_shows_every_new_files_diff_tests_first() {
    const CODE: &str = "=== gavel:write calc.py\ndef add(a, b):\n    return a + b\n=== gavel:end\n=== gavel:write ops.py\ndef sub(a, b):\n    return a - b\n=== gavel:end\n";
    let env = python_project(&[TESTS, CODE]);
    let out = start(&env);
    assert_exit(&out, 3);

    // `gavel show` names the report; it holds every file's diff.
    let report = shown_report(&env, "1");
    let command = check_sections(&report, "+    assert add(2, 3) == 5", "+    return a + b");
    assert!(report.contains("+    return a - b"), "{report}");
    // The stated command works from the person's checkout while the run waits.
    let whole = run_in_checkout(&env, &command);
    for line in [
        "+    assert add(2, 3) == 5",
        "+    return a + b",
        "+    return a - b",
    ] {
        assert!(whole.contains(line), "{command}:\n{whole}");
    }
    assert!(
        !whole.contains("docs/lineage"),
        "the lineage is not the change: {whole}"
    );

    // The terminal shows the whole report before asking.
    let editor = crate::pty::fake_editor(&env);
    let mut p = crate::pty::spawn(&env, &["resume", "1"], &editor.to_string_lossy());
    let (before, _) = p
        .exp_regex(r"Your choice \[approve/reject/P\]: ")
        .expect("the diff gate asks");
    let shown = before.replace("\r\n", "\n");
    check_sections(&shown, "+    assert add(2, 3) == 5", "+    return a + b");
    assert!(shown.contains("+    return a - b"), "{shown}");
    assert!(!shown.contains("more lines in"), "{shown}");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
    assert!(env.exists("ops.py"));
}

#[test]
fn regression_the_change_impl_diff_gate_shows_every_diff_too() {
    let env = Env::new();
    crate::change_impl::script(
        &env,
        &[TESTS, CODE],
        &[crate::change_impl::review("APPROVED", &[])],
    );
    crate::change_impl::challenged_change(&env);
    let out = crate::change_impl::impl_run(&env);
    assert_exit(&out, 3);
    let report = shown_report(&env, "1");
    let command = check_sections(&report, "+def test_add():", "+    return a + b");
    // The ticked tasks are part of what is approved.
    assert!(
        report.contains("+- [x] 2.1 add(a, b) in calc.py"),
        "{report}"
    );
    let whole = run_in_checkout(&env, &command);
    assert!(whole.contains("+    return a + b"), "{whole}");
    approve_in_a_terminal(&env, "1");
    assert!(env.exists("calc.py"));
}
