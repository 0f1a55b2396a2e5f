//! The audit trail: one JSON object per line, appended, with the fields LLD #171 requires
//! (timestamp, decision, flagged files).

use gavel_diffgate::{AuditEvent, DEFAULT_AUDIT_LOG, Decision, append_audit};

fn event(decision: Decision, reason: Option<&str>) -> AuditEvent {
    AuditEvent {
        timestamp: "2026-11-22T10:00:00Z".to_owned(),
        decision,
        flagged_files: vec!["src/state.py".to_owned(), "old.rs -> new.rs".to_owned()],
        files_changed: 3,
        repo: "/work/repo".to_owned(),
        reason: reason.map(str::to_owned),
        bypass_attempted: false,
        bypass_attempts: Vec::new(),
        tree: None,
        by: None,
    }
}

#[test]
fn t130_audit_event_is_one_json_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs/nested/diff-gate.jsonl");
    append_audit(&path, &event(Decision::Approved, None)).unwrap();
    append_audit(
        &path,
        &event(Decision::Rejected, Some("timed out after 30 minutes")),
    )
    .unwrap();
    append_audit(&path, &event(Decision::AbortedNonInteractive, None)).unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(
        first,
        serde_json::json!({
            "timestamp": "2026-11-22T10:00:00Z",
            "decision": "APPROVED",
            "flagged_files": ["src/state.py", "old.rs -> new.rs"],
            "files_changed": 3,
            "repo": "/work/repo",
            "bypass_attempted": false,
        })
    );
    let second: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(second["decision"], "REJECTED");
    assert_eq!(second["reason"], "timed out after 30 minutes");
    let third: AuditEvent = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(third, event(Decision::AbortedNonInteractive, None));
}

#[test]
fn audit_paths_with_newlines_stay_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut e = event(Decision::Approved, None);
    e.flagged_files = vec!["new\nline.txt".to_owned()];
    append_audit(&path, &e).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn unwritable_audit_log_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    // A path under a regular file cannot be created.
    let err =
        append_audit(&file.join("audit.jsonl"), &event(Decision::Approved, None)).unwrap_err();
    assert!(
        matches!(err, gavel_diffgate::DiffGateError::WriteAudit { .. }),
        "{err:?}"
    );
}

#[test]
fn issue10_append_audit_returns_the_line_it_wrote() {
    // Regression (issue 10, defect 3): a workflow must copy its gate's record into its lineage
    // folder, so the record written to the team's log is handed back, byte for byte.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DEFAULT_AUDIT_LOG);
    let first = append_audit(&path, &event(Decision::Rejected, Some("end of input"))).unwrap();
    let second = append_audit(&path, &event(Decision::Approved, None)).unwrap();
    assert!(
        first.ends_with('\n') && first.matches('\n').count() == 1,
        "{first:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{first}{second}")
    );
    let parsed: AuditEvent = serde_json::from_str(&second).unwrap();
    assert_eq!(parsed, event(Decision::Approved, None));
}

#[test]
fn the_default_audit_log_is_outside_gavels_ignored_state_folder() {
    assert!(
        !DEFAULT_AUDIT_LOG.starts_with(".gavel"),
        "{DEFAULT_AUDIT_LOG}"
    );
    assert!(std::path::Path::new(DEFAULT_AUDIT_LOG).is_relative());
}

#[test]
fn issue10_bypass_attempts_are_recorded_by_name() {
    // Regression (issue 10, defect 4): records had no bypass_attempted (seed 004).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut e = event(Decision::AbortedNonInteractive, None);
    e.bypass_attempted = true;
    e.bypass_attempts = vec!["--yes".to_owned(), "GAVEL_AUTO_APPROVE".to_owned()];
    let line = append_audit(&path, &e).unwrap();
    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(value["bypass_attempted"], true);
    assert_eq!(
        value["bypass_attempts"],
        serde_json::json!(["--yes", "GAVEL_AUTO_APPROVE"])
    );
    // A named attempt is always written as an attempt.
    e.bypass_attempted = false;
    let value: serde_json::Value = serde_json::from_str(&append_audit(&path, &e).unwrap()).unwrap();
    assert_eq!(value["bypass_attempted"], true, "{value}");
}

#[test]
fn lines_written_before_the_bypass_fields_still_parse() {
    let old = r#"{"timestamp":"2026-01-30T14:33:20Z","decision":"REJECTED","flagged_files":["a.rs"],"files_changed":1,"repo":"/r","reason":"end of input"}"#;
    let parsed: AuditEvent = serde_json::from_str(old).unwrap();
    assert!(!parsed.bypass_attempted);
    assert!(parsed.bypass_attempts.is_empty());
    assert_eq!(parsed.reason.as_deref(), Some("end of input"));
}
