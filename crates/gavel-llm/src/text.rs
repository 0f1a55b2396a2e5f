//! Clean-up of model answers before they are saved as documents.
//!
//! Models asked for a Markdown document often wrap it in chatter ("Sure! Here is the plan:") or
//! in a ```` ```markdown ```` fence. Workflows want the document itself, starting at its first
//! heading, so this lives in one tested function instead of ad-hoc trimming in each workflow.

/// Returns `text` from its first Markdown ATX heading (a line starting with `#`, `##`, ... followed
/// by a space) onwards, trimmed.
///
/// When the heading sits inside a ```` ```markdown ```` (or ```` ```md ````, or bare ```` ``` ````)
/// fence that wraps the document, the fence is dropped too, together with anything after its
/// closing line. If there is no heading, the text is returned trimmed and otherwise unchanged.
pub fn strip_preamble(text: &str) -> String {
    let trimmed = text.trim();
    let Some(start) = first_heading_offset(trimmed) else {
        return trimmed.to_owned();
    };
    let preamble = &trimmed[..start];
    let mut document = &trimmed[start..];
    let wrapped = preamble
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .is_some_and(opens_markdown_fence);
    if wrapped && let Some(end) = last_closing_fence_offset(document) {
        document = &document[..end];
    }
    document.trim().to_owned()
}

/// Byte offsets of the start of each line, paired with the line (without its terminator).
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_inclusive('\n').scan(0, |offset, raw| {
        let start = *offset;
        *offset += raw.len();
        Some((start, raw.trim_end_matches(['\n', '\r'])))
    })
}

fn first_heading_offset(text: &str) -> Option<usize> {
    lines_with_offsets(text)
        .find(|(_, line)| is_atx_heading(line))
        .map(|(offset, _)| offset)
}

fn is_atx_heading(line: &str) -> bool {
    let hashes = line.len() - line.trim_start_matches('#').len();
    (1..=6).contains(&hashes) && matches!(line[hashes..].chars().next(), None | Some(' ' | '\t'))
}

fn opens_markdown_fence(line: &str) -> bool {
    line.trim().strip_prefix("```").is_some_and(|info| {
        matches!(
            info.trim().to_ascii_lowercase().as_str(),
            "" | "markdown" | "md"
        )
    })
}

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
    fn crlf_line_endings_are_handled() {
        let answer = "Sure:\r\n```markdown\r\n# Title\r\nbody\r\n```\r\n";
        assert_eq!(strip_preamble(answer), "# Title\r\nbody");
    }
}
