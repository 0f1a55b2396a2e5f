//! The views of a run kept in a store directly (the memory store): what no scripted brief →
//! issue run produces, such as a diff-gate decision, reaches the run page.

use gavel_core::RunStore;
use gavel_diffgate::{AuditEvent, Decision};
use gavel_report::{RunsQuery, Site, SiteMode};
use gavel_store_testkit::MemoryStore;

#[test]
fn a_journaled_diff_gate_decision_is_on_the_run_page() {
    let store = MemoryStore::default();
    let run = store
        .create_run(
            "implement",
            "dark-mode",
            b"{}",
            "N0",
            "2026-11-25T10:00:00Z",
        )
        .expect("run");
    let event = AuditEvent {
        timestamp: "2026-11-25T10:05:00Z".into(),
        decision: Decision::Approved,
        flagged_files: vec!["src/theme.rs".into(), "<script>x</script>".into()],
        files_changed: 3,
        repo: "/tmp/wt".into(),
        reason: Some("gate N7@12 of run 1".into()),
        bypass_attempted: false,
        bypass_attempts: Vec::new(),
        tree: Some("4b825dc642cb6eb9a060e54bf8d69288fbee4904".into()),
        by: Some("Ada Lovelace <ada@example.invalid>".into()),
    };
    let line = format!("{}\n", serde_json::to_string(&event).expect("line"));
    store
        .put_write(
            run,
            "12:N7_diff_gate:diff-audit",
            &serde_json::to_vec(&line).expect("journaled"),
            "2026-11-25T10:05:00Z",
        )
        .expect("journal");
    let site = Site::new(&store, SiteMode::Served);
    let page = site.run_page(run).expect("render").expect("the run");
    for needle in [
        "<td>APPROVED</td>",
        "Ada Lovelace &#60;ada@example.invalid&#62;",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "src/theme.rs",
        "&#60;script&#62;x&#60;/script&#62;",
        "gate N7@12 of run 1",
    ] {
        assert!(
            page.contains(needle),
            "the run page lacks {needle:?}: {page}"
        );
    }
    assert!(!page.contains("<script"), "{page}");
    let runs = site.runs_page(&RunsQuery::default()).expect("runs");
    assert!(runs.contains("1 run, newest first"), "{runs}");
}

#[test]
fn a_change_whose_id_cannot_name_a_page_is_shown_but_neither_linked_nor_written() {
    let store = MemoryStore::default();
    let card = |id: &str| gavel_report::ChangeCard {
        id: id.into(),
        phase: "proposed".into(),
        ..Default::default()
    };
    let read = move || vec![card("add-login"), card("../escape")];
    let site = Site::new(&store, SiteMode::Static).with_changes(&read);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("report");
    site.export(&out, None).expect("export");
    assert!(out.join("changes/add-login.html").exists());
    assert!(!dir.path().join("escape.html").exists());
    assert!(!out.join("escape.html").exists());
    let board = std::fs::read_to_string(out.join("changes.html")).expect("board");
    assert!(board.contains("href=\"changes/add-login.html\""), "{board}");
    assert!(board.contains("../escape"), "{board}");
    assert!(!board.contains("href=\"changes/../escape"), "{board}");
}

#[test]
fn more_runs_than_a_page_are_paged_when_served_and_written() {
    let store = MemoryStore::default();
    for n in 1..=51 {
        store
            .create_run(
                "issue",
                &format!("s{n}"),
                b"{}",
                "N0",
                "2026-11-25T10:00:00Z",
            )
            .expect("run");
    }
    let served = Site::new(&store, SiteMode::Served);
    let page = |site: &Site<'_>, path: &str, query: &RunsQuery| match site.route(path, query) {
        Ok(Some(gavel_report::Page::Html(h))) => h,
        other => panic!("{path}: {other:?}"),
    };
    let first = page(&served, "index.html", &RunsQuery::default());
    assert!(
        first.contains("href=\"runs/51/index.html\""),
        "newest first"
    );
    assert!(
        !first.contains("href=\"runs/1/index.html\""),
        "the oldest is on page 2"
    );
    assert!(first.contains("rel=\"next\""), "{first}");
    let second = page(
        &served,
        "index.html",
        &RunsQuery {
            page: Some(2),
            ..RunsQuery::default()
        },
    );
    assert!(second.contains("href=\"runs/1/index.html\""), "{second}");
    assert!(second.contains("rel=\"prev\""), "{second}");
    assert!(!second.contains("rel=\"next\""), "{second}");

    let dir = tempfile::tempdir().expect("tempdir");
    Site::new(&store, SiteMode::Static)
        .export(dir.path(), None)
        .expect("export");
    let index = std::fs::read_to_string(dir.path().join("index.html")).expect("index");
    assert!(index.contains("href=\"runs-page-2.html\""), "{index}");
    let older = std::fs::read_to_string(dir.path().join("runs-page-2.html")).expect("page 2");
    assert!(older.contains("href=\"runs/1/index.html\""), "{older}");
    assert!(
        older.contains("href=\"index.html\" rel=\"prev\""),
        "{older}"
    );
}

