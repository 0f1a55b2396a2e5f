//! Tests of the generic CLI provider's own work: choosing the working folder, writing and
//! removing per-call files, and refusing a profile before any CLI starts.

use super::*;
use crate::profile::Tools;

fn file(path: &Path, contents: &str, temporary: bool) -> CallFile {
    CallFile {
        path: path.to_path_buf(),
        contents: contents.to_owned(),
        temporary,
    }
}

#[test]
fn per_call_files_go_when_the_call_ends_and_never_replace_someone_elses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = dir.path().join(".gemini/settings.json");
    let kept = dir.path().join("kept/settings.json");
    {
        let mut written = Written::default();
        written
            .write(&file(&settings, "// gavel\n{}", true))
            .expect("written");
        written.write(&file(&kept, "{}", false)).expect("written");
        assert!(settings.is_file() && kept.is_file());
    }
    assert!(!settings.exists(), "a temporary file is removed");
    assert!(
        !dir.path().join(".gemini").exists(),
        "with the folder gavel created for it"
    );
    assert!(kept.is_file(), "a file in gavel's own folder stays");

    std::fs::create_dir_all(dir.path().join(".gemini")).expect("mkdir");
    std::fs::write(&settings, "{\"theirs\": true}").expect("their settings");
    let mut written = Written::default();
    let err = written
        .write(&file(&settings, "// gavel\n{}", true))
        .expect_err("someone else's file");
    assert!(err.contains("not written by gavel"), "{err}");
    drop(written);
    assert_eq!(
        std::fs::read_to_string(&settings).expect("still there"),
        "{\"theirs\": true}"
    );

    std::fs::write(&settings, "// gavel\n{\"left\": 1}").expect("left by a killed gavel");
    let mut written = Written::default();
    written
        .write(&file(&settings, "// gavel\n{}", true))
        .expect("gavel's own file is replaced");
    drop(written);
    assert!(!settings.exists());
    assert!(
        dir.path().join(".gemini").is_dir(),
        "a folder gavel did not create stays"
    );
}

fn provider(agent_dir: &Path, make: fn(String, CliSettings) -> CliProvider) -> CliProvider {
    make(
        "m".to_owned(),
        CliSettings {
            workdir: Some(agent_dir.to_path_buf()),
            ..CliSettings::default()
        },
    )
}

#[test]
fn the_working_folder_is_the_profiles_or_gavels_own_or_a_private_one() {
    let root = tempfile::tempdir().expect("tempdir");
    let agent = root.path().join("agent-workdir");
    let claude = provider(&agent, CliProvider::claude);
    let gemini = provider(&agent, CliProvider::gemini);
    let scratch = root.path().join("call");

    let mut written = Written::default();
    let text_only = AgentProfile::text_only();
    let chosen = claude
        .workdir(&text_only, &scratch, &mut written)
        .expect("gavel's folder");
    assert_eq!(chosen, (Some(agent.clone()), true));
    assert!(agent.is_dir(), "created when missing");

    let edit = AgentProfile::edit_within(root.path(), 5);
    let chosen = gemini
        .workdir(&edit, &scratch, &mut written)
        .expect("the profile's folder");
    assert_eq!(chosen, (Some(root.path().to_path_buf()), false));

    let missing = AgentProfile::edit_within(root.path().join("gone"), 5);
    let err = claude
        .workdir(&missing, &scratch, &mut written)
        .expect_err("a folder the profile chose must exist");
    assert!(err.to_string().contains("does not exist"), "{err}");

    let read = AgentProfile {
        tools: Tools::ReadOnly,
        ..AgentProfile::text_only()
    };
    let chosen = claude
        .workdir(&read, &scratch, &mut written)
        .expect("gavel's folder");
    assert_eq!(
        chosen,
        (Some(agent.clone()), true),
        "Claude's settings are flags"
    );
    let chosen = gemini
        .workdir(&read, &scratch, &mut written)
        .expect("a private folder");
    assert_eq!(
        chosen,
        (Some(scratch.clone()), false),
        "the Gemini CLI's settings file must not be shared"
    );
    assert!(scratch.is_dir());
    drop(written);
    assert!(!scratch.exists(), "the private folder goes with the call");
}

