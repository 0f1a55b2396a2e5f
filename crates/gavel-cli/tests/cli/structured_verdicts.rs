//! Verdicts as structured output (issue 35), end to end: a reviewer whose answer is one bare
//! JSON object (what a service enforcing the verdict's schema returns) is parsed and routed
//! under `--auto`, for an issue and an LLD; an unreadable structured answer stops at the
//! verdict gate and files nothing; `gavel show` (and the report's run page) says how each
//! verdict was asked for. The
//! scripted provider has no structured output of its own, so its reviewer calls are recorded
//! as asked in plain text (`plain`), and the prompt still describes the fenced form.

use gavel_llm::Role;
use serde_json::Value;

use crate::util::*;

const BARE_APPROVED: &str = "{\"verdict\": \"APPROVED\", \"findings\": []}";
const BARE_REVISE: &str =
    "{\n  \"verdict\": \"REVISE\",\n  \"findings\": [\"add acceptance criteria\"]\n}\n";

/// Each call's role and recorded answer form, from `gavel show RUN --json`.
fn forms(env: &Env, run: &str) -> Vec<(String, Value)> {
    env.show(run)["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            (
                c["role"].as_str().expect("role").to_owned(),
                c["form"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_bare_json_verdict_is_parsed_and_routed_under_auto() {
    let env = Env::new();
    env.script(&script(2, &[BARE_REVISE, BARE_APPROVED]));
    let brief = env.brief("dark-mode");
    let out = env.run(&["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert_eq!(env.issues(), ["0001-dark-mode.md"]);
    let done = done_dir(&env, 1, "dark-mode");
    let first = env.read(&format!("{done}/003-verdict.md"));
    assert!(first.contains("verdict: \"REVISE (1 finding)\""), "{first}");
    let second = env.read(&format!("{done}/005-verdict.md"));
    assert!(second.contains("verdict: APPROVED"), "{second}");
    // The revision prompt carries the structured verdict's finding.
    assert!(
        env.prompt(Role::DRAFTER, 1)
            .contains("add acceptance criteria")
    );
    // The reviewer is still told the fenced form, so a plain answer works too.
    assert!(env.prompt(Role::REVIEWER, 0).contains("```json"));
    let plain = Value::from("plain");
    assert_eq!(
        forms(&env, "1"),
        [
            ("drafter".to_owned(), Value::Null),
            ("reviewer".to_owned(), plain.clone()),
            ("drafter".to_owned(), Value::Null),
            ("reviewer".to_owned(), plain),
        ],
        "only the verdict calls record a form; the scripted provider asks in plain text"
    );
    let out = env.run(&["show", "1"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches("     answer form: plain\n").count(),
        2,
        "under each reviewer call: {text}"
    );
    assert_eq!(
        text.matches("answered as scripted-test · answer form: plain\n")
            .count(),
        2,
        "in the timeline: {text}"
    );
    let call = env.run(&["show", "1", "--call", "2"]);
    assert_exit(&call, 0);
    assert!(
        String::from_utf8_lossy(&call.stdout).contains("\nanswer form: plain\n"),
        "{}",
        show_output(&call)
    );
    let drafter = env.run(&["show", "1", "--call", "1"]);
    assert!(
        !String::from_utf8_lossy(&drafter.stdout).contains("answer form"),
        "{}",
        show_output(&drafter)
    );
    // The report's run page says it in the calls' notes.
    let store = gavel_store::SqliteStore::open(&env.state_db()).expect("store");
    let site = gavel_report::Site::new(&store, gavel_report::SiteMode::Served);
    let page = match site.route("runs/1/", &gavel_report::RunsQuery::default()) {
        Ok(Some(gavel_report::Page::Html(h))) => h,
        other => panic!("the run page: {other:?}"),
    };
    assert_eq!(page.matches("answer form: plain").count(), 2, "{page}");
}

#[test]
fn an_unreadable_structured_answer_stops_at_the_verdict_gate_and_files_nothing() {
    for (bad, why) in [
        (
            "{\"verdict\": \"SHIP IT\", \"findings\": []}",
            "unknown verdict",
        ),
        (
            "{\"verdict\": \"APPROVED\", \"findings\": []}\n{\"verdict\": \"APPROVED\", \"findings\": []}",
            "no JSON verdict block",
        ),
        ("{\"findings\": []}", "a JSON object without a"),
    ] {
        let env = Env::new();
        env.script(&script(1, &[bad]));
        let brief = env.brief("dark-mode");
        let out = env.run(&["issue", &brief, "--auto"]);
        assert_exit(&out, 3);
        assert!(env.issues().is_empty(), "{bad}: nothing is filed");
        let shown = env.show("1");
        assert_eq!(shown["status"]["gate"]["kind"], "verdict", "{bad}");
        assert_eq!(shown["status"]["gate"]["recommended"], Value::Null, "{bad}");
        let verdict = env.read("docs/lineage/active/dark-mode/003-verdict.md");
        assert!(
            verdict.contains("verdict: \"UNPARSEABLE: "),
            "{bad}: {verdict}"
        );
        assert!(verdict.contains(why), "{bad}: {verdict}");
    }
}

#[test]
fn an_lld_reviewer_answering_bare_json_approves_the_design() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    env.script(&script(1, &[BARE_APPROVED]));
    let out = env.run(&["lld", "1", "--auto"]);
    assert_exit(&out, 0);
    assert!(
        env.read("docs/lld/active/LLD-1.md")
            .starts_with("# Add dark mode v1"),
        "{}",
        show_output(&out)
    );
    let verdict = env.read("docs/lineage/done/1-lld/003-verdict.md");
    assert!(verdict.contains("verdict: APPROVED"), "{verdict}");
    assert_eq!(
        forms(&env, "2").last(),
        Some(&("reviewer".to_owned(), Value::from("plain")))
    );
}
