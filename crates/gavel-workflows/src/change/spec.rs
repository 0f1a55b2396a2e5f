//! Delta specs and living specs, read from pulldown-cmark's event stream, in OpenSpec's format.
//!
//! A delta spec (`changes/ID/specs/CAP/spec.md`) has up to four sections: `## ADDED
//! Requirements`, `## MODIFIED Requirements`, `## REMOVED Requirements` and `## RENAMED
//! Requirements`. A requirement is a `### Requirement: NAME` heading and everything up to the
//! next heading of level 3 or above; added and modified ones need at least one `#### Scenario:
//! NAME`. A rename is a `FROM:` list item followed by a `TO:` one, each naming
//! `` `### Requirement: NAME` `` (the backticks optional), exactly as OpenSpec pairs them. A
//! living spec (`specs/CAP/spec.md`) is any text whose `### Requirement:` headings are its
//! requirements. [`render_delta_spec`] writes the format back.

use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The prefix of a requirement heading's text.
pub const REQUIREMENT_PREFIX: &str = "Requirement:";
/// The prefix of a scenario heading's text.
pub const SCENARIO_PREFIX: &str = "Scenario:";

/// One requirement: its name and its whole block, heading included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The name after `### Requirement:`.
    pub name: String,
    /// The block from its heading to the next heading of level 3 or above, trailing blank
    /// lines removed.
    pub text: String,
    /// The names after `#### Scenario:` in the block.
    pub scenarios: Vec<String>,
}

impl Requirement {
    /// Builds a requirement block from its statement and `(name, body)` scenarios.
    pub fn compose(name: &str, statement: &str, scenarios: &[(&str, &str)]) -> Self {
        let mut text = format!("### {REQUIREMENT_PREFIX} {name}\n{}", statement.trim());
        for (scenario, body) in scenarios {
            text.push_str(&format!(
                "\n\n#### {SCENARIO_PREFIX} {scenario}\n{}",
                body.trim()
            ));
        }
        Self {
            name: name.to_owned(),
            text,
            scenarios: scenarios.iter().map(|(s, _)| (*s).to_owned()).collect(),
        }
    }
}

/// A `FROM:` / `TO:` pair of a `## RENAMED Requirements` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// The current name.
    pub from: String,
    /// The new name.
    pub to: String,
}

/// A parsed delta spec.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaSpec {
    /// `## ADDED Requirements`.
    pub added: Vec<Requirement>,
    /// `## MODIFIED Requirements`: full replacement blocks.
    pub modified: Vec<Requirement>,
    /// `## REMOVED Requirements`: the blocks (usually a reason and a migration note).
    pub removed: Vec<Requirement>,
    /// `## RENAMED Requirements`.
    pub renamed: Vec<Rename>,
}

/// Errors reading a delta spec.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    /// No `## ADDED|MODIFIED|REMOVED|RENAMED Requirements` section with anything in it.
    #[error("the delta spec has no ADDED, MODIFIED, REMOVED or RENAMED requirements")]
    NoDeltas,
    /// An added or modified requirement without a `#### Scenario:`.
    #[error("requirement `{name}` has no `#### Scenario:`")]
    MissingScenario {
        /// The requirement.
        name: String,
    },
    /// The same requirement twice in one section.
    #[error("requirement `{name}` appears twice under {section}")]
    Duplicate {
        /// The requirement.
        name: String,
        /// The section (`ADDED`, ...).
        section: &'static str,
    },
    /// A `FROM:` without its `TO:` or the other way round.
    #[error("RENAMED: `{side}: {name}` has no matching {}: line", if *side == "FROM" { "TO" } else { "FROM" })]
    UnpairedRename {
        /// `FROM` or `TO`.
        side: &'static str,
        /// The name on that line.
        name: String,
    },
}

/// A heading and where it sits in the text.
#[derive(Debug)]
pub(crate) struct Heading {
    pub(crate) level: usize,
    pub(crate) title: String,
    pub(crate) start: usize,
}

