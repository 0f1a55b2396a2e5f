//! A structured verdict given as text: the challenger's (and, when it cannot call tools, the
//! reviewer's) answer must hold exactly one top-level fenced JSON block that deserializes into
//! the verdict type, with no unknown or repeated fields. Anything else fails closed: no block,
//! two blocks, a block that mentions a verdict but does not parse, or a block nested in a
//! quote or a list (a model quoting an example is not deciding). The caller never guesses a
//! verdict from prose.
//!
//! The calls ask for the verdict type's JSON form as structured output where the provider can
//! ([`challenge_schema`], [`review_schema`]); a service that enforces it answers with one bare
//! JSON object, nothing around it. An answer that is exactly one JSON object is that verdict, by
//! the same rules (unknown or repeated fields refused); two objects or an object with prose
//! around it is not one, and is read as Markdown as above.

use gavel_llm::OutputSchema;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::de::DeserializeOwned;
use serde_json::json;

/// Why an answer holds no usable structured verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StructuredError {
    #[error("the answer has no top-level ```json block with the verdict")]
    Missing,
    #[error("the answer has {0} top-level JSON verdict blocks; exactly one decides")]
    Several(usize),
    #[error("the answer's JSON verdict block cannot be read: {0}")]
    Malformed(String),
}

/// The challenger's verdict ([`gavel_mcp::Challenge`]) as a schema a service can enforce:
/// `verdict` (`APPROVED`, `NEEDS_REVISION` or `REJECTED`) and `findings`, both required.
pub fn challenge_schema() -> OutputSchema {
    OutputSchema {
        name: "gavel_challenge".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "verdict": {
                    "type": "string",
                    "enum": ["APPROVED", "NEEDS_REVISION", "REJECTED"]
                },
                "findings": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "one entry per finding, most important first"
                }
            },
            "required": ["verdict", "findings"],
            "additionalProperties": false
        }),
    }
}

/// A text-only reviewer's review ([`gavel_mcp::Review`]) as a schema a service can enforce,
/// within the subset every service accepts (every member required, strings, string enums and
/// arrays): verdict, summary, issues (severity, title, description, file and recommendation,
/// empty when there is none) and next steps. The review's optional line numbers and test
/// results are left out (a plain answer may still give them); [`tidy_review`] reads the empty
/// strings as absent.
pub fn review_schema() -> OutputSchema {
    OutputSchema {
        name: "gavel_review".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "verdict": {
                    "type": "string",
                    "enum": ["APPROVED", "NEEDS_FIX", "MAJOR_ISSUES"]
                },
                "summary": { "type": "string" },
                "issues": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "severity": {
                                "type": "string",
                                "enum": ["critical", "major", "minor", "info"]
                            },
                            "title": { "type": "string" },
                            "description": { "type": "string" },
                            "file": {
                                "type": "string",
                                "description": "the file concerned, relative to the repository; empty when none"
                            },
                            "recommendation": {
                                "type": "string",
                                "description": "empty when none"
                            }
                        },
                        "required": ["severity", "title", "description", "file", "recommendation"],
                        "additionalProperties": false
                    }
                },
                "next_steps": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["verdict", "summary", "issues", "next_steps"],
            "additionalProperties": false
        }),
    }
}

/// A review as [`review_schema`] asks for it, with its empty strings and lists read as absent
/// (a file or recommendation of `""`, no next steps).
pub fn tidy_review(mut review: gavel_mcp::Review) -> gavel_mcp::Review {
    let none_if_empty = |s: &mut Option<String>| {
        if s.as_deref().is_some_and(|t| t.trim().is_empty()) {
            *s = None;
        }
    };
    for issue in &mut review.issues {
        none_if_empty(&mut issue.file);
        none_if_empty(&mut issue.recommendation);
    }
    if review.next_steps.as_ref().is_some_and(Vec::is_empty) {
        review.next_steps = None;
    }
    review
}

/// The one verdict of type `T` in `answer` (see the module doc).
pub fn parse_json_verdict<T: DeserializeOwned>(answer: &str) -> Result<T, StructuredError> {
    if let Some(object) = crate::verdict::bare_object(answer) {
        return serde_json::from_str::<T>(object)
            .map_err(|e| StructuredError::Malformed(e.to_string()));
    }
    let mut found = Vec::new();
    let mut malformed = None;
    for block in top_level_json_blocks(answer) {
        match serde_json::from_str::<T>(&block) {
            Ok(v) => found.push(v),
            Err(e) if block.contains("verdict") => malformed = Some(e.to_string()),
            Err(_) => {}
        }
    }
    if let Some(e) = malformed {
        return Err(StructuredError::Malformed(e));
    }
    match found.len() {
        0 => Err(StructuredError::Missing),
        1 => Ok(found.remove(0)),
        n => Err(StructuredError::Several(n)),
    }
}

