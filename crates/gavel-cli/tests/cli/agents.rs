//! The real agent CLIs for end-to-end tests: installed from npm at the versions pinned in
//! `tools/agent-clis/package-lock.json` (once, under a lock, when missing or stale), and
//! pointed at a local fake API server with their own HOME.

use std::fs;
use std::path::PathBuf;

use gavel_fakeapi::FakeServer;

use crate::util::Env;

/// The pinned agent CLIs' `.bin` folder in the tools cache, after making sure they are installed.
pub fn bin_dir() -> PathBuf {
    gavel_fakeapi::npm_tool_bin("agent-clis").expect("the agent CLIs")
}

/// A gavel command whose PATH starts with the agent CLIs.
pub fn path_with_agents() -> String {
    let bin = bin_dir().canonicalize().expect("bin dir");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Environment that points Codex at `server` (a custom provider with CLI retries off, so
/// gavel's own retry policy is what is tested).
pub fn codex_env(env: &Env, server: &FakeServer) -> Vec<(String, String)> {
    let home = env.root.join("codex-home");
    fs::create_dir_all(&home).expect("codex home");
    let config = format!(
        r#"model_provider = "fake"

[model_providers.fake]
name = "gavel test fake"
base_url = "{}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 3000
"#,
        server.url()
    );
    fs::write(home.join("config.toml"), config).expect("codex config");
    // A Codex configured to read its key from a variable of its own choosing gets it only when
    // gavel.toml passes it (the box keeps every other variable out).
    let toml = env.read("gavel.toml");
    let toml = if toml.contains("\n[implement]\n") {
        toml.replace(
            "\n[implement]\n",
            "\n[implement]\npass_env = [\"FAKE_OPENAI_KEY\"]\n",
        )
    } else {
        toml + "\n[implement]\npass_env = [\"FAKE_OPENAI_KEY\"]\n"
    };
    env.write("gavel.toml", &toml);
    vec![
        ("CODEX_HOME".into(), home.display().to_string()),
        ("FAKE_OPENAI_KEY".into(), "test-key".into()),
        ("PATH".into(), path_with_agents()),
    ]
}

/// Environment that points Claude Code at `server` (its own HOME and TMPDIR come from the
/// test environment).
pub fn claude_env(env: &Env, server: &FakeServer) -> Vec<(String, String)> {
    let tmp = env.root.join("claude-tmp");
    fs::create_dir_all(&tmp).expect("claude tmp");
    vec![
        ("ANTHROPIC_BASE_URL".into(), server.url()),
        ("ANTHROPIC_API_KEY".into(), "test-key".into()),
        ("TMPDIR".into(), tmp.display().to_string()),
        ("PATH".into(), path_with_agents()),
    ]
}

/// Environment that points the Gemini CLI at `server`: an API-key sign-in in the test HOME's
/// user settings (gavel's own system settings do the rest).
pub fn gemini_env(env: &Env, server: &FakeServer) -> Vec<(String, String)> {
    let home = env.home();
    fs::create_dir_all(home.join(".gemini")).expect("gemini settings dir");
    fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
    )
    .expect("gemini settings");
    let tmp = env.root.join("gemini-tmp");
    fs::create_dir_all(&tmp).expect("gemini tmp");
    vec![
        ("GOOGLE_GEMINI_BASE_URL".into(), server.url()),
        ("GEMINI_API_KEY".into(), "test-key".into()),
        ("TMPDIR".into(), tmp.display().to_string()),
        ("PATH".into(), path_with_agents()),
    ]
}
