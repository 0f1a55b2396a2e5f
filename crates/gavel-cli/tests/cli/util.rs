//! The test environment: a temporary git repository after `gavel init`, a scripted provider,
//! and a builder for `gavel` commands with a clean, fixed environment.

mod projects;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use gavel_llm::{CallEvent, CallLogEntry, Role};
use serde_json::Value;
use tempfile::TempDir;

pub use projects::*;

pub const FIXED_NOW: &str = "2026-01-30T14:33:20Z";

/// A draft the scripted drafter returns; `n` makes each one distinct. It passes gavel's own
/// checks for both kinds' default templates (every section of the issue template, then every
/// section of the LLD template), so the scripted reviewer is the one that judges it.
pub fn draft(n: u32) -> String {
    format!(
        "Sure, here it is.\n\n# Add dark mode v{n}\n\n**Labels:** enhancement, ui\n\n## Why\nToo bright at night.\n\n## What\nA dark theme.\n\n## Acceptance criteria\n- [ ] Dark theme {n}\n\n## Out of scope\nOther themes.\n\n## Notes\nNone.\n\n{LLD_SECTIONS}"
    )
}

/// Every section of the default LLD template, filled in briefly.
pub const LLD_SECTIONS: &str = "## 1. Context & Goal\nIssue #1: a dark theme.\n\n## 2. Proposed Changes\n\n### 2.1 Files Changed\n`web/theme.css`: colours.\n\n### 2.2 Dependencies\nNone.\n\n### 2.3 Data Structures\nA theme setting.\n\n### 2.4 Function Signatures\n`fn theme() -> Theme`\n\n### 2.5 Logic Flow\nRead the setting, apply it.\n\n### 2.6 Technical Approach\nCSS variables.\n\n## 3. Requirements\n1. The dashboard opens dark at night.\n\n## 4. Alternatives Considered\nA second stylesheet: rejected.\n\n## 5. Data & Fixtures\nNone.\n\n## 6. Diagram\nsetting -> theme\n\n## 7. Security Considerations\nNone.\n\n## 8. Performance Considerations\nNone.\n\n## 9. Risks & Mitigations\nContrast: checked.\n\n## 10. Verification & Testing\n\n### 10.1 Test Scenarios\nTS-01: dark at night.\n\n### 10.2 Test Commands\n`npm test`\n\n## 11. Definition of Done\n- [ ] Dark theme shipped\n";

pub const APPROVED: &str =
    "All good.\n\n```json\n{\"verdict\": \"APPROVED\", \"findings\": []}\n```\n";
pub const REVISE: &str = "Needs work.\n\n```json\n{\"verdict\": \"REVISE\", \"findings\": [\"add acceptance criteria\"]}\n```\n";
pub const BLOCK: &str =
    "No.\n\n```json\n{\"verdict\": \"BLOCK\", \"findings\": [\"duplicate of #3\"]}\n```\n";

/// A script with `drafts` drafter answers and the given reviewer answers.
pub fn script(drafts: u32, verdicts: &[&str]) -> String {
    script_with_delay(drafts, verdicts, 0)
}

/// Like [`script`], every answer delayed by `delay_ms`.
pub fn script_with_delay(drafts: u32, verdicts: &[&str], delay_ms: u64) -> String {
    let mut s = String::from("model: scripted-test\nrecord_prompts: true\n");
    s.push_str(if drafts == 0 {
        "drafter: []\n"
    } else {
        "drafter:\n"
    });
    for n in 1..=drafts {
        s.push_str(&format!(
            "  - text: {}\n    delay_ms: {delay_ms}\n",
            json(&draft(n))
        ));
    }
    s.push_str(if verdicts.is_empty() {
        "reviewer: []\n"
    } else {
        "reviewer:\n"
    });
    for v in verdicts {
        s.push_str(&format!(
            "  - text: {}\n    delay_ms: {delay_ms}\n",
            json(v)
        ));
    }
    s
}

/// `s` as a JSON (and YAML) string literal, for script files.
pub fn json(s: &str) -> String {
    serde_json::to_string(s).expect("string to JSON")
}

/// A hermetic repository with gavel initialised.
pub struct Env {
    _tmp: TempDir,
    pub root: PathBuf,
    pub repo: PathBuf,
    home: PathBuf,
    gitconfig: PathBuf,
}

