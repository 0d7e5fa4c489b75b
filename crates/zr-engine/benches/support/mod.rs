//! What the engine benchmarks share: zr-test-support's session over the
//! scripted provider (a no-op tool, a `worker` subagent type) with what
//! each benchmark adds (for the tree, `lead` and `sub` types three levels
//! deep), a reading session, the scripts of long queries and of a tree,
//! and the runtime they run on. The fan-out's script is
//! zr-test-support's `fanout_script`.

use std::sync::Arc;

use serde_json::{Value, json};
use tempfile::TempDir;
use zr_caps::{AgentDefinition, PermissionMode, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, Decision, Hook, Hooks, PermissionConfig, PermissionHandler,
    PermissionRequest, RuntimeEnvironment, ScriptedProvider,
};
use zr_test_support::bench::{Noop, NoopSession, USAGE, fanout_script, noop_calls, noop_session};
use zr_tools::BuiltinTools;
use zr_types::{BoxFuture, ToolHandler};

/// Allows every call it is asked about.
#[derive(Debug)]
struct AllowAll;

impl PermissionHandler for AllowAll {
    fn can_use_tool<'a>(&'a self, _: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Allow })
    }
}

/// A hook with every default: called, does nothing.
#[derive(Debug)]
struct Pass;

impl Hook for Pass {}

/// What the turn benchmarks add to a session.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Extra {
    Nothing,
    /// `sessions_dir` set: every agent writes its transcript.
    Transcripts,
    /// `noop` is not read-only, so the permission handler is asked about
    /// every call; a hook sees each call before and after.
    Permissions,
}

/// A fresh session over `script`, with the `noop` tool and a `worker`
/// subagent type.
pub(crate) fn agent(script: &Value, max_concurrent: usize) -> (TempDir, Agent) {
    agent_with(script, max_concurrent, Extra::Nothing)
}

pub(crate) fn agent_with(script: &Value, max_concurrent: usize, extra: Extra) -> (TempDir, Agent) {
    agent_with_noop(script, max_concurrent, extra, Arc::new(Noop))
}

pub(crate) fn agent_with_noop(
    script: &Value,
    max_concurrent: usize,
    extra: Extra,
    handler: Arc<dyn ToolHandler>,
) -> (TempDir, Agent) {
    let NoopSession {
        dir,
        runtime,
        mut config,
    } = noop_session(script, !matches!(extra, Extra::Permissions), handler);
    config.subagent.max_concurrent = max_concurrent;
    // Room for the longest turn benchmark (`turns:N`).
    config.max_turns = 1_000;
    match extra {
        Extra::Nothing => {}
        Extra::Transcripts => config.sessions_dir = Some(dir.path().join("sessions")),
        Extra::Permissions => {
            config.permissions = PermissionConfig::with_handler(Arc::new(AllowAll));
            config.hooks = Hooks::new().with(Arc::new(Pass));
        }
    }
    (dir, Agent::new(Arc::new(runtime), config))
}

/// A fresh session over `script` whose tree may be [`TREE_LEVELS`] deep:
/// the `noop` tool, the types `lead` (level 1), `sub` (level 2) and
/// `worker` (level 3), and `[subagents] max_depth = 3`.
pub(crate) fn tree_agent(script: &Value, max_concurrent: usize) -> (TempDir, Agent) {
    let NoopSession {
        dir,
        runtime,
        mut config,
    } = noop_session(script, true, Arc::new(Noop));
    for name in ["lead", "sub"] {
        config = config.with_sub_agent(AgentDefinition::new(
            name.parse().unwrap(),
            "delegates",
            "You delegate.",
        ));
    }
    config.policy.max_depth = u32::try_from(TREE_LEVELS).unwrap();
    config.subagent.max_concurrent = max_concurrent;
    config.max_turns = 1_000;
    (dir, Agent::new(Arc::new(runtime), config))
}

/// The levels of subagents of the tree benchmarks.
pub(crate) const TREE_LEVELS: usize = 3;

/// A fresh session over `script` with the builtin tools only, the root in
/// `mode` and the default boundary (sandbox on), and `small.txt` (10
/// lines) in its project folder.
pub(crate) fn reader(script: &Value, mode: PermissionMode) -> (TempDir, Agent) {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..10)
        .map(|i| format!("line {i} of a small file\n"))
        .collect();
    std::fs::write(dir.path().join("small.txt"), lines).unwrap();
    let provider = Arc::new(ScriptedProvider::from_json(&script.to_string()).unwrap());
    let settings = RuntimeSettings {
        model: "scripted".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join("cron.json")),
    );
    let mut config = AgentConfig::new("You read.");
    config.permission_mode = mode;
    config.max_turns = 1_000;
    (dir, Agent::new(Arc::new(runtime), config))
}

