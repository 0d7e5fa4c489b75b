//! A background subagent: `Task` with `run_in_background: true` returns at
//! once; the host follows the agent with `Agent::background_events`, and
//! the root hears of its result before its next model request.
//!
//! Run it with `cargo run -p zr-engine --example 07_background`. Offline,
//! the scripted provider plays the inline script below (the worker takes
//! half a second); with `ANTHROPIC_API_KEY` set, Claude plays both agents.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use zr_caps::{AgentDefinition, AgentType, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, EventKind, ModelProvider,
    RuntimeEnvironment, ScriptedProvider,
};
use zr_tools::BuiltinTools;

/// The root starts the worker and answers at once; at the next query it
/// reports the worker's result.
const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {
      "description": "index the docs", "prompt": "Index the docs folder.",
      "subagent_type": "worker", "run_in_background": true}}]},
    {"text": "The worker is indexing the docs in the background."},
    {"text": "The worker finished: 3 documents indexed."}
  ]}],
  "worker": [{"turns": [{"delay_ms": 500, "text": "Indexed 3 documents."}]}]
}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let worker = AgentDefinition::new(
        "worker".parse()?,
        "Does long jobs in the background.",
        "You do the job you are given and report in one sentence.",
    )
    .with_type(AgentType::GeneralPurpose);
    let config =
        AgentConfig::new("You delegate long jobs to background workers.").with_sub_agent(worker);
    let agent = Agent::new(Arc::new(runtime(dir.path(), SCRIPT)?), config);
    // Subscribe before the query, so that no event is missed.
    let mut background = agent.background_events();

    let first = agent.prompt("Index the docs, in the background.").await?;
    println!("root (at once): {}", first.output);
    for running in agent.background_agents() {
        println!(
            "running: {} ({}) for {:?}",
            running.id, running.description, running.elapsed
        );
    }

    // The host follows the worker until it finishes.
    while let Some(event) = background.next().await {
        if let EventKind::SubagentFinished { result } = &event.kind {
            println!(
                "background {} {:?}: {}",
                event.agent, result.status, result.output
            );
            break;
        }
    }
    agent.wait_background().await;

    // The root's next request carries the worker's result.
    let second = agent.prompt("Is the indexing done?").await?;
    println!("root (later): {}", second.output);
    Ok(())
}

/// Claude when `ANTHROPIC_API_KEY` is set, else the scripted provider
/// playing `script`; with the model name to send.
fn provider(script: &str) -> Result<(Arc<dyn ModelProvider>, String), Box<dyn Error>> {
    match std::env::var("ANTHROPIC_API_KEY") {
        Ok(key) if !key.is_empty() => {
            let provider = AnthropicProvider::new(AnthropicConfig::new(key))?;
            Ok((Arc::new(provider), "claude-sonnet-4-5".to_owned()))
        }
        _ => Ok((
            Arc::new(ScriptedProvider::from_json(script)?),
            "scripted".to_owned(),
        )),
    }
}

/// A runtime over `script`'s provider whose working directory is `dir`;
/// child processes see only `PATH`.
fn runtime(dir: &Path, script: &str) -> Result<RuntimeEnvironment, Box<dyn Error>> {
    let (provider, model) = provider(script)?;
    let env = std::env::var("PATH").map(|path| ("PATH".to_owned(), path));
    let settings = RuntimeSettings {
        model,
        cwd: dir.to_path_buf(),
        env: env.into_iter().collect(),
    };
    let builtins = BuiltinTools::new(dir.join("cron.json"));
    Ok(RuntimeEnvironment::new(provider, settings, builtins))
}
