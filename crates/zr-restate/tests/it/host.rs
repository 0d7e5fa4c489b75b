//! A worker's project in the tests: the scripted model, a root with a
//! `worker` subagent type, and the side-effecting tool `bump`, whose
//! effects are counted by idempotency key in a ledger all workers share
//! (as a real tool's external system would be).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::Notify;
use zr_caps::{AgentDefinition, AgentType, Isolation, RuntimeSettings};
use zr_engine::{
    AgentConfig, Hook, HookAgent, HookReply, Hooks, ModelProvider, ModelRequest, ModelStream,
    RuntimeEnvironment, ScriptedProvider, TreeBudget,
};
use zr_restate::SessionHost;
use zr_tools::BuiltinTools;
use zr_types::{
    BoxFuture, Message, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler, ToolOrigin,
    ToolOutput,
};

/// What `bump` did, across every worker.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Calls of the handler per idempotency key (a retried call counts
    /// twice).
    pub(crate) attempts: Mutex<BTreeMap<String, u32>>,
    /// Effects applied per key: the tool applies a key's effect once.
    pub(crate) effects: Mutex<BTreeMap<String, u32>>,
    /// Calls of `bump` with `hold_ms` running now, on every worker.
    pub(crate) holding: AtomicUsize,
    /// The most that ever ran at once.
    pub(crate) most_held: AtomicUsize,
}

/// The scripted provider, counting the requests it answered and the
/// agents that asked, each request's agent and messages, and the
/// conversation each of the root's requests carried.
#[derive(Debug)]
struct Counted {
    inner: ScriptedProvider,
    requests: Arc<AtomicUsize>,
    agents: Arc<Mutex<BTreeSet<String>>>,
    asked: Arc<Mutex<Vec<(String, String)>>>,
    root_requests: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl ModelProvider for Counted {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let agent = request.origin.agent.to_string();
        let messages = serde_json::to_string(&request.messages).expect("messages serialise");
        self.asked
            .lock()
            .expect("not poisoned")
            .push((agent.clone(), messages));
        if request.origin.agent.is_root() {
            self.root_requests
                .lock()
                .expect("not poisoned")
                .push(request.messages.to_vec());
        }
        self.agents.lock().expect("not poisoned").insert(agent);
        self.inner.stream(request)
    }
}

/// `bump`: applies its effect once per idempotency key. With input
/// `{"crash": true}` on a worker told to crash, it applies the effect and
/// then hangs, as a worker killed right after the effect would: the
/// journal never hears of the result. With `{"hold_ms": N}` it takes N
/// ms, counted in the ledger's `holding` meanwhile.
#[derive(Debug)]
struct Bump {
    ledger: Arc<Ledger>,
    crash: Option<Arc<Notify>>,
}

impl ToolHandler for Bump {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let Some(key) = ctx.idempotency_key.clone() else {
                return Ok(ToolOutput::error("bump: no idempotency key"));
            };
            *self
                .ledger
                .attempts
                .lock()
                .expect("not poisoned")
                .entry(key.clone())
                .or_default() += 1;
            {
                let mut effects = self.ledger.effects.lock().expect("not poisoned");
                let applied = effects.entry(key.clone()).or_default();
                if *applied == 0 {
                    *applied = 1;
                }
            }
            if let Some(name) = call.input.get("write").and_then(Value::as_str) {
                std::fs::write(ctx.cwd.join(name), &key).expect("the note is written");
            }
            if let Some(ms) = call.input.get("hold_ms").and_then(Value::as_u64) {
                let now = self.ledger.holding.fetch_add(1, Ordering::SeqCst) + 1;
                self.ledger.most_held.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                self.ledger.holding.fetch_sub(1, Ordering::SeqCst);
            }
            if let Some(crash) = &self.crash
                && call.input.get("crash") == Some(&Value::Bool(true))
            {
                crash.notify_one();
                std::future::pending::<()>().await;
            }
            Ok(ToolOutput::text(format!("bumped {key}")))
        })
    }
}

/// One worker's project.
#[derive(Debug)]
pub(crate) struct TestHost {
    pub(crate) script: Value,
    pub(crate) dir: PathBuf,
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) requests: Arc<AtomicUsize>,
    /// The agents whose model requests this worker answered.
    pub(crate) agents: Arc<Mutex<BTreeSet<String>>>,
    /// Each request this worker answered, in order: its agent and its
    /// messages as JSON.
    pub(crate) asked: Arc<Mutex<Vec<(String, String)>>>,
    /// The messages of each request of the root this worker answered, in
    /// the order they came.
    pub(crate) root_requests: Arc<Mutex<Vec<Vec<Message>>>>,
    /// Told when `bump` crashes this worker.
    pub(crate) crash: Option<Arc<Notify>>,
    /// The session's `subagent.max_concurrent`, when not the default.
    pub(crate) max_concurrent: Option<usize>,
    /// The session's `subagent.timeout` (a call's budget), when not the
    /// default.
    pub(crate) budget: Option<std::time::Duration>,
    /// How long a PreToolUse hook holds each of the root's tool calls
    /// (local work between two commands of its journal).
    pub(crate) root_hook: Option<std::time::Duration>,
    /// `[subagents] max_depth`, when not the default; it also adds the
    /// general-purpose type `lead` (which may delegate below the limit).
    pub(crate) max_depth: Option<u32>,
    /// The session's `[budget]`.
    pub(crate) tree_budget: TreeBudget,
    /// Adds the type `rem` (`isolation: remote`).
    pub(crate) remote_type: bool,
}

