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

/// An agent's `tokenBudget` as its subtree spends it: what the agent and
/// every subagent under it used, against its limit, with the pools of
/// its ancestors above it. Budgets nest: a child's tokens count against
/// its own pool (if its type has a budget) and every ancestor's, so the
/// children of one agent share what it has left rather than each getting
/// all of it.
#[derive(Debug)]
pub(crate) struct TokenPool {
    limit: u64,
    spent: std::sync::atomic::AtomicU64,
    above: Option<std::sync::Arc<TokenPool>>,
}

impl TokenPool {
    /// The pool of an agent with budget `limit` under `above` (its
    /// parent's nearest pool): its own when it has a limit, else its
    /// parent's.
    pub(crate) fn under(
        above: Option<&std::sync::Arc<TokenPool>>,
        limit: Option<u64>,
    ) -> Option<std::sync::Arc<TokenPool>> {
        match limit {
            Some(limit) => Some(std::sync::Arc::new(Self {
                limit,
                spent: std::sync::atomic::AtomicU64::new(0),
                above: above.cloned(),
            })),
            None => above.cloned(),
        }
    }

    /// Books `usage` into this pool and every one above.
    pub(crate) fn book(&self, usage: &Usage) {
        let mut pool = Some(self);
        while let Some(p) = pool {
            p.spent
                .fetch_add(usage.total(), std::sync::atomic::Ordering::Relaxed);
            pool = p.above.as_deref();
        }
    }

    /// Whether this pool or one above is spent.
    pub(crate) fn spent(&self) -> bool {
        let mut pool = Some(self);
        while let Some(p) = pool {
            if p.spent.load(std::sync::atomic::Ordering::Relaxed) >= p.limit {
                return true;
            }
            pool = p.above.as_deref();
        }
        false
    }
}
