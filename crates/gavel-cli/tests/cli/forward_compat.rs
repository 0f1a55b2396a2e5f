//! A state database a newer gavel wrote to: `gavel runs` and `gavel show` list its unknown
//! statuses and event kinds as unknown (never as a corrupt store whose hint says to move the
//! file aside), and `resume`/`abort` refuse such a run with an error that names the status.

use gavel_core::{Event, RunId, RunStatus, RunStore};
use gavel_store::SqliteStore;

use crate::util::*;

/// Starts a run, then rewrites its status and appends an event as a newer gavel would.
fn run_touched_by_a_newer_gavel(env: &Env) -> String {
    let id = start_paused(env, "dark-mode");
    let store = SqliteStore::open(&env.state_db()).expect("open the state database");
    let status: RunStatus =
        serde_json::from_str(r#"{"status":"paused_for_ci","pipeline":42}"#).expect("status");
    let event: Event =
        serde_json::from_str(r#"{"at":"2026-01-30T14:40:00Z","event":"tool_use","tool":"edit"}"#)
            .expect("event");
    let run = RunId(id.parse().expect("a run id"));
    store
        .set_status(run, &status, &[event], "2026-01-30T14:40:00Z")
        .expect("write as a newer gavel");
    id
}

#[track_caller]
fn assert_not_called_corrupt(out: &std::process::Output) {
    let text = show_output(out);
    assert!(!text.contains("not usable"), "{text}");
    assert!(!text.contains("move the file aside"), "{text}");
}

#[test]
fn runs_and_show_list_a_status_and_an_event_from_a_newer_gavel_as_unknown() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let id = run_touched_by_a_newer_gavel(&env);

    let out = env.run(&["runs"]);
    assert_exit(&out, 0);
    assert_not_called_corrupt(&out);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = listed
        .lines()
        .find(|l| l.contains("dark-mode"))
        .unwrap_or_else(|| panic!("the run is listed: {listed}"));
    assert!(line.contains("unknown"), "{line}");
    assert!(line.contains("paused_for_ci"), "{line}");
    let json = env.runs();
    assert_eq!(json[0]["status"], "unknown");

    let out = env.run(&["show", &id]);
    assert_exit(&out, 0);
    assert_not_called_corrupt(&out);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        shown.contains("unknown — status `paused_for_ci`"),
        "{shown}"
    );
    assert!(shown.contains("unknown `tool_use`"), "{shown}");
    // The JSON keeps what the newer gavel wrote.
    let json = env.show(&id);
    assert_eq!(json["status"]["status"], "paused_for_ci");
    let last = json["timeline"]
        .as_array()
        .and_then(|t| t.last().cloned())
        .expect("a timeline");
    assert_eq!(
        (&last["event"], &last["tool"]),
        (&"tool_use".into(), &"edit".into())
    );
}

#[test]
fn resume_and_abort_refuse_a_run_whose_status_a_newer_gavel_wrote() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let id = run_touched_by_a_newer_gavel(&env);
    for args in [vec!["resume", id.as_str()], vec!["abort", id.as_str()]] {
        let out = env.run(&args);
        assert!(!out.status.success(), "{}", show_output(&out));
        assert_not_called_corrupt(&out);
        let err = stderr(&out);
        assert!(err.contains("paused_for_ci"), "{args:?}: {err}");
        assert!(err.contains("newer gavel"), "{args:?}: {err}");
    }
    assert_eq!(env.runs()[0]["status"], "unknown", "nothing was changed");
}
