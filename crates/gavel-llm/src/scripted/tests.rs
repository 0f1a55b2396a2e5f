//! Unit tests of the scripted provider: order, delays and cancellation, failures, the log.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use std::fs::OpenOptions;
use std::io::Write;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    script: PathBuf,
    provider: ScriptedProvider,
}

fn fixture(yaml: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.yaml");
    fs::write(&script, yaml).unwrap();
    let provider = ScriptedProvider::new(&script);
    Fixture {
        _dir: dir,
        script,
        provider,
    }
}

fn request(role: Role, seq: u32) -> Request {
    Request {
        role,
        prompt: "write the plan please".into(),
        seq,
        step_id: "step".into(),
        max_output_tokens: crate::DEFAULT_MAX_OUTPUT_TOKENS,
        profile: crate::AgentProfile::text_only(),
        output_schema: None,
    }
}

fn call(f: &Fixture, role: Role, seq: u32) -> Result<Response, ProviderError> {
    f.provider
        .complete(&request(role, seq), &Call::new(&|| false))
}

fn events(f: &Fixture) -> Vec<(Role, u32, CallEvent)> {
    read_call_log(&f.script)
        .unwrap()
        .into_iter()
        .map(|e| (e.role, e.seq, e.event))
        .collect()
}

const TWO_EACH: &str = "\
drafter:
  - text: |
      # First draft
      body
  - text: second draft
reviewer:
  - text: looks good
  - text: ship it
";

#[test]
fn answers_follow_seq_per_role_not_call_order() {
    let f = fixture(TWO_EACH);
    assert_eq!(call(&f, Role::REVIEWER, 1).unwrap().text, "ship it");
    assert_eq!(call(&f, Role::DRAFTER, 1).unwrap().text, "second draft");
    assert_eq!(
        call(&f, Role::DRAFTER, 0).unwrap().text,
        "# First draft\nbody\n"
    );
    assert_eq!(call(&f, Role::REVIEWER, 0).unwrap().text, "looks good");
    // Asking again for the same seq gives the same answer.
    assert_eq!(call(&f, Role::DRAFTER, 1).unwrap().text, "second draft");
}

#[test]
fn response_reports_provider_model_and_approximate_tokens() {
    let f = fixture(TWO_EACH);
    let response = call(&f, Role::DRAFTER, 0).unwrap();
    assert_eq!(
        response,
        Response {
            text: "# First draft\nbody\n".into(),
            provider: "scripted".into(),
            model: "scripted".into(),
            requested_model: "scripted".into(),
            input_tokens: Some(4),
            output_tokens: Some(4),
            cached_tokens: None,
            cost_usd: None,
            raw: "# First draft\nbody\n".into(),
            attempts: 1,
            credential: None,
            quota_exhausted: Vec::new(),
            tool_uses: Vec::new(),
            ended_with: None,
            form: crate::AnswerForm::Plain,
        }
    );
    let f = fixture("model: scripted-model-1\nreviewer:\n  - text: ok\n");
    assert_eq!(
        call(&f, Role::REVIEWER, 0).unwrap().model,
        "scripted-model-1"
    );
}

#[test]
fn exhausted_script_is_a_permanent_error_naming_the_counts() {
    let f = fixture(TWO_EACH);
    let err = call(&f, Role::DRAFTER, 2).unwrap_err();
    let ProviderError::Permanent { message, hint, .. } = &err else {
        panic!("expected Permanent, got {err:?}");
    };
    assert_eq!(
        message,
        "script has only 2 drafter responses; call #3 asked for more"
    );
    assert!(hint.as_deref().unwrap().contains("script.yaml"));
    let f = fixture("drafter:\n  - text: x\n");
    let err = call(&f, Role::REVIEWER, 0).unwrap_err();
    assert!(
        err.to_string()
            .contains("script has only 0 reviewer responses; call #1 asked for more"),
        "{err}"
    );
}

#[test]
fn fail_times_fails_that_many_attempts_then_answers() {
    let f = fixture("drafter:\n  - fail: 503 overloaded\n    fail_times: 2\n    text: finally\n");
    for _ in 0..2 {
        let err = call(&f, Role::DRAFTER, 0).unwrap_err();
        assert!(err.is_transient(), "{err:?}");
        assert_eq!(
            err.to_string(),
            "scripted call failed (transient): 503 overloaded"
        );
    }
    assert_eq!(call(&f, Role::DRAFTER, 0).unwrap().text, "finally");
    assert_eq!(call(&f, Role::DRAFTER, 0).unwrap().text, "finally");
}

