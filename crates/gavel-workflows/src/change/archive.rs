//! `gavel change archive ID`: a complete change's delta specs merged into the living specs,
//! shown to a person as a diff, confirmed by a typed `approve`, then the change folder moved
//! to `{root}/changes/archive/YYYY-MM-DD-ID/` with phase `archived`, all in one commit.
//!
//! ```text
//! A0_load ──→ A1_confirm ──approve→ A2_archive → end
//!    ↑            │ reject → aborted (nothing written)
//!    └────────────┘ a living or delta spec changed while the gate waited: merged again, asked again
//! ```
//!
//! A0 decides by the phase alone (only `complete`) and refuses while a task is open, naming
//! the open tasks. It merges every delta in dependency order in memory: one delta that does
//! not apply (a MODIFIED or REMOVED requirement that does not exist, a conflict) halts the run
//! with nothing written, so no spec is ever half-merged. The merged texts are checkpointed as
//! blobs with the hash of each living spec they were computed from, and the hash of every delta
//! spec they were computed with ([`inputs`]); after the `approve`, and again before A2 writes
//! anything, the specs on disk must still be what the person saw, or the run goes back to A0
//! to merge again and ask again. Every step of A2 is idempotent (same bytes
//! rewritten, a move that already happened, the commit found by its trailer), so a kill -9
//! anywhere in it is finished by `gavel resume` without a second commit.

use gavel_core::ArtifactKind;
use std::path::{Path, PathBuf};

use gavel_core::{
    Choice, Confirm, ContentHash, EventKind, NodeCtx, NodeError, Presentation, Transition, Workflow,
};
use serde::{Deserialize, Serialize};

pub(crate) mod inputs;

pub use inputs::DeltaHash;
use inputs::{delta_purpose, delta_specs, hash_deltas};

use super::ChangeDir;
use super::merge::{merge, new_living_spec};
use super::order::dependency_order;
use super::read::{read_bytes_optional, read_text, read_text_optional};
use super::spec::parse_delta_spec;
use super::state::{Phase, load_state, save_state};
use super::tasks::parse_tasks;
use crate::fsutil;
use crate::kit::commit::commit_once;

/// The workflow's name as stored with each run.
pub const WORKFLOW: &str = "change-archive";

/// The gate's kind.
pub const GATE_KIND: &str = "spec-merge";

/// Node names, in graph order.
pub mod node {
    pub const LOAD: &str = "A0_load";
    pub const CONFIRM: &str = "A1_confirm";
    pub const ARCHIVE: &str = "A2_archive";
}

/// One living spec as the merge will leave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedSpec {
    pub capability: String,
    /// The living spec, repository-relative.
    pub path: String,
    /// The living spec the merge started from (`None`: it did not exist).
    pub before: Option<ContentHash>,
    /// The merged text.
    pub after: ContentHash,
}

/// The workflow's state, checkpointed after every node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveState {
    /// Random per run; the commit's trailer derives from it.
    pub run_key: String,
    pub change_id: String,
    /// The OpenSpec tree, repository-relative (`openspec`).
    pub changes_root: String,
    /// The archive folder's date (`YYYY-MM-DD`), fixed when the run starts.
    pub date: String,
    pub started_at: String,
    /// The merge A0 computed and the person is asked about.
    pub merged: Vec<MergedSpec>,
    /// The delta specs that merge was computed from (a run checkpointed before they were
    /// recorded has none, so its merge is redone and asked again).
    #[serde(default)]
    pub deltas: Vec<DeltaHash>,
    /// The spec diff shown at the gate (in the change's lineage).
    pub diff: Option<String>,
    pub file_counter: u32,
    /// Where the change went, once archived.
    pub archived: Option<String>,
    pub commit: Option<String>,
}

impl ArchiveState {
    /// The state of a new run.
    pub fn new(run_key: String, change_id: &str, changes_root: &str, now: jiff::Timestamp) -> Self {
        Self {
            run_key,
            change_id: change_id.to_owned(),
            changes_root: changes_root.to_owned(),
            date: now.to_zoned(jiff::tz::TimeZone::UTC).date().to_string(),
            started_at: now.to_string(),
            merged: Vec::new(),
            deltas: Vec::new(),
            diff: None,
            file_counter: 0,
            archived: None,
            commit: None,
        }
    }
}

