//! `gavel ui` and `gavel report` (issue 17): every page rendered in-process from a store that
//! real scripted runs filled, a hostile draft shown as text, the static report's links, and the
//! server's refusals (no token, another Host, a write, a run the store does not have).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use gavel_core::RunId;
use gavel_report::{Page, RunsQuery, Site, SiteMode};
use gavel_store::SqliteStore;

use crate::util::*;

/// A draft that tries everything a page must not run.
pub const HOSTILE: &str = "# Add dark mode\n\n**Labels:** ui\n\n## Why\n<script>document.body.setAttribute('data-pwned','1')</script>\n\nClick [here](javascript:document.body.setAttribute('data-pwned','2')) or [there](JaVaScRiPt:alert(1)).\n\n<img src=x onerror=\"document.body.setAttribute('data-pwned','3')\">\n\n![pixel](https://evil.example/p.png)\n\n## What\nA dark theme.\n\n## Acceptance criteria\n- [ ] Dark theme\n\n## Out of scope\nOther themes.\n\n## Notes\nNone.\n";

/// A repository with: run 1 done after one revision (costs reported), run 2 paused at its draft
/// gate, and run 3 done with the hostile draft and a $0.50 budget.
pub fn filled() -> Env {
    let env = Env::new();
    env.script(&format!(
        "model: claude-sonnet-4-5\ndrafter:\n  - text: {}\n    cost_usd: 0.0125\n  - text: {}\n    cost_usd: 0.02\nreviewer:\n  - text: {}\n  - text: {}\n",
        json(&draft(1)),
        json(&draft(2)),
        json(REVISE),
        json(APPROVED)
    ));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    env.script(&script(1, &[APPROVED]));
    start_paused(&env, "paused");
    env.script(&format!(
        "model: scripted-test\ndrafter:\n  - text: {}\nreviewer:\n  - text: {}\n",
        json(HOSTILE),
        json(APPROVED)
    ));
    let brief = env.brief("hostile");
    assert_exit(
        &env.run(&["issue", &brief, "--auto", "--budget", "0.50"]),
        0,
    );
    env
}

fn html(site: &Site<'_>, path: &str) -> String {
    match site.route(path, &RunsQuery::default()) {
        Ok(Some(Page::Html(h))) => h,
        other => panic!("{path}: {other:?}"),
    }
}

#[test]
fn every_page_shows_what_the_runs_did() {
    let env = filled();
    let store = SqliteStore::open(&env.state_db()).expect("store");
    let site = Site::new(&store, SiteMode::Served);

    let runs = html(&site, "index.html");
    assert!(runs.contains("3 runs, newest first"), "{runs}");
    for needle in [
        "href=\"runs/1/index.html\"",
        "href=\"runs/2/index.html\"",
        "waiting",
        "gate N3_draft_gate@",
        "$0.03",
    ] {
        assert!(runs.contains(needle), "runs page lacks {needle}");
    }
    // Filters: by status and by workflow; a bad day is refused by name.
    let waiting = site
        .runs_page(&RunsQuery {
            status: Some("waiting".into()),
            ..RunsQuery::default()
        })
        .expect("filtered");
    assert!(waiting.contains("1 run, newest first"), "{waiting}");
    let none = site
        .runs_page(&RunsQuery {
            workflow: Some("lld".into()),
            ..RunsQuery::default()
        })
        .expect("filtered");
    assert!(none.contains("0 runs"), "{none}");
    let bad = site.runs_page(&RunsQuery {
        until: Some("2026-13".into()),
        ..RunsQuery::default()
    });
    assert!(bad.is_err_and(|e| e.to_string().contains("until")));

    let run = html(&site, "runs/1/");
    for needle in [
        "Run #1 · issue · dark-mode",
        "N5_verdict_gate@",
        "revise",
        "approve",
        "claude-sonnet-4-5 → claude-sonnet-4-5",
        "$0.0125 (reported)",
        "id=\"spend\">$0.03",
        "drafter:",
        "001-brief.md",
        "003-verdict.md",
        "add acceptance criteria",
        "N2_draft → N3_draft_gate",
    ] {
        assert!(run.contains(needle), "run page lacks {needle:?}");
    }
    assert!(run.contains("no budget for this run"), "{run}");
    // The drawn graph: N0 to N6 and the end, a loop back from the verdict gate to the draft.
    assert_eq!(run.matches("<g class=\"node\">").count(), 8, "{run}");
    assert_eq!(run.matches("class=\"edge back\"").count(), 1, "{run}");
    let budgeted = html(&site, "runs/3/index.html");
    assert!(
        budgeted.contains("spent of a $0.5000 budget ("),
        "the budget line: {budgeted}"
    );
    let paused = html(&site, "runs/2/index.html");
    assert!(paused.contains("class=\"warn\">waiting"), "{paused}");

    // The second draft's page: rendered, and its diff against the first.
    let files = gavel_report::view::run_view(&store, RunId(1))
        .expect("view")
        .expect("run 1")
        .files;
    let second = files
        .iter()
        .filter(|f| f.name.ends_with("-draft.md"))
        .nth(1)
        .expect("a second draft");
    let page = html(&site, &format!("runs/1/files/{}.html", second.k));
    assert!(page.contains("<h1>Add dark mode v2</h1>"), "{page}");
    assert!(page.contains("class=\"del\"># Add dark mode v1"), "{page}");
    assert!(page.contains("class=\"add\"># Add dark mode v2"), "{page}");

    let spend = html(&site, "spend.html");
    assert!(spend.contains("over 7 model calls in 3 runs"), "{spend}");
    assert!(spend.contains("id=\"by-role\""), "{spend}");

    // Nothing outside the store's runs and files.
    for path in [
        "runs/99/index.html",
        "runs/1/files/99.html",
        "runs/-1/index.html",
        "runs/1/files/../../../etc/passwd",
        "../state.db",
        "runs/1x/",
    ] {
        assert!(
            matches!(site.route(path, &RunsQuery::default()), Ok(None)),
            "{path} must not be served"
        );
    }
}

