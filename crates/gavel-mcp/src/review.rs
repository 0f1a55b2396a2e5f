//! `create_review`: the structured implementation review, written to `REVIEW.md` as a report a
//! person reads and read back by gavel with [`read_review`].
//!
//! The file is front matter (verdict and counts), the readable report, and the whole review as
//! JSON in a fenced block at the end. Everything the agent wrote goes into block quotes or list
//! items, so a stray fence in its text ends with its container and cannot hide or fake the
//! JSON block, which [`read_review`] takes only from the top level.

use std::path::Path;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::McpError;
use crate::fsafe::{MAX_FILE_BYTES, read_regular};

/// The reviewer's overall verdict on an implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(inline)]
pub enum ReviewVerdict {
    Approved,
    NeedsFix,
    MajorIssues,
}

impl ReviewVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "APPROVED",
            Self::NeedsFix => "NEEDS_FIX",
            Self::MajorIssues => "MAJOR_ISSUES",
        }
    }
}

/// How much an issue matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Severity {
    Critical,
    Major,
    Minor,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Critical => "critical",
            Self::Major => "major",
            Self::Minor => "minor",
            Self::Info => "info",
        }
    }
}

/// One finding of the review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(inline)]
pub struct Issue {
    pub severity: Severity,
    /// One line naming the problem.
    pub title: String,
    pub description: String,
    /// The file concerned, relative to the repository (shown as text only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub recommendation: Option<String>,
}

/// What the reviewer saw of the tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(inline)]
pub struct TestResults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub passed: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub failed: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub notes: Option<String>,
}

/// The arguments of `create_review`, and what [`read_review`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Review {
    pub verdict: ReviewVerdict,
    pub summary: String,
    pub issues: Vec<Issue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "TestResults")]
    pub test_results: Option<TestResults>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<String>")]
    pub next_steps: Option<Vec<String>>,
}

impl Review {
    fn count(&self, severity: Severity) -> usize {
        self.issues
            .iter()
            .filter(|i| i.severity == severity)
            .count()
    }

    /// The one-line confirmation the tool returns.
    pub fn confirmation(&self) -> String {
        format!(
            "REVIEW.md written: {} with {} issue(s) ({} critical, {} major, {} minor, {} info)",
            self.verdict.as_str(),
            self.issues.len(),
            self.count(Severity::Critical),
            self.count(Severity::Major),
            self.count(Severity::Minor),
            self.count(Severity::Info),
        )
    }

    /// The whole `REVIEW.md`.
    pub fn to_markdown(&self, change_id: &str) -> String {
        let mut out = format!(
            "---\nchange_id: {change_id}\nverdict: {}\nissues: {}\ncritical: {}\nmajor: {}\nminor: {}\ninfo: {}\n---\n\n",
            self.verdict.as_str(),
            self.issues.len(),
            self.count(Severity::Critical),
            self.count(Severity::Major),
            self.count(Severity::Minor),
            self.count(Severity::Info),
        );
        out.push_str(&format!(
            "# Review: {change_id}\n\n**Verdict:** {}\n\n## Summary\n\n{}",
            self.verdict.as_str(),
            quote(&self.summary)
        ));
        out.push_str("## Issues\n\n");
        if self.issues.is_empty() {
            out.push_str("None.\n\n");
        }
        for (n, issue) in self.issues.iter().enumerate() {
            out.push_str(&format!(
                "### {}. [{}] {}\n\n",
                n + 1,
                issue.severity.as_str(),
                one_line(&issue.title)
            ));
            if let Some(file) = &issue.file {
                let at = issue.line.map(|l| format!(":{l}")).unwrap_or_default();
                out.push_str(&format!("File: {}{at}\n\n", one_line(file)));
            }
            out.push_str(&quote(&issue.description));
            if let Some(rec) = &issue.recommendation {
                out.push_str(&format!("Recommendation:\n\n{}", quote(rec)));
            }
        }
        if let Some(tests) = &self.test_results {
            out.push_str("## Test results\n\n");
            let n = |v: Option<u32>| v.map_or("-".to_owned(), |v| v.to_string());
            out.push_str(&format!(
                "- passed: {}\n- failed: {}\n\n",
                n(tests.passed),
                n(tests.failed)
            ));
            if let Some(notes) = &tests.notes {
                out.push_str(&quote(notes));
            }
        }
        if let Some(steps) = &self.next_steps {
            out.push_str("## Next steps\n\n");
            for step in steps {
                out.push_str(&list_item(step));
            }
            out.push('\n');
        }
        let json = serde_json::to_string_pretty(self).unwrap_or_default();
        let fence = "`".repeat(longest_backtick_run(&json).max(2) + 1);
        out.push_str(&format!(
            "## Structured review\n\n{fence}json\n{json}\n{fence}\n"
        ));
        out
    }
}

/// Text as a block quote, so any Markdown block it opens ends with the quote.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push_str(">\n");
    }
    out.push('\n');
    out
}

/// Text as one list item (continuation lines indented), so its blocks end with the item.
pub(crate) fn list_item(text: &str) -> String {
    let mut out = String::from("-");
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str("\n ");
        }
        out.push(' ');
        out.push_str(line);
    }
    out.push('\n');
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Reads the review in a `REVIEW.md` written by `create_review`: the JSON block at the top level
/// of the document, checked against the front matter's verdict. Only a regular file of at most
/// [`MAX_FILE_BYTES`] is read (not a FIFO, a device or a symbolic link).
pub fn read_review(path: &Path) -> Result<Review, McpError> {
    let text = read_regular(path, MAX_FILE_BYTES)?.ok_or_else(|| McpError::Io {
        action: "read",
        path: path.to_owned(),
        source: std::io::ErrorKind::NotFound.into(),
    })?;
    let options = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut depth = 0usize;
    let mut in_front = false;
    let mut in_json = false;
    let mut front = String::new();
    let mut json: Option<String> = None;
    for event in Parser::new_ext(&text, options) {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => in_front = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_front = false,
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if depth == 0 && info.as_ref() == "json" =>
            {
                in_json = true;
                json = Some(String::new());
            }
            Event::End(TagEnd::CodeBlock) => in_json = false,
            Event::Start(Tag::BlockQuote(_) | Tag::List(_)) => depth += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_)) => {
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) if in_front => front.push_str(&t),
            Event::Text(t) if in_json => {
                if let Some(j) = json.as_mut() {
                    j.push_str(&t);
                }
            }
            _ => {}
        }
    }
    let json = json.ok_or_else(|| McpError::NoReviewData {
        path: path.to_owned(),
    })?;
    let review: Review = serde_json::from_str(&json).map_err(|source| McpError::ReviewJson {
        path: path.to_owned(),
        source,
    })?;
    let front_verdict = front
        .lines()
        .find_map(|l| l.strip_prefix("verdict:"))
        .map(str::trim)
        .unwrap_or_default();
    if front_verdict != review.verdict.as_str() {
        return Err(McpError::VerdictMismatch {
            path: path.to_owned(),
            front: front_verdict.to_owned(),
            data: review.verdict.as_str().to_owned(),
        });
    }
    Ok(review)
}
