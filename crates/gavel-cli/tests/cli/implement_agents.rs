//! `gavel implement` with a REAL agent CLI (Claude Code) as the implementer, pointed at the fake
//! API: the model's tool-use turns make Claude Code write the tests and the code in the
//! worktree, gavel's gates run the real test runner, and the agent runs confined by Landlock
//! (`[implement] sandbox = "landlock"`, the default). An edited test is put back; writes
//! outside the worktree never land, even those Claude Code's own rules let through; and
//! `sandbox = "none"` is recorded, and then only gavel's checkout check stands in the way.
//! Codex, whose own sandbox cannot run inside gavel's, edits and is fenced by Landlock alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gavel_fakeapi::{Api, FakeServer, Recorded, Reply};
use rexpect::session::spawn_command;
use serde_json::{Value, json};

use crate::agents;
use crate::util::*;

/// `Bash` running `command`.
fn bash(command: &str) -> Value {
    json!({"command": command, "description": "run the tests"})
}

/// The scaffold call: the test file is written, then the model is done.
fn scaffold(server: &FakeServer, env: &Env) {
    let test = worktree(env).join("tests/test_calc.py");
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&test, TEST_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("The failing test is written."));
}

fn implement(env: &Env, vars: &[(String, String)]) -> std::process::Output {
    let mut cmd = start_command(env);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    cmd.output().expect("run gavel implement")
}

/// Types `approve` at the run's diff gate in a terminal.
fn approve(env: &Env, vars: &[(String, String)]) {
    let editor = crate::pty::fake_editor(env);
    let mut cmd = env.gavel(&["resume", "1"]);
    cmd.envs(vars.iter().map(|(k, v)| (k, v)))
        .env("EDITOR", &editor)
        .env("TERM", "dumb");
    let mut p = spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("Your choice [approve/reject/P]: ")
        .expect("the diff gate asks for the word");
    p.send_line("approve").expect("approve");
    p.exp_eof().expect("eof");
    assert_eq!(crate::pty::exit_code(&p), 0);
}

/// Every file of the person's checkout but gavel's state and git's own folder, with its bytes.
fn checkout_files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("inside").to_path_buf();
            if rel == Path::new(".gavel") || rel == Path::new(".git") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The tool results Claude Code sent back, in order.
fn tool_results(server: &FakeServer) -> Vec<Value> {
    tool_results_of(server, CLAUDE_MODEL)
}

/// The tool results Claude Code (asking for `model`) sent back, in order.
fn tool_results_of(server: &FakeServer, model: &str) -> Vec<Value> {
    let requests: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(Api::Anthropic) && r.model == model)
        .collect();
    let mut out = Vec::new();
    for r in &requests {
        let messages = r.body["messages"].as_array().map_or(&[][..], Vec::as_slice);
        if let Some(Value::Array(blocks)) = messages.last().map(|m| &m["content"]) {
            out.extend(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_result")
                    .cloned(),
            );
        }
    }
    out
}

/// A tool result's text.
fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[test]
fn claude_code_implements_confined_and_the_real_green_gate_passes_before_the_merge() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = claude_project(&server, "");
    scaffold(&server, &env);
    let code = worktree(&env).join("calc.py");
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&code, CODE_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Implemented."));

    let out = implement(&env, &vars);

    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("red gate: "), "{text}");
    assert!(text.contains("green gate: "), "{text}");
    assert!(
        !env.exists("calc.py"),
        "nothing in the checkout before the merge"
    );
    assert_eq!(server.pending(Api::Anthropic), 0, "{text}");
    let results = tool_results(&server);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(
        results.iter().all(|r| r["is_error"] != true),
        "{results:#?}"
    );
    approve(&env, &vars);
    assert_eq!(env.read("calc.py"), CODE_FILE);
    assert_eq!(env.read("tests/test_calc.py"), TEST_FILE);
    assert_eq!(env.status(), "", "everything is committed");
}

