//! The implementer's prompts: the LLD, the context, the repository's files, the test command
//! and its conventions, what failed last time, and how to answer (files in the strict format,
//! or, for an agent CLI, edit the worktree itself).

use super::answer;
use super::guard::Step;

/// What a step's prompt is made of.
pub(super) struct StepInput<'a> {
    pub step: Step,
    /// `issue #12 (Title)` or `change `add-x` (Title)`.
    pub subject: &'a str,
    /// The design is a change's plan (proposal, delta specs, tasks), not an LLD.
    pub plan: bool,
    pub lld: &'a str,
    pub context: Option<&'a str>,
    pub feedback: Option<&'a str>,
    pub test_command: &'a str,
    pub test_globs: &'a [String],
    /// The repository's tracked files.
    pub files: &'a [String],
    pub agent: bool,
}

/// The prompt of a scaffold or implementation step.
pub(super) fn step_prompt(i: &StepInput<'_>) -> String {
    let mut p = String::new();
    let design = if i.plan { "plan" } else { "low-level design" };
    match i.step {
        Step::Scaffold => p.push_str(&format!(
            "You write the failing tests for {} from its {design}, test first: write ONLY test files (files matching {}), no implementation. The tests must fail now, because the code they test does not exist yet, and pass once the design is implemented. They run with `{}`.\n",
            i.subject,
            i.test_globs.join(", "),
            i.test_command
        )),
        Step::Implement => p.push_str(&format!(
            "You implement {} from its {design} so that the tests pass (`{}`). Do NOT create, change or delete any test file (files matching {}): changes to tests are refused and put back.\n",
            i.subject,
            i.test_command,
            i.test_globs.join(", ")
        )),
    }
    p.push_str(if i.plan {
        "\n## The plan (proposal, delta specs, open tasks)\n\n"
    } else {
        "\n## Low-level design\n\n"
    });
    p.push_str(i.lld.trim());
    p.push('\n');
    if let Some(c) = i.context.filter(|c| !c.trim().is_empty()) {
        p.push_str("\n## Context files\n\n");
        p.push_str(c.trim_end());
        p.push('\n');
    }
    p.push_str("\n## Files in the repository\n\n");
    for f in i.files.iter().take(500) {
        p.push_str(&format!("- {f}\n"));
    }
    if i.files.len() > 500 {
        p.push_str(&format!("- ... and {} more\n", i.files.len() - 500));
    }
    if let Some(f) = i.feedback.filter(|f| !f.trim().is_empty()) {
        p.push_str("\n## What went wrong last time (fix it)\n\n");
        p.push_str(f.trim());
        p.push('\n');
    }
    p.push_str("\n## How to answer\n\n");
    if i.agent {
        p.push_str("Edit the files in your working folder (the repository) with your tools; you may run the test command. Your changes are judged from the files, not from your summary.\n");
    } else {
        p.push_str(answer::INSTRUCTIONS);
        p.push('\n');
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_says_what_it_may_touch_and_how_to_answer() {
        let globs = vec!["tests/**".to_owned()];
        let files = vec!["calc.py".to_owned()];
        let input = |step, agent| StepInput {
            step,
            subject: "issue #7 (Add)",
            plan: false,
            lld: "# Design",
            context: None,
            feedback: Some("1 failed"),
            test_command: "pytest -q",
            test_globs: &globs,
            files: &files,
            agent,
        };
        let scaffold = step_prompt(&input(Step::Scaffold, false));
        assert!(scaffold.contains("write ONLY test files (files matching tests/**)"));
        assert!(scaffold.contains("=== gavel:write"));
        assert!(scaffold.contains("## What went wrong last time (fix it)\n\n1 failed"));
        assert!(scaffold.contains("- calc.py"));
        let implement = step_prompt(&input(Step::Implement, true));
        assert!(implement.contains("Do NOT create, change or delete any test file"));
        assert!(implement.contains("with your tools") && !implement.contains("=== gavel:write"));
    }
}
