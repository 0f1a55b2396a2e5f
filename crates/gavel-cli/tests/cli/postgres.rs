//! Runs kept in a shared PostgreSQL database (a real server the test binary starts): the same
//! flows as on SQLite, many processes at once, a clone of another repository refused, every
//! project listed, and a server that goes away in the middle of a run.

use std::process::{Command, Output, Stdio};

use gavel_llm::Role;
use gavel_store_testkit::TempPostgres;

use crate::util::*;

/// `gavel ARGS` in `env` on the database at `url`.
fn on(env: &Env, url: &str, args: &[&str]) -> Command {
    let mut cmd = env.gavel(args);
    cmd.env("GAVEL_DATABASE_URL", url);
    cmd
}

fn run_on(env: &Env, url: &str, args: &[&str]) -> Output {
    on(env, url, args).output().expect("run gavel")
}

fn runs_on(env: &Env, url: &str, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["runs", "--json"];
    all.extend_from_slice(args);
    let out = run_on(env, url, &all);
    assert_exit(&out, 0);
    serde_json::from_slice(&out.stdout).expect("runs JSON")
}

/// A repository whose `origin` is `remote` (never contacted: it names the project).
fn repo_with_origin(remote: &str) -> Env {
    let env = Env::new();
    env.git(&["remote", "add", "origin", remote]);
    env
}

#[test]
fn a_run_on_postgres_pauses_lists_and_resumes_with_no_state_file() {
    let url = TempPostgres::shared().fresh_database();
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let out = run_on(&env, &url, &["issue", &brief]);
    assert_exit(&out, 3);
    assert!(!env.state_db().exists(), "no SQLite file is made");
    let listed = runs_on(&env, &url, &[]);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["status"], "waiting");
    let out = run_on(&env, &url, &["resume", "1", "--choice", "send"]);
    assert_exit(&out, 3);
    let out = run_on(&env, &url, &["resume", "1", "--choice", "approve"]);
    assert_exit(&out, 0);
    assert_eq!(runs_on(&env, &url, &[])[0]["status"], "done");
    assert_eq!(env.issues().len(), 1);
    let doctor = run_on(&env, &url, &["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("Store:") && text.contains("(project github.com/octo/app)"),
        "{text}"
    );
}

