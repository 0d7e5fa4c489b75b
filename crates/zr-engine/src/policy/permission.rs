//! Permissions: the host's `can_use_tool` callback, the rules of each
//! permission mode, answers remembered for the session, and the denial
//! count that stops an agent.
//!
//! One call passes, in this order: the PreToolUse hooks (`hooks.rs`), then
//! [`check`] (this module), then the tool runs, then the PostToolUse hooks.
//! A hook's `allow` or `ask` is one input of [`check`], below the deny
//! rules, the effects boundary and plan mode.
//! A call refused by a hook or by [`check`] never runs; the model gets an
//! error result with the reason, the host a
//! [`EventKind::PermissionDenied`] event, and the agent's denial count
//! grows ([`Denials`]).

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use zr_caps::{PermissionMode, PermissionRules, RuleBase, Verdict};
use zr_tools::BuiltinTools;
use zr_types::{
    Access, AgentId, BoxFuture, BuiltinName, Confinement, ToolCall, ToolName, ToolOrigin,
    ToolOutput,
};

use crate::error::reason_of;
use crate::event::{EventKind, EventSink};
use crate::meta::AgentMeta;
use crate::policy::boundary::{Boundary, Crossing, Places};
use crate::policy::hooks::{AgentHooks, ToolPermission};
use crate::sync::lock;
use crate::tools::{Callable, Runner};

/// A tool call that needs the host's permission.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// The agent that wants to run the tool; its id is its path
    /// (`root.0002-worker`).
    pub agent: AgentId,
    /// `root`, `fork` or the subagent type's name.
    pub agent_type: String,
    /// The tool.
    pub tool: ToolName,
    /// The input the tool would run with (after any PreToolUse rewrite).
    pub input: Value,
    /// The agent's effective permission mode (never wider than its
    /// parent's).
    pub mode: PermissionMode,
    /// Whether the agent runs in the background, where nobody can be asked.
    pub background: bool,
    /// `false` for the first question about a call; `true` when a
    /// background agent's request comes up again because the host answered
    /// [`Decision::Ask`] and [`PermissionConfig::bubble_background`] is on.
    /// Nobody else can be asked then: [`Decision::Allow`] approves once,
    /// [`Decision::AllowForSession`] approves for the session,
    /// [`Decision::Deny`] denies, and [`Decision::Ask`] denies too.
    pub bubbled: bool,
    /// Why the engine asks about this call whatever the mode and the
    /// host's lists say: it crosses the effects boundary (a path outside
    /// the agent's roots, a protected file). `None` for the ordinary
    /// question about a tool the mode leaves open. A host that cannot ask
    /// a person should answer [`Decision::Deny`] to such a question: no
    /// rule of a project allows a crossing on its own.
    pub crossing: Option<String>,
}

/// The host's answer to a [`PermissionRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Run this call.
    Allow,
    /// Run this call, and every later call of the same tool by the same
    /// agent in this session without asking again.
    AllowForSession,
    /// Refuse; the reason is what the model is told (a blank one: "the
    /// host gave no reason").
    Deny(String),
    /// Ask the user: in the foreground through the ask-user service; in the
    /// background the call is denied, or bubbled up to the host when
    /// [`PermissionConfig::bubble_background`] is on.
    Ask,
}

/// The host's permission callback.
///
/// Called for each call that the agent's mode does not settle on its own
/// (see [`PermissionConfig`]), from async code. [`PermissionHandler::can_use_tool`]
/// is the host's policy: it must answer within
/// [`PermissionConfig::timeout`] (60 s by default), else the call is
/// denied with a reason saying so. A handler that wants a person to decide
/// answers [`Decision::Ask`]: the person is then asked through
/// [`PermissionHandler::prompt`] (or the ask-user service), which has no
/// timeout, since a person takes the time they need (cancelling the query
/// stops the wait). A panic in either is caught and denies the call with a
/// message saying so; it never stops the engine.
///
/// ```
/// use std::sync::Arc;
/// use zr_engine::{AgentConfig, Decision, PermissionConfig, PermissionHandler, PermissionRequest};
/// use zr_types::BoxFuture;
///
/// /// Subagents may not run Bash; the user decides about the root's calls.
/// #[derive(Debug)]
/// struct Policy;
///
/// impl PermissionHandler for Policy {
///     fn can_use_tool<'a>(&'a self, request: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
///         let decision = if request.agent.as_str() == "root" {
///             Decision::Ask
///         } else if request.tool.as_str() == "Bash" {
///             Decision::Deny("subagents do not run shell commands".to_owned())
///         } else {
///             Decision::Allow
///         };
///         Box::pin(async move { decision })
///     }
/// }
///
/// let mut config = AgentConfig::new("You are helpful.");
/// config.permissions = PermissionConfig::with_handler(Arc::new(Policy));
/// ```
pub trait PermissionHandler: Send + Sync + fmt::Debug {
    /// May `request.agent` run `request.tool` with `request.input`?
    fn can_use_tool<'a>(&'a self, request: &'a PermissionRequest) -> BoxFuture<'a, Decision>;

