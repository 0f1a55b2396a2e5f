//! A draft's changes against the draft before it, as lines a page can show: added, removed,
//! unchanged context around them, and gaps where unchanged lines were left out.

use similar::{ChangeTag, TextDiff};

/// One line of a shown diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// `add`, `del`, `ctx`, or `gap` (unchanged lines left out).
    pub kind: &'static str,
    pub text: String,
}

/// How many unchanged lines are kept around each change.
const CONTEXT: usize = 3;

/// The changes from `old` to `new`, with [`CONTEXT`] lines around each; empty when they are the
/// same.
pub fn lines(old: &str, new: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 || group.first().is_some_and(|op| op.old_range().start > 0) {
            out.push(DiffLine {
                kind: "gap",
                text: String::new(),
            });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Insert => "add",
                    ChangeTag::Delete => "del",
                    ChangeTag::Equal => "ctx",
                };
                let text = change.to_string_lossy();
                out.push(DiffLine {
                    kind,
                    text: text.trim_end_matches(['\n', '\r']).to_owned(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_come_with_context_and_gaps() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 10\n", "line ten\n");
        let shown = lines(&old, &new);
        let kinds: Vec<&str> = shown.iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                "gap", "ctx", "ctx", "ctx", "del", "add", "ctx", "ctx", "ctx"
            ]
        );
        assert_eq!(shown[4].text, "line 10");
        assert_eq!(shown[5].text, "line ten");
        assert!(lines("same\n", "same\n").is_empty());
    }
}
