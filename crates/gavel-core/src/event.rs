//! The timeline of a run, for `gavel show` and audits.
//!
//! Events are buffered while a node runs and written in the same transaction as the checkpoint
//! that ends the node, so a crashed and replayed node never leaves duplicate events behind.
//!
//! A timeline may hold events written by a newer gavel. An event kind this build does not know
//! loads as [`EventKind::Unknown`] (kept verbatim), so an older gavel can still list and show
//! the run instead of calling the store corrupt.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::artifact::ArtifactKind;
use crate::hash::ContentHash;
use crate::timing::TimeSpent;

/// One entry in a run's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// RFC 3339 time of the event.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// One model call in a run's spend ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallLedger {
    /// 1-based number of the call within the run (`gavel show RUN --call N`).
    pub n: u32,
    /// The model that was asked for (`model` in the event is the one that answered).
    pub requested_model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    /// Cost in millionths of a USD.
    pub cost_micros: Option<u64>,
    /// Where the cost came from: `reported` (by the CLI or API), `price-table`, or `unknown`.
    pub cost_source: String,
    /// The prompt, content-addressed in the store.
    pub prompt: ContentHash,
    /// The raw answer, content-addressed in the store.
    pub response: ContentHash,
    pub attempts: u32,
    /// Set when the answering model is not the one requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// A call that was made but whose answer was lost: gavel was killed after sending it and
    /// before its answer was journaled, so the call was made again. The provider may have
    /// charged for it; its tokens and cost are unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
    /// The credential that answered, by name (a key's variable or a CLI login's folder), never
    /// the key itself; absent when the provider used none (and in older events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// Credentials whose quota was exhausted before `credential` answered, in the order tried
    /// (credential rotation within the answering attempt; not counted in `attempts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quota_exhausted: Vec<String>,
    /// How a call that wanted a structured answer (a verdict) asked for it, by the name of
    /// `gavel_llm::AnswerForm`: `schema` (the service was asked to follow the verdict's JSON
    /// schema), `plain` (the provider has no way to ask) or `plain_after_refusal` (the service
    /// refused structured output, in this call or earlier in the run). Absent for a call that
    /// wanted plain text, and in older events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
}

/// What happened.
///
/// Stored as a JSON object whose `event` field names the kind. The derive below writes
/// inherent `EventKind::serialize`/`EventKind::deserialize` (`remote = "Self"`); the trait
/// impls wrap them to keep unknown kinds verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A node finished and routed to `next` (`None`: the workflow ended).
    Node {
        node: String,
        next: Option<String>,
        seq: u64,
    },
    /// A run paused at a gate.
    GateWaiting { gate: String, kind: String },
    /// A person (or auto mode) answered a gate.
    GateAnswered {
        gate: String,
        choice: String,
        by: String,
    },
    /// A file was written into the lineage (or a folder moved, or a file committed). `content`
    /// is the file's bytes as a blob, so another clone resuming the run can write the file
    /// again (absent for folders, and in events written before it existed). `kind` is what the
    /// file is, as its workflow declares it (absent for folders and commits; for a file
    /// recorded before kinds were, read from its name when the event is loaded).
    Artifact {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<ContentHash>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<ArtifactKind>,
    },
    /// A model was called.
    ModelCall {
        role: String,
        provider: String,
        model: String,
        /// What the call cost and where its prompt and answer are kept (absent in events
        /// written before the ledger existed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ledger: Option<Box<CallLedger>>,
    },
    /// Anything else worth a line in the timeline.
    Note { text: String },
    /// The run halted.
    Halted { reason: String },
    /// A node failed.
    Failed { error: String },
    /// The run finished.
    Done { summary: String },
    /// The run was aborted.
    Aborted { reason: String },
    /// Where one drive's time went (written with the drive's last events; see `timing.rs`).
    Time(TimeSpent),
    /// A kind this gavel does not know (written by a newer gavel). `raw` is the whole stored
    /// object, `event` field included, and is written back unchanged.
    #[serde(skip)]
    Unknown {
        event: String,
        raw: serde_json::Value,
    },
}

