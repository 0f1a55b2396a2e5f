//! Human gates as values.
//!
//! A node that needs a person's decision returns a [`GateRequest`] instead of asking; the engine
//! records the run as waiting and hands the request to its caller, which decides how to ask (a
//! prompt in a terminal, or `gavel resume RUN --choice ...` later). The answer comes back as a
//! [`GateAnswer`] naming the gate's stable id, so an answer can never be applied to the wrong
//! gate.

use serde::{Deserialize, Serialize};

/// One answer a gate accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The value given to `--choice` (for example `send`).
    pub name: String,
    /// The single key accepted at an interactive prompt (for example `S`).
    pub key: char,
    /// What the choice does, for the prompt.
    pub help: String,
    /// Whether this choice takes free-text feedback (for example Revise).
    #[serde(default)]
    pub takes_feedback: bool,
}

impl Choice {
    pub fn new(name: &str, key: char, help: &str) -> Self {
        Self {
            name: name.into(),
            key,
            help: help.into(),
            takes_feedback: false,
        }
    }

    /// Marks the choice as taking feedback.
    pub fn with_feedback(mut self) -> Self {
        self.takes_feedback = true;
        self
    }
}

/// A request for a human decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateRequest {
    /// Stable id: `{node}@{checkpoint seq}`. The same gate keeps its id across resumes.
    pub id: String,
    /// The node that asks.
    pub node: String,
    /// What kind of gate this is (workflow specific, for example `draft` or `verdict`).
    pub kind: String,
    /// The question.
    pub title: String,
    /// Extra context to show (a verdict summary, an error).
    #[serde(default)]
    pub detail: Option<String>,
    /// Files the person should look at (repository-relative).
    #[serde(default)]
    pub artifacts: Vec<String>,
    pub choices: Vec<Choice>,
    /// The choice the workflow recommends, if any.
    #[serde(default)]
    pub recommended: Option<String>,
    /// How the gate is shown and answered; every field defaults, so gates stored by an older
    /// gavel still load (and are asked plainly).
    /// (Boxed: most gates leave it at its default, and a gate travels inside run statuses.)
    #[serde(default)]
    pub present: Box<Presentation>,
}

/// How a gate is put to a person: what to open and show, what to call feedback, and how an
/// answer is confirmed. The workflow describes it; the CLI renders it without knowing the
/// workflow.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presentation {
    /// Files (repository-relative) opened in the person's editor when the gate is first asked
    /// at a terminal, before the question (a draft to read and edit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<String>,
    /// Files the person may reopen from the prompt with `[E]dit` (a draft and its verdict); the
    /// workflow re-reads them after the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub editable: Vec<String>,
    /// A file whose first lines are shown above the question (a verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// Show the whole preview, not its first lines: a report a person must read in full before
    /// approving (the implementation workflows' diff gate; the report caps itself).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preview_whole: bool,
    /// The prompt for free-text feedback, for choices that take it ("Feedback for the
    /// drafter").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_label: Option<String>,
    /// How a choice is confirmed at a terminal.
    #[serde(default, skip_serializing_if = "Confirm::is_key")]
    pub confirm: Confirm,
}

/// How a person confirms a choice at a terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confirm {
    /// A choice's key or name (`S`, `send`).
    #[default]
    Key,
    /// Only the choice's name typed in full (`approve`): for decisions that must not be made
    /// by a stray key press.
    Word,
}

impl Confirm {
    fn is_key(&self) -> bool {
        matches!(self, Self::Key)
    }
}

impl Choice {
    /// The label a prompt shows: `[S]end` when the key is the name's first letter, otherwise
    /// `[K] name`. Works for any characters (never slices a name by bytes).
    pub fn label(&self) -> String {
        let mut chars = self.name.chars();
        match chars.next() {
            Some(first) if first.to_lowercase().eq(self.key.to_lowercase()) => {
                format!("[{}]{}", self.key, chars.as_str())
            }
            _ => format!("[{}] {}", self.key, self.name),
        }
    }
}

impl GateRequest {
    /// The choice a person typed at a terminal: by name or key, or (with [`Confirm::Word`])
    /// only by the full name.
    pub fn typed_choice(&self, input: &str) -> Option<&Choice> {
        match self.present.confirm {
            Confirm::Key => self.choice(input),
            Confirm::Word => {
                let input = input.trim();
                self.choices.iter().find(|c| c.name == input)
            }
        }
    }

    /// Finds a choice by name (`send`) or key (`S`/`s`).
    pub fn choice(&self, input: &str) -> Option<&Choice> {
        let input = input.trim();
        self.choices.iter().find(|c| {
            c.name.eq_ignore_ascii_case(input)
                || (input.chars().count() == 1
                    && input
                        .chars()
                        .next()
                        .is_some_and(|k| k.eq_ignore_ascii_case(&c.key)))
        })
    }

    /// The valid `--choice` values, for error messages.
    pub fn choice_names(&self) -> Vec<&str> {
        self.choices.iter().map(|c| c.name.as_str()).collect()
    }
}

/// A person's decision at a gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateAnswer {
    /// The id of the gate being answered.
    pub gate_id: String,
    /// The chosen [`Choice::name`].
    pub choice: String,
    /// Free-text feedback, for choices that take it.
    #[serde(default)]
    pub feedback: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> GateRequest {
        GateRequest {
            id: "N3@2".into(),
            node: "N3".into(),
            kind: "draft".into(),
            title: "Draft ready".into(),
            detail: None,
            artifacts: vec![],
            choices: vec![
                Choice::new("send", 'S', "send"),
                Choice::new("revise", 'R', "revise"),
            ],
            recommended: None,
            present: Box::default(),
        }
    }

    #[test]
    fn labels_never_slice_a_name_by_bytes() {
        // Regression (issue 11): `[K]` + name[1..] mislabelled a choice whose key is not its
        // first letter, and panicked on a non-ASCII first letter.
        assert_eq!(Choice::new("send", 'S', "").label(), "[S]end");
        assert_eq!(Choice::new("approve", 'y', "").label(), "[y] approve");
        assert_eq!(Choice::new("étendre", 'É', "").label(), "[É]tendre");
        assert_eq!(Choice::new("ümlaut", 'x', "").label(), "[x] ümlaut");
    }

    #[test]
    fn a_word_gate_takes_only_the_whole_word() {
        let mut g = gate();
        g.present.confirm = Confirm::Word;
        assert!(g.typed_choice("s").is_none(), "a key is not enough");
        assert!(g.typed_choice("Send").is_none(), "the word as written");
        assert_eq!(g.typed_choice(" send ").map(|c| c.key), Some('S'));
    }

    #[test]
    fn a_gate_stored_without_presentation_still_loads() {
        let json = r#"{"id":"N3@2","node":"N3","kind":"draft","title":"t","choices":[]}"#;
        let g: GateRequest = serde_json::from_str(json).expect("old gate");
        assert_eq!(*g.present, Presentation::default());
    }

    #[test]
    fn choices_match_by_name_or_key_case_insensitively() {
        let g = gate();
        assert_eq!(g.choice("send").map(|c| c.key), Some('S'));
        assert_eq!(g.choice(" r ").map(|c| c.name.as_str()), Some("revise"));
        assert!(g.choice("approve").is_none());
        assert!(g.choice("").is_none());
        assert!(g.choice("sr").is_none());
    }
}
