//! The words of the brief → issue kind that `gavel init` writes: the issue template and the
//! review rubric.

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
