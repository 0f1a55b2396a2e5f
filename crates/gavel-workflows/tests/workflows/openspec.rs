//! The change module's writers checked by the real OpenSpec CLI: installed from npm at the
//! version pinned in `tools/openspec/package-lock.json` (once, under a lock, when missing or
//! stale), run with its own HOME and telemetry off, in an `openspec init` tree in a temp dir.
//! One test proves a written change passes `openspec validate ID --strict`; one proves the CLI
//! rejects a change whose requirement lacks a scenario, so the first can fail.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use gavel_workflows::change::ChangeDir;
use gavel_workflows::change::merge::{merge, new_living_spec};
use gavel_workflows::change::spec::{DeltaSpec, Rename, Requirement, render_delta_spec};
use gavel_workflows::change::tasks::render_tasks;

/// The pinned `openspec` (see `gavel_fakeapi::npm_tool_bin`), after making sure it is installed.
fn openspec_bin() -> PathBuf {
    gavel_fakeapi::npm_tool_bin("openspec")
        .expect("the OpenSpec CLI")
        .join("openspec")
}

/// A project folder with `openspec init` run in it, and the HOME the CLI sees.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn init() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("home")).expect("home");
        fs::create_dir_all(dir.path().join("p")).expect("project");
        let project = Self { dir };
        let out = project.openspec(&["init", "--tools", "none", "."]);
        assert!(out.status.success(), "openspec init: {}", text(&out));
        assert!(project.root().join("changes").is_dir(), "init made no tree");
        project
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("p/openspec")
    }

    fn openspec(&self, args: &[&str]) -> Output {
        let home = self.dir.path().join("home");
        Command::new(openspec_bin())
            .args(args)
            .current_dir(self.dir.path().join("p"))
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("OPENSPEC_TELEMETRY", "0")
            .env("DO_NOT_TRACK", "1")
            .env("OPENSPEC_NO_UPDATE_CHECK", "1")
            .env("NO_COLOR", "1")
            .output()
            .expect("run openspec")
    }

    /// Writes a change with the module's writers: proposal, one delta spec per capability,
    /// tasks with front matter.
    fn write_change(&self, id: &str, specs: &[(&str, DeltaSpec)]) -> ChangeDir {
        let change = ChangeDir::new(self.root(), id).expect("id");
        fs::create_dir_all(change.dir()).expect("change dir");
        fs::write(
            change.proposal(),
            "## Why\nUsers must prove who they are before they see their data.\n\n\
             ## What Changes\n- Add password login and a second factor.\n",
        )
        .expect("proposal");
        for (cap, delta) in specs {
            let path = change.delta_spec(cap);
            fs::create_dir_all(path.parent().expect("parent")).expect("spec dir");
            fs::write(&path, render_delta_spec(delta)).expect("delta spec");
        }
        let tasks = render_tasks(
            id,
            &[
                ("Data Layer", &["Add the users table"]),
                ("Testing", &["Test login end to end"]),
            ],
        );
        fs::write(change.tasks(), tasks).expect("tasks");
        change
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn scenario() -> (&'static str, &'static str) {
    (
        "Good password",
        "- **WHEN** a user gives the right password\n- **THEN** the user is logged in",
    )
}

#[test]
fn openspec_validate_strict_accepts_a_written_change() {
    let project = Project::init();
    let delta = DeltaSpec {
        added: vec![
            Requirement::compose(
                "Password Login",
                "The system SHALL log a user in with a correct password.",
                &[scenario()],
            ),
            Requirement::compose(
                "Second Factor",
                "The system SHALL ask for a one-time code after the password.",
                &[(
                    "Code asked",
                    "- **WHEN** the password is right\n- **THEN** a code is asked for",
                )],
            ),
        ],
        ..DeltaSpec::default()
    };
    let change = project.write_change("add-login", &[("auth", delta.clone())]);
    let out = project.openspec(&["validate", change.id(), "--strict", "--no-interactive"]);
    assert!(out.status.success(), "validate: {}", text(&out));
    assert!(text(&out).contains("is valid"), "{}", text(&out));

    // The merged living spec is one OpenSpec accepts, and a later change that modifies and
    // renames its requirements validates against it.
    let purpose = "Who may use the system and how they prove it, for every client.";
    let living = merge(&new_living_spec("auth", purpose), &delta).expect("merge");
    let path = change.living_spec("auth");
    fs::create_dir_all(path.parent().expect("parent")).expect("specs dir");
    fs::write(&path, living).expect("living spec");
    let out = project.openspec(&[
        "validate",
        "auth",
        "--type",
        "spec",
        "--strict",
        "--no-interactive",
    ]);
    assert!(out.status.success(), "validate spec: {}", text(&out));
    let follow_up = DeltaSpec {
        modified: vec![Requirement::compose(
            "Password Login",
            "The system SHALL log a user in with a correct password within 2 seconds.",
            &[scenario()],
        )],
        renamed: vec![Rename {
            from: "Second Factor".into(),
            to: "One-Time Code".into(),
        }],
        ..DeltaSpec::default()
    };
    let next = project.write_change("tune-login", &[("auth", follow_up)]);
    let out = project.openspec(&["validate", next.id(), "--strict", "--no-interactive"]);
    assert!(out.status.success(), "validate follow-up: {}", text(&out));
}

#[test]
fn openspec_validate_rejects_a_requirement_without_a_scenario() {
    let project = Project::init();
    let bare = Requirement {
        name: "Password Login".into(),
        text: "### Requirement: Password Login\nThe system SHALL log a user in.".into(),
        scenarios: vec![],
    };
    let delta = DeltaSpec {
        added: vec![bare],
        ..DeltaSpec::default()
    };
    let change = project.write_change("add-bare", &[("auth", delta)]);
    let out = project.openspec(&["validate", change.id(), "--strict", "--no-interactive"]);
    assert!(!out.status.success(), "validate passed: {}", text(&out));
    assert!(
        text(&out).to_lowercase().contains("scenario"),
        "{}",
        text(&out)
    );
}
