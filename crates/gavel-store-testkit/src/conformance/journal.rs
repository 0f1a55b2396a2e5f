//! Checks on what accompanies checkpoints: the event timeline, the step journal, blobs, run
//! locks, and errors for unknown runs.

use gavel_core::{ContentHash, Event, EventKind, RunId, RunStatus, Store, StoreError};

use super::{T1, T2, checkpoint, gate, holder, new_run, note, ok};

/// Events come back in the order they were appended, across status changes and commits, and
/// only for their own run.
pub fn events_keep_their_order(store: &dyn Store) {
    let id = new_run(store, "s", b"s0");
    let other = new_run(store, "t", b"t0");
    let e1 = Event {
        at: T1.into(),
        kind: EventKind::Node {
            node: "start".into(),
            next: Some("draft".into()),
            seq: 1,
        },
    };
    let e2 = Event {
        at: T1.into(),
        kind: EventKind::ModelCall {
            role: "drafter".into(),
            provider: "fake".into(),
            model: "m".into(),
            ledger: Some(Box::new(gavel_core::CallLedger {
                n: 1,
                requested_model: "m-pro".into(),
                input_tokens: Some(10),
                output_tokens: Some(20),
                cached_tokens: None,
                cost_micros: Some(1_234),
                cost_source: "reported".into(),
                prompt: gavel_core::ContentHash::of(b"prompt"),
                response: gavel_core::ContentHash::of(b"answer"),
                attempts: 2,
                warning: Some("requested tier `pro`".into()),
                lost: false,
                credential: Some("ANTHROPIC_API_KEY_2".into()),
                quota_exhausted: vec!["ANTHROPIC_API_KEY".into()],
                form: Some("schema".into()),
            })),
        },
    };
    let e3 = Event {
        at: T2.into(),
        kind: EventKind::GateWaiting {
            gate: "draft@1".into(),
            kind: "draft".into(),
        },
    };
    let e4 = Event {
        at: T2.into(),
        kind: EventKind::GateAnswered {
            gate: "draft@1".into(),
            choice: "send".into(),
            by: "you".into(),
        },
    };
    let e5 = Event {
        at: T2.into(),
        kind: EventKind::Node {
            node: "draft".into(),
            next: None,
            seq: 2,
        },
    };
    ok(
        "set_status",
        store.set_status(id, &RunStatus::Running, &[], T1),
    );
    ok(
        "commit",
        store.commit(
            &checkpoint(id, 1, "start", Some("draft"), b"s1", T1),
            &[e1.clone(), e2.clone()],
            &RunStatus::Running,
        ),
    );
    ok(
        "set_status",
        store.set_status(
            id,
            &RunStatus::Waiting { gate: gate() },
            std::slice::from_ref(&e3),
            T2,
        ),
    );
    ok(
        "set_status other",
        store.set_status(other, &RunStatus::Running, &[note("other run")], T2),
    );
    ok(
        "set_status",
        store.set_status(id, &RunStatus::Running, std::slice::from_ref(&e4), T2),
    );
    ok(
        "commit",
        store.commit(
            &checkpoint(id, 2, "draft", None, b"s2", T2),
            std::slice::from_ref(&e5),
            &RunStatus::Done {
                summary: "ok".into(),
            },
        ),
    );
    assert_eq!(ok("events", store.events(id)), [e1, e2, e3, e4, e5]);
    assert_eq!(ok("events other", store.events(other)), [note("other run")]);
}

