//! Settings tests: defaults, bad values named, per-workflow sections, keys and logins, the
//! diff gate's audit log.

use super::*;

fn load(text: &str) -> Result<Settings, CliError> {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join(CONFIG_FILE), text).expect("write");
    Settings::load(dir.path(), &Overrides::default())
}

#[test]
fn the_default_config_parses_to_the_defaults() {
    let s = load(&default_config_text()).expect("valid");
    assert_eq!(
        s.role("issue", "drafter").expect("role").to_string(),
        DEFAULT_DRAFTER
    );
    assert_eq!(s.max_iterations("issue"), 20);
    assert_eq!(s.lineage_dir, PathBuf::from("docs/lineage"));
    assert!(!s.fsync);
    assert!(load("[storage]\nfsync = true\n").expect("valid").fsync);
    let e = load("[storage]\nfsync = \"yes\"\n").expect_err("not a bool");
    assert!(e.message.contains("fsync"), "{}", e.message);
}

#[test]
fn bad_values_are_named() {
    let s = load("[roles]\ndrafter = \"gpt4\"\n").expect("roles are parsed when used");
    let e = s.role("issue", "drafter").expect_err("invalid role");
    assert!(
        e.message.contains("drafter") && e.message.contains("gpt4"),
        "{}",
        e.message
    );
    let e = load("[limits]\nmax_iteration = 3\n").expect_err("unknown key");
    assert!(e.message.contains("max_iteration"), "{}", e.message);
    let e = load("[paths]\nlineage = \"../out\"\n").expect_err("escape");
    assert!(e.message.contains("../out"), "{}", e.message);
}

#[test]
fn issue10_the_audit_log_defaults_to_a_tracked_file_and_can_be_moved() {
    // Regression (issue 10, defect 3): the record went to .gavel/, which git ignores.
    let s = load("").expect("valid");
    assert_eq!(s.audit_log, PathBuf::from("docs/audit/diff-gate.jsonl"));
    assert!(!s.audit_log.starts_with(".gavel"));
    let s = load(&default_config_text()).expect("valid");
    assert_eq!(
        s.audit_log,
        PathBuf::from(gavel_diffgate::DEFAULT_AUDIT_LOG)
    );
    let s = load("[diff_gate]\naudit_log = \"audit/gate.jsonl\"\napproval_timeout_secs = 5\n")
        .expect("valid");
    assert_eq!(s.audit_log, PathBuf::from("audit/gate.jsonl"));
    assert_eq!(s.approval_timeout, std::time::Duration::from_secs(5));
    for bad in ["../gate.jsonl", "/tmp/gate.jsonl", " "] {
        let e = load(&format!("[diff_gate]\naudit_log = {bad:?}\n")).expect_err(bad);
        assert!(e.message.contains("diff_gate.audit_log"), "{}", e.message);
    }
    let e = load("[diff_gate]\naudit_path = \"x\"\n").expect_err("unknown key");
    assert!(e.message.contains("audit_path"), "{}", e.message);
}

#[test]
fn keys_and_logins_resolve_into_the_settings() {
    let s = load(
        "[keys]\nanthropic = [\"ANTHROPIC_API_KEY\", \"ANTHROPIC_API_KEY_2\"]\n\
         [logins]\ncodex = [\"/srv/codex-a\", \"CODEX_KEY_B\"]\n",
    )
    .expect("valid");
    assert_eq!(
        s.key_env["anthropic"],
        ["ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY_2"]
    );
    assert_eq!(
        s.logins["codex"],
        [
            Login::Folder(PathBuf::from("/srv/codex-a")),
            Login::KeyVar("CODEX_KEY_B".into())
        ]
    );
    let e = load("[logins]\ncopilot = \"X\"\n").expect_err("unknown CLI");
    assert!(e.message.contains("copilot"), "{}", e.message);
}

#[test]
fn a_bad_role_lists_the_valid_forms_once() {
    // Regression: the forms were in the message and again in a hint.
    let s = load("[roles]\ndrafter = \"bogus:x\"\n").expect("parsed when used");
    let e = s.role("issue", "drafter").expect_err("invalid role");
    let shown = format!("{} {}", e.message, e.hints.join(" "));
    assert_eq!(shown.matches("scripted:FILE").count(), 1, "{shown}");
}

