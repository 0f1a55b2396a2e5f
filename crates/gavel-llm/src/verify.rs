//! Model verification: did the model we asked for answer?
//!
//! Services and CLIs sometimes answer with another model than the one requested (a fallback to
//! a cheaper tier under load, a default model after a typo). gavel compares the family
//! (claude / gemini / gpt / o-series) and the tier (opus / sonnet / haiku, pro / flash / lite,
//! mini / nano) of the requested and the answering model. A mismatch becomes a WARNING header
//! on the artifact and a flag in `gavel show`; with `strict_models = true` it fails the call.

/// Tier words, most specific first (`flash-lite` before `flash`).
const TIERS: &[&str] = &[
    "opus",
    "sonnet",
    "haiku",
    "flash-lite",
    "flash",
    "pro",
    "ultra",
    "nano",
    "mini",
    "lite",
];

/// Tiers that are a step down when the request named no tier at all.
const SMALL_TIERS: &[&str] = &["haiku", "flash-lite", "flash", "nano", "mini", "lite"];

/// Families, by the prefix or word that names them.
const FAMILIES: &[&str] = &["claude", "gemini", "gpt", "o1", "o3", "o4", "codex"];

fn family(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    FAMILIES
        .iter()
        .copied()
        .find(|f| m.split(['-', '/', ':', '.', '_']).any(|w| w == *f) || m.starts_with(f))
}

fn tier(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    TIERS.iter().copied().find(|t| m.contains(t))
}

/// A warning when `answered` is not the kind of model `requested` named; `None` when they
/// match or when the request was too vague to tell (an alias without a tier, for example).
pub fn check(requested: &str, answered: &str) -> Option<String> {
    if answered.trim().is_empty() {
        return Some(format!(
            "the service did not say which model answered (requested `{requested}`)"
        ));
    }
    if requested.eq_ignore_ascii_case(answered) {
        return None;
    }
    if let (Some(a), Some(b)) = (family(requested), family(answered))
        && a != b
    {
        return Some(format!(
            "requested a {a} model (`{requested}`) but `{answered}` answered"
        ));
    }
    match (tier(requested), tier(answered)) {
        (Some(a), Some(b)) if a != b => Some(format!(
            "requested tier `{a}` (`{requested}`) but `{answered}` ({b}) answered"
        )),
        (Some(a), None) => Some(format!(
            "requested tier `{a}` (`{requested}`) but `{answered}` answered"
        )),
        (None, Some(b)) if SMALL_TIERS.contains(&b) => Some(format!(
            "requested `{requested}` but a smaller `{b}` model (`{answered}`) answered"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_model_or_a_dated_version_passes() {
        assert_eq!(check("gemini-2.5-pro", "gemini-2.5-pro"), None);
        assert_eq!(
            check("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
            None
        );
        assert_eq!(check("sonnet", "claude-sonnet-4-5-20250929"), None);
        assert_eq!(check("gpt-5", "gpt-5-2025-08-07"), None);
    }

    #[test]
    fn a_lower_tier_or_another_family_is_flagged() {
        assert!(check("gemini-2.5-pro", "gemini-2.5-flash").is_some_and(|w| w.contains("flash")));
        assert!(check("gemini-2.5-flash", "gemini-2.5-flash-lite").is_some());
        assert!(check("claude-opus-4-1", "claude-haiku-4-5").is_some());
        assert!(check("claude-sonnet-4-5", "gpt-5").is_some());
        assert!(
            check("gpt-5", "gpt-5-mini").is_some(),
            "a smaller variant of an untiered request"
        );
        assert!(check("gpt-5", "gpt-5-codex").is_none());
        assert!(check("gemini-2.5-pro", "").is_some());
    }
}
