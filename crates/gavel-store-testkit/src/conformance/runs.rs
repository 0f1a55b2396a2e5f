//! Checks on runs and checkpoints: creation, listing, commits and their conflicts, statuses.

use gavel_core::{
    CHECKPOINT_FORMAT, Checkpoint, ContentHash, EventKind, NewBlob, RunId, RunStatus, Store,
    StoreError,
};

use super::{T0, T1, T2, checkpoint, gate, model_call, new_run, note, ok};

/// `create_run` stores the run and its initial checkpoint (seq 0, no parent, no node).
pub fn create_run_and_read_back(store: &dyn Store) {
    let id = new_run(store, "flaky-test", br#"{"n":0}"#);
    let record =
        ok("run", store.run(id)).unwrap_or_else(|| panic!("run {id} missing after create"));
    assert_eq!(record.id, id);
    assert_eq!(
        (record.workflow.as_str(), record.slug.as_str()),
        ("issue", "flaky-test")
    );
    assert_eq!(record.status, RunStatus::Running);
    assert_eq!(
        (record.created_at.as_str(), record.updated_at.as_str()),
        (T0, T0)
    );
    assert_eq!(record.head_seq, 0);

    let head = ok("head", store.head(id)).unwrap_or_else(|| panic!("run {id} has no head"));
    let expected = Checkpoint {
        run: id,
        seq: 0,
        parent: None,
        node: None,
        next: Some("start".into()),
        state: br#"{"n":0}"#.to_vec(),
        format: CHECKPOINT_FORMAT,
        created_at: T0.into(),
    };
    assert_eq!(head, expected);
    let metas = ok("checkpoints", store.checkpoints(id));
    assert_eq!(metas.len(), 1);
    assert_eq!(metas[0].state_hash, ContentHash::of(br#"{"n":0}"#));
    assert_eq!(
        (metas[0].seq, metas[0].parent, metas[0].format),
        (0, None, CHECKPOINT_FORMAT)
    );
    assert!(
        ok("events", store.events(id)).is_empty(),
        "a new run has no events"
    );
    assert_eq!(
        ok("run", store.run(RunId(id.0 + 1000))),
        None,
        "unknown run must be None"
    );
}

/// `runs` lists every run, oldest first, with distinct ids.
pub fn runs_are_listed_oldest_first(store: &dyn Store) {
    assert!(
        ok("runs", store.runs()).is_empty(),
        "a fresh store has no runs"
    );
    let ids: Vec<RunId> = ["a", "b", "c"]
        .iter()
        .map(|slug| new_run(store, slug, b"{}"))
        .collect();
    let listed = ok("runs", store.runs());
    let slugs: Vec<&str> = listed.iter().map(|r| r.slug.as_str()).collect();
    assert_eq!(slugs, ["a", "b", "c"]);
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), ids);
    assert!(ids[0] < ids[1] && ids[1] < ids[2], "ids must grow: {ids:?}");
    let recent: Vec<RunId> = ok("recent_runs", store.recent_runs(2))
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(recent, [ids[2], ids[1]], "the newest runs, newest first");
    assert_eq!(ok("recent_runs", store.recent_runs(10)).len(), 3);
}

/// `runs_with_slug` finds the runs of one name, oldest first, of one workflow or of all.
pub fn runs_are_found_by_slug(store: &dyn Store) {
    let first = new_run(store, "dark-mode", b"{}");
    new_run(store, "other", b"{}");
    let lld = ok(
        "create_run",
        store.create_run("lld", "dark-mode", b"{}", "start", T0),
    );
    let second = new_run(store, "dark-mode", b"{}");
    let ids = |slug: &str, workflow: Option<&str>| -> Vec<RunId> {
        ok("runs_with_slug", store.runs_with_slug(slug, workflow))
            .iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids("dark-mode", Some("issue")), [first, second]);
    assert_eq!(ids("dark-mode", None), [first, lld, second]);
    assert_eq!(ids("dark-mode", Some("lld")), [lld]);
    assert!(ids("dark", None).is_empty(), "a slug is matched whole");
    assert!(ids("missing", Some("issue")).is_empty());
}

/// A commit stores the checkpoint with its parent link and format, its status and events, and
/// moves the head.
pub fn commit_advances_the_head(store: &dyn Store) {
    let id = new_run(store, "s", b"s0");
    let cp1 = checkpoint(id, 1, "start", Some("draft"), b"s1", T1);
    ok(
        "commit 1",
        store.commit(&cp1, &[note("one")], &RunStatus::Running),
    );
    assert_eq!(ok("head", store.head(id)), Some(cp1.clone()));
    let cp2 = checkpoint(id, 2, "draft", None, b"s2", T2);
    let done = RunStatus::Done {
        summary: "filed #12".into(),
    };
    ok("commit 2", store.commit(&cp2, &[], &done));
    assert_eq!(ok("head", store.head(id)), Some(cp2));

    let record = ok("run", store.run(id)).unwrap_or_else(|| panic!("run {id} missing"));
    assert_eq!(
        (record.head_seq, &record.status, record.updated_at.as_str()),
        (2, &done, T2)
    );
    assert_eq!(record.created_at, T0, "created_at never changes");

    let metas = ok("checkpoints", store.checkpoints(id));
    let links: Vec<(u64, Option<u64>)> = metas.iter().map(|m| (m.seq, m.parent)).collect();
    assert_eq!(links, [(0, None), (1, Some(0)), (2, Some(1))]);
    let nodes: Vec<(Option<&str>, Option<&str>)> = metas
        .iter()
        .map(|m| (m.node.as_deref(), m.next.as_deref()))
        .collect();
    assert_eq!(
        nodes,
        [
            (None, Some("start")),
            (Some("start"), Some("draft")),
            (Some("draft"), None)
        ]
    );
    assert!(
        metas.iter().all(|m| m.format == CHECKPOINT_FORMAT),
        "format is stored: {metas:?}"
    );
    assert_eq!(metas[1].created_at, T1);
    assert_eq!(
        ok("get_blob", store.get_blob(&metas[1].state_hash)),
        Some(b"s1".to_vec())
    );
    assert_eq!(ok("events", store.events(id)), [note("one")]);
}

/// A commit with blobs stores them with the checkpoint, shared content included, and a
/// refused one stores none of them.
pub fn a_commit_stores_its_blobs_or_nothing(store: &dyn Store) {
    let id = new_run(store, "s", b"s0");
    let draft: Vec<u8> = (0..2000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
    let mut prompt = b"Review this draft:\n".to_vec();
    prompt.extend_from_slice(&draft);
    let draft_hash = ContentHash::of(&draft);
    let blobs = [
        NewBlob {
            bytes: &draft,
            similar: &[],
        },
        NewBlob {
            bytes: &prompt,
            similar: std::slice::from_ref(&draft_hash),
        },
    ];
    let cp1 = checkpoint(id, 1, "draft", Some("review"), b"s1", T1);
    ok(
        "commit_with_blobs",
        store.commit_with_blobs(&cp1, &[note("one")], &RunStatus::Running, &blobs),
    );
    assert_eq!(ok("head", store.head(id)), Some(cp1));
    for bytes in [&draft, &prompt] {
        assert_eq!(
            ok("get_blob", store.get_blob(&ContentHash::of(bytes))).as_ref(),
            Some(bytes)
        );
    }
    let stale = checkpoint(id, 1, "draft", Some("review"), b"other", T2);
    let lost = b"only in a refused commit".to_vec();
    let refused = store.commit_with_blobs(
        &stale,
        &[],
        &RunStatus::Running,
        &[NewBlob {
            bytes: &lost,
            similar: &[],
        }],
    );
    assert!(
        matches!(refused, Err(StoreError::Conflict { .. })),
        "{refused:?}"
    );
    assert_eq!(
        ok("get_blob", store.get_blob(&ContentHash::of(&lost))),
        None,
        "a refused commit stores none of its blobs"
    );
}

/// A commit that does not follow the head is refused and leaves nothing behind: no checkpoint,
/// no events, no status change.
pub fn commit_rejects_a_stale_or_wrong_checkpoint(store: &dyn Store) {
    let id = new_run(store, "s", b"s0");
    ok(
        "commit 1",
        store.commit(
            &checkpoint(id, 1, "a", Some("b"), b"s1", T1),
            &[],
            &RunStatus::Running,
        ),
    );
    let halted = RunStatus::Halted {
        reason: "should not be stored".into(),
    };
    let stray = [note("must not appear")];

    let replay = checkpoint(id, 1, "a", Some("b"), b"other", T2);
    match store.commit(&replay, &stray, &halted) {
        Err(StoreError::Conflict {
            run,
            expected: 2,
            got: 1,
        }) if run == id => {}
        other => panic!("re-committing seq 1 must conflict, got {other:?}"),
    }
    let skip = checkpoint(id, 3, "a", Some("b"), b"other", T2);
    match store.commit(&skip, &stray, &halted) {
        Err(StoreError::Conflict {
            expected: 2,
            got: 3,
            ..
        }) => {}
        other => panic!("skipping to seq 3 must conflict, got {other:?}"),
    }
    let wrong_parent = Checkpoint {
        parent: Some(0),
        ..checkpoint(id, 2, "a", Some("b"), b"other", T2)
    };
    match store.commit(&wrong_parent, &stray, &halted) {
        Err(StoreError::Conflict {
            expected: 1,
            got: 0,
            ..
        }) => {}
        other => panic!("a parent other than the head must conflict, got {other:?}"),
    }
    let orphan = Checkpoint {
        parent: None,
        ..checkpoint(id, 2, "a", Some("b"), b"other", T2)
    };
    assert!(
        store.commit(&orphan, &stray, &halted).is_err(),
        "a checkpoint without a parent is refused"
    );
    let newer = Checkpoint {
        format: CHECKPOINT_FORMAT + 1,
        ..checkpoint(id, 2, "a", Some("b"), b"other", T2)
    };
    match store.commit(&newer, &stray, &halted) {
        Err(StoreError::NewerFormat { found, supported }) => {
            assert_eq!(
                (found, supported),
                (CHECKPOINT_FORMAT + 1, CHECKPOINT_FORMAT)
            );
        }
        other => panic!("a newer checkpoint format must be refused, got {other:?}"),
    }

    let record = ok("run", store.run(id)).unwrap_or_else(|| panic!("run {id} missing"));
    assert_eq!(
        (record.head_seq, &record.status, record.updated_at.as_str()),
        (1, &RunStatus::Running, T1)
    );
    assert_eq!(ok("checkpoints", store.checkpoints(id)).len(), 2);
    assert_eq!(
        ok("head", store.head(id)).map(|cp| cp.state),
        Some(b"s1".to_vec())
    );
    assert!(
        ok("events", store.events(id)).is_empty(),
        "events of a refused commit must not be stored"
    );
}

/// Each run numbers its own checkpoints from 0.
pub fn runs_have_independent_sequences(store: &dyn Store) {
    let a = new_run(store, "a", b"a0");
    let b = new_run(store, "b", b"b0");
    ok(
        "commit a1",
        store.commit(
            &checkpoint(a, 1, "n", Some("n"), b"a1", T1),
            &[],
            &RunStatus::Running,
        ),
    );
    ok(
        "commit b1",
        store.commit(
            &checkpoint(b, 1, "n", Some("n"), b"b1", T1),
            &[],
            &RunStatus::Running,
        ),
    );
    ok(
        "commit a2",
        store.commit(
            &checkpoint(a, 2, "n", Some("n"), b"a2", T2),
            &[],
            &RunStatus::Running,
        ),
    );
    assert_eq!(
        ok("head a", store.head(a)).map(|cp| (cp.seq, cp.state)),
        Some((2, b"a2".to_vec()))
    );
    assert_eq!(
        ok("head b", store.head(b)).map(|cp| (cp.seq, cp.state)),
        Some((1, b"b1".to_vec()))
    );
}

/// Every status survives `set_status` and `commit` unchanged.
pub fn every_status_round_trips(store: &dyn Store) {
    let statuses = [
        RunStatus::Running,
        RunStatus::Waiting { gate: gate() },
        RunStatus::Halted {
            reason: "iteration cap (3) reached".into(),
        },
        RunStatus::Failed {
            error: "pre-flight: `gh` is not logged in".into(),
        },
        RunStatus::Done {
            summary: "filed https://example.invalid/issues/12".into(),
        },
        RunStatus::Aborted {
            reason: "not worth it \u{2014} \"quotes\" and\nnewlines".into(),
        },
    ];
    let id = new_run(store, "s", b"s0");
    for (i, status) in statuses.iter().enumerate() {
        let now = format!("2026-02-01T00:00:{i:02}Z");
        ok("set_status", store.set_status(id, status, &[], &now));
        let record = ok("run", store.run(id)).unwrap_or_else(|| panic!("run {id} missing"));
        assert_eq!(&record.status, status);
        assert_eq!(record.updated_at, now);
    }
    for (seq, status) in (1..).zip(&statuses) {
        ok(
            "commit",
            store.commit(&checkpoint(id, seq, "n", Some("n"), b"s", T1), &[], status),
        );
        let listed = ok("runs", store.runs());
        assert_eq!(listed.first().map(|r| &r.status), Some(status));
    }
}

/// Claiming a slug: refused while an unfinished run of the same workflow uses it (naming that
/// run, creating nothing), allowed again once that run is done or aborted, and for another
/// workflow at any time.
pub fn a_claimed_slug_is_refused_while_its_run_is_unfinished(store: &dyn Store) {
    let claim =
        |workflow: &str| store.create_run_claiming_slug(workflow, "dup", b"{}", "start", T0);
    let first = ok("first claim", claim("issue"));
    for status in [
        RunStatus::Running,
        RunStatus::Halted {
            reason: "cap".into(),
        },
        RunStatus::Failed {
            error: "boom".into(),
        },
    ] {
        ok("set_status", store.set_status(first, &status, &[], T1));
        match claim("issue") {
            Err(StoreError::SlugTaken { slug, run }) => {
                assert_eq!((slug.as_str(), run), ("dup", first));
            }
            other => {
                panic!("a second claim while run {first} is {status:?} must fail, got {other:?}")
            }
        }
    }
    assert_eq!(
        ok("runs", store.runs()).len(),
        1,
        "a refused claim creates nothing"
    );
    ok("another workflow", claim("lld"));
    ok(
        "set_status",
        store.set_status(
            first,
            &RunStatus::Done {
                summary: "filed".into(),
            },
            &[],
            T2,
        ),
    );
    let again = ok("claim after done", claim("issue"));
    assert_ne!(again, first);
}

/// `model_call_events` lists exactly the model calls of every run, by run then in timeline
/// order, and nothing that merely mentions one.
pub fn model_calls_are_listed_across_runs(store: &dyn Store) {
    let call = |n: u32, cost: u64| model_call(n, cost, T1);
    let a = new_run(store, "a", b"{}");
    let b = new_run(store, "b", b"{}");
    let quiet = new_run(store, "quiet", b"{}");
    ok(
        "commit",
        store.commit(
            &checkpoint(b, 1, "draft", Some("review"), b"{\"n\":1}", T1),
            &[
                call(1, 100),
                note(r#"not a call: "event":"model_call""#),
                call(2, 200),
            ],
            &RunStatus::Running,
        ),
    );
    ok(
        "commit",
        store.commit(
            &checkpoint(a, 1, "draft", None, b"{\"n\":1}", T2),
            &[call(1, 7)],
            &RunStatus::Running,
        ),
    );
    ok(
        "commit",
        store.commit(
            &checkpoint(quiet, 1, "draft", None, b"{\"n\":1}", T2),
            &[note("nothing")],
            &RunStatus::Running,
        ),
    );
    let listed: Vec<(RunId, u64)> = ok("model_call_events", store.model_call_events())
        .into_iter()
        .map(|(run, e)| match e.kind {
            EventKind::ModelCall {
                ledger: Some(l), ..
            } => (run, l.cost_micros.unwrap_or(0)),
            other => panic!("not a model call: {other:?}"),
        })
        .collect();
    assert_eq!(listed, [(a, 7), (b, 100), (b, 200)]);
}