/// A PreToolUse hook that takes its time over the root's calls.
#[derive(Debug)]
struct Slow(std::time::Duration);

impl Hook for Slow {
    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        _: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            if agent.agent.is_root() {
                tokio::time::sleep(self.0).await;
            }
            HookReply::proceed()
        })
    }
}

impl TestHost {
    /// Two workers of `script` in `a` and `b` sharing `ledger`, the first
    /// told to crash at a `bump` with `{"crash": true}`: the workers and
    /// what the first tells when it crashes.
    pub(crate) fn crashing_pair(
        script: &Value,
        a: PathBuf,
        b: PathBuf,
        ledger: &Arc<Ledger>,
    ) -> (Arc<Self>, Arc<Self>, Arc<Notify>) {
        let crash = Arc::new(Notify::new());
        let mut first = Self::new(script.clone(), a, Arc::clone(ledger));
        first.crash = Some(Arc::clone(&crash));
        let second = Self::new(script.clone(), b, Arc::clone(ledger));
        (Arc::new(first), Arc::new(second), crash)
    }

    pub(crate) fn new(script: Value, dir: PathBuf, ledger: Arc<Ledger>) -> Self {
        std::fs::create_dir_all(&dir).expect("the worker's folder");
        Self {
            script,
            dir,
            ledger,
            requests: Arc::default(),
            agents: Arc::default(),
            asked: Arc::default(),
            root_requests: Arc::default(),
            crash: None,
            max_concurrent: None,
            budget: None,
            root_hook: None,
            max_depth: None,
            tree_budget: TreeBudget::default(),
            remote_type: false,
        }
    }

    pub(crate) fn sessions(&self) -> PathBuf {
        self.dir.join("sessions")
    }

    /// The runtime and configuration, as `open` gives them (a local run
    /// uses the same).
    pub(crate) fn build(&self) -> (RuntimeEnvironment, AgentConfig) {
        let provider =
            ScriptedProvider::from_json(&self.script.to_string()).expect("a valid script");
        let provider = Arc::new(Counted {
            inner: provider,
            requests: Arc::clone(&self.requests),
            agents: Arc::clone(&self.agents),
            asked: Arc::clone(&self.asked),
            root_requests: Arc::clone(&self.root_requests),
        });
        let settings = RuntimeSettings {
            model: "scripted".into(),
            cwd: self.dir.clone(),
            env: BTreeMap::default(),
        };
        let bump = Arc::new(ToolDefinition::new(
            "bump".parse().expect("a valid name"),
            "Bumps a counter (a side effect).",
            ToolOrigin::Custom,
        ));
        let handler = Arc::new(Bump {
            ledger: Arc::clone(&self.ledger),
            crash: self.crash.clone(),
        });
        let runtime = RuntimeEnvironment::new(
            provider,
            settings,
            BuiltinTools::new(self.dir.join("cron.json")),
        )
        .with_tool(Arc::clone(&bump), handler);
        let mut worker = AgentDefinition::new(
            "worker".parse().expect("a valid name"),
            "the worker agent",
            "You are the worker agent.",
        )
        .with_type(AgentType::GeneralPurpose);
        worker.capabilities.custom_tools = Some(vec![Arc::clone(&bump)]);
        let mut config = AgentConfig::new("You are the root.").with_sub_agent(worker);
        if let Some(depth) = self.max_depth {
            let mut lead = AgentDefinition::new(
                "lead".parse().expect("a valid name"),
                "the lead agent",
                "You are the lead agent.",
            )
            .with_type(AgentType::GeneralPurpose);
            lead.capabilities.custom_tools = Some(vec![Arc::clone(&bump)]);
            config = config.with_sub_agent(lead);
            config.policy.max_depth = depth;
        }
        config.budget = self.tree_budget;
        if self.remote_type {
            let mut rem = AgentDefinition::new(
                "rem".parse().expect("a valid name"),
                "the remote agent",
                "You are the remote agent.",
            )
            .with_type(AgentType::GeneralPurpose);
            rem.capabilities.custom_tools = Some(vec![Arc::clone(&bump)]);
            rem.isolation = Isolation::Remote;
            config = config.with_sub_agent(rem);
        }
        config.options.custom_tools = vec![bump];
        config.sessions_dir = Some(self.sessions());
        if let Some(n) = self.max_concurrent {
            config.subagent.max_concurrent = n;
        }
        if let Some(budget) = self.budget {
            config.subagent.timeout = budget;
        }
        if let Some(hold) = self.root_hook {
            config.hooks = Hooks::new().with(Arc::new(Slow(hold)));
        }
        (runtime, config)
    }
}

impl SessionHost for TestHost {
    fn open(&self) -> Result<(RuntimeEnvironment, AgentConfig), String> {
        Ok(self.build())
    }
}
