//! Unit tests for the verdict grammar.

use super::*;

#[test]
fn json_verdict_with_findings_is_not_clean() {
    let v = parse(
        "Review\n```json\n{\"verdict\": \"REVISE\", \"findings\": [\"no AC\", {\"text\": \"vague\"}]}\n```\n",
    );
    assert_eq!(
        v,
        Verdict::Parsed {
            decision: Decision::Revise,
            findings: vec!["no AC".into(), "vague".into()],
            form: "json".into()
        }
    );
    assert!(!v.is_clean());
    assert_eq!(v.summary(), "REVISE (2 findings)");
}

#[test]
fn approved_json_without_findings_is_clean() {
    assert!(parse("```json\n{\"verdict\":\"APPROVED\",\"findings\":[]}\n```").is_clean());
}

#[test]
fn approved_with_findings_still_goes_to_revision() {
    assert!(!parse("```json\n{\"verdict\":\"APPROVED\",\"findings\":[\"nit\"]}\n```").is_clean());
}

#[test]
fn seed_checkbox_form_is_accepted() {
    let v = parse("## Verdict\n- [x] **APPROVED**\n- [ ] **REVISE**\n");
    assert!(v.is_clean());
    let v = parse("- [ ] **APPROVED**\n- [X] **BLOCK** - missing tests\n");
    assert!(matches!(
        v,
        Verdict::Parsed {
            decision: Decision::Block,
            ..
        }
    ));
}

#[test]
fn prose_approval_fails_closed() {
    for text in [
        "Looks great, APPROVED!",
        "The tests pass. I approve.",
        "",
        "```json\n{\"verdict\": \"LGTM\"}\n```",
    ] {
        assert!(
            matches!(parse(text), Verdict::Unparseable { .. }),
            "{text:?}"
        );
    }
}

#[test]
fn conflicting_forms_fail_closed() {
    let text = "```json\n{\"verdict\":\"APPROVED\"}\n```\n[x] **REVISE**\n";
    assert!(matches!(parse(text), Verdict::Unparseable { .. }));
    assert!(matches!(
        parse("[x] **APPROVED**\n[x] **REVISE**"),
        Verdict::Unparseable { .. }
    ));
    assert!(matches!(
        parse("```json\n{\"verdict\": \"APPROVED\",}\n```"),
        Verdict::Unparseable { .. }
    ));
}

// ---- helpers for the grammar tests below ----

/// The reason of an unparseable verdict; fails the test on a parsed one.
#[track_caller]
fn reason(v: &Verdict) -> &str {
    match v {
        Verdict::Unparseable { reason } => reason,
        parsed => panic!("expected UNPARSEABLE, got {parsed:?}"),
    }
}

/// The decision of a parsed verdict; fails the test on an unparseable one.
#[track_caller]
fn decision(v: &Verdict) -> Decision {
    match v {
        Verdict::Parsed { decision, .. } => *decision,
        Verdict::Unparseable { reason } => panic!("expected a verdict, got UNPARSEABLE: {reason}"),
    }
}

const APPROVED_JSON: &str = "```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n";

// ---- regressions from the adversarial run: each of these was filed as APPROVED ----

#[test]
fn checked_item_starting_with_approve_is_not_a_verdict() {
    let text = "## Checklist\n- [x] Approve button is present\n- [x] Tests pass\n\nVerdict: REVISE. Do not file.\n";
    assert!(reason(&parse(text)).contains("no JSON verdict block"));
    let text = "- [x] Approved by design team\n- [ ] Copy reviewed\n";
    reason(&parse(text));
    // Ordinary checklist items stay ignored next to a real verdict.
    let text = format!("- [x] Approve button is present\n\n{APPROVED_JSON}");
    assert!(parse(&text).is_clean());
}

#[test]
fn revise_block_inside_four_backtick_markdown_fence_is_not_missed() {
    let text = "Here is the review I drafted:\n\n````markdown\n## Findings\n- acceptance criteria are vague\n\n```json\n{\"verdict\": \"REVISE\", \"findings\": [\"vague AC\"]}\n```\n````\n\n- [x] **APPROVED**\n";
    let v = parse(text);
    let r = reason(&v);
    assert!(r.contains("REVISE") && r.contains("````markdown"), "{r}");
}

