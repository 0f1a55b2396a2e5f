//! `[workflows.NAME]`: what one workflow sets over the global settings (roles, iteration cap,
//! folders, template, whether its drafter reads the repository), and the accessors that answer
//! "what applies to this workflow".

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::Settings;
use crate::error::CliError;

/// `[workflows.NAME]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkflowConfig {
    /// Role name → provider string (`[workflows.issue.roles] reviewer = "..."`).
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
    pub max_iterations: Option<u32>,
    /// Over `[paths] lineage` for this workflow.
    lineage: Option<String>,
    /// Over `[paths] ideas` for this workflow.
    ideas: Option<String>,
    /// The template its drafter fills in, instead of the workflow's built-in path.
    template: Option<String>,
    /// The drafter runs as an agent with read-only tools in the repository.
    drafter_reads_repo: Option<bool>,
}

/// One workflow's folders and template, resolved and checked.
#[derive(Debug, Clone, Default)]
pub(super) struct WorkflowPaths {
    lineage: Option<PathBuf>,
    ideas: Option<PathBuf>,
    template: Option<PathBuf>,
}

/// Every workflow's folders, each checked to stay inside the repository.
pub(super) fn paths(
    workflows: &BTreeMap<String, WorkflowConfig>,
    relative: impl Fn(&str, &str) -> Result<PathBuf, CliError>,
) -> Result<BTreeMap<String, WorkflowPaths>, CliError> {
    let mut out = BTreeMap::new();
    for (w, c) in workflows {
        let checked = |key: &str, v: &Option<String>| {
            v.as_deref()
                .map(|v| relative(&format!("workflows.{w}.{key}"), v))
                .transpose()
        };
        out.insert(
            w.clone(),
            WorkflowPaths {
                lineage: checked("lineage", &c.lineage)?,
                ideas: checked("ideas", &c.ideas)?,
                template: checked("template", &c.template)?,
            },
        );
    }
    Ok(out)
}

/// `drafter_reads_repo` per workflow that sets it.
pub(super) fn drafter_reads_repo(
    workflows: &BTreeMap<String, WorkflowConfig>,
) -> BTreeMap<String, bool> {
    workflows
        .iter()
        .filter_map(|(w, c)| c.drafter_reads_repo.map(|v| (w.clone(), v)))
        .collect()
}

impl Settings {
    /// The lineage folder of `workflow`'s runs: `[workflows.NAME] lineage`, else `[paths]`.
    pub fn lineage_dir_for(&self, workflow: &str) -> PathBuf {
        self.workflow_paths
            .get(workflow)
            .and_then(|p| p.lineage.clone())
            .unwrap_or_else(|| self.lineage_dir.clone())
    }

    /// The ideas folder of `workflow`: `[workflows.NAME] ideas`, else `[paths]`.
    pub fn ideas_dir_for(&self, workflow: &str) -> PathBuf {
        self.workflow_paths
            .get(workflow)
            .and_then(|p| p.ideas.clone())
            .unwrap_or_else(|| self.ideas_dir.clone())
    }

    /// `[workflows.NAME] template`, when set (else the workflow uses its built-in path).
    pub fn template_for(&self, workflow: &str) -> Option<PathBuf> {
        self.workflow_paths
            .get(workflow)
            .and_then(|p| p.template.clone())
    }

    /// The most drafts (or iterations) a run of `workflow` may make.
    pub fn max_iterations(&self, workflow: &str) -> u32 {
        self.max_iterations
            .get(workflow)
            .copied()
            .unwrap_or(self.default_max_iterations)
    }

    /// `[workflows.NAME] drafter_reads_repo`: the drafter reads the repository (read-only).
    pub fn drafter_reads_repo(&self, workflow: &str) -> bool {
        self.drafter_reads_repo
            .get(workflow)
            .copied()
            .unwrap_or(false)
    }
}
