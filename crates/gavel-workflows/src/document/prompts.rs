//! The words sent to models: how draft and review prompts are assembled from a kind's
//! template, rubric and input (the kinds' default templates and rubrics are in their modules).
//!
//! Revision prompts carry ALL earlier verdicts (cumulative), not just the latest, so the
//! drafter cannot "forget" feedback from an earlier round.

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
    /// What to write and how to answer (the kind's).
    pub instruction: &'a str,
    /// The input's heading (`Brief`, `Issue`).
    pub input_heading: &'a str,
    pub template: &'a str,
    /// The input (the brief, the issue).
    pub brief: &'a str,
    /// The validated context files, when given.
    pub context: Option<&'a str>,
    /// The current draft, when revising.
    pub current_draft: Option<&'a str>,
    /// Every verdict so far, oldest first.
    pub verdicts: &'a [String],
    /// The person's feedback, when they asked for a revision.
    pub feedback: Option<&'a str>,
    /// gavel's own findings on the current draft (its checks), when it failed them.
    pub checks: &'a [String],
}

/// The drafter's prompt.
pub fn draft_prompt(input: &DraftInput<'_>) -> String {
    let mut p = String::new();
    p.push_str(input.instruction.trim());
    p.push_str("\n\n## Template\n\n");
    p.push_str(input.template.trim());
    p.push_str(&format!("\n\n## {}\n\n", input.input_heading));
    p.push_str(input.brief.trim());
    p.push('\n');
    if let Some(context) = input.context.filter(|c| !c.trim().is_empty()) {
        p.push_str("\n## Context files (read-only; from the repository)\n\n");
        p.push_str(context.trim_end());
        p.push('\n');
    }
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
    if !input.checks.is_empty() {
        p.push_str("\n## gavel's checks of the current draft (fix every one)\n\n");
        for f in input.checks {
            p.push_str(&format!("- {}\n", f.trim()));
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
            instruction: "You write GitHub issues.",
            input_heading: "Brief",
            template: "T",
            brief: "B",
            context: Some("### src/a.rs\n\nfn a() {}"),
            current_draft: Some("# D"),
            verdicts: &verdicts,
            feedback: Some("keep it short"),
            checks: &["the section `What` is empty".to_owned()],
        });
        for needle in [
            "## Brief\n\nB",
            "# D",
            "### Review #1\n\nfirst: add AC",
            "### Review #2",
            "keep it short",
            "You write GitHub issues.",
            "## Context files (read-only; from the repository)\n\n### src/a.rs",
            "## gavel's checks of the current draft (fix every one)\n\n- the section `What` is empty\n",
        ] {
            assert!(p.contains(needle), "missing {needle:?} in\n{p}");
        }
    }

    #[test]
    fn first_draft_prompt_has_no_revision_sections() {
        let p = draft_prompt(&DraftInput {
            instruction: "I",
            input_heading: "Issue",
            template: "T",
            brief: "B",
            context: None,
            current_draft: None,
            verdicts: &[],
            feedback: None,
            checks: &[],
        });
        assert!(!p.contains("Review #") && !p.contains("Current draft") && !p.contains("Feedback"));
        assert!(!p.contains("gavel's checks"));
        assert!(p.contains("## Issue\n\nB") && !p.contains("Context files"));
    }

    #[test]
    fn review_prompt_demands_the_json_block() {
        let p = review_prompt("RUBRIC", "# Draft");
        assert!(p.starts_with("RUBRIC") && p.contains("# Draft") && p.contains("\"verdict\""));
    }
}