#[test]
fn draft_quoting_an_approved_block_does_not_decide() {
    let draft = "# Document the verdict format\n\nA reviewer answers with:\n\n```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n";
    let answer = "The draft shows the format:\n\n```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n\nIt never says what BLOCK means, so it needs another pass.\n";
    assert!(reason(&parse_review(answer, draft)).contains("draft"));
    // The same value, reformatted, is still the draft's block.
    let answer = "```json\n{ \"findings\": [],\n  \"verdict\": \"approved\" }\n```\n";
    assert!(reason(&parse_review(answer, draft)).contains("draft"));
    // A verdict of the reviewer's own still decides.
    let answer =
        "```json\n{\"verdict\": \"REVISE\", \"findings\": [\"BLOCK is undefined\"]}\n```\n";
    assert_eq!(decision(&parse_review(answer, draft)), Decision::Revise);
    assert!(parse_review(APPROVED_JSON, "# An ordinary draft\n").is_clean());
}

#[test]
fn draft_quoting_a_checked_approved_box_does_not_decide() {
    let draft = "Reviewers tick one box:\n\n- [x] **APPROVED**\n- [ ] **REVISE**\n";
    let answer = "Quoting the draft:\n\n- [x] **APPROVED**\n- [ ] **REVISE**\n";
    assert!(reason(&parse_review(answer, draft)).contains("draft"));
}

#[test]
fn approved_box_quoted_inside_a_markdown_fence_does_not_decide() {
    let text = "The draft ticks its own box:\n\n```markdown\n- [x] **APPROVED**\n```\n\nThat is not my call to make.\n";
    assert!(reason(&parse(text)).contains("```markdown"));
}

#[test]
fn json_verdict_key_in_another_case_is_not_ignored() {
    let text = "```json\n{\"Verdict\": \"REVISE\"}\n```\n\n- [x] **APPROVED**\n";
    reason(&parse(text));
}

#[test]
fn findings_key_in_another_case_still_blocks_filing() {
    let v = parse("```json\n{\"verdict\": \"APPROVED\", \"Findings\": [\"nit\"]}\n```\n");
    assert_eq!(decision(&v), Decision::Approved);
    assert!(!v.is_clean());
}

#[test]
fn yaml_fence_with_a_verdict_is_ambiguous() {
    let text = "```yaml\nverdict: REVISE\n```\n\n- [x] **APPROVED**\n";
    assert!(reason(&parse(text)).contains("```yaml"));
}

// ---- the grammar ----

#[test]
fn blockquoted_verdict_is_ambiguous() {
    let text =
        "> ```json\n> {\"verdict\": \"APPROVED\"}\n> ```\n\nThe draft's example above is wrong.\n";
    assert!(reason(&parse(text)).contains("block quote"));
    let text = "> - [x] **APPROVED**\n\n- [x] **REVISE**\n";
    assert!(reason(&parse(text)).contains("block quote"));
}

#[test]
fn json_verdict_in_a_list_item_is_ambiguous() {
    let text = "- Verdict:\n  ```json\n  {\"verdict\": \"APPROVED\"}\n  ```\n";
    assert!(reason(&parse(text)).contains("list item"));
    let text = "- Notes\n  - [x] **APPROVED**\n";
    assert!(reason(&parse(text)).contains("nested list"));
}

#[test]
fn tilde_fences_are_read() {
    let text = "~~~json\n{\"verdict\": \"REVISE\", \"findings\": [\"vague\"]}\n~~~\n";
    assert_eq!(decision(&parse(text)), Decision::Revise);
    let text = "~~~json\n{\"verdict\": \"REVISE\"}\n~~~\n\n- [x] **APPROVED**\n";
    reason(&parse(text));
    let text = "~~~md\n```json\n{\"verdict\": \"REVISE\"}\n```\n~~~\n\n- [x] **APPROVED**\n";
    assert!(reason(&parse(text)).contains("~~~md"));
}

#[test]
fn two_agreeing_json_blocks_are_ambiguous() {
    let text = format!("{APPROVED_JSON}\nand again:\n\n{APPROVED_JSON}");
    assert!(reason(&parse(&text)).contains("exactly one"));
}

#[test]
fn two_agreeing_boxes_are_ambiguous() {
    reason(&parse("- [x] **APPROVED**\n- [x] APPROVED\n"));
}

