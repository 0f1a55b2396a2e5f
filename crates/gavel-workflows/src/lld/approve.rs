//! N6 of the LLD kind: the approved design becomes `docs/lld/active/LLD-{issue#}.md`, the
//! lineage gets `NNN-approved.json` and moves to `done/{issue#}-lld/`, and one commit holds
//! them all.
//!
//! Replays are safe at every point: the approval time is journaled (a replay writes the same
//! `approved.json`), writes are atomic and the move idempotent, and the commit is made once
//! (see [`crate::kit::commit`]). The commit touches only gavel's artifact folders, so it
//! is exempt from the diff gate like the issue workflow's.

use std::path::PathBuf;

use gavel_core::{EventKind, NodeCtx, NodeError, StepError, Transition};
use serde::Serialize;

use super::{approved_text, lld_path, number_of};
use crate::document::{Approved, DocState, DocWorkflow, io_failed};
use crate::fsutil;
use crate::kit::commit::{commit_once, step_failed};
use crate::lineage::{Lineage, artifact_name};

/// `NNN-approved.json`: what was approved, for whom, by which reviewer, how.
#[derive(Debug, Serialize)]
struct ApprovedJson<'a> {
    issue_reference: &'a str,
    issue_number: u64,
    issue_url: &'a str,
    issue_title: &'a str,
    lld_path: &'a str,
    approved_at: &'a str,
    total_iterations: u32,
    draft_count: u32,
    verdict_count: u32,
    reviewer: &'a str,
    reviewer_model: Option<&'a str>,
    verdict: String,
    rubric: &'a str,
    rubric_sha256: &'a str,
    context_manifest: Option<&'a str>,
    run_id: i64,
    auto_mode: bool,
}

/// N6: commits the approved design.
pub(super) fn approve(
    wf: &DocWorkflow,
    s: &mut DocState,
    cx: &mut NodeCtx<'_>,
) -> Result<Transition, NodeError> {
    let number = number_of(s)?;
    let design = s
        .design_for
        .clone()
        .ok_or_else(|| NodeError::Failed("the run has not read its issue".into()))?;
    let verdict = s
        .verdict
        .clone()
        .ok_or_else(|| NodeError::Failed("no verdict to approve on".into()))?;
    let text = approved_text(cx, s)?;
    let now = cx.clock().now_rfc3339();
    let at: Result<String, StepError<std::convert::Infallible>> =
        cx.step("approved-at", || Ok(now.clone()));
    let approved_at = at.map_err(step_failed)?;

    let lld_rel = lld_path(number);
    let lld_abs = wf.root().join(&lld_rel);
    if let Some(parent) = lld_abs.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_failed("create", parent, e))?;
    }
    fsutil::write_atomic(&lld_abs, text.as_bytes()).map_err(|e| io_failed("write", &lld_abs, e))?;

    let lineage = wf.lineage(s);
    let done_slug = s
        .slug
        .strip_prefix(&format!("{number}-"))
        .unwrap_or(&s.slug)
        .to_owned();
    let done_rel = Lineage::done_rel(&wf.settings.lineage_dir, number, &done_slug);
    let done_abs = wf.root().join(&done_rel);
    // `approved.json` is numbered after the artifacts; a replay after the move writes into the
    // folder where the lineage now lives.
    let n = s.file_counter + 1;
    let folder = if done_abs.is_dir() && !lineage.abs().exists() {
        done_abs.clone()
    } else {
        lineage.abs()
    };
    // The manifest as it will be found after the move.
    let active_prefix = lineage.rel().to_string_lossy().into_owned();
    let manifest = s.context.as_ref().map(|c| {
        c.manifest
            .replacen(&active_prefix, &done_rel.to_string_lossy(), 1)
    });
    let json = ApprovedJson {
        issue_reference: &design.reference,
        issue_number: number,
        issue_url: &design.url,
        issue_title: &design.title,
        lld_path: &lld_rel,
        approved_at: &approved_at,
        total_iterations: s.iteration_count,
        draft_count: s.draft_count,
        verdict_count: s.verdict_count,
        reviewer: &wf.settings.roles.reviewer,
        reviewer_model: verdict.model.as_deref(),
        verdict: verdict.verdict.summary(),
        rubric: wf.kind.rubric_path,
        rubric_sha256: &verdict.rubric_sha256,
        context_manifest: manifest.as_deref(),
        run_id: cx.run().0,
        auto_mode: s.auto,
    };
    let mut bytes =
        serde_json::to_vec_pretty(&json).map_err(|e| NodeError::Failed(e.to_string()))?;
    bytes.push(b'\n');
    let approved_json = folder.join(artifact_name(n, "approved.json"));
    fsutil::write_atomic(&approved_json, &bytes)
        .map_err(|e| io_failed("write", &approved_json, e))?;
    s.file_counter = n;
    fsutil::move_idempotent(&lineage.abs(), &done_abs)
        .map_err(|e| io_failed("move the lineage folder", &lineage.abs(), e))?;

    let paths: Vec<PathBuf> = vec![
        PathBuf::from(&lld_rel),
        done_rel.clone(),
        lineage.rel().to_path_buf(),
    ];
    let message = format!(
        "gavel: approve LLD for #{number} {}\n\nLineage: {}",
        design.title.trim(),
        done_rel.display()
    );
    let key = format!("gavel-{}", s.run_key);
    let commit = commit_once(
        cx,
        wf.root(),
        &paths,
        &message,
        &key,
        &format!("the LLD for issue #{number} is written"),
    )?;
    cx.event(EventKind::Artifact {
        path: lld_rel.clone(),
        content: None,
        kind: None,
    });
    cx.event(EventKind::Artifact {
        path: done_rel.to_string_lossy().into_owned(),
        content: None,
        kind: None,
    });
    let summary = format!(
        "LLD for issue #{number} approved: {lld_rel}; lineage in {}, committed as {}",
        done_rel.display(),
        &commit[..commit.len().min(12)]
    );
    s.approved = Some(Approved {
        path: lld_rel,
        lineage: done_rel.to_string_lossy().into_owned(),
        commit: Some(commit),
    });
    Ok(Transition::Done { summary })
}