#[test]
fn a_hostile_draft_is_shown_as_text() {
    let env = filled();
    let store = SqliteStore::open(&env.state_db()).expect("store");
    let site = Site::new(&store, SiteMode::Static);
    let view = gavel_report::view::run_view(&store, RunId(3))
        .expect("view")
        .expect("run 3");
    let draft = view
        .files
        .iter()
        .find(|f| f.name.ends_with("-draft.md"))
        .expect("draft");
    let page = html(&site, &format!("runs/3/files/{}.html", draft.k));
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.to_lowercase().contains("javascript:"), "{page}");
    assert!(!page.contains("<img"), "{page}");
    assert!(page.contains("&lt;script&gt;"), "{page}");
    assert!(page.contains("href=\"#\">here</a>"), "{page}");
}

#[test]
fn report_writes_pages_whose_links_all_resolve() {
    let env = filled();
    let out_dir = env.root.join("report");
    let out = env.run(&[
        "report",
        "--all",
        "--html",
        out_dir.to_str().expect("utf-8"),
    ]);
    assert_exit(&out, 0);
    let index = out_dir.join("index.html");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        index.display().to_string()
    );
    let mut pages = Vec::new();
    let mut stack = vec![out_dir.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                pages.push(path);
            }
        }
    }
    assert!(pages.len() > 10, "{pages:?}");
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("page");
        for href in text.split("href=\"").skip(1) {
            let target = &href[..href.find('"').expect("closing quote")];
            if target == "#" || target.starts_with("https://") || target.starts_with('?') {
                continue;
            }
            let resolved = page.parent().expect("parent").join(target);
            assert!(
                resolved.exists(),
                "{} links {target}, which is missing",
                page.display()
            );
        }
    }
    // Every file page written is the page the server shows for it.
    let store = SqliteStore::open(&env.state_db()).expect("store");
    let site = Site::new(&store, SiteMode::Static);
    let files = std::fs::read_dir(out_dir.join("runs/1/files")).expect("run 1's files");
    let mut compared = 0;
    for entry in files {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let written = std::fs::read_to_string(&path).expect("page");
        assert_eq!(
            written,
            html(&site, &format!("runs/1/files/{name}")),
            "{name}"
        );
        compared += 1;
    }
    assert!(compared >= 4, "{compared} file pages");
    let second_draft = std::fs::read_dir(out_dir.join("runs/1/files"))
        .expect("files")
        .map(|e| std::fs::read_to_string(e.expect("entry").path()).expect("page"))
        .find(|p| p.contains("<h1>Add dark mode v2</h1>"))
        .expect("the second draft's page");
    assert!(
        second_draft.contains("class=\"del\"># Add dark mode v1"),
        "{second_draft}"
    );
    drop(store);
    // One run only: its pages and a list of it alone.
    let one = env.root.join("one");
    assert_exit(
        &env.run(&[
            "report",
            "dark-mode",
            "--html",
            one.to_str().expect("utf-8"),
        ]),
        0,
    );
    assert!(one.join("runs/1/index.html").exists());
    assert!(!one.join("runs/2").exists());
    // Its spend page counts that run's calls only (the store has 7 in 3 runs).
    let spend = std::fs::read_to_string(one.join("spend.html")).expect("spend");
    assert!(spend.contains("over 4 model calls in 1 run"), "{spend}");
    // A run named twice (by id and by slug) is reported once.
    let twice = env.root.join("twice");
    assert_exit(
        &env.run(&[
            "report",
            "1",
            "dark-mode",
            "--html",
            twice.to_str().expect("utf-8"),
        ]),
        0,
    );
    let listed = std::fs::read_to_string(twice.join("index.html")).expect("index");
    assert!(
        listed.contains(&format!(
            "http-equiv=\"Content-Security-Policy\" content=\"{}\"",
            gavel_report::site::PAGE_CSP
        )),
        "{listed}"
    );
    assert_eq!(listed.matches("<tr class=\"run\">").count(), 1, "{listed}");
    // Runs named in any order are listed newest first, as the page says.
    let mixed = env.root.join("mixed");
    assert_exit(
        &env.run(&[
            "report",
            "1",
            "3",
            "2",
            "--html",
            mixed.to_str().expect("utf-8"),
        ]),
        0,
    );
    let listed = std::fs::read_to_string(mixed.join("index.html")).expect("index");
    let at = |id: u32| {
        listed
            .find(&format!("href=\"runs/{id}/index.html\""))
            .unwrap_or_else(|| panic!("run {id} is not listed: {listed}"))
    };
    assert!(at(3) < at(2) && at(2) < at(1), "{listed}");
    // Bad input changes nothing, even after a good run.
    for bad in [&["42"][..], &["dark-mode", "42"][..]] {
        let x = env.root.join("x");
        let mut args = vec!["report"];
        args.extend_from_slice(bad);
        args.extend(["--html", x.to_str().expect("utf-8")]);
        let out = env.run(&args);
        assert_exit(&out, 1);
        assert!(!x.exists(), "{bad:?} wrote something");
    }
}