/// The `event` names this build knows; any other name loads as [`EventKind::Unknown`].
const KNOWN_EVENTS: &[&str] = &[
    "node",
    "gate_waiting",
    "gate_answered",
    "artifact",
    "model_call",
    "note",
    "halted",
    "failed",
    "done",
    "aborted",
    "time",
];

impl EventKind {
    /// The kind's name as stored in the `event` field (for an unknown kind, the stored name).
    pub fn name(&self) -> &str {
        match self {
            Self::Node { .. } => "node",
            Self::GateWaiting { .. } => "gate_waiting",
            Self::GateAnswered { .. } => "gate_answered",
            Self::Artifact { .. } => "artifact",
            Self::ModelCall { .. } => "model_call",
            Self::Note { .. } => "note",
            Self::Halted { .. } => "halted",
            Self::Failed { .. } => "failed",
            Self::Done { .. } => "done",
            Self::Aborted { .. } => "aborted",
            Self::Time(_) => "time",
            Self::Unknown { event, .. } => event,
        }
    }
}

impl EventKind {
    /// A lineage file recorded before artifacts had kinds, given the kind its name meant.
    fn with_legacy_artifact_kind(self) -> Self {
        match self {
            Self::Artifact {
                path,
                content: Some(content),
                kind: None,
            } => Self::Artifact {
                kind: ArtifactKind::from_legacy_name(&path),
                path,
                content: Some(content),
            },
            other => other,
        }
    }
}

