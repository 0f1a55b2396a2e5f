//! The planner's and the challenger's prompts. The planner answers with whole files in the
//! write-block format, paths relative to the change folder; the challenger answers with one
//! JSON verdict block.

use super::files::Expect;

const FILES: &str = "Answer with whole files between these lines (nothing else is read):\n\n=== gavel:write RELATIVE/PATH\n<the whole file>\n=== gavel:end\n\nPaths are relative to the change folder: proposal.md, specs/CAPABILITY/spec.md (CAPABILITY in lowercase letters, digits and dashes), tasks.md.";

const FORMATS: &str = "OpenSpec formats:\n- proposal.md: `# Change: TITLE`, then `## Why` (the problem, at least two sentences), `## What Changes` (a bullet list) and `## Impact` (affected specs and code).\n- specs/CAPABILITY/spec.md: a delta spec with `## ADDED Requirements`, `## MODIFIED Requirements` (the whole requirement as it will read), `## REMOVED Requirements` or `## RENAMED Requirements` (`- FROM: ### Requirement: OLD` / `- TO: ### Requirement: NEW`); each requirement is `### Requirement: NAME` with a sentence using SHALL or MUST and at least one `#### Scenario: NAME` with `- **WHEN** ...` / `- **THEN** ...` lines. A spec that relies on another capability of this change links to it with a Markdown link, `[OTHER](../OTHER/spec.md)`. A delta spec for a new capability (one with no living spec yet) starts with `## Purpose`: what the capability is for, in at least 50 characters (OpenSpec's spec template has one; archiving makes it the living spec's Purpose). A MODIFIED requirement replaces the whole living requirement, so it repeats every scenario of the living one that still holds.\n- tasks.md: numbered sections by layer (`## 1. Data Layer`, `## 2. Logic Layer`, `## 3. Integration Layer`, `## 4. Testing`) of `- [ ] 1.1 TASK` items.";

/// What a planner prompt is built from.
pub(super) struct PlannerInput<'a> {
    pub expect: Expect,
    pub change_id: &'a str,
    pub description: Option<&'a str>,
    /// The plan so far: `(path, text)` in the order the planner should read them.
    pub plan: &'a [(String, String)],
    /// The challenger's findings (a revision).
    pub findings: &'a [String],
    /// Why the last answer was refused.
    pub feedback: Option<&'a str>,
    /// The capabilities that have a living spec, with its text when the plan so far names
    /// the capability (`None`: named only).
    pub living: &'a [(String, Option<String>)],
}

pub(super) fn planner(i: &PlannerInput<'_>) -> String {
    let mut p = match i.expect {
        Expect::Proposal => format!(
            "You plan the change `{}` for a spec-driven workflow. Write its proposal.md.\n",
            i.change_id
        ),
        Expect::Specs => format!(
            "You plan the change `{}`. Write its delta specs: one specs/CAPABILITY/spec.md per capability the proposal touches.\n",
            i.change_id
        ),
        Expect::Tasks => format!(
            "You plan the change `{}`. Write its tasks.md: the implementation checklist for the proposal and specs below, with front matter `change_id: {}`.\n",
            i.change_id, i.change_id
        ),
        Expect::Revision => format!(
            "You revise the plan of the change `{}` to answer every finding of its challenger below. Write only the files you change, each whole.\n",
            i.change_id
        ),
    };
    if let Some(d) = i.description.filter(|d| !d.trim().is_empty()) {
        p.push_str("\n## What the person asked for\n\n");
        p.push_str(d.trim());
        p.push('\n');
    }
    if !i.findings.is_empty() {
        p.push_str("\n## The challenger's findings\n\n");
        for f in i.findings {
            p.push_str(&format!("- {}\n", f.trim()));
        }
    }
    for (path, text) in i.plan {
        p.push_str(&format!("\n## {path}\n\n{}\n", text.trim_end()));
    }
    if matches!(i.expect, Expect::Specs | Expect::Revision) {
        p.push_str("\n## Capabilities with a living spec (openspec/specs/CAPABILITY/spec.md)\n\n");
        if i.living.is_empty() {
            p.push_str(
                "None yet: every capability of this change is new and needs its `## Purpose`.\n",
            );
        }
        for (cap, text) in i.living {
            match text {
                Some(text) => p.push_str(&format!(
                    "### living specs/{cap}/spec.md\n\n{}\n\n",
                    text.trim_end()
                )),
                None => p.push_str(&format!("- {cap}\n")),
            }
        }
    }
    if let Some(f) = i.feedback {
        p.push_str(&format!(
            "\n## Your last answer was refused\n\n{}\n",
            f.trim()
        ));
    }
    p.push_str(&format!("\n{FORMATS}\n\n{FILES}\n"));
    p
}

/// The challenger's prompt: the whole plan, and the verdict format.
pub(super) fn challenger(
    change_id: &str,
    plan: &[(String, String)],
    feedback: Option<&str>,
) -> String {
    let mut p = format!(
        "You challenge the plan of the change `{change_id}` before anyone implements it: is the proposal's problem real and its scope right, do the delta specs say exactly what will change (every requirement testable, with scenarios), do the tasks cover the specs? Be specific.\n"
    );
    for (path, text) in plan {
        p.push_str(&format!("\n## {path}\n\n{}\n", text.trim_end()));
    }
    if let Some(f) = feedback {
        p.push_str(&format!(
            "\n## Your last answer was refused\n\n{}\n",
            f.trim()
        ));
    }
    p.push_str("\nEnd your answer with exactly one JSON block, and no other JSON block:\n\n```json\n{\"verdict\": \"APPROVED\" | \"NEEDS_REVISION\" | \"REJECTED\", \"findings\": [\"one finding per entry, most important first\"]}\n```\n\nAPPROVED: ready to implement. NEEDS_REVISION: the planner can fix it (say what). REJECTED: the change should not be made as proposed.\n");
    p
}
