//! The local tracker's tests: numbering, keys, front matter, labels and reading back.

use super::*;

fn issue(key: &str) -> NewIssue {
    NewIssue {
        title: "Add \"dark\" mode".into(),
        body: "# Add dark mode\n\nbody".into(),
        labels: vec!["ui".into()],
        idempotency_key: key.into(),
        slug: "dark".into(),
        run_started_at: "2026-01-01T00:00:00Z".into(),
    }
}

#[test]
fn numbers_increase_and_keys_are_idempotent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    t.check().expect("check");
    let a = t
        .create_issue(&issue("run-1"), "2026-01-01T00:00:00Z")
        .expect("a");
    let b = t
        .create_issue(&issue("run-2"), "2026-01-01T00:00:00Z")
        .expect("b");
    let a2 = t
        .create_issue(&issue("run-1"), "2026-01-02T00:00:00Z")
        .expect("a again");
    assert_eq!((a.number, b.number), (1, 2));
    assert_eq!(
        (a2.number, &a2.url, &a2.created_at),
        (a.number, &a.url, &a.created_at)
    );
    assert!(a2.found_existing && !a.found_existing);
    let text = fs::read_to_string(dir.path().join(&a.url)).expect("issue file");
    let front: serde_json::Value =
        serde_saphyr::from_str(front_matter(&text).expect("front matter")).expect("YAML");
    assert_eq!(front["title"], "Add \"dark\" mode", "{text}");
    assert_eq!(front["labels"], serde_json::json!(["ui"]));
    assert_eq!(front["gavel_key"], "run-1");
    assert!(text.ends_with("body"));
}

#[test]
fn a_gavel_key_in_the_body_is_not_the_issues_key() {
    // Regression: the key lookup matched a `gavel_key:` line anywhere in the file.
    let dir = tempfile::tempdir().expect("tempdir");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    let quoting = NewIssue {
        body: "# Quote\n\nThe old file said:\n\ngavel_key: gavel-XYZ\n".into(),
        ..issue("gavel-ABC")
    };
    let first = t
        .create_issue(&quoting, "2026-01-01T00:00:00Z")
        .expect("first");
    let second = t
        .create_issue(&issue("gavel-XYZ"), "2026-01-02T00:00:00Z")
        .expect("second");
    assert_eq!((first.number, second.number), (1, 2));
    assert_eq!(second.created_at, "2026-01-02T00:00:00Z");
}

#[test]
fn a_title_that_breaks_hand_written_yaml_round_trips_and_keeps_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    let awkward = NewIssue {
        title: "Fix: \"---\" #1\n---\ngavel_key: other".into(),
        labels: vec!["a: b".into(), "yes".into()],
        ..issue("run-1")
    };
    let filed = t
        .create_issue(&awkward, "2026-01-01T00:00:00Z")
        .expect("filed");
    let text = fs::read_to_string(dir.path().join(&filed.url)).expect("issue file");
    let front: serde_json::Value =
        serde_saphyr::from_str(front_matter(&text).expect("front matter")).expect("YAML");
    assert_eq!(
        front["title"].as_str(),
        Some(awkward.title.as_str()),
        "{text}"
    );
    assert_eq!(front["labels"], serde_json::json!(["a: b", "yes"]));
    assert!(text.ends_with("body"));
    let again = t
        .create_issue(&awkward, "2026-01-02T00:00:00Z")
        .expect("again");
    assert_eq!((again.number, &again.url), (filed.number, &filed.url));
    assert!(again.found_existing);
    assert!(
        t.create_issue(&issue("other"), "now")
            .expect("other")
            .number
            == 2
    );
}

#[test]
fn an_issue_written_by_an_older_gavel_is_still_found_by_its_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let issues = dir.path().join("docs/issues");
    fs::create_dir_all(&issues).expect("mkdir");
    fs::write(
        issues.join("0007-dark.md"),
        "---\nnumber: 7\ntitle: \"Add \\\"dark\\\" mode\"\nlabels: [\"ui\"]\nstate: open\n\
         created_at: 2025-12-01T00:00:00Z\ngavel_key: run-1\n---\n\n# Add dark mode\n",
    )
    .expect("write");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    let filed = t.create_issue(&issue("run-1"), "now").expect("found");
    assert_eq!(
        (filed.number, filed.created_at.as_str()),
        (7, "2025-12-01T00:00:00Z")
    );
}

