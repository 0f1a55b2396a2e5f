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
