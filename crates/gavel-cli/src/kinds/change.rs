//! The spec-driven change workflows as the CLI drives them. `change-archive` has no model
//! role: resuming it needs only the repository it runs in.

use gavel_workflows::change::archive::{ArchiveWorkflow, WORKFLOW};

use super::{Resume, WorkflowKind};
use crate::driver::{self, GateMode};
use crate::error::CliError;
use crate::exit::Exit;

/// `gavel change archive`'s entry in the registry.
pub struct ArchiveKind;

/// The one instance.
pub static CHANGE_ARCHIVE: ArchiveKind = ArchiveKind;

impl WorkflowKind for ArchiveKind {
    fn name(&self) -> &'static str {
        WORKFLOW
    }

    fn roles(&self) -> &'static [&'static str] {
        &[]
    }

    fn resume(&self, req: Resume<'_>) -> Result<Exit, CliError> {
        let wf = ArchiveWorkflow {
            repo_root: req.ctx.settings.repo_root.clone(),
        };
        driver::drive(
            &req.ctx,
            req.store,
            &wf,
            req.record.id,
            req.answer,
            GateMode::for_ui(&req.ctx),
        )
    }
}
