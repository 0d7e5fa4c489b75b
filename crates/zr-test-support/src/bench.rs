//! The engine benchmarks' session (feature `engine`), shared by
//! zr-engine's `engine` and `heap` benches and zr-telemetry's `fanout`:
//! a root over the scripted provider with a `noop` tool that does
//! nothing (what is measured is the engine) and a `worker` subagent type,
//! and the script of the fan-out.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use zr_caps::{AgentDefinition, RuntimeSettings};
use zr_engine::{AgentConfig, RuntimeEnvironment, ScriptedProvider};
use zr_tools::BuiltinTools;
use zr_types::{
    Annotations, BoxFuture, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler,
    ToolOrigin, ToolOutput, Usage,
};

/// A tool that does nothing and answers `ok`.
#[derive(Debug)]
pub struct Noop;

impl ToolHandler for Noop {
    fn call<'a>(
        &'a self,
        _: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

/// The usage every scripted answer reports.
pub const USAGE: Usage = Usage {
    input_tokens: 100,
    output_tokens: 20,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
};

/// `n` calls of `noop`, as a script's `tool_calls`.
pub fn noop_calls(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"name": "noop", "input": {"i": i}}))
        .collect()
}

/// `subagents / 10` MultiTask calls of 10 tasks in one root turn, each
/// subagent making 3 `noop` calls in its first turn and answering in its
/// second.
pub fn fanout_script(subagents: usize) -> Value {
    let calls: Vec<Value> = (0..subagents / 10)
        .map(|c| {
            let tasks: Vec<Value> = (0..10)
                .map(|t| json!({"description": format!("task {c}.{t}"), "prompt": "work", "subagent_type": "worker"}))
                .collect();
            json!({"name": "MultiTask", "input": {"tasks": tasks}})
        })
        .collect();
    json!({"agents": {
        "root": [{"turns": [{"tool_calls": calls, "usage": USAGE}, {"text": "all done", "usage": USAGE}]}],
        "worker": [{"turns": [
            {"tool_calls": noop_calls(3), "usage": USAGE},
            {"text": "worked", "usage": USAGE}
        ]}]
    }})
}

/// A session before its agent is made: the caller adds to the runtime
/// (a tracer) and the config (limits, transcripts, permissions).
#[derive(Debug)]
pub struct NoopSession {
    /// The project folder, removed on drop.
    pub dir: TempDir,
    /// Over `script`, with `noop` handled by the handler given.
    pub runtime: RuntimeEnvironment,
    /// The root (`You delegate.`) with `noop` and the `worker` type (which
    /// has `noop` too); 10 subagents at once, an hour each.
    pub config: AgentConfig,
}

/// A session over `script` whose `noop` (read-only or not: a call that
/// is not read-only goes past the permission handler) is `handler`.
///
/// # Panics
///
/// When `script` is not a valid script.
pub fn noop_session(script: &Value, read_only: bool, handler: Arc<dyn ToolHandler>) -> NoopSession {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let provider = Arc::new(
        ScriptedProvider::from_json(&script.to_string()).expect("the bench script is valid"),
    );
    let settings = RuntimeSettings {
        model: "scripted".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let noop = Arc::new(
        ToolDefinition::new(
            "noop".parse().expect("a tool name"),
            "does nothing",
            ToolOrigin::Custom,
        )
        .with_annotations(Annotations {
            read_only,
            ..Annotations::default()
        }),
    );
    let runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join("cron.json")),
    )
    .with_tool(Arc::clone(&noop), handler);
    let mut worker =
        AgentDefinition::new("worker".parse().expect("a type name"), "works", "You work.");
    worker.capabilities.custom_tools = Some(vec![Arc::clone(&noop)]);
    let mut config = AgentConfig::new("You delegate.").with_sub_agent(worker);
    config.options.custom_tools = vec![noop];
    config.subagent.max_concurrent = 10;
    config.subagent.timeout = Duration::from_secs(3_600);
    NoopSession {
        dir,
        runtime,
        config,
    }
}
