//! Credential rotation end to end: several keys (or CLI logins) for a provider, the next one
//! used at once when the fake answers one with the vendor's "quota exhausted" 429, the one
//! that answered recorded by name in the ledger and shown by `gavel show`, and a halt that
//! names every variable when all are exhausted.

use std::path::Path;

use gavel_fakeapi::{Api, FakeServer, Reply, Rule};

use crate::agents;
use crate::util::*;

const SECRET_A: &str = "sk-ant-e2e-SECRET-AAAA-0001";
const SECRET_B: &str = "sk-ant-e2e-SECRET-BBBB-0002";

/// Appends `text` to gavel.toml.
fn append_config(env: &Env, text: &str) {
    let config = env.read("gavel.toml");
    env.write("gavel.toml", &format!("{config}\n{text}"));
}

fn run_with(env: &Env, vars: &[(String, String)], args: &[&str]) -> std::process::Output {
    let mut cmd = env.gavel(args);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    cmd.output().expect("run gavel")
}

/// An Anthropic drafter with two key variables, and the scripted reviewer.
fn two_anthropic_keys(server: &FakeServer, verdicts: &[&str]) -> (Env, Vec<(String, String)>) {
    let env = Env::new();
    env.set_roles("anthropic:claude-sonnet-4-5", "scripted:script.yaml");
    env.script(&script(0, verdicts));
    append_config(
        &env,
        "[keys]\nanthropic = [\"TEAM_KEY_A\", \"TEAM_KEY_B\"]\n",
    );
    let vars = vec![
        ("ANTHROPIC_BASE_URL".to_owned(), server.url()),
        ("TEAM_KEY_A".to_owned(), SECRET_A.to_owned()),
        ("TEAM_KEY_B".to_owned(), SECRET_B.to_owned()),
    ];
    (env, vars)
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn an_exhausted_key_hands_the_call_to_the_next_and_the_ledger_names_it() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = two_anthropic_keys(&server, &[APPROVED]);
    server.rule(Rule::for_key(
        Api::Anthropic,
        SECRET_A,
        Reply::quota_exhausted().retry_after(30),
    ));
    server.push(Api::Anthropic, Reply::text(draft(1)));
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &vars, &["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    assert_eq!(env.issues(), ["0001-dark-mode.md"]);
    let keys: Vec<Option<String>> = server.requests().into_iter().map(|r| r.key).collect();
    assert_eq!(
        keys,
        [Some(SECRET_A.to_owned()), Some(SECRET_B.to_owned())],
        "key A once, then key B at once"
    );

    let call = &env.show("1")["calls"][0];
    assert_eq!(call["credential"], "TEAM_KEY_B", "{call}");
    assert_eq!(call["quota_exhausted"], serde_json::json!(["TEAM_KEY_A"]));
    assert_eq!(
        call["attempts"], 1,
        "rotating is not one of gavel's retries"
    );
    let out = env.run(&["show", "1"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("credential TEAM_KEY_B (after quota exhausted: TEAM_KEY_A)"),
        "{text}"
    );
    // The keys themselves are nowhere: not in the state, the lineage or the output.
    for secret in [SECRET_A, SECRET_B] {
        assert_eq!(files_containing(&env.repo, secret), Vec::<String>::new());
        assert!(!text.contains(secret));
    }
}

#[test]
fn when_every_key_is_exhausted_the_retries_run_and_the_halt_names_the_variables() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = two_anthropic_keys(&server, &[]);
    for secret in [SECRET_A, SECRET_B] {
        server.rule(Rule::for_key(
            Api::Anthropic,
            secret,
            Reply::quota_exhausted(),
        ));
    }
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &vars, &["issue", &brief, "--auto"]);
    assert_exit(&out, 4);
    let err = stderr(&out);
    assert!(
        err.contains("quota exhausted for every credential: TEAM_KEY_A, TEAM_KEY_B")
            && err.contains("gave up after 4 attempts"),
        "{err}"
    );
    assert!(!err.contains(SECRET_A) && !err.contains(SECRET_B), "{err}");
    // The default policy: the first attempt and 3 retries, each trying both keys.
    assert_eq!(server.requests().len(), 8);
    assert!(env.issues().is_empty());
}

#[test]
fn claude_code_logins_rotate_when_a_quota_is_exhausted() {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    env.set_roles("claude:claude-sonnet-4-5", "scripted:script.yaml");
    env.set_config_line("idle_secs", "idle_secs = 12");
    env.script(&script(0, &[APPROVED]));
    append_config(
        &env,
        "[logins]\nclaude = [\"CLAUDE_KEY_A\", \"CLAUDE_KEY_B\"]\n",
    );
    server.rule(Rule::for_key(
        Api::Anthropic,
        SECRET_A,
        Reply::quota_exhausted(),
    ));
    server.push(Api::Anthropic, Reply::text(draft(1)));
    // No ANTHROPIC_API_KEY of its own: each login hands the CLI its key.
    let mut vars: Vec<(String, String)> = agents::claude_env(&env, &server)
        .into_iter()
        .filter(|(k, _)| k != "ANTHROPIC_API_KEY")
        .collect();
    vars.push(("CLAUDE_KEY_A".into(), SECRET_A.into()));
    vars.push(("CLAUDE_KEY_B".into(), SECRET_B.into()));
    let brief = env.brief("dark-mode");
    let out = run_with(&env, &vars, &["issue", &brief, "--auto"]);
    assert_exit(&out, 0);
    let keys: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(Api::Anthropic))
        .filter_map(|r| r.key)
        .collect();
    assert_eq!(keys, [SECRET_A, SECRET_B], "login A's key, then login B's");
    let call = &env.show("1")["calls"][0];
    assert_eq!(call["credential"], "CLAUDE_KEY_B", "{call}");
    assert_eq!(call["attempts"], 1, "{call}");
}