#[test]
fn missing_labels_are_created_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    assert_eq!(
        t.ensure_labels(&["a".into(), "b".into()]).expect("labels"),
        vec!["a", "b"]
    );
    assert_eq!(
        t.ensure_labels(&["b".into(), "c".into()]).expect("labels"),
        vec!["c"]
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("docs/issues/labels.txt")).expect("read"),
        "a\nb\nc\n"
    );
}

#[test]
fn the_check_writes_nothing_into_the_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("docs/issues");
    fs::create_dir_all(&folder).expect("mkdir");
    // A file made and deleted in the folder (a probe) would move its modification time.
    let past = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    fs::File::open(&folder)
        .and_then(|f| f.set_modified(past))
        .expect("set the folder's time");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    t.check().expect("check");
    let meta = fs::metadata(&folder).expect("the folder exists");
    assert_eq!(
        meta.modified().expect("mtime"),
        past,
        "the folder was written to"
    );
    assert_eq!(fs::read_dir(&folder).expect("read").count(), 0);
}

#[test]
fn a_file_where_the_folder_should_be_is_unreachable() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("docs")).expect("mkdir");
    fs::write(dir.path().join("docs/issues"), "not a folder").expect("write");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    assert!(matches!(t.check(), Err(TrackerError::Unreachable { .. })));
    assert!(t.create_issue(&issue("k"), "now").is_err());
}

#[test]
fn parallel_creates_get_distinct_numbers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let root = root.clone();
            std::thread::spawn(move || {
                LocalTracker::new(&root, Path::new("docs/issues"))
                    .create_issue(&issue(&format!("k{i}")), "now")
                    .map(|f| f.number)
            })
        })
        .collect();
    let mut numbers: Vec<u64> = handles
        .into_iter()
        .map(|h| h.join().expect("thread").expect("create"))
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=8).collect::<Vec<_>>());
}

#[test]
fn issues_are_read_back_by_number_hash_and_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    let filed = t
        .create_issue(&issue("run-1"), "2026-01-01T00:00:00Z")
        .expect("filed");
    for reference in ["1", "#1", " #1 ", filed.url.as_str(), "0001-dark.md"] {
        let got = t.get_issue(reference).expect(reference);
        assert_eq!(got.number, 1);
        assert_eq!(got.title, "Add \"dark\" mode");
        assert_eq!(got.labels, vec!["ui"]);
        assert_eq!(got.state, "open");
        assert_eq!(got.url, filed.url);
        assert_eq!(got.body, "# Add dark mode\n\nbody");
        assert!(!got.is_closed());
    }
}

#[test]
fn reading_a_missing_or_foreign_reference_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    let e = t.get_issue("3").expect_err("no folder");
    assert!(matches!(e, TrackerError::NotFound { .. }), "{e}");
    t.create_issue(&issue("run-1"), "now").expect("filed");
    let e = t.get_issue("#2").expect_err("missing");
    assert!(e.to_string().contains("no issue 2 in docs/issues"), "{e}");
    let e = t.get_issue("octo/app#1").expect_err("repo form");
    assert!(e.to_string().contains("names a repository"), "{e}");
    let e = t
        .get_issue("https://github.com/o/r/issues/1")
        .expect_err("url");
    assert!(matches!(e, TrackerError::BadReference { .. }), "{e}");
    let e = t.get_issue("banana").expect_err("junk");
    assert!(e.to_string().contains("owner/name#12"), "{e}");
}

#[test]
fn an_issue_a_person_wrote_without_front_matter_reads_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let issues = dir.path().join("docs/issues");
    fs::create_dir_all(&issues).expect("mkdir");
    fs::write(
        issues.join("0004-by-hand.md"),
        "# Written by hand\n\nText.\n",
    )
    .expect("write");
    fs::write(
        issues.join("0005-closed.md"),
        "---\nstate: closed\n---\n# Done\n",
    )
    .expect("write");
    let t = LocalTracker::new(dir.path(), Path::new("docs/issues"));
    let got = t.get_issue("4").expect("read");
    assert_eq!(
        (got.title.as_str(), got.state.as_str()),
        ("Written by hand", "open")
    );
    assert!(got.labels.is_empty());
    assert!(t.get_issue("5").expect("closed").is_closed());
}
