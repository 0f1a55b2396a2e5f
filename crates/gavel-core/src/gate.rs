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
}

impl GateRequest {
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
        }
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
