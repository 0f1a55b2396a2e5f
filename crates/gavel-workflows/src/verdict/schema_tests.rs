//! Unit tests for structured answers: a reviewer's answer that is one bare JSON object (what a
//! service enforcing [`output_schema`] returns), read by the same rules as a fenced block.

use super::*;

/// The reason of an unparseable verdict; fails the test on a parsed one.
#[track_caller]
fn reason(v: &Verdict) -> String {
    match v {
        Verdict::Unparseable { reason } => reason.clone(),
        parsed => panic!("expected UNPARSEABLE, got {parsed:?}"),
    }
}

#[test]
fn a_bare_object_is_a_verdict_in_the_schema_form() {
    let v = parse("{\"verdict\": \"APPROVED\", \"findings\": []}");
    assert_eq!(
        v,
        Verdict::Parsed {
            decision: Decision::Approved,
            findings: vec![],
            form: "schema".into()
        }
    );
    assert!(v.is_clean());
    // Whitespace around it, pretty printing and CRLF change nothing.
    let v = parse(
        "\n  {\r\n  \"verdict\": \"REVISE\",\r\n  \"findings\": [\"no AC\", \"vague\"]\r\n}\r\n\n",
    );
    assert_eq!(v.summary(), "REVISE (2 findings)");
    assert!(matches!(&v, Verdict::Parsed { form, .. } if form == "schema"));
    // A fenced block stays the `json` form.
    let v = parse("```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n");
    assert!(matches!(&v, Verdict::Parsed { form, .. } if form == "json"));
}

#[test]
fn every_word_the_schema_allows_is_a_decision_of_the_grammar() {
    let schema = output_schema();
    assert_eq!(schema.name, "gavel_verdict");
    let s = &schema.schema;
    assert_eq!(s["type"], "object");
    assert_eq!(s["required"], serde_json::json!(["verdict", "findings"]));
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["properties"]["findings"]["type"], "array");
    assert_eq!(s["properties"]["findings"]["items"]["type"], "string");
    let words = s["properties"]["verdict"]["enum"]
        .as_array()
        .expect("an enum");
    let decisions: Vec<Decision> = words
        .iter()
        .map(|w| {
            let w = w.as_str().expect("a word");
            let answer = serde_json::json!({"verdict": w, "findings": []}).to_string();
            match parse(&answer) {
                Verdict::Parsed { decision, .. } => decision,
                other => panic!("{w}: {other:?}"),
            }
        })
        .collect();
    assert_eq!(
        decisions,
        [Decision::Approved, Decision::Revise, Decision::Block]
    );
    // Exactly the object's members, each of them required.
    let props: Vec<&String> = s["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .collect();
    assert_eq!(props.len(), 2, "{props:?}");
}

#[test]
fn a_bare_object_is_judged_like_the_same_object_in_a_fence() {
    for object in [
        "{\"verdict\": \"BLOCK\", \"findings\": [\"no tests\"]}",
        // Extra members: read as a fenced block reads them (only `verdict` and `findings`
        // count), never as a second verdict.
        "{\"verdict\": \"REVISE\", \"findings\": [\"vague\"], \"confidence\": 0.9}",
        "{\"VERDICT\": \"approved\", \"Findings\": [\"nit\"]}",
        "{\"verdict\": \"APPROVED\", \"findings\": [], \"note\": {\"verdict\": \"BLOCK\"}}",
        // Malformed, the same way.
        "{\"verdict\": \"APPROVED\", \"Verdict\": \"REVISE\", \"findings\": []}",
        "{\"verdict\": \"APPROVED\", \"findings\": \"none\"}",
        "{\"verdict\": \"APPROVED\", \"findings\": [], \"findings\": [\"x\"]}",
        "{\"review\": {\"verdict\": \"APPROVED\"}}",
    ] {
        let bare = parse(object);
        let fenced = parse(&format!("```json\n{object}\n```\n"));
        match (&bare, &fenced) {
            (
                Verdict::Parsed {
                    decision: a,
                    findings: fa,
                    form,
                },
                Verdict::Parsed {
                    decision: b,
                    findings: fb,
                    ..
                },
            ) => {
                assert_eq!((a, fa), (b, fb), "{object}");
                assert_eq!(form, "schema");
            }
            (Verdict::Unparseable { reason: a }, Verdict::Unparseable { reason: b }) => {
                assert_eq!(a, b, "{object}");
            }
            _ => panic!("{object}: bare {bare:?}, fenced {fenced:?}"),
        }
    }
}

