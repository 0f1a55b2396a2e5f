//! The real local model as the reviewer of a draft a person completed (issue 35): a 135M model
//! rarely writes a draft that passes gavel's own checks, so under `--auto` its drafts seldom
//! reach the reviewer. Here the run pauses at the draft gate, the person writes the draft out
//! (as they would in their editor), and the model reviews it: its verdict is judged by the
//! parser and the gate recommends only what a parsed verdict says. And a server that refuses
//! structured output is asked plain once and remembered for the run, over two review rounds of
//! scripted drafts.

use std::process::Output;

use serde_json::Value;

use crate::real_model::{
    assert_structured_verdicts_parse, assert_usage_in_ledger, configure, verdicts,
};
use crate::real_model_server::{LocalModel, Options, describe};
use crate::util::*;

const ACTIVE: &str = "docs/lineage/active/dark-mode";

/// Asserts run 1 waits at the gate of `kind`, with nothing filed.
#[track_caller]
fn assert_at(env: &Env, out: &Output, kind: &str, server: &LocalModel) {
    let context = format!("{}\n{}", show_output(out), describe(server));
    assert_exit(out, 3);
    assert_eq!(env.show("1")["status"]["gate"]["kind"], kind, "{context}");
    assert!(env.issues().is_empty(), "nothing filed: {context}");
}

/// The person replaces the newest draft with a complete one (`util::draft(n)`), as they would
/// in their editor at the draft gate.
fn complete_the_draft(env: &Env, n: u32) {
    let newest = env
        .ls(ACTIVE)
        .into_iter()
        .rfind(|f| f.ends_with("-draft.md"))
        .expect("a draft");
    env.write(&format!("{ACTIVE}/{newest}"), &draft(n));
}

/// What `gavel resume 1 --choice CHOICE` printed.
fn resume(env: &Env, choice: &str) -> Output {
    env.run(&["resume", "1", "--choice", choice])
}

#[test]
fn a_draft_a_person_completed_gets_a_real_review_that_the_parser_judges() {
    let server = LocalModel::start();
    let env = Env::new();
    configure(&env, &server);
    let brief = env.brief("dark-mode");
    assert_at(&env, &env.run(&["issue", &brief]), "draft", &server);
    complete_the_draft(&env, 1);
    // Interactive: the verdict waits for the person, parsed or not.
    let out = resume(&env, "send");
    assert_at(&env, &out, "verdict", &server);
    let verdicts = verdicts(&env, ACTIVE);
    let context = format!(
        "verdicts {verdicts:?}\n{}\n{}",
        show_output(&out),
        describe(&server)
    );
    assert_eq!(verdicts.len(), 1, "{context}");
    assert_usage_in_ledger(&env, &server, &context);
    assert_structured_verdicts_parse(&env, &server, &verdicts, &context);
    // The gate recommends approving only a parsed APPROVED without findings, and nothing for a
    // verdict that could not be parsed.
    let recommended = env.show("1")["status"]["gate"]["recommended"].clone();
    match verdicts[0].as_str() {
        "APPROVED" => assert_eq!(recommended, "approve", "{context}"),
        v if v.starts_with("UNPARSEABLE") => assert!(recommended.is_null(), "{context}"),
        _ => assert_eq!(recommended, "revise", "{context}"),
    }
    // The review was asked as the verdict's JSON.
    let reviews = server.requests();
    assert_eq!(
        reviews.last().map(|r| r["response_format"].clone()),
        Some("json_schema".into()),
        "{context}"
    );
}

#[test]
fn a_server_that_refuses_structured_output_is_asked_plain_once_for_the_whole_run() {
    let server = LocalModel::start_with(Options {
        refuse_response_format: true,
    });
    let env = Env::new();
    configure(&env, &server);
    // Complete drafts from the scripted drafter, so two review rounds happen whatever the
    // model says; the real model reviews both.
    env.set_roles("scripted:script.yaml", &server.provider());
    env.script(&script(2, &[]));
    let brief = env.brief("dark-mode");
    assert_at(&env, &env.run(&["issue", &brief]), "draft", &server);
    assert_at(&env, &resume(&env, "send"), "verdict", &server);
    assert_at(&env, &resume(&env, "revise"), "draft", &server);
    let out = resume(&env, "send");
    assert_at(&env, &out, "verdict", &server);
    let verdicts = verdicts(&env, ACTIVE);
    let context = format!(
        "verdicts {verdicts:?}\n{}\n{}",
        show_output(&out),
        describe(&server)
    );
    assert_eq!(verdicts.len(), 2, "{context}");
    assert_usage_in_ledger(&env, &server, &context);
    // A refusal is never a failed call: the refused request is asked again at once, plain,
    // and gavel remembers it for the run, so the server refuses once at most and no later
    // request asks for structured output again.
    let log = server.requests();
    assert_eq!(
        log.iter().filter(|r| r["status"] == 200).count(),
        2,
        "{context}"
    );
    let refused: Vec<usize> = (0..log.len())
        .filter(|&i| log[i]["status"] == 400)
        .collect();
    assert!(refused.len() <= 1, "{context}");
    if let Some(&first) = refused.first() {
        assert_eq!(log[first]["response_format"], "json_schema", "{context}");
        let next = log.get(first + 1).expect("the refused call is asked again");
        assert_eq!(next["status"], 200, "{context}");
        assert!(
            log[first + 1..]
                .iter()
                .all(|r| r["response_format"].is_null()),
            "{context}"
        );
    }
    // Exactly one refusal, on the first review; the ledger names both reviews' form as asked
    // plain after the server refused structured output (the second because it was remembered).
    assert_eq!(refused, [0], "{context}");
    let forms: Vec<Value> = env.show("1")["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter(|c| c["role"] == "reviewer")
        .map(|c| c["form"].clone())
        .collect();
    assert_eq!(
        forms,
        [
            Value::from("plain_after_refusal"),
            Value::from("plain_after_refusal")
        ],
        "{context}"
    );
}
