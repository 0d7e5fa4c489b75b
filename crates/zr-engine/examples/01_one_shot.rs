//! One prompt, one answer: build a runtime, an agent, and wait for its
//! reply with `Agent::prompt`.
//!
//! Run it with `cargo run -p zr-engine --example 01_one_shot`. Offline, the
//! scripted provider plays the inline script below; with
//! `ANTHROPIC_API_KEY` set, Claude answers the same prompt.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::sync::Arc;

use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, ModelProvider, RuntimeEnvironment,
    ScriptedProvider,
};
use zr_tools::BuiltinTools;

/// What the scripted model says: one turn of the root, text only.
const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"text": "Rust guarantees memory safety without a garbage collector."}
]}]}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // The agents' working directory; removed when `dir` is dropped.
    let dir = tempfile::tempdir()?;
    let (provider, model) = provider(SCRIPT)?;
    let settings = RuntimeSettings {
        model,
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let builtins = BuiltinTools::new(dir.path().join("cron.json"));
    let runtime = RuntimeEnvironment::new(provider, settings, builtins);
    let agent = Agent::new(
        Arc::new(runtime),
        AgentConfig::new("You answer in one sentence."),
    );

    let result = agent.prompt("What does Rust guarantee?").await?;
    println!("{}", result.output);
    println!(
        "({:?} in {} turn(s), {} tokens)",
        result.status,
        result.turns,
        result.total_usage.total()
    );
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