impl Env {
    /// A repository after `gavel init` and a first commit, with roles set to `script.yaml`.
    pub fn new() -> Self {
        // Not under /tmp, which the box the model's code runs in replaces by a private one (a
        // person's repository and home are not there either), and not inside any repository
        // (so not in the target folder of a checkout): /var/tmp.
        let tmp = tempfile::Builder::new()
            .prefix("gavel-test-")
            .tempdir_in("/var/tmp")
            .expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical tempdir");
        let repo = root.join("repo");
        let home = root.join("home");
        fs::create_dir_all(&repo).expect("mkdir repo");
        fs::create_dir_all(&home).expect("mkdir home");
        let gitconfig = root.join("gitconfig");
        fs::write(&gitconfig, "[user]\n\tname = Test Person\n\temail = test@example.invalid\n[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n").expect("gitconfig");
        let env = Self {
            _tmp: tmp,
            root,
            repo,
            home,
            gitconfig,
        };
        env.git(&["init", "-q"]);
        let out = env.gavel(&["init"]).output().expect("gavel init");
        assert!(
            out.status.success(),
            "gavel init failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        env.set_roles("scripted:script.yaml", "scripted:script.yaml");
        env.set_config_line("# retry_delay_ms", "retry_delay_ms = 10");
        env.write(".gitignore", ".gavel/\nscript.yaml*\n");
        env.git(&["add", "-A"]);
        env.git(&["commit", "-q", "-m", "init"]);
        env
    }

    /// The HOME every command of this environment runs with.
    pub fn home(&self) -> PathBuf {
        self.home.clone()
    }

    /// Replaces the roles in gavel.toml.
    pub fn set_roles(&self, drafter: &str, reviewer: &str) {
        let path = self.repo.join("gavel.toml");
        let text = fs::read_to_string(&path).expect("gavel.toml");
        let text: String = text
            .lines()
            .map(|l| {
                if l.starts_with("drafter =") {
                    format!("drafter = \"{drafter}\"")
                } else if l.starts_with("reviewer =") {
                    format!("reviewer = \"{reviewer}\"")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        fs::write(&path, text + "\n").expect("write gavel.toml");
    }

    /// Replaces the gavel.toml line starting with `prefix` by `line`.
    pub fn set_config_line(&self, prefix: &str, line: &str) {
        let path = self.repo.join("gavel.toml");
        let text = fs::read_to_string(&path).expect("gavel.toml");
        assert!(
            text.lines().any(|l| l.starts_with(prefix)),
            "no line starting with {prefix:?} in gavel.toml"
        );
        let text: Vec<String> = text
            .lines()
            .map(|l| {
                if l.starts_with(prefix) {
                    line.to_owned()
                } else {
                    l.to_owned()
                }
            })
            .collect();
        fs::write(&path, text.join("\n") + "\n").expect("write gavel.toml");
    }

    /// Sets `[limits] max_iterations`.
    pub fn set_max_iterations(&self, n: u32) {
        let path = self.repo.join("gavel.toml");
        let text: Vec<String> = fs::read_to_string(&path)
            .expect("gavel.toml")
            .lines()
            .map(|l| {
                if l.starts_with("max_iterations =") {
                    format!("max_iterations = {n}")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        fs::write(&path, text.join("\n") + "\n").expect("write gavel.toml");
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.repo.join(rel);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).expect("mkdir");
        }
        fs::write(&path, text).expect("write");
        path
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.repo.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.repo.join(rel).exists()
    }

    /// Writes the scripted provider's script.
    pub fn script(&self, yaml: &str) {
        self.write("script.yaml", yaml);
    }

    /// A brief at `ideas/active/{slug}.md`.
    pub fn brief(&self, slug: &str) -> String {
        let rel = format!("ideas/active/{slug}.md");
        self.write(
            &rel,
            &format!("# {slug}\n\nPeople want a dark mode for the dashboard.\n"),
        );
        rel
    }

    /// A `gavel` command with a clean environment, run in the repository.
    pub fn gavel(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("gavel"));
        self.clean_env(&mut cmd);
        cmd.args(args).current_dir(&self.repo);
        cmd
    }

    /// Applies the hermetic environment to any command.
    pub fn clean_env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", &self.gitconfig)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GAVEL_NOW", FIXED_NOW)
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1");
    }

    /// Runs gavel and returns its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.gavel(args).output().expect("run gavel")
    }

    /// Runs git in the repository and returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        self.clean_env(&mut cmd);
        let out = cmd
            .args(args)
            .current_dir(&self.repo)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The scripted provider's call log.
    pub fn calls(&self) -> Vec<CallLogEntry> {
        gavel_llm::read_call_log(&self.repo.join("script.yaml")).expect("call log")
    }

    /// Finished calls per role.
    pub fn finished(&self, role: Role) -> usize {
        self.calls()
            .iter()
            .filter(|c| c.role == role && c.event == CallEvent::Finish)
            .count()
    }

    /// Asserts that no (role, seq) call finished twice.
    pub fn assert_no_finished_call_repeated(&self) {
        let mut seen = std::collections::HashSet::new();
        for c in self.calls().iter().filter(|c| c.event == CallEvent::Finish) {
            assert!(
                seen.insert((c.role, c.seq)),
                "call {:?} #{} finished twice: {:#?}",
                c.role,
                c.seq,
                self.calls()
            );
        }
    }

    /// The prompt the scripted provider received for (role, seq).
    pub fn prompt(&self, role: Role, seq: u32) -> String {
        fs::read_to_string(gavel_llm::prompt_record_path(
            &self.repo.join("script.yaml"),
            role,
            seq,
        ))
        .expect("recorded prompt")
    }

    /// `gavel runs --json`.
    pub fn runs(&self) -> Vec<Value> {
        let out = self.run(&["runs", "--json"]);
        assert!(
            out.status.success(),
            "runs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("runs JSON")
    }

    /// `gavel show RUN --json`.
    pub fn show(&self, run: &str) -> Value {
        let out = self.run(&["show", run, "--json"]);
        assert!(
            out.status.success(),
            "show: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("show JSON")
    }

    /// Sorted file names in a repository folder (empty if it does not exist).
    pub fn ls(&self, rel: &str) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.repo.join(rel)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Issue files filed by the local tracker.
    pub fn issues(&self) -> Vec<String> {
        self.ls("docs/issues")
            .into_iter()
            .filter(|n| n.ends_with(".md"))
            .collect()
    }

    /// `git status --porcelain` (untracked included).
    pub fn status(&self) -> String {
        self.git(&["status", "--porcelain", "--untracked-files=all"])
    }

    pub fn state_db(&self) -> PathBuf {
        self.repo.join(".gavel/state.db")
    }
}

/// Exit code, stdout and stderr as text, for assertion messages.
pub fn show_output(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts an exit code with the full output on failure.
#[track_caller]
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "{}", show_output(out));
}

/// Asserts that lineage file names are numbered 001.. without gaps, in order.
#[track_caller]
pub fn assert_gap_free(names: &[String]) {
    for (i, name) in names.iter().enumerate() {
        let expected = format!("{:03}-", i + 1);
        assert!(
            name.starts_with(&expected),
            "lineage not gap-free at {i}: {names:?}"
        );
    }
}

/// The lineage folder of a filed run.
pub fn done_dir(env: &Env, issue: u64, slug: &str) -> String {
    let rel = format!("docs/lineage/done/{issue}-{slug}");
    assert!(
        env.exists(&rel),
        "{rel} missing; done/ holds {:?}",
        env.ls("docs/lineage/done")
    );
    rel
}

/// Starts a non-auto run that pauses at the draft gate; returns the run id.
pub fn start_paused(env: &Env, slug: &str) -> String {
    let brief = env.brief(slug);
    let out = env.run(&["issue", &brief]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("--choice send"),
        "{}",
        show_output(&out)
    );
    let runs = env.runs();
    runs.iter()
        .rev()
        .find(|r| r["slug"] == slug)
        .expect("run listed")["id"]
        .to_string()
}

/// Waits (up to 30 s) until the scripted provider logged the start of a `role` call.
pub fn wait_for_call_start(env: &Env, role: gavel_llm::Role) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !env
        .calls()
        .iter()
        .any(|c| c.role == role && c.event == CallEvent::Start)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the {role} call never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Writes an executable shell script (a fake editor, a git hook).
pub fn write_script(path: &std::path::Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    let mut perms = fs::metadata(path).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(path, perms).expect("chmod");
}

pub use crate::doc_kinds::Doc;
