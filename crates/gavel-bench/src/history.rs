//! `gavel-bench history N --repo DIR [--db-url URL --project P]`: gives a repository the
//! history of N finished brief → issue runs, fast, so `bench/history.sh` can time a new run
//! and `gavel runs` after 0, 1,000 and 10,000 of them: N runs in the store (each with the
//! checkpoints, model-call events and journal a real run leaves), and in the working tree what
//! they filed (the issue files, the done lineage folders, the ideas moved to `ideas/done/`).
//! The caller commits the files.

use std::fs;
use std::path::{Path, PathBuf};

use gavel_core::{CHECKPOINT_FORMAT, CallLedger, Checkpoint, Event, EventKind, RunStatus, Store};
use gavel_store::{PgStore, SqliteStore};

const NOW: &str = "2026-01-01T00:00:00Z";

/// Parses the arguments and fills the store and the working tree.
pub fn run(args: &[String]) -> Result<String, String> {
    let usage = "history N --repo DIR [--db-url URL --project P]";
    let n: u32 = args.get(1).and_then(|v| v.parse().ok()).ok_or(usage)?;
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let repo = PathBuf::from(flag("--repo").ok_or(usage)?);
    let store: Box<dyn Store> = match flag("--db-url") {
        Some(url) => {
            let project = flag("--project").ok_or(usage)?;
            Box::new(
                PgStore::open_project(&url, &project, &gavel_store::PgEnv::default())
                    .map_err(|e| e.to_string())?,
            )
        }
        None => {
            Box::new(SqliteStore::open(&repo.join(".gavel/state.db")).map_err(|e| e.to_string())?)
        }
    };
    for i in 1..=n {
        one_run(store.as_ref(), i).map_err(|e| e.to_string())?;
        files(&repo, i).map_err(|e| e.to_string())?;
    }
    Ok(format!("runs={n}"))
}

/// One finished run: nine checkpoints, four model calls, their journal entries, a filing.
fn one_run(store: &dyn Store, i: u32) -> Result<(), gavel_core::StoreError> {
    let slug = format!("idea-{i}");
    let state = |seq: u64| {
        format!(
            "{{\"run_key\":\"k{i}\",\"slug\":\"{slug}\",\"seq\":{seq},\"file_counter\":{seq},\"draft_count\":{},\"verdict_count\":{}}}",
            seq / 2,
            seq / 3
        )
    };
    let run = store.create_run("issue", &slug, state(0).as_bytes(), "N0_load_brief", NOW)?;
    let mut calls = 0;
    for seq in 1..=9u64 {
        let mut events = Vec::new();
        if seq % 2 == 0 {
            calls += 1;
            let prompt = store.put_blob(
                format!("prompt {calls} of {slug}: {}", "words ".repeat(80)).as_bytes(),
            )?;
            let answer = store.put_blob(format!("# Idea {i} v{calls}\n\nbody").as_bytes())?;
            store.put_write(
                run,
                &format!("N{seq}@{seq}/call"),
                format!("{{\"text_blob\":\"{}\"}}", answer.as_str()).as_bytes(),
                NOW,
            )?;
            events.push(Event {
                at: NOW.into(),
                kind: EventKind::ModelCall {
                    role: if calls % 2 == 1 {
                        "drafter"
                    } else {
                        "reviewer"
                    }
                    .into(),
                    provider: "scripted".into(),
                    model: "scripted".into(),
                    ledger: Some(Box::new(CallLedger {
                        n: calls,
                        requested_model: "scripted".into(),
                        input_tokens: Some(120),
                        output_tokens: Some(60),
                        cached_tokens: None,
                        cost_micros: Some(0),
                        cost_source: "reported".into(),
                        prompt,
                        response: answer,
                        attempts: 1,
                        warning: None,
                        lost: false,
                        credential: None,
                        quota_exhausted: Vec::new(),
                        form: None,
                    })),
                },
            });
        }
        store.commit(
            &Checkpoint {
                run,
                seq,
                parent: Some(seq - 1),
                node: Some(format!("N{}", seq - 1)),
                next: Some(format!("N{seq}")),
                state: state(seq).into_bytes(),
                format: CHECKPOINT_FORMAT,
                created_at: NOW.into(),
            },
            &events,
            &RunStatus::Running,
        )?;
    }
    store.set_status(
        run,
        &RunStatus::Done {
            summary: format!("issue #{i} filed"),
        },
        &[],
        NOW,
    )
}

/// What run `i` left in the working tree.
fn files(repo: &Path, i: u32) -> std::io::Result<()> {
    let slug = format!("idea-{i}");
    let write = |rel: String, text: String| {
        let path = repo.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, text)
    };
    write(
        format!("docs/issues/{i:04}-{slug}.md"),
        format!(
            "---\nnumber: {i}\ntitle: Idea {i}\nlabels: []\nstate: open\ncreated_at: {NOW}\ngavel_key: gavel-k{i}\n---\n\n# Idea {i}\n\nbody\n"
        ),
    )?;
    let lineage = format!("docs/lineage/done/{i}-{slug}");
    write(format!("{lineage}/001-brief.md"), format!("# Idea {i}\n"))?;
    write(
        format!("{lineage}/002-draft.md"),
        format!("# Idea {i} v1\n\nbody\n"),
    )?;
    write(format!("{lineage}/003-verdict.md"), "APPROVED\n".into())?;
    write(
        format!("{lineage}/004-filed.json"),
        format!("{{\"issue_number\":{i}}}\n"),
    )?;
    write(format!("ideas/done/{i}-{slug}.md"), format!("# Idea {i}\n"))
}
