//! Clean-up of model answers before they are saved as documents.
//!
//! Models asked for a Markdown document often wrap it in chatter ("Sure! Here is the plan:") or
//! in a ```` ```markdown ```` fence. Workflows want the document itself, starting at its first
//! heading, so this lives in one tested function instead of ad-hoc trimming in each workflow.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Returns `text` from its title onwards, trimmed: from its first level-1 ATX heading (`# `),
/// or, in a document without one, from its first ATX heading of any level (`## `, ...).
///
/// Headings are found with a Markdown parser, so a `# ` line inside a code block (a shell
/// comment, a Python comment) is never taken for the title. When the title sits inside a
/// ```` ```markdown ```` (or ```` ```md ````, or bare ```` ``` ````) fence that wraps the document,
/// the fence is dropped too, together with anything after its closing line; a title outside
/// every fence wins over one inside a fence. If there is no heading, the text is returned
/// trimmed and otherwise unchanged.
pub fn strip_preamble(text: &str) -> String {
    let trimmed = text.trim();
    let headings = headings(trimmed);
    let pick = |h1: bool, wrapped: bool| {
        headings
            .iter()
            .find(|h| (!h1 || h.level == HeadingLevel::H1) && h.wrapped == wrapped)
    };
    let Some(title) = pick(true, false)
        .or_else(|| pick(true, true))
        .or_else(|| pick(false, false))
        .or_else(|| pick(false, true))
    else {
        return trimmed.to_owned();
    };
    let mut document = &trimmed[title.offset..];
    if title.wrapped
        && let Some(end) = last_closing_fence_offset(document)
    {
        document = &document[..end];
    }
    document.trim().to_owned()
}

/// The text of the document's title: its first level-1 ATX heading outside any code block
/// (`# Add dark mode` → `Add dark mode`), found with the Markdown parser. `None` without one.
pub fn title(text: &str) -> Option<String> {
    let mut in_title: Option<String> = None;
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading {
                level: HeadingLevel::H1,
                ..
            }) if is_atx(&text[range.clone()]) => in_title = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(title) = &mut in_title {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(HeadingLevel::H1)) => {
                if let Some(title) = in_title.take() {
                    let title = title.trim().to_owned();
                    if !title.is_empty() {
                        return Some(title);
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The lines of `text` that are prose: every line outside fenced and indented code blocks, so
/// a `**Labels:**` line inside an example is never read as the document's own.
pub fn prose_lines(text: &str) -> Vec<&str> {
    let code: Vec<Range<usize>> = Parser::new_ext(text, Options::empty())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::CodeBlock(_)) => Some(range),
            _ => None,
        })
        .collect();
    lines_with_offsets(text)
        .filter(|(offset, _)| !code.iter().any(|c| c.contains(offset)))
        .map(|(_, line)| line)
        .collect()
}

/// An ATX heading: where it starts, its level, and whether it is inside a fence that wraps a
/// Markdown document.
#[derive(Debug)]
struct Heading {
    offset: usize,
    level: HeadingLevel,
    wrapped: bool,
}