#[test]
fn a_profile_the_cli_cannot_run_fails_permanently_before_it_starts() {
    let root = tempfile::tempdir().expect("tempdir");
    let codex = provider(root.path(), CliProvider::codex);
    let listed = AgentProfile {
        tools: Tools::Shell {
            within: root.path().to_path_buf(),
            allowed: vec!["cargo test".into()],
        },
        ..AgentProfile::text_only()
    };
    let no_turns = AgentProfile {
        max_turns: 0,
        ..AgentProfile::text_only()
    };
    for (profile, says) in [(listed, "Codex cannot"), (no_turns, "at least one turn")] {
        let req = Request {
            role: crate::Role::DRAFTER,
            prompt: "p".into(),
            seq: 0,
            step_id: "s".into(),
            max_output_tokens: 10,
            profile,
            output_schema: None,
        };
        let err = codex
            .complete(&req, &Call::new(&|| false))
            .expect_err("refused");
        assert!(
            matches!(&err, ProviderError::Permanent { message, .. } if message.contains(says)),
            "{err:?}"
        );
        assert!(err.hint().is_some());
    }
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A fake `claude` in `bin` answering with its `TMPDIR`, a launcher at `launcher` running
/// `body`, and a confined editing call of `tree` through it.
fn confined_call(dir: &Path, launcher_body: &str) -> (Result<Response, ProviderError>, PathBuf) {
    let bin = dir.join("bin");
    let tree = dir.join("tree");
    let home = dir.join("home");
    for d in [&bin, &tree, &home] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    script(
        &bin.join("claude"),
        "cat > /dev/null; touch \"$TMPDIR/scratch\" && \
         printf '{\"type\":\"result\",\"result\":\"%s\",\"is_error\":false}\\n' \"$TMPDIR\"\n",
    );
    let launcher = dir.join("launcher");
    script(&launcher, launcher_body);
    let settings = CliSettings {
        env: vec![
            ("PATH".into(), format!("{}:/usr/bin:/bin", bin.display())),
            ("HOME".into(), home.display().to_string()),
            ("LOG".into(), dir.join("log").display().to_string()),
        ],
        ..CliSettings::default()
    };
    let provider = CliProvider::claude("m", settings);
    let profile = AgentProfile::edit_within(&tree, 3).confined(
        gavel_exec::confine::Launcher {
            program: launcher,
            args: vec!["__confine".into()],
        },
        vec![tree.clone()],
    );
    let request = Request {
        role: crate::Role::DRAFTER,
        prompt: "p".into(),
        seq: 0,
        step_id: "s".into(),
        max_output_tokens: 10,
        profile,
        output_schema: None,
    };
    (provider.complete(&request, &Call::new(&|| false)), tree)
}

#[test]
fn a_confined_call_runs_through_the_launcher_with_its_folders_and_a_private_tmp() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The launcher logs its arguments, then runs what follows `--`.
    let (answer, tree) = confined_call(
        dir.path(),
        "echo \"$@\" > \"$LOG\"\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n",
    );
    let answer = answer.expect("answered");
    let tmp = PathBuf::from(answer.text.trim());
    assert!(tmp.starts_with(std::env::temp_dir()), "{tmp:?}");
    assert!(
        !tmp.exists(),
        "the call's temporary folder is removed with its files"
    );
    let log = std::fs::read_to_string(dir.path().join("log")).expect("launcher log");
    let home = dir.path().join("home");
    let want = format!(
        "__confine --write {} --write {} --write {} -- ",
        tree.display(),
        tmp.display(),
        home.join(".claude").display()
    );
    assert!(log.starts_with(&want), "{log}\nwant: {want}");
    assert!(log.contains("claude -p"), "{log}");
    assert!(home.join(".claude").is_dir(), "its state folder is made");
    assert!(
        !log.contains(".claude.json"),
        "a missing file cannot be named: {log}"
    );
}

