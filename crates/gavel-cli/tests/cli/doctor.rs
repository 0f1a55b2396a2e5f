//! `gavel doctor` end to end: what it says about missing agent CLIs.

use crate::util::*;

#[test]
fn doctor_never_says_gemini_cli_cli() {
    // Regression: "the Gemini CLI CLI (`gemini`) is not installed".
    let env = Env::new();
    env.set_roles("gemini:gemini-2.5-pro", "codex:gpt-5");
    // A PATH with git and nothing else, so the agent CLIs are surely missing.
    let bin = env.root.join("only-git");
    std::fs::create_dir_all(&bin).expect("bin");
    let git = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .expect("find git");
    let git = String::from_utf8_lossy(&git.stdout).trim().to_owned();
    std::os::unix::fs::symlink(&git, bin.join("git")).expect("link git");
    let out = env
        .gavel(&["doctor"])
        .env("PATH", &bin)
        .output()
        .expect("doctor");
    assert_exit(&out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the Gemini CLI (`gemini`) is not installed")
            && text.contains("the Codex CLI (`codex`) is not installed"),
        "{text}"
    );
    assert!(!text.contains("CLI CLI"), "{text}");
}

/// `gavel doctor --json`'s tracker row with `[tracker] kind = "github"`.
fn github_doctor(
    fake: &gavel_fakeapi::FakeServer,
    env: &Env,
    token: Option<&str>,
) -> (serde_json::Value, std::process::Output) {
    let mut cmd = env.gavel(&["doctor", "--json"]);
    if let Some(t) = token {
        cmd.env("GH_TOKEN", t);
    }
    let _ = fake;
    let out = cmd.output().expect("doctor");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", show_output(&out)));
    (report["tracker"].clone(), out)
}

#[test]
fn doctor_reports_the_github_check_passing_and_each_failure() {
    use crate::github::{REPO, TOKEN, github_env};
    use gavel_fakeapi::{FakeRepo, FakeServer, Permission};

    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    env.set_config_line("kind = \"local\"", "kind = \"github\"");
    let (row, _) = github_doctor(&fake, &env, Some(TOKEN));
    assert_eq!(row["ready"], true, "{row}");
    assert!(
        row["tracker"]
            .as_str()
            .is_some_and(|t| t.starts_with(&format!("github ({REPO}"))),
        "{row}"
    );
    let text = env
        .gavel(&["doctor"])
        .env("GH_TOKEN", TOKEN)
        .output()
        .expect("doctor");
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("Tracker:\n  ready    github (octo/app"),
        "{}",
        show_output(&text)
    );

    fake.github()
        .add_token("ghp_scopeless", "octo", Some("gist"));
    let mut quiet = FakeRepo::new("octo/quiet");
    quiet.has_issues = false;
    fake.github().add_repo(quiet);
    let mut archived = FakeRepo::new("octo/old");
    archived.archived = true;
    fake.github().add_repo(archived);
    let mut readonly = FakeRepo::new("octo/ro");
    readonly.permission = Permission::Read;
    fake.github().add_repo(readonly);
    for (origin, token, expected) in [
        ("git@github.com:octo/app.git", None, "no GitHub token found"),
        (
            "git@github.com:octo/app.git",
            Some("ghp_wrong"),
            "gh auth login",
        ),
        (
            "git@github.com:octo/app.git",
            Some("ghp_scopeless"),
            "without the `repo` scope (it has: gist)",
        ),
        (
            "git@github.com:octo/nope.git",
            Some(TOKEN),
            "octo/nope was not found",
        ),
        (
            "git@github.com:octo/quiet.git",
            Some(TOKEN),
            "issues are disabled in octo/quiet",
        ),
        (
            "git@github.com:octo/old.git",
            Some(TOKEN),
            "octo/old is archived",
        ),
        (
            "git@github.com:octo/ro.git",
            Some(TOKEN),
            "read access only",
        ),
        (
            "/srv/git/app.git",
            Some(TOKEN),
            "is not a GitHub repository URL",
        ),
    ] {
        env.git(&["remote", "set-url", "origin", origin]);
        let (row, out) = github_doctor(&fake, &env, token);
        assert_eq!(row["ready"], false, "{origin} {token:?}: {row}");
        assert_exit(&out, 1);
        let problem = row["problem"].as_str().unwrap_or_default();
        assert!(
            problem.contains(expected),
            "{origin} {token:?}: expected {expected:?} in {problem}"
        );
        assert!(!show_output(&out).contains("ghp_"), "a token in the report");
    }
    env.git(&["remote", "remove", "origin"]);
    let (row, _) = github_doctor(&fake, &env, Some(TOKEN));
    assert!(
        row["problem"]
            .as_str()
            .is_some_and(|p| p.contains("no `origin` remote") && p.contains("[tracker] repo")),
        "{row}"
    );
}

#[test]
fn doctor_finds_the_token_of_a_logged_in_gh_cli() {
    use crate::github::{TOKEN, github_env};
    use gavel_fakeapi::FakeServer;

    let fake = FakeServer::start().expect("fake");
    let env = github_env(&fake);
    env.set_config_line("kind = \"local\"", "kind = \"github\"");
    // The real gh CLI (Debian's package), logged in through its config file.
    let config = env.root.join("gh-config");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join("hosts.yml"),
        format!("github.com:\n    oauth_token: {TOKEN}\n    user: octo\n    git_protocol: https\n"),
    )
    .expect("hosts.yml");
    let out = env
        .gavel(&["doctor", "--json"])
        .env("GH_CONFIG_DIR", &config)
        .output()
        .expect("doctor");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["tracker"]["ready"], true, "{}", show_output(&out));
    assert!(!show_output(&out).contains(TOKEN));
    // Logged out: gh's own reason is shown, with what to do.
    std::fs::remove_file(config.join("hosts.yml")).expect("rm");
    let out = env
        .gavel(&["doctor", "--json"])
        .env("GH_CONFIG_DIR", &config)
        .output()
        .expect("doctor");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let problem = report["tracker"]["problem"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        problem.contains("gh auth token --hostname github.com")
            && problem.contains("gh auth login"),
        "{problem}"
    );
}

#[test]
fn doctor_checks_each_workflows_own_roles() {
    let env = Env::new();
    env.script(&script(1, &[APPROVED]));
    let text = env.read("gavel.toml") + "\n[workflows.lld.roles]\ndrafter = \"nonsense\"\n";
    env.write("gavel.toml", &text);
    let out = env.run(&["doctor", "--json"]);
    assert_exit(&out, 1);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = report["roles"].as_array().expect("roles");
    let row = |w: &str, r: &str| {
        rows.iter()
            .find(|x| x["workflow"] == w && x["role"] == r)
            .cloned()
            .unwrap_or_else(|| panic!("no {w} {r} row: {report}"))
    };
    assert_eq!(row("issue", "drafter")["ready"], true);
    assert_eq!(row("lld", "reviewer")["ready"], true);
    let lld = row("lld", "drafter");
    assert_eq!(lld["ready"], false);
    assert!(
        lld["fix"]
            .as_str()
            .is_some_and(|f| f.contains("[workflows.lld.roles]")),
        "{lld}"
    );
}
