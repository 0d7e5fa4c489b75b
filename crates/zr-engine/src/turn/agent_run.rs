//! One agent, ready to run ([`AgentRun`], built by one constructor), and
//! the [`Delegate`] seam through which its Task and MultiTask calls reach
//! the subagent code without the tool-call path importing it.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use zr_caps::{AgentDefinition, Budget};
use zr_types::{BoxFuture, Message, ToolCall, ToolOutput};

use crate::effects::Deadline;
use crate::effects::remote::SubagentSpec;
use crate::history::Opening;
use crate::meta::AgentMeta;
use crate::model::budget::TokenPool;
use crate::outcome::Progress;
use crate::policy::hooks::{AgentHooks, Halt, HookAgent, Hooks};
use crate::policy::permission::Denials;
use crate::session::slots::SlotHold;
use crate::session::{QueryCtx, Session};
use crate::tools::AgentTools;
use crate::tools::catalog::RootReload;

/// How an agent's Task and MultiTask calls are carried out. The loop is
/// handed one: the root gets the subagent code's, every subagent
/// [`NoDelegation`], so that depth 1 (C3) holds by construction as well
/// as by the pool (R4 takes Task and MultiTask out of every derived pool).
pub(crate) trait Delegate: Send + Sync + std::fmt::Debug {
    /// Runs `call` (a MultiTask call when `multi`) for `parent`; the tool
    /// result the parent's model gets.
    fn delegate<'a>(
        &'a self,
        ctx: &'a QueryCtx,
        parent: &'a AgentRun,
        call: &'a ToolCall,
        multi: bool,
    ) -> BoxFuture<'a, ToolOutput>;
}

/// The delegate of every subagent: it refuses (a subagent cannot
/// delegate). Its pool has no Task or MultiTask, so this answers only a
/// call that the pool would have refused already.
#[derive(Debug)]
pub(crate) struct NoDelegation;

impl Delegate for NoDelegation {
    fn delegate<'a>(
        &'a self,
        _: &'a QueryCtx,
        parent: &'a AgentRun,
        call: &'a ToolCall,
        _: bool,
    ) -> BoxFuture<'a, ToolOutput> {
        let message = format!(
            "tool '{}' is not available to agent {}: subagents cannot delegate",
            call.name, parent.meta.id
        );
        Box::pin(async move { ToolOutput::error(message) })
    }
}

/// One agent, ready to run.
#[derive(Debug)]
pub(crate) struct AgentRun {
    /// What the agent is.
    pub(crate) meta: AgentMeta,
    pub(crate) tools: AgentTools,
    /// The definition of the subagent type it runs as, for its
    /// transcript's header, which records it: a resumed agent runs with it
    /// again. `None` for the root, forks, and when no transcript is
    /// written (nothing else reads it).
    pub(crate) definition: Option<Arc<AgentDefinition>>,
    /// Shared with the request in flight, if any (`ModelRequest::messages`):
    /// a turn's request costs a pointer copy, not a copy of a history that
    /// grows every turn. Appended to through [`AgentRun::history_mut`].
    pub(crate) history: Arc<Vec<Message>>,
    pub(crate) budget: Budget,
    /// The token budget it spends from (its own, or its nearest
    /// ancestor's), with those above it: budgets nest.
    pub(crate) tokens: Option<Arc<TokenPool>>,
    pub(crate) progress: Arc<Mutex<Progress>>,
    /// Its permission denials so far.
    pub(crate) denials: Denials,
    /// The hooks of its type (an agent file's `hooks`), run after the
    /// session's for this agent only; empty for the root and forks.
    pub(crate) hooks: Hooks,
    /// Why a hook stopped it (`"continue": false`), once one did.
    pub(crate) halt: Halt,
    /// For a fork: how many first messages of its history were its
    /// parent's last request (`ModelRequest::cache_prefix`).
    pub(crate) cache_prefix: Option<usize>,
    /// How its Task and MultiTask calls run.
    pub(crate) delegate: Arc<dyn Delegate>,
    /// The root's: how its tools are rebuilt when the session's agent
    /// types or skills change (hot reload). `None` for subagents.
    pub(crate) reload: Option<RootReload>,
    /// Set when the run continues a transcript (see [`Resumption`]).
    pub(crate) resumed: Option<Resumption>,
    /// Its slot of the tree's `max_concurrent` (a foreground subagent's),
    /// lent to its children while a Task or MultiTask call of its is open
    /// (`session/slots.rs`).
    pub(crate) slot: Arc<SlotHold>,
    /// When its time ends (a foreground subagent: its call's deadline):
    /// its own calls' deadlines are never later.
    pub(crate) deadline: Option<Deadline>,
    /// Its description, when it runs from one (a durable child
    /// invocation): its own typed subagents are described from it in
    /// turn (their [`SubagentSpec::parent`]).
    pub(crate) described: Option<Arc<SubagentSpec>>,
}

