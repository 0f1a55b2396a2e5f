//! Unit tests of the tool handlers: what each writes, what each refuses, and that REVIEW.md
//! reads back to the review that was submitted.

use std::fs;
use std::path::Path;

use rmcp::handler::server::tool::parse_json_object;
use serde_json::{Value, json};

use crate::change::open_tasks;
use crate::{
    Challenge, ChallengeVerdict, GavelMcp, Journal, McpError, Review, ReviewVerdict, ServerConfig,
    Severity, read_review,
};

fn server(dir: &Path) -> GavelMcp {
    GavelMcp::new(ServerConfig {
        change_dir: dir.to_owned(),
        change_id: "add-login".into(),
        journal: None,
        tools: None,
    })
    .expect("server")
}

/// Arguments as the tool router parses them.
fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, rmcp::ErrorData> {
    match args {
        Value::Object(map) => parse_json_object(map),
        _ => panic!("arguments are an object"),
    }
}

fn full_review() -> Value {
    json!({
        "verdict": "NEEDS_FIX",
        "summary": "Login works, but one path is untested.\n\n```json\n{\"verdict\": \"APPROVED\"}\n```",
        "issues": [
            {"severity": "major", "title": "No test for lockout", "description": "The lockout\nbranch has no test.\n```\nunclosed fence",
             "file": "src/login.rs", "line": 42, "recommendation": "Add `lockout_after_three`."},
            {"severity": "info", "title": "Naming", "description": "`usr` reads badly."}
        ],
        "test_results": {"passed": 12, "failed": 0, "notes": "cargo test"},
        "next_steps": ["Add the test", "Re-run review"]
    })
}

#[test]
fn create_review_writes_review_md_that_reads_back_to_the_same_review() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let review: Review = parse(full_review()).expect("valid review");
    let text = server(tmp.path()).write_review(&review).expect("written");
    assert!(text.contains("NEEDS_FIX with 2 issue(s)"), "{text}");

    let path = tmp.path().join("REVIEW.md");
    let md = fs::read_to_string(&path).expect("REVIEW.md");
    assert!(md.starts_with("---\nchange_id: add-login\nverdict: NEEDS_FIX\nissues: 2\n"));
    assert!(
        md.contains("major: 1\n") && md.contains("info: 1\n"),
        "{md}"
    );
    assert!(md.contains("### 1. [major] No test for lockout"), "{md}");
    assert!(md.contains("File: src/login.rs:42"), "{md}");
    // The fake JSON block inside the summary does not win over the real one.
    assert_eq!(read_review(&path).expect("parses back"), review);
}

#[test]
fn a_minimal_review_round_trips() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let review: Review =
        parse(json!({"verdict": "APPROVED", "summary": "", "issues": []})).expect("valid");
    server(tmp.path()).write_review(&review).expect("written");
    let back = read_review(&tmp.path().join("REVIEW.md")).expect("parses back");
    assert_eq!(back, review);
    assert_eq!(back.verdict, ReviewVerdict::Approved);
}

#[test]
fn invalid_review_arguments_are_refused() {
    let mut bad_verdict = full_review();
    bad_verdict["verdict"] = json!("LGTM");
    let mut bad_severity = full_review();
    bad_severity["issues"][0]["severity"] = json!("blocker");
    let mut no_summary = full_review();
    no_summary
        .as_object_mut()
        .expect("object")
        .remove("summary");
    let mut no_title = full_review();
    no_title["issues"][1]
        .as_object_mut()
        .expect("object")
        .remove("title");
    let mut unknown = full_review();
    unknown["path"] = json!("../../etc/passwd");
    let mut negative_line = full_review();
    negative_line["issues"][0]["line"] = json!(-1);
    for (what, args) in [
        ("verdict", bad_verdict),
        ("severity", bad_severity),
        ("summary", no_summary),
        ("title", no_title),
        ("unknown field", unknown),
        ("line", negative_line),
    ] {
        assert!(parse::<Review>(args).is_err(), "{what} accepted");
    }
}

#[test]
fn the_schema_names_the_verdicts_and_required_fields() {
    let schema = serde_json::to_value(schemars::schema_for!(Review)).expect("schema");
    let text = schema.to_string();
    for word in ["APPROVED", "NEEDS_FIX", "MAJOR_ISSUES", "critical", "info"] {
        assert!(text.contains(word), "{word} missing from {text}");
    }
    assert_eq!(schema["required"], json!(["verdict", "summary", "issues"]));
}

/// Every place in `schema` where a client that does not follow references would be lost: a
/// `$ref` or `$defs`, or a property schema without a concrete `type`.
fn unresolvable(schema: &Value, at: &str, found: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        if let Value::Array(items) = schema {
            for (i, item) in items.iter().enumerate() {
                unresolvable(item, &format!("{at}[{i}]"), found);
            }
        }
        return;
    };
    for key in ["$ref", "$defs", "definitions"] {
        if map.contains_key(key) {
            found.push(format!("{at}: {key}"));
        }
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, prop) in props {
            if !prop
                .get("type")
                .is_some_and(|t| t.is_string() || t.is_array())
            {
                found.push(format!("{at}.properties.{name}: no concrete type"));
            }
        }
    }
    for (key, value) in map {
        unresolvable(value, &format!("{at}.{key}"), found);
    }
}

