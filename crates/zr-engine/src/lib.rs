//! The zr query engine: agent loop, Task and MultiTask delegation,
//! FindTool, budgets and events, background subagents, permissions, hooks
//! and scheduled prompts, over the model providers of `zr-providers`.
//!
//! # Building and running an agent
//!
//! A [`RuntimeEnvironment`] holds what every agent of a session shares: a
//! [`ModelProvider`], the `RuntimeSettings` (model, working directory,
//! environment of child processes), zr-tools' `BuiltinTools`, and the
//! handlers of custom and MCP tools ([`RuntimeEnvironment::with_tool`],
//! keyed by the `Arc` of their definition), the optional `Skill` tool and an
//! [`AgentObserver`]. An [`Agent`] is a session's root, built complete from
//! a runtime and an [`AgentConfig`] (system prompt, turn limit, the
//! session's tool options and the root's capabilities, the subagent types,
//! [`SubagentConfig`] limits, the resolver's policy and the skills).
//!
//! [`Agent::query`] sends a prompt and returns a [`Query`]: a `Stream` of
//! [`Event`]s (text and thinking deltas, model retries, turns and usage,
//! tool calls and their results, subagents started, running and finished),
//! each tagged with the agent it happened in (`root`,
//! `root.0001-explore`, ...). [`Query::finish`] waits for the
//! [`QueryResult`]; [`Agent::prompt`] does both at once. Each query
//! continues the root's conversation; one runs at a time.
//! [`Agent::preview_pools`] resolves, without running anything, the pool
//! each agent would get (root, every subagent type, a fork), and
//! [`Agent::preview_request_costs`] what its system prompt and tools add
//! to each of its request bodies.
//!
//! ```
//! # use std::sync::Arc;
//! use futures_util::StreamExt as _;
//! # use zr_caps::RuntimeSettings;
//! use zr_engine::{Agent, AgentConfig, EventKind, QueryOverrides, RuntimeEnvironment, ScriptedProvider};
//! # use zr_tools::BuiltinTools;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let script = r#"{"agents": {"root": [{"turns": [{"text": "Hello there."}]}]}}"#;
//! let provider = Arc::new(ScriptedProvider::from_json(script)?);
//! let settings = RuntimeSettings { model: "scripted".into(), cwd: dir.path().into(), env: Default::default() };
//! let runtime = RuntimeEnvironment::new(provider, settings, BuiltinTools::new(dir.path().join("cron.json")));
//! let agent = Agent::new(Arc::new(runtime), AgentConfig::new("You are helpful."));
//!
//! let mut query = agent.query("Say hello", QueryOverrides::default());
//! let mut text = String::new();
//! while let Some(event) = query.next().await {
//!     if let EventKind::TextDelta { text: delta } = &event.kind {
//!         text.push_str(delta);
//!     }
//! }
//! let result = query.finish().await?;
//! assert_eq!((text.as_str(), result.output.as_str()), ("Hello there.", "Hello there."));
//! # Ok(()) }
//! ```
//!
//! **Skills, model aliases, hot reload.** Each agent's request carries its
//! own skills (names and descriptions, never bodies) in the `Skill` tool's
//! description, composed in one place (`skill_listing.rs`) from the skills
//! the resolver gave the agent and bounded by
//! [`AgentConfig::skill_listing_chars`] ([`DEFAULT_SKILL_LISTING_CHARS`],
//! Claude Code's budget); the subagent types likewise, once, in the `Task`
//! tool's description (`type_listing.rs`, [`AgentConfig::type_listing_chars`],
//! [`DEFAULT_TYPE_LISTING_CHARS`]); the engine still adds, removes and renames no
//! tool, and a fork advertises its parent's listing byte for byte. A
//! subagent type's `model` alias (`sonnet`, `opus`, `haiku`) is resolved
//! through [`AgentConfig::model_aliases`] before its first request
//! (`agent_model.rs`). With [`AgentConfig::types_source`] set, the types
//! and skills are asked again before each model request of the root
//! ([`AgentTypesSource`], `catalog.rs`), so that a type added while the
//! session runs can be started by the root's next `Task`.
//!
//! **Project instructions.** [`AgentConfig::instructions`] (the `zr`
//! command's `CLAUDE.md`, `AGENTS.md` and `CLAUDE.local.md`) end the
//! system prompt of the root and of every typed subagent, the same text
//! for all (`pools.rs`, `system_prompt`); a fork keeps its parent's system
//! prompt, so its request still starts with its parent's bytes. A types
//! source may replace them ([`AgentTypes::instructions`]): the root's next
//! request and the subagents started after it use the new text.
//!
//! **Cost and telemetry.** [`QueryResult::cost_usd`] and each
//! [`TaskResult::cost_usd`] price the tokens by [`price_of`]'s table (the
//! one `zr sessions` uses; `None` for an unknown model). The engine gives
//! its spans, in the OpenTelemetry GenAI conventions (`invoke_agent`,
//! `chat`, `execute_tool`), to the runtime's [`Tracer`]
//! ([`RuntimeEnvironment::with_tracer`]); zr-telemetry's exports them over
//! OTLP.
//!
//! **Cancelling.** [`Query::cancel`] (or dropping the [`Query`]) stops
//! every agent under the query and kills the processes their tool calls
//! started; `cancel` waits until they are gone. The root's conversation then
//! stays as it was before the query. The root's background commands end
//! when the [`Agent`] is dropped.
//!
//! # Providers
//!
//! The model providers live in `zr-providers`, which depends on zr-types
//! only; the engine re-exports them so that one dependency is enough:
//! [`ScriptedProvider`] (deterministic replies from a [`Script`]),
//! [`AnthropicProvider`], [`OpenAiProvider`] and [`ResponsesProvider`]
//! (over SSE, with retries as [`RetryPolicy`] says). Implement
//! [`ModelProvider`] for any other model. A definition's `effort` (the
//! root's: [`AgentConfig::effort`]) is sent where the API takes it.
//! A request that fails for good ends the agent with
//! [`EngineError::Provider`], whose source is the [`ProviderError`].
//!
//! # Delegation
//!
//! The engine's own tools are `Task` (one subagent), `MultiTask` (1 to 10
//! in parallel, the rest queued inside one time budget per call) and
//! `FindTool` (loads deferred tools). A task names a subagent type of
//! [`AgentConfig::sub_agents`] or, without one, forks the delegating
//! agent; a typed task may name its own `model` (an alias or
//! `NAME:model-id`), which replaces its type's ([`ModelCheck`] lets a host
//! refuse one first). A subagent delegates further only while its depth is
//! below `max_depth` (1 by default: only the root delegates). Each call
//! returns one [`TaskResult`] per task, in input order, with a
//! [`TaskStatus`]; a type's optional token and tool-call budgets end it
//! with [`TaskStatus::BudgetExhausted`].
//!
//! **Limits nest.** At most `max_concurrent` subagents of the whole tree
//! work at once: each holds one of the session's slots, and lends it to
//! its children while it waits on them (then queues for one again), so no
//! parent holds a slot its children need, at any depth
//! (`session/slots.rs`). A call's time budget ends no later than its
//! parent's; a type's token budget counts everything its subtree spends
//! (its children share what it has left); [`TreeBudget`] bounds the whole
//! query's tokens and dollars.
//!
//! **Structured answers.** A type's `output_schema`, or a task's own
//! `output_schema` in the call, is a JSON Schema the subagent's answer
//! must match: the provider is asked for it natively where it can
//! ([`ModelRequest::output`], [`StructuredOutput`]), the answer is
//! checked, an answer that does not match gets one repair turn with the
//! validation errors, then the task is `failed` with them. A completed
//! task's [`TaskResult::value`] is the parsed answer, and that is what the
//! delegating model gets (a resumed call's too: the call's schema and the
//! value are in the subagent's transcript). The root's own schema is
//! [`AgentConfig::output_schema`], its answer [`QueryResult::value`].
//!
//! # Background subagents
//!
//! `Task` with `run_in_background: true` (or a task of a type whose
//! definition says `background: true`) returns at once, with
//! [`TaskStatus::Background`] and the agent's id. The agent runs on, bound
//! to the session rather than the query: its parent gets its
//! [`TaskResult`] in a message before its next model request (in this
//! query or the next), and every [`SubagentConfig::progress_interval`] a
//! tools-disabled side request gives an [`EventKind::SubagentProgress`].
//! The host follows them with [`Agent::background_events`], inspects them
//! ([`Agent::background_agents`], [`BackgroundAgent`]), stops one
//! ([`Agent::stop_background`]) or waits for all
//! ([`Agent::wait_background`]); dropping the [`Agent`] stops them all.
//!
//! # Permissions and hooks
//!
//! Each agent has a permission mode ([`AgentConfig::permission_mode`] for
//! the root; a subagent's is never wider than its parent's). A tool call
//! passes the [`Hook::pre_tool_use`] hooks (which may block it, allow it,
//! ask about it or rewrite its input), then its mode and the host's
//! [`PermissionHandler`] ([`PermissionConfig`]; [`Decision::Ask`] asks the
//! user through [`PermissionHandler::prompt`] or the ask-user service,
//! which a background agent cannot), then runs, then the
//! [`Hook::post_tool_use`] hooks (whose block reasons and context go to
//! the model with the result). A refused call is an error result for the
//! model and an [`EventKind::PermissionDenied`] event; 3 denials in a row
//! or 20 in all stop the agent with [`TaskStatus::Denied`].
//!
//! Hooks follow Claude Code's events and answers ([`Hook`], one answer
//! type [`HookReply`]): [`Hook::session_start`] and
//! [`Hook::user_prompt_submit`] may add to the root's prompt or refuse it
//! ([`EngineError::PromptBlocked`]); [`Hook::stop`] runs when an agent is
//! about to stop (Stop for the root, SubagentStop for a subagent) and may
//! keep it working, at most [`Hooks::max_stop_blocks`] times in a row (8);
//! [`Hook::subagent_start`] and [`Hook::subagent_stop`] frame each
//! subagent's run; [`Hook::pre_compact`], [`Hook::notification`] (before a
//! person is asked) and [`Hook::session_end`] ([`Agent::end`]) tell. A
//! hook's `halt` (`"continue": false`) stops its agent with
//! [`TaskStatus::Stopped`]. A hook's `allow` never goes above the deny
//! rules, the `ask` rules, plan mode or the effects boundary. An agent
//! type's own hooks ([`TypeHooks`]) run for its agents only. Nothing waits
//! forever: each hook call and each handler decision has a timeout (60 s
//! by default; [`Hooks::with_timeout`], [`PermissionConfig::timeout`]),
//! and a PreToolUse hook or a handler that misses it denies the call with
//! the reason (any other hook is passed over); a person asked has no
//! timeout.
//!
//! **The effects boundary** (DESIGN.md section 11). Before the handler is
//! asked, every call is held against what it would touch, as its tool
//! declares it (`ToolHandler::access`, zr-types' `Access`): the agent's
//! places ([`Boundary`]: writable roots, the project folder or the agent's
//! worktree plus [`Boundary::additional_directories`]; readable roots;
//! protected files such as `zr.toml`, `.mcp.json`, `.zr/`, `.claude/`,
//! `.git/`, `~/.zr/`, `~/.claude/`), and the project's permission rules
//! in Claude Code's grammar ([`PermissionConfig::rules`], zr-caps'
//! `PermissionRules`: deny, then ask, then allow). A crossing (a path
//! outside the roots, a write to a protected file) or an `ask` rule is a
//! question ([`PermissionRequest::crossing`]) whatever the mode and the
//! allow rules say, and a refusal where nobody can be asked; only
//! `bypassPermissions` skips the boundary. The gate also gives the call a
//! `Confinement`, the OS sandbox ([`SandboxConfig`]) its processes run in
//! through zr-tools and zr-process: nothing writable for an agent without
//! write tools (read-only types, plan mode), its writable roots otherwise,
//! the network only when allowed. [`Agent::preview_boundaries`] shows each
//! agent's boundary without running anything. The stages of the gate are
//! in `permission.rs` (`check`), the places in `boundary.rs`.
//!
//! # Scheduled prompts
//!
//! A [`CronScheduler`] fires the prompts that `CronCreate` stored as new
//! queries of the root, one at a time: [`CronScheduler::tick`] with an
//! explicit clock, or [`CronScheduler::spawn`] on the wall clock, whose
//! [`CronHandle`] yields each [`Fired`] query. Runs of a recurring prompt
//! missed while zr was down fire once, with a note in the prompt.
//!
//! # Transcripts and resume
//!
//! With [`AgentConfig::sessions_dir`] set, every agent appends JSONL
//! records to `<dir>/<session>/<agent>.jsonl`: a header (type, parent,
//! the definition it started with and its hash, its permission mode,
//! system prompt, model, folder, the task it carries out), each message of its history, each tool result as its call ends,
//! a `call_started` record before a call that is not read-only runs, and
//! a `finished` record. [`Agent::resume`] rebuilds a session's root from
//! its transcript (a torn last line ignored, the turn a kill cut short
//! kept to be finished, other unanswered tool calls and empty messages
//! dropped with a warning, the deferred tools it called loaded again).
//! [`Agent::continue_interrupted`] finishes a turn that a killed process
//! cut short without repeating finished work: recorded results are
//! reused, a started call without a result is answered as interrupted
//! (a read-only one runs again), the tasks of an open Task or MultiTask
//! call come from their subagents' transcripts (finished: the recorded
//! result; cut short: continued), and background agents cut short are
//! revived. [`Agent::resume_subagent`] runs any subagent of the session
//! again from its own transcript (in its recorded folder, or in its
//! parent's when a worktree it ran in is gone). A resumed subagent never
//! gets more than it started with: it runs with the definition its
//! header recorded, not the configuration's current one (a change is a
//! warning and takes effect for new agents). A transcript that cannot
//! be written never stops an agent ([`EventKind::TranscriptError`]).
//!
//! A host that keeps the conversation itself (a durable backend whose
//! turns run on any machine) takes [`Agent::snapshot`] after a query, a
//! plain [`RootSnapshot`] (history, the tools loaded through FindTool,
//! the last subagent's number), and builds the next query's root with
//! [`Agent::from_snapshot`]; the root's transcript is cut back to the
//! snapshot, or written anew from it where the file is not the
//! snapshot's.
//!
//! # Compaction
//!
//! Every agent's context use is tracked; above
//! [`CompactionConfig::threshold`] the older part of its history is
//! replaced by a summary that the model writes with tools disabled
//! ([`EventKind::Compacted`]; the transcript records the new history, so a
//! resumed agent continues from it). Tool results larger than
//! [`CompactionConfig::max_tool_result_bytes`] are cut to their head and
//! tail with a marker naming the file that holds them whole.
//!
//! # Worktree isolation
//!
//! A subagent type with `isolation: worktree` runs in a fresh git worktree
//! on its own branch (`zr/<session>/<agent>`). Afterwards an unchanged
//! worktree is removed with its branch; a changed one is kept and reported
//! in [`TaskResult::worktree`].
//!
//! # Effects
//!
//! Every effect of the engine (a model request, a tool call, a subagent's
//! run, reading the clock, sleeping) goes through one [`Effects`] object,
//! [`RuntimeEnvironment::with_effects`]; the default, [`LocalEffects`],
//! does each here and now. A durable backend journals them (see the
//! trait's contract: ordering, errors, cancellation, what may be retried)
//! and runs the same loop. Model requests are made only in `run/model.rs`,
//! tool handlers are called only in `exec/dispatch.rs` and subagents run only
//! through `subagent::live`, each through this seam; `tests/it/effects.rs`
//! shows every request, call, subagent and clock read passing through it,
//! and zr-cli's `tests/it/durable.rs` is the crash matrix (a run killed
//! at any transcript record, then resumed: nothing lost, nothing repeated).
//!
//! # Structure
//!
//! The crate is a stack of rooms, most of them folders: each imports only
//! from the rooms listed before it here (none from a later one, so there
//! is no circle, between folders or files), and names each item from the
//! module that defines it, never through `lib.rs`. From the bottom:
//!
//! 1. Plain data: `error`, `sync`, `outcome` (`TaskStatus`, `TaskResult`,
//!    `Progress`, `RunOutcome`), `model/` (`agent_model`: a type's model
//!    alias, and `ModelCheck`; `price`: the one price table; `budget`: the
//!    tree's token and dollar budget, and a type's token pool; `structured`: an output schema compiled and the one
//!    rule of which schema a subagent answers in), `history` (helpers of a
//!    conversation, and `history/compact`: the compaction plan, `cut.rs`
//!    cuts results), `meta` (`AgentMeta`: the narrow view the stores
//!    take), `effects` (the `Effects` seam and `LocalEffects`;
//!    `effects/remote.rs`: `SubagentSpec`, a subagent described for
//!    another worker), `event`, `telemetry` (the GenAI spans given to the
//!    runtime's `Tracer`; `telemetry/in_span.rs`: a future run inside a
//!    span), `runtime`. The model providers are zr-providers', below all.
//! 2. `tools/`: an agent's `AgentTools` (its pool joined with handlers,
//!    each tool's `Runner`: one of the engine's own, `EngineTool`, or a
//!    handler),
//!    the `Skill` and `Task` descriptions (`skill_listing`,
//!    `type_listing`), `catalog` (subagent types, skills, the
//!    Task/MultiTask definitions, rebuilt by hot reload), `find_tool`.
//! 3. Policies and stores, which take an `AgentMeta` and never the
//!    session, the loop or the subagent code: `policy/` (`boundary`: an
//!    agent's places and the confinement of its processes; `hooks`: the
//!    `Hook` trait, `hooks/reply.rs` its answers, `hooks/calls.rs` the
//!    runners; `permission`: the `Gate`, `permission/subjects.rs` what a
//!    call touches as the rules see it, `permission/asking.rs` the
//!    handler, then a person), `config` (`AgentConfig`), `transcript`
//!    (`Transcripts` owns its folder).
//! 4. `session/`: `Session` holds the stores, none of which imports it,
//!    and `QueryCtx`; `session/registry.rs` the background agents;
//!    `session/slots.rs` the tree's `max_concurrent` slots and the rule
//!    that keeps them free of deadlock;
//!    `session/pools.rs` the resolver's answers, through the catalog's
//!    `PoolMemo`.
//! 5. `turn/`: one agent's loop. `agent_run` (`AgentRun`, the `Delegate`
//!    seam, `NoDelegation`), `exec` (one turn's tool calls; one call
//!    is a pipeline whose stages, composed in `run_one`, stand in
//!    `exec/`: `screen`, `admit` (PreToolUse hooks, the permission gate),
//!    `dispatch` (the start record, the tool by its `Runner`; Task and
//!    MultiTask only through the agent's `Delegate`), `report` (the
//!    events and the `tool_result` block)), `run` (the
//!    loop; `run/model.rs` the one request function for turns, the side
//!    requests and the answer request; `run/answer.rs`, `run/compact.rs`,
//!    `run/reload.rs`, `run/stop.rs`: the Stop stage).
//! 6. `delegate/`: `agent_memory` (a type's memory folder and its prompt
//!    section), `first_turn` (preloaded skills, initial prompt, task),
//!    `worktree` (`Scope`: a subagent's worktree and cleanup), `subagent`
//!    (the one lifecycle of foreground, background and resumed
//!    subagents), `revive` (a subagent rebuilt from its transcript),
//!    `background`, then `task` (whose `Subagents` is the root's
//!    `Delegate`; its `run_call` is every delegation's one path; a
//!    subagent gets it too while its depth is below `max_depth`, else
//!    `NoDelegation`: the limit holds by construction as by the pool).
//! 7. `agent/`: the facade, `Agent`; then `agent/host_task.rs`
//!    (`Agent::run_task` for `zr mcp serve`, `Agent::run_described` for a
//!    durable child invocation), `resume`, `snapshot` (`RootSnapshot`),
//!    `preview`, `cron`; then `lib.rs`.
//!
//! # Invariants
//!
//! - The engine never filters, renames or adds tools on its own. It
//!   advertises to the model exactly what the resolver put in an agent's
//!   `advertised` pool (plus what the agent loaded through `FindTool`),
//!   runs only `executable` tools (plus loaded ones), and answers any other
//!   name with an error result naming the agent, without running anything.
//!   Permissions and hooks refuse calls when they are made; they never
//!   change what a request advertises. Side requests (progress summaries,
//!   compaction, the turn-limit summary) carry the agent's tools too, with
//!   tools disabled, and so does a structured answer's request (the
//!   provider adds Anthropic's answer tool, not the engine).
//! - A tool in a pool without a handler is an error
//!   ([`EngineError::MissingHandler`]) before the first model request.
//! - Every `tool_use` in a conversation gets its `tool_result` in the next
//!   message, on every path, and roles alternate.
//! - Every agent that started is reported once to
//!   [`AgentObserver::agent_finished`], however it ends.
//! - No lock is held across an `.await`; a slow reader of events never
//!   blocks a tool (the event channel is unbounded).