#[test]
fn a_call_recorded_again_by_a_replay_is_spent_once_at_its_last_cost() {
    use gavel_core::RunStatus;
    let call = gavel_store_testkit::conformance::model_call;
    let store = MemoryStore::default();
    let now = "2026-11-25T10:00:00Z";
    let run = store
        .create_run("issue", "s", b"{}", "N0", now)
        .expect("run");
    let events = [
        call(1, 100, "2026-11-24T10:00:00Z"),
        call(1, 300, "2026-11-25T10:00:00Z"),
        call(2, 50, "2026-11-25T11:00:00Z"),
    ];
    store
        .set_status(run, &RunStatus::Running, &events, now)
        .expect("events");
    let spend = gavel_report::view::spend_view(&store, None).expect("spend");
    assert_eq!((spend.calls, spend.total_micros), (2, 350));
    assert_eq!(spend.by_day, [("2026-11-25".to_owned(), 350)]);
}

/// A run whose lineage files are `(path, text, stored JSON kind or none)`, recorded as the
/// stored events are read back (an absent kind is an event from before kinds were recorded).
fn run_with_files(
    store: &MemoryStore,
    state: &[u8],
    files: &[(&str, &str, Option<&str>)],
) -> gavel_core::RunId {
    let now = "2026-11-25T10:00:00Z";
    let run = store
        .create_run("issue", "s", state, "N0", now)
        .expect("run");
    let events: Vec<gavel_core::Event> = files
        .iter()
        .map(|(path, text, kind)| {
            let hash = store.put_blob(text.as_bytes()).expect("blob");
            let mut json = serde_json::json!({
                "at": now, "event": "artifact", "path": path, "content": hash.to_string(),
            });
            if let Some(kind) = kind {
                json["kind"] = serde_json::Value::from(*kind);
            }
            serde_json::from_value(json).expect("an artifact event loads")
        })
        .collect();
    store
        .set_status(run, &gavel_core::RunStatus::Running, &events, now)
        .expect("events");
    run
}

#[test]
fn a_run_recorded_before_artifact_kinds_still_shows_its_verdicts_and_draft_diffs() {
    let store = MemoryStore::default();
    let l = "docs/lineage/active/s";
    let run = run_with_files(
        &store,
        br#"{"slug":"s","spent_micros":448,"budget_micros":5000}"#,
        &[
            (&format!("{l}/001-brief.md"), "# Brief\n", None),
            (&format!("{l}/002-draft.md"), "# Title\nold line\n", None),
            (
                &format!("{l}/003-verdict.md"),
                "REVISE: **no criteria**\n",
                None,
            ),
            (&format!("{l}/004-draft.md"), "# Title\nnew line\n", None),
        ],
    );
    let view = gavel_report::view::run_view(&store, run)
        .expect("read")
        .expect("the run");
    let verdicts: Vec<&str> = view.verdicts.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(verdicts, ["003-verdict.md"]);
    assert!(
        view.verdicts[0]
            .html
            .contains("<strong>no criteria</strong>")
    );
    assert_eq!(
        view.budget.as_deref().map(|b| b.ends_with("budget (8%)")),
        Some(true),
        "{:?}",
        view.budget
    );
    let second = gavel_report::view::file_view(&store, run, 3)
        .expect("read")
        .expect("the file");
    assert_eq!(
        second.previous.map(|p| p.k),
        Some(1),
        "compared with the draft before"
    );
    assert!(!second.diff.is_empty());
    let brief = gavel_report::view::file_view(&store, run, 0)
        .expect("read")
        .expect("the file");
    assert!(brief.previous.is_none() && brief.diff.is_empty());
}

#[test]
fn the_kinds_workflows_declare_decide_what_is_a_version_of_what_not_file_names() {
    let store = MemoryStore::default();
    let run = run_with_files(
        &store,
        b"{}",
        &[
            ("l/001-proposal.md", "first\n", Some("proposal")),
            ("l/002-spec-draft.md", "spec\n", Some("spec")),
            ("l/003-proposal.md", "second\n", Some("proposal")),
            // Named like a draft, declared as feedback: not a draft's version.
            ("l/004-draft.md", "feedback\n", Some("feedback")),
            ("l/005-notes.md", "approve\n", Some("verdict")),
            ("l/006-notes.md", "revise\n", Some("verdict")),
        ],
    );
    let view = gavel_report::view::run_view(&store, run)
        .expect("read")
        .expect("the run");
    let verdicts: Vec<&str> = view.verdicts.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(verdicts, ["005-notes.md", "006-notes.md"]);
    assert_eq!(view.budget, None, "no budget in the state");
    let previous = |k| {
        gavel_report::view::file_view(&store, run, k)
            .expect("read")
            .expect("the file")
            .previous
            .map(|p| p.k)
    };
    assert_eq!(
        previous(2),
        Some(0),
        "a proposal follows the proposal before"
    );
    assert_eq!(previous(1), None, "a spec is no proposal's version");
    assert_eq!(previous(3), None, "feedback has no versions");
    assert_eq!(previous(5), Some(4), "a verdict follows the verdict before");
}

