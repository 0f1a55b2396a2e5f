//! brief → issue with the REAL agent CLIs (installed from npm at pinned versions) talking to a
//! local fake of the vendors' APIs, and each fault kind for each CLI.

use gavel_fakeapi::{Api, FakeServer, Reply};
use gavel_llm::Role;

use crate::agents;
use crate::util::*;

/// A repository whose drafter is `drafter` and whose reviewer is the scripted one.
fn with_drafter(drafter: &str, verdicts: &[&str]) -> Env {
    let env = Env::new();
    env.set_roles(drafter, "scripted:script.yaml");
    env.set_config_line("idle_secs", "idle_secs = 12");
    env.script(&script(0, verdicts));
    env
}

fn run_with(env: &Env, vars: &[(String, String)], args: &[&str]) -> std::process::Output {
    let mut cmd = env.gavel(args);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    cmd.output().expect("run gavel")
}

#[test]
fn codex_drafts_an_issue_end_to_end() {
    let server = FakeServer::start().expect("fake");
    let env = with_drafter("codex:gpt-5", &[APPROVED]);
    server.push(
        Api::OpenAiResponses,
        Reply::text(draft(1)).with_usage(321, 45, 12),
    );
    let vars = agents::codex_env(&env, &server);
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &vars, &["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert!(
        env.read("docs/issues/0001-dark-mode.md")
            .contains("# Add dark mode v1")
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "one request: {reqs:#?}");
    let body = &reqs[0].body;
    assert_eq!(reqs[0].model, "gpt-5");
    assert_eq!(
        body["tools"],
        serde_json::json!([]),
        "no tools for a drafting call"
    );
    assert!(
        body.to_string().contains("People want a dark mode"),
        "the brief reached the model via stdin"
    );
    let call = &env.show("1")["calls"][0];
    assert_eq!(
        (
            call["role"].as_str(),
            call["input_tokens"].as_u64(),
            call["output_tokens"].as_u64(),
            call["cached_tokens"].as_u64()
        ),
        (Some("drafter"), Some(321), Some(45), Some(12))
    );
    assert_eq!(env.finished(Role::REVIEWER), 1);
}

#[test]
fn claude_drafts_an_issue_end_to_end() {
    let server = FakeServer::start().expect("fake");
    let env = with_drafter("claude:claude-sonnet-4-5", &[APPROVED]);
    server.push(
        Api::Anthropic,
        Reply::text(draft(1))
            .with_model("claude-sonnet-4-5-20250929")
            .with_usage(400, 50, 30),
    );
    let vars = agents::claude_env(&env, &server);
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &vars, &["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert!(
        env.read("docs/issues/0001-dark-mode.md")
            .contains("# Add dark mode v1")
    );
    let reqs: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(Api::Anthropic))
        .collect();
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    assert_eq!(reqs[0].model, "claude-sonnet-4-5");
    assert!(
        reqs[0].body["tools"].as_array().is_none_or(Vec::is_empty),
        "no tools: {}",
        reqs[0].body["tools"]
    );
    assert!(reqs[0].body.to_string().contains("People want a dark mode"));
    let call = &env.show("1")["calls"][0];
    assert_eq!(
        call["model"], "claude-sonnet-4-5-20250929",
        "the answering model as the API reported it"
    );
    assert!(
        call["warning"].is_null(),
        "a dated version of the requested model is fine: {call}"
    );
    assert_eq!(
        (
            call["output_tokens"].as_u64(),
            call["cached_tokens"].as_u64(),
            call["cost_source"].as_str()
        ),
        (Some(50), Some(30), Some("reported"))
    );
}

#[test]
fn http_providers_draft_and_review_end_to_end() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    env.set_roles("anthropic:claude-sonnet-4-5", "google:gemini-2.5-pro");
    server.push(
        Api::Anthropic,
        Reply::text(draft(1)).with_model("claude-sonnet-4-5-20250929"),
    );
    server.push(Api::Gemini, Reply::text(REVISE));
    server.push(Api::Anthropic, Reply::error(529, "overloaded"));
    server.push(Api::Anthropic, Reply::text(draft(2)));
    server.push(Api::Gemini, Reply::text(APPROVED));
    let vars = vec![
        ("ANTHROPIC_BASE_URL".to_owned(), server.url()),
        ("ANTHROPIC_API_KEY".to_owned(), "a-key".to_owned()),
        ("GOOGLE_GEMINI_BASE_URL".to_owned(), server.url()),
        ("GEMINI_API_KEY".to_owned(), "g-key".to_owned()),
    ];
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &vars, &["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert!(
        env.read("docs/issues/0001-dark-mode.md")
            .contains("# Add dark mode v2")
    );
    let shown = env.show("1");
    let calls = shown["calls"].as_array().expect("calls");
    let roles: Vec<_> = calls
        .iter()
        .map(|c| {
            (
                c["role"].as_str().unwrap_or_default(),
                c["provider"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("drafter", "anthropic"),
            ("reviewer", "google"),
            ("drafter", "anthropic"),
            ("reviewer", "google")
        ]
    );
    assert_eq!(calls[2]["attempts"], 2, "the 529 was retried");
    assert_eq!(shown["spend_by_role"]["reviewer"]["calls"], 2);
    let reqs = server.requests();
    assert!(
        reqs.iter().any(|r| r
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("x-api-key") && v == "a-key")),
        "the Anthropic key was sent"
    );
}

