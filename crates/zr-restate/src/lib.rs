//! Durable zr sessions on Restate.
//!
//! A worker serves two virtual objects: [`SESSION_OBJECT`], keyed by
//! session id (Restate runs one turn of a session at a time), and
//! [`AGENT_OBJECT`], keyed `{session}/{agent id}`, one invocation per
//! typed subagent, at any depth. A turn is the engine's ordinary loop with its
//! effects seam (`zr_engine::Effects`) pointed at the invocation's
//! journal:
//!
//! - each model request of the invocation's agent (the root's in a turn,
//!   the subagent's in its own invocation) is one journaled step (the
//!   whole answer); a failure worth retrying (429, 5xx, a broken
//!   connection, after the provider's own retries) is not journaled and
//!   the step is tried again, up to three times; any other failure (4xx,
//!   a malformed answer) is journaled and ends the agent as it would
//!   locally;
//! - each tool call of that agent that reaches a handler is one step, in
//!   call order; its `ToolContext::idempotency_key` is `{session}/{call
//!   id}`, the same on every attempt;
//! - each typed foreground subagent of the invocation's agent (a `Task`
//!   or `MultiTask` task naming a type: the root's in a turn, a
//!   subagent's own in its invocation when `[subagents] max_depth` lets it
//!   delegate) is a call of the child invocation
//!   `ZrAgent/{session}/{agent id}`, made once the task holds a slot of
//!   its call: a MultiTask keeps at most `max_concurrent` children in
//!   flight and starts the next as one answers. Restate runs each child
//!   on any worker of the deployment; the worker rebuilds the subagent
//!   from its description (`zr_engine::SubagentSpec`: type, task, call,
//!   index, id, parents, and its parent's own description when the parent
//!   is a subagent: the worker rebuilds the chain from the root down) with
//!   its own project and runs the engine's one subagent lifecycle
//!   (`Agent::run_described`): hooks, worktree, loop, transcript are the
//!   child's. A subagent working in a worktree keeps its own children in
//!   its invocation (one step each, as a fork): the worktree is on its
//!   worker;
//! - the session's tree budget (`[budget] tokens`, `cost_usd`) is
//!   journaled state: a child's description holds what the tree had left
//!   when it started (the call's input, in its parent's journal), its
//!   subtree spends within that, and its answer (`zr_engine::RemoteEnd`)
//!   holds what the subtree spent, which the parent books into its own
//!   total. A replay or another worker reads both from the journal: a
//!   moved run never resets what was spent. Siblings running at once each
//!   see what was left when they started, so the tree may overshoot by
//!   what they spend at once (locally it may by one response per agent);
//! - the `max_concurrent` slots of a call are held by the parent's
//!   invocation while its children run, wherever Restate runs them; The call's time budget stays with the
//!   parent, as one durable timer per call (Restate keeps the first
//!   attempt's wake-up time: a worker that takes the turn over keeps the
//!   deadline); a child still running when it fires is cancelled
//!   (Restate's cancellation) and its task is `timed_out`;
//! - each typed background subagent of the invocation's agent
//!   (`run_in_background`, or a type that says `background: true`) is a
//!   one-way send of the same
//!   child invocation, made when its `Task` call starts it (the call
//!   returns at once), and an attach to it: Restate runs it on any worker,
//!   it survives its parent's worker and is never run twice. Its end
//!   reaches the root as locally, in a message at its next model request
//!   (on a replay, once the replay is over). A turn that answered waits
//!   for its background agents before it ends, as `zr run` does;
//!   cancelling the child (admin API) ends it `cancelled` and the turn
//!   goes on; a turn that ends before them (cancelled, failed) cancels
//!   them;
//! - a fork is one step of its parent keyed `{session}/{agent id}`,
//!   holding its `TaskResult` (a fork needs its parent's history).
//!
//! A worker that dies mid-turn costs the unfinished steps of the
//! invocations it was running: Restate retries each (on any worker), the
//! invocation replays from its journal without sending a request,
//! running a tool or calling a child again, and continues from its first
//! unfinished step. A tool call cut short after its effect runs again with
//! the same idempotency key. A child that finished is never run again; a
//! child cut short continues from its own journal. Transcripts are
//! written again on every attempt from the start, by the worker of that
//! attempt, so a replay leaves no record twice: a subagent's file is
//! removed first; the root's is cut back to where the session's last turn
//! left it, or written anew from the session's state (below).
//!
//! A session has many turns, each an invocation of the same object; each
//! goes on from the conversation of the earlier ones. The object's K/V
//! state [`ROOT_STATE`] holds the root's `zr_engine::RootSnapshot` (its
//! conversation, the tools it loaded through FindTool, the number of its
//! last subagent): read at the start of every
//! attempt (journaled, so a replay starts from the same state), set when
//! the turn answers. Restate's state, not a worker's folder, is the
//! source of the conversation: workers need not share a folder.
//!
//! Cancelling the turn (Restate's admin API) ends it at its next journal
//! command, cancels the children it waits for, and drops the engine's run
//! (its tools and processes stop).
//!
//! The resolver still decides every pool: a worker builds the session's
//! runtime and configuration from its project, exactly as `zr run` does,
//! and a child's pool derives from its type and the root's pool, as
//! locally; nothing in a description reaches the resolver but the type.
//!
//! # Structure
//!
//! From the bottom: `error.rs`; `record.rs` (what a journal entry holds: a
//! model answer or its terminal failure, a tool output or its failure);
//! `journal.rs` (the bridge: the engine sends a `Step`, a `ctx.run`, a
//! child call or a one-way send; the work stays on the engine's side and
//! the engine continues from the journaled value); `drive.rs` (the
//! handler's side: one command per step in arrival order, child calls and
//! attaches awaited through one combinator, Restate's cancellation, the
//! children sent one way cancelled when the invocation ends before them);
//! `effects.rs` (`DurableEffects`: the invocation's agent's model requests
//! and tool calls as steps, its typed foreground subagents as child
//! calls, its typed background ones as one-way sends); `object.rs`
//! ([`SESSION_OBJECT`], its `run` handler, [`SessionHost`] for the project
//! a worker serves, [`ROOT_STATE`] between turns); `keys.rs`; `agent.rs`
//! ([`AGENT_OBJECT`]: one subagent rebuilt from its description through
//! `Agent::run_described`); `serve.rs` (the HTTP endpoint and
//! `POST /deployments`); and the client side, for zr-cli: `http.rs`
//! (requests to the server through reqwest, each within a time limit,
//! failing with an `HttpError`) and `admin.rs` (a turn sent and
//! attached to; turns and journals read through the admin API's SQL
//! introspection); `remote.rs` ([`RemoteAgents`]: a local session's
//! effects that send its `isolation: remote` subagents to the server's
//! workers). The tests (`tests/it/`) run a real `restate-server` with
//! in-process workers behind a loopback TCP proxy.

mod admin;
mod agent;
mod drive;
mod effects;
mod error;
mod http;
mod journal;
mod keys;
mod object;
mod record;
mod remote;
mod serve;

pub use admin::{
    DurableTurn, JournalEntry, attach, journal, journal_entries, last_turn, send, sessions,
};
pub use agent::AgentObject;
pub use error::{HttpError, RestateError};
pub use keys::AGENT_OBJECT;
pub use object::{ROOT_STATE, SESSION_OBJECT, SessionHost, SessionObject, TurnAnswer, TurnRequest};
pub use remote::RemoteAgents;
pub use serve::{listen, register, serve, submit};