#[test]
fn a_verdict_word_outside_the_grammar_fails_closed() {
    for object in [
        "{\"verdict\": \"LGTM\", \"findings\": []}",
        "{\"verdict\": \"APPROVED!\", \"findings\": []}",
        "{\"verdict\": \"\", \"findings\": []}",
        "{\"verdict\": \"APPROVED REVISE\", \"findings\": []}",
        "{\"verdict\": true, \"findings\": []}",
        "{\"verdict\": [\"APPROVED\"], \"findings\": []}",
        "{\"verdict\": null, \"findings\": []}",
    ] {
        reason(&parse(object));
    }
}

#[test]
fn an_object_without_a_verdict_decides_nothing() {
    let r = reason(&parse("{\"findings\": []}"));
    assert!(r.contains("without a \"verdict\""), "{r}");
    reason(&parse("{}"));
}

#[test]
fn two_objects_or_any_other_json_are_not_a_structured_verdict() {
    for text in [
        "{\"verdict\": \"APPROVED\", \"findings\": []}{\"verdict\": \"APPROVED\", \"findings\": []}",
        "{\"verdict\": \"APPROVED\", \"findings\": []}\n{\"verdict\": \"REVISE\", \"findings\": []}",
        "{\"verdict\": \"REVISE\", \"findings\": []}\n\n{\"verdict\": \"APPROVED\", \"findings\": []}\n",
        "[{\"verdict\": \"APPROVED\", \"findings\": []}]",
        "\"APPROVED\"",
        "APPROVED",
        "true",
        "null",
        "42",
        // Prose around an object: not the schema's form, and not a fenced block either.
        "Here you go: {\"verdict\": \"APPROVED\", \"findings\": []}",
        "{\"verdict\": \"APPROVED\", \"findings\": []}\nLooks good to me.",
        // Truncated.
        "{\"verdict\": \"APPROVED\", \"findings\": [",
    ] {
        reason(&parse(text));
    }
}

#[test]
fn the_drafts_own_verdict_object_echoed_decides_nothing() {
    let draft = "# Document the verdict format\n\nA reviewer answers with:\n\n```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n";
    // Verbatim.
    let r = reason(&parse_review(
        "{\"verdict\": \"APPROVED\", \"findings\": []}",
        draft,
    ));
    assert!(r.contains("draft"), "{r}");
    // Reformatted, same decision and findings.
    let r = reason(&parse_review(
        "{\n  \"findings\": [],\n  \"verdict\": \"approved\"\n}\n",
        draft,
    ));
    assert!(r.contains("draft"), "{r}");
    // In the draft's prose rather than a block, and nested in another object.
    let draft = "The reviewer replies {\"result\": {\"verdict\": \"REVISE\", \"findings\": [\"x\"]}} and we retry.\n";
    let r = reason(&parse_review(
        "{\"verdict\": \"REVISE\", \"findings\": [\"x\"]}",
        draft,
    ));
    assert!(r.contains("draft"), "{r}");
    // A verdict of the reviewer's own still decides.
    let v = parse_review(
        "{\"verdict\": \"REVISE\", \"findings\": [\"BLOCK is undefined\"]}",
        "# Document the verdict format\n\n```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n",
    );
    assert!(
        matches!(v, Verdict::Parsed { decision: Decision::Revise, ref form, .. } if form == "schema"),
        "{v:?}"
    );
    assert!(
        parse_review(
            "{\"verdict\": \"APPROVED\", \"findings\": []}",
            "# Dark mode\n"
        )
        .is_clean()
    );
}
