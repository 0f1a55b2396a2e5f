//! [`full_report`]: the report a workflow's diff gate shows, with every staged file's diff.
//!
//! [`crate::report`] (the `gavel diff-gate` command, LLD #171) shows diffs only for flagged
//! files and lists new ones by name: it protects existing code. A workflow that wrote the code
//! itself (test first, so nearly every file is new) must show what a person approves, so this
//! report shows the diff of every new and changed text file, tests and implementation in
//! separate sections (tests first), each file's diff capped at [`MAX_FILE_DIFF_LINES`] lines
//! and the report at [`MAX_TOTAL_DIFF_LINES`], both caps stated at the top together with the
//! exact `git` command that shows the whole diff from anywhere (`git -C WORKTREE ...`).
//! Binary files, symbolic links and submodules are named, never dumped. Flagged files carry the
//! same WARNING banner as in [`crate::report`].

use std::fmt::Write as _;

use gavel_exec::git::Git;

use crate::report::{banner, diff, plural, plural_u64, shell_quoted, shown};
use crate::{Analysis, ChangeType, DiffGateError, FileAnalysis, THRESHOLD, git};

/// At most this many lines of one file's diff go into a [`full_report`].
pub const MAX_FILE_DIFF_LINES: usize = 400;

/// At most this many diff lines in all go into a [`full_report`]; files past it are named with
/// the command that shows them.
pub const MAX_TOTAL_DIFF_LINES: usize = 4000;

/// Options of [`full_report`].
pub struct FullReport<'a> {
    /// Whether a repository-relative path is a test file (the tests' section).
    pub is_test: &'a dyn Fn(&str) -> bool,
}

/// The `git` command, as a person types it from any directory, that reaches `repo`.
#[must_use]
pub fn git_at(repo: &Git) -> String {
    format!("git -C {}", shell_quoted(&repo.root().to_string_lossy()))
}

/// Builds the report of every staged file of `repo` (see the module doc). Runs one
/// `git diff --cached --stat` and one capped `git diff --cached` per text file shown. The text
/// is sanitized and ends with a newline.
pub fn full_report(
    repo: &Git,
    analysis: &Analysis,
    opts: &FullReport<'_>,
) -> Result<String, DiffGateError> {
    if analysis.is_empty() {
        return Ok("No staged changes.\n".to_owned());
    }
    let mut args = vec![
        "diff",
        "--cached",
        "--stat",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-relative",
        "-M",
    ];
    args.push("--");
    let stat = git::output(repo, &args)?;
    let git = git_at(repo);

    let (tests, code): (Vec<&FileAnalysis>, Vec<&FileAnalysis>) =
        analysis.files.iter().partition(|f| (opts.is_test)(&f.path));
    let flagged = analysis.flagged();

    let mut out = String::new();
    out.push_str("Staged changes (git diff --cached --stat):\n");
    out.push_str(&String::from_utf8_lossy(&stat));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{} staged: {}, {}; {} flagged for review (REPLACED, DELETED or more than {:.0}% changed){}",
        plural(analysis.files.len(), "file"),
        plural(tests.len(), "test file"),
        plural(code.len(), "implementation file"),
        flagged.len(),
        THRESHOLD * 100.0,
        if flagged.is_empty() {
            ".".to_owned()
        } else {
            format!(
                ": {}.",
                flagged
                    .iter()
                    .map(|f| shown(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    let _ = writeln!(
        out,
        "Every file's diff follows, tests first, at most {MAX_FILE_DIFF_LINES} lines per file and {MAX_TOTAL_DIFF_LINES} in all; binary files, links and submodules are named, not shown."
    );
    let _ = writeln!(
        out,
        "The whole diff, from any directory: {git} diff --cached -M"
    );
    let _ = writeln!(
        out,
        "One file's whole diff:             {git} diff --cached -M -- PATH"
    );

    let mut budget = MAX_TOTAL_DIFF_LINES;
    for (title, files) in [("Tests", &tests), ("Implementation", &code)] {
        out.push('\n');
        let _ = writeln!(
            out,
            "######## {title} ({}) ########",
            plural(files.len(), "file")
        );
        if files.is_empty() {
            let _ = writeln!(out, "(no {} file changed)", title.to_lowercase());
        }
        for file in files.iter() {
            out.push('\n');
            budget = budget.saturating_sub(one_file(repo, file, &mut out, budget, &git)?);
        }
    }
    Ok(crate::sanitize(&out))
}

/// One file's header and (for a text file, within `budget`) its diff; returns the diff lines
/// shown.
fn one_file(
    repo: &Git,
    file: &FileAnalysis,
    out: &mut String,
    budget: usize,
    git: &str,
) -> Result<usize, DiffGateError> {
    let not_text = match (file.special, file.binary) {
        (Some(special), _) => Some(special.as_str()),
        (None, true) => Some("binary file"),
        (None, false) => None,
    };
    if file.flagged {
        banner(out, file);
    } else {
        let size = match (not_text, file.change_type) {
            (Some(kind), _) => kind.to_owned(),
            (None, ChangeType::New) => plural_u64(file.new_lines, "line"),
            (None, _) => format!(
                "+{} -{}, {} lines before, {} after",
                file.added, file.deleted, file.original_lines, file.new_lines
            ),
        };
        let _ = writeln!(
            out,
            "---- {} {} ({size}) ----",
            file.change_type,
            shown(file)
        );
    }
    if let Some(kind) = not_text {
        let _ = writeln!(
            out,
            "({kind}: named, not shown; see `{git} diff --cached -M --stat -- {}`)",
            shell_quoted(&file.path)
        );
        return Ok(0);
    }
    if budget == 0 {
        let _ = writeln!(
            out,
            "(not shown: the report's {MAX_TOTAL_DIFF_LINES}-line total is reached; see `{git} diff --cached -M -- {}`)",
            shell_quoted(&file.path)
        );
        return Ok(0);
    }
    diff(repo, file, out, MAX_FILE_DIFF_LINES.min(budget), git)
}
