//! `zr mcp serve`: the project's agent types as MCP tools, so that another
//! MCP host (Claude Code, an IDE, a script on the official SDKs) can
//! delegate to zr's isolated, budgeted subagents.
//!
//! - **Transports.** Standard input and output by default (the host
//!   starts `zr mcp serve` as a child, as `.mcp.json` says); with
//!   `--http ADDR`, streamable HTTP on a loopback address only, with
//!   rmcp's DNS-rebinding protection: a request whose `Host` is not
//!   `localhost`, `127.0.0.1` or `::1`, or whose `Origin` is not one of
//!   those at the served port, is refused with 403; bounded so that local
//!   clients cannot tie it up (`serve/http.rs`).
//! - **Tools.** One per agent type the root's `Task` could start
//!   (`serve/tools.rs`), named in snake case; the input is the `Task`
//!   call's `prompt` and `description` (the type is the tool;
//!   `run_in_background` has no meaning to a caller that waits for the
//!   answer). Types are read once at start: a type added later needs a
//!   restart.
//! - **Calls.** Each call is one `Task` call of the session's root through
//!   the engine ([`zr_engine::Agent::run_task`]): the type's pool, budget,
//!   permission mode and the `[subagents]` limits, the one subagent
//!   lifecycle. The answer is the conclusion (an error result unless the
//!   subagent completed or summarised at its turn limit) with the task's
//!   status, agent id, turns, usage and duration under `_meta.zr`.
//!   Calls may run at once (each has its own time budget).
//! - **Permissions.** Nobody can be asked: calls that `[permissions]`
//!   leaves open are denied with the key to set, as without a terminal.
//! - **Protocol errors.** A message on standard input longer than 16 MiB
//!   is answered -32600 naming the limit (with its id when the start of
//!   the line shows it, else a null id), not dropped; over HTTP a body
//!   that is not JSON gets HTTP 400 with a -32700 parse error, and JSON
//!   that is no JSON-RPC message 400 with -32600; a method this server
//!   answers whose parameters do not fit gets -32602 (invalid params).
//! - **Sessions.** One zr session per server run: its transcripts (one
//!   per call's subagent, `root.NNNN-TYPE.jsonl`) are under
//!   `.zr/sessions/<session>/`, locked while the server runs, so that
//!   `zr sessions show` lists every call of the run.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use zr_engine::Agent;

use crate::ask::Asking;
use crate::cli::ServeArgs;
use crate::error::{CliError, EXIT_OK};
use crate::project::Project;
use crate::provider;
use crate::run::{open_workspace, warn_aliases, warn_diagnostics, warn_servers};
use crate::serve::handler::{AgentServer, Served};
use crate::serve::tools::AgentTools;
use crate::signal::Signals;

mod handler;
mod http;
mod jsonrpc;
mod stdio;
mod tools;

/// `zr mcp serve [--http ADDR]`: serves until standard input closes (or,
/// over HTTP, until a signal); a signal stops it at once.
///
/// # Errors
///
/// [`CliError`] for a project, provider or address that is wrong, or a
/// transport that fails.
pub(crate) async fn serve(root: PathBuf, args: &ServeArgs) -> Result<u8, CliError> {
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        return Err(CliError::usage(
            format!("zr mcp serve --http serves loopback addresses only, not {addr}"),
            "give 127.0.0.1:PORT, [::1]:PORT (a remote host reaches it through an SSH tunnel or a proxy of its own)",
        ));
    }
    let project = Project::load(root)?;
    crate::telemetry::around(&project, serve_loaded(&project, args)).await
}

/// `zr mcp serve` once the project is loaded (its agents' spans exported
/// with `[telemetry]`).
async fn serve_loaded(project: &Project, args: &ServeArgs) -> Result<u8, CliError> {
    warn_diagnostics(project);
    let chosen = provider::choose(project, &args.provider, &|v| project.var(v))?;
    warn_aliases(project, chosen.kind);
    let mut signals = Signals::install();
    let workspace = open_workspace(project, chosen, Asking::Never, &mut signals).await?;
    warn_servers(&workspace);
    let agent = Agent::new(Arc::clone(&workspace.runtime), workspace.config.clone());
    let _running =
        crate::sessions::RunningMark::acquire(&project.sessions_dir(), agent.session_id())
            .map_err(|held| crate::run::resume_checks::running_now(agent.session_id(), &held))?;
    tracing::info!(session = %agent.session_id(), "serving the agent types over MCP");
    let tools = AgentTools::new(&agent.config().sub_agents);
    let served = Arc::new(Served { agent, tools });
    let outcome = match args.http {
        Some(addr) => http::serve(addr, Arc::clone(&served), &mut signals).await,
        None => stdio(AgentServer::new(Arc::clone(&served)), &mut signals).await,
    };
    // The agent (its subagents, their processes) stops before the MCP
    // servers it uses.
    drop(served);
    drop(workspace);
    outcome
}

/// Serves one MCP session on standard input and output until the input
/// closes or a signal comes.
async fn stdio(server: AgentServer, signals: &mut Signals) -> Result<u8, CliError> {
    let (transport, writer) = stdio::transport(tokio::io::stdin(), tokio::io::stdout());
    let running = server
        .serve(transport)
        .await
        .map_err(|e| CliError::usage(
            format!("the MCP client's handshake on standard input failed: {e}"),
            "zr mcp serve speaks MCP on standard input and output: start it from an MCP host (see the README's \"zr as an MCP server\")",
        ))?;
    tokio::select! {
        ended = running.waiting() => {
            if let Err(error) = ended {
                tracing::warn!(%error, "the MCP session ended with an error");
            }
            // The last answers are written before zr exits.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
            Ok(EXIT_OK)
        }
        stop = signals.recv() => Err(stop.into()),
    }
}
