//! The planner's files, checked before any is written: a planner step answers with whole files
//! in the strict write-block format (the one `gavel implement` uses), with paths relative to
//! the change folder. Only `proposal.md`, `specs/CAPABILITY/spec.md` and `tasks.md` may be
//! written, each must be valid for OpenSpec (a proposal with `## Why` and `## What Changes`, a
//! delta spec whose requirements each have a scenario, a checklist with at least one task
//! naming this change), and nothing is written unless every file is valid. gavel's own draft
//! checks ([`crate::kit::checks`]) hold here too: a proposal needs its title and non-empty
//! `Why` and `What Changes`, and a revision that changes no file is refused ([`unchanged`]).

use crate::change::read::{ReadError, read_text_optional};
use crate::change::spec::{outline, parse_delta_spec};
use crate::change::tasks::{ChangeIdSource, parse_tasks};
use crate::change::{ChangeDir, check_name};
use crate::kit::answer::{self, FileOp};
use crate::kit::checks;

/// Which files a planner step must and may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `proposal.md` only.
    Proposal,
    /// One or more `specs/CAPABILITY/spec.md`.
    Specs,
    /// `tasks.md` only.
    Tasks,
    /// A revision: any of the three kinds, at least one file.
    Revision,
}

/// A checked set of plan files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanFiles {
    /// The proposal's body (a challenge section the planner wrote is refused).
    pub proposal: Option<String>,
    /// `(capability, delta spec)`, as answered.
    pub specs: Vec<(String, String)>,
    /// `tasks.md`, with front matter naming the change.
    pub tasks: Option<String>,
}

/// The marker line gavel puts before each challenge section it appends to `proposal.md`.
pub const CHALLENGE_MARKER: &str = "<!-- gavel:challenge -->";

/// Checks `answer` as the files of step `expect` of change `id`.
pub fn check(answer_text: &str, expect: Expect, id: &str) -> Result<PlanFiles, String> {
    let ops = answer::parse(answer_text).map_err(|e| e.to_string())?;
    let mut files = PlanFiles::default();
    let mut problems = Vec::new();
    for op in &ops {
        let FileOp::Write { path, content } = op else {
            problems.push(format!("`{}`: a plan file is never deleted", op.path()));
            continue;
        };
        let kind = if path == "proposal.md" {
            Expect::Proposal
        } else if path == "tasks.md" {
            Expect::Tasks
        } else if spec_capability(path).is_some() {
            Expect::Specs
        } else {
            problems.push(format!(
                "`{path}`: only proposal.md, specs/CAPABILITY/spec.md and tasks.md are plan files"
            ));
            continue;
        };
        if expect != Expect::Revision && kind != expect {
            problems.push(format!(
                "`{path}`: this step writes {} only",
                describe(expect)
            ));
            continue;
        }
        let checked = match kind {
            Expect::Proposal => {
                check_proposal(content).map(|()| files.proposal = Some(content.clone()))
            }
            Expect::Tasks => check_tasks(content, id).map(|t| files.tasks = Some(t)),
            _ => {
                let capability = spec_capability(path).unwrap_or_default();
                check_spec(content).map(|()| files.specs.push((capability, content.clone())))
            }
        };
        if let Err(e) = checked {
            problems.push(format!("`{path}`: {e}"));
        }
    }
    let missing = match expect {
        Expect::Proposal => files.proposal.is_none(),
        Expect::Specs => files.specs.is_empty(),
        Expect::Tasks => files.tasks.is_none(),
        Expect::Revision => {
            files.proposal.is_none() && files.specs.is_empty() && files.tasks.is_none()
        }
    };
    if missing && problems.is_empty() {
        problems.push(format!("the answer writes no {}", describe(expect)));
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(problems.join("\n"))
    }
}

fn describe(expect: Expect) -> &'static str {
    match expect {
        Expect::Proposal => "proposal.md",
        Expect::Specs => "specs/CAPABILITY/spec.md",
        Expect::Tasks => "tasks.md",
        Expect::Revision => "plan file",
    }
}

/// `CAPABILITY` of `specs/CAPABILITY/spec.md`, when it is a valid name.
fn spec_capability(path: &str) -> Option<String> {
    let cap = path.strip_prefix("specs/")?.strip_suffix("/spec.md")?;
    check_name(cap).ok().map(|()| cap.to_owned())
}

/// The proposal's own sections, which must be there and say something.
const PROPOSAL_SECTIONS: [&str; 2] = ["Why", "What Changes"];