/// The text of every fenced code block at the top level of `text` labelled `json`, or
/// unlabelled and starting with `{`.
fn top_level_json_blocks(text: &str) -> Vec<String> {
    let mut depth = 0usize;
    let mut current: Option<String> = None;
    let mut out = Vec::new();
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let label = match &kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or(""),
                    CodeBlockKind::Indented => "-",
                };
                current = (depth == 0 && (label == "json" || label.is_empty())).then(String::new);
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block) = current.take()
                    && block.trim_start().starts_with('{')
                {
                    out.push(block);
                }
            }
            Event::Text(t) => {
                if let Some(block) = current.as_mut() {
                    block.push_str(&t);
                }
            }
            Event::Start(
                Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_),
            ) => {
                depth += 1;
            }
            Event::End(
                TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition,
            ) => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct V {
        verdict: String,
        #[serde(default)]
        findings: Vec<String>,
    }

    #[test]
    fn exactly_one_top_level_block_decides() {
        let v: V = parse_json_verdict(
            "Looks fine.\n\n```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n",
        )
        .expect("one block");
        assert_eq!(v.verdict, "APPROVED");
    }

    #[test]
    fn one_bare_object_is_the_verdict_by_the_same_rules() {
        let v: V = parse_json_verdict("\n{\"verdict\": \"APPROVED\", \"findings\": [\"nit\"]}\n")
            .expect("a structured answer");
        assert_eq!(v.findings, ["nit"]);
        for bad in [
            "{\"verdict\": \"APPROVED\", \"verdict\": \"REJECTED\"}",
            "{\"verdict\": \"APPROVED\", \"extra\": 1}",
            "{\"findings\": []}",
        ] {
            assert!(
                matches!(
                    parse_json_verdict::<V>(bad),
                    Err(StructuredError::Malformed(_))
                ),
                "{bad}"
            );
        }
        for not_one in [
            "{\"verdict\": \"APPROVED\"}\n{\"verdict\": \"APPROVED\"}",
            "[{\"verdict\": \"APPROVED\"}]",
            "Verdict: {\"verdict\": \"APPROVED\"}",
            "\"APPROVED\"",
        ] {
            assert_eq!(
                parse_json_verdict::<V>(not_one),
                Err(StructuredError::Missing),
                "{not_one}"
            );
        }
    }

    #[test]
    fn the_schemas_answers_are_the_verdict_types() {
        use gavel_mcp::{Challenge, ChallengeVerdict, Review, ReviewVerdict};
        for (word, want) in [
            ("APPROVED", ChallengeVerdict::Approved),
            ("NEEDS_REVISION", ChallengeVerdict::NeedsRevision),
            ("REJECTED", ChallengeVerdict::Rejected),
        ] {
            let words = &challenge_schema().schema["properties"]["verdict"]["enum"];
            assert!(words.as_array().is_some_and(|w| w.contains(&json!(word))));
            let answer = json!({"verdict": word, "findings": ["a"]}).to_string();
            let c: Challenge = parse_json_verdict(&answer).expect(word);
            assert_eq!(c.verdict, want);
        }
        // Every member the review schema requires is one `Review` takes.
        let answer = json!({
            "verdict": "NEEDS_FIX",
            "summary": "s",
            "issues": [{"severity": "major", "title": "t", "description": "d", "file": "", "recommendation": "r"}],
            "next_steps": []
        })
        .to_string();
        let r = tidy_review(parse_json_verdict::<Review>(&answer).expect("a review"));
        assert_eq!(r.verdict, ReviewVerdict::NeedsFix);
        assert_eq!(r.issues[0].file, None);
        assert_eq!(r.issues[0].recommendation.as_deref(), Some("r"));
        assert_eq!(r.next_steps, None);
        let words = &review_schema().schema["properties"]["verdict"]["enum"];
        for v in [
            ReviewVerdict::Approved,
            ReviewVerdict::NeedsFix,
            ReviewVerdict::MajorIssues,
        ] {
            assert!(
                words
                    .as_array()
                    .is_some_and(|w| w.contains(&json!(v.as_str())))
            );
        }
    }

    #[test]
    fn anything_else_fails_closed() {
        let two = "```json\n{\"verdict\": \"APPROVED\"}\n```\n\n```json\n{\"verdict\": \"APPROVED\"}\n```\n";
        assert_eq!(
            parse_json_verdict::<V>(two),
            Err(StructuredError::Several(2))
        );
        assert_eq!(
            parse_json_verdict::<V>("APPROVED"),
            Err(StructuredError::Missing)
        );
        let quoted = "> ```json\n> {\"verdict\": \"APPROVED\"}\n> ```\n";
        assert_eq!(
            parse_json_verdict::<V>(quoted),
            Err(StructuredError::Missing)
        );
        let listed = "- example:\n  ```json\n  {\"verdict\": \"APPROVED\"}\n  ```\n";
        assert_eq!(
            parse_json_verdict::<V>(listed),
            Err(StructuredError::Missing)
        );
        for bad in [
            "```json\n{\"verdict\": \"APPROVED\", \"verdict\": \"REJECTED\"}\n```\n",
            "```json\n{\"verdict\": \"APPROVED\", \"extra\": 1}\n```\n",
            "```json\n{\"verdict\": \"APPROVED\"\n```\n",
        ] {
            assert!(
                matches!(
                    parse_json_verdict::<V>(bad),
                    Err(StructuredError::Malformed(_))
                ),
                "{bad}"
            );
        }
        let python = "```python\n{\"verdict\": \"APPROVED\"}\n```\n";
        assert_eq!(
            parse_json_verdict::<V>(python),
            Err(StructuredError::Missing)
        );
    }
}
