//! brief → issue and issue → LLD with a real model as drafter and reviewer (issue 35):
//! SmolLM2-135M-Instruct behind the OpenAI-compatible wire ([`LocalModel`]), reached through
//! `openai-compatible:MODEL@URL` exactly as a person points gavel at Ollama or llama.cpp.
//!
//! A 135M model writes poor drafts and rarely a usable verdict, so these tests assert what must
//! hold whatever it says: the run ends at a filing or at a clear stop (a gate a person must
//! answer, or the iteration cap); nothing is filed on anything but a parsed APPROVED; every
//! call's streamed usage is in the ledger, token for token what the server counted. The cap is
//! two drafts and answers are capped at a few hundred tokens, so each test makes a few answers.
//!
//! Marked `TIGHTEN` below: the assertions to add once the rest of issue 35 is merged (the
//! reviewer asking for its verdict as structured output, and the draft checks before the
//! reviewer).

use serde_json::Value;

use crate::doc_kinds::Doc;
use crate::real_model_server::{LocalModel, MODEL, describe};
use crate::util::*;

/// Points both roles at the server; two drafts at most, short answers.
pub(crate) fn configure(env: &Env, server: &LocalModel) {
    let provider = server.provider();
    env.set_roles(&provider, &provider);
    env.set_max_iterations(2);
    env.set_config_line("# max_output_tokens", "max_output_tokens = 200");
}

/// The lineage folder the run left: done when it filed, else still active.
fn lineage(env: &Env, doc: Doc) -> String {
    if env.exists(doc.done()) {
        doc.done().to_owned()
    } else {
        doc.active().to_owned()
    }
}

/// The `verdict:` line of each verdict artifact, in order.
pub(crate) fn verdicts(env: &Env, folder: &str) -> Vec<String> {
    env.ls(folder)
        .iter()
        .filter(|n| n.ends_with("-verdict.md"))
        .map(|n| {
            let text = env.read(&format!("{folder}/{n}"));
            text.lines()
                .find_map(|l| l.strip_prefix("verdict: "))
                .unwrap_or_else(|| panic!("{n} has no verdict line:\n{text}"))
                .trim_matches('"')
                .to_owned()
        })
        .collect()
}

/// What code can tell about the drafts the reviewer was given (a draft is reviewed when a
/// verdict artifact follows it): the template's `{placeholders}` left in and its `## `
/// sections missing, as `FILE: problem`.
pub(crate) fn reviewed_drafts_failing_checks(env: &Env, doc: Doc, folder: &str) -> Vec<String> {
    let template = env.read(match doc {
        Doc::Issue => "docs/templates/0101-issue-template.md",
        Doc::Lld => "docs/templates/0102-feature-lld-template.md",
    });
    let placeholders: Vec<&str> = template
        .split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(p, _)| p))
        .filter(|p| !p.is_empty() && !p.contains('\n'))
        .collect();
    let sections: Vec<&str> = template.lines().filter(|l| l.starts_with("## ")).collect();
    let names = env.ls(folder);
    let mut found = Vec::new();
    for pair in names.windows(2) {
        if !(pair[0].ends_with("-draft.md") && pair[1].ends_with("-verdict.md")) {
            continue;
        }
        let draft = env.read(&format!("{folder}/{}", pair[0]));
        for p in &placeholders {
            if draft.contains(&format!("{{{p}}}")) {
                found.push(format!("{}: placeholder {{{p}}}", pair[0]));
            }
        }
        for section in &sections {
            if !draft.lines().any(|l| l.trim_end() == *section) {
                found.push(format!("{}: no section {section:?}", pair[0]));
            }
        }
    }
    found
}

/// What must hold for a real-model run of `doc` under `--auto`, whatever the model said.
fn assert_fail_closed(doc: Doc, env: &Env, server: &LocalModel, out: &std::process::Output) {
    let folder = lineage(env, doc);
    let verdicts = verdicts(env, &folder);
    let context = format!(
        "{doc:?}: verdicts {verdicts:?}; reviewed drafts that fail the template checks: {:?}\n{}\n{}",
        reviewed_drafts_failing_checks(env, doc, &folder),
        show_output(out),
        describe(server)
    );
    let shown = env.show("1");
    match out.status.code() {
        // Filed: only on a parsed APPROVED, the last verdict.
        Some(0) => {
            assert_eq!(doc.results(env), 1, "{context}");
            assert_eq!(
                verdicts.last().map(String::as_str),
                Some("APPROVED"),
                "{context}"
            );
        }
        // A gate a person must answer: the verdict gate (an unparseable verdict, or one from
        // another model, waits for a person even with --auto), or, after a parsed APPROVED,
        // the filing's error gate (a draft the tracker cannot file: no `# ` title).
        Some(3) => {
            assert_eq!(doc.results(env), 0, "{context}");
            let gate = &shown["status"]["gate"]["kind"];
            assert!(gate == "verdict" || gate == "file-error", "{context}");
            if gate == "file-error" {
                assert_eq!(
                    verdicts.last().map(String::as_str),
                    Some("APPROVED"),
                    "{context}"
                );
            }
            assert!(stderr(out).contains("--choice"), "{context}");
        }
        // The iteration cap: halted, saying so.
        Some(4) => {
            assert_eq!(doc.results(env), 0, "{context}");
            assert_eq!(env.runs()[0]["status"], "halted", "{context}");
            assert!(stderr(out).contains("max iterations reached"), "{context}");
        }
        _ => panic!("neither a filing nor a clear stop:\n{context}"),
    }
    // A verdict that could not be parsed never let the run go on without a person: only the
    // last verdict may be one.
    let earlier = &verdicts[..verdicts.len().saturating_sub(1)];
    assert!(
        earlier.iter().all(|v| !v.starts_with("UNPARSEABLE")),
        "{verdicts:?}\n{context}"
    );

    assert!(
        model_calls(env).len() >= 2,
        "a draft and its review, or two drafts, at least: {context}"
    );
    assert_usage_in_ledger(env, server, &context);
    assert_structured_verdicts_parse(env, server, &verdicts, &context);
    // A draft that gavel's own checks flagged (a `-checks.md` artifact follows it) went to no
    // reviewer: no verdict follows its checks.
    let names = env.ls(&folder);
    assert!(
        names
            .windows(2)
            .all(|p| !(p[0].ends_with("-checks.md") && p[1].ends_with("-verdict.md"))),
        "{names:?}\n{context}"
    );

    // A draft with the template's placeholders left, or its sections missing, never reaches
    // the reviewer: gavel's own checks send it back first.
    assert_eq!(
        reviewed_drafts_failing_checks(env, doc, &folder),
        Vec::<String>::new(),
        "{context}"
    );
}

