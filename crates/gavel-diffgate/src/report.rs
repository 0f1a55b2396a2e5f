//! [`report`]: the text a person reads before approving a commit (LLD #171 §2.5 step 5): the
//! `git diff --cached --stat` summary, every NEW file with its line count, then for every
//! flagged file a WARNING banner with its before/after line counts and its actual diff, capped
//! at [`MAX_DIFF_LINES`] lines. All of it is sanitized, because it quotes file contents and
//! names straight onto a terminal.

use gavel_exec::git::Git;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};

use crate::git::{self, Running};
use crate::{Analysis, ChangeType, DiffGateError, FileAnalysis, MAX_DIFF_LINES, THRESHOLD};

/// Diff lines longer than this many characters are cut in the report (a minified file can be
/// one line of megabytes).
pub const MAX_LINE_CHARS: usize = 1000;

/// Options shared by the report's diffs: plain output, no configured drivers, paths from the
/// repository root, renames followed as in the analysis.
const DIFF_OPTS: &[&str] = &[
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "-M",
];

const RULE: &str = "========================================================================";

/// Builds the review report for `analysis`, the staged changes of the repository at `repo`.
/// Runs `git diff --cached --stat` once and `git diff --cached` once per flagged file (read
/// only up to the cap). The returned text is sanitized and ends with a newline.
pub fn report(repo: &Git, analysis: &Analysis) -> Result<String, DiffGateError> {
    if analysis.is_empty() {
        return Ok("No staged changes.\n".to_owned());
    }
    let mut args = vec!["diff", "--cached", "--stat"];
    args.extend_from_slice(DIFF_OPTS);
    let stat = git::output(repo, &args)?;

    let mut out = String::new();
    out.push_str("Staged changes (git diff --cached --stat):\n");
    out.push_str(&String::from_utf8_lossy(&stat));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');

    new_files(&mut out, analysis);
    specials(&mut out, analysis);

    let binaries: Vec<&FileAnalysis> = analysis.files.iter().filter(|f| f.binary).collect();
    if !binaries.is_empty() {
        out.push_str("Binary files (no lines to count):\n");
        for file in binaries {
            let _ = writeln!(out, "  {} ({})", shown(file), file.change_type);
        }
        out.push('\n');
    }

    let flagged = analysis.flagged();
    let total = analysis.files.len();
    if flagged.is_empty() {
        let _ = writeln!(
            out,
            "{} staged; none needs review (nothing replaced, deleted or more than {:.0}% changed).",
            plural(total, "file"),
            THRESHOLD * 100.0
        );
        return Ok(crate::sanitize(&out));
    }
    let _ = writeln!(
        out,
        "{} staged; {} flagged for review (REPLACED, DELETED or more than {:.0}% changed).",
        plural(total, "file"),
        flagged.len(),
        THRESHOLD * 100.0
    );
    for file in flagged {
        out.push('\n');
        banner(&mut out, file);
        diff(repo, file, &mut out, MAX_DIFF_LINES, "git")?;
    }
    Ok(crate::sanitize(&out))
}

/// Lists every symbolic link and submodule the change stages, named as such: a link or a
/// gitlink looks like a one-line file in `--stat`, and either can point the merged tree at
/// something no diff shows.
fn specials(out: &mut String, analysis: &Analysis) {
    let special: Vec<&FileAnalysis> = analysis
        .files
        .iter()
        .filter(|f| f.special.is_some())
        .collect();
    if special.is_empty() {
        return;
    }
    out.push_str(
        "Links and submodules (not regular files):
",
    );
    for file in special {
        let kind = file.special.map(crate::Special::as_str).unwrap_or_default();
        let _ = writeln!(out, "  {} ({kind}, {})", shown(file), file.change_type);
    }
    out.push('\n');
}

