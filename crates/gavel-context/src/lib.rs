//! Validating the files a person hands to a model with `--context PATH`.
//!
//! Context files leave the machine, so they are checked before anything is written or any
//! model is called: each path must resolve inside the repository and outside `.git`
//! (`paths.rs`), must not be a secret by name or match the `[context] deny` list (`names.rs`),
//! must be small UTF-8 text, must hold no secret by content (`rules.rs` is the rule table,
//! `scan.rs` runs it), and all of them together must fit the token budget. Every problem is
//! collected, so the person fixes them all in one go; no refusal ever quotes a secret.
//!
//! What passes is a [`Context`]: the texts for the prompt ([`Context::prompt_section`]) and a
//! manifest of paths, sizes, token counts and hashes for the lineage
//! ([`Context::manifest`]), never the contents.

mod names;
mod paths;
pub mod rules;
mod scan;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_clean;
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
    })?;
    let names = names::NameRules::new(&root, &settings.deny, &mut refusals);
    let found = paths::collect(&root, cwd, paths, &mut refusals);
    let mut files = Vec::new();
    for file in found {
        if let Some(refusal) = names.check(&file) {
            refusals.push(refusal);
            continue;
        }
        let text = match paths::read_text(&file, settings.max_file_bytes) {
            Ok(text) => text,
            Err(refusal) => {
                refusals.push(refusal);
                continue;
            }
        };
        let findings = scan::scan(&text);
        if !findings.is_empty() {
            refusals.extend(findings.into_iter().map(|f| {
                Refusal::new(
                    &file.shown,
                    format!("secret-content:{}", f.rule),
                    format!(
                        "`{}` line {} holds what looks like {}; remove it or leave the file out",
                        file.shown, f.line, f.description
                    ),
                )
            }));
            continue;
        }
        files.push(ContextFile {
            path: file.rel,
            bytes: text.len() as u64,
            tokens: gavel_llm::tokens::count(&text),
            sha256: ContentHash::of(text.as_bytes()).as_str().to_owned(),
            text,
        });
    }
    let total_tokens = files.iter().map(|f| f.tokens).sum();
    if total_tokens > settings.max_tokens {
        refusals.push(over_budget(&files, total_tokens, settings.max_tokens));
    }
    if refusals.is_empty() {
        Ok(Context {
            files,
            total_tokens,
        })
    } else {
        Err(ContextError { refusals })
    }
}

/// The refusal for context over the token budget, naming the three biggest files.
fn over_budget(files: &[ContextFile], total: u64, budget: u64) -> Refusal {
    let mut biggest: Vec<&ContextFile> = files.iter().collect();
    biggest.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(a.path.cmp(&b.path)));
    let named = biggest
        .iter()
        .take(3)
        .map(|f| format!("`{}` ({} tokens)", f.path, f.tokens))
        .collect::<Vec<_>>()
        .join(", ");
    Refusal::new(
        "",
        "over-token-budget",
        format!(
            "the context is {total} tokens, over the budget of {budget} ([context] max_tokens); \
             the biggest files: {named}"
        ),
    )
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