#[test]
fn brief_to_issue_with_a_real_local_model_files_only_on_a_parsed_approval() {
    let server = LocalModel::start();
    let env = Env::new();
    configure(&env, &server);
    let out = Doc::Issue.start(&env, &["--auto"]);
    assert_fail_closed(Doc::Issue, &env, &server, &out);
}

#[test]
fn issue_to_lld_with_a_real_local_model_approves_only_on_a_parsed_approval() {
    let server = LocalModel::start();
    let env = Env::new();
    configure(&env, &server);
    let out = Doc::Lld.start(&env, &["--auto"]);
    assert_fail_closed(Doc::Lld, &env, &server, &out);
}

/// Run 1's calls to the local model (not a scripted role's), from its ledger.
fn model_calls(env: &Env) -> Vec<Value> {
    let shown = env.show("1");
    shown["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter(|c| c["provider"] == "openai-compatible")
        .cloned()
        .collect()
}

/// Every call of run 1 to the local model is in the ledger with the usage the server streamed
/// for it, call for call (the server answers one request at a time, in order; refused
/// requests bill nothing).
pub(crate) fn assert_usage_in_ledger(env: &Env, server: &LocalModel, context: &str) {
    let calls = model_calls(env);
    let answered: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|r| r["status"] == 200)
        .collect();
    assert!(!calls.is_empty(), "{context}");
    assert_eq!(calls.len(), answered.len(), "{context}");
    for (call, request) in calls.iter().zip(&answered) {
        assert_eq!(call["provider"], "openai-compatible", "{call}");
        assert_eq!(call["model"], MODEL, "{call}");
        assert_eq!(call["requested_model"], MODEL, "{call}");
        let (input, output) = (
            call["input_tokens"].as_u64(),
            call["output_tokens"].as_u64(),
        );
        assert!(input.is_some_and(|n| n > 0), "{call}");
        assert!(output.is_some_and(|n| (1..=200).contains(&n)), "{call}");
        assert_eq!(input, request["usage"]["prompt_tokens"].as_u64(), "{call}");
        assert_eq!(
            output,
            request["usage"]["completion_tokens"].as_u64(),
            "{call}"
        );
    }
    assert!(
        answered.iter().all(|r| r["stream"] == true),
        "gavel streams every call: {context}"
    );
}

/// The server's answered requests made for `role`, in order (see [`assert_usage_in_ledger`]
/// for why the ledger and the log line up).
pub(crate) fn requests_for(env: &Env, server: &LocalModel, role: &str) -> Vec<Value> {
    let calls = model_calls(env);
    let answered = server.requests().into_iter().filter(|r| r["status"] == 200);
    calls
        .iter()
        .zip(answered)
        .filter(|(c, _)| c["role"] == role)
        .map(|(_, r)| r)
        .collect()
}

/// A verdict the server was asked to give as the verdict's JSON (`response_format`
/// json_schema, enforced by its grammar) and that it finished (not cut by the token cap) is a
/// parsed verdict: the parser judges it like a fenced block, and it is well-formed.
pub(crate) fn assert_structured_verdicts_parse(
    env: &Env,
    server: &LocalModel,
    verdicts: &[String],
    context: &str,
) {
    let reviews = requests_for(env, server, "reviewer");
    assert_eq!(
        reviews.len(),
        verdicts.len(),
        "a verdict per review: {context}"
    );
    for (request, verdict) in reviews.iter().zip(verdicts) {
        if request["response_format"] == "json_schema" && request["finish_reason"] == "stop" {
            assert!(!verdict.starts_with("UNPARSEABLE"), "{verdict}\n{context}");
        }
    }
    // Every review was asked as the verdict's JSON (unless the server refused it), and the
    // ledger says so.
    let forms: Vec<Value> = model_calls(env)
        .iter()
        .filter(|c| c["role"] == "reviewer")
        .map(|c| c["form"].clone())
        .collect();
    for (request, form) in reviews.iter().zip(&forms) {
        match request["response_format"].as_str() {
            Some("json_schema") => assert_eq!(form, "schema", "{context}"),
            _ => assert!(
                form == "plain_after_refusal" || form == "plain",
                "{form}: {context}"
            ),
        }
    }
}