#[test]
fn a_test_edited_by_the_agent_at_the_implement_step_is_put_back_and_fed_back() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = claude_project(&server, "");
    scaffold(&server, &env);
    let tree = worktree(&env);
    let test = tree.join("tests/test_calc.py");
    let code = tree.join("calc.py");
    // Claude Code writes over a file only after reading it.
    server.push(
        Api::Anthropic,
        Reply::tool_use("Read", json!({"file_path": test.display().to_string()})),
    );
    server.push(
        Api::Anthropic,
        Reply::tool_uses(vec![
            (
                "Write",
                claude_write(&test, "def test_add():\n    assert True\n"),
            ),
            ("Write", claude_write(&code, "x = 1\n")),
        ]),
    );
    server.push(
        Api::Anthropic,
        Reply::text("Done (the test was in the way)."),
    );
    // The refused test is put back; the accepted `calc.py` stays, so it is read first.
    server.push(
        Api::Anthropic,
        Reply::tool_use("Read", json!({"file_path": code.display().to_string()})),
    );
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&code, CODE_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Implemented."));

    let out = implement(&env, &vars);

    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("the implementation may not change a test file"),
        "{text}"
    );
    assert_eq!(server.pending(Api::Anthropic), 0, "{text}");
    // The second implement call was told why.
    let requests: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| r.api == Some(Api::Anthropic) && r.model == CLAUDE_MODEL)
        .collect();
    let last_prompt = requests
        .iter()
        .rev()
        .find(|r| r.body["messages"].as_array().is_some_and(|m| m.len() == 1))
        .expect("the last call's first request");
    assert!(
        last_prompt.body["messages"]
            .to_string()
            .contains("may not change a test file"),
        "the feedback reached the model"
    );
    approve(&env, &vars);
    assert_eq!(env.read("tests/test_calc.py"), TEST_FILE, "the test stands");
    assert_eq!(env.read("calc.py"), CODE_FILE);
}

/// Escapes the agent tries at the implement step: writes with Claude Code's `Write` tool, which
/// its own rules refuse, and writes by the test command it may run (pytest's `--junitxml`),
/// which its rules allow and only the operating system can stop.
fn escape_attempts(server: &FakeServer, env: &Env) -> Vec<PathBuf> {
    let tree = worktree(env);
    // `../../x` from the worktree (`.gavel/worktrees/1-impl`) is `.gavel/x` in the checkout.
    let dotdot = tree.join("../../x");
    let in_repo = env.repo.join("stolen.txt");
    let in_home = env.home().join("stolen.txt");
    let xml_repo = env.repo.join("stolen.xml");
    let xml_home = env.home().join("stolen.xml");
    server.push(
        Api::Anthropic,
        Reply::tool_uses(vec![
            ("Write", claude_write(&dotdot, "x\n")),
            ("Write", claude_write(&in_repo, "x\n")),
            ("Write", claude_write(&in_home, "x\n")),
        ]),
    );
    server.push(
        Api::Anthropic,
        Reply::tool_uses(vec![
            (
                "Bash",
                bash(&format!("{PYTEST} --junitxml={}", xml_repo.display())),
            ),
            (
                "Bash",
                bash(&format!("{PYTEST} --junitxml={}", xml_home.display())),
            ),
        ]),
    );
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&tree.join("calc.py"), CODE_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Implemented."));
    vec![
        env.repo.join(".gavel/x"),
        in_repo,
        in_home,
        xml_repo,
        xml_home,
    ]
}

#[test]
fn writes_outside_the_worktree_never_land_and_landlock_stops_what_claude_code_allows() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = claude_project(&server, "");
    scaffold(&server, &env);
    let targets = escape_attempts(&server, &env);
    let before = checkout_files(&env.repo);

    let out = implement(&env, &vars);

    let text = show_output(&out);
    for t in &targets {
        assert!(!t.exists(), "{} was written\n{text}", t.display());
    }
    assert_eq!(
        checkout_files(&env.repo),
        before,
        "the checkout is byte-identical"
    );
    assert_eq!(server.pending(Api::Anthropic), 0, "{text}");
    let results = tool_results(&server);
    // Scaffold write, three refused writes, two test runs, the code.
    assert_eq!(results.len(), 7, "{results:#?}");
    for r in &results[1..4] {
        assert_eq!(r["is_error"], true, "Claude Code refuses the write: {r:#}");
    }
    for r in &results[4..6] {
        let said = result_text(r);
        assert!(
            said.contains("Permission denied") || said.contains("Read-only file system"),
            "Claude Code ran the allowed test command; the box denied its write: {said}"
        );
    }
    // Nothing landed, and the attempts themselves stop the run, naming the paths.
    assert_exit(&out, 4);
    assert!(
        text.contains("the implementer tried to write outside its worktree"),
        "{text}"
    );
    for name in ["../../x", "stolen.txt"] {
        assert!(text.contains(name), "{name} named: {text}");
    }
}

#[test]
fn sandbox_none_is_recorded_and_then_an_escape_halts_the_run_naming_the_path() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = claude_project(&server, "\n[implement]\nsandbox = \"none\"\n");
    scaffold(&server, &env);
    let targets = escape_attempts(&server, &env);

    let out = implement(&env, &vars);

    let text = show_output(&out);
    let timeline = env.show("1").to_string();
    assert!(
        timeline.contains("sandbox = \\\"none\\\": the agent implementer claude:"),
        "{timeline}"
    );
    // Claude Code's rules still refuse its Write tool outside; the test command's write lands,
    // and gavel's checkout check halts the run naming it.
    assert!(!targets[0].exists() && !targets[1].exists() && !targets[2].exists());
    assert!(
        targets[3].exists(),
        "unconfined, the test command wrote in the checkout"
    );
    assert_ne!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("your checkout changed"), "{text}");
    assert!(text.contains("stolen.xml"), "{text}");
    let _ = std::fs::remove_file(&targets[4]);
}

