//! The diff review gate's analysis and report (LLD #171): before gavel commits, every staged
//! file is measured against `HEAD`, files that were largely rewritten, replaced or deleted are
//! flagged, and a report is built that a person must read and approve.
//!
//! This crate is the half of the gate that looks at the repository. It never prints, prompts
//! or reads the terminal: [`analyze_staged`] returns an [`Analysis`], [`report`] returns the
//! (already sanitized) text to show, and [`append_audit`] records the decision the CLI obtained
//! from a person and returns the record it wrote. The `gavel diff-gate` command in `gavel-cli` does the asking and maps the
//! outcome to exit codes.
//!
//! # Rules
//!
//! * `change_ratio = (added + deleted) / (original_lines * 2)`, clamped to `[0, 1]`
//!   ([`change_ratio`]).
//! * **REPLACED** when `deleted > 0.5 * original_lines` and `added > 0`.
//! * **NEW** (not in `HEAD`): ratio 1.0 and *not* flagged. The gate protects existing code, but
//!   a person must still see everything the commit adds: the report lists every new file after
//!   the `--stat` summary, marked `NEW`, with its line count.
//! * **DELETED**: ratio 1.0, always flagged.
//! * A file is flagged when `change_ratio > THRESHOLD` ([`THRESHOLD`] is hard-coded to 0.5, as
//!   the LLD decided), or it is REPLACED, or it is DELETED ([`classify`]).
//! * **Added to the LLD:** a file that lost more than half of its lines with nothing added is
//!   flagged too (as MODIFIED). Deletions alone can never lift the ratio above 0.5, so without
//!   this rule a file emptied in place would pass the gate ([`lost_most_lines`]).
//!
//! # Decisions where the LLD is silent
//!
//! * **Line counts** count a last line without a trailing newline (`"a\nb"` is 2 lines), the
//!   way `git diff --numstat` counts it, so `deleted` never exceeds `original_lines`.
//! * **Empty original file** (0 lines, still in `HEAD`): the ratio's denominator is 0, so any
//!   change clamps to 1.0 and the file is flagged; no change is 0.0. Failing closed is the
//!   gate's rule (LLD §7.2).
//! * **Binary files** (numstat `-`): `added`/`deleted`/line counts are 0 and `binary` is set;
//!   they are flagged only when DELETED. The report names them as binary.
//! * **Renames** (`-M`): the original line count is read from the *old* blob, so a moved and
//!   rewritten file is measured against what it was. Reported as `old -> new`.
//! * **Submodules** (gitlinks) have no blob to read; they count as one line (the
//!   `Subproject commit <id>` line `git diff` shows), so a moved submodule pointer is REPLACED
//!   and flagged.
//! * **Unmerged paths** make the analysis fail: a half-resolved merge is not reviewable.
//! * **Environment**: git runs with `GIT_TERMINAL_PROMPT=0` and `GIT_OPTIONAL_LOCKS=0` (the gate
//!   only reads), with `GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE` and friends removed so the
//!   repository is always the one at `repo`; `--no-ext-diff --no-textconv` so configured
//!   drivers cannot change the counts or run programs.
//! * **The report's diffs** are capped at [`MAX_DIFF_LINES`] lines per flagged file; git is
//!   stopped once the cap is reached instead of reading the rest, so the truncation note gives
//!   the file's `+added -deleted` counts rather than the total number of diff lines. Very long
//!   lines are cut at [`MAX_LINE_CHARS`] characters.
//!
//! # Cost
//!
//! [`analyze_staged`] runs exactly two git processes however many files changed, side by side:
//! one `git diff --cached --raw --numstat -z -M` and one long-lived `git cat-file --batch`. As
//! the diff's raw section streams in, the old blobs' ids go to `cat-file` (by id, not
//! `HEAD:<path>`: see `catfile.rs` for why), whose answers are counted in fixed-size chunks
//! while git is still computing the numstat; no blob is ever held in memory. (Whether a file is
//! binary is only known from the numstat, so a binary original is streamed and its count
//! dropped.) [`report`] runs one `git diff --cached --stat` plus one `git diff` per *flagged*
//! file, each stopped after [`MAX_DIFF_LINES`] lines. `bench/diff-gate.sh` measures both.
//!
//! # The workflows' report
//!
//! A workflow that wrote the code it asks a person to approve shows [`full_report`] instead:
//! every new and changed text file's diff, tests and implementation in separate sections, capped
//! at [`MAX_FILE_DIFF_LINES`] lines per file and [`MAX_TOTAL_DIFF_LINES`] in all (both stated in
//! the report), with the `git -C WORKTREE diff --cached -M` command that shows the whole diff.
//! Binary files, symbolic links and submodules are named, never dumped.
//!
//! # The audit record
//!
//! [`append_audit`] appends one JSON line per decision ([`AuditEvent`]) to the log a team keeps
//! and returns the exact line it wrote, newline included. gavel's default log is
//! [`DEFAULT_AUDIT_LOG`], relative to the repository root: a file meant to be committed (unlike
//! `.gavel/`, which `gavel init` ignores), so the record travels with the history it judged.
//! `[diff_gate] audit_log` in `gavel.toml` moves it.
//!
//! **Contract for workflows.** A workflow that runs the gate (the implementation workflow runs
//! it before its merge) must keep a copy of every record its gate wrote in its own lineage
//! folder: for each decision, in order, it writes the line `append_audit` returned, unchanged,
//! into a lineage artifact (one JSON line per decision). It writes the copy only after
//! `append_audit` returned, so the lineage never holds a decision the team's log lacks, and the
//! two can be matched byte for byte.
//!
//! **Bypass attempts.** The gate cannot be skipped, but every attempt is recorded: each record
//! carries `bypass_attempted` and, when true, `bypass_attempts`, naming the `--yes`-style flags
//! and the `GAVEL_*` variables ([`bypass_variables`]; names only, never values) that tried to
//! pre-answer or skip it. Running without a terminal is recorded by the decision itself
//! (`ABORTED_NON_INTERACTIVE`), not as an attempt: CI runs the gate that way without trying
//! anything.
//!
//! **Format.** JSON lines; fields are only ever added, never renamed or removed, and added
//! fields have defaults, so every older line still parses as an [`AuditEvent`]. Readers should
//! ignore fields they do not know.
//!
//! # Errors
//!
//! Every function fails closed with a [`DiffGateError`]: when the staged changes cannot be
//! measured, nothing may be committed.

