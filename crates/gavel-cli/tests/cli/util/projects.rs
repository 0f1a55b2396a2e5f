//! The sample projects the `gavel implement` tests start from and the commands that drive
//! them, defined once: a repository with issue 1 and its design (Python with a scripted or a
//! real Claude Code implementer, or a Rust crate), `gavel implement` started on it, and the
//! typed approval at its diff gate.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gavel_fakeapi::FakeServer;
use serde_json::{Value, json};

use super::Env;

/// `s` as a YAML string literal (a JSON one is), for script files.
pub use super::json as yaml;

pub const PYTEST: &str = "python3 -m pytest -q";

/// The scripted implementer's answers for the Python project: a failing test, then the code.
pub const TESTS: &str = "=== gavel:write tests/test_calc.py\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n=== gavel:end\n";
pub const CODE: &str = "=== gavel:write calc.py\ndef add(a, b):\n    return a + b\n=== gavel:end\n";

/// The same test and code as file contents, for an agent CLI's own writes.
pub const TEST_FILE: &str =
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
pub const CODE_FILE: &str = "def add(a, b):\n    return a + b\n";

/// The scripted implementer's answers for the Rust crate.
pub const RUST_TESTS: &str = "=== gavel:write tests/add.rs\nuse sample::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n=== gavel:end\n";
pub const RUST_CODE: &str = "=== gavel:write src/lib.rs\n//! A sample crate.\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n=== gavel:end\n";

/// The model Claude Code is asked for when it is the implementer.
pub const CLAUDE_MODEL: &str = "claude-sonnet-4-5";

/// A script for the scripted provider in which the implementer answers `answers` in order.
pub fn implementer_script(model: &str, answers: &[&str]) -> String {
    let mut script = format!("model: {model}\nroles:\n  implementer:\n");
    for a in answers {
        script.push_str(&format!("    - text: {}\n", yaml(a)));
    }
    script
}

/// A repository with issue 1 open and its design at `docs/design.md`, committed together with
/// whatever `setup` writes first (the project's own files, gavel.toml's changes).
pub fn design_repo(design: &str, setup: impl FnOnce(&Env)) -> Env {
    let env = Env::new();
    env.local_issue(1, "open");
    setup(&env);
    env.write("docs/design.md", design);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "the design"]);
    env
}

/// The Python project's design: `calc.py` gets `add`.
const PYTHON_DESIGN: &str =
    "# 1 - Feature: add\n\n## 2. Proposed Changes\n`calc.py` gets `add(a, b)`.\n";

/// The Python project with a scripted implementer that answers `answers` in order.
pub fn python_project(answers: &[&str]) -> Env {
    let env = design_repo(PYTHON_DESIGN, |env| {
        env.write("README.md", "A tiny project.\n");
    });
    env.script(&implementer_script("scripted-test", answers));
    env
}

/// The Python project with the real Claude Code as the implementer and `extra` appended to
/// gavel.toml; with the variables that point Claude Code at `server`.
pub fn claude_project(server: &FakeServer, extra: &str) -> (Env, Vec<(String, String)>) {
    let env = design_repo(PYTHON_DESIGN, |env| {
        env.write("README.md", "A tiny project.\n");
        env.set_config_line(
            "reviewer =",
            &format!(
                "reviewer = \"scripted:script.yaml\"\nimplementer = \"claude:{CLAUDE_MODEL}\""
            ),
        );
        env.write("gavel.toml", &(env.read("gavel.toml") + extra));
    });
    let vars = crate::agents::claude_env(&env, server);
    (env, vars)
}

/// A Rust crate (`sample`, whose `add` the design asks for) with a scripted implementer that
/// answers `answers` in order; `target/` is ignored.
pub fn rust_crate(answers: &[&str]) -> Env {
    let env = design_repo("# 1 - Feature: add\n`add(a, b)` in src/lib.rs.\n", |env| {
        env.write(
            "Cargo.toml",
            "[package]\nname = \"sample\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        );
        env.write("src/lib.rs", "//! A sample crate.\n");
        env.write(".gitignore", &(env.read(".gitignore") + "target/\n"));
    });
    env.script(&implementer_script("scripted-test", answers));
    env
}

/// The worktree gavel makes for issue 1.
pub fn worktree(env: &Env) -> PathBuf {
    env.repo.join(".gavel/worktrees/1-impl")
}

/// Claude Code's `Write` tool input: `content` at `path`.
pub fn claude_write(path: &Path, content: &str) -> Value {
    json!({"file_path": path.display().to_string(), "content": content})
}

/// `gavel implement 1 --lld docs/design.md --test-cmd TEST_CMD --auto`, then `extra`, to run.
pub fn implement_command(env: &Env, test_cmd: &str, extra: &[&str]) -> Command {
    let mut args = vec![
        "implement",
        "1",
        "--lld",
        "docs/design.md",
        "--test-cmd",
        test_cmd,
        "--auto",
    ];
    args.extend_from_slice(extra);
    env.gavel(&args)
}

/// [`implement_command`] with the Python tests and nothing more, to run.
pub fn start_command(env: &Env) -> Command {
    implement_command(env, PYTEST, &[])
}

/// [`implement_command`] with `test_cmd`, run.
pub fn start_with(env: &Env, test_cmd: &str) -> Output {
    implement_command(env, test_cmd, &[])
        .output()
        .expect("run gavel")
}

/// [`start_command`], run.
pub fn start(env: &Env) -> Output {
    start_command(env).output().expect("run gavel")
}

/// `cargo test` as the test command, with this machine's Rust toolchain.
pub fn with_rust_toolchain(mut cmd: Command) -> Command {
    for var in ["RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    if std::env::var_os("RUSTUP_HOME").is_none() {
        let home = std::env::var("HOME").unwrap_or_default();
        cmd.env("RUSTUP_HOME", format!("{home}/.rustup"));
        cmd.env("CARGO_HOME", format!("{home}/.cargo"));
    }
    cmd
}

/// Types `approve` at the run's diff gate in a terminal.
pub fn approve_in_a_terminal(env: &Env, run: &str) {
    let editor = crate::pty::fake_editor(env);
    let mut p = crate::pty::spawn(env, &["resume", run], &editor.to_string_lossy());
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the diff gate asks for the word");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
}
