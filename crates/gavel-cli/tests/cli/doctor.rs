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