/// How a run rebuilt from its transcript goes on, before its first
/// request: the turn a kill left open is finished (recorded results
/// reused, a started call that is not read-only answered as interrupted,
/// the others run), then the opening is added; without a prompt, a run
/// whose history ends with its answer is finished from that answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resumption {
    /// The calls the transcript recorded as started.
    pub(crate) started: BTreeSet<String>,
    /// What is added after the open turn is finished: a new prompt (with
    /// what hooks add to it); without one the run continues.
    pub(crate) opening: Opening,
}

impl AgentRun {
    /// The agent `meta` with `tools`, starting from `history`: no budget,
    /// nothing done yet, no shared cache prefix, and no delegation (see
    /// [`AgentRun::with_delegate`]).
    pub(crate) fn new(meta: AgentMeta, tools: AgentTools, history: Vec<Message>) -> Self {
        Self {
            meta,
            tools,
            definition: None,
            history: Arc::new(history),
            budget: Budget::default(),
            tokens: None,
            progress: Arc::new(Mutex::new(Progress::default())),
            denials: Denials::default(),
            hooks: Hooks::new(),
            halt: Halt::default(),
            cache_prefix: None,
            delegate: Arc::new(NoDelegation),
            reload: None,
            resumed: None,
            slot: Arc::default(),
            deadline: None,
            described: None,
        }
    }

    /// The history, to change: copied first only if a request still holds
    /// it (one that a provider or an effects layer kept).
    pub(crate) fn history_mut(&mut self) -> &mut Vec<Message> {
        Arc::make_mut(&mut self.history)
    }

    /// Its hooks at its events: the session's, then its type's.
    pub(crate) fn hooks<'a>(&'a self, session: &'a Session) -> AgentHooks<'a> {
        let view = || {
            HookAgent::of(
                &session.id,
                &self.meta,
                session.transcripts.path(&self.meta.id),
            )
        };
        AgentHooks::new(
            &session.config.hooks,
            Some(&self.hooks),
            view,
            Some(&self.halt),
        )
    }

    /// Why it must not go on: stopped for too many denials, or by a hook.
    pub(crate) fn stopped(&self) -> Option<String> {
        self.denials.stopped().or_else(|| self.halt.reason())
    }

    /// With `hooks` of its type, run for it after the session's.
    pub(crate) fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// Continuing its transcript as `resumption` says.
    pub(crate) fn with_resumption(mut self, resumption: Resumption) -> Self {
        self.resumed = Some(resumption);
        self
    }

    /// Running as the subagent type `definition`.
    pub(crate) fn with_definition(mut self, definition: Option<Arc<AgentDefinition>>) -> Self {
        self.definition = definition;
        self
    }

    /// With a token and tool-call budget, its tokens counted also against
    /// `above` (its parent's pool) and the pools above that.
    pub(crate) fn with_budget(mut self, budget: Budget, above: Option<&Arc<TokenPool>>) -> Self {
        self.tokens = TokenPool::under(above, budget.tokens);
        self.budget = budget;
        self
    }

    /// Books the usage of one of its requests against its token pools.
    pub(crate) fn book_tokens(&self, usage: &zr_types::Usage) {
        if let Some(pool) = &self.tokens {
            pool.book(usage);
        }
    }

    /// With the first `prefix` messages shared with the parent's last
    /// request (a fork).
    pub(crate) fn with_cache_prefix(mut self, prefix: Option<usize>) -> Self {
        self.cache_prefix = prefix;
        self
    }

    /// Run from `spec`, its description.
    pub(crate) fn with_described(mut self, spec: Arc<SubagentSpec>) -> Self {
        self.described = Some(spec);
        self
    }

    /// With `delegate` carrying out its Task and MultiTask calls (the
    /// root's).
    pub(crate) fn with_delegate(mut self, delegate: Arc<dyn Delegate>) -> Self {
        self.delegate = delegate;
        self
    }

    /// With its tools rebuilt as `reload` says when the session's agent
    /// types or skills change (the root's).
    pub(crate) fn with_reload(mut self, reload: RootReload) -> Self {
        self.reload = Some(reload);
        self
    }
}
