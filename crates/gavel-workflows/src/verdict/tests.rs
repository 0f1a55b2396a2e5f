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
