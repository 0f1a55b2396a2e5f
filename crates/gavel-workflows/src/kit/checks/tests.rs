//! Each of gavel's draft checks, what it finds and what it must not find (code braces,
//! headings in fences, numbered and optional sections), and the rubric's section list.

use super::*;

const ISSUE_TEMPLATE: &str = "# {Short imperative title}\n\n**Labels:** {comma-separated labels, e.g. enhancement}\n\n## Why\n{The problem.}\n\n## What\n{The change.}\n\n## Acceptance criteria\n- [ ] {A testable statement of done}\n\n## Notes (optional)\n{Links.}\n";

const GOOD: &str = "# Add dark mode\n\n**Labels:** enhancement, ui\n\n## Why\nToo bright at night.\n\n## What\nA dark theme.\n\n## Acceptance criteria\n- [ ] The dashboard opens dark when the system is dark.\n";

fn shape() -> TemplateShape {
    TemplateShape::of(ISSUE_TEMPLATE)
}

#[test]
fn a_template_says_its_placeholders_sections_title_and_labels() {
    let s = shape();
    assert_eq!(
        s.placeholders,
        [
            "{Short imperative title}",
            "{comma-separated labels, e.g. enhancement}",
            "{The problem.}",
            "{The change.}",
            "{A testable statement of done}",
            "{Links.}"
        ]
    );
    assert_eq!(s.sections, ["Why", "What", "Acceptance criteria"]);
    assert!(s.title && s.labels);
    let bare = TemplateShape::of("## Why\n\n```json\n{\"a\": {}}\n```\n");
    assert!(bare.placeholders.is_empty(), "{:?}", bare.placeholders);
    assert!(!bare.title && !bare.labels);
}

#[test]
fn a_complete_draft_passes() {
    assert_eq!(check_draft(GOOD, &shape(), None), Vec::<String>::new());
}

#[test]
fn the_unfilled_template_fails_on_every_placeholder() {
    let found = check_draft(ISSUE_TEMPLATE, &shape(), None);
    assert!(
        found[0].contains("`{Short imperative title}`") && found[0].contains("(line 1)"),
        "{found:?}"
    );
    assert_eq!(
        found.iter().filter(|f| f.contains("placeholder")).count(),
        6,
        "{found:?}"
    );
}

#[test]
fn placeholders_in_code_count_only_when_they_read_as_prose() {
    let template = "# {Title}\n\n## Files\n| `{path}` | {What changes in this file and why} |\n\n## Types\n```\n{Types, records or schemas added}\n```\n";
    let shape = TemplateShape::of(template);
    // Braces in code that are code, even a name the template uses as a placeholder.
    let code = "# Theme\n\n## Files\nweb/theme.css changes colours.\n\n## Types\n```rust\nlet s = format!(\"{path}\");\nfn f() { g() }\n```\nand `{path}` in a sentence of code.\n";
    assert_eq!(check_draft(code, &shape, None), Vec::<String>::new());
    // A descriptive placeholder left in a code block is still a placeholder.
    let left = "# Theme\n\n## Files\nweb/theme.css\n\n## Types\n```\n{Types, records or schemas added}\n```\n";
    let found = check_draft(left, &shape, None);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("{Types, records or schemas added}") && found[0].contains("line 8"));
    // The same short name in prose is the placeholder left in.
    let prose = "# Theme\n\n## Files\nChange {path} here.\n\n## Types\nNone.\n";
    assert!(check_draft(prose, &shape, None)[0].contains("`{path}`"));
}

#[test]
fn missing_and_empty_sections_are_named() {
    let draft =
        "# Add dark mode\n\n**Labels:** ui\n\n## Why\n\n## Acceptance criteria\n- [ ] Dark.\n";
    let found = check_draft(draft, &shape(), None);
    assert_eq!(
        found,
        [
            "the section `Why` is empty",
            "the required section `What` is missing"
        ]
    );
}

#[test]
fn headings_inside_code_fences_are_not_sections() {
    let draft = "# Add dark mode\n\n**Labels:** ui\n\n## Why\nBright.\n\n```markdown\n## What\n## Acceptance criteria\n```\n";
    let found = check_draft(draft, &shape(), None);
    assert!(
        found.contains(&"the required section `What` is missing".to_owned())
            && found.contains(&"the required section `Acceptance criteria` is missing".to_owned()),
        "{found:?}"
    );
}

#[test]
fn a_section_with_only_subsections_that_have_content_is_filled() {
    let required = ["2. Proposed Changes".to_owned(), "2.1 Files".to_owned()];
    let filled = "# T\n\n## 2. Proposed Changes\n\n### 2.1 Files\n- a.rs\n";
    assert!(section_problems(filled, &required).is_empty());
    let hollow =
        "# T\n\n## 2. Proposed Changes\n\n### 2.1 Files\n<!-- none yet -->\n\n## 3. Next\nx\n";
    assert_eq!(
        section_problems(hollow, &required),
        [
            "the section `2. Proposed Changes` is empty",
            "the section `2.1 Files` is empty"
        ]
    );
}

