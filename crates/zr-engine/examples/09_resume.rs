//! Resume after a crash: a session writes its transcripts (JSONL) to a
//! temporary folder; the process is killed with SIGKILL while a tool call
//! runs; `Agent::resume` rebuilds the root from its transcript and
//! `Agent::continue_interrupted` finishes the cut-short turn without
//! running the started call again; the conversation then goes on.
//!
//! Run it with `cargo run -p zr-engine --example 09_resume`. The example
//! starts itself as a child process (the session that crashes; always on
//! the scripted provider, whose tool call waits to be killed) and resumes
//! its session in the parent: offline on the inline script below, or with
//! Claude when `ANTHROPIC_API_KEY` is set.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, ModelProvider, QueryOverrides,
    RuntimeEnvironment, ScriptedProvider,
};
use zr_tools::BuiltinTools;
use zr_types::{
    BoxFuture, SessionId, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler,
    ToolOrigin, ToolOutput,
};

/// Set in the child process: the folder of the session that crashes.
const CHILD_DIR: &str = "ZR_EXAMPLE_RESUME_DIR";

/// The session that crashes: the root starts a deploy, which never ends.
const CRASH_SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"text": "Deploying to staging.",
     "tool_calls": [{"name": "deploy", "input": {"target": "staging"}}]},
    {"text": "never reached: the process is killed during the deploy"}
]}]}}"#;

/// The resumed session: the interrupted turn finished, then a new prompt.
const RESUME_SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"text": "The deploy to staging was interrupted; I did not start it again."},
    {"text": "You asked me to deploy to staging; it did not finish."}
]}]}}"#;

/// A deploy that, in the crashing child, marks that it started and then
/// waits to be killed; in the parent it would finish at once.
#[derive(Debug)]
struct Deploy {
    /// The file that tells the parent the call is running (child only).
    started: Option<PathBuf>,
}

impl ToolHandler for Deploy {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if let Some(started) = &self.started {
                // Written after the transcript's `call_started` record.
                if std::fs::write(started, b"").is_ok() {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
            }
            Ok(ToolOutput::text(format!(
                "deployed to {}",
                call.input["target"]
            )))
        })
    }
}

/// The session's configuration: the same in both processes.
fn config(dir: &Path, deploy: &Arc<ToolDefinition>) -> AgentConfig {
    let mut config = AgentConfig::new("You deploy when asked.");
    config.options.custom_tools.push(Arc::clone(deploy));
    config.sessions_dir = Some(dir.join("sessions"));
    config
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let deploy = Arc::new(ToolDefinition::new(
        "deploy".parse()?,
        "Deploys the project to a target.",
        ToolOrigin::Custom,
    ));
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        return crash(Path::new(&dir), deploy).await;
    }

    let dir = tempfile::tempdir()?;
    let session = run_and_kill(dir.path())?;
    let transcript = dir.path().join(format!("sessions/{session}/root.jsonl"));
    let kinds: Vec<String> = std::fs::read_to_string(&transcript)?
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|record| record["kind"].as_str().map(str::to_owned))
        .collect();
    println!("killed session {session}; root.jsonl holds {kinds:?}");

    let runtime = runtime(dir.path(), RESUME_SCRIPT)?
        .with_tool(Arc::clone(&deploy), Arc::new(Deploy { started: None }));
    let agent = Agent::resume(Arc::new(runtime), config(dir.path(), &deploy), &session)?;
    println!(
        "resumed: {} message(s) of history, interrupted: {}",
        agent.history().len(),
        agent.interrupted()
    );
    let finished = agent
        .continue_interrupted(QueryOverrides::default())
        .finish()
        .await?;
    println!("root (turn finished): {}", finished.output);
    let next = agent.prompt("What did I ask you to do?").await?;
    println!("root (next prompt): {}", next.output);
    Ok(())
}

/// Runs this example again as a child that crashes: waits until its deploy
/// runs, kills it with SIGKILL, reaps it, and returns its session.
fn run_and_kill(dir: &Path) -> Result<SessionId, Box<dyn Error>> {
    let mut child = Command::new(std::env::current_exe()?)
        .env(CHILD_DIR, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()?;
    let started = dir.join("deploy-started");
    let deadline = Instant::now() + Duration::from_secs(30);
    let waited = loop {
        if started.exists() {
            break Ok(());
        }
        if let Some(status) = child.try_wait()? {
            break Err(format!("the child ended before its deploy: {status}"));
        }
        if Instant::now() > deadline {
            break Err("the child's deploy did not start within 30 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SIGKILL on Unix, then reap: no process is left behind.
    child.kill()?;
    child.wait()?;
    waited?;
    let entry = std::fs::read_dir(dir.join("sessions"))?
        .next()
        .ok_or("the child wrote no session")??;
    let name = entry.file_name();
    Ok(name
        .to_str()
        .ok_or("a session folder's name is UTF-8")?
        .parse()?)
}

/// The child: the crashing session, over the crash script.
async fn crash(dir: &Path, deploy: Arc<ToolDefinition>) -> Result<(), Box<dyn Error>> {
    let provider = Arc::new(ScriptedProvider::from_json(CRASH_SCRIPT)?);
    let settings = RuntimeSettings {
        model: "scripted".to_owned(),
        cwd: dir.to_path_buf(),
        env: Default::default(),
    };
    let handler = Deploy {
        started: Some(dir.join("deploy-started")),
    };
    let runtime =
        RuntimeEnvironment::new(provider, settings, BuiltinTools::new(dir.join("cron.json")))
            .with_tool(Arc::clone(&deploy), Arc::new(handler));
    let agent = Agent::new(Arc::new(runtime), config(dir, &deploy));
    agent.prompt("Deploy to staging.").await?;
    Err("the deploy ended: the parent should have killed this process".into())
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