mod agent;
mod config;
mod delegate;
mod effects;
mod error;
mod event;
mod history;
mod meta;
mod model;
mod outcome;
mod policy;
mod runtime;
mod session;
mod sync;
mod telemetry;
mod tools;
mod transcript;
mod turn;

pub use agent::{Agent, BackgroundEvents, Query, QueryOverrides, QueryResult};

pub use agent::cron::{CronHandle, CronScheduler, Fired};
pub use agent::host_task::{HostTask, TaskRun};
pub use agent::preview::BoundaryPreview;
pub use agent::preview::request_cost::RequestCost;
pub use agent::snapshot::RootSnapshot;
pub use config::{AgentConfig, DEFAULT_MAX_TURNS, SubagentConfig};
pub use effects::remote::{RemoteEnd, SubagentSpec};
pub use effects::{Effects, LocalEffects};
pub use error::{EngineError, TranscriptError, WorktreeError};
pub use event::{Event, EventKind};
pub use history::compact::CompactionConfig;
pub use model::agent_model::ModelCheck;
pub use model::budget::{BudgetEnded, TreeBudget};
pub use model::price::{PRICES_TAKEN, Price, cost_of, price_of};
pub use outcome::{TaskResult, TaskStatus, WorktreeInfo};
pub use policy::boundary::{Boundary, SandboxConfig, protected_names};
pub use policy::hooks::{
    CompactTrigger, Hook, HookAgent, HookReply, Hooks, Notice, NoticeKind, SessionEndReason,
    SessionSource, ToolPermission, TypeHooks,
};
pub use policy::permission::{Decision, PermissionConfig, PermissionHandler, PermissionRequest};
pub use runtime::{AgentObserver, DEFAULT_MAX_TOKENS, RuntimeEnvironment};
pub use session::registry::BackgroundAgent;
pub use telemetry::{
    Attribute, AttributeValue, SpanKind, SpanStart, TRACEPARENT_VAR, TRACESTATE_VAR, TraceContext,
    TraceSpan, Tracer, current_trace_context, pass_trace_context,
};
pub use tools::catalog::{AgentTypes, AgentTypesSource};
pub use tools::skill_listing::DEFAULT_SKILL_LISTING_CHARS;
pub use tools::type_listing::DEFAULT_TYPE_LISTING_CHARS;
pub use zr_providers::{
    AgentScript, AnthropicConfig, AnthropicProvider, HttpSettings, MaxTokensField, ModelEvent,
    ModelProvider, ModelRequest, ModelResponse, ModelStream, OpenAiConfig, OpenAiProvider,
    ProviderError, RequestOrigin, RetryPolicy, Script, ScriptCall, ScriptTurn, ScriptedProvider,
    ToolChoice,
};
pub use zr_providers::{OutputFormat, ResponsesProvider, Router, StructuredOutput};