#[test]
fn regression_every_tool_input_schema_is_self_contained_with_concrete_types() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let schemas = server(tmp.path()).input_schemas();
    assert_eq!(schemas.len(), 3, "{schemas:?}");
    let mut found = Vec::new();
    for (name, schema) in &schemas {
        assert_eq!(schema["type"], "object", "{name}: {schema:#}");
        unresolvable(schema, name, &mut found);
    }
    assert!(found.is_empty(), "{found:#?}");
    let review = &schemas
        .iter()
        .find(|(n, _)| n == "create_review")
        .expect("create_review")
        .1;
    // MCP Inspector 0.15 sent `test_results` as a string: it could not see it is an object.
    let tests = &review["properties"]["test_results"];
    assert_eq!(tests["type"], "object", "{tests:#}");
    assert_eq!(
        tests["properties"]["passed"]["type"], "integer",
        "{tests:#}"
    );
    let issue = &review["properties"]["issues"]["items"];
    assert_eq!(
        issue["properties"]["severity"]["type"], "string",
        "{issue:#}"
    );
    assert_eq!(
        issue["properties"]["severity"]["enum"],
        json!(["critical", "major", "minor", "info"])
    );
}

#[test]
fn a_change_dir_that_is_a_symlink_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = tmp.path().join("real");
    fs::create_dir(&real).expect("dir");
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let err = GavelMcp::new(ServerConfig {
        change_dir: link,
        change_id: "add-login".into(),
        journal: None,
        tools: None,
    })
    .expect_err("symlink refused");
    assert!(matches!(err, McpError::Symlink(_)), "{err:?}");
}

#[test]
fn a_relative_change_dir_and_bad_ids_are_refused() {
    let rel = GavelMcp::new(ServerConfig {
        change_dir: "changes/x".into(),
        change_id: "x".into(),
        journal: None,
        tools: None,
    });
    assert!(matches!(rel, Err(McpError::RelativeChangeDir(_))));
    let tmp = tempfile::tempdir().expect("tempdir");
    let long = "a".repeat(65);
    for id in ["", "Add", "a/b", "../x", "a b", long.as_str()] {
        let r = GavelMcp::new(ServerConfig {
            change_dir: tmp.path().to_owned(),
            change_id: id.into(),
            journal: None,
            tools: None,
        });
        assert!(matches!(r, Err(McpError::InvalidChangeId(_))), "{id:?}");
    }
}

#[test]
fn a_review_md_that_is_a_symlink_is_not_written_through() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let change = tmp.path().join("change");
    fs::create_dir(&change).expect("dir");
    let outside = tmp.path().join("outside.md");
    fs::write(&outside, "keep me").expect("outside");
    std::os::unix::fs::symlink(&outside, change.join("REVIEW.md")).expect("symlink");
    let review: Review = parse(full_review()).expect("valid");
    let err = server(&change).write_review(&review).expect_err("refused");
    assert!(matches!(err, McpError::Symlink(_)), "{err:?}");
    assert_eq!(fs::read_to_string(&outside).expect("outside"), "keep me");
}

#[test]
fn read_review_refuses_a_front_matter_that_disagrees() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let review: Review = parse(full_review()).expect("valid");
    server(tmp.path()).write_review(&review).expect("written");
    let path = tmp.path().join("REVIEW.md");
    let md = fs::read_to_string(&path).expect("read");
    fs::write(
        &path,
        md.replacen("verdict: NEEDS_FIX", "verdict: APPROVED", 1),
    )
    .expect("edit");
    assert!(matches!(
        read_review(&path),
        Err(McpError::VerdictMismatch { .. })
    ));
    fs::write(&path, "# Review\n\nNo data.\n").expect("plain");
    assert!(matches!(
        read_review(&path),
        Err(McpError::NoReviewData { .. })
    ));
}

#[test]
fn submit_challenge_appends_to_the_proposal_and_writes_challenge_json() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let proposal = "# Proposal\n\nAdd login.";
    fs::write(tmp.path().join("proposal.md"), proposal).expect("proposal");
    let challenge: Challenge = parse(json!({
        "verdict": "NEEDS_REVISION",
        "findings": ["Spec lacks lockout.", "Tasks miss a migration\nfor users."]
    }))
    .expect("valid");
    let text = server(tmp.path())
        .write_challenge(&challenge)
        .expect("submitted");
    assert!(text.contains("NEEDS_REVISION with 2 finding(s)"), "{text}");
    let md = fs::read_to_string(tmp.path().join("proposal.md")).expect("proposal");
    assert!(md.starts_with(proposal), "{md}");
    assert!(md.contains("\n## Challenge\n\n**Verdict:** NEEDS_REVISION\n\n- Spec lacks lockout.\n- Tasks miss a migration\n  for users.\n"), "{md}");
    let json: Value =
        serde_json::from_str(&fs::read_to_string(tmp.path().join("challenge.json")).expect("json"))
            .expect("valid json");
    assert_eq!(json["verdict"], "NEEDS_REVISION");
    assert_eq!(json["change_id"], "add-login");
    assert_eq!(json["findings"][1], "Tasks miss a migration\nfor users.");
}

