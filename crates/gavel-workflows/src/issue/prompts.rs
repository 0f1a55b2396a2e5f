//! The words sent to models: the default issue template and review rubric that `gavel init`
//! writes, and how draft and review prompts are assembled from them.
//!
//! Revision prompts carry ALL earlier verdicts (cumulative), not just the latest, so the
//! drafter cannot "forget" feedback from an earlier round.

/// The issue template written to `docs/templates/0101-issue-template.md` by `gavel init`.
pub const DEFAULT_TEMPLATE: &str = r#"# {Short imperative title}

**Labels:** {comma-separated labels, e.g. enhancement}

## Why
{The problem, who has it, and what it costs today.}

## What
{The change, described from the user's side.}

## Acceptance criteria
- [ ] {A testable statement of done}
- [ ] {Another}

## Out of scope
{What this issue deliberately does not do.}

## Notes
{Risks, open questions, links.}
"#;

/// The review rubric written to `docs/skills/0701c-issue-review-prompt.md` by `gavel init`.
pub const DEFAULT_RUBRIC: &str = r#"# Issue review rubric (0701c)

You are an independent reviewer. Judge the draft issue below; do not rewrite it.

Check each point:
1. **Title**: one `# ` heading, imperative, specific.
2. **Labels**: a `**Labels:**` line with at least one label.
3. **Problem**: the "Why" names who is affected and what it costs.
4. **Scope**: the "What" is concrete and the "Out of scope" section bounds it.
5. **Acceptance criteria**: every criterion is testable; there is at least one.
6. **Feasibility**: nothing contradicts itself; no hidden second issue inside this one.

Verdicts:
- APPROVED: every point holds; findings must be empty.
- REVISE: fixable gaps; list each as a finding.
- BLOCK: the issue should not be filed in this form (wrong problem, unsafe, duplicate).
"#;

/// The instruction appended to every review prompt, so routing comes from structure.
pub const VERDICT_FORMAT: &str = r#"## Answer format (required)

End your answer with exactly one fenced JSON block:

```json
{"verdict": "APPROVED" | "REVISE" | "BLOCK", "findings": ["one string per finding"]}
```

APPROVED requires an empty findings list. An answer without this block is treated as not approved.
"#;

/// What the drafter gets.
pub struct DraftInput<'a> {
    pub template: &'a str,
    pub brief: &'a str,
    /// The current draft, when revising.
    pub current_draft: Option<&'a str>,
    /// Every verdict so far, oldest first.
    pub verdicts: &'a [String],
    /// The person's feedback, when they asked for a revision.
    pub feedback: Option<&'a str>,
}

/// The drafter's prompt.
pub fn draft_prompt(input: &DraftInput<'_>) -> String {
    let mut p = String::new();
    p.push_str("You write GitHub issues. Fill in the template below from the brief. Answer with the issue only, in Markdown, starting with its `# ` title line, and keep a `**Labels:**` line.\n\n");
    p.push_str("## Template\n\n");
    p.push_str(input.template.trim());
    p.push_str("\n\n## Brief\n\n");
    p.push_str(input.brief.trim());
    p.push('\n');
    if let Some(draft) = input.current_draft {
        p.push_str("\n## Current draft (revise it)\n\n");
        p.push_str(draft.trim());
        p.push('\n');
    }
    if !input.verdicts.is_empty() {
        p.push_str("\n## ALL reviewer feedback so far (cumulative; address every point)\n\n");
        for (i, v) in input.verdicts.iter().enumerate() {
            p.push_str(&format!("### Review #{}\n\n{}\n\n", i + 1, v.trim()));
        }
    }
    if let Some(feedback) = input.feedback.filter(|f| !f.trim().is_empty()) {
        p.push_str("\n## Feedback from the person (takes precedence)\n\n");
        p.push_str(feedback.trim());
        p.push('\n');
    }
    p
}

/// The reviewer's prompt: the fixed rubric, the draft, and the required answer format.
pub fn review_prompt(rubric: &str, draft: &str) -> String {
    format!(
        "{}\n\n## Draft under review\n\n{}\n\n{}",
        rubric.trim(),
        draft.trim(),
        VERDICT_FORMAT
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_prompt_carries_every_verdict_and_the_feedback() {
        let verdicts = vec![
            "first: add AC".to_owned(),
            "second: tighten scope".to_owned(),
        ];
        let p = draft_prompt(&DraftInput {
            template: "T",
            brief: "B",
            current_draft: Some("# D"),
            verdicts: &verdicts,
            feedback: Some("keep it short"),
        });
        for needle in [
            "## Brief\n\nB",
            "# D",
            "### Review #1\n\nfirst: add AC",
            "### Review #2",
            "keep it short",
        ] {
            assert!(p.contains(needle), "missing {needle:?} in\n{p}");
        }
    }

    #[test]
    fn first_draft_prompt_has_no_revision_sections() {
        let p = draft_prompt(&DraftInput {
            template: "T",
            brief: "B",
            current_draft: None,
            verdicts: &[],
            feedback: None,
        });
        assert!(!p.contains("Review #") && !p.contains("Current draft") && !p.contains("Feedback"));
    }

    #[test]
    fn review_prompt_demands_the_json_block() {
        let p = review_prompt("RUBRIC", "# Draft");
        assert!(p.starts_with("RUBRIC") && p.contains("# Draft") && p.contains("\"verdict\""));
    }
}