#[test]
fn workflow_sections_override_the_global_keys_which_still_work() {
    let s = load(
        "[roles]\ndrafter = \"claude:opus\"\nreviewer = \"gemini:2.5-pro\"\n\
         [limits]\nmax_iterations = 7\n\
         [workflows.issue]\nmax_iterations = 3\n\
         [workflows.issue.roles]\nreviewer = \"codex:gpt-5\"\n\
         [workflows.lld.roles]\nplanner = \"claude:sonnet\"\n",
    )
    .expect("valid");
    let role = |w: &str, r: &str| s.role(w, r).map(|p| p.to_string());
    assert_eq!(role("issue", "drafter").expect("global"), "claude:opus");
    assert_eq!(role("issue", "reviewer").expect("section"), "codex:gpt-5");
    assert_eq!(role("lld", "reviewer").expect("global"), "gemini:2.5-pro");
    assert_eq!(role("lld", "planner").expect("section"), "claude:sonnet");
    let e = role("issue", "planner").expect_err("no provider");
    assert!(e.message.contains("planner"), "{}", e.message);
    assert_eq!((s.max_iterations("issue"), s.max_iterations("lld")), (3, 7));
    let e = load("[workflows.issue]\nroles_x = 1\n").expect_err("unknown key");
    assert!(e.message.contains("roles_x"), "{}", e.message);
}

#[test]
fn regression_the_change_reviewer_of_an_init_repository_is_the_seeds_codex() {
    // `gavel init`'s [roles] reviewer is the document workflows' (Gemini); the change
    // workflows keep the seed's roles unless [changes.roles] sets them.
    let s = load(&super::default_config_text()).expect("init's config");
    let role = |w: &str, r: &str| s.role(w, r).expect("role").to_string();
    assert_eq!(role("change-impl", "reviewer"), "codex:gpt-5-codex");
    assert_eq!(role("change-plan", "challenger"), "codex:gpt-5-codex");
    assert_eq!(role("change-plan", "planner"), "gemini:2.5-pro");
    assert_eq!(role("change-impl", "implementer"), "claude:sonnet");
    assert_eq!(role("issue", "reviewer"), "gemini:2.5-pro");
    let s = load(
        "[roles]\nreviewer = \"gemini:2.5-pro\"\nimplementer = \"codex:gpt-5\"\n\
         [changes.roles]\nreviewer = \"claude:opus\"\n",
    )
    .expect("valid");
    assert_eq!(
        s.role("change-impl", "reviewer").expect("r").to_string(),
        "claude:opus"
    );
    assert_eq!(
        s.role("change-impl", "implementer").expect("i").to_string(),
        "claude:sonnet",
        "[roles] is not the change workflows'"
    );
    assert_eq!(
        s.role("implement", "implementer").expect("i").to_string(),
        "codex:gpt-5"
    );
}

/// A workflow's own section (`[implement]`, `[changes]`) is read by its registration: its
/// values reach the kinds, an error in it names its line as any other does, and a table no
/// one registered is still refused.
#[test]
fn workflow_sections_are_read_by_their_registration() {
    let s = load(
        "[implement]\ntest = \"pytest -q\"\ntimeout_secs = 7\n\n[changes]\nroot = \"specs\"\n\n[changes.roles]\nplanner = \"claude:opus\"\n",
    )
    .expect("valid");
    let implement = s.section::<crate::kinds::ImplementSettingsToml>();
    assert_eq!(implement.test.as_deref(), Some("pytest -q"));
    assert_eq!(implement.timeout, std::time::Duration::from_secs(7));
    let changes = s.section::<crate::kinds::ChangeSettings>();
    assert_eq!(changes.root, PathBuf::from("specs"));
    assert_eq!(
        s.role("change-plan", "planner").expect("role").to_string(),
        "claude:opus"
    );
    // [changes.roles] is not [roles]: the document workflows keep theirs.
    assert_eq!(
        s.role("issue", "drafter").expect("role").to_string(),
        DEFAULT_DRAFTER
    );

    // Absent: the defaults.
    let s = load("").expect("valid");
    assert_eq!(
        s.section::<crate::kinds::ImplementSettingsToml>().test,
        None
    );
    assert_eq!(
        s.section::<crate::kinds::ChangeSettings>().root,
        PathBuf::from(gavel_workflows::change::DEFAULT_ROOT)
    );

    let e = load("[roles]\ndrafter = \"claude:x\"\n\n[implement]\ntset = \"pytest\"\n")
        .expect_err("unknown key in a section");
    assert!(
        e.message.contains("line 5") && e.message.contains("tset"),
        "{}",
        e.message
    );
    let e = load("[changes]\nplanning_iterations = \"three\"\n").expect_err("a string");
    assert!(
        e.message.contains("line 2") && e.message.contains("planning_iterations"),
        "{}",
        e.message
    );
    let e = load("[changes]\nroot = \"../x\"\n").expect_err("escape");
    assert!(e.message.contains("changes.root"), "{}", e.message);
    let e = load("[echo]\ntext = \"hi\"\n").expect_err("no workflow registered [echo]");
    assert!(
        e.message.contains("line 1") && e.message.contains("`echo`"),
        "{}",
        e.message
    );
    // The known tables it lists include the registered ones, for a mistyped `[implemnt]`.
    for table in ["`roles`", "`implement`", "`changes`"] {
        assert!(e.message.contains(table), "{table}: {}", e.message);
    }
}