fn check_proposal(text: &str) -> Result<(), String> {
    if text.contains(CHALLENGE_MARKER) {
        return Err("a challenge section is gavel's to write; leave it out".into());
    }
    let headings = outline(text).headings;
    for needed in PROPOSAL_SECTIONS {
        if !headings
            .iter()
            .any(|h| h.level == 2 && h.title.trim() == needed)
        {
            return Err(format!("the proposal has no `## {needed}` section"));
        }
    }
    // gavel's own checks (as for an issue or an LLD): a title, filled sections, no word left
    // from the format's skeleton.
    let mut problems = Vec::new();
    match gavel_llm::title(text) {
        None => problems.push("the proposal has no `# Change: TITLE` title line".to_owned()),
        Some(t) if t.trim() == "Change: TITLE" => {
            problems.push("the proposal's title is still `TITLE` from the format".to_owned())
        }
        Some(_) => {}
    }
    let required = PROPOSAL_SECTIONS.map(str::to_owned);
    problems.extend(checks::section_problems(text, &required));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn check_spec(text: &str) -> Result<(), String> {
    parse_delta_spec(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The tasks, with `change_id` front matter added when the planner left it out.
fn check_tasks(text: &str, id: &str) -> Result<String, String> {
    let list = parse_tasks(text, id).map_err(|e| e.to_string())?;
    if list.tasks.is_empty() {
        return Err("tasks.md has no `- [ ]` task".into());
    }
    Ok(match list.change_id_source {
        ChangeIdSource::FrontMatter => text.to_owned(),
        ChangeIdSource::Folder => format!("---\nchange_id: {id}\n---\n\n{}", text.trim_start()),
    })
}

/// Whether a revision's files say nothing new: each file the same as on disk (the proposal
/// compared without its challenge sections), once gavel's comment lines and blanks are set
/// aside. The challenger is not asked to judge the same plan twice.
pub fn unchanged(files: &PlanFiles, dir: &ChangeDir) -> Result<bool, ReadError> {
    let same = |path: &std::path::Path, text: &str| -> Result<bool, ReadError> {
        Ok(read_text_optional(path)?.is_some_and(|now| checks::same_document(&now, text)))
    };
    if let Some(p) = &files.proposal {
        let now = read_text_optional(&dir.proposal())?.unwrap_or_default();
        if !checks::same_document(split_proposal(&now).0, p) {
            return Ok(false);
        }
    }
    for (cap, text) in &files.specs {
        if !same(&dir.delta_spec(cap), text)? {
            return Ok(false);
        }
    }
    if let Some(t) = &files.tasks
        && !same(&dir.tasks(), t)?
    {
        return Ok(false);
    }
    Ok(true)
}

/// The proposal's body and its challenge sections, split at the first marker.
pub fn split_proposal(text: &str) -> (&str, &str) {
    match text.find(CHALLENGE_MARKER) {
        Some(at) => (&text[..at], &text[at..]),
        None => (text, ""),
    }
}

/// Every delta spec on disk: `(capability, text)`, sorted by capability. A capability folder
/// whose `spec.md` is there but is no regular file (a FIFO, a link, too large) is an error
/// naming it, never skipped.
pub fn read_specs(dir: &ChangeDir) -> Result<Vec<(String, String)>, ReadError> {
    let mut out = Vec::new();
    let specs = dir.specs_dir();
    let entries = match std::fs::read_dir(&specs) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(source) => {
            return Err(ReadError::Io {
                path: specs,
                source,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|source| ReadError::Io {
            path: specs.clone(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if check_name(&name).is_err() || !entry.path().is_dir() {
            continue;
        }
        if let Some(text) = read_text_optional(&dir.delta_spec(&name))? {
            out.push((name, text));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROPOSAL: &str = "=== gavel:write proposal.md\n# Change: X\n\n## Why\nBecause.\n\n## What Changes\n- A\n=== gavel:end\n";
    const SPEC: &str = "=== gavel:write specs/auth/spec.md\n## ADDED Requirements\n### Requirement: Login\nThe system SHALL sign users in.\n\n#### Scenario: Ok\n- **WHEN** x\n- **THEN** y\n=== gavel:end\n";

    #[test]
    fn each_step_takes_its_own_files_only() {
        assert!(check(PROPOSAL, Expect::Proposal, "x").is_ok());
        assert!(check(SPEC, Expect::Specs, "x").is_ok());
        let e = check(SPEC, Expect::Proposal, "x").expect_err("a spec at the proposal step");
        assert!(e.contains("writes proposal.md only"), "{e}");
        let both = format!("{PROPOSAL}{SPEC}");
        assert!(check(&both, Expect::Revision, "x").is_ok());
    }

    #[test]
    fn invalid_plan_files_are_named() {
        let no_why = "=== gavel:write proposal.md\n# X\n\n## What Changes\n- A\n=== gavel:end\n";
        assert!(
            check(no_why, Expect::Proposal, "x")
                .expect_err("no why")
                .contains("## Why")
        );
        let no_scenario = "=== gavel:write specs/auth/spec.md\n## ADDED Requirements\n### Requirement: Login\nThe system SHALL.\n=== gavel:end\n";
        assert!(
            check(no_scenario, Expect::Specs, "x")
                .expect_err("no scenario")
                .contains("Scenario")
        );
        let outside = "=== gavel:write ../../etc/passwd\nx\n=== gavel:end\n";
        assert!(check(outside, Expect::Revision, "x").is_err());
        let other = "=== gavel:write src/main.rs\nfn main() {}\n=== gavel:end\n";
        assert!(
            check(other, Expect::Revision, "x")
                .expect_err("code")
                .contains("only proposal.md")
        );
        let bad_cap =
            "=== gavel:write specs/Auth_X/spec.md\n## ADDED Requirements\n=== gavel:end\n";
        assert!(check(bad_cap, Expect::Specs, "x").is_err());
        let wrong =
            "=== gavel:write tasks.md\n---\nchange_id: other\n---\n- [ ] 1.1 A\n=== gavel:end\n";
        assert!(
            check(wrong, Expect::Tasks, "x")
                .expect_err("wrong id")
                .contains("other")
        );
    }

    #[test]
    fn a_proposal_needs_a_title_and_filled_sections() {
        let empty_why = "=== gavel:write proposal.md\n# Change: X\n\n## Why\n\n## What Changes\n- A\n=== gavel:end\n";
        let e = check(empty_why, Expect::Proposal, "x").expect_err("empty why");
        assert!(e.contains("the section `Why` is empty"), "{e}");
        let untitled = "=== gavel:write proposal.md\n## Why\nBecause.\n\n## What Changes\n- A\n=== gavel:end\n";
        let e = check(untitled, Expect::Proposal, "x").expect_err("no title");
        assert!(e.contains("no `# Change: TITLE` title line"), "{e}");
        let skeleton = PROPOSAL.replace("# Change: X", "# Change: TITLE");
        let e = check(&skeleton, Expect::Proposal, "x").expect_err("skeleton title");
        assert!(e.contains("still `TITLE`"), "{e}");
    }

    #[test]
    fn a_revision_that_changes_nothing_is_unchanged() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = ChangeDir::new(tmp.path().join("openspec"), "x").expect("dir");
        std::fs::create_dir_all(dir.dir()).expect("mkdir");
        let body = "# Change: X\n\n## Why\nBecause.\n\n## What Changes\n- A\n";
        std::fs::write(
            dir.proposal(),
            format!("{body}\n{CHALLENGE_MARKER}\n## Challenge (round 1)\n- say why\n"),
        )
        .expect("write");
        let files = check(PROPOSAL, Expect::Revision, "x").expect("files");
        assert!(unchanged(&files, &dir).expect("read"));
        let revised = check(
            &PROPOSAL.replace("Because.", "Because it leaks."),
            Expect::Revision,
            "x",
        )
        .expect("files");
        assert!(!unchanged(&revised, &dir).expect("read"));
        let spec = check(SPEC, Expect::Revision, "x").expect("files");
        assert!(
            !unchanged(&spec, &dir).expect("read"),
            "a new spec is a change"
        );
    }

    #[test]
    fn tasks_get_their_change_id_front_matter() {
        let t = "=== gavel:write tasks.md\n## 1. Data Layer\n- [ ] 1.1 Table\n=== gavel:end\n";
        let files = check(t, Expect::Tasks, "add-x").expect("tasks");
        assert!(
            files
                .tasks
                .expect("tasks")
                .starts_with("---\nchange_id: add-x\n---\n")
        );
    }

    #[test]
    fn challenge_sections_are_split_off_the_body() {
        let text = format!("# P\n\n## Why\nx\n\n{CHALLENGE_MARKER}\n## Challenge (round 1)\n");
        let (body, rest) = split_proposal(&text);
        assert_eq!(body, "# P\n\n## Why\nx\n\n");
        assert!(rest.starts_with(CHALLENGE_MARKER));
    }
}
