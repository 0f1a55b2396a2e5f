//! A confined call's side of [`CliProvider`]: the writable paths (the profile's, the call's
//! private temporary folder, the CLI's own state) and the launcher's refusals read from its
//! exit code and `gavel confine:` lines.

use std::path::{Path, PathBuf};

use gavel_exec::confine::{Confinement, EXIT_NOT_FOUND, EXIT_REFUSED};

use super::{CliProvider, Written};
use crate::cli::{CliSettings, not_installed};
use crate::process::ProcessOutput;
use crate::provider::ProviderError;

impl CliProvider {
    /// The confinement of one call: the profile's writable paths, a private temporary folder
    /// (made now, set as the child's `TMPDIR`, `TMP` and `TEMP` in `settings`, removed with
    /// `written`) and the CLI's own state paths in the child's environment (folders made when
    /// missing; a missing file is left out, as Landlock can only name an existing one).
    pub(super) fn confinement(
        &self,
        confine: &Confinement,
        scratch: &Path,
        settings: &mut CliSettings,
        written: &mut Written,
    ) -> Result<Confinement, ProviderError> {
        let tmp = tmp_path(scratch);
        written
            .create_tree(&tmp)
            .map_err(|message| self.permanent(message))?;
        let tmp_text = tmp.display().to_string();
        for name in ["TMPDIR", "TMP", "TEMP"] {
            settings.env.push((name.to_owned(), tmp_text.clone()));
        }
        let var = |name: &str| child_var(settings, name);
        let mut writable = confine.writable.clone();
        writable.push(tmp.clone());
        for state in self.agent.state_paths(&var) {
            if !state.path.is_absolute() || writable.contains(&state.path) {
                continue;
            }
            if state.folder {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&state.path)
                    .map_err(|e| {
                        self.permanent(format!(
                            "cannot create the {} state folder {}: {e}",
                            self.agent.tool().display_name(),
                            state.path.display()
                        ))
                    })?;
            } else if !state.path.is_file() {
                continue;
            }
            writable.push(state.path);
        }
        Ok(Confinement {
            writable,
            ..confine.clone()
        })
    }

    /// The launcher's own refusal (it printed `gavel confine: ...` and exited 126 or 127), as
    /// a permanent error: the CLI never ran.
    pub(super) fn launcher_refused(
        &self,
        c: &Confinement,
        out: &ProcessOutput,
    ) -> Result<(), ProviderError> {
        let said = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("gavel confine:"))
            .collect::<Vec<_>>()
            .join("; ");
        let code = out.status.code().and_then(|c| u8::try_from(c).ok());
        if said.is_empty() {
            return Ok(());
        }
        let tool = self.agent.tool();
        let launcher = c.launcher.program.display();
        match code {
            Some(EXIT_NOT_FOUND) => Err(ProviderError::Permanent {
                provider: tool.kind.into(),
                message: format!(
                    "the confinement launcher ({launcher}) could not find {}: {said}",
                    tool.program
                ),
                hint: not_installed(tool).hint().map(str::to_owned),
            }),
            Some(EXIT_REFUSED) => Err(ProviderError::Permanent {
                provider: tool.kind.into(),
                message: format!(
                    "{} was not started: the confinement launcher ({launcher}) refused: {said}",
                    tool.display_name()
                ),
                hint: Some(
                    "the agent runs only confined to its folders; fix what the launcher names, \
                     or set [implement] sandbox = \"none\" to run it unconfined"
                        .into(),
                ),
            }),
            _ => Ok(()),
        }
    }
}

/// The call's private temporary folder, beside its private folder (not created yet).
fn tmp_path(scratch: &Path) -> PathBuf {
    let mut name = scratch.as_os_str().to_owned();
    name.push("-tmp");
    PathBuf::from(name)
}

/// A variable as the child will see it: the last value `settings` sets, unless it removes the
/// variable, else gavel's own.
fn child_var(settings: &CliSettings, name: &str) -> Option<String> {
    if let Some((_, v)) = settings.env.iter().rev().find(|(k, _)| k == name) {
        return Some(v.clone());
    }
    if settings.env_remove.iter().any(|k| k == name) {
        return None;
    }
    std::env::var(name).ok()
}
