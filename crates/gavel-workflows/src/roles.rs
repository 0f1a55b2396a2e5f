//! Rules about a workflow's roles that hold for every workflow.
//!
//! The seeds' point is a second model: a reviewer that is the same provider and model as the
//! author it judges only agrees with itself. gavel allows it (a person may want it for a dry
//! run) but says so in `gavel doctor` and in pre-flight.

/// A warning when `judge` (e.g. the reviewer) uses the same provider and model as `author`
/// (e.g. the drafter); `None` when they differ.
pub fn same_model_warning(
    judge_role: &str,
    judge: &str,
    author_role: &str,
    author: &str,
) -> Option<String> {
    (judge.trim() == author.trim()).then(|| {
        format!(
            "the {judge_role} is the same provider and model as the {author_role} ({judge}): it will judge its own work; set a different model for one of them"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_model_judging_itself_is_named() {
        let w = same_model_warning("reviewer", "claude:sonnet", "drafter", "claude:sonnet");
        assert!(w.is_some_and(|w| w.contains("judge its own work")));
        assert!(
            same_model_warning("reviewer", "gemini:2.5-pro", "drafter", "claude:sonnet").is_none()
        );
    }
}