/// Lists every NEW file with its line count. git's `--stat` shows a new file like any other
/// change, and new files are never flagged, so without this block a person could approve a
/// commit without noticing what it adds.
fn new_files(out: &mut String, analysis: &Analysis) {
    let new: Vec<&FileAnalysis> = analysis
        .files
        .iter()
        .filter(|f| f.change_type == ChangeType::New)
        .collect();
    if new.is_empty() {
        return;
    }
    out.push_str("New files (not flagged: the gate protects existing code; still committed):\n");
    for file in new {
        let size = if file.binary {
            "binary file".to_owned()
        } else {
            plural_u64(file.new_lines, "line")
        };
        let _ = writeln!(out, "  NEW  {} ({size})", shown(file));
    }
    out.push('\n');
}

pub(crate) fn banner(out: &mut String, file: &FileAnalysis) {
    let name = shown(file);
    let binary = if file.binary { " (binary file)" } else { "" };
    let _ = writeln!(out, "{RULE}");
    let _ = match file.change_type {
        ChangeType::Replaced => writeln!(
            out,
            "WARNING: {name} was REPLACED: {} lines before, {} after (ratio {:.2})",
            file.original_lines, file.new_lines, file.change_ratio
        ),
        ChangeType::Deleted if file.binary => {
            writeln!(out, "WARNING: {name} was DELETED{binary}")
        }
        ChangeType::Deleted => writeln!(
            out,
            "WARNING: {name} was DELETED: {} lines before, 0 after",
            file.original_lines
        ),
        ChangeType::Modified
            if file.added == 0 && crate::lost_most_lines(file.original_lines, file.deleted) =>
        {
            writeln!(
                out,
                "WARNING: {name} lost most of its lines: {} lines before, {} after{binary}",
                file.original_lines, file.new_lines
            )
        }
        ChangeType::Modified | ChangeType::New => writeln!(
            out,
            "WARNING: {name} was rewritten: {} lines before, {} after (ratio {:.2} > {THRESHOLD:.2}){binary}",
            file.original_lines, file.new_lines, file.change_ratio
        ),
    };
    if !file.binary {
        let _ = writeln!(
            out,
            "         {} of {} original lines deleted, {} added",
            file.deleted, file.original_lines, file.added
        );
    }
    let _ = writeln!(out, "{RULE}");
}

/// Appends the file's diff, at most `cap` lines, and returns how many lines it showed. git is
/// stopped as soon as the cap is passed, so a huge diff is never read, let alone held. `git`
/// is how the truncation note's command reaches the repository (`git`, or `git -C DIR`).
pub(crate) fn diff(
    repo: &Git,
    file: &FileAnalysis,
    out: &mut String,
    cap: usize,
    git: &str,
) -> Result<usize, DiffGateError> {
    let mut specs = Vec::new();
    if let Some(old) = &file.old_path {
        specs.push(pathspec(old));
    }
    specs.push(pathspec(&file.path));
    let mut args = vec!["diff", "--cached"];
    args.extend_from_slice(DIFF_OPTS);
    args.push("--");
    args.extend(specs.iter().map(String::as_str));
    let command = git::describe(&args);
    let mut running = Running::spawn(git::command(repo, &args), command.clone(), repo.root())?;
    let Some(stdout) = running.child().stdout.take() else {
        running.stop();
        return Err(DiffGateError::UnexpectedOutput {
            command,
            detail: "git's output pipe was not opened".to_owned(),
        });
    };
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    let mut shown_lines = 0usize;
    let truncated = loop {
        line.clear();
        let read = read_capped_line(&mut reader, &mut line, MAX_LINE_CHARS * 4);
        let cut = match read {
            Ok(Some(cut)) => cut,
            Ok(None) => break false,
            Err(source) => {
                drop(reader);
                running.stop();
                return Err(DiffGateError::GitIo { command, source });
            }
        };
        if shown_lines == cap {
            break true;
        }
        shown_lines += 1;
        push_line(out, &line, cut);
    };
    drop(reader);
    if truncated {
        running.stop();
        let _ = writeln!(
            out,
            "... diff truncated: showing the first {cap} lines; the file has {} lines added and {} deleted (see `{git} diff --cached -- {}`)",
            file.added,
            file.deleted,
            shell_quoted(&file.path)
        );
        return Ok(shown_lines);
    }
    running.finish()?;
    if shown_lines == 0 {
        let _ = writeln!(
            out,
            "(git showed no diff for this path; inspect it with `{git} diff --cached`)"
        );
    }
    Ok(shown_lines)
}

