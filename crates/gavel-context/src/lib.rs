//! Validating the files a person hands to a model with `--context PATH`.
//!
//! Context files leave the machine, so they are checked before anything is written or any
//! model is called: each path must resolve inside the repository and outside `.git`
//! (`paths.rs`), must not be a secret by name or match the `[context] deny` list (`names.rs`),
//! must be small UTF-8 text, must hold no secret by content (`rules.rs` is the rule table,
//! `scan.rs` runs it; `check.rs` runs the checks of many files on every core), and all of them
//! together must fit the token budget. Every problem is collected, so the person fixes them all
//! in one go; no refusal ever quotes a secret. Tokens are counted in path order until the
//! total passes twice the budget ([`COUNTED_PAST_BUDGET`]) and at least [`COUNTED_AT_LEAST`]
//! bytes were counted: past that the context is refused whatever the rest holds, and counting
//! a whole source tree (about 5 MB of text a second) would cost seconds for a number nobody
//! needs exactly.
//!
//! What passes is a [`Context`]: the texts for the prompt ([`Context::prompt_section`]) and a
//! manifest of paths, sizes, token counts and hashes for the lineage
//! ([`Context::manifest`]), never the contents.

mod check;
mod names;
mod paths;
pub mod rules;
mod scan;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_clean;
#[cfg(test)]
mod tests_scale;
#[cfg(test)]
mod tests_secrets;

use std::fmt;
use std::path::{Path, PathBuf};

use gavel_core::ContentHash;
use serde::Serialize;

/// The `[context]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSettings {
    /// Budget for all context files together, in o200k tokens.
    pub max_tokens: u64,
    /// Largest single file, in bytes.
    pub max_file_bytes: u64,
    /// `.gitignore`-style patterns (relative to the repository root) that are never sent.
    pub deny: Vec<String>,
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            max_tokens: 200_000,
            max_file_bytes: 100 * 1024,
            deny: Vec::new(),
        }
    }
}

/// Context that passed validation, sorted by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub files: Vec<ContextFile>,
    pub total_tokens: u64,
}

/// One validated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Repository-relative, `/`-separated, symlinks resolved.
    pub path: String,
    pub bytes: u64,
    /// o200k tokens ([`gavel_llm::tokens::count`]).
    pub tokens: u64,
    /// sha256 of the content, lowercase hex.
    pub sha256: String,
    pub text: String,
}

/// Why context was refused: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.refusals))]
pub struct ContextError {
    pub refusals: Vec<Refusal>,
    /// How many files were looked at, refused or not (for benchmarks and counts).
    pub files: usize,
}

/// One refused path (or, for `over-token-budget`, the context as a whole: `path` is empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The path as given, or as found in a folder that was given.
    pub path: String,
    /// The rule: `outside-repository`, `git-folder`, `not-found`, `not-a-file`, `unreadable`,
    /// `secret-name`, `denied`, `invalid-deny-pattern`, `too-large`, `binary`, `not-utf8`,
    /// `secret-content:{id}` (ids in [`rules::CONTENT_RULES`]) or `over-token-budget`.
    pub rule: String,
    /// A sentence naming the file and the problem (and the line, for content rules), ending
    /// with the rule in brackets. Never the secret itself.
    pub message: String,
}

impl Refusal {
    /// A refusal whose message is `sentence` followed by the rule in brackets.
    fn new(path: impl Into<String>, rule: impl Into<String>, sentence: impl fmt::Display) -> Self {
        let rule = rule.into();
        Self {
            path: path.into(),
            message: format!("{sentence} [{rule}]"),
            rule,
        }
    }
}

fn render(refusals: &[Refusal]) -> String {
    let mut out = String::from("context refused:");
    for r in refusals {
        out.push_str("\n  - ");
        out.push_str(&r.message);
    }
    out
}

/// Checks the files and folders in `paths` (relative ones resolved against `cwd`) for use as
/// model context in the repository at `repo_root`. Reads, never writes.
pub fn validate(
    repo_root: &Path,
    cwd: &Path,
    paths: &[PathBuf],
    settings: &ContextSettings,
) -> Result<Context, ContextError> {
    let mut refusals = Vec::new();
    let root = std::fs::canonicalize(repo_root).map_err(|e| ContextError {
        refusals: vec![Refusal::new(
            repo_root.to_string_lossy(),
            "not-found",
            format!(
                "the repository root {} cannot be resolved: {e}",
                repo_root.display()
            ),
        )],
        files: 0,
    })?;
    // The tokenizer's vocabulary and the compiled secret rules take a few hundred milliseconds
    // to load, once per process: they load on threads of their own while the paths are
    // resolved and the folders walked.
    let (names, found) = std::thread::scope(|scope| {
        scope.spawn(|| gavel_llm::tokens::count(""));
        scope.spawn(scan::warm_up);
        let names = names::NameRules::new(&root, &settings.deny, &mut refusals);
        let found = paths::collect(&root, cwd, paths, &mut refusals);
        (names, found)
    });
    let examined = found.len();
    let mut tally = Tally::new(settings.max_tokens);
    check::each_in_order(
        &found,
        &names,
        settings.max_file_bytes,
        |file, checked| match checked {
            check::Checked::Passed(text) => tally.add(&file.rel, text),
            check::Checked::Refused(why) => refusals.extend(why),
        },
    );
    if let Some(refusal) = tally.over_budget() {
        refusals.push(refusal);
    }
    if refusals.is_empty() {
        Ok(Context {
            total_tokens: tally.counted,
            files: tally.files,
        })
    } else {
        Err(ContextError {
            refusals,
            files: examined,
        })
    }
}