#[test]
fn section_titles_match_without_numbers_case_colons_or_optional() {
    let required = ["1. Context & Goal".to_owned(), "Out of scope".to_owned()];
    let draft = "# T\n\n## Context &  goal:\nx\n\n### 4 OUT OF SCOPE (optional)\ny\n";
    assert!(section_problems(draft, &required).is_empty());
    // `(optional)` in the template: not required.
    assert!(
        !TemplateShape::of("# T\n## Open Questions (optional)\n## Why\n")
            .sections
            .contains(&"Open Questions (optional)".to_owned())
    );
}

#[test]
fn title_and_labels_lines() {
    let no_title = "Add dark mode\n\n**Labels:** ui\n\n## Why\nx\n\n## What\ny\n\n## Acceptance criteria\n- [ ] z\n";
    assert_eq!(
        check_draft(no_title, &shape(), None),
        ["the draft has no `# ` title line"]
    );
    let no_labels = GOOD.replace("**Labels:** enhancement, ui\n", "");
    assert_eq!(
        check_draft(&no_labels, &shape(), None),
        ["the draft has no `**Labels:**` line (the template has one)"]
    );
    let empty_labels = GOOD.replace("enhancement, ui", " , ``");
    assert_eq!(
        check_draft(&empty_labels, &shape(), None),
        ["the `**Labels:**` line names no label"]
    );
    // A labels line inside a code example is not the draft's own.
    let in_code = format!("{no_labels}\n```\n**Labels:** x\n```\n");
    assert!(check_draft(&in_code, &shape(), None)[0].contains("no `**Labels:**` line"));
    // A template without one asks for none; a `# ` line in a fence is no title.
    let lld = TemplateShape::of("# {N} - Feature\n\n## Goal\n{Goal}\n");
    assert!(check_draft("# 1 - Feature\n\n## Goal\nDark.\n", &lld, None).is_empty());
    assert_eq!(
        check_draft("```sh\n# 1 - Feature\n```\n\n## Goal\nDark.\n", &lld, None),
        ["the draft has no `# ` title line"]
    );
}

#[test]
fn a_draft_identical_to_the_previous_one_is_not_a_revision() {
    let found = check_draft(GOOD, &shape(), Some(&format!("\n{GOOD}\n\n")));
    assert_eq!(
        found,
        ["the draft is identical to the previous draft: nothing was revised"]
    );
    let warned = format!("<!-- gavel: WARNING: model verification failed: x -->\n{GOOD}");
    assert!(same_document(&warned, GOOD));
    assert!(check_draft(GOOD, &shape(), Some(&GOOD.replace("ui", "ux"))).is_empty());
}

#[test]
fn many_placeholders_are_summed_up() {
    let template: String = (1..=14).map(|i| format!("{{Part {i}}}\n\n")).collect();
    let found = check_draft(&template, &TemplateShape::of(&template), None);
    assert_eq!(found.len(), 11, "{found:?}");
    assert_eq!(
        found[10],
        "4 more of the template's placeholders are still in the draft"
    );
}

#[test]
fn a_rubric_may_require_more_sections() {
    let rubric = "# Rubric\n\nCheck it.\n\n## Required sections\n- Rollout plan\n- `Security`\n\n## Verdicts\n- APPROVED\n";
    assert_eq!(
        rubric_sections(rubric).expect("sections"),
        ["Rollout plan", "Security"]
    );
    assert!(
        rubric_sections("# Rubric\n\n1. Title\n")
            .expect("none")
            .is_empty()
    );
    let mut shape = shape();
    shape.require(&["why".to_owned(), "Rollout plan".to_owned()]);
    assert_eq!(
        shape.sections,
        ["Why", "What", "Acceptance criteria", "Rollout plan"]
    );
    assert_eq!(
        check_draft(GOOD, &shape, None),
        ["the required section `Rollout plan` is missing"]
    );
}

#[test]
fn a_malformed_required_sections_list_names_its_line() {
    for (rubric, line, words) in [
        (
            "# R\n\n## Required sections\n\n## Next\n",
            3,
            "lists no section",
        ),
        (
            "# R\n\n## Required sections\nRollout and security.\n",
            4,
            "text outside the list",
        ),
        (
            "# R\n\n## Required sections\n- Rollout\n  - Canary\n",
            5,
            "nested list",
        ),
        (
            "# R\n\n## Required sections\n- Rollout\n-\n",
            5,
            "empty item",
        ),
        (
            "# R\n\n## Required sections\n- Roll\n  out\n",
            4,
            "runs over two lines",
        ),
        (
            "# R\n\n## Required sections\n```\n- x\n```\n",
            4,
            "only a list",
        ),
        (
            "# R\n\n## Required sections\n- A\n\n### Required sections\n- B\n",
            6,
            "a second `Required sections` heading (the first is on line 3)",
        ),
    ] {
        let e = rubric_sections(rubric).expect_err(rubric);
        assert_eq!(e.line, line, "{rubric:?}: {e}");
        assert!(e.to_string().contains(words), "{rubric:?}: {e}");
    }
}
