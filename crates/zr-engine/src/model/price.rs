//! The one price table: US dollars per million tokens of the providers'
//! known models (list prices, without batch or long-context rates), read
//! by the engine for [`QueryResult::cost_usd`](crate::QueryResult) and
//! [`TaskResult::cost_usd`](crate::TaskResult), and by `zr sessions`. An
//! estimate, not a bill.

use zr_types::Usage;

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Input tokens not read from the cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
}

impl Price {
    const fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        Self {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    /// What `usage` costs, in US dollars.
    #[must_use]
    pub fn cost(&self, usage: &Usage) -> f64 {
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts stay far below 2^52"
        )]
        let m = |tokens: u64| tokens as f64 / 1_000_000.0;
        m(usage.input_tokens) * self.input
            + m(usage.output_tokens) * self.output
            + m(usage.cache_read_input_tokens) * self.cache_read
            + m(usage.cache_creation_input_tokens) * self.cache_write
    }
}

/// The day the prices of [`price_of`]'s table were taken from the
/// providers' published list prices. A price changed since is not known
/// here: update the table and this date together.
pub const PRICES_TAKEN: &str = "2026-11-30";

/// Model name prefixes and their prices; the longest matching prefix wins
/// (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`). Anthropic's
/// cache writes are the 5-minute rate; OpenAI charges none.
const TABLE: &[(&str, Price)] = &[
    ("scripted", Price::new(0.0, 0.0, 0.0, 0.0)),
    // Anthropic.
    ("claude-opus-4", Price::new(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-1", Price::new(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-5", Price::new(5.0, 25.0, 0.5, 6.25)),
    ("claude-sonnet-4", Price::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-7-sonnet", Price::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5", Price::new(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", Price::new(0.8, 4.0, 0.08, 1.0)),
    // OpenAI.
    ("gpt-4.1", Price::new(2.0, 8.0, 0.5, 0.0)),
    ("gpt-4.1-mini", Price::new(0.4, 1.6, 0.1, 0.0)),
    ("gpt-4.1-nano", Price::new(0.1, 0.4, 0.025, 0.0)),
    ("gpt-4o", Price::new(2.5, 10.0, 1.25, 0.0)),
    ("gpt-4o-mini", Price::new(0.15, 0.6, 0.075, 0.0)),
    ("gpt-5", Price::new(1.25, 10.0, 0.125, 0.0)),
    ("gpt-5-mini", Price::new(0.25, 2.0, 0.025, 0.0)),
    ("gpt-5-nano", Price::new(0.05, 0.4, 0.005, 0.0)),
    ("o3", Price::new(2.0, 8.0, 0.5, 0.0)),
    ("o3-mini", Price::new(1.1, 4.4, 0.55, 0.0)),
    ("o4-mini", Price::new(1.1, 4.4, 0.275, 0.0)),
];

/// The price of `model`, `None` when the table does not know it. The
/// longest prefix of the table that ends at a `-` (or at the end) wins;
/// a provider profile's model (`NAME:model-id`) is priced by its id.
///
/// ```
/// use zr_engine::price_of;
/// assert_eq!(price_of("claude-sonnet-4-5-20250929").map(|p| p.input), Some(3.0));
/// assert_eq!(price_of("gateway:claude-sonnet-4-5").map(|p| p.input), Some(3.0));
/// assert_eq!(price_of("llama3"), None);
/// assert_eq!(price_of("local:llama3:8b"), None);
/// ```
#[must_use]
pub fn price_of(model: &str) -> Option<Price> {
    listed(model).or_else(|| model.split_once(':').and_then(|(_, id)| listed(id)))
}

/// The price of `model` as written.
fn listed(model: &str) -> Option<Price> {
    TABLE
        .iter()
        .filter(|(prefix, _)| {
            model
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, price)| *price)
}

/// What `usage` of `model` costs, in US dollars; `None` for a model the
/// table does not know.
#[must_use]
pub fn cost_of(model: &str, usage: &Usage) -> Option<f64> {
    price_of(model).map(|price| price.cost(usage))
}

/// Adds the cost of `usage` of `model` to `sum`: a total stays known only
/// while every part of it is (`None` once a model is unknown).
pub(crate) fn add_cost(sum: Option<f64>, model: &str, usage: &Usage) -> Option<f64> {
    Some(sum? + cost_of(model, usage)?)
}

#[cfg(test)]
mod tests;
