//! The document kinds for the scenarios that hold for both (brief → issue, issue → LLD): how
//! each starts from its input, and where its lineage and results go.

use std::process::Output;

use crate::util::{Env, assert_exit, show_output, stderr};

/// The document kinds, for the scenarios that hold for both (brief → issue, issue → LLD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doc {
    Issue,
    Lld,
}

impl Doc {
    pub const BOTH: [Doc; 2] = [Doc::Issue, Doc::Lld];

    /// Writes the input (a brief, or issue 1 of the local tracker) and runs `gavel` on it with
    /// `extra` arguments.
    pub fn start(self, env: &Env, extra: &[&str]) -> Output {
        let input = match self {
            Doc::Issue => env.brief("dark-mode"),
            Doc::Lld => {
                env.local_issue(1, "open");
                "1".to_owned()
            }
        };
        let mut args = vec![self.command(), input.as_str()];
        args.extend_from_slice(extra);
        env.run(&args)
    }

    pub fn command(self) -> &'static str {
        match self {
            Doc::Issue => "issue",
            Doc::Lld => "lld",
        }
    }

    /// The run's lineage folder while it is open.
    pub fn active(self) -> &'static str {
        match self {
            Doc::Issue => "docs/lineage/active/dark-mode",
            Doc::Lld => "docs/lineage/active/1-lld",
        }
    }

    /// The lineage folder once done.
    pub fn done(self) -> &'static str {
        match self {
            Doc::Issue => "docs/lineage/done/1-dark-mode",
            Doc::Lld => "docs/lineage/done/1-lld",
        }
    }

    /// The input's lineage file.
    pub fn first(self) -> &'static str {
        match self {
            Doc::Issue => "001-brief.md",
            Doc::Lld => "001-issue.md",
        }
    }

    pub fn rubric(self) -> &'static str {
        match self {
            Doc::Issue => "docs/skills/0701c-issue-review-prompt.md",
            Doc::Lld => "docs/skills/0702c-lld-review-prompt.md",
        }
    }

    /// How many results (filed issues, approved LLDs) the repository holds.
    pub fn results(self, env: &Env) -> usize {
        match self {
            Doc::Issue => env.issues().len(),
            Doc::Lld => env
                .ls("docs/lld/active")
                .iter()
                .filter(|n| n.ends_with(".md"))
                .count(),
        }
    }

    /// Starts a non-auto run that pauses at the draft gate; returns its run id.
    pub fn start_paused(self, env: &Env) -> String {
        let out = self.start(env, &[]);
        assert_exit(&out, 3);
        assert!(
            stderr(&out).contains("--choice send"),
            "{}",
            show_output(&out)
        );
        env.runs()
            .iter()
            .rev()
            .find(|r| r["workflow"] == self.command())
            .expect("run listed")["id"]
            .to_string()
    }
}

impl Env {
    /// Issue `n` of the local tracker, written as gavel files it, and committed.
    pub fn local_issue(&self, n: u64, state: &str) {
        self.write(
            &format!("docs/issues/{n:04}-dark-mode.md"),
            &format!(
                "---\nnumber: {n}\ntitle: Dark mode\nlabels: [ui]\nstate: {state}\n---\n\n# Dark mode\n\nThe dashboard is too bright at night.\n"
            ),
        );
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "issue"]);
    }
}