#[test]
fn fail_times_counts_failures_of_the_same_role_and_seq_only() {
    let f = fixture(
        "drafter:\n  - fail: boom\n    fail_times: 1\n    text: d0\n\
             reviewer:\n  - fail: boom\n    fail_times: 1\n    text: r0\n",
    );
    assert!(call(&f, Role::DRAFTER, 0).is_err());
    // The drafter's failure does not use up the reviewer's.
    assert!(call(&f, Role::REVIEWER, 0).is_err());
    assert_eq!(call(&f, Role::REVIEWER, 0).unwrap().text, "r0");
    assert_eq!(call(&f, Role::DRAFTER, 0).unwrap().text, "d0");
}

#[test]
fn fail_without_fail_times_fails_every_attempt() {
    let f = fixture("drafter:\n  - fail: 503 overloaded\n");
    for _ in 0..3 {
        assert!(call(&f, Role::DRAFTER, 0).unwrap_err().is_transient());
    }
}

#[test]
fn permanent_failure_is_permanent() {
    let f = fixture("drafter:\n  - fail: 401 invalid api key\n    permanent: true\n");
    let err = call(&f, Role::DRAFTER, 0).unwrap_err();
    let ProviderError::Permanent {
        provider, message, ..
    } = &err
    else {
        panic!("expected Permanent, got {err:?}");
    };
    assert_eq!(provider, "scripted");
    assert_eq!(message, "401 invalid api key");
    assert_eq!(err.to_string(), "scripted call failed: 401 invalid api key");
}

#[test]
fn delay_waits_before_answering() {
    let f = fixture("drafter:\n  - text: slow\n    delay_ms: 100\n");
    let started = Instant::now();
    assert_eq!(call(&f, Role::DRAFTER, 0).unwrap().text, "slow");
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[test]
fn cancel_during_delay_returns_promptly_and_logs_no_finish() {
    let f = fixture("drafter:\n  - text: slow\n    delay_ms: 10000\n");
    let flag = Arc::new(AtomicBool::new(false));
    let setter = {
        let flag = Arc::clone(&flag);
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let started = Instant::now();
    let result = f.provider.complete(
        &request(Role::DRAFTER, 0),
        &Call::new(&|| flag.load(Ordering::SeqCst)),
    );
    setter.join().unwrap();
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(events(&f), vec![(Role::DRAFTER, 0, CallEvent::Start)]);
}

#[test]
fn already_cancelled_call_does_not_start() {
    let f = fixture(TWO_EACH);
    let result = f
        .provider
        .complete(&request(Role::DRAFTER, 0), &Call::new(&|| true));
    assert!(matches!(result, Err(ProviderError::Cancelled)));
    assert!(events(&f).is_empty());
}

#[test]
fn call_log_records_start_then_finish_or_fail() {
    let f = fixture(
        "drafter:\n  - text: a\n  - fail: x\n    fail_times: 1\n    text: b\nreviewer:\n  - text: r\n",
    );
    assert_eq!(
        call_log_path(&f.script),
        f.script.with_file_name("script.yaml.calls.jsonl")
    );
    call(&f, Role::DRAFTER, 0).unwrap();
    call(&f, Role::DRAFTER, 1).unwrap_err();
    call(&f, Role::DRAFTER, 1).unwrap();
    call(&f, Role::REVIEWER, 0).unwrap();
    use CallEvent::{Fail, Finish, Start};
    let (d, r) = (Role::DRAFTER, Role::REVIEWER);
    assert_eq!(
        events(&f),
        vec![
            (d, 0, Start),
            (d, 0, Finish),
            (d, 1, Start),
            (d, 1, Fail),
            (d, 1, Start),
            (d, 1, Finish),
            (r, 0, Start),
            (r, 0, Finish),
        ]
    );
    let raw = fs::read_to_string(call_log_path(&f.script)).unwrap();
    let first = raw.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            r#"{{"role":"drafter","seq":0,"event":"start","pid":{}}}"#,
            std::process::id()
        )
    );
    assert!(raw.ends_with('\n'));
}

