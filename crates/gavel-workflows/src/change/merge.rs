//! Merging a delta spec into a living spec, requirement by requirement, the way OpenSpec's
//! archive does: renames first, then removals, then modifications (by the new names), then
//! additions appended after the last requirement.
//!
//! Every operation is checked before any text is produced (a MODIFIED, REMOVED or RENAMED
//! requirement that does not exist, or an ADDED or rename target that already does, is an
//! error naming it), and the result is a new string: nothing is ever half-merged. Text outside
//! requirement blocks (title, purpose, other sections) is kept byte for byte.

use super::spec::{DeltaSpec, REQUIREMENT_PREFIX, living_blocks, outline};

/// Why a delta does not apply to a living spec.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    /// A MODIFIED, REMOVED or RENAMED requirement the living spec does not have.
    #[error("{op} requirement `{name}` does not exist in the living spec")]
    Missing {
        /// `MODIFIED`, `REMOVED` or `RENAMED`.
        op: &'static str,
        /// The requirement.
        name: String,
    },
    /// An ADDED requirement (or a rename's target) the living spec already has.
    #[error("{op} requirement `{name}` already exists in the living spec")]
    Exists {
        /// `ADDED` or `RENAMED`.
        op: &'static str,
        /// The requirement.
        name: String,
    },
    /// The same requirement under two operations that contradict each other.
    #[error("requirement `{name}` is both {first} and {second} in the delta")]
    Conflict {
        /// The requirement.
        name: String,
        /// One operation.
        first: &'static str,
        /// The other.
        second: &'static str,
    },
}

enum Segment<'a> {
    Text(&'a str),
    Req { name: String, text: String },
}

/// A living spec for a capability that has none yet, for a delta to merge into.
pub fn new_living_spec(capability: &str, purpose: &str) -> String {
    format!("# {capability} Specification\n\n## Purpose\n{purpose}\n\n## Requirements\n")
}

fn find(segments: &[Segment<'_>], name: &str) -> Option<usize> {
    segments
        .iter()
        .position(|s| matches!(s, Segment::Req { name: n, .. } if n == name))
}

/// Applies `delta` to the living spec `living`, returning the new text, or the first reason it
/// does not apply.
pub fn merge(living: &str, delta: &DeltaSpec) -> Result<String, MergeError> {
    check_conflicts(delta)?;
    let mut segments = Vec::new();
    let mut at = 0;
    for (range, req) in living_blocks(living) {
        segments.push(Segment::Text(&living[at..range.start]));
        segments.push(Segment::Req {
            name: req.name,
            text: req.text,
        });
        at = range.end;
    }
    let tail = &living[at..];
    // Where additions go when the spec has no requirement yet: the end of its
    // `## Requirements` section, or a new one at the end.
    let mut added_heading = None;
    let insert_tail_at = if segments.is_empty() {
        let outline = outline(living);
        match outline
            .headings
            .iter()
            .position(|h| h.level == 2 && h.title.eq_ignore_ascii_case("Requirements"))
        {
            Some(i) => outline.section_end(i, living.len()),
            None => {
                added_heading = Some("## Requirements\n\n");
                living.len()
            }
        }
    } else {
        0
    };
    let (tail_before, tail_after) = tail.split_at(insert_tail_at);
    segments.push(Segment::Text(tail_before));
    let mut insert_at = segments
        .iter()
        .rposition(|s| matches!(s, Segment::Req { .. }));

    for r in &delta.renamed {
        let i = find(&segments, &r.from).ok_or_else(|| MergeError::Missing {
            op: "RENAMED",
            name: r.from.clone(),
        })?;
        if find(&segments, &r.to).is_some() {
            return Err(MergeError::Exists {
                op: "RENAMED",
                name: r.to.clone(),
            });
        }
        if let Segment::Req { name, text } = &mut segments[i] {
            let body = text.split_once('\n').map_or("", |(_, b)| b);
            *text = format!("### {REQUIREMENT_PREFIX} {}\n{body}", r.to);
            text.truncate(text.trim_end().len());
            name.clone_from(&r.to);
        }
    }
    for req in &delta.removed {
        let i = find(&segments, &req.name).ok_or_else(|| MergeError::Missing {
            op: "REMOVED",
            name: req.name.clone(),
        })?;
        segments[i] = Segment::Text("");
    }
    for req in &delta.modified {
        let i = find(&segments, &req.name).ok_or_else(|| MergeError::Missing {
            op: "MODIFIED",
            name: req.name.clone(),
        })?;
        segments[i] = Segment::Req {
            name: req.name.clone(),
            text: req.text.clone(),
        };
    }
    let mut added = Vec::new();
    for req in &delta.added {
        if find(&segments, &req.name).is_some() || added.iter().any(|(n, _)| n == &req.name) {
            return Err(MergeError::Exists {
                op: "ADDED",
                name: req.name.clone(),
            });
        }
        added.push((req.name.clone(), req.text.clone()));
    }
    let at = insert_at.take().map_or(segments.len(), |i| i + 1);
    let added = added
        .into_iter()
        .map(|(name, text)| Segment::Req { name, text });
    segments.splice(at..at, added);

    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        match segment {
            Segment::Text(t) => out.push_str(t),
            Segment::Req { text, .. } => {
                if i == at && added_heading.is_some() {
                    if !out.is_empty() && !out.ends_with("\n\n") {
                        out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
                    }
                    out.push_str(added_heading.take().unwrap_or_default());
                }
                if !out.is_empty() && !out.ends_with("\n\n") {
                    out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
                }
                out.push_str(text.trim_end());
                out.push_str("\n\n");
            }
        }
    }
    out.push_str(tail_after);
    Ok(format!("{}\n", out.trim_end()))
}

/// The same name under REMOVED and MODIFIED or ADDED, or renamed twice, cannot mean one
/// thing.
fn check_conflicts(delta: &DeltaSpec) -> Result<(), MergeError> {
    let conflict = |name: &str, first, second| MergeError::Conflict {
        name: name.to_owned(),
        first,
        second,
    };
    for removed in &delta.removed {
        if delta.modified.iter().any(|m| m.name == removed.name) {
            return Err(conflict(&removed.name, "REMOVED", "MODIFIED"));
        }
        if delta.added.iter().any(|a| a.name == removed.name) {
            return Err(conflict(&removed.name, "REMOVED", "ADDED"));
        }
    }
    for (i, r) in delta.renamed.iter().enumerate() {
        if delta.renamed[..i]
            .iter()
            .any(|o| o.from == r.from || o.to == r.to)
        {
            return Err(conflict(&r.from, "RENAMED", "RENAMED"));
        }
        if delta.modified.iter().any(|m| m.name == r.from) {
            return Err(conflict(&r.from, "RENAMED", "MODIFIED under its old name"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