/// `gavel ui` running in the repository, with its printed URL.
pub struct Ui {
    child: Child,
    pub url: String,
    pub port: u16,
    pub token: String,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_ui(env: &Env) -> Ui {
    start_ui_with(env.gavel(&["ui"]))
}

/// `gavel ui` started by `command` (another environment, another store).
pub fn start_ui_with(mut command: std::process::Command) -> Ui {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gavel ui");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the URL line");
    let url = line.trim().to_owned();
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected URL {url:?}"));
    let (port, token) = rest.split_once('/').expect("port/token");
    Ui {
        port: port.parse().expect("port"),
        token: token.trim_end_matches('/').to_owned(),
        url,
        child,
    }
}

/// Sends a raw HTTP/1.1 request and returns the status code and body.
pub fn request(port: u16, method: &str, path: &str, host: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn the_server_refuses_what_it_must_and_listens_on_loopback_only() {
    let env = filled();
    let ui = start_ui(&env);
    let host = format!("127.0.0.1:{}", ui.port);
    let t = &ui.token;
    let (status, body) = request(ui.port, "GET", &format!("/{t}/"), &host);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("3 runs"), "{body}");
    assert_eq!(
        request(
            ui.port,
            "GET",
            &format!("/{t}/runs/1/index.html"),
            &format!("localhost:{}", ui.port)
        )
        .0,
        200
    );
    assert_eq!(
        request(ui.port, "GET", &format!("/{t}/style.css"), &host).0,
        200
    );
    // HEAD answers as GET does, without the body, and with the served policy.
    let mut stream = TcpStream::connect(("127.0.0.1", ui.port)).expect("connect");
    write!(
        stream,
        "HEAD /{t}/runs/1/index.html HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut head = String::new();
    stream.read_to_string(&mut head).expect("read");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains(&format!(
            "content-security-policy: {}\r\n",
            gavel_report::site::SERVED_CSP
        )),
        "{head}"
    );
    assert!(head.ends_with("\r\n\r\n"), "a HEAD has no body: {head}");
    // Filters reach the page; a bad one is a 400 naming it.
    let (status, body) = request(
        ui.port,
        "GET",
        &format!("/{t}/index.html?status=waiting"),
        &host,
    );
    assert_eq!(status, 200);
    assert!(body.contains("1 run, newest first"), "{body}");
    let (status, body) = request(
        ui.port,
        "GET",
        &format!("/{t}/index.html?since=soon"),
        &host,
    );
    assert_eq!(status, 400);
    assert!(body.contains("since"), "{body}");
    // Refused: no token, a wrong one, another Host, a write, nothing outside the runs.
    for (method, path, host, want) in [
        ("GET", "/".to_owned(), host.clone(), 403),
        ("GET", "/index.html".to_owned(), host.clone(), 403),
        ("GET", format!("/{}/", "0".repeat(32)), host.clone(), 403),
        ("GET", format!("/{t}x/"), host.clone(), 403),
        ("GET", format!("/{t}/"), "evil.example".to_owned(), 403),
        (
            "GET",
            format!("/{t}/"),
            format!("evil.example:{}", ui.port),
            403,
        ),
        ("POST", format!("/{t}/"), host.clone(), 405),
        ("DELETE", format!("/{t}/runs/1/"), host.clone(), 405),
        ("GET", format!("/{t}/runs/99/index.html"), host.clone(), 404),
        ("GET", format!("/{t}/../../etc/passwd"), host.clone(), 404),
        (
            "GET",
            format!("/{t}/runs/1/files/../../../../.gavel/state.db"),
            host.clone(),
            404,
        ),
    ] {
        assert_eq!(
            request(ui.port, method, &path, &host).0,
            want,
            "{method} {path} (Host {host})"
        );
    }
    // The listening socket is bound to 127.0.0.1, and nowhere else.
    let tcp = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let port_hex = format!(":{:04X}", ui.port);
    let listening: Vec<&str> = tcp
        .lines()
        .filter(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.get(1).is_some_and(|a| a.ends_with(&port_hex)) && cols.get(3) == Some(&"0A")
        })
        .collect();
    assert_eq!(listening.len(), 1, "{listening:?}");
    assert!(
        listening[0]
            .split_whitespace()
            .nth(1)
            .is_some_and(|a| a.starts_with("0100007F:"))
    );
    let tcp6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    assert!(!tcp6.lines().any(|l| {
        let cols: Vec<&str> = l.split_whitespace().collect();
        cols.get(1).is_some_and(|a| a.ends_with(&port_hex)) && cols.get(3) == Some(&"0A")
    }));
    drop(ui);
}