/// The ATX headings of `text` in order: those of the document itself, and those inside each
/// fence whose info string says Markdown (or nothing), which models use to wrap a document.
fn headings(text: &str) -> Vec<Heading> {
    let mut found = Vec::new();
    // The content of the Markdown fence being read, if any.
    let mut fence: Option<Option<Range<usize>>> = None;
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) if is_atx(&text[range.clone()]) => {
                found.push(Heading {
                    offset: range.start,
                    level,
                    wrapped: false,
                });
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if wraps_markdown(&info) => {
                fence = Some(None);
            }
            Event::Text(_) => {
                if let Some(content) = &mut fence {
                    let start = content.as_ref().map_or(range.start, |c| c.start);
                    *content = Some(start..range.end);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(Some(content)) = fence.take() {
                    found.extend(
                        headings(&text[content.clone()])
                            .into_iter()
                            .map(|h| Heading {
                                offset: content.start + h.offset,
                                level: h.level,
                                wrapped: true,
                            }),
                    );
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether a heading's source is ATX (`# Title`) rather than setext (`Title` over `===`).
fn is_atx(source: &str) -> bool {
    source.trim_start_matches(' ').starts_with('#')
}

fn wraps_markdown(info: &str) -> bool {
    matches!(
        info.trim().to_ascii_lowercase().as_str(),
        "" | "markdown" | "md"
    )
}

/// Byte offsets of the start of each line, paired with the line (without its terminator).
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_inclusive('\n').scan(0, |offset, raw| {
        let start = *offset;
        *offset += raw.len();
        Some((start, raw.trim_end_matches(['\n', '\r'])))
    })
}

/// The last line that is a bare closing fence: a wrapped document may contain code blocks of
/// its own, and its wrapping fence is the last one.
fn last_closing_fence_offset(text: &str) -> Option<usize> {
    lines_with_offsets(text)
        .filter(|(_, line)| line.trim() == "```")
        .last()
        .map(|(offset, _)| offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_chatter_before_first_heading() {
        let answer = "Sure! Here is the plan you asked for.\n\n# Plan\n\nStep one.\n";
        assert_eq!(strip_preamble(answer), "# Plan\n\nStep one.");
    }

    #[test]
    fn document_starting_with_heading_is_only_trimmed() {
        assert_eq!(strip_preamble("\n\n# Title\nbody\n\n"), "# Title\nbody");
    }

    #[test]
    fn first_heading_may_be_a_subheading() {
        assert_eq!(strip_preamble("intro\n## Part\ntext"), "## Part\ntext");
    }

    #[test]
    fn hash_without_space_is_not_a_heading() {
        let answer = "#hashtag and #!/bin/sh\n####### seven\n# Real\nx";
        assert_eq!(strip_preamble(answer), "# Real\nx");
    }

    #[test]
    fn no_heading_returns_trimmed_text_unchanged() {
        assert_eq!(strip_preamble("  just prose\nmore  \n"), "just prose\nmore");
        let fenced = "```markdown\nno heading here\n```";
        assert_eq!(strip_preamble(fenced), fenced);
    }

    #[test]
    fn whole_answer_fenced_as_markdown_is_unwrapped() {
        for opener in ["```markdown", "```md", "```", "```Markdown"] {
            let answer = format!("{opener}\n# Title\n\nbody\n```\n");
            assert_eq!(strip_preamble(&answer), "# Title\n\nbody", "{opener}");
        }
    }

    #[test]
    fn chatter_then_fenced_document_then_chatter() {
        let answer = "Here you go:\n\n```markdown\n# Title\nbody\n```\n\nHope this helps!";
        assert_eq!(strip_preamble(answer), "# Title\nbody");
    }

    #[test]
    fn code_blocks_inside_a_wrapped_document_are_kept() {
        let answer = "```markdown\n# Title\n```rust\nfn main() {}\n```\nafter\n```";
        assert_eq!(
            strip_preamble(answer),
            "# Title\n```rust\nfn main() {}\n```\nafter"
        );
    }

    #[test]
    fn trailing_code_block_of_unwrapped_document_is_kept() {
        let answer = "intro\n# Title\n```\ncode\n```";
        assert_eq!(strip_preamble(answer), "# Title\n```\ncode\n```");
    }

    #[test]
    fn a_hash_line_in_a_code_block_of_the_preamble_is_not_the_title() {
        // Regression: the `# ` line inside the fence was taken for the title.
        for fence in ["```sh", "```", "~~~"] {
            let close = &fence[..3];
            let answer = format!(
                "To build it, run:\n\n{fence}\n# not a title\nmake\n{close}\n\n# Build faster\n\nbody\n"
            );
            assert_eq!(strip_preamble(&answer), "# Build faster\n\nbody", "{fence}");
        }
    }

    #[test]
    fn a_level_one_title_wins_over_an_earlier_subheading() {
        let answer = "Notes first:\n\n## Assumptions\n\n- none\n\n# Title\nbody";
        assert_eq!(strip_preamble(answer), "# Title\nbody");
    }

    #[test]
    fn a_setext_heading_is_not_the_title() {
        let answer = "Sure\n====\n\nHere it is.\n\n# Title\nbody";
        assert_eq!(strip_preamble(answer), "# Title\nbody");
    }

    #[test]
    fn crlf_line_endings_are_handled() {
        let answer = "Sure:\r\n```markdown\r\n# Title\r\nbody\r\n```\r\n";
        assert_eq!(strip_preamble(answer), "# Title\r\nbody");
    }

    #[test]
    fn the_title_and_labels_are_never_read_from_code() {
        // Regression (issue 11): a `# ` or `**Labels:**` line in a code block was taken as the
        // draft's own when filing.
        let text =
            "```sh\n# install it\n**Labels:** wrong\n```\n\n# Add dark mode\n\n**Labels:** ui\n";
        assert_eq!(title(text).as_deref(), Some("Add dark mode"));
        let prose = prose_lines(text);
        assert!(prose.contains(&"**Labels:** ui"), "{prose:?}");
        assert!(!prose.contains(&"**Labels:** wrong"), "{prose:?}");
        assert_eq!(title("## only a subheading\n"), None);
        assert_eq!(title("# `gavel` runs\n").as_deref(), Some("gavel runs"));
    }
}
