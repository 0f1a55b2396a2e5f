//! `gavel ui` in a real browser (issue 17): headless Chromium loads the runs page and a run page
//! from the running server, the DOM it built shows the gates, calls and costs, screenshots are
//! saved under the test's temp dir, and a hostile draft's script and `javascript:` links run
//! nothing. Chromium is Debian's `chromium` package, which `.ci/run` installs; a missing browser
//! fails the test rather than skipping it.

use std::path::{Path, PathBuf};
use std::process::Command;

use gavel_core::RunId;
use gavel_store::SqliteStore;

use crate::ui::{filled, start_ui};
use crate::util::Env;

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            && out.status.success()
        {
            return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        }
    }
    panic!("no chromium on PATH: install Debian's `chromium` package (.ci/run does)");
}

/// Chromium with a profile of its own under the test's root.
fn browser(env: &Env, args: &[&str]) -> String {
    let profile = env.root.join("chromium-profile");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .env("HOME", env.home())
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn dom(env: &Env, url: &str) -> String {
    browser(env, &["--virtual-time-budget=2000", "--dump-dom", url])
}

fn screenshot(env: &Env, url: &str, file: &Path) {
    browser(
        env,
        &[
            &format!("--screenshot={}", file.display()),
            "--window-size=1280,1600",
            "--hide-scrollbars",
            url,
        ],
    );
    let png = std::fs::read(file).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is a PNG",
        file.display()
    );
    assert!(
        png.len() > 10_000,
        "{} has content ({} bytes)",
        file.display(),
        png.len()
    );
}

#[test]
fn a_browser_shows_runs_gates_calls_and_costs_and_runs_no_model_script() {
    let env = filled();
    let ui = start_ui(&env);

    let runs = dom(&env, &ui.url);
    assert_eq!(runs.matches("<tr class=\"run\">").count(), 3, "{runs}");
    assert!(runs.contains("3 runs, newest first"), "{runs}");
    assert!(runs.contains("waiting"), "{runs}");

    let run = dom(&env, &format!("{}runs/1/index.html", ui.url));
    assert_eq!(
        run.matches("<tr class=\"gate\">").count(),
        4,
        "two rounds of a draft gate and a verdict gate"
    );
    assert_eq!(run.matches("<tr class=\"call\">").count(), 4, "{run}");
    assert_eq!(
        run.matches("<g class=\"node\">").count(),
        8,
        "the graph's nodes"
    );
    for needle in [
        "$0.0125 (reported)",
        "$0.0200 (reported)",
        "revise",
        "approve",
        "auto",
    ] {
        assert!(run.contains(needle), "the run page lacks {needle:?}");
    }

    let shots = env.root.join("screenshots");
    std::fs::create_dir_all(&shots).expect("mkdir");
    screenshot(&env, &ui.url, &shots.join("runs.png"));
    screenshot(
        &env,
        &format!("{}runs/1/index.html", ui.url),
        &shots.join("run.png"),
    );

    // The control: this browser does run a page's script (so its absence below means something).
    let control = env.root.join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><script>document.body.setAttribute('data-pwned','1')</script></body></html>",
    )
    .expect("control page");
    let ran = dom(&env, &format!("file://{}", control.display()));
    assert!(
        ran.contains("data-pwned=\"1\""),
        "the control script did not run: {ran}"
    );

    // The hostile draft: its page is loaded and given time to run anything it could.
    let store = SqliteStore::open(&env.state_db()).expect("store");
    let files = gavel_report::view::run_view(&store, RunId(3))
        .expect("view")
        .expect("run 3")
        .files;
    let draft = files
        .iter()
        .find(|f| f.name.ends_with("-draft.md"))
        .expect("the hostile draft");
    let page = dom(&env, &format!("{}runs/3/files/{}.html", ui.url, draft.k));
    assert!(page.contains("<body>"), "nothing changed the body: {page}");
    assert!(!page.contains("data-pwned=\""), "a script ran: {page}");
    assert!(
        page.contains("setAttribute('data-pwned','1')"),
        "shown as text: {page}"
    );
    assert!(!page.to_lowercase().contains("href=\"javascript"), "{page}");
    assert!(!page.contains("<img"), "{page}");
    screenshot(
        &env,
        &format!("{}runs/3/files/{}.html", ui.url, draft.k),
        &shots.join("hostile.png"),
    );
}

#[test]
fn a_written_report_opens_from_disk_with_its_stylesheet() {
    let env = filled();
    let dir = env.root.join("report");
    let out = env.run(&["report", "--all", "--html", dir.to_str().expect("utf-8")]);
    assert!(out.status.success());
    let url = format!("file://{}", dir.join("runs/1/index.html").display());
    let page = dom(&env, &url);
    assert_eq!(page.matches("<tr class=\"call\">").count(), 4, "{page}");
    screenshot(&env, &url, &env.root.join("report.png"));
}
