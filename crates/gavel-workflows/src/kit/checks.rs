//! gavel's own checks of a draft, before any model judges it.
//!
//! A reviewer call costs money and time, and a small model asked to review the template with
//! its `{placeholders}` left in answers with anything at all. What plain code can judge, it
//! judges first: placeholders of the template still in the draft, required sections missing or
//! empty, no `# ` title, no `**Labels:**` line where the template has one, and a draft identical
//! to the one before. The findings are gavel's own (never a reviewer's) and go back to the
//! drafter, or to the person at the draft gate, instead of to the reviewer.
//!
//! Documents are parsed, not grepped: headings, code blocks and inline code come from
//! pulldown-cmark's event stream, so `{x}` in a code example is not taken for a placeholder and
//! `## Why` inside a fence is not taken for a section. The document workflow checks its drafts
//! against its template ([`TemplateShape`], [`check_draft`]); the change plan checks its
//! proposal's sections with [`section_problems`] and a revision against the plan before it
//! ([`same_document`]).
//!
//! A review rubric may require sections beyond the template's, in a section of its own:
//!
//! ```markdown
//! ## Required sections
//! - Rollout plan
//! - Security
//! ```
//!
//! (any heading level; only a list of section titles, one per item). [`rubric_sections`] reads
//! it and names the line of anything else there.

use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The longest placeholder taken from a template (a longer `{...}` is not one).
const MAX_PLACEHOLDER_CHARS: usize = 300;

/// How many placeholder findings are listed one by one (an unfilled template has dozens).
const MAX_PLACEHOLDER_FINDINGS: usize = 10;

/// The line that carries an issue's labels, as filing reads it.
pub const LABELS_PREFIX: &str = "**Labels:**";

/// The heading of a rubric's own list of required sections.
pub const RUBRIC_SECTIONS_HEADING: &str = "Required sections";

/// What a template asks of every draft made from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateShape {
    /// The template's `{...}` placeholders, each once, in order.
    pub placeholders: Vec<String>,
    /// The sections a draft must have, non-empty: the template's headings below its title
    /// (headings with a placeholder in them and those marked `(optional)` excepted), then any
    /// the rubric adds.
    pub sections: Vec<String>,
    /// The template has a `# ` title line.
    pub title: bool,
    /// The template has a `**Labels:**` line.
    pub labels: bool,
}

impl TemplateShape {
    /// Reads what `template` asks of a draft.
    pub fn of(template: &str) -> Self {
        let mut sections: Vec<String> = Vec::new();
        let mut title = false;
        for h in headings(template) {
            if h.level == 1 {
                title = true;
            } else if !h.text.contains('{')
                && !h.text.trim().to_lowercase().ends_with("(optional)")
                && !sections.iter().any(|s| same_title(s, &h.text))
            {
                sections.push(h.text);
            }
        }
        Self {
            placeholders: placeholders(template),
            sections,
            title,
            labels: labels_line(template).is_some(),
        }
    }

    /// Adds sections a rubric requires (those the template already has are not repeated).
    pub fn require(&mut self, extra: &[String]) {
        for s in extra {
            if !self.sections.iter().any(|t| same_title(t, s)) {
                self.sections.push(s.clone());
            }
        }
    }
}

/// Every problem gavel finds in `draft` made from a template of `shape`, as findings a drafter
/// can act on (empty: the draft may go to the reviewer). `previous` is the draft before it.
pub fn check_draft(draft: &str, shape: &TemplateShape, previous: Option<&str>) -> Vec<String> {
    let mut findings = Vec::new();
    if let Some(previous) = previous
        && same_document(previous, draft)
    {
        findings
            .push("the draft is identical to the previous draft: nothing was revised".to_owned());
    }
    if shape.title && gavel_llm::title(draft).is_none() {
        findings.push("the draft has no `# ` title line".to_owned());
    }
    if shape.labels {
        match labels_line(draft) {
            None => findings.push(format!(
                "the draft has no `{LABELS_PREFIX}` line (the template has one)"
            )),
            Some(rest) if labels_in(rest).is_empty() => {
                findings.push(format!("the `{LABELS_PREFIX}` line names no label"))
            }
            Some(_) => {}
        }
    }
    findings.extend(section_problems(draft, &shape.sections));
    findings.extend(placeholder_problems(draft, &shape.placeholders));
    findings
}

/// The `required` sections that `text` lacks or leaves empty, one finding each. A section
/// matches a heading of any level whose title is the same, ignoring case, a leading number
/// (`2.1`), a trailing colon and `(optional)`; it is empty when nothing but headings (and
/// comments) stands between its heading and the next heading of its level or above.
pub fn section_problems(text: &str, required: &[String]) -> Vec<String> {
    let found = headings(text);
    let content = content_offsets(text);
    let mut problems = Vec::new();
    for name in required {
        let matching: Vec<usize> = found
            .iter()
            .enumerate()
            .filter(|(_, h)| h.level > 1 && same_title(&h.text, name))
            .map(|(i, _)| i)
            .collect();
        if matching.is_empty() {
            problems.push(format!("the required section `{name}` is missing"));
            continue;
        }
        let filled = matching.iter().any(|&i| {
            let h = &found[i];
            let end = found[i + 1..]
                .iter()
                .find(|n| n.level <= h.level)
                .map_or(text.len(), |n| n.range.start);
            content.iter().any(|&at| at >= h.range.end && at < end)
        });
        if !filled {
            problems.push(format!("the section `{name}` is empty"));
        }
    }
    problems
}

