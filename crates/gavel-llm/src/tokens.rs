//! Counting prompt tokens before a call, for the budget check.
//!
//! Uses the `o200k_base` vocabulary that tiktoken-rs ships inside the crate (no download). Other
//! vendors' tokenizers differ by some percent; the estimate only has to keep a run from starting
//! a call it cannot afford, and the real counts reported after the call go to the ledger.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// The number of o200k tokens in `text` (a length-based estimate if the vocabulary cannot load).
pub fn count(text: &str) -> u64 {
    match bpe() {
        Some(bpe) => bpe.encode_ordinary(text).len() as u64,
        None => (text.len() as u64).div_ceil(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_o200k_vocabulary() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        let long = "The quick brown fox jumps over the lazy dog. ".repeat(100);
        let n = count(&long);
        assert!((900..=1100).contains(&n), "{n}");
    }
}
