//! Noticing attempts to skip or pre-answer the gate (LLD #171's `bypass_attempted`). Nothing
//! here changes a decision: the gate cannot be skipped, and the only approval is a person
//! typing `approve` at a terminal. These functions name what was tried, so the caller can warn
//! and the audit record can say so ([`AuditEvent::bypass_attempts`](crate::AuditEvent)).

/// gavel's own variables, which are never attempts: the test hooks `GAVEL_NOW` and
/// `GAVEL_CRASH_AT`, and `GAVEL_STATE_DIR` (where the state database lives).
pub const KNOWN_VARIABLES: &[&str] = &["GAVEL_NOW", "GAVEL_CRASH_AT", "GAVEL_STATE_DIR"];

/// Words in a `GAVEL_*` variable's name that mean it tries to answer or skip the gate.
const MARKERS: &[&str] = &[
    "APPROVE",
    "YES",
    "AUTO",
    "SKIP",
    "BYPASS",
    "FORCE",
    "NO_VERIFY",
    "NOVERIFY",
    "NONINTERACTIVE",
    "NON_INTERACTIVE",
    "UNATTENDED",
    "ASSUME",
    "ACCEPT",
    "CONFIRM",
    "GATE",
];

/// The names among `names` (an environment's variable names) that look like an attempt to
/// pre-answer or skip the gate: they start with `GAVEL_` and contain one of `APPROVE`, `YES`,
/// `AUTO`, `SKIP`, `BYPASS`, `FORCE`, `NO_VERIFY`, `NONINTERACTIVE`, `UNATTENDED`, `ASSUME`,
/// `ACCEPT`, `CONFIRM` or `GATE` (so every `GAVEL_DIFF_GATE*`), ignoring case, and are not one
/// of the [`KNOWN_VARIABLES`]. Sorted and without duplicates, so the record does not depend on
/// the environment's order. Only names are looked at: a value never reaches the record.
#[must_use]
pub fn bypass_variables<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut found: Vec<String> = names
        .into_iter()
        .filter(|name| looks_like_bypass(name))
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

fn looks_like_bypass(name: &str) -> bool {
    if KNOWN_VARIABLES.contains(&name) {
        return false;
    }
    let upper = name.to_ascii_uppercase();
    let Some(rest) = upper.strip_prefix("GAVEL_") else {
        return false;
    };
    MARKERS.iter().any(|marker| rest.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_that_try_to_answer_or_skip_the_gate() {
        for name in [
            "GAVEL_AUTO_APPROVE",
            "GAVEL_APPROVE",
            "GAVEL_YES",
            "GAVEL_AUTO",
            "GAVEL_SKIP_REVIEW",
            "GAVEL_BYPASS",
            "GAVEL_FORCE",
            "GAVEL_NO_VERIFY",
            "GAVEL_NONINTERACTIVE",
            "GAVEL_DIFF_GATE",
            "GAVEL_DIFF_GATE_ANSWER",
            "GAVEL_DIFFGATE",
            "gavel_assume_yes",
        ] {
            assert_eq!(bypass_variables([name]), vec![name.to_owned()], "{name}");
        }
    }

    #[test]
    fn gavels_own_and_other_variables_are_not_attempts() {
        let names = [
            "GAVEL_NOW",
            "GAVEL_CRASH_AT",
            "GAVEL_STATE_DIR",
            "GAVEL_STORE_TEST_LOCK_HELPER",
            "CI",
            "AUTO_APPROVE",
            "GIT_AUTO",
            "YES",
            "NOT_GAVEL_APPROVE",
            "GAVEL",
        ];
        assert!(bypass_variables(names).is_empty());
    }

    #[test]
    fn sorted_and_deduplicated() {
        assert_eq!(
            bypass_variables(["GAVEL_YES", "PATH", "GAVEL_AUTO", "GAVEL_YES"]),
            vec!["GAVEL_AUTO".to_owned(), "GAVEL_YES".to_owned()]
        );
    }
}