/// What the parsers need from the event stream: headings, list items' plain text and links.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    pub(crate) headings: Vec<Heading>,
    pub(crate) items: Vec<(usize, String)>,
    pub(crate) links: Vec<String>,
}

pub(crate) fn outline(text: &str) -> Outline {
    let mut out = Outline::default();
    let mut heading: Option<(usize, usize, String)> = None;
    let mut items: Vec<(usize, String)> = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some((heading_level(level), range.start, String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, title)) = heading.take() {
                    out.headings.push(Heading {
                        level,
                        title: title.trim().to_owned(),
                        start,
                    });
                }
            }
            Event::Start(Tag::Item) => items.push((range.start, String::new())),
            Event::End(TagEnd::Item) => {
                if let Some(item) = items.pop() {
                    out.items.push((item.0, item.1.trim().to_owned()));
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => out.links.push(dest_url.into_string()),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, title)) = heading.as_mut() {
                    title.push_str(&t);
                } else if let Some((_, item)) = items.last_mut() {
                    item.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, item)) = items.last_mut() {
                    item.push('\n');
                }
            }
            _ => {}
        }
    }
    out.items.sort_by_key(|(start, _)| *start);
    out
}

fn heading_level(level: HeadingLevel) -> usize {
    level as usize
}

impl Outline {
    /// Where the section opened by heading `i` ends: the next heading of its level or above.
    pub(crate) fn section_end(&self, i: usize, text_len: usize) -> usize {
        let level = self.headings[i].level;
        self.headings[i + 1..]
            .iter()
            .find(|h| h.level <= level)
            .map_or(text_len, |h| h.start)
    }
}

/// The requirements whose headings lie in `within`, each block cut at the next heading of
/// level 3 or above (and at `within`'s end).
fn requirements_in(text: &str, outline: &Outline, within: Range<usize>) -> Vec<Requirement> {
    let mut found = Vec::new();
    for (i, h) in outline.headings.iter().enumerate() {
        if h.level != 3 || !within.contains(&h.start) {
            continue;
        }
        let Some(name) = h.title.strip_prefix(REQUIREMENT_PREFIX) else {
            continue;
        };
        let end = outline.section_end(i, text.len()).min(within.end);
        let scenarios = outline.headings[i + 1..]
            .iter()
            .take_while(|s| s.start < end)
            .filter(|s| s.level == 4)
            .filter_map(|s| s.title.strip_prefix(SCENARIO_PREFIX))
            .map(|s| s.trim().to_owned())
            .collect();
        found.push(Requirement {
            name: name.trim().to_owned(),
            text: text[h.start..end].trim_end().to_owned(),
            scenarios,
        });
    }
    found
}

/// The byte ranges of a living spec's requirement blocks (trailing blank lines included),
/// with the requirements.
pub(crate) fn living_blocks(text: &str) -> Vec<(Range<usize>, Requirement)> {
    let outline = outline(text);
    let mut blocks = Vec::new();
    for (i, h) in outline.headings.iter().enumerate() {
        if h.level == 3 && h.title.starts_with(REQUIREMENT_PREFIX) {
            let end = outline.section_end(i, text.len());
            for req in requirements_in(text, &outline, h.start..end) {
                blocks.push((h.start..end, req));
            }
        }
    }
    blocks
}

/// The requirements of a living spec, in order.
pub fn parse_living_spec(text: &str) -> Vec<Requirement> {
    living_blocks(text).into_iter().map(|(_, r)| r).collect()
}

