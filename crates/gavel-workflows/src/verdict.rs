//! Reading a reviewer's verdict without trusting the reviewer.
//!
//! Routing never comes from a model saying "approved" in prose. The reviewer is asked for a
//! fenced JSON block (`{"verdict": "APPROVED" | "REVISE" | "BLOCK", "findings": [...]}`); the
//! seeds' checkbox form (`[x] **APPROVED**`) is also accepted. Anything else, including two
//! forms that disagree or several checked boxes, is [`Verdict::Unparseable`] and fails closed:
//! it goes to a person, never to filing.

use serde::{Deserialize, Serialize};

/// The reviewer's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Decision {
    Approved,
    Revise,
    Block,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "APPROVED",
            Self::Revise => "REVISE",
            Self::Block => "BLOCK",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "APPROVED" | "APPROVE" => Some(Self::Approved),
            "REVISE" => Some(Self::Revise),
            "BLOCK" | "BLOCKED" => Some(Self::Block),
            _ => None,
        }
    }
}

/// A parsed verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Parsed {
        decision: Decision,
        findings: Vec<String>,
        form: String,
    },
    Unparseable {
        reason: String,
    },
}

impl Verdict {
    /// Clean: approved with no findings. Only a clean verdict routes to filing by itself.
    pub fn is_clean(&self) -> bool {
        matches!(self, Self::Parsed { decision: Decision::Approved, findings, .. } if findings.is_empty())
    }

    /// One line for prompts and headers: `REVISE (2 findings)`, `UNPARSEABLE: ...`.
    pub fn summary(&self) -> String {
        match self {
            Self::Parsed {
                decision, findings, ..
            } if findings.is_empty() => decision.as_str().into(),
            Self::Parsed {
                decision, findings, ..
            } => {
                let n = findings.len();
                format!(
                    "{} ({n} finding{})",
                    decision.as_str(),
                    if n == 1 { "" } else { "s" }
                )
            }
            Self::Unparseable { reason } => format!("UNPARSEABLE: {reason}"),
        }
    }
}

/// Parses a reviewer's answer.
pub fn parse(text: &str) -> Verdict {
    let json = match parse_json_blocks(text) {
        Ok(v) => v,
        Err(reason) => return Verdict::Unparseable { reason },
    };
    let checkbox = match parse_checkboxes(text) {
        Ok(v) => v,
        Err(reason) => return Verdict::Unparseable { reason },
    };
    match (json, checkbox) {
        (Some((decision, findings)), None) => Verdict::Parsed {
            decision,
            findings,
            form: "json".into(),
        },
        (None, Some(decision)) => Verdict::Parsed {
            decision,
            findings: Vec::new(),
            form: "checkbox".into(),
        },
        (Some((a, findings)), Some(b)) if a == b => Verdict::Parsed {
            decision: a,
            findings,
            form: "json".into(),
        },
        (Some((a, _)), Some(b)) => Verdict::Unparseable {
            reason: format!(
                "the JSON verdict says {} but the checkbox says {}",
                a.as_str(),
                b.as_str()
            ),
        },
        (None, None) => Verdict::Unparseable {
            reason: "no JSON verdict block and no checked verdict box found".into(),
        },
    }
}

#[derive(Deserialize)]
struct JsonVerdict {
    verdict: String,
    #[serde(default)]
    findings: Vec<serde_json::Value>,
}

fn parse_json_blocks(text: &str) -> Result<Option<(Decision, Vec<String>)>, String> {
    let mut found: Option<(Decision, Vec<String>)> = None;
    for block in fenced_blocks(text) {
        let Ok(v) = serde_json::from_str::<JsonVerdict>(block) else {
            if block.contains("\"verdict\"") {
                return Err(
                    "a JSON block mentions \"verdict\" but is not valid verdict JSON".into(),
                );
            }
            continue;
        };
        let decision = Decision::parse(&v.verdict).ok_or_else(|| {
            format!(
                "unknown verdict {:?} (expected APPROVED, REVISE or BLOCK)",
                v.verdict
            )
        })?;
        let findings = v.findings.iter().filter_map(finding_text).collect();
        if let Some((prev, _)) = &found
            && *prev != decision
        {
            return Err("several JSON verdict blocks disagree".into());
        }
        found = Some((decision, findings));
    }
    Ok(found)
}

fn finding_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        serde_json::Value::Object(map) => ["text", "description", "summary", "issue", "message"]
            .iter()
            .find_map(|k| map.get(*k).and_then(|x| x.as_str()))
            .map(|s| s.trim().to_owned())
            .or_else(|| Some(v.to_string())),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The bodies of ```json (or unlabelled) fenced blocks.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(nl) = after.find('\n') else { break };
        let lang = after[..nl].trim();
        let body_start = &after[nl + 1..];
        let Some(end) = body_start.find("```") else {
            break;
        };
        if lang.is_empty() || lang.eq_ignore_ascii_case("json") {
            out.push(body_start[..end].trim());
        }
        rest = &body_start[end + 3..];
    }
    out
}

fn parse_checkboxes(text: &str) -> Result<Option<Decision>, String> {
    let mut checked = Vec::new();
    for line in text.lines() {
        let l = line.trim_start_matches(|c: char| c.is_whitespace() || c == '-' || c == '*');
        let lower = l.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("[x]") {
            let word = rest.trim().trim_matches('*').trim();
            let word = word
                .split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or("");
            if let Some(d) = Decision::parse(word)
                && !checked.contains(&d)
            {
                checked.push(d);
            }
        }
    }
    match checked.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        _ => Err("more than one verdict box is checked".into()),
    }
}

#[cfg(test)]
mod tests;