#[test]
fn codex_confined_by_gavel_edits_its_folder_and_its_shell_cannot_write_outside() {
    use gavel_llm::cli::{CliProvider, CliSettings};
    use gavel_llm::{AgentProfile, Call, Provider, Request, Role};

    let server = FakeServer::start().expect("fake");
    let env = Env::new();
    let tree = env.root.join("tree");
    std::fs::create_dir_all(&tree).expect("tree");
    let stolen = env.home().join("stolen.txt");
    // Codex's own sandbox cannot start inside gavel's, so gavel turns it off: the shell's
    // write outside is stopped by Landlock alone.
    let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.py\n+print('hi')\n*** End Patch\nEOF\n";
    server.push(
        Api::OpenAiResponses,
        Reply::tool_use(
            "exec_command",
            json!({"cmd": patch, "workdir": tree.display().to_string()}),
        ),
    );
    server.push(
        Api::OpenAiResponses,
        Reply::tool_use(
            "exec_command",
            json!({"cmd": format!("printf x > {}", stolen.display()), "workdir": tree.display().to_string()}),
        ),
    );
    server.push(Api::OpenAiResponses, Reply::text("done"));
    let mut vars = agents::codex_env(&env, &server);
    vars.push(("HOME".into(), env.home().display().to_string()));
    let provider = CliProvider::codex(
        "gpt-5",
        CliSettings {
            env: vars,
            workdir: Some(env.root.join("agent-workdir")),
            ..CliSettings::default()
        },
    );
    let launcher = gavel_exec::confine::Launcher {
        program: assert_cmd::cargo::cargo_bin("gavel"),
        args: vec!["__confine".into()],
    };
    let request = Request {
        role: Role::DRAFTER,
        prompt: "Create hello.py.".into(),
        seq: 0,
        step_id: "edit".into(),
        max_output_tokens: 1000,
        profile: AgentProfile::edit_within(&tree, 4).confined(launcher, vec![tree.clone()]),
        output_schema: None,
    };

    let response = provider
        .complete(&request, &Call::new(&|| false))
        .unwrap_or_else(|e| panic!("codex: {e:?}"));

    assert_eq!(response.text.trim(), "done");
    assert_eq!(
        std::fs::read_to_string(tree.join("hello.py"))
            .ok()
            .as_deref(),
        Some("print('hi')\n")
    );
    assert!(!stolen.exists(), "the shell wrote in HOME");
    let last = server
        .requests()
        .into_iter()
        .rfind(|r| r.api == Some(Api::OpenAiResponses) && r.model == "gpt-5")
        .expect("requests");
    let said = last.body["input"].to_string();
    assert!(
        said.contains("Permission denied") || said.contains("Read-only file system"),
        "{said}"
    );
}

#[test]
fn regression_claude_codes_test_file_with_a_syntax_error_goes_back_to_it_not_to_the_implementer() {
    let server = FakeServer::start().expect("fake");
    let (env, vars) = claude_project(&server, "");
    let test = worktree(&env).join("tests/test_calc.py");
    let broken = "from calc import add\n\n\ndef test_add(:\n    assert add(2, 3) == 5\n";
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&test, broken)),
    );
    server.push(Api::Anthropic, Reply::text("The failing test is written."));
    // Told why, it rewrites the file (Claude Code writes over a file only after reading it).
    let read = json!({"file_path": test.display().to_string()});
    server.push(Api::Anthropic, Reply::tool_use("Read", read));
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&test, TEST_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Fixed."));
    let code = worktree(&env).join("calc.py");
    server.push(
        Api::Anthropic,
        Reply::tool_use("Write", claude_write(&code, CODE_FILE)),
    );
    server.push(Api::Anthropic, Reply::text("Implemented."));

    let out = implement(&env, &vars);

    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(
        text.contains("tests/test_calc.py:4: SyntaxError: invalid syntax"),
        "{text}"
    );
    assert!(text.contains("green gate: 1 passed"), "{text}");
    assert_eq!(server.pending(Api::Anthropic), 0, "{text}");
    let told = server
        .requests()
        .into_iter()
        .any(|r| r.body.to_string().contains("fix these errors in the tests"));
    assert!(told, "the second test-writing call was told the errors");
    approve(&env, &vars);
    assert_eq!(env.read("tests/test_calc.py"), TEST_FILE);
}
