//! Prices per million tokens, for the spend ledger and the budget check.
//!
//! When a CLI or API reports a call's cost, that figure is used. Otherwise the cost is computed
//! from this table: built-in list prices for common models (USD per million tokens, as published
//! by the vendors in 2026) that `[prices]` in gavel.toml extends or overrides. A model matches
//! the longest entry its name contains.

use serde::Deserialize;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

/// Model-name patterns and their prices.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    entries: Vec<(String, Price)>,
}

const BUILT_IN: &[(&str, f64, f64)] = &[
    ("opus", 15.0, 75.0),
    ("sonnet", 3.0, 15.0),
    ("haiku", 1.0, 5.0),
    ("gemini-2.5-pro", 1.25, 10.0),
    ("gemini-3-pro", 2.0, 12.0),
    ("flash-lite", 0.10, 0.40),
    ("flash", 0.30, 2.50),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5-mini", 0.25, 2.0),
    ("gpt-5", 1.25, 10.0),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4o", 2.5, 10.0),
    ("scripted", 0.0, 0.0),
];

impl Default for PriceTable {
    fn default() -> Self {
        Self {
            entries: BUILT_IN
                .iter()
                .map(|(k, i, o)| {
                    (
                        (*k).to_owned(),
                        Price {
                            input: *i,
                            output: *o,
                        },
                    )
                })
                .collect(),
        }
    }
}

impl PriceTable {
    /// The built-in table with `extra` entries added (replacing built-ins of the same name).
    pub fn with(mut self, extra: impl IntoIterator<Item = (String, Price)>) -> Self {
        for (pattern, price) in extra {
            self.entries.retain(|(k, _)| *k != pattern);
            self.entries.push((pattern, price));
        }
        self
    }

    /// The price of `model`, if any entry matches.
    pub fn lookup(&self, model: &str) -> Option<Price> {
        let m = model.to_ascii_lowercase();
        self.entries
            .iter()
            .filter(|(k, _)| m.contains(&k.to_ascii_lowercase()))
            .max_by_key(|(k, _)| k.len())
            .map(|(_, p)| *p)
    }

    /// The cost of a call in millionths of a USD.
    pub fn cost_micros(&self, model: &str, input_tokens: u64, output_tokens: u64) -> Option<u64> {
        let p = self.lookup(model)?;
        Some(micros(input_tokens, p.input) + micros(output_tokens, p.output))
    }
}

/// `tokens` at `per_mtok` USD per million tokens, in micro-USD (rounded up).
fn micros(tokens: u64, per_mtok: f64) -> u64 {
    (tokens as f64 * per_mtok).ceil() as u64
}

/// Formats micro-USD as `$1.2345`.
pub fn usd(micros: u64) -> String {
    format!("${:.4}", micros as f64 / 1_000_000.0)
}

/// USD (as a person writes it) to micro-USD; `None` for negative or non-finite amounts.
pub fn usd_to_micros(usd: f64) -> Option<u64> {
    (usd.is_finite() && usd >= 0.0).then(|| (usd * 1_000_000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_matching_entry_wins() {
        let t = PriceTable::default();
        assert_eq!(
            t.lookup("gemini-2.5-flash-lite").map(|p| p.input),
            Some(0.10)
        );
        assert_eq!(t.lookup("gemini-2.5-flash").map(|p| p.input), Some(0.30));
        assert_eq!(
            t.lookup("claude-sonnet-4-5-20250929").map(|p| p.output),
            Some(15.0)
        );
        assert_eq!(t.lookup("gpt-5-mini").map(|p| p.input), Some(0.25));
        assert_eq!(t.lookup("llama3.1:8b"), None);
    }

    #[test]
    fn costs_are_in_micro_usd_and_config_overrides() {
        let t = PriceTable::default();
        assert_eq!(
            t.cost_micros("claude-sonnet-4-5", 1_000, 1_000),
            Some(3_000 + 15_000)
        );
        let t = t.with([(
            "llama".to_owned(),
            Price {
                input: 0.5,
                output: 0.5,
            },
        )]);
        assert_eq!(t.cost_micros("llama3.1:8b", 2_000_000, 0), Some(1_000_000));
        assert_eq!(usd(1_234_500), "$1.2345");
        assert_eq!(usd_to_micros(0.5), Some(500_000));
        assert_eq!(usd_to_micros(-1.0), None);
    }
}