    /// Asks the host's user about `request`, which
    /// [`PermissionHandler::can_use_tool`] answered with [`Decision::Ask`]
    /// for a foreground agent (background agents are denied or bubbled
    /// before this). Not bounded by [`PermissionConfig::timeout`]. `None`,
    /// the default: the engine asks through the ask-user service (three
    /// options: allow, allow for this session, deny). A prompt that
    /// answers `Ask` denies the call.
    fn prompt<'a>(&'a self, request: &'a PermissionRequest) -> Option<BoxFuture<'a, Decision>> {
        let _ = request;
        None
    }
}

/// How tool calls are permitted ([`AgentConfig::permissions`](crate::AgentConfig::permissions)).
///
/// Per mode (an agent's mode is [`AgentConfig::permission_mode`](crate::AgentConfig::permission_mode)
/// for the root, the stricter of its parent's and its declared one for a
/// subagent):
///
/// - `bypassPermissions`: everything runs; the handler is not asked.
/// - `plan`: only read-only tools run; any other call is refused with a
///   message saying the agent is in plan mode (a denial like any other).
/// - `acceptEdits`: the builtin `Write` and `Edit` run without asking;
///   everything else as in `default`.
/// - `default` and `auto` (no classifier yet: `auto` is `default`):
///   read-only tools run; the handler decides the others. Without a
///   handler they run (the host has no policy, so nothing needs asking).
/// - `dontAsk`: as `default`, but what the handler would have asked
///   about is denied.
///
/// The engine's own tools (`Task`, `MultiTask`, `FindTool`) are never
/// asked about, in any mode: they act only through subagents, whose every
/// call is checked with a mode no wider than the caller's, or only load
/// definitions.
///
/// [`Decision::Ask`] goes, in the foreground, to the handler's
/// [`PermissionHandler::prompt`] if it has one, else to the ask-user
/// service of zr-tools' `BuiltinTools` (no service: denied with a message
/// saying so);
/// in a background agent it is denied with a message saying that
/// permission prompts are unavailable there, unless `bubble_background` is
/// on. A [`Decision::AllowForSession`] (or the user's "Allow for this
/// session") is remembered per agent and tool for the rest of the session.
///
/// Denials (by the handler, the user, a mode, a background agent, a
/// PreToolUse hook) are counted per agent run (the root's per query):
/// `max_consecutive_denials`
/// in a row (a call that was allowed to run resets the streak) or
/// `max_total_denials` in all stop the agent. Its remaining calls of the
/// turn are answered "not run"; a subagent ends with status `denied`, the
/// root's query with a [`QueryResult`](crate::QueryResult) of status
/// `denied`. A limit of 0 is no limit.
#[derive(Debug, Clone)]
pub struct PermissionConfig {
    /// The host's callback; `None` allows whatever the mode leaves open.
    pub handler: Option<Arc<dyn PermissionHandler>>,
    /// Whether a background agent's [`Decision::Ask`] goes up to the
    /// handler again (`bubbled: true`) instead of being denied.
    pub bubble_background: bool,
    /// Denials in a row that stop an agent (default 3).
    pub max_consecutive_denials: u32,
    /// Denials in all that stop an agent (default 20).
    pub max_total_denials: u32,
    /// How long [`PermissionHandler::can_use_tool`] may take before the
    /// call is denied with a reason saying so (default
    /// [`PermissionConfig::DEFAULT_TIMEOUT`]).
    pub timeout: Duration,
    /// What calls may touch: the agents' places, protected files, the
    /// sandbox of their processes (`boundary.rs`).
    pub boundary: Boundary,
    /// The project's permission rules in Claude Code's grammar
    /// (`Bash(npm run test:*)`, `Read(./.env)`, `Edit(src/**)`,
    /// `WebFetch(domain:docs.rs)`, `mcp__github`): `deny` refuses, `ask`
    /// asks whatever the mode says, `allow` runs without asking; in that
    /// order. A compound command is allowed only if every part is.
    /// Relative path rules are read from the project folder.
    pub rules: PermissionRules,
    /// Where [`PermissionConfig::rules`] come from, as refusals name it
    /// (`zr.toml [permissions]`); default "the permission rules".
    pub rules_origin: String,
    /// Where single rules come from when not from `rules_origin`, by the
    /// rule's text (`.claude/settings.json permissions`): a refusal names
    /// the file that holds the rule it quotes. Default empty.
    pub rule_origins: std::collections::BTreeMap<String, String>,
}