mod analyze;
mod audit;
mod bypass;
mod catfile;
mod classify;
mod error;
mod full;
mod git;
mod parse;
mod report;
mod sanitize;

pub use analyze::{Analysis, FileAnalysis, Special, analyze_staged};
pub use audit::{AuditEvent, Decision, append_audit, decided_by};
pub use bypass::{KNOWN_VARIABLES, bypass_variables};
pub use classify::{ChangeType, change_ratio, classify, lost_most_lines};
pub use error::DiffGateError;
pub use full::{FullReport, MAX_FILE_DIFF_LINES, MAX_TOTAL_DIFF_LINES, full_report, git_at};
pub use report::{MAX_LINE_CHARS, report};
pub use sanitize::sanitize;

/// A file whose change ratio is above this is flagged for review (LLD #171: hard-coded, not
/// configurable, on purpose).
pub const THRESHOLD: f64 = 0.5;

/// At most this many lines of each flagged file's diff go into the report.
pub const MAX_DIFF_LINES: usize = 500;

/// Where gavel appends the gate's decisions unless `[diff_gate] audit_log` says otherwise,
/// relative to the repository root. A tracked folder next to `docs/issues` and
/// `docs/lineage`, so the team commits and reviews it; `.gavel/` would be ignored by git.
pub const DEFAULT_AUDIT_LOG: &str = "docs/audit/diff-gate.jsonl";