impl Serialize for EventKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Unknown { raw, .. } => raw.serialize(serializer),
            known => EventKind::serialize(known, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::deserialize(deserializer)?;
        match map.get("event").and_then(serde_json::Value::as_str) {
            Some(name) if !KNOWN_EVENTS.contains(&name) => Ok(Self::Unknown {
                event: name.to_owned(),
                raw: serde_json::Value::Object(map),
            }),
            // A known kind (or no name at all) must decode: a malformed one is a real error.
            _ => EventKind::deserialize(serde_json::Value::Object(map))
                .map(Self::with_legacy_artifact_kind)
                .map_err(D::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_known_kind() -> Vec<EventKind> {
        let text = || String::from("x");
        vec![
            EventKind::Node {
                node: text(),
                next: None,
                seq: 1,
            },
            EventKind::GateWaiting {
                gate: text(),
                kind: text(),
            },
            EventKind::GateAnswered {
                gate: text(),
                choice: text(),
                by: text(),
            },
            EventKind::Artifact {
                path: text(),
                content: None,
                kind: None,
            },
            EventKind::ModelCall {
                role: text(),
                provider: text(),
                model: text(),
                ledger: None,
            },
            EventKind::Note { text: text() },
            EventKind::Halted { reason: text() },
            EventKind::Failed { error: text() },
            EventKind::Done { summary: text() },
            EventKind::Aborted { reason: text() },
            EventKind::Time(TimeSpent {
                active_ms: 3,
                model_ms: 2,
                tests_ms: 1,
            }),
        ]
    }

    #[test]
    fn every_known_kind_round_trips_under_its_listed_name() {
        let kinds = every_known_kind();
        assert_eq!(kinds.len(), KNOWN_EVENTS.len(), "one sample per known kind");
        for kind in kinds {
            let event = Event {
                at: "t".into(),
                kind,
            };
            let json: serde_json::Value = serde_json::to_value(&event).expect("serializes");
            let name = json["event"].as_str().expect("a name");
            assert_eq!(name, event.kind.name());
            assert!(
                KNOWN_EVENTS.contains(&name),
                "{name} is not in KNOWN_EVENTS"
            );
            let back: Event = serde_json::from_value(json).expect("loads");
            assert_eq!(back, event);
        }
    }

    #[test]
    fn an_event_kind_from_a_newer_gavel_loads_as_unknown_and_is_written_back_verbatim() {
        let stored = r#"{"at":"t","event":"tool_use","tool":"edit","args":{"path":"a.rs"}}"#;
        let event: Event = serde_json::from_str(stored).expect("an unknown kind loads");
        assert_eq!(event.at, "t");
        let EventKind::Unknown { event: name, raw } = &event.kind else {
            panic!("expected an unknown kind, got {:?}", event.kind);
        };
        assert_eq!(name, "tool_use");
        assert_eq!(raw["tool"], "edit");
        assert_eq!(event.kind.name(), "tool_use");
        let again: serde_json::Value = serde_json::to_value(&event).expect("serializes");
        let original: serde_json::Value = serde_json::from_str(stored).expect("json");
        assert_eq!(again, original);
    }

    #[test]
    fn a_malformed_known_event_is_still_an_error() {
        let missing_seq = r#"{"at":"t","event":"node","node":"n","next":null}"#;
        let err = serde_json::from_str::<Event>(missing_seq).expect_err("seq is required");
        assert!(err.to_string().contains("seq"), "{err}");
        let no_name = r#"{"at":"t","text":"x"}"#;
        assert!(serde_json::from_str::<Event>(no_name).is_err());
    }

    #[test]
    fn an_artifact_recorded_before_kinds_gets_the_kind_its_name_meant() {
        let hash = ContentHash::of(b"x").to_string();
        let old = format!(
            r#"{{"at":"t","event":"artifact","path":"docs/lineage/active/a/003-verdict.md","content":"{hash}"}}"#
        );
        let event: Event = serde_json::from_str(&old).expect("an old artifact loads");
        let EventKind::Artifact { kind, .. } = &event.kind else {
            panic!("expected an artifact, got {:?}", event.kind);
        };
        assert_eq!(kind, &Some(ArtifactKind::Verdict));
        // A folder or a commit has no content and gets no kind.
        let folder = r#"{"at":"t","event":"artifact","path":"docs/lineage/done/a"}"#;
        let event: Event = serde_json::from_str(folder).expect("loads");
        assert!(matches!(event.kind, EventKind::Artifact { kind: None, .. }));
        // A declared kind wins over the name.
        let declared = format!(
            r#"{{"at":"t","event":"artifact","path":"l/001-draft.md","content":"{hash}","kind":"feedback"}}"#
        );
        let event: Event = serde_json::from_str(&declared).expect("loads");
        assert!(matches!(
            event.kind,
            EventKind::Artifact {
                kind: Some(ArtifactKind::Feedback),
                ..
            }
        ));
    }

    #[test]
    fn a_ledger_written_before_credentials_were_recorded_still_loads() {
        let hash = ContentHash::of(b"x").to_string();
        let old = format!(
            r#"{{"n":1,"requested_model":"m","input_tokens":1,"output_tokens":2,
                "cached_tokens":null,"cost_micros":null,"cost_source":"unknown",
                "prompt":"{hash}","response":"{hash}","attempts":1}}"#
        );
        let ledger: CallLedger = serde_json::from_str(&old).expect("an old ledger loads");
        assert_eq!(ledger.credential, None);
        assert!(ledger.quota_exhausted.is_empty());
        assert_eq!(ledger.form, None, "an old call asked in plain text");
        // Without a credential the JSON is what it was.
        let json = serde_json::to_string(&ledger).expect("serializes");
        assert!(!json.contains("credential") && !json.contains("quota_exhausted"));
        assert!(!json.contains("form"), "{json}");

        let rotated = CallLedger {
            credential: Some("ANTHROPIC_API_KEY_2".into()),
            quota_exhausted: vec!["ANTHROPIC_API_KEY".into()],
            form: Some("schema".into()),
            ..ledger
        };
        let json = serde_json::to_string(&rotated).expect("serializes");
        let back: CallLedger = serde_json::from_str(&json).expect("loads");
        assert_eq!(back, rotated);
    }
}
