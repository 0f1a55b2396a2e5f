//! gavel's own time, end to end and on the real clock (every other test pins it): the diff
//! gate's summary of an implement run and `gavel show` give it next to the time in model calls
//! and tests, and neither the pause between `gavel implement` and `gavel resume` nor the time a
//! person takes at the prompt counts.

use std::process::Command;
use std::time::{Duration, Instant};

use rexpect::session::spawn_command;
use serde_json::Value;

use crate::util::*;

/// A command on the real clock.
fn real_clock(mut cmd: Command) -> Command {
    cmd.env_remove("GAVEL_NOW");
    cmd
}

/// `gavel show 1 --json`'s `time` and the number of `time` events in its timeline.
fn shown_time(env: &Env) -> (Value, usize) {
    let out = env.run(&["show", "1", "--json"]);
    assert_exit(&out, 0);
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    let accounts = json["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .filter(|e| e["event"] == "time")
        .count();
    (json["time"].clone(), accounts)
}

fn ms(time: &Value, field: &str) -> u64 {
    time[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {time}"))
}

/// `gavel's own time: X of Y (model calls M, tests T)`, as gavel prints it.
fn line(time: &Value) -> String {
    let s = |field: &str| {
        let v = ms(time, field);
        format!("{}.{:02} s", v / 1000, (v % 1000) / 10)
    };
    format!(
        "gavel's own time: {} of {} (model calls {}, tests {})",
        s("own_ms"),
        s("active_ms"),
        s("model_ms"),
        s("tests_ms")
    )
}

#[test]
fn the_summary_and_show_give_gavels_own_time_without_the_waits_at_the_gate() {
    let env = python_project(&[TESTS, CODE]);
    let started = Instant::now();
    let out = real_clock(start_command(&env)).output().expect("run gavel");
    let implement_ms = started.elapsed().as_millis() as u64;
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.lines().any(|l| l.starts_with("gavel's own time: ")
            && l.contains(" of ")
            && l.contains("(model calls ")
            && l.contains(", tests ")),
        "the diff gate's summary: {text}"
    );

    let (first, accounts) = shown_time(&env);
    assert_eq!(accounts, 1, "one account for `gavel implement`");
    let (active, model, tests) = (
        ms(&first, "active_ms"),
        ms(&first, "model_ms"),
        ms(&first, "tests_ms"),
    );
    // pytest ran twice (red, green); the process took longer than all it counted.
    assert!(tests > 0, "{first}");
    assert!(model + tests <= active && active <= implement_ms, "{first}");
    assert_eq!(ms(&first, "own_ms"), active - model - tests, "{first}");
    let shown = env.run(&["show", "1"]);
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        shown.contains(&format!("time:        {}", line(&first))),
        "{shown}"
    );
    assert!(
        shown.contains("time    this drive: gavel's own time: "),
        "{shown}"
    );

    // A pause before the resume, and a person slow at the prompt: neither counts.
    std::thread::sleep(Duration::from_millis(1_200));
    let editor = crate::pty::fake_editor(&env);
    let mut cmd = real_clock(env.gavel(&["resume", "1"]));
    cmd.env("EDITOR", editor).env("TERM", "dumb");
    let resumed = Instant::now();
    let mut p = spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the diff gate asks for the word");
    std::thread::sleep(Duration::from_millis(1_200));
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    let resume_ms = resumed.elapsed().as_millis() as u64;
    assert!(env.exists("calc.py"), "merged");

    let (total, accounts) = shown_time(&env);
    assert_eq!(
        accounts, 2,
        "one more for the resume's drive after the answer"
    );
    let second = ms(&total, "active_ms") - active;
    assert!(
        second + 1_200 <= resume_ms,
        "the merge counted {second} ms of a {resume_ms} ms process that waited 1,200 ms at the prompt"
    );
    assert!(ms(&total, "tests_ms") == tests && ms(&total, "model_ms") == model);
}
