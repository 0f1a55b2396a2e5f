//! gavel's read-only views of its runs, for people who would rather look than read: the pages
//! `gavel ui` serves on 127.0.0.1 and `gavel report --html` writes as files for CI. Everything
//! is read from a [`gavel_core::Store`] (SQLite or PostgreSQL alike) and rendered on the server
//! with compile-time templates; no page has a script, and text from models is escaped or
//! rendered as Markdown that cannot run anything (`markdown.rs`). This crate never prints.

pub mod changes;
pub(crate) mod diff;
mod error;
pub(crate) mod graph;
pub mod ledger;
pub mod listing;
pub(crate) mod markdown;
mod pages;
pub mod query;
pub mod site;
mod spend;
pub mod view;

pub use changes::ChangeCard;
pub use error::ReportError;
pub use query::RunsQuery;
pub use site::{Page, Site, SiteMode};