/// Whether two documents say the same thing: equal once gavel's own comment lines
/// (`<!-- gavel: ... -->`) and trailing blanks are set aside.
pub fn same_document(a: &str, b: &str) -> bool {
    fn lines(t: &str) -> Vec<&str> {
        t.lines()
            .map(str::trim_end)
            .filter(|l| !(l.starts_with("<!-- gavel:") && l.ends_with("-->")))
            .skip_while(|l| l.is_empty())
            .collect::<Vec<_>>()
    }
    let (mut a, mut b) = (lines(a), lines(b));
    while a.last() == Some(&"") {
        a.pop();
    }
    while b.last() == Some(&"") {
        b.pop();
    }
    a == b
}

/// The placeholders of `template` left in `draft`. An occurrence in prose always counts; one
/// in code (a code block, an inline code span) only when the placeholder has a space in it, so
/// `{path}` in `format!("{path}")` is code, while `{What this change achieves}` is never code.
fn placeholder_problems(draft: &str, placeholders: &[String]) -> Vec<String> {
    let code = code_ranges(draft);
    let mut left = Vec::new();
    for p in placeholders {
        let described = p.contains(char::is_whitespace);
        let first = draft
            .match_indices(p.as_str())
            .map(|(at, _)| at)
            .find(|at| described || !code.iter().any(|c| c.contains(at)));
        if let Some(at) = first {
            left.push(format!(
                "the template's placeholder `{p}` is still in the draft (line {}): replace it with the real content",
                line_of(draft, at)
            ));
        }
    }
    if left.len() > MAX_PLACEHOLDER_FINDINGS {
        let more = left.len() - MAX_PLACEHOLDER_FINDINGS;
        left.truncate(MAX_PLACEHOLDER_FINDINGS);
        left.push(format!(
            "{more} more of the template's placeholders are still in the draft"
        ));
    }
    left
}

/// The `{...}` spans of `template` that are placeholders: on one line, no brace inside, and
/// starting with a letter or digit (so `{}` and `{"a": 1}` in an example are not).
fn placeholders(template: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in template.lines() {
        let mut rest = line;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find(['{', '}']) else {
                break;
            };
            if after.as_bytes()[close] == b'{' {
                rest = &after[close..];
                continue;
            }
            let inner = &after[..close];
            let is_placeholder = inner.starts_with(|c: char| c.is_alphanumeric())
                && inner.chars().count() <= MAX_PLACEHOLDER_CHARS;
            if is_placeholder {
                let p = format!("{{{inner}}}");
                if !found.contains(&p) {
                    found.push(p);
                }
            }
            rest = &after[close + 1..];
        }
    }
    found
}

/// The rest of the document's `**Labels:**` line (outside code), if it has one.
fn labels_line(text: &str) -> Option<&str> {
    gavel_llm::prose_lines(text)
        .into_iter()
        .find_map(|l| l.trim().strip_prefix(LABELS_PREFIX))
}

/// The labels of a `**Labels:**` line's rest, as filing reads them.
fn labels_in(rest: &str) -> Vec<&str> {
    rest.split(',')
        .map(|l| l.trim().trim_matches('`').trim())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A heading of a document: its level (1 for `# `), its text, and where it stands.
#[derive(Debug)]
struct Heading {
    level: usize,
    text: String,
    range: Range<usize>,
}

fn parser(text: &str) -> impl Iterator<Item = (Event<'_>, Range<usize>)> {
    Parser::new_ext(text, Options::empty()).into_offset_iter()
}

/// The headings of `text` outside code, in order.
fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut open: Option<Heading> = None;
    for (event, range) in parser(text) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                open = Some(Heading {
                    level: level_number(level),
                    text: String::new(),
                    range,
                });
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = &mut open {
                    h.text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut h) = open.take() {
                    h.text = h.text.trim().to_owned();
                    out.push(h);
                }
            }
            _ => {}
        }
    }
    out
}

fn level_number(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Where the content of `text` is (outside headings): each piece of text, code and HTML that
/// is not an HTML comment. A section holding none of it is empty.
fn content_offsets(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_heading = false;
    // An HTML block's text, read whole: a comment may run over several lines.
    let mut html: Option<(usize, String)> = None;
    for (event, range) in parser(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => in_heading = true,
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Start(Tag::HtmlBlock) => html = Some((range.start, String::new())),
            Event::End(TagEnd::HtmlBlock) => {
                if let Some((at, block)) = html.take()
                    && !is_comment(&block)
                {
                    out.push(at);
                }
            }
            Event::Html(t) => match &mut html {
                Some((_, block)) => block.push_str(&t),
                None if !is_comment(&t) => out.push(range.start),
                None => {}
            },
            Event::Text(t) | Event::Code(t) if !in_heading && !t.trim().is_empty() => {
                out.push(range.start);
            }
            Event::InlineHtml(t) if !in_heading && !is_comment(&t) => out.push(range.start),
            _ => {}
        }
    }
    out
}

