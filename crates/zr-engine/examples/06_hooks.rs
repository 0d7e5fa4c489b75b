//! Hooks: a `PreToolUse` hook that denies network commands and rewrites
//! another call's input, a `PostToolUse` hook that logs every result, and
//! a `Stop` hook that sends the root back to work once before it may stop.
//!
//! Run it with `cargo run -p zr-engine --example 06_hooks`. Offline, the
//! scripted provider plays the inline script below (the allowed `Bash`
//! command runs for real, in a temporary folder); with `ANTHROPIC_API_KEY`
//! set, Claude makes its own calls.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, Hook, HookAgent, HookReply, Hooks,
    ModelProvider, RuntimeEnvironment, ScriptedProvider,
};
use zr_tools::BuiltinTools;
use zr_types::{BoxFuture, ToolCall, ToolOutput, ToolResultContent};

/// Two commands in one turn: one allowed (and rewritten), one denied.
const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"tool_calls": [
      {"name": "Bash", "input": {"command": "echo hello from the hook example"}},
      {"name": "Bash", "input": {"command": "curl -s https://example.invalid/"}}
    ]},
    {"text": "The echo ran."},
    {"text": "The echo ran; the network command was refused by a hook."}
]}]}}"#;

/// Keeps agents off the network and shouts their echoes.
#[derive(Debug)]
struct Guard;

impl Hook for Guard {
    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        let command = call.input["command"].as_str().unwrap_or_default();
        let answer = if call.name != "Bash" {
            HookReply::proceed()
        } else if ["curl", "wget"].iter().any(|c| command.contains(c)) {
            HookReply::block("no network commands")
        } else if let Some(text) = command.strip_prefix("echo ") {
            let mut input = call.input.clone();
            input["command"] = format!("echo {}", text.to_uppercase()).into();
            HookReply::proceed().with_input(input)
        } else {
            HookReply::proceed()
        };
        println!(
            "PreToolUse  {} {}: {command:?} -> {answer:?}",
            agent.agent, call.name
        );
        Box::pin(async move { answer })
    }

    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        let text: String = output
            .content
            .iter()
            .filter_map(|c| match c {
                ToolResultContent::Text { text } => Some(text.trim()),
                _ => None,
            })
            .collect();
        println!(
            "PostToolUse {} {} (error: {}): {text}",
            agent.agent, call.name, output.is_error
        );
        Box::pin(async { HookReply::proceed() })
    }

    fn stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        answer: &'a str,
        active: bool,
    ) -> BoxFuture<'a, HookReply> {
        // Claude Code's `stop_hook_active`: once sent back, let it stop.
        let reply = if active || answer.contains("refused") {
            HookReply::proceed()
        } else {
            HookReply::block("Say what happened to the network command too.")
        };
        println!(
            "Stop        {} (active: {active}) -> {reply:?}",
            agent.agent
        );
        Box::pin(async move { reply })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let mut config = AgentConfig::new("You run shell commands when asked.");
    config.hooks = Hooks::new().with(Arc::new(Guard));
    let agent = Agent::new(Arc::new(runtime(dir.path(), SCRIPT)?), config);

    let result = agent
        .prompt("Echo a greeting, then fetch https://example.invalid/.")
        .await?;
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
