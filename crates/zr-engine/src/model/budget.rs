//! The budget of a whole query tree: tokens and dollars the root and every
//! subagent under it spend together ([`TreeBudget`]), and which of them
//! ended the query ([`BudgetEnded`]).
//!
//! One counter: the query's total usage (`QueryCtx::add_usage`), which
//! every agent of the tree books each response into. An agent checks it
//! before each request and before running the calls of an answer; once
//! it is spent, the agent is asked once, with tools disabled, for a
//! summary (as at `max_turns`) and nothing new starts. Requests already in
//! flight are not cut: the tree may overshoot by at most one response per
//! running agent.

use serde::{Deserialize, Serialize};
use zr_types::Usage;

/// What a whole query (root and subagents together) may spend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TreeBudget {
    /// Tokens: input, output and cache, every request of the tree.
    pub tokens: Option<u64>,
    /// US dollars, each response's usage at its model's price
    /// ([`price_of`](crate::price_of)); a model not in the table counts
    /// as spending nothing.
    pub cost_usd: Option<f64>,
}

impl TreeBudget {
    /// Which limit `usage` and `cost` reached, if any (tokens first).
    #[must_use]
    pub fn ended_by(&self, usage: &Usage, cost: f64) -> Option<BudgetEnded> {
        if let Some(limit) = self.tokens
            && usage.total() >= limit
        {
            return Some(BudgetEnded::Tokens { limit });
        }
        if let Some(limit) = self.cost_usd
            && cost >= limit
        {
            return Some(BudgetEnded::CostUsd { limit });
        }
        None
    }

    /// Whether a limit is set.
    #[must_use]
    pub fn is_set(&self) -> bool {
        self.tokens.is_some() || self.cost_usd.is_some()
    }
}

/// The tree budget that ended a query.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "budget", rename_all = "snake_case")]
pub enum BudgetEnded {
    /// `[budget] tokens`.
    Tokens {
        /// The limit.
        limit: u64,
    },
    /// `[budget] cost_usd`.
    CostUsd {
        /// The limit, in US dollars.
        limit: f64,
    },
}

impl std::fmt::Display for BudgetEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Tokens { limit } => write!(f, "the session's token budget ({limit} tokens)"),
            Self::CostUsd { limit } => write!(f, "the session's cost budget (${limit:.2})"),
        }
    }
}