fn is_comment(html: &str) -> bool {
    let t = html.trim();
    t.is_empty() || (t.starts_with("<!--") && t.ends_with("-->"))
}

/// The byte ranges of `text` that are code: code blocks (fenced and indented) and inline
/// code spans.
fn code_ranges(text: &str) -> Vec<Range<usize>> {
    parser(text)
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::CodeBlock(_)) | Event::Code(_) => Some(range),
            _ => None,
        })
        .collect()
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// Whether two section titles name the same section (see [`section_problems`]).
fn same_title(a: &str, b: &str) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(title: &str) -> String {
    let mut t = title.trim().to_lowercase();
    if let Some(s) = t.strip_suffix("(optional)") {
        t = s.trim_end().to_owned();
    }
    let t = t.trim_end_matches(':').trim();
    // A leading section number: `2.`, `2.1`, `10.2.` followed by a space.
    let t = match t.split_once(char::is_whitespace) {
        Some((number, rest))
            if number.starts_with(|c: char| c.is_ascii_digit())
                && number.chars().all(|c| c.is_ascii_digit() || c == '.') =>
        {
            rest
        }
        _ => t,
    };
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A rubric's `Required sections` list that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct RubricSectionsError {
    /// The line of the rubric the problem is on.
    pub line: usize,
    pub problem: String,
}

/// The sections a rubric requires: the items of the list under its `Required sections`
/// heading (any level), in order; none when it has no such heading. Anything else under that
/// heading (a paragraph, a nested list, an empty item, a second such heading) is an error
/// naming its line, so a typo never quietly requires nothing.
pub fn rubric_sections(rubric: &str) -> Result<Vec<String>, RubricSectionsError> {
    let all = headings(rubric);
    let wanted: Vec<&Heading> = all
        .iter()
        .filter(|h| same_title(&h.text, RUBRIC_SECTIONS_HEADING))
        .collect();
    let Some(heading) = wanted.first() else {
        return Ok(Vec::new());
    };
    let err = |at: usize, problem: String| RubricSectionsError {
        line: line_of(rubric, at),
        problem,
    };
    if let Some(second) = wanted.get(1) {
        return Err(err(
            second.range.start,
            format!(
                "a second `{RUBRIC_SECTIONS_HEADING}` heading (the first is on line {}): keep one list",
                line_of(rubric, heading.range.start)
            ),
        ));
    }
    let end = all
        .iter()
        .find(|n| n.range.start > heading.range.start && n.level <= heading.level)
        .map_or(rubric.len(), |n| n.range.start);
    let body = heading.range.end..end;
    let usage = "write one section title per list item (`- Rollout plan`)";
    let mut sections = Vec::new();
    let mut depth = 0usize;
    let mut item: Option<(usize, String)> = None;
    for (event, range) in parser(rubric) {
        if !body.contains(&range.start) {
            continue;
        }
        match event {
            Event::Start(Tag::List(_)) => {
                depth += 1;
                if depth > 1 {
                    return Err(err(
                        range.start,
                        format!("a nested list under `{RUBRIC_SECTIONS_HEADING}`: {usage}"),
                    ));
                }
            }
            Event::End(TagEnd::List(_)) => depth = depth.saturating_sub(1),
            Event::Start(Tag::Item) => item = Some((range.start, String::new())),
            Event::End(TagEnd::Item) => {
                if let Some((at, text)) = item.take() {
                    let text = text.trim().to_owned();
                    if text.is_empty() {
                        return Err(err(
                            at,
                            format!("an empty item under `{RUBRIC_SECTIONS_HEADING}`: {usage}"),
                        ));
                    }
                    sections.push(text);
                }
            }
            Event::Text(t) | Event::Code(t) => match &mut item {
                Some((_, text)) => text.push_str(&t),
                None if t.trim().is_empty() => {}
                None => {
                    return Err(err(
                        range.start,
                        format!("text outside the list under `{RUBRIC_SECTIONS_HEADING}`: {usage}"),
                    ));
                }
            },
            Event::SoftBreak | Event::HardBreak if item.is_some() => {
                return Err(err(
                    range.start,
                    format!(
                        "an item under `{RUBRIC_SECTIONS_HEADING}` runs over two lines: {usage}"
                    ),
                ));
            }
            Event::Start(Tag::CodeBlock(_) | Tag::BlockQuote(_)) => {
                return Err(err(
                    range.start,
                    format!("only a list may stand under `{RUBRIC_SECTIONS_HEADING}`: {usage}"),
                ));
            }
            _ => {}
        }
    }
    if sections.is_empty() {
        return Err(err(
            heading.range.start,
            format!("`{RUBRIC_SECTIONS_HEADING}` lists no section: {usage}, or remove the heading"),
        ));
    }
    Ok(sections)
}

#[cfg(test)]
mod tests;
