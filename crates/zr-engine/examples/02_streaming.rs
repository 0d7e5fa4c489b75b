//! Events as they come: `Agent::query` is a stream of text deltas, tool
//! calls and their results, turns and usage, each tagged with its agent;
//! `Query::finish` then gives the result.
//!
//! Run it with `cargo run -p zr-engine --example 02_streaming`. Offline, the
//! scripted provider plays the inline script below (the `Read` call is
//! real: it reads a file in a temporary folder); with `ANTHROPIC_API_KEY`
//! set, Claude answers the same prompt.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, EventKind, ModelProvider,
    QueryOverrides, RuntimeEnvironment, ScriptedProvider,
};
use zr_tools::BuiltinTools;

/// The root reads the notes, then answers.
const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"text": "Let me read the notes first.",
     "tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"text": "The notes list two tasks: fix the parser and write the release notes."}
]}]}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("notes.txt"),
        "- fix the parser\n- write the release notes\n",
    )?;
    let runtime = runtime(dir.path(), SCRIPT)?;
    let agent = Agent::new(Arc::new(runtime), AgentConfig::new("You are concise."));

    let mut query = agent.query(
        "What do the notes in notes.txt ask for?",
        QueryOverrides::default(),
    );
    let mut stdout = std::io::stdout();
    while let Some(event) = query.next().await {
        match &event.kind {
            // Text arrives in pieces; print each as it comes.
            EventKind::TextDelta { text } => {
                print!("{text}");
                stdout.flush()?;
            }
            EventKind::ToolCallStarted { tool, input, .. } => {
                println!("\n[{}] -> {tool} {input}", event.agent);
            }
            EventKind::ToolCallFinished {
                tool,
                is_error,
                summary,
                duration,
                ..
            } => {
                let how = if *is_error { "failed" } else { "ok" };
                println!(
                    "[{}] <- {tool} {how} in {duration:?}: {summary}",
                    event.agent
                );
            }
            EventKind::TurnFinished { turn, usage, .. } => {
                println!(
                    "\n[{}] turn {turn} done ({} tokens)",
                    event.agent,
                    usage.total()
                );
            }
            _ => {}
        }
    }
    let result = query.finish().await?;
    println!("result: {:?}, {} turn(s)", result.status, result.turns);
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
