//! The JSON half of the verdict grammar: reading a `json` block's object, keeping duplicate
//! members so that `{"verdict": "REVISE", "verdict": "APPROVED"}` is malformed instead of
//! silently the last one, and finding verdict objects anywhere in a draft.

use super::Decision;
use super::scan::mentions_verdict;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// Every JSON verdict object in `text`: in each JSON value that starts at a `{` outside an
/// earlier such value, at any depth. The scan resumes after each value it reads, so nested
/// objects are not read again, and a failed read stops at serde_json's depth limit (128): the
/// work is linear in the draft's length. (Not `IgnoredAny` as a cheap probe: serde_json skips
/// ignored values without that limit, which made nested drafts quadratic.)
pub(super) fn json_objects(text: &str) -> Vec<JsonVerdict> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(start) = text.get(from..).and_then(|t| t.find('{')) {
        let rest = text.get(from + start..).unwrap_or("");
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let end = match stream.next() {
            Some(Ok(value)) => {
                collect(&value, &mut found);
                stream.byte_offset()
            }
            _ => 0,
        };
        from += start + end.max(1);
    }
    found
}

fn collect(value: &Value, found: &mut Vec<JsonVerdict>) {
    match value {
        Value::Object(map) => {
            if let Read::Verdict(decision, findings) = read_members(map.iter()) {
                let body = String::new();
                found.push(JsonVerdict {
                    decision,
                    findings,
                    body,
                });
            }
            map.values().for_each(|v| collect(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, found)),
        _ => {}
    }
}

/// A verdict read from a JSON block.
#[derive(Debug)]
pub(super) struct JsonVerdict {
    pub(super) decision: Decision,
    pub(super) findings: Vec<String>,
    /// The block's text, trimmed, for comparing with the draft.
    pub(super) body: String,
}

/// What a json or unlabelled block holds.
pub(super) enum Read {
    Verdict(Decision, Vec<String>),
    Malformed(String),
    NotVerdict,
}

pub(super) fn read_json(text: &str) -> Read {
    let read = match serde_json::from_str::<Members>(text) {
        Ok(members) => read_members(members.0.iter().map(|(k, v)| (k, v))),
        Err(_) => Read::NotVerdict,
    };
    match read {
        Read::NotVerdict if mentions_verdict(text) => {
            Read::Malformed("a JSON block mentions \"verdict\" but is not verdict JSON".into())
        }
        read => read,
    }
}

fn read_members<'a>(members: impl Iterator<Item = (&'a String, &'a Value)> + Clone) -> Read {
    let named = |name: &str| -> Vec<&Value> {
        let named = members
            .clone()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name));
        named.map(|(_, v)| v).collect()
    };
    let malformed = |reason: &str| Read::Malformed(reason.into());
    let verdict = match named("verdict").as_slice() {
        [] => return Read::NotVerdict,
        [one] => *one,
        _ => return malformed("the JSON block has more than one \"verdict\" member"),
    };
    let Some(word) = verdict.as_str() else {
        return malformed("the JSON \"verdict\" member is not a string");
    };
    let Some(decision) = Decision::parse(word) else {
        let shown: String = word.chars().take(40).collect();
        return Read::Malformed(format!(
            "unknown verdict {shown:?} (expected APPROVED, REVISE or BLOCK)"
        ));
    };
    let findings = match named("findings").as_slice() {
        [] => Vec::new(),
        [Value::Array(items)] => items.iter().filter_map(finding_text).collect(),
        [_] => return malformed("the JSON \"findings\" member is not an array"),
        _ => return malformed("the JSON block has more than one \"findings\" member"),
    };
    Read::Verdict(decision, findings)
}

/// A JSON object's members in order, duplicates kept (a map would silently keep the last one).
struct Members(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Value>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
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
