//! `gavel implement` killed (kill -9) at its crash points, then resumed: it finishes, no
//! finished model call is repeated, a half-done step starts again from its journaled
//! snapshot, and exactly one implementation is merged. Also a Go sample (`go test`).

use crate::util::*;

fn crash_and_resume(point: &str) {
    let env = python_project(&[TESTS, CODE]);
    let out = start_command(&env)
        .env("GAVEL_CRASH_AT", point)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        None,
        "{point}: killed\n{}",
        show_output(&out)
    );
    let resumed = env.run(&["resume", "1"]);
    assert_exit(&resumed, 3);
    env.assert_no_finished_call_repeated();
    approve_in_a_terminal(&env, "1");
    assert_eq!(
        env.read("calc.py"),
        "def add(a, b):\n    return a + b\n",
        "{point}"
    );
    let log = env.git(&["log", "--format=%s"]);
    assert_eq!(
        log.matches("gavel: implement #1").count(),
        1,
        "{point}: {log}"
    );
    assert_eq!(env.status(), "", "{point}");
}

#[test]
fn an_implementation_killed_at_each_crash_point_resumes_and_merges_once() {
    for point in [
        "before:N1_scaffold",
        "after-journal:snapshot",
        "after-journal:call",
        "after:N1_scaffold",
        "after-journal:red",
        "after:N2_red_gate",
        "after-journal:commit-red",
        "before:N3_implement",
        "after:N4_green_gate",
        "after-journal:stage",
    ] {
        crash_and_resume(point);
    }
}

#[test]
fn a_go_module_goes_red_on_a_build_failure_and_green_on_go_test() {
    let env = python_project(&[]);
    env.write("go.mod", "module sample\n\ngo 1.19\n");
    env.write("calc.go", "package sample\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "a module"]);
    let tests = "=== gavel:write calc_test.go\npackage sample\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"2 + 3\")\n\t}\n}\n=== gavel:end\n";
    let code = "=== gavel:write calc.go\npackage sample\n\nfunc Add(a, b int) int { return a + b }\n=== gavel:end\n";
    env.script(&format!(
        "model: scripted-test\nroles:\n  implementer:\n    - text: {}\n    - text: {}\n",
        yaml(tests),
        yaml(code)
    ));
    let cache = env.root.join("go-cache");
    std::fs::create_dir_all(&cache).expect("cache");
    let out = implement_command(&env, "go test ./...", &[])
        .env("GOCACHE", &cache)
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .output()
        .expect("run");
    assert_exit(&out, 3);
    let text = show_output(&out);
    assert!(text.contains("red gate: build failed"), "{text}");
    assert!(text.contains("green gate: "), "{text}");
    approve_in_a_terminal(&env, "1");
    assert!(env.read("calc.go").contains("func Add"));
}