/// Archiving, for the person's checkout at `repo_root`.
pub struct ArchiveWorkflow {
    pub repo_root: PathBuf,
}

/// Why a change cannot be archived now, before any run exists (the CLI's refusal).
pub fn check_archivable(dir: &ChangeDir) -> Result<(), String> {
    let state = load_state(dir).map_err(|e| e.to_string())?;
    if state.phase != Phase::Complete {
        let fits = state
            .phase
            .next_command()
            .map(|c| format!("; it needs `gavel change {} {}`", c.as_str(), dir.id()))
            .unwrap_or_default();
        return Err(format!(
            "change `{}` is `{}`, and only a `complete` change is archived{fits}",
            dir.id(),
            state.phase.as_str()
        ));
    }
    let text = read_text(&dir.tasks()).map_err(|e| e.to_string())?;
    let tasks = parse_tasks(&text, dir.id()).map_err(|e| e.to_string())?;
    let open = tasks.open_tasks();
    if !open.is_empty() {
        let list: Vec<String> = open.iter().map(|t| format!("  - [ ] {}", t.text)).collect();
        return Err(format!(
            "change `{}` has {} open task(s) in {}:\n{}",
            dir.id(),
            open.len(),
            dir.tasks().display(),
            list.join("\n")
        ));
    }
    Ok(())
}

