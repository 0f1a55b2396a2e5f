//! The run's roles belong to the run: the implementer (and a change run's reviewer) are pinned
//! in the state when the run starts, and a resume uses them whatever `gavel.toml` says by then.
//! The CLI builds a resumed workflow from the pinned roles plus `gavel resume --role` changes;
//! here the workflow compares what it was built with against what the run holds, records any
//! change in the timeline, and pins the new value.
//!
//! A run started by a gavel that did not pin its implementer has none in its state: it takes
//! the implementer the configuration gives when it is resumed (as that gavel did), says so in
//! the timeline, and keeps it from then on.

use gavel_core::{EventKind, NodeCtx};

use super::{ImplementState, ImplementWorkflow};

impl ImplementWorkflow {
    /// Pins the roles in `s`, noting in the timeline any that changed.
    pub(super) fn sync_roles(&self, s: &mut ImplementState, cx: &mut NodeCtx<'_>) {
        let (note, changes) = role_changes(
            s,
            &self.settings.implementer,
            self.settings.reviewer.as_deref(),
        );
        if let Some(text) = note {
            cx.event(EventKind::Note { text });
        }
        if !changes.is_empty() {
            cx.event(EventKind::Note {
                text: format!("role changed (gavel resume --role): {}", changes.join(", ")),
            });
        }
    }
}

/// Pins `implementer` (and `reviewer`, for a change run) in `s`. Returns the note for a run
/// that had no pinned implementer, and each change as `ROLE WAS -> IS`.
fn role_changes(
    s: &mut ImplementState,
    implementer: &str,
    reviewer: Option<&str>,
) -> (Option<String>, Vec<String>) {
    let mut changes = Vec::new();
    let note = match &s.implementer {
        None => Some(format!(
            "this run was started by a gavel that did not pin its implementer: it uses {implementer} (from the configuration now) and keeps it from here on"
        )),
        Some(was) if was != implementer => {
            changes.push(format!("implementer {was} -> {implementer}"));
            None
        }
        Some(_) => None,
    };
    s.implementer = Some(implementer.to_owned());
    if let (Some(c), Some(is)) = (s.change.as_mut(), reviewer)
        && c.reviewer != is
    {
        changes.push(format!("reviewer {} -> {is}", c.reviewer));
        c.reviewer = is.to_owned();
    }
    (note, changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> ImplementState {
        ImplementState::new(
            "k".into(),
            1,
            "t".into(),
            "lld.md".into(),
            "text".into(),
            "abc".into(),
            "main".into(),
            false,
            "now".into(),
        )
    }

    #[test]
    fn a_pinned_implementer_is_kept_and_a_change_is_named() {
        let mut s = state();
        s.implementer = Some("claude:sonnet".into());
        assert_eq!(role_changes(&mut s, "claude:sonnet", None), (None, vec![]));
        let (note, changes) = role_changes(&mut s, "codex:gpt-5", None);
        assert!(note.is_none());
        assert_eq!(changes, ["implementer claude:sonnet -> codex:gpt-5"]);
        assert_eq!(s.implementer.as_deref(), Some("codex:gpt-5"));
    }

    #[test]
    fn a_run_without_a_pinned_implementer_says_what_it_uses_and_pins_it() {
        let mut s = state();
        let (note, changes) = role_changes(&mut s, "claude:opus", None);
        assert!(note.is_some_and(
            |n| n.contains("did not pin its implementer") && n.contains("claude:opus")
        ));
        assert!(changes.is_empty());
        assert_eq!(s.implementer.as_deref(), Some("claude:opus"));
    }
}