/// Parses a delta spec, checking that added and modified requirements have a scenario, that no
/// section names a requirement twice, and that renames pair up.
pub fn parse_delta_spec(text: &str) -> Result<DeltaSpec, SpecError> {
    let outline = outline(text);
    let mut delta = DeltaSpec::default();
    for (i, h) in outline.headings.iter().enumerate() {
        if h.level != 2 {
            continue;
        }
        let Some(op) = h
            .title
            .strip_suffix("Requirements")
            .map(|s| s.trim().to_ascii_uppercase())
        else {
            continue;
        };
        let body = h.start..outline.section_end(i, text.len());
        match op.as_str() {
            "ADDED" => delta.added.extend(requirements_in(text, &outline, body)),
            "MODIFIED" => delta.modified.extend(requirements_in(text, &outline, body)),
            "REMOVED" => delta.removed.extend(requirements_in(text, &outline, body)),
            "RENAMED" => delta.renamed.extend(renames(&outline, body)?),
            _ => {}
        }
    }
    if delta.added.is_empty()
        && delta.modified.is_empty()
        && delta.removed.is_empty()
        && delta.renamed.is_empty()
    {
        return Err(SpecError::NoDeltas);
    }
    for (section, reqs) in [
        ("ADDED", &delta.added),
        ("MODIFIED", &delta.modified),
        ("REMOVED", &delta.removed),
    ] {
        for (i, req) in reqs.iter().enumerate() {
            if reqs[..i].iter().any(|r| r.name == req.name) {
                return Err(SpecError::Duplicate {
                    name: req.name.clone(),
                    section,
                });
            }
            if section != "REMOVED" && req.scenarios.is_empty() {
                return Err(SpecError::MissingScenario {
                    name: req.name.clone(),
                });
            }
        }
    }
    Ok(delta)
}

/// Pairs `FROM:` and `TO:` items in order; a `FROM:` displaced by another, a `TO:` with no
/// `FROM:` and a `FROM:` left at the end are errors, never guesses.
fn renames(outline: &Outline, body: Range<usize>) -> Result<Vec<Rename>, SpecError> {
    let mut pairs = Vec::new();
    let mut pending: Option<String> = None;
    for (_, item) in outline.items.iter().filter(|(s, _)| body.contains(s)) {
        let (side, rest) = if let Some(rest) = item.strip_prefix("FROM:") {
            ("FROM", rest)
        } else if let Some(rest) = item.strip_prefix("TO:") {
            ("TO", rest)
        } else {
            continue;
        };
        let name = rest.trim().trim_matches('`').trim();
        let name = name.strip_prefix("###").unwrap_or(name).trim();
        let name = name.strip_prefix(REQUIREMENT_PREFIX).unwrap_or(name).trim();
        let name = name.to_owned();
        match (side, pending.take()) {
            ("FROM", Some(from)) => {
                return Err(SpecError::UnpairedRename {
                    side: "FROM",
                    name: from,
                });
            }
            ("FROM", None) => pending = Some(name),
            (_, Some(from)) => pairs.push(Rename { from, to: name }),
            (_, None) => return Err(SpecError::UnpairedRename { side: "TO", name }),
        }
    }
    if let Some(from) = pending {
        return Err(SpecError::UnpairedRename {
            side: "FROM",
            name: from,
        });
    }
    Ok(pairs)
}

/// Writes a delta spec in OpenSpec's format (sections in the order ADDED, MODIFIED, REMOVED,
/// RENAMED; empty ones left out).
pub fn render_delta_spec(delta: &DeltaSpec) -> String {
    let mut out = String::new();
    for (title, reqs) in [
        ("ADDED", &delta.added),
        ("MODIFIED", &delta.modified),
        ("REMOVED", &delta.removed),
    ] {
        if reqs.is_empty() {
            continue;
        }
        out.push_str(&format!("## {title} Requirements\n\n"));
        for req in reqs {
            out.push_str(req.text.trim_end());
            out.push_str("\n\n");
        }
    }
    if !delta.renamed.is_empty() {
        out.push_str("## RENAMED Requirements\n\n");
        for r in &delta.renamed {
            out.push_str(&format!(
                "- FROM: `### {REQUIREMENT_PREFIX} {}`\n- TO: `### {REQUIREMENT_PREFIX} {}`\n",
                r.from, r.to
            ));
        }
    }
    format!("{}\n", out.trim_end())
}

#[cfg(test)]
mod tests;
