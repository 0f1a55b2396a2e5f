//! Runs and checkpoints: the records a store keeps for every workflow execution.
//!
//! A run is one execution of one workflow. After every node the engine writes a [`Checkpoint`]
//! (the new state, the node to run next, a link to its parent and a format version) in the same
//! transaction that updates the run's [`RunStatus`].

use std::fmt;
use std::str::FromStr;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::gate::GateRequest;
use crate::hash::ContentHash;

/// The checkpoint format version written by this build. Bumped whenever the meaning of a stored
/// checkpoint changes; a store refuses checkpoints from a newer format.
pub const CHECKPOINT_FORMAT: u32 = 1;

/// A run's id: a small integer allocated by the store, stable for the run's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for RunId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<i64>().map(RunId)
    }
}

/// Where a run stands.
///
/// Stored as a JSON object whose `status` field names the variant. A status this build does not
/// know (written by a newer gavel) loads as [`RunStatus::Unknown`]: listed, never driven. The
/// derive writes inherent `RunStatus::serialize`/`RunStatus::deserialize` (`remote = "Self"`);
/// the trait impls wrap them to keep unknown statuses verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// A process is (or was, if it died) driving the run.
    Running,
    /// Paused at a human gate.
    Waiting { gate: GateRequest },
    /// Stopped for a reason that needs attention (an iteration cap, a failed call); resumable.
    Halted { reason: String },
    /// A node failed with an error (for example a pre-flight check); resumable once fixed.
    Failed { error: String },
    /// Finished. `summary` is the workflow's one-line result (for example the filed issue).
    Done { summary: String },
    /// Stopped for good by a person.
    Aborted { reason: String },
    /// A status this gavel does not know, written by a newer gavel. Not terminal (this build
    /// cannot tell), and never driven or aborted by this build. `raw` is the whole stored
    /// object, `status` field included, and is written back unchanged.
    #[serde(skip)]
    Unknown {
        status: String,
        raw: serde_json::Value,
    },
}

/// The `status` names this build knows; any other name loads as [`RunStatus::Unknown`].
const KNOWN_STATUSES: &[&str] = &["running", "waiting", "halted", "failed", "done", "aborted"];

impl RunStatus {
    /// The status name as shown in `gavel runs` (`unknown` for a status this gavel does not
    /// know; [`RunStatus::stored_name`] gives the name it was stored under).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Waiting { .. } => "waiting",
            Self::Halted { .. } => "halted",
            Self::Failed { .. } => "failed",
            Self::Done { .. } => "done",
            Self::Aborted { .. } => "aborted",
            Self::Unknown { .. } => "unknown",
        }
    }

    /// The name in the stored `status` field, which for an unknown status is the newer
    /// gavel's name for it.
    pub fn stored_name(&self) -> &str {
        match self {
            Self::Unknown { status, .. } => status,
            known => known.name(),
        }
    }

    /// Whether the run is over for good.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Aborted { .. })
    }
}

impl Serialize for RunStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Unknown { raw, .. } => raw.serialize(serializer),
            known => RunStatus::serialize(known, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RunStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::deserialize(deserializer)?;
        match map.get("status").and_then(serde_json::Value::as_str) {
            Some(name) if !KNOWN_STATUSES.contains(&name) => Ok(Self::Unknown {
                status: name.to_owned(),
                raw: serde_json::Value::Object(map),
            }),
            // A known status (or no name at all) must decode: a malformed one is a real error.
            _ => RunStatus::deserialize(serde_json::Value::Object(map)).map_err(D::Error::custom),
        }
    }
}

/// A run as listed by a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: RunId,
    pub workflow: String,
    pub slug: String,
    pub status: RunStatus,
    pub created_at: String,
    pub updated_at: String,
    /// Sequence number of the newest checkpoint.
    pub head_seq: u64,
}

/// A checkpoint: the state after a node, and what runs next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub run: RunId,
    /// 0 for the initial checkpoint, then 1, 2, ... in order.
    pub seq: u64,
    /// The checkpoint this one was derived from (`None` only for seq 0).
    pub parent: Option<u64>,
    /// The node that produced this checkpoint (`None` for the initial one).
    pub node: Option<String>,
    /// The node to run next; `None` once the workflow has finished.
    pub next: Option<String>,
    /// The serialized workflow state (JSON).
    pub state: Vec<u8>,
    /// [`CHECKPOINT_FORMAT`] at the time of writing.
    pub format: u32,
    pub created_at: String,
}

/// A checkpoint without its state, for timelines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    pub seq: u64,
    pub parent: Option<u64>,
    pub node: Option<String>,
    pub next: Option<String>,
    pub state_hash: ContentHash,
    pub format: u32,
    pub created_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_known_status() -> Vec<RunStatus> {
        let gate = serde_json::from_str(
            r#"{"id":"review@2","node":"review","kind":"verdict","title":"t",
                "choices":[{"name":"send","key":"s","help":"send it"}]}"#,
        )
        .expect("a gate");
        vec![
            RunStatus::Running,
            RunStatus::Waiting { gate },
            RunStatus::Halted { reason: "r".into() },
            RunStatus::Failed { error: "e".into() },
            RunStatus::Done {
                summary: "s".into(),
            },
            RunStatus::Aborted { reason: "a".into() },
        ]
    }

    #[test]
    fn every_known_status_round_trips_under_its_listed_name() {
        let statuses = every_known_status();
        assert_eq!(
            statuses.len(),
            KNOWN_STATUSES.len(),
            "one sample per status"
        );
        for status in statuses {
            let json = serde_json::to_value(&status).expect("serializes");
            let name = json["status"].as_str().expect("a name");
            assert_eq!(name, status.name());
            assert!(
                KNOWN_STATUSES.contains(&name),
                "{name} is not in KNOWN_STATUSES"
            );
            let back: RunStatus = serde_json::from_value(json).expect("loads");
            assert_eq!(back, status);
        }
    }

    #[test]
    fn a_status_from_a_newer_gavel_is_unknown_not_terminal_and_kept_verbatim() {
        let stored = r#"{"status":"paused_for_ci","pipeline":42}"#;
        let status: RunStatus = serde_json::from_str(stored).expect("an unknown status loads");
        assert_eq!(status.name(), "unknown");
        assert_eq!(status.stored_name(), "paused_for_ci");
        assert!(!status.is_terminal());
        let again = serde_json::to_value(&status).expect("serializes");
        let original: serde_json::Value = serde_json::from_str(stored).expect("json");
        assert_eq!(again, original);
    }

    #[test]
    fn a_malformed_known_status_is_still_an_error() {
        assert!(serde_json::from_str::<RunStatus>(r#"{"status":"halted"}"#).is_err());
        assert!(serde_json::from_str::<RunStatus>(r#"{"reason":"x"}"#).is_err());
    }
}