impl ArchiveWorkflow {
    fn dir(&self, s: &ArchiveState) -> Result<ChangeDir, NodeError> {
        ChangeDir::new(self.repo_root.join(&s.changes_root), &s.change_id)
            .map_err(|e| NodeError::Failed(e.to_string()))
    }

    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.repo_root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    }

    fn load(&self, s: &mut ArchiveState, cx: &mut NodeCtx<'_>) -> Result<Transition, NodeError> {
        let dir = self.dir(s)?;
        if let Err(why) = check_archivable(&dir) {
            return Ok(Transition::Halt { reason: why });
        }
        let specs = delta_specs(&dir).map_err(NodeError::Failed)?;
        let pairs: Vec<(&str, &str)> = specs
            .iter()
            .map(|(c, t)| (c.as_str(), t.as_str()))
            .collect();
        let order = match dependency_order(&pairs) {
            Ok(o) => o,
            Err(e) => {
                return Ok(Transition::Halt {
                    reason: e.to_string(),
                });
            }
        };
        let mut merged = Vec::new();
        let mut diff = String::new();
        let mut problems = Vec::new();
        for capability in &order {
            let Some((_, delta_text)) = specs.iter().find(|(c, _)| c == capability) else {
                continue;
            };
            let spec_path = dir.delta_spec(capability);
            let delta = match parse_delta_spec(delta_text) {
                Ok(d) => d,
                Err(e) => {
                    problems.push(format!("{}: {e}", self.rel(&spec_path)));
                    continue;
                }
            };
            let living_path = dir.living_spec(capability);
            let before =
                read_text_optional(&living_path).map_err(|e| NodeError::Failed(e.to_string()))?;
            // A new capability takes the delta's `## Purpose` (as OpenSpec's archive does), or a
            // placeholder that `openspec validate --strict` will ask a person to replace.
            let base = before.clone().unwrap_or_else(|| {
                new_living_spec(
                    capability,
                    &delta_purpose(delta_text).unwrap_or_else(|| format!(
                        "TBD: created when change `{}` was archived; say here what this capability is for.",
                        s.change_id
                    )),
                )
            });
            let after = match merge(&base, &delta) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(format!("{}: {e}", self.rel(&spec_path)));
                    continue;
                }
            };
            let living_rel = self.rel(&living_path);
            diff.push_str(&similar::udiff::unified_diff(
                similar::Algorithm::Myers,
                before.as_deref().unwrap_or(""),
                &after,
                3,
                Some((
                    &if before.is_some() {
                        format!("a/{living_rel}")
                    } else {
                        "/dev/null".to_owned()
                    },
                    &format!("b/{living_rel}"),
                )),
            ));
            merged.push(MergedSpec {
                capability: capability.clone(),
                path: living_rel,
                before: before.map(|b| cx.put_blob(b.as_bytes())).transpose()?,
                after: cx.put_blob(after.as_bytes())?,
            });
        }
        if !problems.is_empty() {
            return Ok(Transition::Halt {
                reason: format!(
                    "the delta specs do not merge into the living specs, so nothing was merged:\n  - {}\nfix the delta specs (or the living specs), then `gavel resume` this run",
                    problems.join("\n  - ")
                ),
            });
        }
        if merged.is_empty() {
            diff.push_str("(this change has no delta specs: the living specs stay as they are)\n");
        }
        let n = s.file_counter + 1;
        let rel = PathBuf::from(&s.changes_root)
            .join("changes")
            .join(&s.change_id)
            .join("lineage")
            .join(crate::lineage::artifact_name(n, "spec-diff.md"));
        let text = format!(
            "# Archive `{}`: the living specs after the merge\n\n```diff\n{}```\n",
            s.change_id, diff
        );
        fsutil::write_atomic(&self.repo_root.join(&rel), text.as_bytes())
            .map_err(|e| NodeError::Failed(format!("cannot write {}: {e}", rel.display())))?;
        s.file_counter = n;
        let rel = rel.to_string_lossy().into_owned();
        cx.artifact(ArtifactKind::SpecDiff, rel.clone(), text.as_bytes(), &[])?;
        s.diff = Some(rel);
        s.merged = merged;
        s.deltas = hash_deltas(&specs);
        Ok(Transition::Goto(node::CONFIRM.to_owned()))
    }

    fn confirm(&self, s: &mut ArchiveState, cx: &mut NodeCtx<'_>) -> Result<Transition, NodeError> {
        let Some(answer) = cx.answer()? else {
            let mut gate = cx.gate(
                GATE_KIND,
                format!(
                    "Archive change `{}`: merge its specs into the living specs",
                    s.change_id
                ),
                vec![
                    Choice::new(
                        "approve",
                        'A',
                        "merge, move the change to the archive, commit",
                    ),
                    Choice::new("reject", 'R', "write nothing; the change stays complete"),
                ],
            );
            let caps: Vec<&str> = s.merged.iter().map(|m| m.path.as_str()).collect();
            gate.detail = Some(if caps.is_empty() {
                "no living spec changes".to_owned()
            } else {
                format!("living specs changed: {}", caps.join(", "))
            });
            gate.artifacts = s.diff.iter().cloned().collect();
            gate.present = Box::new(Presentation {
                preview: s.diff.clone(),
                confirm: Confirm::Word,
                ..Presentation::default()
            });
            return Ok(Transition::Gate(gate));
        };
        if answer.choice != "approve" {
            return Ok(Transition::Abort {
                reason: format!(
                    "a person declined the spec merge; nothing was merged and change `{}` stays complete",
                    s.change_id
                ),
            });
        }
        if let Some(changed) = self.changed_since_load(s)? {
            cx.event(EventKind::Note {
                text: format!(
                    "{changed} changed while the gate waited: merged again and asked again"
                ),
            });
            return Ok(Transition::Goto(node::LOAD.to_owned()));
        }
        Ok(Transition::Goto(node::ARCHIVE.to_owned()))
    }

    /// The first spec (living or delta) that is no longer what A0 merged, if any. A living
    /// spec already holding the merged text counts as unchanged (A2 wrote it).
    fn changed_since_load(&self, s: &ArchiveState) -> Result<Option<String>, NodeError> {
        for m in &s.merged {
            let now = read_bytes_optional(&self.repo_root.join(&m.path))
                .map_err(|e| NodeError::Failed(e.to_string()))?;
            let now_hash = now.as_deref().map(ContentHash::of);
            if now_hash != m.before && now_hash.as_ref() != Some(&m.after) {
                return Ok(Some(m.path.clone()));
            }
        }
        let dir = self.dir(s)?;
        let now = hash_deltas(&delta_specs(&dir).map_err(NodeError::Failed)?);
        if now != s.deltas {
            let changed = now
                .iter()
                .chain(&s.deltas)
                .find(|d| !(now.contains(d) && s.deltas.contains(d)))
                .map_or_else(
                    || self.rel(&dir.specs_dir()),
                    |d| self.rel(&dir.delta_spec(&d.capability)),
                );
            return Ok(Some(changed));
        }
        Ok(None)
    }

    /// Whether A2 has written anything yet: the change folder moved, or a living spec holds
    /// its merged text (and did not before).
    fn archiving_begun(&self, s: &ArchiveState) -> Result<bool, NodeError> {
        if !self.dir(s)?.dir().exists() {
            return Ok(true);
        }
        for m in s
            .merged
            .iter()
            .filter(|m| m.before.as_ref() != Some(&m.after))
        {
            let now = read_bytes_optional(&self.repo_root.join(&m.path))
                .map_err(|e| NodeError::Failed(e.to_string()))?;
            if now.as_deref().map(ContentHash::of).as_ref() == Some(&m.after) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn archive(&self, s: &mut ArchiveState, cx: &mut NodeCtx<'_>) -> Result<Transition, NodeError> {
        let dir = self.dir(s)?;
        let date: jiff::civil::Date = s
            .date
            .parse()
            .map_err(|e| NodeError::Failed(format!("bad archive date `{}`: {e}", s.date)))?;
        let to = dir.archive_dir(date);
        // A spec edited between the approval and here is merged again and asked again; once
        // this node has begun writing, the approved merge is finished as approved.
        if !self.archiving_begun(s)?
            && let Some(changed) = self.changed_since_load(s)?
        {
            cx.event(EventKind::Note {
                text: format!(
                    "{changed} changed after the approval, before anything was archived: merged again and asked again"
                ),
            });
            return Ok(Transition::Goto(node::LOAD.to_owned()));
        }
        for m in &s.merged {
            let bytes = cx.get_blob(&m.after)?;
            let path = self.repo_root.join(&m.path);
            fsutil::write_atomic(&path, &bytes)
                .map_err(|e| NodeError::Failed(format!("cannot write {}: {e}", path.display())))?;
        }
        if dir.dir().exists() {
            let mut state = load_state(&dir).map_err(|e| NodeError::Failed(e.to_string()))?;
            state.phase = Phase::Archived;
            state.updated_at = cx.clock().now();
            save_state(&dir.state(), &state).map_err(|e| NodeError::Failed(e.to_string()))?;
        }
        fsutil::move_idempotent(&dir.dir(), &to).map_err(|e| {
            NodeError::Failed(format!(
                "cannot move {} to {}: {e}",
                dir.dir().display(),
                to.display()
            ))
        })?;
        let to_rel = self.rel(&to);
        let mut paths: Vec<PathBuf> = s.merged.iter().map(|m| PathBuf::from(&m.path)).collect();
        paths.push(PathBuf::from(self.rel(&dir.dir())));
        paths.push(PathBuf::from(&to_rel));
        let commit = commit_once(
            cx,
            &self.repo_root,
            &paths,
            &format!(
                "gavel: archive change {}\n\nSpecs: {}\nArchive: {to_rel}",
                s.change_id,
                if s.merged.is_empty() {
                    "unchanged".to_owned()
                } else {
                    s.merged
                        .iter()
                        .map(|m| m.capability.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            &format!("gavel-{}-archive", s.run_key),
            &format!("change `{}` is archived", s.change_id),
        )?;
        let summary = format!(
            "change `{}` archived in {to_rel} ({} living spec(s) updated, commit {})",
            s.change_id,
            s.merged.len(),
            &commit[..commit.len().min(12)]
        );
        s.archived = Some(to_rel);
        s.commit = Some(commit);
        Ok(Transition::Done { summary })
    }
}

impl Workflow for ArchiveWorkflow {
    type State = ArchiveState;

    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn run_node(
        &self,
        name: &str,
        s: &mut ArchiveState,
        cx: &mut NodeCtx<'_>,
    ) -> Result<Transition, NodeError> {
        match name {
            node::LOAD => self.load(s, cx),
            node::CONFIRM => self.confirm(s, cx),
            node::ARCHIVE => self.archive(s, cx),
            other => Err(NodeError::Failed(format!(
                "unknown node `{other}` in the change-archive workflow"
            ))),
        }
    }
}
