//! Structured output: `AgentConfig::output_schema` makes the root's answer
//! a JSON value checked against a schema (one repair turn when it does
//! not match); `QueryResult::value` is the parsed answer.
//!
//! Run it with `cargo run -p zr-engine --example 08_structured_output`.
//! Offline, the scripted provider plays the inline script below; with
//! `ANTHROPIC_API_KEY` set, Claude answers through its structured-output
//! tool.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, ModelProvider, RuntimeEnvironment,
    ScriptedProvider,
};
use zr_tools::BuiltinTools;

/// The answer, as JSON text.
const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"text": "{\"count\": 3, \"titles\": [\"groceries\", \"call the bank\", \"book the train\"]}"}
]}]}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut config = AgentConfig::new("You count notes.");
    config.output_schema = Some(serde_json::json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "titles": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["count", "titles"],
        "additionalProperties": false
    }));
    let agent = Agent::new(Arc::new(runtime(dir.path(), SCRIPT)?), config);

    let result = agent
        .prompt("How many notes are there: groceries; call the bank; book the train?")
        .await?;
    let value = result
        .value
        .ok_or("a completed query with a schema has a value")?;
    println!("value: {value}");
    println!("count: {}", value["count"]);
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