/// Tokens are counted until the total passes this many times the budget (see the module doc)...
pub const COUNTED_PAST_BUDGET: u64 = 2;

/// ... and at least this many bytes of text were counted (a small context, even far over a
/// small budget, always gets its exact count: counting it costs nothing).
pub const COUNTED_AT_LEAST: u64 = 64 * 1024;

/// The files that passed, in path order, with their tokens counted until the total is over
/// [`COUNTED_PAST_BUDGET`] times the budget and [`COUNTED_AT_LEAST`] bytes were counted; after
/// that only their names and sizes are kept.
struct Tally {
    budget: u64,
    /// Tokens of `files`.
    counted: u64,
    /// Bytes of `files`.
    counted_bytes: u64,
    files: Vec<ContextFile>,
    /// Files that passed after the count stopped: path and bytes.
    uncounted: Vec<(String, u64)>,
}

impl Tally {
    fn new(budget: u64) -> Self {
        Self {
            budget,
            counted: 0,
            counted_bytes: 0,
            files: Vec::new(),
            uncounted: Vec::new(),
        }
    }

    fn add(&mut self, rel: &str, text: String) {
        if self.counted > self.budget.saturating_mul(COUNTED_PAST_BUDGET)
            && self.counted_bytes >= COUNTED_AT_LEAST
        {
            self.uncounted.push((rel.to_owned(), text.len() as u64));
            return;
        }
        let tokens = gavel_llm::tokens::count(&text);
        self.counted += tokens;
        self.counted_bytes += text.len() as u64;
        self.files.push(ContextFile {
            path: rel.to_owned(),
            bytes: text.len() as u64,
            tokens,
            sha256: ContentHash::of(text.as_bytes()).as_str().to_owned(),
            text,
        });
    }

    /// The refusal for context over the token budget, naming the three biggest files: by
    /// tokens when every file was counted, else by size.
    fn over_budget(&self) -> Option<Refusal> {
        let budget = self.budget;
        if self.counted <= budget {
            return None;
        }
        let named = |mut sized: Vec<(&str, u64)>, unit: &str| {
            sized.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            sized
                .iter()
                .take(3)
                .map(|(path, n)| format!("`{path}` ({n} {unit})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let limit = "([context] max_tokens)";
        let sentence = if self.uncounted.is_empty() {
            let total = self.counted;
            let biggest = named(
                self.files
                    .iter()
                    .map(|f| (f.path.as_str(), f.tokens))
                    .collect(),
                "tokens",
            );
            format!(
                "the context is {total} tokens, over the budget of {budget} {limit}; \
                 the biggest files: {biggest}"
            )
        } else {
            let (counted, n) = (self.counted, self.files.len());
            let (rest, rest_bytes) = (
                self.uncounted.len(),
                self.uncounted.iter().map(|(_, b)| b).sum::<u64>(),
            );
            let biggest = named(
                self.files
                    .iter()
                    .map(|f| (f.path.as_str(), f.bytes))
                    .chain(self.uncounted.iter().map(|(p, b)| (p.as_str(), *b)))
                    .collect(),
                "bytes",
            );
            format!(
                "the context is more than {counted} tokens (its first {n} files; the other \
                 {rest}, {rest_bytes} bytes, were not counted), over the budget of {budget} \
                 {limit}; the biggest files: {biggest}"
            )
        };
        Some(Refusal::new("", "over-token-budget", sentence))
    }
}

/// One line of the manifest.
#[derive(Serialize)]
struct ManifestFile<'a> {
    path: &'a str,
    bytes: u64,
    tokens: u64,
    sha256: &'a str,
}

#[derive(Serialize)]
struct Manifest<'a> {
    files: Vec<ManifestFile<'a>>,
    total_tokens: u64,
    total_bytes: u64,
}

impl Context {
    /// Bytes of all files together.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }

    /// What the lineage records: pretty JSON, newline-terminated,
    /// `{"files":[{"path","bytes","tokens","sha256"}],"total_tokens":N,"total_bytes":N}`.
    /// No contents.
    pub fn manifest(&self) -> Vec<u8> {
        let manifest = Manifest {
            files: self
                .files
                .iter()
                .map(|f| ManifestFile {
                    path: &f.path,
                    bytes: f.bytes,
                    tokens: f.tokens,
                    sha256: &f.sha256,
                })
                .collect(),
            total_tokens: self.total_tokens,
            total_bytes: self.total_bytes(),
        };
        // Strings and integers only: serializing cannot fail.
        let mut out = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// The files for a prompt, each as `### path`, a blank line and the text in a fence longer
    /// than any run of backticks inside it; sections are separated by a blank line.
    pub fn prompt_section(&self) -> String {
        self.files
            .iter()
            .map(|f| {
                let fence = "`".repeat(longest_backtick_run(&f.text).max(2) + 1);
                let newline = if f.text.ends_with('\n') || f.text.is_empty() {
                    ""
                } else {
                    "\n"
                };
                format!("### {}\n\n{fence}\n{}{newline}{fence}\n", f.path, f.text)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