/// Sends `raw` as it is (a request of several lines) and returns the status code.
fn raw_status(port: u16, raw: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.write_all(raw.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn ui_refuses_two_host_headers_and_an_absolute_uri_naming_another_host() {
    let env = Env::new();
    SqliteStore::open(&env.state_db()).expect("an empty store");
    let ui = start_ui(&env);
    let (port, t) = (ui.port, &ui.token);
    let ours = format!("127.0.0.1:{port}");
    let get = |target: &str, hosts: &[&str]| {
        let hosts: String = hosts.iter().map(|h| format!("Host: {h}\r\n")).collect();
        format!("GET {target} HTTP/1.1\r\n{hosts}Connection: close\r\n\r\n")
    };
    let page = format!("/{t}/");
    assert_eq!(raw_status(port, &get(&page, &[&ours])), 200);
    assert_eq!(
        raw_status(port, &get(&format!("http://{ours}/{t}/"), &[&ours])),
        200,
        "an absolute URI naming this server is served"
    );
    for (what, request) in [
        (
            "two Hosts, ours first",
            get(&page, &[&ours, "evil.example"]),
        ),
        (
            "two Hosts, ours second",
            get(&page, &["evil.example", &ours]),
        ),
        ("two Hosts, both ours", get(&page, &[&ours, &ours])),
        (
            "an absolute URI for another host",
            get(&format!("http://evil.example/{t}/"), &[&ours]),
        ),
        (
            "an absolute URI for another port",
            get(&format!("http://127.0.0.1:1/{t}/"), &[&ours]),
        ),
        (
            "an absolute URI with a user",
            get(&format!("http://evil@{ours}/{t}/"), &[&ours]),
        ),
        (
            "an absolute URI of another scheme",
            get(&format!("https://{ours}/{t}/"), &[&ours]),
        ),
    ] {
        assert_eq!(raw_status(port, &request), 400, "{what}: {request:?}");
    }
}

#[test]
fn the_changes_board_shows_each_change_in_its_phase_with_its_documents() {
    let env = Env::new();
    env.write(
        "openspec/changes/add-login/STATE.yaml",
        "format: 1\nchange_id: add-login\nphase: implementing\nupdated_at: 2026-01-30T14:33:20Z\n",
    );
    env.write(
        "openspec/changes/add-login/proposal.md",
        "# Add login\n\n<script>alert(1)</script> Users sign in.\n",
    );
    env.write(
        "openspec/changes/add-login/specs/auth/spec.md",
        "## ADDED Requirements\n\n### Requirement: Sign in\n",
    );
    env.write(
        "openspec/changes/add-login/tasks.md",
        "---\nchange_id: add-login\n---\n\n## 1. Data Layer\n- [x] 1.1 Users table\n\n## 2. Logic Layer\n- [ ] 2.1 Password check\n",
    );
    env.write(
        "openspec/changes/add-login/REVIEW.md",
        "# Review\n\nVerdict: APPROVED\n",
    );
    env.write(
        "openspec/changes/from-openspec/proposal.md",
        "# Made by OpenSpec\n",
    );
    let dir = env.root.join("report");
    // No runs yet: the report still needs a store, so one run first.
    env.script(&script(1, &[APPROVED]));
    let brief = env.brief("dark-mode");
    assert_exit(&env.run(&["issue", &brief, "--auto"]), 0);
    assert_exit(
        &env.run(&["report", "--all", "--html", dir.to_str().expect("utf-8")]),
        0,
    );
    let board = std::fs::read_to_string(dir.join("changes.html")).expect("board");
    let column = |phase: &str| {
        let start = board
            .find(&format!("id=\"phase-{phase}\""))
            .unwrap_or_else(|| panic!("no {phase} column: {board}"));
        let end = board[start..]
            .find("</section>")
            .map_or(board.len(), |e| start + e);
        board[start..end].to_owned()
    };
    assert!(column("implementing").contains("add-login"), "{board}");
    assert!(column("implementing").contains("tasks 1/2"), "{board}");
    assert!(column("unknown").contains("from-openspec"), "{board}");
    let change = std::fs::read_to_string(dir.join("changes/add-login.html")).expect("change");
    for needle in [
        "<h2>proposal.md</h2>",
        "<h2>specs/auth/spec.md</h2>",
        "<h2>tasks.md</h2>",
        "<h2>REVIEW.md</h2>",
        "Requirement: Sign in",
        "gavel change impl add-login",
        "&lt;script&gt;",
    ] {
        assert!(change.contains(needle), "the change page lacks {needle:?}");
    }
    assert!(!change.contains("<script"), "{change}");
}

#[test]
fn the_demos_three_workflows_have_pages_and_the_diff_gate_decision_shows() {
    let env = Env::new();
    let demo = env.root.join("demo");
    assert_exit(&env.run(&["demo", "--dir", &demo.to_string_lossy()]), 0);
    let site = env.root.join("site");
    let out = env.run(&[
        "--repo",
        &demo.to_string_lossy(),
        "report",
        "--all",
        "--html",
        &site.to_string_lossy(),
    ]);
    assert_exit(&out, 0);
    let runs = std::fs::read_to_string(site.join("index.html")).expect("runs page");
    for workflow in ["<td>issue</td>", "<td>lld</td>", "<td>implement</td>"] {
        assert!(runs.contains(workflow), "{workflow}: {runs}");
    }
    let implement = std::fs::read_to_string(site.join("runs/3/index.html")).expect("run 3");
    let audits = implement
        .split("id=\"audits\"")
        .nth(1)
        .expect("the implement run journaled a diff-gate decision");
    assert!(audits.contains("<td>APPROVED</td>"), "{audits}");
    assert!(audits.contains("gavel demo"), "who decided: {audits}");
}

#[test]
fn without_a_store_ui_and_report_say_so_and_write_nothing() {
    let env = Env::new();
    let out = env.run(&["ui"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("no runs yet"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("then run `gavel ui` again"),
        "{}",
        stderr(&out)
    );
    let dir = env.root.join("report");
    let out = env.run(&["report", "--all", "--html", dir.to_str().expect("utf-8")]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("no runs yet"), "{}", stderr(&out));
    assert!(!dir.exists());
    assert!(
        !env.root.join(".gavel/state.db").exists(),
        "no store was made"
    );
}
