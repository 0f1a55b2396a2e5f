//! A structured verdict given as text: the challenger's (and, when it cannot call tools, the
//! reviewer's) answer must hold exactly one top-level fenced JSON block that deserializes into
//! the verdict type, with no unknown or repeated fields. Anything else fails closed: no block,
//! two blocks, a block that mentions a verdict but does not parse, or a block nested in a
//! quote or a list (a model quoting an example is not deciding). The caller never guesses a
//! verdict from prose.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::de::DeserializeOwned;

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

/// The one verdict of type `T` in `answer` (see the module doc).
pub fn parse_json_verdict<T: DeserializeOwned>(answer: &str) -> Result<T, StructuredError> {
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
