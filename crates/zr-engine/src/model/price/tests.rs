//! The price table: look-ups by prefix, costs, totals that stay known.

use zr_types::Usage;

use super::*;

#[test]
fn prices_match_the_longest_prefix_at_a_dash() {
    assert_eq!(price_of("claude-sonnet-4-5-20250929").unwrap().input, 3.0);
    assert_eq!(price_of("claude-opus-4-5").unwrap().input, 5.0);
    assert_eq!(price_of("claude-opus-4-1-20250805").unwrap().input, 15.0);
    assert_eq!(price_of("gpt-4.1-mini").unwrap().input, 0.4);
    assert_eq!(price_of("gpt-4o-mini-2024-07-18").unwrap().output, 0.6);
    assert_eq!(price_of("scripted").unwrap().output, 0.0);
    assert_eq!(price_of("gpt-4.10"), None);
    assert_eq!(price_of("llama3"), None);
}

#[test]
fn cost_adds_every_kind_of_token() {
    let usage = Usage {
        input_tokens: 2_000_000,
        output_tokens: 1_000_000,
        cache_read_input_tokens: 1_000_000,
        cache_creation_input_tokens: 1_000_000,
    };
    let cost = price_of("claude-sonnet-4-5").unwrap().cost(&usage);
    assert!((cost - (6.0 + 15.0 + 0.3 + 3.75)).abs() < 1e-9, "{cost}");
}

#[test]
fn a_total_is_unknown_once_one_model_is() {
    let usage = Usage {
        input_tokens: 1_000_000,
        ..Usage::default()
    };
    let known = add_cost(Some(0.0), "claude-haiku-4-5", &usage);
    assert_eq!(known, Some(1.0));
    assert_eq!(add_cost(known, "llama3", &usage), None);
    assert_eq!(add_cost(None, "claude-haiku-4-5", &usage), None);
    assert_eq!(cost_of("llama3", &usage), None);
}