/// The stores the spend and runs pages are checked on: memory, SQLite and PostgreSQL.
fn every_store(dir: &std::path::Path) -> Vec<(&'static str, Box<dyn gavel_core::Store>)> {
    let sqlite = gavel_store::SqliteStore::open(&dir.join("gavel.db")).expect("sqlite");
    let url = gavel_store_testkit::TempPostgres::shared().fresh_database();
    let postgres = gavel_store::PgStore::open(&url).expect("postgres");
    vec![
        ("memory", Box::new(MemoryStore::default())),
        ("sqlite", Box::new(sqlite)),
        ("postgres", Box::new(postgres)),
    ]
}

#[test]
fn the_spend_page_from_the_stores_totals_equals_the_one_added_up_from_every_timeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, store) in every_store(dir.path()) {
        let runs = gavel_store_testkit::conformance::record_spend_fixture(store.as_ref());
        let kept = gavel_report::view::spend_view(store.as_ref(), None).expect("totals");
        // What the page showed before the stores kept totals: every run's calls, added up
        // from their events by the ledger's rule.
        let added_up = gavel_report::view::spend_view(store.as_ref(), Some(&runs)).expect("events");
        assert_eq!(kept, added_up, "{name}");
        assert_eq!(
            (kept.runs, kept.calls, kept.unpriced, kept.total_micros),
            (5, 7, 2, 1_000_419),
            "{name}"
        );
        assert_eq!(
            kept.by_workflow,
            [
                ("change-plan".to_owned(), 1_000_000),
                ("issue".to_owned(), 350),
                ("lld".to_owned(), 69)
            ],
            "{name}"
        );
        let site = Site::new(store.as_ref(), SiteMode::Served);
        let page = site.spend_page(None).expect("the page");
        assert_eq!(
            page,
            site.spend_page(Some(&runs)).expect("the page"),
            "{name}"
        );
    }
}

#[test]
fn the_runs_page_filters_and_pages_the_same_on_every_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut pages: Vec<(&str, Vec<String>)> = Vec::new();
    for (name, store) in every_store(dir.path()) {
        for i in 0..120u32 {
            let day = 1 + i % 28;
            let at = format!("2026-{:02}-{day:02}T10:00:00Z", 1 + i % 3);
            let workflow = ["issue", "lld"][(i % 2) as usize];
            let run = store
                .create_run(workflow, &format!("s{i}"), b"{}", "N0", &at)
                .expect("run");
            if i % 3 == 0 {
                let done = gavel_core::RunStatus::Done {
                    summary: format!("filed {i}"),
                };
                store.set_status(run, &done, &[], &at).expect("done");
            }
        }
        let site = Site::new(store.as_ref(), SiteMode::Served);
        let mut shown = Vec::new();
        for q in [
            RunsQuery::default(),
            RunsQuery {
                page: Some(3),
                ..RunsQuery::default()
            },
            RunsQuery {
                status: Some("done".into()),
                since: Some("2026-02-01".into()),
                ..RunsQuery::default()
            },
            RunsQuery {
                workflow: Some("lld".into()),
                until: Some("2026-02-14".into()),
                page: Some(2),
                ..RunsQuery::default()
            },
        ] {
            let selected = q.select(store.as_ref()).expect("select");
            let expected = gavel_core::RunFilter {
                workflow: q.workflow.clone(),
                status: q.status.clone(),
                since: q.since.clone(),
                until: q.until.clone(),
            }
            .page_of(
                store.runs().expect("runs"),
                (q.page.unwrap_or(1) - 1) * gavel_report::query::PAGE_SIZE,
                gavel_report::query::PAGE_SIZE,
            );
            assert_eq!(selected.runs, expected.runs, "{name} {q:?}");
            assert_eq!(selected.matched, expected.matched, "{name} {q:?}");
            assert_eq!(selected.workflows, ["issue", "lld"], "{name}");
            shown.push(site.runs_page(&q).expect("the page"));
        }
        pages.push((name, shown));
    }
    // Every store shows the same pages (the same ids, as each numbers its runs from 1).
    let (first, reference) = &pages[0];
    for (name, shown) in &pages[1..] {
        assert_eq!(shown, reference, "{name} against {first}");
    }
}
