//! What a run sends where, said before its first model call (the seed's data-handling
//! policy): which provider receives what for each role, which context files go with it, and
//! what stays on this machine and for how long. Each workflow builds its [`Sent`] list and
//! records the statement as timeline notes from the node that precedes its first model call;
//! the terminal prints them as they happen, and `gavel show` keeps them. The book's "What is
//! sent where" says the same for every workflow.

use gavel_core::{EventKind, NodeCtx};

/// One role's recipient and what it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent<'a> {
    /// `drafter`, `reviewer`, `implementer`, …
    pub role: &'a str,
    /// The provider string (`claude:sonnet`, `openai:gpt-5`, `scripted:script.yaml`).
    pub provider: &'a str,
    /// What this role is given, in a few words.
    pub what: &'a str,
}

/// What every run keeps on this machine (or in the team's store), and for how long.
pub const KEPT: &str = "kept: every prompt, answer and artifact in the run store (`.gavel/`, or the team's PostgreSQL with `[storage] url`) until you delete it; the lineage folder under docs/lineage/, committed with your history; a log per run in .gavel/logs/ (nothing expires by itself)";

/// The statement's lines: one per role, the context files by name, and what is kept.
pub fn statement(sent: &[Sent<'_>], context: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sent {
        let whither = if s.provider.starts_with("scripted:") {
            " (scripted answers: nothing leaves this machine)"
        } else {
            ""
        };
        out.push(format!(
            "sent to {} ({}){whither}: {}",
            s.provider, s.role, s.what
        ));
    }
    if !context.is_empty() {
        out.push(format!("context files sent: {}", context.join(", ")));
    }
    out.push(KEPT.to_owned());
    out
}

/// Records the statement as timeline notes (printed as they happen).
pub fn record(cx: &mut NodeCtx<'_>, sent: &[Sent<'_>], context: &[String]) {
    for text in statement(sent, context) {
        cx.event(EventKind::Note {
            text: format!("data: {text}"),
        });
    }
}

/// The context files' paths from a context manifest (`{"files":[{"path":…}]}`), in order; an
/// unreadable manifest names none.
pub fn context_names(manifest: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct File {
        path: String,
    }
    #[derive(serde::Deserialize)]
    struct Manifest {
        files: Vec<File>,
    }
    serde_json::from_str::<Manifest>(manifest)
        .map(|m| m.files.into_iter().map(|f| f.path).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_its_provider_the_context_by_name_and_what_is_kept() {
        let lines = statement(
            &[
                Sent {
                    role: "drafter",
                    provider: "claude:sonnet",
                    what: "the brief",
                },
                Sent {
                    role: "reviewer",
                    provider: "scripted:s.yaml",
                    what: "each draft",
                },
            ],
            &["src/a.rs".into(), "docs/b.md".into()],
        );
        assert_eq!(lines[0], "sent to claude:sonnet (drafter): the brief");
        assert_eq!(
            lines[1],
            "sent to scripted:s.yaml (reviewer) (scripted answers: nothing leaves this machine): each draft"
        );
        assert_eq!(lines[2], "context files sent: src/a.rs, docs/b.md");
        assert!(lines[3].starts_with("kept: every prompt"));
    }

    #[test]
    fn a_manifest_gives_its_paths_and_garbage_gives_none() {
        let m = r#"{"files":[{"path":"a.rs","bytes":1,"tokens":1,"sha256":"x"},{"path":"b/c.md","bytes":1,"tokens":1,"sha256":"y"}],"total_tokens":2,"total_bytes":2}"#;
        assert_eq!(context_names(m), ["a.rs", "b/c.md"]);
        assert!(context_names("not json").is_empty());
    }
}