/// `reads` turns that each `Read` `small.txt` once, then an answer.
pub(crate) fn reads_script(reads: usize) -> Value {
    let read = json!({"name": "Read", "input": {"file_path": "small.txt"}});
    let mut turns: Vec<Value> = (0..reads)
        .map(|_| json!({"text": "step", "tool_calls": [read], "usage": USAGE}))
        .collect();
    turns.push(json!({"text": "done", "usage": USAGE}));
    json!({"agents": {"root": [{"turns": turns}]}})
}

/// `tool_turns` turns that each call `noop` once, then an answer.
pub(crate) fn turns_script(tool_turns: usize) -> Value {
    let mut turns: Vec<Value> = (0..tool_turns)
        .map(|_| json!({"text": "step", "tool_calls": noop_calls(1), "usage": USAGE}))
        .collect();
    turns.push(json!({"text": "done", "usage": USAGE}));
    json!({"agents": {"root": [{"turns": turns}]}})
}

/// The MultiTask calls that start `n` agents of `agent_type`, 10 tasks
/// a call.
fn multitasks(n: usize, agent_type: &str) -> Vec<Value> {
    (0..n.div_ceil(10))
        .map(|c| {
            let tasks: Vec<Value> = (c * 10..n.min(c * 10 + 10))
                .map(|t| json!({"description": format!("{agent_type} {t}"), "prompt": "work", "subagent_type": agent_type}))
                .collect();
            json!({"name": "MultiTask", "input": {"tasks": tasks}})
        })
        .collect()
}

/// A tree of `branching`³ leaves, [`TREE_LEVELS`] levels of subagents:
/// the root starts `branching` leads in its first turn, each lead
/// `branching` subs, each sub `branching` workers (MultiTask calls of 10
/// tasks at most, all in one turn); a worker makes 3 tool calls in its
/// first turn and answers in its second, as the fan-out's do; every
/// delegating agent answers in its second turn.
pub(crate) fn tree_script(branching: usize) -> Value {
    let delegating = |next: &str, answer: &str| {
        json!([{"turns": [
            {"tool_calls": multitasks(branching, next), "usage": USAGE},
            {"text": answer, "usage": USAGE}
        ]}])
    };
    json!({"agents": {
        "root": delegating("lead", "all done"),
        "lead": delegating("sub", "led"),
        "sub": delegating("worker", "subled"),
        "worker": [{"turns": [
            {"tool_calls": noop_calls(3), "usage": USAGE},
            {"text": "worked", "usage": USAGE}
        ]}]
    }})
}

/// The agents of [`tree_script`]`(branching)`, root included, and the
/// tokens its query uses (each agent: 2 responses of [`USAGE`]).
pub(crate) fn tree_size(branching: usize) -> (usize, u64) {
    let agents = 1 + branching + branching.pow(2) + branching.pow(3);
    (agents, agents as u64 * 2 * USAGE.total())
}

/// The `branching` whose tree has `leaves` leaves (its cube root, rounded).
pub(crate) fn tree_branching(leaves: usize) -> usize {
    let b = (leaves as f64).cbrt().round() as usize;
    assert_eq!(
        b.pow(3),
        leaves,
        "a tree of {TREE_LEVELS} levels has a cube of leaves (1,000 = 10 x 10 x 10), not {leaves}"
    );
    b
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs a fan-out of 10 subagents in a session of its own and drops it, so
/// that what a process pays once (code paged in, the allocator's arenas
/// and the runtime's threads set up, lazy statics) is not counted as the
/// measured run's, per subagent.
pub(crate) fn warm_up(rt: &tokio::runtime::Runtime) {
    let (dir, agent) = agent(&fanout_script(10), 10);
    let result = rt.block_on(agent.prompt("go")).unwrap();
    assert_eq!(result.status, zr_engine::TaskStatus::Completed);
    drop((result, agent, dir));
}

/// The `N` of `ZR_BENCH_ONCE=kind:N` (`kind` alone: `default`), or `None`
/// when the variable is unset and the benchmark runs as usual.
pub(crate) fn once() -> Option<(String, usize)> {
    let once = std::env::var("ZR_BENCH_ONCE")
        .ok()
        .filter(|v| !v.is_empty())?;
    let (kind, n) = once.split_once(':').unwrap_or((once.as_str(), ""));
    let n = if n.is_empty() {
        1_000
    } else {
        n.parse()
            .unwrap_or_else(|_| panic!("ZR_BENCH_ONCE={once}: expected KIND:N with a number N"))
    };
    Some((kind.to_owned(), n))
}
