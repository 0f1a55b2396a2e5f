//! The spend ledger, the budget and model verification, end to end with the scripted provider
//! (which can report costs and claim to be another model).

use gavel_llm::{CallEvent, Role};

use crate::util::*;

#[test]
fn the_ledger_records_every_call_and_show_prints_prompt_and_answer() {
    let env = Env::new();
    env.script(&format!(
        "model: claude-sonnet-4-5\ndrafter:\n  - text: {}\n    cost_usd: 0.0125\nreviewer:\n  - text: {}\n",
        json(&draft(1)),
        json(APPROVED)
    ));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    let shown = env.show("1");
    assert_eq!(shown["spend"]["calls"], 2);
    let calls = shown["calls"].as_array().expect("calls");
    assert_eq!(
        (
            calls[0]["role"].as_str(),
            calls[0]["cost_source"].as_str(),
            calls[0]["cost_micros"].as_u64()
        ),
        (Some("drafter"), Some("reported"), Some(12_500))
    );
    assert_eq!(
        calls[1]["cost_source"], "price-table",
        "the reviewer's cost comes from the price table"
    );
    assert_eq!(shown["spend_by_role"]["drafter"]["calls"], 1);
    let out = env.run(&["show", "1", "--call", "2"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("==== prompt")
            && text.contains("# Issue review rubric (0701c)")
            && text.contains("\"verdict\": \"APPROVED\""),
        "{text}"
    );
    let table = String::from_utf8_lossy(&env.run(&["runs"]).stdout).into_owned();
    assert!(table.contains("COST") && table.contains("$0.01"), "{table}");
    let out = env.run(&["show", "1", "--call", "9"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("no model call #9"));
}

#[test]
fn the_budget_stops_before_the_call_that_would_exceed_it() {
    let env = Env::new();
    env.script(&format!(
        "model: claude-sonnet-4-5\ndrafter:\n  - text: {}\n    cost_usd: 0.10\nreviewer:\n  - text: {}\n",
        json(&draft(1)),
        json(APPROVED)
    ));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto", "--budget", "0.20"]);
    assert_exit(&out, 4);
    let err = stderr(&out);
    assert!(
        err.contains("budget: the reviewer call would cost up to $0.1")
            && err.contains("spent $0.1000 of $0.2000"),
        "{err}"
    );
    assert!(
        !env.calls().iter().any(|c| c.role == Role::REVIEWER),
        "the reviewer was never called"
    );
    assert_exit(&env.run(&["resume", "1"]), 4);
    assert_exit(&env.run(&["resume", "1", "--budget", "1"]), 0);
    assert_eq!(
        env.calls()
            .iter()
            .filter(|c| c.event == CallEvent::Finish)
            .count(),
        2
    );
}

#[test]
fn an_unknown_price_with_a_budget_fails_closed() {
    let env = Env::new();
    env.script(&format!(
        "model: mystery-model\ndrafter:\n  - text: {}\nreviewer: []\n",
        json(&draft(1))
    ));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto", "--budget", "5"]);
    assert_exit(&out, 4);
    assert!(
        stderr(&out).contains("no price is known for model `mystery-model`"),
        "{}",
        show_output(&out)
    );
    assert!(env.calls().is_empty());
}

#[test]
fn another_model_answering_is_flagged_and_kept_out_of_the_issue() {
    let env = Env::new();
    env.script(&format!(
        "model: gemini-2.5-pro\ndrafter:\n  - text: {}\n    model: gemini-2.5-flash\nreviewer:\n  - text: {}\n    model: gemini-2.5-flash-lite\n",
        json(&draft(1)),
        json(APPROVED)
    ));
    let brief = env.brief("dark-mode");
    // A downgraded reviewer is never auto-approved: even with --auto the verdict waits for a
    // person, and the warning is shown while the run goes, not only in the artifact.
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 3);
    let err = stderr(&out);
    assert!(
        err.contains("warning: the reviewer call was answered by another model than requested")
            && err.contains("warning: the drafter call was answered by another model"),
        "{}",
        show_output(&out)
    );
    assert!(err.contains("--choice approve"), "{}", show_output(&out));
    assert_eq!(env.show("1")["status"]["gate"]["kind"], "verdict");
    assert!(env.issues().is_empty(), "nothing filed without a person");
    assert_exit(&env.run(&["resume", "1", "--choice", "approve"]), 0);
    let done = done_dir(&env, 1, "dark-mode");
    let d = env.read(&format!("{done}/002-draft.md"));
    assert!(
        d.starts_with("<!-- gavel: WARNING: model verification failed"),
        "{d}"
    );
    let v = env.read(&format!("{done}/003-verdict.md"));
    assert!(
        v.contains("warning: \"model verification failed")
            && v.contains("\nWARNING: model verification failed"),
        "{v}"
    );
    let issue = env.read("docs/issues/0001-dark-mode.md");
    assert!(
        !issue.contains("WARNING"),
        "gavel's own warning is not filed:\n{issue}"
    );
    let text = String::from_utf8_lossy(&env.run(&["show", "1"]).stdout).into_owned();
    assert!(
        text.contains("WARNING: model verification failed: requested tier `pro`"),
        "{text}"
    );
    assert_eq!(env.show("1")["spend"]["warnings"], 2);
}

#[test]
fn strict_models_turns_a_mismatch_into_a_failure() {
    let env = Env::new();
    env.set_config_line("strict_models", "strict_models = true");
    env.script(&format!("model: gemini-2.5-pro\ndrafter:\n  - text: {}\n    model: gemini-2.5-flash\nreviewer: []\n", json(&draft(1))));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("model verification failed for the drafter (strict_models = true)"),
        "{}",
        show_output(&out)
    );
    assert_eq!(
        env.ls("docs/lineage/active/dark-mode"),
        ["001-brief.md"],
        "no draft from an unverified model"
    );
}