/// A step's result is journaled once: the same value again is a no-op, a different one is a
/// conflict that keeps the first.
pub fn writes_are_idempotent_and_conflicts_are_refused(store: &dyn Store) {
    let id = new_run(store, "s", b"s0");
    let other = new_run(store, "t", b"t0");
    let step = "1:draft:model";
    assert_eq!(ok("get_write", store.get_write(id, step)), None);
    ok(
        "put_write",
        store.put_write(id, step, br#"{"text":"hi"}"#, T1),
    );
    assert_eq!(
        ok("get_write", store.get_write(id, step)),
        Some(br#"{"text":"hi"}"#.to_vec())
    );
    ok(
        "put_write same value",
        store.put_write(id, step, br#"{"text":"hi"}"#, T2),
    );
    match store.put_write(id, step, br#"{"text":"bye"}"#, T2) {
        Err(StoreError::WriteConflict { run, step: s }) => {
            assert_eq!((run, s.as_str()), (id, step))
        }
        other => panic!("a different value for a journaled step must conflict, got {other:?}"),
    }
    assert_eq!(
        ok("get_write", store.get_write(id, step)),
        Some(br#"{"text":"hi"}"#.to_vec())
    );
    assert_eq!(
        ok("get_write other run", store.get_write(other, step)),
        None,
        "writes belong to one run"
    );
    ok(
        "put_write other run",
        store.put_write(other, step, br#"{"text":"bye"}"#, T2),
    );
    ok(
        "put_write empty",
        store.put_write(id, "1:draft:empty", b"", T2),
    );
    assert_eq!(
        ok("get_write empty", store.get_write(id, "1:draft:empty")),
        Some(Vec::new())
    );
}

/// Blobs are addressed by their sha256, stored once, and come back byte for byte.
pub fn blobs_round_trip_and_deduplicate(store: &dyn Store) {
    let bytes: Vec<u8> = (0..=255u8).chain([0, 0xff, b'\n']).collect();
    let hash = ok("put_blob", store.put_blob(&bytes));
    assert_eq!(hash, ContentHash::of(&bytes));
    assert_eq!(ok("put_blob again", store.put_blob(&bytes)), hash);
    assert_eq!(ok("get_blob", store.get_blob(&hash)), Some(bytes));
    let empty = ok("put_blob empty", store.put_blob(b""));
    assert_eq!(
        ok("get_blob empty", store.get_blob(&empty)),
        Some(Vec::new())
    );
    assert_eq!(
        ok(
            "get_blob unknown",
            store.get_blob(&ContentHash::of(b"never stored"))
        ),
        None
    );

    // Identical states share one blob.
    let a = new_run(store, "a", b"same state");
    let b = new_run(store, "b", b"same state");
    let hash_of = |id| {
        ok("checkpoints", store.checkpoints(id))
            .first()
            .map(|m| m.state_hash.clone())
    };
    assert_eq!(hash_of(a), hash_of(b));
    assert_eq!(hash_of(a), Some(ContentHash::of(b"same state")));
}

/// A blob stored naming blobs it shares content with comes back byte for byte under the same
/// hash as a plain `put_blob`, whatever the store does with the hint; so do long chains of
/// states that each differ a little from their parent.
pub fn shared_content_round_trips(store: &dyn Store) {
    let draft: Vec<u8> = (0..20_000u32)
        .map(|i| b"the draft of an issue, revised\n"[(i * 7 % 31) as usize])
        .collect();
    let d = ok("put_blob draft", store.put_blob(&draft));
    let mut prompt = b"Review the draft below.\n\n".to_vec();
    prompt.extend_from_slice(&draft[5..]);
    prompt.extend_from_slice(b"\nAnswer with JSON.\n");
    let unknown = ContentHash::of(b"never stored");
    let p = ok(
        "put_blob_sharing",
        store.put_blob_sharing(&prompt, &[unknown, d.clone(), d]),
    );
    assert_eq!(p, ContentHash::of(&prompt));
    assert_eq!(
        ok("get_blob prompt", store.get_blob(&p)),
        Some(prompt.clone())
    );
    assert_eq!(ok("put_blob same prompt", store.put_blob(&prompt)), p);

    let mut state = draft[..3_000].to_vec();
    let id = new_run(store, "chain", &state);
    for seq in 1..=30u64 {
        state[seq as usize * 10] = b'#';
        let cp = checkpoint(id, seq, "n", Some("n"), &state, T1);
        ok("commit", store.commit(&cp, &[], &RunStatus::Running));
    }
    let head = ok("head", store.head(id)).unwrap_or_else(|| panic!("run {id} has no head"));
    assert_eq!(head.state, state);
    for meta in ok("checkpoints", store.checkpoints(id)) {
        let bytes = ok("get_blob state", store.get_blob(&meta.state_hash));
        assert_eq!(
            bytes.map(|b| ContentHash::of(&b)),
            Some(meta.state_hash.clone()),
            "state of checkpoint {}",
            meta.seq
        );
    }
}

/// A run's lock is exclusive, names its holder to whoever else asks, covers only its own run
/// and is released when the guard is dropped.
pub fn locks_are_exclusive_and_released_on_drop(store: &dyn Store) {
    let a = new_run(store, "a", b"a0");
    let b = new_run(store, "b", b"b0");
    let first = ok("lock a", store.lock(a, &holder(100)));
    match store.lock(a, &holder(200)) {
        Err(StoreError::Locked { run, holder: h }) => {
            assert_eq!(run, a);
            assert_eq!(h, holder(100), "Locked must name the holder");
        }
        other => panic!("a second lock on run {a} must fail, got {other:?}"),
    }
    let other = ok("lock b while a is held", store.lock(b, &holder(300)));
    assert_eq!(
        ok("holder of a", store.holder(a)),
        Some(holder(100)),
        "a probe names the holder"
    );
    drop(first);
    assert_eq!(ok("holder of a after release", store.holder(a)), None);
    let second = ok("lock a after release", store.lock(a, &holder(200)));
    match store.lock(a, &holder(400)) {
        Err(StoreError::Locked { holder: h, .. }) => {
            assert_eq!(h, holder(200), "the new holder is named")
        }
        other => panic!("run {a} must be locked again, got {other:?}"),
    }
    drop((second, other));
}

/// Every operation on a run that does not exist says so.
pub fn unknown_runs_are_errors(store: &dyn Store) {
    let known = new_run(store, "s", b"s0");
    let id = RunId(known.0 + 1000);
    let unknown = |what: &str, result: Result<(), StoreError>| match result {
        Err(StoreError::UnknownRun(run)) if run == id => {}
        other => panic!("{what} on unknown run {id} must be UnknownRun, got {other:?}"),
    };
    assert_eq!(ok("run", store.run(id)), None);
    unknown(
        "set_status",
        store.set_status(id, &RunStatus::Running, &[note("x")], T1),
    );
    unknown(
        "commit",
        store.commit(
            &checkpoint(id, 1, "n", None, b"s", T1),
            &[note("x")],
            &RunStatus::Running,
        ),
    );
    unknown("head", store.head(id).map(drop));
    unknown("checkpoints", store.checkpoints(id).map(drop));
    unknown("get_write", store.get_write(id, "0:n:s").map(drop));
    unknown("put_write", store.put_write(id, "0:n:s", b"v", T1));
    unknown("events", store.events(id).map(drop));
    unknown("lock", store.lock(id, &holder(1)).map(drop));
    assert_eq!(
        ok("runs", store.runs()).len(),
        1,
        "failed calls must not create runs"
    );
}

/// The month's spend adds up the cost of every model call recorded in that month, over every
/// run, whether the call came with a checkpoint or a status change.
pub fn spend_adds_up_by_month(store: &dyn Store) {
    let call = |at: &str, micros: Option<u64>| Event {
        at: at.into(),
        kind: EventKind::ModelCall {
            role: "drafter".into(),
            provider: "scripted".into(),
            model: "m".into(),
            ledger: Some(Box::new(gavel_core::CallLedger {
                n: 1,
                requested_model: "m".into(),
                input_tokens: None,
                output_tokens: None,
                cached_tokens: None,
                cost_micros: micros,
                cost_source: "reported".into(),
                prompt: gavel_core::ContentHash::of(b"p"),
                response: gavel_core::ContentHash::of(b"r"),
                attempts: 1,
                warning: None,
                lost: false,
                credential: None,
                quota_exhausted: Vec::new(),
                form: None,
            })),
        },
    };
    assert_eq!(ok("spent_in_month", store.spent_in_month("2026-01")), 0);
    let a = new_run(store, "a", b"{}");
    let b = new_run(store, "b", b"{}");
    ok(
        "set_status",
        store.set_status(
            a,
            &RunStatus::Running,
            &[
                call("2026-01-30T14:33:20Z", Some(1_500)),
                call("2026-02-01T00:00:00Z", Some(7)),
                note("not a call"),
            ],
            T1,
        ),
    );
    let cp = checkpoint(b, 1, "draft", None, b"s1", T1);
    ok(
        "commit",
        store.commit(
            &cp,
            &[
                call("2026-01-02T09:00:00Z", Some(250)),
                call("2026-01-02T09:01:00Z", None),
            ],
            &RunStatus::Running,
        ),
    );
    assert_eq!(ok("spent_in_month", store.spent_in_month("2026-01")), 1_750);
    assert_eq!(ok("spent_in_month", store.spent_in_month("2026-02")), 7);
    assert_eq!(ok("spent_in_month", store.spent_in_month("2025-12")), 0);
}

/// The journal lists every step result of a run, sorted by step id, and nothing of another run.
pub fn the_journal_lists_every_step_result(store: &dyn Store) {
    let id = new_run(store, "s", b"{}");
    let other = new_run(store, "t", b"{}");
    assert!(ok("journal", store.journal(id)).is_empty());
    ok("put_write", store.put_write(id, "b@2", b"two", T1));
    ok("put_write", store.put_write(id, "a@1", b"one", T1));
    ok("put_write", store.put_write(other, "c@1", b"x", T1));
    assert_eq!(
        ok("journal", store.journal(id)),
        vec![
            ("a@1".to_owned(), b"one".to_vec()),
            ("b@2".to_owned(), b"two".to_vec())
        ]
    );
    assert!(matches!(
        store.journal(RunId(9_999)),
        Err(StoreError::UnknownRun(_))
    ));
    // The step ids alone: the same steps, in any order.
    let mut steps = ok("journal_steps", store.journal_steps(id));
    steps.sort();
    assert_eq!(steps, ["a@1", "b@2"]);
    assert!(ok("journal_steps", store.journal_steps(other)) == ["c@1"]);
    assert!(matches!(
        store.journal_steps(RunId(9_999)),
        Err(StoreError::UnknownRun(_))
    ));
}
