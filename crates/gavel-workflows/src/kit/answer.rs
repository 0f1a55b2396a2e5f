//! The one format in which a text-only model (an HTTP API, the scripted provider) says "write
//! these files": whole files and deletions between sentinel lines, parsed strictly.
//!
//! ```text
//! === gavel:write tests/test_calc.py
//! from calc import add
//!
//! def test_add():
//!     assert add(1, 2) == 3
//! === gavel:end
//! === gavel:delete old_calc.py
//! ```
//!
//! Text outside the blocks (a model's preamble or summary) is ignored. Everything else that
//! is not exactly this shape is an error naming the line: an unknown `=== gavel:` directive, a
//! block that never ends, a path given twice, a path that is absolute, has `..`, `.` or empty
//! parts, or points into `.git/`, or an answer with no file at all. An answer with an error is
//! never half applied: the workflow feeds the error back to the model instead.

use std::collections::BTreeSet;

/// One change the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create or replace a whole file.
    Write {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
}

impl FileOp {
    pub fn path(&self) -> &str {
        match self {
            Self::Write { path, .. } | Self::Delete { path } => path,
        }
    }
}

const PREFIX: &str = "=== gavel:";

/// Why an answer is not a valid set of file changes (the line is 1-based).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the answer's file changes cannot be used (line {line}): {message}")]
pub struct FormatError {
    pub line: usize,
    pub message: String,
}

/// The file changes in `answer`, in order.
pub fn parse(answer: &str) -> Result<Vec<FileOp>, FormatError> {
    let err = |line: usize, message: String| FormatError { line, message };
    let mut ops = Vec::new();
    let mut seen = BTreeSet::new();
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    for (i, line) in answer.lines().enumerate() {
        let n = i + 1;
        let directive = line.strip_prefix(PREFIX);
        if let Some((start, path, body)) = open.as_mut() {
            match directive.map(str::trim_end) {
                Some("end") => {
                    let mut content = body.join("\n");
                    content.push('\n');
                    ops.push(FileOp::Write {
                        path: std::mem::take(path),
                        content,
                    });
                    open = None;
                }
                Some(other) => {
                    return Err(err(
                        n,
                        format!(
                            "`{PREFIX}{other}` inside the file block opened on line {start}; close it with `{PREFIX}end` first"
                        ),
                    ));
                }
                None => body.push(line),
            }
            continue;
        }
        let Some(directive) = directive else { continue };
        let directive = directive.trim_end();
        let (verb, path) = directive.split_once(' ').unwrap_or((directive, ""));
        let path = path.trim();
        match verb {
            "write" | "delete" => {
                check_path(path).map_err(|m| err(n, m))?;
                if !seen.insert(path.to_owned()) {
                    return Err(err(n, format!("`{path}` is given twice")));
                }
                if verb == "write" {
                    open = Some((n, path.to_owned(), Vec::new()));
                } else {
                    ops.push(FileOp::Delete {
                        path: path.to_owned(),
                    });
                }
            }
            "end" => return Err(err(n, format!("`{PREFIX}end` without an open file block"))),
            other => {
                return Err(err(
                    n,
                    format!(
                        "unknown directive `{PREFIX}{other}` (valid: write PATH, end, delete PATH)"
                    ),
                ));
            }
        }
    }
    if let Some((start, path, _)) = open {
        return Err(err(
            start,
            format!("the block for `{path}` is never closed with `{PREFIX}end`"),
        ));
    }
    if ops.is_empty() {
        return Err(err(
            answer.lines().count().max(1),
            format!(
                "no file changes: write each file between `{PREFIX}write PATH` and `{PREFIX}end`"
            ),
        ));
    }
    Ok(ops)
}

/// A repository-relative path a model may name: relative, `/`-separated, no empty, `.` or
/// `..` parts, not in `.git/`.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("a file path is missing".into());
    }
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return Err(format!(
            "`{path}` must be a relative path with `/` separators"
        ));
    }
    for part in path.split('/') {
        match part {
            "" | "." | ".." => {
                return Err(format!(
                    "`{path}` has an empty, `.` or `..` part; paths stay inside the worktree"
                ));
            }
            p if p.eq_ignore_ascii_case(".git") => {
                return Err(format!(
                    "`{path}` names a `.git` (in any case): git's metadata is not the model's to write"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// How a model is told to answer (part of every prompt of a text-only step).
pub const INSTRUCTIONS: &str = "Answer with the files to write, each whole, between these lines (nothing else is read, text outside them is ignored):\n\n=== gavel:write RELATIVE/PATH\n<the whole file>\n=== gavel:end\n\nTo delete a file: `=== gavel:delete RELATIVE/PATH` on a line of its own. Paths are relative to the repository root.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_deletes_are_read_with_their_whole_content() {
        let ops = parse(
            "Here you go.\n=== gavel:write src/a.py\ndef a():\n\n    return 1\n=== gavel:end\n=== gavel:delete old.py\nDone.\n",
        )
        .expect("parses");
        assert_eq!(
            ops,
            [
                FileOp::Write {
                    path: "src/a.py".into(),
                    content: "def a():\n\n    return 1\n".into()
                },
                FileOp::Delete {
                    path: "old.py".into()
                }
            ]
        );
        let empty = parse("=== gavel:write empty.txt\n=== gavel:end\n").expect("empty file");
        assert_eq!(
            empty,
            [FileOp::Write {
                path: "empty.txt".into(),
                content: "\n".into()
            }]
        );
    }

    #[test]
    fn every_malformed_answer_names_its_line() {
        for (answer, line, needle) in [
            ("no blocks at all", 1, "no file changes"),
            ("=== gavel:write a.py\nx\n", 1, "never closed"),
            ("=== gavel:end\n", 1, "without an open"),
            ("=== gavel:rewrite a.py\n", 1, "unknown directive"),
            (
                "=== gavel:write a.py\n=== gavel:write b.py\n",
                2,
                "inside the file block",
            ),
            (
                "=== gavel:delete a.py\n=== gavel:delete a.py\n",
                2,
                "given twice",
            ),
            (
                "=== gavel:write /etc/passwd\n=== gavel:end\n",
                1,
                "relative",
            ),
            ("=== gavel:write ../x\n=== gavel:end\n", 1, "`..`"),
            ("=== gavel:write a//b\n=== gavel:end\n", 1, "empty"),
            ("=== gavel:write .git/config\n=== gavel:end\n", 1, ".git"),
            (
                "=== gavel:write sub/.git/hooks/x\n=== gavel:end\n",
                1,
                ".git",
            ),
            ("=== gavel:write \n=== gavel:end\n", 1, "missing"),
            ("=== gavel:delete\n", 1, "missing"),
        ] {
            let e = parse(answer).expect_err(answer);
            assert_eq!(e.line, line, "{answer:?}: {e}");
            assert!(e.message.contains(needle), "{answer:?}: {e}");
        }
    }
}
