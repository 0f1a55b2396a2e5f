//! Structured output: a request with an output schema asks each API for it in the vendor's own
//! way, the answer's form says so, and a service that refuses it (HTTP 400 naming the
//! parameter) gets the call once more in plain text and only plain text afterwards.

use gavel_fakeapi::{Api, Recorded, Reply};
use gavel_llm::{AnswerForm, Call, OutputSchema, Provider, ProviderError, Request, Response};
use serde_json::{Value, json};

use crate::util::{ANTHROPIC, COMPATIBLE, Harness, KINDS, Kind, permanent, request, settings};

/// The verdict's JSON form, as the workflows ask for it.
fn verdict_schema() -> OutputSchema {
    OutputSchema {
        name: "gavel_verdict".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["APPROVED", "REVISE", "BLOCK"]},
                "findings": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["verdict", "findings"],
            "additionalProperties": false
        }),
    }
}

const VERDICT: &str = r#"{"verdict":"REVISE","findings":["The title names no component."]}"#;

fn structured_request() -> Request {
    Request {
        output_schema: Some(verdict_schema()),
        ..request()
    }
}

fn ask(h: &Harness, req: &Request) -> Result<Response, ProviderError> {
    h.provider.complete(req, &Call::new(&|| false))
}

/// Where each API's request carries the schema, if it does.
fn sent_schema(kind: &Kind, req: &Recorded) -> Option<Value> {
    let b = &req.body;
    let found = match kind.api {
        Api::Anthropic => {
            let tool = b["tools"]
                .as_array()?
                .iter()
                .find(|t| t["name"] == "gavel_verdict")?;
            assert_eq!(
                b["tool_choice"],
                json!({"type": "tool", "name": "gavel_verdict"}),
                "the tool is forced"
            );
            tool["input_schema"].clone()
        }
        Api::Gemini => {
            let config = &b["generationConfig"];
            if config["responseJsonSchema"].is_null() {
                return None;
            }
            assert_eq!(config["responseMimeType"], "application/json");
            config["responseJsonSchema"].clone()
        }
        Api::OpenAiResponses => {
            let format = &b["text"]["format"];
            if format.is_null() {
                return None;
            }
            assert_eq!(format["type"], "json_schema");
            assert_eq!(format["name"], "gavel_verdict");
            assert_eq!(format["strict"], true);
            format["schema"].clone()
        }
        Api::OpenAiChat => {
            let format = &b["response_format"];
            if format.is_null() {
                return None;
            }
            assert_eq!(format["type"], "json_schema");
            assert_eq!(format["json_schema"]["name"], "gavel_verdict");
            assert_eq!(format["json_schema"]["strict"], true);
            format["json_schema"]["schema"].clone()
        }
    };
    Some(found)
}

#[test]
fn each_api_is_asked_for_the_schema_and_the_answer_is_its_json() {
    for kind in KINDS {
        let h = Harness::new(kind);
        h.push(Reply::text(VERDICT).with_usage(200, 30, 0));
        let response =
            ask(&h, &structured_request()).unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.text, VERDICT, "{}", kind.name);
        assert_eq!(response.form, AnswerForm::Schema, "{}", kind.name);
        assert_eq!(response.output_tokens, Some(30), "{}", kind.name);
        let req = h.only_request();
        assert_eq!(
            sent_schema(kind, &req),
            Some(verdict_schema().schema),
            "{}: {}",
            kind.name,
            req.body
        );
    }
}

#[test]
fn a_call_without_a_schema_asks_plain_text() {
    for kind in KINDS {
        let h = Harness::new(kind);
        h.push(Reply::text("Plain words."));
        let response = h.ask().unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.form, AnswerForm::Plain);
        let req = h.only_request();
        assert_eq!(sent_schema(kind, &req), None, "{}: {}", kind.name, req.body);
        assert!(req.body.get("tool_choice").is_none(), "{}", req.body);
    }
}

#[test]
fn a_keyless_local_server_is_asked_with_response_format() {
    let mut keyless = settings(&COMPATIBLE);
    keyless.key_env = Vec::new();
    let h = Harness::build(&COMPATIBLE, keyless, |_| {});
    h.push(Reply::text(VERDICT));
    let response = ask(&h, &structured_request()).expect("answered");
    assert_eq!(
        (response.text.as_str(), response.form),
        (VERDICT, AnswerForm::Schema)
    );
    let req = h.only_request();
    assert_eq!(
        sent_schema(&COMPATIBLE, &req),
        Some(verdict_schema().schema)
    );
}

