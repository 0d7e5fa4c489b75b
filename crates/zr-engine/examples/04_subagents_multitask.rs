//! Delegation: a subagent type (`reviewer`, read-only `Explore` tools)
//! and a `MultiTask` call that runs two reviewers in parallel, each in its
//! own context; the root gets their answers and merges them.
//!
//! Run it with `cargo run -p zr-engine --example 04_subagents_multitask`.
//! Offline, the scripted provider plays the inline script below (each
//! reviewer's reply is picked by a `match` on its prompt); with
//! `ANTHROPIC_API_KEY` set, Claude plays every agent.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use zr_caps::{AgentDefinition, AgentType, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, EventKind, ModelProvider,
    QueryOverrides, RuntimeEnvironment, ScriptedProvider,
};
use zr_tools::BuiltinTools;

/// The root fans out two reviews, then merges them.
const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"text": "Two reviews in parallel.",
     "tool_calls": [{"name": "MultiTask", "input": {"tasks": [
       {"description": "review lib.rs", "prompt": "Review lib.rs for error handling.", "subagent_type": "reviewer"},
       {"description": "review main.rs", "prompt": "Review main.rs for error handling.", "subagent_type": "reviewer"}
     ]}}]},
    {"text": "Both files are fine: lib.rs returns typed errors and main.rs reports them."}
  ]}],
  "reviewer": [
    {"match": "lib.rs", "turns": [
      {"tool_calls": [{"name": "Read", "input": {"file_path": "lib.rs"}}]},
      {"text": "lib.rs: every function returns Result with a typed error."}
    ]},
    {"match": "main.rs", "turns": [
      {"tool_calls": [{"name": "Read", "input": {"file_path": "main.rs"}}]},
      {"text": "main.rs: errors are printed with their cause and exit 1."}
    ]}
  ]
}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("lib.rs"),
        "pub fn parse(s: &str) -> Result<u32, std::num::ParseIntError> { s.parse() }\n",
    )?;
    std::fs::write(
        dir.path().join("main.rs"),
        "fn main() { if let Err(e) = run() { eprintln!(\"{e}\"); std::process::exit(1) } }\n",
    )?;

    let reviewer = AgentDefinition::new(
        "reviewer".parse()?,
        "Reviews one file and reports problems in one sentence.",
        "You review the file you are given. Answer in one sentence.",
    )
    .with_type(AgentType::Explore);
    let config = AgentConfig::new("You delegate reviews to reviewers, in parallel.")
        .with_sub_agent(reviewer);
    let agent = Agent::new(Arc::new(runtime(dir.path(), SCRIPT)?), config);

    let mut query = agent.query(
        "Review lib.rs and main.rs for error handling.",
        QueryOverrides::default(),
    );
    while let Some(event) = query.next().await {
        match &event.kind {
            EventKind::SubagentStarted { description, .. } => {
                println!("started  {} ({description})", event.agent);
            }
            EventKind::ToolCallStarted { tool, input, .. } if !event.agent.is_root() => {
                println!("         {} -> {tool} {input}", event.agent);
            }
            EventKind::SubagentFinished { result } => {
                println!(
                    "finished {} ({:?}, {} turn(s)): {}",
                    event.agent, result.status, result.turns, result.output
                );
            }
            _ => {}
        }
    }
    let result = query.finish().await?;
    println!("root: {}", result.output);
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