#[test]
fn prose_verdict_line_that_disagrees_fails_closed() {
    let text = format!("{APPROVED_JSON}\nVerdict: REVISE, the AC are vague.\n");
    let v = parse(&text);
    let r = reason(&v);
    assert!(r.contains("REVISE") && r.contains("APPROVED"), "{r}");
    let text = format!("## **Verdict** — revise\n\n{APPROVED_JSON}");
    reason(&parse(&text));
    // Agreeing prose is fine.
    let text = format!("**Verdict:** APPROVED\n\n{APPROVED_JSON}");
    assert!(parse(&text).is_clean());
}

#[test]
fn json_info_string_is_case_insensitive() {
    let v = parse("```JSON\n{\"verdict\": \"revise\"}\n```\n");
    assert_eq!(decision(&v), Decision::Revise);
    let v = parse("```Json title=\"verdict\"\n{\"verdict\": \"BLOCKED\"}\n```\n");
    assert_eq!(decision(&v), Decision::Block);
}

#[test]
fn crlf_line_endings_are_read() {
    let v = parse(
        "Review\r\n\r\n```json\r\n{\"verdict\": \"REVISE\",\r\n \"findings\": [\"x\"]}\r\n```\r\n",
    );
    assert_eq!(v.summary(), "REVISE (1 finding)");
    let v = parse("## Verdict\r\n- [ ] **APPROVED**\r\n- [x] **BLOCK** - no tests\r\n");
    assert_eq!(decision(&v), Decision::Block);
    let text = "```json\r\n{\"verdict\": \"APPROVED\"}\r\n```\r\n\r\nVerdict: BLOCK\r\n";
    reason(&parse(text));
}

#[test]
fn box_with_a_reason_is_a_verdict() {
    for (text, want) in [
        ("- [X] **BLOCK** - missing tests\n", Decision::Block),
        ("- [x] REVISE: vague\n", Decision::Revise),
        ("* [x] *Revise* — the scope is unclear\n", Decision::Revise),
        ("1. [x] __APPROVED__\n", Decision::Approved),
    ] {
        let v = parse(text);
        assert_eq!(decision(&v), want, "{text:?}");
        assert_eq!(
            v,
            Verdict::Parsed {
                decision: want,
                findings: vec![],
                form: "checkbox".into()
            }
        );
    }
}

#[test]
fn compound_word_is_not_a_verdict_box() {
    let text = format!("- [x] Block-level elements checked\n\n{APPROVED_JSON}");
    assert!(parse(&text).is_clean());
}

#[test]
fn malformed_or_unknown_json_verdicts_fail_closed() {
    for text in [
        "```json\n{\"verdict\": \"REVISE\", \"verdict\": \"APPROVED\"}\n```\n",
        "```json\n{\"verdict\": \"APPROVED\"}\n{\"verdict\": \"REVISE\"}\n```\n",
        "```\n{\"review\": {\"verdict\": \"APPROVED\"}}\n```\n",
        "```json\n{\"verdict\": \"APPROVED\", \"findings\": \"none\"}\n```\n",
        "```json\n{\"verdict\": \"SHIP IT\"}\n```\n",
    ] {
        reason(&parse(text));
    }
}

#[test]
fn code_that_is_not_about_verdicts_is_ignored() {
    let text = format!(
        "```rust\nlet verdict = verdict::parse(text);\n```\n\n    indented\n\n{APPROVED_JSON}"
    );
    assert!(parse(&text).is_clean());
}

#[test]
fn hidden_html_verdict_is_ambiguous() {
    let text = format!("<!--\n{{\"verdict\": \"REVISE\"}}\n-->\n\n{APPROVED_JSON}");
    assert!(reason(&parse(&text)).contains("HTML"));
}

#[test]
fn whole_answer_wrapped_in_a_markdown_fence_goes_to_a_person() {
    let text = "```markdown\n## Verdict\n- [x] **APPROVED**\n```\n";
    reason(&parse(text));
}

#[test]
fn link_reference_cannot_hide_a_bare_box() {
    let text = format!("{APPROVED_JSON}\n[x]: https://example.invalid\n\n[x] **REVISE**\n");
    reason(&parse(&text));
}