#[test]
fn a_refusal_is_answered_once_in_plain_text_and_remembered() {
    for kind in KINDS {
        let h = Harness::new(kind);
        h.fake.refuse_structured_output(kind.api);
        h.push(Reply::text("VERDICT: REVISE (plain)"));
        h.push(Reply::text("VERDICT: APPROVED (plain)"));

        let first =
            ask(&h, &structured_request()).unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(first.text, "VERDICT: REVISE (plain)");
        assert_eq!(first.form, AnswerForm::PlainAfterRefusal, "{}", kind.name);
        // The plain call is the same attempt, not a retry.
        assert_eq!(first.attempts, 1);
        assert!(h.provider.refuses_structured_output(), "{}", kind.name);
        let sent = h.fake.requests();
        assert_eq!(sent.len(), 2, "{}: {sent:#?}", kind.name);
        assert!(sent_schema(kind, &sent[0]).is_some(), "{}", kind.name);
        assert_eq!(sent_schema(kind, &sent[1]), None, "{}", kind.name);
        let messages = |r: &Recorded| r.body.pointer(kind.messages_ptr).cloned();
        assert_eq!(messages(&sent[1]), messages(&sent[0]), "{}", kind.name);

        // The next call asks plain text at once.
        let second =
            ask(&h, &structured_request()).unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(second.text, "VERDICT: APPROVED (plain)");
        assert_eq!(second.form, AnswerForm::PlainAfterRefusal);
        let sent = h.fake.requests();
        assert_eq!(sent.len(), 3, "{}: {sent:#?}", kind.name);
        assert_eq!(sent_schema(kind, &sent[2]), None, "{}", kind.name);
    }
}

#[test]
fn a_400_that_names_no_structured_output_parameter_stays_an_error() {
    for kind in KINDS {
        let h = Harness::new(kind);
        h.push(Reply::error(400, "The model `nope` does not exist"));
        h.push(Reply::text("never asked"));
        let (message, hint) = permanent(kind, ask(&h, &structured_request()));
        assert!(message.contains("HTTP 400"), "{message}");
        assert!(hint.contains("model name"), "{hint}");
        assert_eq!(h.fake.requests().len(), 1, "{}: asked again", kind.name);
        assert!(!h.provider.refuses_structured_output());
    }
}

#[test]
fn a_refused_plain_call_that_fails_too_reports_its_own_error() {
    let kind = &COMPATIBLE;
    let h = Harness::new(kind);
    h.fake.refuse_structured_output(kind.api);
    h.push(Reply::error(503, "overloaded"));
    let err = ask(&h, &structured_request()).expect_err("the plain call failed");
    assert!(err.is_transient(), "{err:?}");
    assert!(err.to_string().contains("overloaded"), "{err}");
    assert_eq!(h.fake.requests().len(), 2);
}

#[test]
fn an_anthropic_answer_that_ignores_the_forced_tool_is_passed_on_for_the_parser_to_judge() {
    let h = Harness::new(&ANTHROPIC);
    h.push(Reply::text("APPROVED, looks fine"));
    let response = ask(&h, &structured_request()).expect("answered");
    assert_eq!(response.text, "APPROVED, looks fine");
    assert_eq!(response.form, AnswerForm::Schema);
}

#[test]
fn after_a_refusal_the_next_key_is_asked_plain_text_too() {
    for kind in KINDS {
        let mut two_keys = settings(kind);
        two_keys.key_env = vec!["SO_KEY_A".into(), "SO_KEY_B".into()];
        let h = Harness::build(kind, two_keys, |env| {
            env.insert("SO_KEY_A".into(), "sk-test-structured-AAAA-0001".into());
            env.insert("SO_KEY_B".into(), "sk-test-structured-BBBB-0002".into());
        });
        h.fake.refuse_structured_output(kind.api);
        // Key A's plain call finds its quota gone; key B answers.
        h.fake.rule(gavel_fakeapi::Rule::for_key(
            kind.api,
            "sk-test-structured-AAAA-0001",
            Reply::quota_exhausted(),
        ));
        h.push(Reply::text("answered plain with key B"));
        let response =
            ask(&h, &structured_request()).unwrap_or_else(|e| panic!("{}: {e:?}", kind.name));
        assert_eq!(response.text, "answered plain with key B");
        assert_eq!(response.form, AnswerForm::PlainAfterRefusal);
        assert_eq!(response.credential.as_deref(), Some("SO_KEY_B"));
        let sent = h.fake.requests();
        let asked: Vec<bool> = sent
            .iter()
            .map(|r| sent_schema(kind, r).is_some())
            .collect();
        // Refused with key A, plain with key A (quota), plain with key B.
        assert_eq!(asked, [true, false, false], "{}: {sent:#?}", kind.name);
    }
}