#[test]
fn invalid_challenges_are_refused_and_a_missing_proposal_writes_nothing() {
    for args in [
        json!({"verdict": "NEEDS_FIX", "findings": []}),
        json!({"verdict": "APPROVED"}),
        json!({"verdict": "APPROVED", "findings": "one"}),
    ] {
        assert!(parse::<Challenge>(args.clone()).is_err(), "{args} accepted");
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let challenge = Challenge {
        verdict: ChallengeVerdict::Approved,
        findings: vec![],
    };
    let err = server(tmp.path())
        .write_challenge(&challenge)
        .expect_err("no proposal");
    assert!(matches!(err, McpError::Missing("proposal.md")), "{err:?}");
    assert!(!tmp.path().join("challenge.json").exists());
}

#[test]
fn get_change_reports_phase_files_and_open_tasks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    fs::write(
        tmp.path().join("STATE.yaml"),
        "change_id: add-login\nphase: implementing\n",
    )
    .expect("state");
    fs::write(
        tmp.path().join("tasks.md"),
        "# Tasks\n\n## 1. Data\n\n- [x] 1.1 Schema\n- [ ] 1.2 Migration for `users`\n  - [ ] 1.2.1 Backfill\n",
    )
    .expect("tasks");
    fs::create_dir_all(tmp.path().join("specs/auth")).expect("specs");
    fs::write(tmp.path().join("specs/auth/spec.md"), "# Auth\n").expect("spec");
    let info = server(tmp.path()).change_info().expect("info");
    assert_eq!(info.phase.as_deref(), Some("implementing"));
    assert_eq!(info.files, ["STATE.yaml", "specs/auth/spec.md", "tasks.md"]);
    assert_eq!(
        info.open_tasks,
        ["1.2 Migration for users", "1.2.1 Backfill"]
    );
}

#[test]
fn get_change_without_state_or_tasks_has_no_phase_and_no_tasks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let info = server(tmp.path()).change_info().expect("info");
    assert_eq!(info.phase, None);
    assert!(info.files.is_empty() && info.open_tasks.is_empty());
    assert!(open_tasks("- [x] done\n").is_empty());
}

#[test]
fn the_journal_returns_a_recorded_result_by_id_and_tool_and_survives_a_torn_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let journal = Journal::new(tmp.path().join("mcp.jsonl"));
    assert_eq!(
        journal.lookup(&json!(1), "create_review").expect("read"),
        None
    );
    journal
        .record(json!(1), "create_review", json!({"content": []}))
        .expect("record");
    assert_eq!(
        journal.lookup(&json!(1), "create_review").expect("read"),
        Some(json!({"content": []}))
    );
    assert_eq!(journal.lookup(&json!(1), "get_change").expect("read"), None);
    assert_eq!(
        journal.lookup(&json!("1"), "create_review").expect("read"),
        None
    );
    // A crash mid-append leaves a torn line; the next record still lands whole.
    let mut text = fs::read_to_string(journal.path()).expect("journal");
    text.push_str("{\"id\": 2, \"to");
    fs::write(journal.path(), text).expect("torn");
    journal
        .record(json!(3), "submit_challenge", json!({"ok": true}))
        .expect("record");
    assert_eq!(
        journal.lookup(&json!(3), "submit_challenge").expect("read"),
        Some(json!({"ok": true}))
    );
}

#[test]
fn severity_and_verdict_names_match_the_wire() {
    for (s, name) in [(Severity::Critical, "critical"), (Severity::Info, "info")] {
        assert_eq!(serde_json::to_value(s).expect("json"), json!(name));
        assert_eq!(s.as_str(), name);
    }
    assert_eq!(ChallengeVerdict::NeedsRevision.as_str(), "NEEDS_REVISION");
}

#[test]
fn a_server_for_a_reviewer_serves_create_review_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let only = GavelMcp::new(ServerConfig {
        change_dir: dir.path().to_owned(),
        change_id: "add-login".into(),
        journal: None,
        tools: Some(vec!["create_review".into()]),
    })
    .expect("server");
    assert_eq!(only.tool_names(), ["create_review"]);
    assert_eq!(server(dir.path()).tool_names().len(), 3);
    let err = GavelMcp::new(ServerConfig {
        change_dir: dir.path().to_owned(),
        change_id: "add-login".into(),
        journal: None,
        tools: Some(vec!["rm_rf".into()]),
    })
    .expect_err("unknown tool");
    assert!(matches!(err, McpError::UnknownTool(t) if t == "rm_rf"));
}
