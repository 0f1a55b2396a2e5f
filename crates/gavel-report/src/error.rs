//! What can go wrong while reading a run for a page or writing a report.

use gavel_core::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("rendering {page}: {message}")]
    Render { page: String, message: String },
    #[error("{what}: {value:?} ({expected})")]
    BadQuery {
        what: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}