#[test]
fn the_launchers_refusals_are_permanent_errors_that_say_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (refused, _) = confined_call(
        dir.path(),
        "echo 'gavel confine: this system cannot confine an agent' >&2\nexit 126\n",
    );
    match refused {
        Err(ProviderError::Permanent { message, hint, .. }) => {
            assert!(message.contains("the confinement launcher"), "{message}");
            assert!(message.contains("cannot confine an agent"), "{message}");
            assert!(hint.is_some_and(|h| h.contains("sandbox = \"none\"")));
        }
        other => panic!("{other:?}"),
    }
    let (missing, _) = confined_call(
        dir.path(),
        "echo 'gavel confine: `claude` not found' >&2\nexit 127\n",
    );
    match missing {
        Err(ProviderError::Permanent { message, .. }) => {
            assert!(message.contains("could not find claude"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// A fake `claude` that (when `hand_in` is set) writes `answer.md` in its folder, then stops
/// at its turn limit with the usage and cost of its turns; called with that answer file.
fn max_turns_call(
    dir: &Path,
    hand_in: bool,
) -> (Result<Response, ProviderError>, Vec<CallProgress>) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let write = if hand_in {
        "echo review > \"$ANSWER\"; "
    } else {
        ""
    };
    script(
        &bin.join("claude"),
        &format!(
            "cat > /dev/null; {write}printf '%s\\n' \
             '{{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true,\"total_cost_usd\":0.0123,\"usage\":{{\"input_tokens\":100,\"output_tokens\":30}}}}'\nexit 1\n"
        ),
    );
    let answer = dir.join("answer.md");
    let settings = CliSettings {
        env: vec![
            ("PATH".into(), format!("{}:/usr/bin:/bin", bin.display())),
            ("HOME".into(), dir.display().to_string()),
            ("ANSWER".into(), answer.display().to_string()),
        ],
        ..CliSettings::default()
    };
    let provider = CliProvider::claude("m", settings);
    let request = Request {
        role: crate::Role::REVIEWER,
        prompt: "p".into(),
        seq: 0,
        step_id: "s".into(),
        max_output_tokens: 10,
        profile: AgentProfile::text_only().with_answer_file(&answer),
        output_schema: None,
    };
    let heard = std::sync::Mutex::new(Vec::new());
    let progress = |p: CallProgress| heard.lock().expect("lock").push(p);
    let call = Call {
        cancelled: &|| false,
        progress: &progress,
    };
    let result = provider.complete(&request, &call);
    (result, heard.into_inner().expect("lock"))
}

#[test]
fn an_error_result_with_usage_is_reported_as_billed_and_fails_without_a_retry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (result, heard) = max_turns_call(dir.path(), false);
    let err = result.expect_err("no answer");
    assert!(
        matches!(&err, ProviderError::Permanent { message, .. } if message.contains("error_max_turns")),
        "a turn limit is not worth retrying: {err:?}"
    );
    let billed: Vec<&BilledAttempt> = heard
        .iter()
        .filter_map(|p| match p {
            CallProgress::Billed(b) => Some(&**b),
            _ => None,
        })
        .collect();
    assert_eq!(billed.len(), 1, "{heard:?}");
    assert_eq!(
        (
            billed[0].input_tokens,
            billed[0].output_tokens,
            billed[0].cost_micros
        ),
        (Some(100), Some(30), Some(12_300))
    );
    assert!(
        billed[0].error.contains("error_max_turns"),
        "{:?}",
        billed[0]
    );
}

#[test]
fn an_answer_handed_in_before_the_cli_failed_is_the_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (result, heard) = max_turns_call(dir.path(), true);
    let response = result.expect("the handed-in answer stands");
    assert_eq!(response.cost_usd, Some(0.0123));
    assert_eq!(
        (response.input_tokens, response.output_tokens),
        (Some(100), Some(30))
    );
    assert!(
        response
            .ended_with
            .as_deref()
            .is_some_and(|e| e.contains("error_max_turns")),
        "{response:?}"
    );
    assert!(
        !heard.iter().any(|p| matches!(p, CallProgress::Billed(_))),
        "the answer is billed as the answer, not as a failure: {heard:?}"
    );
}
