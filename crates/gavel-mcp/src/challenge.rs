//! `submit_challenge`: the planning reviewer's verdict on a proposal, appended to
//! `proposal.md` as a `## Challenge` section (the proposal's own text kept as it was) and
//! written to `challenge.json` for gavel to read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::McpError;
use crate::fsafe::ChangeDir;
use crate::review::list_item;

/// The challenger's verdict on a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(inline)]
pub enum ChallengeVerdict {
    Approved,
    NeedsRevision,
    Rejected,
}

impl ChallengeVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "APPROVED",
            Self::NeedsRevision => "NEEDS_REVISION",
            Self::Rejected => "REJECTED",
        }
    }
}

/// The arguments of `submit_challenge`, as `challenge.json` holds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Challenge {
    pub verdict: ChallengeVerdict,
    /// One entry per finding, most important first.
    pub findings: Vec<String>,
}

impl Challenge {
    /// The section appended to `proposal.md`.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("## Challenge\n\n**Verdict:** {}\n\n", self.verdict.as_str());
        if self.findings.is_empty() {
            out.push_str("No findings.\n");
        }
        for finding in &self.findings {
            out.push_str(&list_item(finding));
        }
        out
    }

    /// Appends the section to `proposal.md` and writes `challenge.json`; returns the
    /// confirmation text. Both or neither: when either cannot be written, the folder is left
    /// as it was (the proposal is put back if `challenge.json` fails after it).
    pub fn submit(&self, dir: &ChangeDir, change_id: &str) -> Result<String, McpError> {
        let original = dir
            .read("proposal.md")?
            .ok_or(McpError::Missing("proposal.md"))?;
        let mut text = original.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&self.to_markdown());
        let record = serde_json::json!({
            "change_id": change_id,
            "verdict": self.verdict,
            "findings": self.findings,
        });
        let json = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
        // Everything that can fail on the way (space, quota, a refused name) fails here, before
        // either file changes.
        let challenge = dir.stage("challenge.json", &json)?;
        let proposal = dir.stage("proposal.md", &text)?;
        proposal.commit()?;
        if let Err(e) = challenge.commit() {
            if let Err(restore) = dir.write("proposal.md", &original) {
                tracing::error!(error = %restore, "could not put proposal.md back as it was");
            }
            return Err(e);
        }
        Ok(format!(
            "challenge recorded: {} with {} finding(s) (proposal.md, challenge.json)",
            self.verdict.as_str(),
            self.findings.len()
        ))
    }
}
