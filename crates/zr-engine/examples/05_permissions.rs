//! Permissions: a `PermissionHandler` that allows some calls, denies
//! others, and asks a person (here a stand-in that approves only files of
//! the project) about the rest; calls that cross the effects boundary
//! (`PermissionRequest::crossing`: a path outside the agent's roots) are
//! denied outright. Denied calls reach the model as error results and the
//! host as `PermissionDenied` events.
//!
//! Run it with `cargo run -p zr-engine --example 05_permissions`. Offline,
//! the scripted provider plays the inline script below (allowed calls run
//! for real, in a temporary folder); with `ANTHROPIC_API_KEY` set, Claude
//! makes its own calls.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, Decision, EventKind, ModelProvider,
    PermissionConfig, PermissionHandler, PermissionRequest, QueryOverrides, RuntimeEnvironment,
    ScriptedProvider,
};
use zr_tools::BuiltinTools;
use zr_types::BoxFuture;

/// A shell command (denied), a write in the project (asked, approved), a
/// write outside it (a crossing, denied), then the answer.
const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"tool_calls": [{"name": "Bash", "input": {"command": "rm -rf build"}}]},
    {"tool_calls": [{"name": "Write", "input": {"file_path": "notes.txt", "content": "clean the build\n"}}]},
    {"tool_calls": [{"name": "Write", "input": {"file_path": "../outside.txt", "content": "escaped\n"}}]},
    {"text": "I could not run the command nor write outside the project; notes.txt is written."}
]}]}}"#;

/// The host's policy: no shell, ask about writes, deny every crossing.
#[derive(Debug)]
struct Policy;

impl PermissionHandler for Policy {
    fn can_use_tool<'a>(&'a self, request: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        let decision = if let Some(crossing) = &request.crossing {
            // No project rule allows a crossing; a host without a person
            // to ask says no.
            Decision::Deny(format!("not outside the project: {crossing}"))
        } else if request.tool.as_str() == "Bash" {
            Decision::Deny("this host runs no shell commands".to_owned())
        } else {
            Decision::Ask
        };
        println!("policy: {} {} -> {decision:?}", request.tool, request.input);
        Box::pin(async move { decision })
    }

    /// The person's answer (a real host shows a dialog and waits).
    fn prompt<'a>(&'a self, request: &'a PermissionRequest) -> Option<BoxFuture<'a, Decision>> {
        let path = request.input["file_path"].as_str().unwrap_or_default();
        let decision = if Path::new(path).is_relative() && !path.starts_with("..") {
            Decision::Allow
        } else {
            Decision::Deny("the person said no".to_owned())
        };
        println!(
            "person asked: may {} write {path}? -> {decision:?}",
            request.agent
        );
        Some(Box::pin(async move { decision }))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // The project is a folder inside the temporary one, so that
    // `../outside.txt` is outside the project and still cleaned up.
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("project");
    std::fs::create_dir(&project)?;
    let mut config = AgentConfig::new("You tidy up the project.");
    config.permissions = PermissionConfig::with_handler(Arc::new(Policy));
    let agent = Agent::new(Arc::new(runtime(&project, SCRIPT)?), config);

    let mut query = agent.query(
        "Clean the build and note it down.",
        QueryOverrides::default(),
    );
    while let Some(event) = query.next().await {
        if let EventKind::PermissionDenied { tool, reason, .. } = &event.kind {
            println!("denied: {tool}: {reason}");
        }
    }
    let result = query.finish().await?;
    println!("root: {}", result.output);
    println!(
        "notes.txt written: {}, outside.txt written: {}",
        project.join("notes.txt").exists(),
        dir.path().join("outside.txt").exists()
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
