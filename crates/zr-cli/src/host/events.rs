//! The `result` message of a query (its events are the engine's own,
//! written by [`zr_engine::Event::to_wire`]).

use std::time::Duration;

use zr_engine::QueryResult;
use zr_protocol::QueryEnd;
use zr_types::SessionId;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The `result` of a query that ended.
pub(crate) fn ended(session: &SessionId, result: &QueryResult) -> QueryEnd {
    QueryEnd {
        session: session.to_string(),
        status: result.status.as_str().to_owned(),
        output: result.output.clone(),
        turns: result.turns,
        usage: result.usage.into(),
        total_usage: result.total_usage.into(),
        duration_ms: millis(result.duration),
        error: None,
        budget_ended: result.budget_ended.map(zr_engine::BudgetEnded::to_wire),
    }
}

/// The `result` of a query that failed or was interrupted.
pub(crate) fn failed(session: &SessionId, status: &str, error: String) -> QueryEnd {
    QueryEnd {
        session: session.to_string(),
        status: status.to_owned(),
        output: String::new(),
        turns: 0,
        usage: zr_protocol::Usage::default(),
        total_usage: zr_protocol::Usage::default(),
        duration_ms: 0,
        error: Some(error),
        budget_ended: None,
    }
}
