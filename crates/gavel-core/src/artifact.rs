//! What a lineage file is, as the workflow that wrote it declares it.
//!
//! A workflow that writes a file into its lineage records an [`EventKind::Artifact`] naming
//! the file, its bytes as a blob and its [`ArtifactKind`]. Readers of the timeline (the report's
//! review history, its diffs of a draft against the one before) go by the kind, not by the
//! file's name. Timelines written before kinds were recorded name none: their files' kinds are
//! recovered from the names those gavels gave them ([`ArtifactKind::from_legacy_name`]) when
//! the event is read, so old runs read like new ones.
//!
//! Stored as a snake_case string. A kind this build does not know (written by a newer gavel)
//! loads as [`ArtifactKind::Other`], kept verbatim.
//!
//! [`EventKind::Artifact`]: crate::EventKind::Artifact

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a lineage file is to the run that wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ArtifactKind {
    /// What the run was asked to work from: a brief, or the issue an LLD is designed for.
    Brief,
    /// The manifest of the context files sent to the models.
    Context,
    /// A draft of the document the run writes (an issue, an LLD).
    Draft,
    /// A reviewer's verdict on a draft.
    Verdict,
    /// What a person or a failed check sent back for the next attempt.
    Feedback,
    /// The design an implementation follows (an approved LLD, a change's plan).
    Design,
    /// A change's proposal.
    Proposal,
    /// A change's delta to one capability's spec.
    Spec,
    /// A change's task list.
    Tasks,
    /// A reviewer's challenge of a change's plan.
    Challenge,
    /// The record of a rejected plan.
    Rejection,
    /// What a test or lint command reported.
    CheckReport,
    /// A model's review of the code an implementation wrote.
    Review,
    /// The living specs' diff of an archived change.
    SpecDiff,
    /// A kind this gavel does not know (written by a newer gavel), by its stored name.
    Other(String),
}

/// Every known kind with its stored name.
const NAMES: &[(ArtifactKind, &str)] = &[
    (ArtifactKind::Brief, "brief"),
    (ArtifactKind::Context, "context"),
    (ArtifactKind::Draft, "draft"),
    (ArtifactKind::Verdict, "verdict"),
    (ArtifactKind::Feedback, "feedback"),
    (ArtifactKind::Design, "design"),
    (ArtifactKind::Proposal, "proposal"),
    (ArtifactKind::Spec, "spec"),
    (ArtifactKind::Tasks, "tasks"),
    (ArtifactKind::Challenge, "challenge"),
    (ArtifactKind::Rejection, "rejection"),
    (ArtifactKind::CheckReport, "check_report"),
    (ArtifactKind::Review, "review"),
    (ArtifactKind::SpecDiff, "spec_diff"),
];

impl ArtifactKind {
    /// The name the kind is stored under.
    pub fn name(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => NAMES
                .iter()
                .find(|(kind, _)| kind == known)
                .map_or("", |(_, name)| name),
        }
    }

    /// The kind stored under `name` ([`Self::Other`] when this build does not know it).
    pub fn from_name(name: &str) -> Self {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map_or_else(|| Self::Other(name.to_owned()), |(kind, _)| kind.clone())
    }

    /// The kind of a lineage file recorded before kinds were, from the name the workflows
    /// gave it (`docs/lineage/active/idea/003-draft.md` → [`Self::Draft`]); `None` for a name
    /// they never gave a file.
    pub fn from_legacy_name(path: &str) -> Option<Self> {
        let name = path.rsplit('/').next().unwrap_or(path);
        // Numbered files (`003-draft.md`); the number is optional, as it always was.
        let suffix = name.split_once('-').map_or(name, |(_, rest)| rest);
        Some(match suffix {
            "brief.md" | "issue.md" => Self::Brief,
            "context.json" => Self::Context,
            "draft.md" => Self::Draft,
            "verdict.md" => Self::Verdict,
            "feedback.md" => Self::Feedback,
            "lld.md" | "plan.md" => Self::Design,
            "proposal.md" => Self::Proposal,
            "spec-diff.md" => Self::SpecDiff,
            s if s.starts_with("spec-") && s.ends_with(".md") => Self::Spec,
            "tasks.md" => Self::Tasks,
            "challenge.md" => Self::Challenge,
            "rejected.json" => Self::Rejection,
            "red.md" | "green.md" | "lint.md" => Self::CheckReport,
            "review.md" => Self::Review,
            _ => return None,
        })
    }
}

impl Serialize for ArtifactKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ArtifactKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(Self::from_name(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_under_its_name() {
        for (kind, name) in NAMES {
            assert_eq!(kind.name(), *name);
            let json = serde_json::to_string(kind).expect("serializes");
            assert_eq!(json, format!("\"{name}\""));
            let back: ArtifactKind = serde_json::from_str(&json).expect("loads");
            assert_eq!(&back, kind);
        }
    }

    #[test]
    fn a_kind_from_a_newer_gavel_is_kept_verbatim() {
        let kind: ArtifactKind = serde_json::from_str("\"transcript\"").expect("loads");
        assert_eq!(kind, ArtifactKind::Other("transcript".into()));
        assert_eq!(
            serde_json::to_string(&kind).expect("serializes"),
            "\"transcript\""
        );
    }

    #[test]
    fn legacy_names_give_the_kinds_the_workflows_now_declare() {
        let cases = [
            (
                "docs/lineage/active/idea/001-brief.md",
                Some(ArtifactKind::Brief),
            ),
            ("l/001-issue.md", Some(ArtifactKind::Brief)),
            ("l/002-context.json", Some(ArtifactKind::Context)),
            ("l/003-draft.md", Some(ArtifactKind::Draft)),
            ("l/004-verdict.md", Some(ArtifactKind::Verdict)),
            ("l/005-feedback.md", Some(ArtifactKind::Feedback)),
            ("l/001-lld.md", Some(ArtifactKind::Design)),
            ("l/001-plan.md", Some(ArtifactKind::Design)),
            ("l/001-proposal.md", Some(ArtifactKind::Proposal)),
            ("l/002-spec-auth.md", Some(ArtifactKind::Spec)),
            ("l/009-spec-diff.md", Some(ArtifactKind::SpecDiff)),
            ("l/003-tasks.md", Some(ArtifactKind::Tasks)),
            ("l/004-challenge.md", Some(ArtifactKind::Challenge)),
            ("l/005-rejected.json", Some(ArtifactKind::Rejection)),
            ("l/006-red.md", Some(ArtifactKind::CheckReport)),
            ("l/007-lint.md", Some(ArtifactKind::CheckReport)),
            ("l/008-review.md", Some(ArtifactKind::Review)),
            ("draft.md", Some(ArtifactKind::Draft)),
            ("docs/lineage/done/idea", None),
            ("docs/lld/42-login.md", None),
        ];
        for (path, kind) in cases {
            assert_eq!(ArtifactKind::from_legacy_name(path), kind, "{path}");
        }
    }
}
