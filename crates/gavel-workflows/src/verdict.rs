//! Reading a reviewer's verdict without trusting the reviewer.
//!
//! Routing never comes from a model saying "approved" in prose: APPROVED files an issue, REVISE
//! and BLOCK go back to the drafter, and whatever this module cannot read with certainty is
//! [`Verdict::Unparseable`], which fails closed and waits for a person. The answer is read as
//! CommonMark with GFM task lists from pulldown-cmark's event stream (never by grepping lines;
//! CRLF and LF alike), with this grammar:
//!
//! - A **verdict word** is `APPROVED`, `REVISE` or `BLOCK` in any case (`APPROVE` and `BLOCKED`
//!   too), as a whole word: `Block-level` and `Approved_x` are not one.
//! - A **line** is the inline text of a paragraph, heading or list item up to a line break, with
//!   emphasis and strong markers removed; inline code and inline HTML count as their text (so
//!   `<del>APPROVED</del>` is not a verdict word), and a link keeps its brackets.
//! - A **JSON verdict block** is a fenced block (backticks or tildes, any fence length) whose
//!   info string's first word is `json` (any case) or empty, and whose content is one JSON object
//!   with exactly one member named `verdict` (any case) holding a verdict word, and at most one
//!   named `findings` (any case) holding an array. A json or unlabelled block that mentions a
//!   verdict (below) but is not such an object, or holds another word, is **malformed**.
//! - A **verdict box** is the first line of a checked task-list item (`- [x]`, `1. [X]`), or a
//!   line that starts with `[x]` or `[X]` (a box without its list marker), whose rest is one
//!   verdict word, then nothing or a reason after `:`, `–`, `—`, or a space and `-`.
//!   `- [X] **BLOCK** - no tests` is a box; `- [x] Approve button is present` is a checklist
//!   item and is ignored.
//! - A **verdict mention** is code (any other fenced block, an indented block) or an HTML block
//!   (comments too) whose text contains `"verdict"` or `'verdict'` (any case), or has a line
//!   that starts with `verdict` and then `:` or `=` (YAML, TOML, quoted prose).
//! - A **prose verdict line** is a line of the reviewer's own text (not in a block quote or
//!   code) that starts with `Verdict` (any case), then optionally `:`, `-`, `–` or `—`, then a
//!   verdict word.
//!
//! Only the top level decides: a JSON verdict block that is a direct child of the document, and
//! a box in a paragraph or heading of the document or in an item of a list that is. The answer is
//! **Parsed** when it has exactly one of these, or one JSON block and one box that agree (form
//! `json`, findings from the JSON), and no prose verdict line names another decision. Otherwise
//! it is **Unparseable**, with a reason naming the first problem found:
//! - a malformed verdict at the top level;
//! - a *quoted* verdict, which makes the answer ambiguous: a JSON verdict block or box in a
//!   block quote, a JSON verdict block in a list item, a box in a nested list, any verdict
//!   mention, or a JSON verdict block or box inside any code block that is not itself a JSON
//!   verdict block. Such blocks (```` ````markdown ````, `~~~md`, ```` ```text ````...) are read
//!   again as documents, 8 levels deep; an answer wrapped whole in a fence is all quoted;
//! - two top-level JSON verdict blocks, or two checked boxes, even if they agree; a JSON block
//!   and a box that disagree; a prose verdict line that disagrees with them;
//! - with [`parse_review`]: a top-level JSON verdict block whose text appears verbatim in the
//!   draft under review, or that equals (same decision and findings) a JSON verdict object
//!   anywhere in the draft (in or out of code); or a box whose decision is checked in a box
//!   anywhere in the draft. The reviewer may be quoting the draft, which is no verdict at all;
//! - no top-level JSON verdict block or box at all: prose alone never decides.
//!
//! **Structured answers.** A reviewer reached through a service that can constrain its answer
//! to a JSON schema is asked for [`output_schema`] (`gavel_verdict`: `verdict`, one of
//! `APPROVED`, `REVISE`, `BLOCK`, and `findings`, an array of strings). Such an answer is one
//! bare JSON object, with no fence and nothing around it (whitespace aside). An answer that is
//! exactly one JSON object is read as a top-level JSON verdict block would be, by the same rules
//! (an object with no `verdict` member, or one that is malformed, is unparseable; with
//! [`parse_review`], an object that appears in the draft decides nothing), and its form is
//! `schema`. Whether the service was asked for the schema does not matter here: the parser
//! judges the text, so a model that ignores the schema is read by the grammar above, and one
//! that answers in the schema's form unasked is read like this. Two objects, an array, a string
//! or any other JSON value is not one object, and is read as Markdown (where it decides
//! nothing).

