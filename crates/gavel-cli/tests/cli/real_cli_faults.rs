//! The fault matrix: every fault the fake can produce, for every real agent CLI. Transient
//! faults (429 with retry-after, 500, a stalled stream, a cut stream, malformed JSON) are
//! retried by gavel and the run completes; a permanent one (401) halts at once with a hint and
//! is never retried; another model answering is flagged where the CLI reports the model.

use gavel_fakeapi::{Api, FakeServer, Reply};

use crate::agents;
use crate::util::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cli {
    Claude,
    Codex,
    Gemini,
}

impl Cli {
    fn api(self) -> Api {
        match self {
            Cli::Claude => Api::Anthropic,
            Cli::Codex => Api::OpenAiResponses,
            Cli::Gemini => Api::Gemini,
        }
    }

    fn role(self) -> &'static str {
        match self {
            Cli::Claude => "claude:claude-sonnet-4-5",
            Cli::Codex => "codex:gpt-5",
            Cli::Gemini => "gemini:gemini-2.5-pro",
        }
    }

    fn vars(self, env: &Env, server: &FakeServer) -> Vec<(String, String)> {
        match self {
            Cli::Claude => agents::claude_env(env, server),
            Cli::Codex => agents::codex_env(env, server),
            Cli::Gemini => agents::gemini_env(env, server),
        }
    }

    /// Whether the CLI reports the model that answered.
    fn reports_model(self) -> bool {
        !matches!(self, Cli::Codex)
    }
}

/// Runs brief → issue with `cli` drafting, the fake answering `first` and then (if the run
/// retries) a good draft. Returns the environment, the server and gavel's output.
fn run(cli: Cli, first: Reply) -> (Env, FakeServer, std::process::Output) {
    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    env.set_roles(cli.role(), "scripted:script.yaml");
    env.set_config_line("idle_secs", "idle_secs = 10");
    env.script(&script(0, &[APPROVED]));
    server.push(cli.api(), first);
    server.push(cli.api(), Reply::text(draft(1)));
    let vars = cli.vars(&env, &server);
    let brief = env.brief("dark-mode");
    let mut cmd = env.gavel(&["issue", &brief, "--auto"]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    let out = cmd.output().expect("run gavel");
    (env, server, out)
}

fn main_requests(server: &FakeServer, cli: Cli) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.api == Some(cli.api()))
        .count()
}

/// A transient fault: retried once by gavel, then the run files the issue.
pub fn transient(cli: Cli, fault: Reply) {
    let (env, server, out) = run(cli, fault.clone());
    assert_exit(&out, 0);
    assert_eq!(env.issues(), ["0001-dark-mode.md"], "{cli:?} {fault:?}");
    assert_eq!(
        main_requests(&server, cli),
        2,
        "{cli:?} {fault:?}: the fault, then gavel's retry"
    );
    // The answer is the last call; an attempt the CLI reported usage for before it failed
    // (Claude Code's error result after a cut stream) is in the ledger before it (issue 32).
    let shown = env.show("1");
    let calls: Vec<&serde_json::Value> = shown["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter(|c| c["role"] == "drafter")
        .collect();
    let call = calls.last().expect("the answered call");
    assert_eq!(call["attempts"], 2, "{cli:?} {fault:?}: {call}");
    assert!(calls.len() <= 2, "{cli:?} {fault:?}: {shown}");
    for billed in &calls[..calls.len() - 1] {
        assert!(
            billed["input_tokens"].as_u64().unwrap_or(0) > 0
                || billed["cost_micros"].as_u64().unwrap_or(0) > 0,
            "a ledgered failure reported usage: {billed}"
        );
    }
}

/// A permanent fault: no retry, the run halts with a hint and files nothing.
pub fn permanent(cli: Cli, fault: Reply, hint: &str) {
    let (env, server, out) = run(cli, fault.clone());
    assert_exit(&out, 4);
    let err = stderr(&out);
    assert!(
        err.contains("hint:") && err.to_lowercase().contains(hint),
        "{cli:?} {fault:?}: {err}"
    );
    assert_eq!(
        main_requests(&server, cli),
        1,
        "{cli:?} {fault:?}: a permanent failure is not retried"
    );
    assert!(env.issues().is_empty());
    assert_eq!(
        env.ls("docs/lineage/active/dark-mode"),
        ["001-brief.md"],
        "a failed call produces no draft"
    );
}

/// Another model answers: flagged when the CLI says so.
pub fn other_model(cli: Cli) {
    let answered = match cli {
        Cli::Claude => "claude-haiku-4-5",
        Cli::Codex => "gpt-5-mini",
        Cli::Gemini => "gemini-2.5-flash",
    };
    let (env, _server, out) = run(cli, Reply::text(draft(1)).with_model(answered));
    assert_exit(&out, 0);
    let call = &env.show("1")["calls"][0];
    if cli.reports_model() {
        assert_eq!(call["model"], answered, "{call}");
        assert!(
            call["warning"]
                .as_str()
                .is_some_and(|w| w.contains(answered)),
            "{call}"
        );
        let draft = env.read("docs/lineage/done/1-dark-mode/002-draft.md");
        assert!(
            draft.starts_with("<!-- gavel: WARNING: model verification failed"),
            "{draft}"
        );
    } else {
        assert!(
            call["warning"].is_null(),
            "{cli:?} does not report the answering model: {call}"
        );
    }
}

macro_rules! fault_matrix {
    ($($name:ident: $cli:expr;)*) => {$(
        mod $name {
            use super::*;

            #[test]
            fn rate_limited_with_retry_after_then_ok() {
                transient($cli, Reply::error(429, "slow down").retry_after(1));
            }

            #[test]
            fn server_error_then_ok() {
                transient($cli, Reply::error(500, "boom"));
            }

            #[test]
            fn stalled_stream_then_ok() {
                transient($cli, Reply::Stall { after_events: 2 });
            }

            #[test]
            fn cut_stream_then_ok() {
                transient($cli, Reply::Cut { after_events: 3 });
            }

            #[test]
            fn malformed_json_then_ok() {
                transient($cli, Reply::Malformed);
            }

            #[test]
            fn bad_key_halts_without_retry() {
                permanent($cli, Reply::error(401, "invalid api key"), "credentials");
            }

            #[test]
            fn another_model_answers() {
                other_model($cli);
            }
        }
    )*};
}

fault_matrix! {
    claude: Cli::Claude;
    codex: Cli::Codex;
    gemini: Cli::Gemini;
}