impl Default for PermissionConfig {
    fn default() -> Self {
        Self {
            handler: None,
            bubble_background: false,
            max_consecutive_denials: 3,
            max_total_denials: 20,
            timeout: Self::DEFAULT_TIMEOUT,
            boundary: Boundary::default(),
            rules: PermissionRules::default(),
            rules_origin: "the permission rules".to_owned(),
            rule_origins: std::collections::BTreeMap::new(),
        }
    }
}

impl PermissionConfig {
    /// How long the handler may take by default: 60 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// Where `rule` is written, as refusals name it.
    fn origin_of(&self, rule: &str) -> &str {
        self.rule_origins
            .get(rule)
            .map_or(self.rules_origin.as_str(), String::as_str)
    }

    /// The default limits with `handler` asked.
    #[must_use]
    pub fn with_handler(handler: Arc<dyn PermissionHandler>) -> Self {
        Self {
            handler: Some(handler),
            ..Self::default()
        }
    }
}

/// The effective mode of a subagent (C4): the stricter of its parent's and
/// its declared one; a fork declares nothing and keeps its parent's.
pub(crate) fn effective_mode(
    parent: PermissionMode,
    declared: Option<PermissionMode>,
) -> PermissionMode {
    parent.clamp(declared)
}

/// What the permission check reads of its session: the host's
/// configuration, the approvals so far, and the ask-user service.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate<'a> {
    pub(crate) config: &'a PermissionConfig,
    pub(crate) grants: &'a Grants,
    pub(crate) tools: &'a BuiltinTools,
    /// The project folder: the root of every agent that is not isolated.
    pub(crate) project: &'a Path,
    /// Where oversized results are written in full, for the model to read.
    pub(crate) spill: &'a Path,
}

/// What the host approved for the rest of the session: (agent, tool,
/// host), the host for a fetch (approved per domain), else none.
#[derive(Debug, Default)]
pub(crate) struct Grants(Mutex<BTreeSet<(AgentId, ToolName, Option<String>)>>);

impl Grants {
    fn contains(&self, agent: &AgentId, tool: &ToolName, host: Option<&str>) -> bool {
        lock(&self.0).contains(&(agent.clone(), tool.clone(), host.map(str::to_owned)))
    }

    fn insert(&self, agent: &AgentId, tool: &ToolName, host: Option<&str>) {
        lock(&self.0).insert((agent.clone(), tool.clone(), host.map(str::to_owned)));
    }
}

#[derive(Debug, Default)]
struct Counts {
    consecutive: u32,
    total: u32,
    /// Why the agent was stopped, once it was.
    stopped: Option<String>,
}

/// One agent run's denial count.
#[derive(Debug, Default)]
pub(crate) struct Denials(Mutex<Counts>);

impl Denials {
    /// Why the agent was stopped, if it was.
    pub(crate) fn stopped(&self) -> Option<String> {
        lock(&self.0).stopped.clone()
    }

    /// A call was allowed to run: the streak ends.
    pub(crate) fn allowed(&self) {
        lock(&self.0).consecutive = 0;
    }