#[test]
fn a_clone_of_another_repository_is_refused_and_all_projects_lists_both() {
    let url = TempPostgres::shared().fresh_database();
    let app = repo_with_origin("git@github.com:octo/app.git");
    app.script(&script(1, &[APPROVED]));
    let brief = app.brief("dark-mode");
    assert_exit(&run_on(&app, &url, &["issue", &brief]), 3);
    let web = repo_with_origin("https://github.com/octo/web");
    web.script(&script(1, &[APPROVED]));
    let out = run_on(&web, &url, &["resume", "1", "--choice", "send"]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("run 1 belongs to project `github.com/octo/app`")
            && err.contains("not to this clone's `github.com/octo/web`"),
        "{err}"
    );
    assert!(runs_on(&web, &url, &[]).is_empty(), "web has no runs");
    let brief = web.brief("search");
    assert_exit(&run_on(&web, &url, &["issue", &brief]), 3);
    let all = runs_on(&web, &url, &["--all-projects"]);
    let listed: Vec<(String, String)> = all
        .iter()
        .map(|r| {
            (
                r["project"].as_str().unwrap_or_default().to_owned(),
                r["slug"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("github.com/octo/web".to_owned(), "search".to_owned()),
            ("github.com/octo/app".to_owned(), "dark-mode".to_owned())
        ]
    );
    let table = run_on(&web, &url, &["runs", "--all-projects"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.starts_with("PROJECT") && text.contains("github.com/octo/app"),
        "{text}"
    );
}

#[test]
fn eight_runs_in_parallel_processes_all_finish_with_distinct_numbers() {
    let url = TempPostgres::shared().fresh_database();
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.script(&script_with_delay(1, &[APPROVED], 20));
    let slugs: Vec<String> = (0..8).map(|i| format!("idea-{i}")).collect();
    let children: Vec<_> = slugs
        .iter()
        .map(|slug| {
            let brief = env.brief(slug);
            on(&env, &url, &["issue", &brief, "--auto"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert_exit(&out, 0);
    }
    let runs = runs_on(&env, &url, &[]);
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r["status"] == "done"), "{runs:?}");
    let mut issues = env.issues();
    issues.sort();
    issues.dedup_by_key(|name| name.split('-').next().map(str::to_owned));
    assert_eq!(issues.len(), 8, "eight distinct issue numbers: {issues:?}");
    let subjects = env.git(&["log", "--format=%s"]);
    assert_eq!(
        subjects.matches("gavel: file issue").count(),
        8,
        "{subjects}"
    );
}

#[test]
fn a_server_restarted_mid_run_is_waited_for_and_nothing_is_repeated() {
    let pg = TempPostgres::start();
    let url = pg.url();
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.script(&script_with_delay(1, &[APPROVED], 1_500));
    let brief = env.brief("dark-mode");
    let child = on(&env, &url, &["issue", &brief, "--auto"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_for_call_start(&env, Role::DRAFTER);
    pg.stop();
    std::thread::sleep(std::time::Duration::from_secs(2));
    pg.start_server();
    let out = child.wait_with_output().expect("wait");
    assert_exit(&out, 0);
    assert_eq!(runs_on(&env, &url, &[])[0]["status"], "done");
    assert_eq!(env.issues().len(), 1);
    env.assert_no_finished_call_repeated();
}

#[test]
fn a_server_down_longer_than_the_window_fails_the_run_clearly_and_resume_finishes_it() {
    let pg = TempPostgres::start();
    let url = pg.url();
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.set_config_line("# reconnect_secs", "reconnect_secs = 1");
    env.script(&script_with_delay(1, &[APPROVED], 1_500));
    let brief = env.brief("dark-mode");
    let child = on(&env, &url, &["issue", &brief, "--auto"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_for_call_start(&env, Role::DRAFTER);
    pg.stop();
    let out = child.wait_with_output().expect("wait");
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(err.contains("PostgreSQL at postgres://postgres@"), "{err}");
    pg.start_server();
    let listed = runs_on(&env, &url, &[]);
    assert_eq!(listed[0]["status"], "interrupted", "{listed:?}");
    let out = run_on(&env, &url, &["resume", "1"]);
    assert_exit(&out, 0);
    assert_eq!(runs_on(&env, &url, &[])[0]["status"], "done");
    assert_eq!(env.issues().len(), 1);
}

#[test]
fn a_run_paused_in_clone_a_is_approved_from_clone_b_and_filed_once_there() {
    let url = TempPostgres::shared().fresh_database();
    let a = Env::new();
    let origin = a.root.join("origin.git");
    let origin = origin.to_string_lossy().into_owned();
    a.git(&["init", "-q", "--bare", &origin]);
    a.git(&["remote", "add", "origin", &origin]);
    a.script(&script(1, &[APPROVED]));
    let brief = a.brief("dark-mode");
    a.git(&["add", "-A"]);
    a.git(&["commit", "-q", "-m", "the brief"]);
    a.git(&["push", "-q", "origin", "main"]);
    assert_exit(&run_on(&a, &url, &["issue", &brief]), 3);
    assert_exit(&run_on(&a, &url, &["resume", "1", "--choice", "send"]), 3);
    let lineage = a.ls("docs/lineage/active/dark-mode");
    assert_eq!(lineage.len(), 3, "{lineage:?}");

    // Clone B: the same repository, another folder, nothing of the run on disk.
    let b = Env::new();
    b.git(&["remote", "add", "origin", &origin]);
    b.git(&["fetch", "-q", "origin"]);
    b.git(&["reset", "-q", "--hard", "origin/main"]);
    b.script(&script(0, &[]));
    let listed = runs_on(&b, &url, &[]);
    assert_eq!(listed[0]["status"], "waiting", "{listed:?}");
    let out = run_on(&b, &url, &["resume", "1", "--choice", "approve"]);
    assert_exit(&out, 0);
    let err = stderr(&out);
    assert!(err.contains("wrote 3 from the store"), "{err}");
    assert_eq!(b.issues().len(), 1, "filed in clone B");
    assert!(a.issues().is_empty(), "not in clone A");
    assert_eq!(b.ls("docs/lineage/done/1-dark-mode").len(), 4);
    for name in &lineage {
        assert_eq!(
            b.read(&format!("docs/lineage/done/1-dark-mode/{name}")),
            a.read(&format!("docs/lineage/active/dark-mode/{name}")),
            "{name} is the file clone A wrote"
        );
    }
    let log = b.git(&["log", "--format=%s", "-1"]);
    assert!(log.starts_with("gavel: file issue #1"), "{log}");
    assert_eq!(b.status(), "", "everything is committed in clone B");
    // Filed once: the run is done for every clone.
    assert_exit(&run_on(&b, &url, &["resume", "1"]), 1);
    assert_exit(&run_on(&a, &url, &["resume", "1"]), 1);
    assert_eq!(runs_on(&a, &url, &[])[0]["status"], "done");
}

#[test]
fn a_team_budget_counts_every_project_in_the_month_and_stops_before_the_call() {
    let url = TempPostgres::shared().fresh_database();
    let q = |s: &str| serde_json::to_string(s).expect("json");
    let app = repo_with_origin("https://github.com/octo/app.git");
    app.script(&format!(
        "model: claude-sonnet-4-5\ndrafter:\n  - text: {}\n    cost_usd: 0.15\nreviewer:\n  - text: {}\n",
        q(&draft(1)),
        q(APPROVED)
    ));
    let brief = app.brief("dark-mode");
    assert_exit(&run_on(&app, &url, &["issue", &brief, "--auto"]), 0);

    let web = repo_with_origin("https://github.com/octo/web.git");
    web.set_config_line("# team_budget_usd", "team_budget_usd = 0.20");
    web.script(&format!(
        "model: claude-sonnet-4-5\ndrafter:\n  - text: {}\nreviewer:\n  - text: {}\n",
        q(&draft(1)),
        q(APPROVED)
    ));
    let brief = web.brief("search");
    let out = run_on(&web, &url, &["issue", &brief, "--auto"]);
    assert_exit(&out, 4);
    let err = stderr(&out);
    assert!(
        err.contains("team budget: the drafter call would cost up to")
            && err.contains("the team has spent $0.15")
            && err.contains("of $0.2000 in 2026-01"),
        "{err}"
    );
    assert_eq!(web.finished(Role::DRAFTER), 0, "no call was made");
    web.set_config_line("team_budget_usd", "team_budget_usd = 5");
    assert_exit(&run_on(&web, &url, &["resume", "search"]), 0);
}

#[test]
fn a_killed_driver_frees_its_run_and_another_process_resumes_it_at_once() {
    let url = TempPostgres::shared().fresh_database();
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.script(&script_with_delay(1, &[APPROVED], 2_000));
    let brief = env.brief("dark-mode");
    let mut child = on(&env, &url, &["issue", &brief, "--auto"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    wait_for_call_start(&env, Role::DRAFTER);
    let held = run_on(&env, &url, &["resume", "1"]);
    assert_exit(&held, 1);
    assert!(
        stderr(&held).contains(&format!("pid {} on ", child.id())),
        "the refused one is told the holder's pid and host: {}",
        stderr(&held)
    );
    child.kill().expect("kill -9");
    child.wait().expect("wait");
    // At once: a lock someone holds is waited for under a second, then refused.
    let out = run_on(&env, &url, &["resume", "1"]);
    assert_exit(&out, 0);
    assert_eq!(env.issues().len(), 1);
}

#[test]
fn diff_gate_decisions_are_kept_in_the_shared_store_and_read_from_another_clone() {
    let url = TempPostgres::shared().fresh_database();
    let a = repo_with_origin("https://github.com/octo/app.git");
    a.write("src/lib.rs", "pub fn one() -> u32 { 1 }\n");
    a.git(&["add", "src/lib.rs"]);
    let out = run_on(&a, &url, &["diff-gate"]);
    assert_exit(&out, 6);
    let tree = a.git(&["write-tree"]).trim().to_owned();
    let b = repo_with_origin("git@github.com:octo/app.git");
    let out = run_on(&b, &url, &["audit", "--json"]);
    assert_exit(&out, 0);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["decision"], "ABORTED_NON_INTERACTIVE");
    assert_eq!(lines[0]["tree"], tree.as_str());
    assert_eq!(lines[0]["by"], "Test Person <test@example.invalid>");
    let table = run_on(&b, &url, &["audit"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&tree[..12]) && text.contains("Test Person"),
        "{text}"
    );
    // Another project sees none of it, unless it asks for every project.
    let web = repo_with_origin("https://github.com/octo/web.git");
    let out = run_on(&web, &url, &["audit", "--json"]);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = run_on(&web, &url, &["audit", "--json", "--all-projects"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

#[test]
fn store_migrate_moves_sqlite_runs_to_postgres_where_they_resume_and_twice_copies_nothing() {
    let url = TempPostgres::shared().fresh_database();
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.script(&script(1, &[APPROVED]));
    let done = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &done, "--auto"]), 0);
    let paused = env.brief("search");
    assert_exit(&env.run(&["issue", &paused]), 3);
    let out = env.run(&["store", "migrate", "--to", &url]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("copied 2 runs") && text.contains("verified 2 runs"),
        "{text}"
    );
    let again = env.run(&["store", "migrate", "--to", &url]);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        text.contains("copied 0 runs") && text.contains("already there"),
        "{text}"
    );
    let listed = runs_on(&env, &url, &[]);
    let statuses: Vec<&str> = listed
        .iter()
        .map(|r| r["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(statuses, ["waiting", "done"]);
    let shown = on(&env, &url, &["show", "search", "--json"])
        .output()
        .expect("show");
    assert_exit(&shown, 0);
    assert_exit(
        &run_on(&env, &url, &["resume", "search", "--choice", "send"]),
        3,
    );
    // And back into a SQLite file.
    let back = env.root.join("back.db");
    let out = run_on(
        &env,
        &url,
        &["store", "migrate", "--to", &back.to_string_lossy()],
    );
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("copied 2 runs"));
    let out = env.run(&["store", "migrate", "--to", "mysql://db/x"]);
    assert_exit(&out, 2);
}

#[test]
fn a_run_over_tls_checks_the_servers_certificate_with_the_pgssl_variables() {
    let pg = TempPostgres::start_tls();
    let files = pg.tls_files().clone();
    // The server takes TCP only over TLS; the URL names no TLS setting, the environment does.
    let url = pg.tcp_url("localhost", "postgres", "postgres", "connect_timeout=5");
    let env = repo_with_origin("https://github.com/octo/app.git");
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    let with_roots = |args: &[&str], roots: &std::path::Path| {
        on(&env, &url, args)
            .env("PGSSLMODE", "verify-full")
            .env("PGSSLROOTCERT", roots)
            .output()
            .expect("run gavel")
    };
    assert_exit(&with_roots(&["issue", &brief], &files.ca), 3);
    assert_exit(
        &with_roots(&["resume", "1", "--choice", "send"], &files.ca),
        3,
    );
    assert_exit(
        &with_roots(&["resume", "1", "--choice", "approve"], &files.ca),
        0,
    );
    assert_eq!(env.issues().len(), 1);
    // Roots that did not sign the server's certificate: nothing is read, and the error says why.
    let out = with_roots(&["runs"], &files.other_ca);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("UnknownIssuer")
            && err.contains("not signed by a certificate authority of sslrootcert"),
        "{err}"
    );
    assert!(err.contains("localhost"), "{err}");
}

#[test]
fn the_report_pages_read_a_postgres_store_too() {
    let url = TempPostgres::shared().fresh_database();
    let env = repo_with_origin("https://github.com/octo/report.git");
    env.script(&script(2, &[REVISE, APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&run_on(&env, &url, &["issue", &brief, "--auto"]), 0);
    let dir = env.root.join("site");
    assert_exit(
        &run_on(
            &env,
            &url,
            &[
                "report",
                "dark-mode",
                "--html",
                dir.to_str().expect("utf-8"),
            ],
        ),
        0,
    );
    let run = std::fs::read_to_string(dir.join("runs/1/index.html")).expect("run page");
    assert_eq!(run.matches("<tr class=\"call\">").count(), 4, "{run}");
    assert!(run.contains("revise") && run.contains("approve"), "{run}");
    assert!(run.contains("003-verdict.md"), "{run}");
    let ui = crate::ui::start_ui_with(on(&env, &url, &["ui"]));
    let (status, body) = crate::ui::request(
        ui.port,
        "GET",
        &format!("/{}/runs/1/index.html", ui.token),
        &format!("127.0.0.1:{}", ui.port),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Run #1 · issue · dark-mode"), "{body}");
}