#[test]
fn missing_call_log_reads_as_no_calls() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        read_call_log(&dir.path().join("none.yaml"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn corrupt_call_log_names_file_and_line() {
    let f = fixture(TWO_EACH);
    call(&f, Role::DRAFTER, 0).unwrap();
    let log = call_log_path(&f.script);
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(b"not json\n").unwrap();
    let err = read_call_log(&f.script).unwrap_err();
    assert!(
        matches!(err, CallLogError::Parse { line: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("script.yaml.calls.jsonl"));
}

#[test]
fn unknown_yaml_key_is_an_error_naming_file_and_key() {
    for yaml in [
        "drafter:\n  - text: a\n    delay: 5\n",
        "drafters:\n  - text: a\n",
    ] {
        let f = fixture(yaml);
        let err = f.provider.preflight().unwrap_err();
        let message = err.to_string();
        assert!(message.contains("script.yaml"), "{message}");
        let key = if yaml.starts_with("drafters") {
            "drafters"
        } else {
            "delay"
        };
        assert!(message.contains(key), "{message}");
        // Calls fail the same way, and before anything is logged.
        assert!(matches!(
            call(&f, Role::DRAFTER, 0),
            Err(ProviderError::Permanent { .. })
        ));
        assert!(events(&f).is_empty());
    }
}

#[test]
fn preflight_reports_missing_script() {
    let dir = tempfile::tempdir().unwrap();
    let provider = ScriptedProvider::new(dir.path().join("absent.yaml"));
    let err = provider.preflight().unwrap_err();
    let ProviderError::Permanent { message, hint, .. } = &err else {
        panic!("expected Permanent, got {err:?}");
    };
    assert!(message.contains("cannot read script"), "{message}");
    assert!(message.contains("absent.yaml"), "{message}");
    assert!(hint.as_deref().unwrap().contains("absent.yaml"));
}

#[test]
fn preflight_accepts_valid_script() {
    fixture(TWO_EACH).provider.preflight().unwrap();
}

#[test]
fn contradictory_entries_are_rejected() {
    for (yaml, expected) in [
        ("drafter:\n  - delay_ms: 5\n", "neither `text` nor `fail`"),
        (
            "drafter:\n  - text: a\n    fail_times: 1\n",
            "`fail_times` without `fail`",
        ),
        (
            "drafter:\n  - fail: x\n    fail_times: 1\n",
            "no `text` to answer",
        ),
        (
            "drafter:\n  - fail: x\n    text: never\n",
            "its `text` is never used",
        ),
        (
            "reviewer:\n  - text: a\n    permanent: true\n",
            "`permanent` without `fail`",
        ),
    ] {
        let err = fixture(yaml).provider.preflight().unwrap_err();
        let message = err.to_string();
        assert!(message.contains(expected), "{yaml}: {message}");
        assert!(message.contains("script.yaml"), "{message}");
    }
}

#[test]
fn describe_names_the_script() {
    let provider = ScriptedProvider::new("demo.yaml");
    assert_eq!(provider.describe(), "scripted:demo.yaml");
    assert_eq!(provider.path(), Path::new("demo.yaml"));
}

#[test]
fn roles_are_open_names_and_the_old_keys_are_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.yaml");
    fs::write(
        &script,
        "model: m\nroles:\n  planner:\n    - text: plan\n  challenger:\n    - text: no\nreviewer:\n  - text: ok\n",
    )
    .unwrap();
    let p = ScriptedProvider::new(script.clone());
    let ask = |role: Role| {
        p.complete(
            &Request {
                role,
                prompt: "p".into(),
                seq: 0,
                step_id: "0:n:call".into(),
                max_output_tokens: 100,
                profile: crate::AgentProfile::text_only(),
                output_schema: None,
            },
            &Call {
                cancelled: &|| false,
                progress: &|_| {},
            },
        )
        .map(|r| r.text)
    };
    assert_eq!(ask(Role::named("planner")).unwrap(), "plan");
    assert_eq!(ask(Role::named("challenger")).unwrap(), "no");
    assert_eq!(ask(Role::REVIEWER).unwrap(), "ok");
    assert!(
        ask(Role::named("implementer")).is_err(),
        "no answers for that role"
    );
    assert_eq!(Role::named("planner"), Role::named("planner"), "interned");
    fs::write(
        &script,
        "roles:\n  drafter:\n    - text: a\ndrafter:\n  - text: b\n",
    )
    .unwrap();
    let e = ask(Role::DRAFTER).unwrap_err().to_string();
    assert!(e.contains("both at the top level and under `roles`"), "{e}");
}

#[test]
fn an_entry_reports_the_form_it_names_only_when_a_schema_was_asked() {
    let f = fixture(
        "reviewer:\n  - text: '{\"verdict\":\"APPROVED\",\"findings\":[]}'\n    form: schema\n  \
         - text: 'VERDICT: APPROVED'\n    form: plain_after_refusal\n  - text: 'VERDICT: REVISE'\n",
    );
    let with_schema = |seq| {
        let req = Request {
            output_schema: Some(crate::OutputSchema {
                name: "gavel_verdict".into(),
                schema: serde_json::json!({"type": "object"}),
            }),
            ..request(Role::REVIEWER, seq)
        };
        f.provider.complete(&req, &Call::new(&|| false)).unwrap()
    };
    assert_eq!(with_schema(0).form, AnswerForm::Schema);
    assert_eq!(with_schema(1).form, AnswerForm::PlainAfterRefusal);
    assert_eq!(with_schema(2).form, AnswerForm::Plain, "the default");
    // Without a schema nothing was asked for, whatever the entry says.
    assert_eq!(call(&f, Role::REVIEWER, 0).unwrap().form, AnswerForm::Plain);
    let bad = fixture("reviewer:\n  - text: x\n    form: json\n");
    let err = bad.provider.preflight().unwrap_err();
    assert!(err.to_string().contains("script"), "{err}");
}