/// brief → issue with real CLIs in both seats: a revision round, then approval.
fn both_seats(
    drafter: &str,
    drafter_api: Api,
    vars: impl Fn(&Env, &FakeServer) -> Vec<(String, String)>,
) {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    env.set_roles(drafter, "gemini:gemini-2.5-pro");
    server.push(drafter_api, Reply::text(draft(1)));
    server.push(Api::Gemini, Reply::text(REVISE));
    server.push(drafter_api, Reply::text(draft(2)));
    server.push(Api::Gemini, Reply::text(APPROVED));
    let mut all = vars(&env, &server);
    all.extend(agents::gemini_env(&env, &server));
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &all, &["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert!(
        env.read("docs/issues/0001-dark-mode.md")
            .contains("# Add dark mode v2")
    );
    let names = env.ls("docs/lineage/done/1-dark-mode");
    assert_eq!(
        names,
        [
            "001-brief.md",
            "002-draft.md",
            "003-verdict.md",
            "004-draft.md",
            "005-verdict.md",
            "006-filed.json"
        ]
    );
    let gemini: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(Api::Gemini))
        .collect();
    assert_eq!(gemini.len(), 2, "two reviews, no extra calls: {gemini:#?}");
    assert_eq!(gemini[0].model, "gemini-2.5-pro");
    let decls = &gemini[0].body["tools"];
    assert!(
        decls
            .as_array()
            .is_none_or(|t| t.iter().all(|d| d["functionDeclarations"]
                .as_array()
                .is_none_or(Vec::is_empty))),
        "no tools for the reviewer: {decls}"
    );
    assert!(
        gemini[1].body.to_string().contains("Add dark mode v2"),
        "the second review saw the revised draft"
    );
    let shown = env.show("1");
    assert_eq!(shown["spend_by_role"]["reviewer"]["calls"], 2);
    assert_eq!(shown["calls"][1]["model"], "gemini-2.5-pro");
}

#[test]
fn claude_drafts_and_gemini_reviews() {
    both_seats(
        "claude:claude-sonnet-4-5",
        Api::Anthropic,
        agents::claude_env,
    );
}

#[test]
fn codex_drafts_and_gemini_reviews() {
    both_seats("codex:gpt-5", Api::OpenAiResponses, agents::codex_env);
}

/// `[workflows.lld] drafter_reads_repo = true`: the real Claude Code drafts the LLD as an agent
/// running in the repository with read and search tools only (no edit, no write, no shell);
/// without the setting it is offered no tools at all.
#[test]
fn claude_drafts_an_lld_reading_the_repository_with_read_only_tools() {
    for reads_repo in [true, false] {
        let server = FakeServer::start().expect("fake");
        let env = with_drafter("claude:claude-sonnet-4-5", &[APPROVED]);
        env.local_issue(1, "open");
        if reads_repo {
            let text = env.read("gavel.toml") + "\n[workflows.lld]\ndrafter_reads_repo = true\n";
            env.write("gavel.toml", &text);
            env.git(&["commit", "-qam", "the LLD drafter reads the repository"]);
        }
        server.push(Api::Anthropic, Reply::text(draft(1)));
        let vars = agents::claude_env(&env, &server);
        let out = run_with(&env, &vars, &["lld", "1", "--auto"]);
        assert_exit(&out, 0);
        assert!(
            env.read("docs/lld/active/LLD-1.md")
                .contains("# Add dark mode v1")
        );
        let reqs: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.api == Some(Api::Anthropic))
            .filter(|r| r.body.to_string().contains("## Issue"))
            .collect();
        assert!(!reqs.is_empty(), "the drafting request reached the fake");
        let tools: std::collections::BTreeSet<String> = reqs[0].body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|x| x["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if reads_repo {
            for read in ["Read", "Grep", "Glob"] {
                assert!(tools.contains(read), "{read} offered: {tools:?}");
            }
            for write in ["Edit", "Write", "Bash", "NotebookEdit"] {
                assert!(!tools.contains(write), "{write} never offered: {tools:?}");
            }
            let body = reqs[0].body.to_string();
            assert!(
                body.contains(&env.repo.display().to_string()),
                "the agent works in the repository"
            );
        } else {
            assert!(tools.is_empty(), "text only by default: {tools:?}");
        }
        assert_eq!(env.status(), "", "the agent changed nothing");
    }
}
