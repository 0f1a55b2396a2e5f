//! [`analyze_staged`]: the staged changes (index against `HEAD`) measured file by file, in two
//! concurrent git processes whatever the number of files (see the crate docs for the rules).

use gavel_exec::git::Git;
use std::collections::HashSet;
use std::io::BufReader;

use serde::{Deserialize, Serialize};

use crate::catfile::LineCounter;
use crate::git::{self, Running};
use crate::parse::{self, GITLINK_MODE, ParseError, RawEntry, SYMLINK_MODE};
use crate::{ChangeType, DiffGateError, classify};

/// The arguments of the one diff the analysis runs. `--no-abbrev` gives full object ids for
/// `cat-file`; `--no-relative` keeps paths repository-relative whatever `diff.relative` says.
const DIFF_ARGS: &[&str] = &[
    "diff",
    "--cached",
    "--raw",
    "--numstat",
    "-z",
    "-M",
    "--no-abbrev",
    "--no-relative",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
];

/// One staged file, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileAnalysis {
    /// The path in the index (the new path of a rename), relative to the repository root.
    pub path: String,
    /// The path in `HEAD` when the file was renamed.
    pub old_path: Option<String>,
    /// Lines added (0 for binary files).
    pub added: u64,
    /// Lines deleted (0 for binary files).
    pub deleted: u64,
    /// Lines in `HEAD` (of the old path for a rename); 0 for new and binary files.
    pub original_lines: u64,
    /// Lines staged: `original_lines - deleted + added` (0 for deleted and binary files).
    pub new_lines: u64,
    /// git considers the file binary, so no lines were counted.
    pub binary: bool,
    /// `(added + deleted) / (original_lines * 2)`, clamped to `[0, 1]`.
    pub change_ratio: f64,
    pub change_type: ChangeType,
    /// The file needs a person's review before it may be committed.
    pub flagged: bool,
    /// Not a regular file in the index: a symbolic link or a submodule (gitlink), which the
    /// report names as such (`None`: a regular file, or deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub special: Option<Special>,
}

/// An index entry that is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Special {
    /// Mode 120000: the blob is the path it points at.
    Symlink,
    /// Mode 160000: a commit of another repository (a submodule).
    Gitlink,
}

impl Special {
    fn of(mode: &str) -> Option<Self> {
        match mode {
            SYMLINK_MODE => Some(Self::Symlink),
            GITLINK_MODE => Some(Self::Gitlink),
            _ => None,
        }
    }

    /// How the report names it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Symlink => "symlink",
            Self::Gitlink => "gitlink (submodule)",
        }
    }
}

impl FileAnalysis {
    /// `path`, or `old -> new` for a rename: how the file is named in reports.
    #[must_use]
    pub fn display_name(&self) -> String {
        match &self.old_path {
            Some(old) => format!("{old} -> {}", self.path),
            None => self.path.clone(),
        }
    }
}

/// Every staged file, in git's order (sorted by path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub files: Vec<FileAnalysis>,
}

impl Analysis {
    /// The files that need review.
    #[must_use]
    pub fn flagged(&self) -> Vec<&FileAnalysis> {
        self.files.iter().filter(|f| f.flagged).collect()
    }

    /// Nothing is staged.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Measures the staged changes of the repository or worktree at `repo`: one
/// `git diff --cached --raw --numstat -z -M` for the file list and counts, and one
/// `git cat-file --batch` for the original line counts, run side by side (the blobs are
/// requested as the diff's raw section streams in, while git is still computing the numstat).
/// In a repository without commits every staged file is NEW.
pub fn analyze_staged(repo: &Git) -> Result<Analysis, DiffGateError> {
    let command = git::describe(DIFF_ARGS);
    let mut diff = Running::spawn(git::command(repo, DIFF_ARGS), command.clone(), repo.root())?;
    let Some(stdout) = diff.child().stdout.take() else {
        diff.stop();
        return Err(DiffGateError::UnexpectedOutput {
            command,
            detail: "git's output pipe was not opened".to_owned(),
        });
    };
    let counter = match LineCounter::start(repo) {
        Ok(counter) => counter,
        Err(err) => {
            diff.stop();
            return Err(err);
        }
    };

    // The blobs whose lines must be counted, each once. Binary files are only known as such
    // from the numstat section, after their requests went out; their counts are ignored.
    let mut seen = HashSet::new();
    let parsed = parse::parse_stream(BufReader::with_capacity(64 * 1024, stdout), |entry| {
        if needs_count(entry) && seen.insert(entry.old_oid.clone()) {
            let name = entry.old_path.as_deref().unwrap_or(&entry.path);
            counter.request(&entry.old_oid, lossy(name));
        }
    });
    let entries = match parsed {
        Ok(entries) => entries,
        Err(err) => {
            counter.abort();
            diff.stop();
            return Err(match err {
                ParseError::Io(source) => DiffGateError::GitIo { command, source },
                ParseError::Format(detail) => DiffGateError::UnexpectedOutput { command, detail },
            });
        }
    };
    if let Err(err) = diff.finish() {
        counter.abort();
        return Err(err);
    }
    if let Some(entry) = entries.iter().find(|e| e.status == b'U') {
        counter.abort();
        return Err(DiffGateError::Unmerged {
            path: lossy(&entry.path),
        });
    }
    let counts = counter.finish()?;

    let files = entries
        .iter()
        .map(|entry| {
            let original_lines = if entry.old_mode == GITLINK_MODE {
                1
            } else {
                counts.get(&entry.old_oid).copied().unwrap_or(0)
            };
            measure(entry, original_lines)
        })
        .collect();
    Ok(Analysis { files })
}

/// Whether the entry's original may have lines to count: it existed in `HEAD` and is a blob.
fn needs_count(entry: &RawEntry) -> bool {
    !matches!(entry.status, b'A' | b'U')
        && entry.old_mode != GITLINK_MODE
        && !parse::is_null_oid(&entry.old_oid)
}

fn measure(entry: &RawEntry, original_lines: u64) -> FileAnalysis {
    let is_new = entry.status == b'A';
    let is_deleted = entry.status == b'D';
    let (original_lines, added, deleted) = if entry.binary || is_new {
        (0, entry.added, entry.deleted)
    } else {
        (original_lines, entry.added, entry.deleted)
    };
    let (change_ratio, change_type, flagged) =
        classify(original_lines, added, deleted, is_new, is_deleted);
    let new_lines = if entry.binary || is_deleted {
        0
    } else {
        original_lines.saturating_sub(deleted).saturating_add(added)
    };
    FileAnalysis {
        path: lossy(&entry.path),
        old_path: entry.old_path.as_deref().map(lossy),
        added,
        deleted,
        original_lines,
        new_lines,
        binary: entry.binary,
        change_ratio,
        change_type,
        flagged,
        special: Special::of(&entry.new_mode),
    }
}

/// Paths are bytes to git; gavel shows them as UTF-8, replacing what is not.
fn lossy(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}
