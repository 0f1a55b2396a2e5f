//! The order a change's delta specs are generated and merged in: a capability's delta that
//! refers to another capability of the same change comes after it (seed WF-R3, "specs in
//! dependency order").
//!
//! A reference is a Markdown link whose target ends in `CAPABILITY/spec.md` (as written,
//! `../CAPABILITY/spec.md`), read from pulldown-cmark's link events. Bare mentions of a
//! capability's name are not references: names like `auth` or `api` turn up in ordinary prose,
//! and a guessed edge can make a cycle out of nothing. Links to capabilities outside the change,
//! to URLs, and to the spec itself are ignored. Ties keep the order given, so the result is
//! deterministic; a cycle is an error naming the capabilities in it.

use super::spec::outline;

/// A set of delta specs whose references form a cycle.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("delta specs refer to each other in a cycle: {}", capabilities.join(", "))]
pub struct CycleError {
    /// The capabilities that could not be ordered (the cycle and whatever depends on it).
    pub capabilities: Vec<String>,
}

/// The capabilities of the change that `delta_text` links to, among `capabilities`.
pub fn references(delta_text: &str, capabilities: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for link in outline(delta_text).links {
        if link.contains("://") {
            continue;
        }
        let path = link.split(['#', '?']).next().unwrap_or_default();
        let mut parts = path.rsplit('/');
        if parts.next() != Some("spec.md") {
            continue;
        }
        if let Some(cap) = parts.next()
            && capabilities.contains(&cap)
            && !found.iter().any(|f| f == cap)
        {
            found.push(cap.to_owned());
        }
    }
    found
}

/// Orders `(capability, delta text)` pairs so every capability comes after the ones it links
/// to; returns the capabilities in that order.
pub fn dependency_order(specs: &[(&str, &str)]) -> Result<Vec<String>, CycleError> {
    let names: Vec<&str> = specs.iter().map(|(c, _)| *c).collect();
    let deps: Vec<Vec<String>> = specs
        .iter()
        .map(|(cap, text)| {
            references(text, &names)
                .into_iter()
                .filter(|d| d != cap)
                .collect()
        })
        .collect();
    let mut done: Vec<String> = Vec::with_capacity(specs.len());
    let mut left: Vec<usize> = (0..specs.len()).collect();
    while !left.is_empty() {
        let ready = left
            .iter()
            .position(|&i| deps[i].iter().all(|d| done.contains(d)));
        match ready {
            Some(pos) => {
                let i = left.remove(pos);
                done.push(names[i].to_owned());
            }
            None => {
                return Err(CycleError {
                    capabilities: left.iter().map(|&i| names[i].to_owned()).collect(),
                });
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_capability_comes_first_and_ties_keep_their_order() {
        let specs = [
            (
                "billing",
                "Uses [auth](../auth/spec.md) and [x](https://e.com/a/spec.md).",
            ),
            ("auth", "Needs [store](../store/spec.md#req)."),
            (
                "store",
                "Self [link](../store/spec.md); outside [o](../other/spec.md).",
            ),
            ("docs", "mentions auth and billing by name only"),
        ];
        let order = dependency_order(&specs).expect("acyclic");
        assert_eq!(order, ["store", "auth", "billing", "docs"]);
    }

    #[test]
    fn references_are_links_not_mentions() {
        let caps = ["auth", "api"];
        assert_eq!(references("the auth api", &caps), Vec::<String>::new());
        assert_eq!(references("see [it](../api/spec.md)", &caps), ["api"]);
        assert_eq!(
            references("`[x](../api/spec.md)`", &caps),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_cycle_is_an_error_naming_it() {
        let specs = [
            ("a", "[b](../b/spec.md)"),
            ("b", "[a](../a/spec.md)"),
            ("c", "free"),
        ];
        let err = dependency_order(&specs).expect_err("cycle");
        assert_eq!(err.capabilities, ["a", "b"]);
        assert!(err.to_string().contains("a, b"), "{err}");
    }
}
