//! `zr run` and `zr resume`: build the agent, stream its query through a
//! renderer, stop cleanly on Ctrl-C.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt as _;
use zr_engine::{Agent, Query, QueryOverrides, QueryResult, TaskStatus};

use crate::cli::{ResumeArgs, RunArgs};
use crate::error::{CliError, EXIT_FAILED, EXIT_OK};
use crate::project::Project;
use crate::provider;
use crate::render::{self, Renderer};
use crate::session::Workspace;

/// `zr run PROMPT`.
///
/// # Errors
///
/// Any [`CliError`]; Ctrl-C is [`CliError::Interrupted`].
pub(crate) async fn run(root: PathBuf, args: &RunArgs) -> Result<u8, CliError> {
    let project = Project::load(root)?;
    warn_diagnostics(&project);
    let chosen = provider::choose(&project, &args.provider, &|v| std::env::var(v).ok())?;
    tracing::debug!(provider = ?chosen.kind, model = %chosen.model, "provider chosen");
    let workspace = Workspace::open(&project, chosen.provider, chosen.model).await?;
    warn_servers(&workspace);
    let agent = Agent::new(Arc::clone(&workspace.runtime), workspace.config.clone());
    let overrides = QueryOverrides {
        max_turns: args.max_turns,
        ..QueryOverrides::default()
    };
    let query = agent.query(args.prompt.clone(), overrides);
    let mut renderer = render::choose(&args.output);
    let outcome = drive(&agent, query, renderer.as_mut()).await;
    drop(agent);
    drop(workspace);
    outcome
}

/// `zr resume SESSION [--agent ID] [PROMPT]`.
///
/// # Errors
///
/// Any [`CliError`]; Ctrl-C is [`CliError::Interrupted`].
pub(crate) async fn resume(root: PathBuf, args: &ResumeArgs) -> Result<u8, CliError> {
    let project = Project::load(root)?;
    warn_diagnostics(&project);
    let session = args.session.parse().map_err(|e| {
        CliError::usage(
            format!("'{}' is not a session id: {e}", args.session),
            "`zr sessions` lists the sessions of this project",
        )
    })?;
    let chosen = provider::choose(&project, &args.provider, &|v| std::env::var(v).ok())?;
    let workspace = Workspace::open(&project, chosen.provider, chosen.model).await?;
    warn_servers(&workspace);
    let agent = Agent::resume(
        Arc::clone(&workspace.runtime),
        workspace.config.clone(),
        &session,
    )?;
    let query = match &args.agent {
        Some(id) => {
            let id = id.parse().map_err(|e| {
                CliError::usage(
                    format!("'{id}' is not an agent id: {e}"),
                    "agent ids look like root.0001-explore; see the session's folder in .zr/sessions",
                )
            })?;
            agent.resume_subagent(&id, args.prompt.clone())
        }
        None => match &args.prompt {
            Some(prompt) => agent.query(prompt.clone(), QueryOverrides::default()),
            None => agent.continue_interrupted(QueryOverrides::default()),
        },
    };
    let mut renderer = render::choose(&args.output);
    let outcome = drive(&agent, query, renderer.as_mut()).await;
    drop(agent);
    drop(workspace);
    outcome
}

/// Streams `query` into `renderer` until it ends or Ctrl-C; prints the
/// answer; returns the exit code.
async fn drive(
    agent: &Agent,
    mut query: Query,
    renderer: &mut dyn Renderer,
) -> Result<u8, CliError> {
    let session = agent.session_id().clone();
    let mut tick = tokio::time::interval(render::TICK);
    let interrupted = loop {
        tokio::select! {
            event = query.next() => match event {
                Some(event) => renderer.event(&event),
                None => break false,
            },
            _ = tokio::signal::ctrl_c() => break true,
            _ = tick.tick() => renderer.tick(),
        }
    };
    if interrupted {
        query.cancel().await;
        renderer.finish(&session, None, Some("interrupted"));
        return Err(CliError::Interrupted);
    }
    match query.finish().await {
        Ok(result) => {
            renderer.finish(&session, Some(&result), None);
            if renderer.prints_answer() {
                print_answer(&result);
            }
            Ok(exit_code(&result))
        }
        Err(e) => {
            let text = crate::session::error_chain(&e);
            renderer.finish(&session, None, Some(&text));
            Err(e.into())
        }
    }
}

fn print_answer(result: &QueryResult) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", result.output);
    if !result.output.ends_with('\n') {
        let _ = writeln!(out);
    }
    let _ = out.flush();
}

/// 0 for a completed run, 1 for one that ended otherwise.
fn exit_code(result: &QueryResult) -> u8 {
    if result.status == TaskStatus::Completed {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// Problems in agent and skill files, as `warning: FILE:LINE: ...` lines
/// on standard error (paths relative to the project); the run goes on
/// without the files that could not be loaded.
fn warn_diagnostics(project: &Project) {
    for d in project.diagnostics() {
        let text = d.display_relative(&project.root).to_string();
        let (marker, note) = match d.severity {
            zr_skills::Severity::Error => (": error: ", " (the file is left out)"),
            _ => (": warning: ", ""),
        };
        let text = text.replacen(marker, ": ", 1);
        eprintln!("warning: {text}{note}");
    }
}

fn warn_servers(workspace: &Workspace) {
    tracing::debug!(
        configured = workspace.hub.config().servers().len(),
        connected = workspace.leases.len(),
        "MCP servers"
    );
    for (server, error) in &workspace.failed_servers {
        eprintln!(
            "warning: MCP server '{server}' is left out, the run goes on without its tools: {error}\n  help: check its entry in .mcp.json (`zr mcp list`); the examples' servers are installed by `cargo xtask deps`"
        );
    }
}
