//! Reading a run's status name in SQL without parsing every stored status.
//!
//! A run's status is stored as the JSON serde writes for `RunStatus`: `{"status":"NAME",...}`,
//! the name first. A listing filtered by status (the runs page's `status=done` over 10,000 runs)
//! would parse every run's JSON to read that field, three times what comparing the start of
//! the text costs (SQLite's `json_extract`, PostgreSQL's `::json`). Both stores compare the
//! start of the text with [`status_prefix`] when it begins `{"status":"`, and parse the JSON
//! only when it does not (a status a newer gavel wrote in another key order). That is exact
//! for every status serde_json writes: it escapes only quotes, backslashes and control
//! characters, as the prefix does, so the name ends at the first unescaped quote either way.

/// `{"status":"NAME"`: how every status named `name` that serde writes begins.
pub(crate) fn status_prefix(name: &str) -> String {
    format!("{{\"status\":{}", serde_json::Value::from(name))
}

#[cfg(test)]
mod tests {
    use super::status_prefix;

    #[test]
    fn the_prefix_is_how_a_stored_status_begins() {
        let done = gavel_core::RunStatus::Done {
            summary: "filed".into(),
        };
        let stored = serde_json::to_string(&done).expect("json");
        assert!(stored.starts_with(&status_prefix("done")), "{stored}");
        assert!(!stored.starts_with(&status_prefix("don")));
        assert_eq!(status_prefix("a\"b"), r#"{"status":"a\"b""#);
    }
}