mod json;
mod scan;

use gavel_llm::OutputSchema;
use json::{JsonVerdict, Read, json_objects, read_json};
use scan::{What, scan};
use serde::{Deserialize, Serialize};

/// How many code blocks deep quoted documents are read again for verdicts.
const MAX_DEPTH: usize = 8;

/// The name of the verdict's JSON schema ([`output_schema`]).
pub const SCHEMA_NAME: &str = "gavel_verdict";

/// The verdict grammar's JSON form as a schema a service can enforce (structured output):
/// `{"verdict": "APPROVED" | "REVISE" | "BLOCK", "findings": ["..."]}`, both members required,
/// no other member. Asking for it is a request, never trust: the answer is parsed by [`parse`]
/// or [`parse_review`] like any other.
pub fn output_schema() -> OutputSchema {
    OutputSchema {
        name: SCHEMA_NAME.into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {
                "verdict": {
                    "type": "string",
                    "enum": ["APPROVED", "REVISE", "BLOCK"],
                    "description": "APPROVED: ready as it is; REVISE: the drafter can fix the findings; BLOCK: a person must step in"
                },
                "findings": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "one entry per problem, most important first; empty when there is none"
                }
            },
            "required": ["verdict", "findings"],
            "additionalProperties": false
        }),
    }
}

/// The reviewer's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Decision {
    Approved,
    Revise,
    Block,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "APPROVED",
            Self::Revise => "REVISE",
            Self::Block => "BLOCK",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "APPROVED" | "APPROVE" => Some(Self::Approved),
            "REVISE" => Some(Self::Revise),
            "BLOCK" | "BLOCKED" => Some(Self::Block),
            _ => None,
        }
    }
}

/// A parsed verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Parsed {
        decision: Decision,
        findings: Vec<String>,
        form: String,
    },
    Unparseable {
        reason: String,
    },
}

impl Verdict {
    /// Clean: approved with no findings. Only a clean verdict routes to filing by itself.
    pub fn is_clean(&self) -> bool {
        matches!(self, Self::Parsed { decision: Decision::Approved, findings, .. } if findings.is_empty())
    }

    /// One line for prompts and headers: `REVISE (2 findings)`, `UNPARSEABLE: ...`.
    pub fn summary(&self) -> String {
        match self {
            Self::Parsed {
                decision, findings, ..
            } if findings.is_empty() => decision.as_str().into(),
            Self::Parsed {
                decision, findings, ..
            } => {
                let n = findings.len();
                format!(
                    "{} ({n} finding{})",
                    decision.as_str(),
                    if n == 1 { "" } else { "s" }
                )
            }
            Self::Unparseable { reason } => format!("UNPARSEABLE: {reason}"),
        }
    }
}

/// Parses a reviewer's answer, with no draft to compare against (see [`parse_review`]).
pub fn parse(answer: &str) -> Verdict {
    judge(answer, None)
}

/// Parses a reviewer's answer to `draft`: like [`parse`], but a verdict that the draft itself
/// contains is taken for a quote of the draft and decides nothing.
pub fn parse_review(answer: &str, draft: &str) -> Verdict {
    judge(answer, Some(draft))
}

fn unparseable(reason: impl Into<String>) -> Verdict {
    Verdict::Unparseable {
        reason: reason.into(),
    }
}

/// The answer's one bare JSON object (trimmed), if the whole answer is exactly one object: the
/// form of a structured answer (also read by `change::structured`).
pub(crate) fn bare_object(answer: &str) -> Option<&str> {
    let text = answer.trim();
    if !(text.starts_with('{') && text.ends_with('}')) {
        return None;
    }
    // `from_str` refuses anything after the value, so two objects are not one.
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Some(text),
        _ => None,
    }
}

/// A structured answer (one bare JSON object), judged as a top-level JSON verdict block.
fn judge_object(text: &str, draft: Option<&str>) -> Verdict {
    let json = match read_json(text) {
        Read::Verdict(decision, findings) => JsonVerdict {
            decision,
            findings,
            body: text.replace("\r\n", "\n"),
        },
        Read::Malformed(reason) => return unparseable(reason),
        Read::NotVerdict => {
            return unparseable("the answer is a JSON object without a \"verdict\" member");
        }
    };
    if let Some(draft) = draft
        && let Some(reason) = quoted_from_draft(Some(&json), None, draft)
    {
        return unparseable(reason);
    }
    Verdict::Parsed {
        decision: json.decision,
        findings: json.findings,
        form: "schema".into(),
    }
}

