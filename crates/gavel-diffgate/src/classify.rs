//! The gate's arithmetic: how much of a file changed and whether that needs a person's review.
//! Pure functions, so the thresholds are tested without a repository.

use serde::{Deserialize, Serialize};

use crate::THRESHOLD;

/// What happened to a staged file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChangeType {
    /// Edited in place.
    Modified,
    /// More than half of the original lines deleted and new content added (the PR #165 case).
    Replaced,
    /// Not in `HEAD`.
    New,
    /// Removed from the index.
    Deleted,
}

impl ChangeType {
    /// The name used in reports and JSON: `MODIFIED`, `REPLACED`, `NEW` or `DELETED`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Modified => "MODIFIED",
            Self::Replaced => "REPLACED",
            Self::New => "NEW",
            Self::Deleted => "DELETED",
        }
    }
}

impl std::fmt::Display for ChangeType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `(added + deleted) / (original_lines * 2)`, clamped to `[0, 1]`. An empty original with any
/// change is 1.0 (the quotient is unbounded); no change at all is 0.0.
#[must_use]
pub fn change_ratio(original_lines: u64, added: u64, deleted: u64) -> f64 {
    let changed = added.saturating_add(deleted);
    if changed == 0 {
        return 0.0;
    }
    if original_lines == 0 {
        return 1.0;
    }
    // u64 -> f64 loses precision only beyond 2^53 lines, far past any real file.
    #[allow(clippy::cast_precision_loss)]
    let ratio = changed as f64 / (original_lines as f64 * 2.0);
    ratio.clamp(0.0, 1.0)
}

/// Classifies one file: its change ratio, its [`ChangeType`] and whether it is flagged for
/// review. New files are never flagged; deleted files always are; otherwise a file is flagged
/// when its ratio is above [`THRESHOLD`], it was replaced, or more than half of its lines were
/// deleted (see [`lost_most_lines`]).
#[must_use]
pub fn classify(
    original_lines: u64,
    added: u64,
    deleted: u64,
    is_new: bool,
    is_deleted: bool,
) -> (f64, ChangeType, bool) {
    if is_new {
        return (1.0, ChangeType::New, false);
    }
    if is_deleted {
        return (1.0, ChangeType::Deleted, true);
    }
    let ratio = change_ratio(original_lines, added, deleted);
    let majority_deleted = lost_most_lines(original_lines, deleted);
    let change_type = if majority_deleted && added > 0 {
        ChangeType::Replaced
    } else {
        ChangeType::Modified
    };
    (ratio, change_type, majority_deleted || ratio > THRESHOLD)
}

/// More than half of the original lines were deleted (`deleted > 0.5 * original_lines`).
///
/// With something added this is the LLD's REPLACED. Without anything added the LLD is silent,
/// and its ratio cannot help: deletions alone never push `(added + deleted) / (2 * original)`
/// above 0.5, so a file emptied in place (the PR #165 accident without the 56 new lines) would
/// pass unflagged. The gate exists to stop accidental deletion of code, so such a file is
/// flagged too, as MODIFIED.
#[must_use]
pub fn lost_most_lines(original_lines: u64, deleted: u64) -> bool {
    // Without floating point: 2 * deleted > original.
    deleted.saturating_mul(2) > original_lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t040_calculate_change_ratio() {
        // Scenario 020: 10 lines rewritten in a 100-line file.
        assert!((change_ratio(100, 10, 10) - 0.1).abs() < 1e-12);
        // Scenario 030: 200 deleted and 50 added in a 270-line file.
        assert!((change_ratio(270, 50, 200) - 250.0 / 540.0).abs() < 1e-12);
        // PR #165: 270 lines replaced by 56.
        assert!((change_ratio(270, 56, 270) - 326.0 / 540.0).abs() < 1e-12);
        // Clamped: a 10-line file grown by 100 lines.
        assert!((change_ratio(10, 100, 0) - 1.0).abs() < f64::EPSILON);
        assert!(change_ratio(0, 0, 0).abs() < f64::EPSILON);
        assert!((change_ratio(0, 3, 0) - 1.0).abs() < f64::EPSILON);
        assert!(change_ratio(50, 0, 0).abs() < f64::EPSILON);
    }

    #[test]
    fn t050_classify_change_type_modified() {
        let (ratio, kind, flagged) = classify(100, 10, 10, false, false);
        assert_eq!(kind, ChangeType::Modified);
        assert!(!flagged);
        assert!((ratio - 0.1).abs() < 1e-12);
        // Exactly half deleted is not "more than half".
        assert_eq!(classify(100, 5, 50, false, false).1, ChangeType::Modified);
        // Growing a file by more than its size is flagged by the ratio alone.
        let (_, kind, flagged) = classify(10, 12, 0, false, false);
        assert_eq!((kind, flagged), (ChangeType::Modified, true));
        // Deleting half is neither replaced nor flagged.
        assert_eq!(
            classify(100, 0, 50, false, false),
            (0.25, ChangeType::Modified, false)
        );
    }

    #[test]
    fn deleting_most_of_a_file_is_flagged_though_the_ratio_stays_low() {
        // 80 of 100 lines deleted, nothing added: ratio 0.4, not a replacement, but flagged.
        assert_eq!(
            classify(100, 0, 80, false, false),
            (0.4, ChangeType::Modified, true)
        );
        // Emptied in place: the ratio is exactly 0.5, never above it.
        assert_eq!(
            classify(270, 0, 270, false, false),
            (0.5, ChangeType::Modified, true)
        );
        assert!(!lost_most_lines(100, 50));
        assert!(lost_most_lines(100, 51));
    }

    #[test]
    fn t060_classify_change_type_replaced() {
        // Scenario 030: ratio 0.46 is under the threshold, but it is a replacement.
        let (ratio, kind, flagged) = classify(270, 50, 200, false, false);
        assert_eq!(kind, ChangeType::Replaced);
        assert!(flagged);
        assert!(ratio < THRESHOLD);
        assert_eq!(classify(100, 1, 51, false, false).1, ChangeType::Replaced);
        assert_eq!(classify(1, 1, 1, false, false).1, ChangeType::Replaced);
    }

    #[test]
    fn pr165_classify_270_to_56() {
        let (ratio, kind, flagged) = classify(270, 56, 270, false, false);
        assert_eq!((kind, flagged), (ChangeType::Replaced, true));
        assert!((ratio - 0.6037).abs() < 1e-3);
    }

    #[test]
    fn new_and_deleted() {
        assert_eq!(
            classify(0, 100, 0, true, false),
            (1.0, ChangeType::New, false)
        );
        assert_eq!(
            classify(40, 0, 40, false, true),
            (1.0, ChangeType::Deleted, true)
        );
        assert_eq!(
            classify(0, 0, 0, false, true),
            (1.0, ChangeType::Deleted, true)
        );
    }

    #[test]
    fn serializes_screaming_snake_case() {
        let json = serde_json::to_string(&ChangeType::Replaced).unwrap_or_default();
        assert_eq!(json, "\"REPLACED\"");
        assert_eq!(ChangeType::Deleted.to_string(), "DELETED");
    }
}
