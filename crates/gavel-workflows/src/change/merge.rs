//! Merging a delta spec into a living spec, requirement by requirement, the way OpenSpec's
//! archive does: renames first, then removals, then modifications (by the new names), then
//! additions appended after the last requirement.
//!
//! Every operation is checked before any text is produced (a MODIFIED, REMOVED or RENAMED
//! requirement that does not exist, or an ADDED or rename target that already does, is an
//! error naming it), and the result is a new string: nothing is ever half-merged. Text outside
//! requirement blocks (title, purpose, other sections) is kept byte for byte.
//!
//! A MODIFIED requirement replaces the whole block, so one that omits a scenario the living
//! requirement (after the renames) still has would drop it: that is refused, naming every
//! dropped scenario ([`MergeError::DropsScenarios`]), as OpenSpec's archive and its
//! `validate --strict` refuse it (by name, counting duplicates).

use super::spec::{DeltaSpec, REQUIREMENT_PREFIX, Requirement, living_blocks, outline};

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
    /// MODIFIED requirements that omit scenarios the living spec still has.
    #[error("{}", describe_dropped(dropped))]
    DropsScenarios {
        /// Each requirement and the scenarios it would drop.
        dropped: Vec<Dropped>,
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

/// A MODIFIED requirement and the scenarios of the living one it omits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The requirement.
    pub requirement: String,
    /// The living requirement's scenarios the MODIFIED block lacks, in order.
    pub scenarios: Vec<String>,
}

fn describe_dropped(dropped: &[Dropped]) -> String {
    let each: Vec<String> = dropped
        .iter()
        .map(|d| {
            let names: Vec<String> = d.scenarios.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "MODIFIED requirement `{}` omits scenario(s) the living spec still has: {}",
                d.requirement,
                names.join(", ")
            )
        })
        .collect();
    format!(
        "{}; a MODIFIED requirement replaces the whole block, so the merge would drop them: copy them into the MODIFIED block (or change them there)",
        each.join("; ")
    )
}

/// The names in `living` that `modified` lacks, counting duplicates (a name twice in the
/// living requirement and once in the modified one is dropped once).
fn missing_scenarios(living: &[String], modified: &[String]) -> Vec<String> {
    let mut left: Vec<&String> = modified.iter().collect();
    let mut missing = Vec::new();
    for name in living {
        match left.iter().position(|n| *n == name) {
            Some(i) => {
                left.swap_remove(i);
            }
            None => missing.push(name.clone()),
        }
    }
    missing
}

enum Segment<'a> {
    Text(&'a str),
    Req { name: String, text: String },
}

/// The MODIFIED requirements of `delta` that omit scenarios their living requirement in
/// `living` still has (after the delta's renames, followed along chains, as OpenSpec does).
/// A MODIFIED requirement the living spec lacks is not judged here (see [`merge`]).
pub fn dropped_scenarios(living: &str, delta: &DeltaSpec) -> Vec<Dropped> {
    let blocks: Vec<Requirement> = living_blocks(living).into_iter().map(|(_, r)| r).collect();
    let mut dropped = Vec::new();
    for req in &delta.modified {
        if delta.renamed.iter().any(|r| r.from == req.name) {
            // A MODIFIED under a name the delta renames away is a conflict of its own.
            continue;
        }
        let mut name = req.name.as_str();
        let mut seen = Vec::new();
        let current = loop {
            if let Some(b) = blocks.iter().find(|b| b.name == name) {
                break Some(b);
            }
            seen.push(name);
            match delta.renamed.iter().find(|r| r.to == name) {
                Some(r) if !seen.contains(&r.from.as_str()) => name = &r.from,
                _ => break None,
            }
        };
        let Some(current) = current else { continue };
        let missing = missing_scenarios(&current.scenarios, &req.scenarios);
        if !missing.is_empty() {
            dropped.push(Dropped {
                requirement: req.name.clone(),
                scenarios: missing,
            });
        }
    }
    dropped
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
    let dropped = dropped_scenarios(living, delta);
    if !dropped.is_empty() {
        return Err(MergeError::DropsScenarios { dropped });
    }
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