fn judge(answer: &str, draft: Option<&str>) -> Verdict {
    if let Some(text) = bare_object(answer) {
        return judge_object(text, draft);
    }
    let (mut jsons, mut boxes, mut prose) = (Vec::new(), Vec::new(), Vec::new());
    for hit in scan(answer, 0, None) {
        match (hit.what, hit.place) {
            (What::Malformed(reason), None) => return unparseable(reason),
            (what, Some(place)) => {
                return unparseable(format!("{} {place}; a person decides", what.describe()));
            }
            (What::Json(j), None) => jsons.push(j),
            (What::Box(d), None) => boxes.push(d),
            (What::Prose(d), None) => prose.push(d),
            (What::Mention, None) => return unparseable("a verdict is mentioned in code"),
        }
    }
    if jsons.len() > 1 {
        let words = words(jsons.iter().map(|j| j.decision));
        let n = jsons.len();
        return unparseable(format!(
            "found {n} JSON verdict blocks ({words}); the answer must have exactly one"
        ));
    }
    if boxes.len() > 1 {
        let words = words(boxes.iter().copied());
        return unparseable(format!("more than one verdict box is checked ({words})"));
    }
    let (json, checked) = (jsons.pop(), boxes.pop());
    if let Some(draft) = draft
        && let Some(reason) = quoted_from_draft(json.as_ref(), checked, draft)
    {
        return unparseable(reason);
    }
    let (decision, findings, form) = match (json, checked) {
        (Some(j), None) => (j.decision, j.findings, "json"),
        (None, Some(b)) => (b, Vec::new(), "checkbox"),
        (Some(j), Some(b)) if j.decision == b => (j.decision, j.findings, "json"),
        (Some(j), Some(b)) => {
            return unparseable(format!(
                "the JSON verdict says {} but the checkbox says {}",
                j.decision.as_str(),
                b.as_str()
            ));
        }
        (None, None) => {
            let mut reason = String::from("no JSON verdict block and no checked verdict box found");
            if let Some(p) = prose.first() {
                reason.push_str(&format!(
                    " (the text says {}, which decides nothing)",
                    p.as_str()
                ));
            }
            return unparseable(reason);
        }
    };
    if let Some(p) = prose.iter().find(|p| **p != decision) {
        let block = if form == "json" {
            "verdict block"
        } else {
            "checked box"
        };
        return unparseable(format!(
            "the text says {} but the {block} says {}",
            p.as_str(),
            decision.as_str()
        ));
    }
    Verdict::Parsed {
        decision,
        findings,
        form: form.into(),
    }
}

fn words(decisions: impl Iterator<Item = Decision>) -> String {
    decisions
        .map(Decision::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why the answer's verdict may be a quote of the draft, if it may.
fn quoted_from_draft(
    json: Option<&JsonVerdict>,
    checked: Option<Decision>,
    draft: &str,
) -> Option<String> {
    if json.is_none() && checked.is_none() {
        return None;
    }
    let in_draft = scan(draft, 0, None);
    if let Some(j) = json {
        let same = |o: &JsonVerdict| o.decision == j.decision && o.findings == j.findings;
        let verbatim = draft.replace("\r\n", "\n").contains(&j.body);
        if verbatim
            || in_draft
                .iter()
                .any(|h| matches!(&h.what, What::Json(o) if same(o)))
            || json_objects(draft).iter().any(same)
        {
            return Some(format!(
                "the JSON verdict block ({}) also appears in the draft under review; a person decides",
                j.decision.as_str()
            ));
        }
    }
    if let Some(b) = checked
        && in_draft
            .iter()
            .any(|h| matches!(h.what, What::Box(d) if d == b))
    {
        return Some(format!(
            "the checked {} box also appears in the draft under review; a person decides",
            b.as_str()
        ));
    }
    None
}

/// A reviewer's verdict as a spec-driven change records it: from the planning challenge (WF-R2)
/// or the implementation review (WF-R4), in `STATE.yaml`'s `last_verdict` and in a change
/// run's state (`crate::kit::ChangeTarget`). Here, not in `change`, because the implementation
/// kit keeps it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChangeVerdict {
    /// Plan or implementation accepted.
    Approved,
    /// The plan needs another proposal round.
    NeedsRevision,
    /// The plan is rejected outright.
    Rejected,
    /// The implementation needs an auto-fix round.
    NeedsFix,
    /// The implementation needs a person.
    MajorIssues,
}

#[cfg(test)]
mod schema_tests;
#[cfg(test)]
mod tests;
