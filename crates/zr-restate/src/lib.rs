//! Durable zr sessions on Restate.
//!
//! A worker serves the virtual object [`SESSION_OBJECT`], keyed by session
//! id (Restate runs one turn of a session at a time). A turn is the
//! engine's ordinary loop with its effects seam (`zr_engine::Effects`)
//! pointed at the invocation's journal:
//!
//! - each model request of the root is one journaled step (the whole
//!   answer); a failure worth retrying (429, 5xx, a broken connection,
//!   after the provider's own retries) is not journaled and the step is
//!   tried again, up to three times; any other failure (4xx, a malformed
//!   answer) is journaled and ends the turn as it would locally;
//! - each tool call of the root that reaches a handler is one step, in
//!   call order; its `ToolContext::idempotency_key` is `{session}/{call
//!   id}`, the same on every attempt;
//! - each subagent is one step keyed `{session}/{agent id}`, holding its
//!   `TaskResult`: a finished subagent is never run again.
//!
//! A worker that dies mid-turn costs the unfinished step: Restate retries
//! the invocation (on any worker of the deployment), the turn replays
//! from its journal without sending a request or running a tool again,
//! and continues from the first unfinished step. A tool call cut short
//! after its effect runs again with the same idempotency key; a subagent
//! cut short runs again from its start (its own steps are not journaled
//! one by one in this version). Transcripts are written again on every
//! attempt from the start (the session's folder is cleared first), so a
//! replay leaves no record twice.
//!
//! The resolver still decides every pool: a worker builds the session's
//! runtime and configuration from its project, exactly as `zr run` does.

mod admin;
mod effects;
mod error;
mod http;
mod journal;
mod object;
mod record;
mod serve;

pub use admin::{DurableTurn, JournalEntry, attach, journal, last_turn, send, sessions};
pub use error::RestateError;
pub use object::{SESSION_OBJECT, SessionHost, SessionObject, TurnAnswer, TurnRequest};
pub use serve::{listen, register, serve, submit};