    /// A call was denied for `reason`; stops the agent at a limit.
    fn denied(&self, config: &PermissionConfig, reason: &str) {
        let mut counts = lock(&self.0);
        counts.consecutive += 1;
        counts.total += 1;
        if counts.stopped.is_some() {
            return;
        }
        let hit = |limit: u32, n: u32| limit > 0 && n >= limit;
        let why = if hit(config.max_consecutive_denials, counts.consecutive) {
            format!("{} consecutive permission denials", counts.consecutive)
        } else if hit(config.max_total_denials, counts.total) {
            format!("{} permission denials in total", counts.total)
        } else {
            return;
        };
        counts.stopped = Some(format!("stopped after {why}; the last: {reason}"));
    }
}

/// Refuses `call` of `agent` for `reason` (a hook, the mode, the host or
/// the user said no): counts the denial, tells the host, and returns the
/// model's error result.
pub(crate) fn refuse(
    gate: &Gate<'_>,
    sink: &EventSink,
    agent: &AgentMeta,
    denials: &Denials,
    call: &ToolCall,
    reason: String,
) -> ToolOutput {
    tracing::info!(tool = %call.name, %reason, "tool call denied");
    denials.denied(gate.config, &reason);
    sink.emit(
        agent,
        EventKind::PermissionDenied {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            reason: reason.clone(),
        },
    );
    ToolOutput::error(reason)
}

fn denied(tool: &ToolName, why: impl fmt::Display) -> String {
    format!("permission to run '{tool}' was denied: {why}")
}

