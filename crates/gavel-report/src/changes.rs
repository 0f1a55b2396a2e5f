//! The board of spec-driven changes (`gavel change`): each change of the repository in the
//! column of its phase from `STATE.yaml`, with its proposal, specs, tasks and `REVIEW.md`. The
//! caller reads the repository (this crate reads only the store) and hands over the cards.

/// The phases, in the order of the board's columns; `unknown` holds changes without a
/// readable `STATE.yaml`.
pub const PHASES: &[&str] = &[
    "proposed",
    "challenged",
    "rejected",
    "implementing",
    "complete",
    "archived",
    "unknown",
];

/// One change as the board shows it.
#[derive(Debug, Clone, Default)]
pub struct ChangeCard {
    pub id: String,
    /// One of [`PHASES`].
    pub phase: String,
    /// The command that fits the phase (`plan`, `impl`, `archive`).
    pub next: Option<String>,
    /// Why `STATE.yaml` or `tasks.md` could not be read.
    pub problem: Option<String>,
    pub tasks_done: usize,
    pub tasks_total: usize,
    /// Its documents, in order (`proposal.md`, `specs/…/spec.md`, `tasks.md`, `REVIEW.md`):
    /// name and Markdown text.
    pub documents: Vec<(String, String)>,
}

impl ChangeCard {
    /// Whether its id can name a page of its own ([`is_change_id`]): only then is it linked
    /// and written.
    pub fn linkable(&self) -> bool {
        is_change_id(&self.id)
    }
}

/// Reads the repository's changes when a page needs them.
pub type ChangeSource<'a> = &'a (dyn Fn() -> Vec<ChangeCard> + Send + Sync);

/// Whether `id` can name a change page (letters, digits, `-`, `_`, `.`; not `.` or `..`).
pub fn is_change_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}