fn push_line(out: &mut String, line: &[u8], cut: bool) {
    let text = String::from_utf8_lossy(line);
    let mut chars = text.char_indices();
    match chars.nth(MAX_LINE_CHARS) {
        Some((end, _)) => {
            out.push_str(&text[..end]);
            let _ = writeln!(out, " [... line cut at {MAX_LINE_CHARS} characters]");
        }
        None if cut => {
            out.push_str(&text);
            let _ = writeln!(out, " [... line cut at {MAX_LINE_CHARS} characters]");
        }
        None => {
            out.push_str(&text);
            out.push('\n');
        }
    }
}

/// Reads one line (without its `\n`) into `line`, keeping at most `cap` bytes and skipping the
/// rest of a longer line. `None` at the end of input; `Some(true)` when the line was cut.
fn read_capped_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    let mut any = false;
    let mut cut = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (end, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        let room = cap.saturating_sub(line.len());
        if end > room {
            cut = true;
        }
        line.extend_from_slice(&buf[..end.min(room)]);
        reader.consume(if done { end + 1 } else { end });
        if done {
            return Ok(Some(cut));
        }
    }
}

/// A pathspec that matches exactly `path` from the repository root, whatever characters the
/// name holds (`*`, `:`, a leading `-`).
fn pathspec(path: &str) -> String {
    format!(":(top,literal){path}")
}

/// The file's name as shown in the report: `old -> new` for a rename, with control and bidi
/// characters (a newline in a name included) written as escapes so a name cannot break or
/// disguise the report.
pub(crate) fn shown(file: &FileAnalysis) -> String {
    let mut out = String::new();
    for c in file.display_name().chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || crate::sanitize::is_bidi(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// `path` quoted for a POSIX shell when it needs it, for the copy-paste hint.
pub(crate) fn shell_quoted(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./+,=@%".contains(&b));
    if plain {
        return path.to_owned();
    }
    let escaped: String = path
        .chars()
        .map(|c| match c {
            '\'' => "'\\''".to_owned(),
            '\n' => "'$'\\n''".to_owned(),
            c if c.is_control() => format!("'$'\\u{:04x}''", u32::from(c)),
            c => c.to_string(),
        })
        .collect();
    format!("'{escaped}'")
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    plural_u64(u64::try_from(n).unwrap_or(u64::MAX), word)
}

pub(crate) fn plural_u64(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_lines() {
        let text = b"short\nthis line is long\nend";
        let mut reader = BufReader::with_capacity(4, &text[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_capped_line(&mut reader, &mut line, 8).unwrap(),
            Some(false)
        );
        assert_eq!(line, b"short");
        line.clear();
        assert_eq!(
            read_capped_line(&mut reader, &mut line, 8).unwrap(),
            Some(true)
        );
        assert_eq!(line, b"this lin");
        line.clear();
        assert_eq!(
            read_capped_line(&mut reader, &mut line, 8).unwrap(),
            Some(false)
        );
        assert_eq!(line, b"end");
        line.clear();
        assert_eq!(read_capped_line(&mut reader, &mut line, 8).unwrap(), None);
    }

    #[test]
    fn quoting_for_the_hint() {
        assert_eq!(shell_quoted("src/state.py"), "src/state.py");
        assert_eq!(shell_quoted("my file.txt"), "'my file.txt'");
        assert_eq!(shell_quoted("it's"), "'it'\\''s'");
        assert_eq!(shell_quoted("a\nb"), "'a'$'\\n''b'");
    }
}