/// May `agent` run `call` of `tool`? `Ok` holds the confinement of the
/// processes the call starts; `Err` the reason for the model.
/// `hook`: how a PreToolUse hook wants the call permitted: `Allow` runs it
/// without asking anybody, `Ask` asks as an `ask` rule would; neither
/// goes above the rules, the mode or the effects boundary (a hook cannot
/// grant what the project denies or must ask about). `hooks`: the
/// agent's, told (Notification) before a person is asked.
///
/// The stages, in order:
///
/// 1. the engine's own tools pass (they act only through subagents, whose
///    calls pass here);
/// 2. the agent's own rules (an agent file's `Bash(git diff:*)`) and the
///    session's `deny` rules refuse, in every mode; then
///    `bypassPermissions` passes;
/// 3. a read-only agent's command that no sandbox can confine is refused;
/// 4. the effects boundary (`boundary.rs`: places, protected files),
///    `ask` rules and a hook's `ask` ask, whatever the mode and the allow
///    rules say (a read outside the roots is settled by an allow rule
///    naming its path);
/// 5. plan mode refuses what is not read-only;
/// 6. `allow` rules, a hook's allowance, read-only tools (a fetch only
///    from an allowed host), `acceptEdits` edits and the session's grants
///    pass;
/// 7. the host's handler decides the rest.
pub(crate) async fn check(
    gate: &Gate<'_>,
    agent: &AgentMeta,
    tool: &Callable,
    call: &ToolCall,
    hook: Option<&ToolPermission>,
    hooks: &AgentHooks<'_>,
) -> Result<Option<Confinement>, String> {
    let Runner::Handler(handler) = &tool.runner else {
        return Ok(None);
    };
    let definition = &tool.definition;
    let name = &definition.name;
    let mode = agent.mode;
    let config = gate.config;
    let boundary = &config.boundary;
    let accesses = handler.access(&call.input, &agent.cwd);
    let subjects = Subjects::of(&accesses);
    let base = RuleBase {
        base: gate.project,
        home: boundary.home.as_deref(),
    };
    // 2. The agent's own rules, then the deny rules: in every mode.
    if let Some(narrowing) = &agent.narrowing {
        for subject in subjects.list() {
            if let Some(Err(refusal)) = narrowing.narrows(definition, &subject, &base) {
                return Err(denied(name, refusal));
            }
        }
    }
    let verdict = subjects.verdict(&config.rules, definition, &base);
    if let Some(Spoken {
        verdict: Verdict::Deny,
        rule,
        ..
    }) = &verdict
    {
        return Err(denied(
            name,
            format_args!(
                "it matches \"{rule}\" in {} deny; remove it from there to let it run",
                config.origin_of(rule)
            ),
        ));
    }
    if mode == PermissionMode::BypassPermissions {
        return Ok(None);
    }
    let places = Places::of(boundary, agent, gate.project).reading(gate.spill);
    // 3. The sandbox.
    // Whether `agent` writes files with its own tools: its pool holds
    // `Write` or `Edit`, or the tool itself is not read-only and not a
    // builtin (a custom tool's processes keep what its author gave them).
    // An agent that only reads gets a read-only sandbox for its commands,
    // Bash included (`tools: Read, Grep, Bash` is a reviewer, not a
    // writer).
    let writes =
        agent.writes || (definition.origin != ToolOrigin::Builtin && !definition.is_read_only());
    let read_only_fs = agent.reads_only || mode == PermissionMode::Plan || !writes;
    let confinement = crate::policy::boundary::confinement(boundary, &places, read_only_fs);
    if let Some(why) = unconfinable(&accesses, confinement.as_ref(), read_only_fs) {
        return Err(denied(name, why));
    }
    // 4. Questions that no mode or allow rule settles; a read outside the
    // roots is settled by an allow rule that names its path
    // (`Read(~/.cargo/**)`), as readable roots are widened by rules.
    let crossing = accesses
        .iter()
        .find_map(|access| {
            places.crossing(access).filter(|c| match c {
                Crossing::Outside { path, write: false } => {
                    !reads_allowed(&config.rules, definition, path, &base)
                }
                _ => true,
            })
        })
        .map(|c| c.describe(&places))
        .or_else(|| match &verdict {
            Some(Spoken {
                verdict: Verdict::Ask,
                rule,
                ..
            }) => Some(format!(
                "it matches \"{rule}\" in {} ask",
                config.origin_of(rule)
            )),
            _ => None,
        })
        .or_else(|| match hook {
            Some(ToolPermission::Ask(reason)) => Some(format!(
                "a PreToolUse hook asks about it: {}",
                reason_of(reason, "hook")
            )),
            _ => None,
        });
    // 5. Plan mode refuses before anybody is asked.
    if mode == PermissionMode::Plan && !definition.is_read_only() {
        return Err(format!(
            "tool '{name}' was not run: agent {} is in plan mode, where only read-only tools run; describe the change in your plan instead",
            agent.id
        ));
    }
    if let Some(crossing) = crossing {
        return ask(gate, agent, name, call, Some(crossing), None, hooks)
            .await
            .map(|()| confinement);
    }
    // 6. What passes without a question.
    let host = subjects.host();
    let is_edit = definition.origin == ToolOrigin::Builtin
        && matches!(
            name.as_str().parse(),
            Ok(BuiltinName::Write | BuiltinName::Edit)
        );
    let passes = matches!(
        verdict,
        Some(Spoken {
            verdict: Verdict::Allow,
            ..
        })
    ) || hook == Some(&ToolPermission::Allow)
        || (definition.is_read_only() && host.is_none())
        || (mode == PermissionMode::AcceptEdits && is_edit);
    if passes || gate.grants.contains(&agent.id, name, host) {
        return Ok(confinement);
    }
    // 7. The host.
    ask(gate, agent, name, call, None, host, hooks)
        .await
        .map(|()| confinement)
}

/// Why a call cannot run confined as it must, if it cannot: a command of
/// a read-only agent on a kernel that cannot make its file system
/// read-only. A writing agent's command runs unconfined there (the file
/// tools' boundary still holds), with a warning at start.
fn unconfinable(
    accesses: &[Access],
    confinement: Option<&Confinement>,
    read_only_fs: bool,
) -> Option<String> {
    let runs = accesses.iter().any(|a| matches!(a, Access::Command(_)));
    if !runs || !read_only_fs {
        return None;
    }
    match confinement {
        None => None,
        Some(_) => zr_tools::sandbox_missing().map(|missing| {
            format!("this agent only reads, and its commands need a read-only sandbox, which this system cannot give ({missing})")
        }),
    }
}

mod asking;
mod subjects;
#[cfg(test)]
mod tests;

use asking::ask;
use subjects::{Spoken, Subjects, reads_allowed};
