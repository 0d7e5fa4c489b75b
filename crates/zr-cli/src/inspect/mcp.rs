//! `zr mcp list`: connects to every server of `.mcp.json` at once, each
//! within a time limit, and shows its status and its tools with their
//! flags.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, AgentOptions, merge_root};
use zr_mcp::{McpHub, ServerConfig};
use zr_resolve::{ResolveInput, Role, default_builtins, resolve};
use zr_types::{ToolDefinition, error_chain};

use super::{json_text, table};
use crate::cli::Format;
use crate::error::{CliError, EXIT_FAILED, EXIT_OK};
use crate::mcp_start::{Failure, shown};
use crate::project::{MCP_FILE, Project};
use crate::session::policy;

/// How long one server may take, after its handshake limit (`[mcp]
/// connect_timeout_secs`), to list its tools.
pub(crate) const LIST_TIME_LIMIT: Duration = Duration::from_secs(30);

/// One server's outcome.
#[derive(Debug)]
struct Status {
    config: ServerConfig,
    outcome: Result<Connected, Failure>,
}

/// A server that answered.
#[derive(Debug)]
struct Connected {
    protocol: Option<String>,
    implementation: Option<(String, String)>,
    tools: Vec<Arc<ToolDefinition>>,
    /// The tools with their handlers, until their names are made distinct
    /// across servers (`mcp_names.rs`).
    listed: Vec<zr_mcp::McpTool>,
    /// Each prompt's `zr run` usage (`/server:name <required> [optional]`).
    prompts: Vec<String>,
}

/// `zr mcp list`: exit 0 when every server connects or only needs a login
/// (or there is none), 1 when one fails.
///
/// # Errors
///
/// [`CliError::Config`] for a `[policy]` value of `zr.toml` that is wrong.
pub(crate) async fn list(project: &Project, format: Format) -> Result<u8, CliError> {
    let policy = policy(project, &project.config)?;
    for warning in project.mcp_warnings() {
        eprintln!("{warning}");
    }
    // `.mcp.json`'s servers, then the agent files' inline ones.
    let every = project.hub_config();
    let options = project.hub_options();
    // Start, handshake and tools/list together.
    let limit = options.connect_timeout + LIST_TIME_LIMIT;
    let hub = McpHub::new(every.clone(), options);
    let statuses: Vec<Status> =
        futures_util::future::join_all(every.servers().iter().map(|server| {
            let hub = hub.clone();
            async move {
                let name = server.name.to_string();
                let work = async {
                    let failed = |e: &zr_mcp::McpError| Failure::of(project, server, e);
                    let lease = hub.acquire(&name).await.map_err(|e| failed(&e))?;
                    let tools = lease.tools().await.map_err(|e| failed(&e))?;
                    let prompts = lease.prompts().await.map_err(|e| failed(&e))?;
                    Ok(Connected {
                        prompts: prompts.iter().map(|p| p.usage(&server.name)).collect(),
                        protocol: lease.protocol_version(),
                        implementation: lease.server_implementation(),
                        tools: Vec::new(),
                        listed: tools,
                    })
                };
                let outcome = match tokio::time::timeout(limit, shown(&name, work)).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(Failure::text(
                        project,
                        server,
                        format!(
                            "no answer within {}s (start, handshake and tools/list)",
                            limit.as_secs()
                        ),
                        false,
                    )),
                };
                Status {
                    config: server.clone(),
                    outcome,
                }
            }
        }))
        .await;
    // The names `zr run` gives them: a later server's tool that comes out
    // under an earlier one's name is renamed, with a warning.
    let mut statuses = statuses;
    let order: Vec<_> = every.servers().iter().map(|s| s.name.clone()).collect();
    let mut by_server: std::collections::BTreeMap<String, Vec<zr_mcp::McpTool>> = statuses
        .iter_mut()
        .filter_map(|s| {
            let name = s.config.name.to_string();
            s.outcome
                .as_mut()
                .ok()
                .map(|c| (name, std::mem::take(&mut c.listed)))
        })
        .collect();
    for warning in crate::mcp_names::distinct(&order, &mut by_server) {
        eprintln!("{warning}");
    }
    for status in &mut statuses {
        if let Ok(c) = status.outcome.as_mut() {
            c.tools = by_server
                .remove(status.config.name.as_str())
                .unwrap_or_default()
                .into_iter()
                .map(|t| t.definition)
                .collect();
        }
    }

    // Deferred as the root's pool has them: the resolver's lazy rule on
    // every connected server's tools under the project's [policy].
    let options = AgentOptions {
        mcp_tools: statuses
            .iter()
            .filter_map(|s| s.outcome.as_ref().ok())
            .flat_map(|c| c.tools.iter().cloned())
            .collect(),
        ..AgentOptions::default()
    };
    let caps = merge_root(&options, &AgentCapabilities::default(), None);
    let builtins = default_builtins();
    let input = ResolveInput::new(Role::Root, &builtins, &caps, &[], &policy);
    let deferred: BTreeSet<String> = match resolve(&input) {
        Ok(pool) => pool.deferred().iter().map(|t| t.name.to_string()).collect(),
        Err(e) => {
            tracing::warn!(error = %error_chain(&e), "cannot tell which MCP tools are deferred");
            BTreeSet::new()
        }
    };

    match format {
        Format::Table => print!("{}", text(project, &statuses, &deferred)),
        Format::Json => print!("{}", json_of(&statuses, &deferred)),
    }
    // A server that only needs a login is not broken.
    let failed = statuses
        .iter()
        .any(|s| s.outcome.as_ref().is_err_and(|f| !f.needs_login));
    Ok(if failed { EXIT_FAILED } else { EXIT_OK })
}

/// As `.mcp.json` writes it: a `${VAR}` is never shown expanded.
fn transport(config: &ServerConfig) -> String {
    config.shown()
}

/// `read-only`, `destructive` (`destructive by default` when the server
/// does not say), `idempotent`, `deferred`.
fn flags(tool: &ToolDefinition, deferred: &BTreeSet<String>) -> Vec<&'static str> {
    let mut flags = Vec::new();
    let a = &tool.annotations;
    if tool.is_read_only() {
        flags.push("read-only");
    }
    match a.destructive {
        Some(true) if !a.read_only => flags.push("destructive"),
        None if a.is_destructive() => flags.push("destructive by default"),
        _ => {}
    }
    if a.idempotent == Some(true) {
        flags.push("idempotent");
    }
    if deferred.contains(tool.name.as_str()) {
        flags.push("deferred");
    }
    flags
}

fn text(project: &Project, statuses: &[Status], deferred: &BTreeSet<String>) -> String {
    if statuses.is_empty() {
        return format!(
            "no MCP servers in {}\n",
            project.root.join(MCP_FILE).display()
        );
    }
    let mut out = String::new();
    for (i, s) in statuses.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let name = &s.config.name;
        match &s.outcome {
            Ok(c) => {
                let server = c
                    .implementation
                    .as_ref()
                    .map_or_else(|| "unknown".to_owned(), |(n, v)| format!("{n} {v}"));
                let protocol = c.protocol.as_deref().unwrap_or("unknown");
                out.push_str(&format!(
                    "{name}: connected ({}; server {server}; protocol {protocol})\n",
                    transport(&s.config)
                ));
                out.push_str(&format!("  tools ({}):\n", c.tools.len()));
                let rows: Vec<Vec<String>> = c
                    .tools
                    .iter()
                    .map(|t| {
                        let flags = flags(t, deferred);
                        vec![
                            format!("    {}", t.name),
                            if flags.is_empty() {
                                "-".to_owned()
                            } else {
                                flags.join(", ")
                            },
                        ]
                    })
                    .collect();
                let body = table(&["", ""], &rows);
                // Skip the empty header line.
                out.extend(body.lines().skip(1).map(|l| format!("{l}\n")));
                if !c.prompts.is_empty() {
                    out.push_str(&format!("  prompts ({}, zr run ...):\n", c.prompts.len()));
                    out.extend(c.prompts.iter().map(|p| format!("    {p}\n")));
                }
            }
            Err(failure) if failure.needs_login => {
                out.push_str(&format!(
                    "{name}: needs login ({})\n  {}\n  help: {}\n",
                    transport(&s.config),
                    failure.error,
                    failure.help
                ));
            }
            Err(failure) => {
                out.push_str(&format!(
                    "{name}: failed ({})\n  error: {}\n  help: {}\n",
                    transport(&s.config),
                    failure.error,
                    failure.help
                ));
            }
        }
    }
    out
}

fn json_of(statuses: &[Status], deferred: &BTreeSet<String>) -> String {
    let servers: Vec<Value> = statuses
        .iter()
        .map(|s| {
            let mut v = json!({
                "name": s.config.name.to_string(),
                "transport": transport(&s.config),
            });
            match &s.outcome {
                Ok(c) => {
                    v["status"] = "connected".into();
                    v["protocol_version"] = c.protocol.clone().into();
                    v["server"] = c
                        .implementation
                        .as_ref()
                        .map_or(Value::Null, |(n, ver)| json!({"name": n, "version": ver}));
                    v["tools"] = c
                        .tools
                        .iter()
                        .map(|t| {
                            json!({
                                "name": t.name.to_string(),
                                "description": t.description,
                                "read_only": t.is_read_only(),
                                "destructive": !t.is_read_only() && t.annotations.is_destructive(),
                                "idempotent": t.annotations.idempotent == Some(true),
                                "deferred": deferred.contains(t.name.as_str()),
                            })
                        })
                        .collect();
                    v["prompts"] = c.prompts.clone().into();
                }
                Err(failure) => {
                    v["status"] = if failure.needs_login {
                        "needs_login"
                    } else {
                        "failed"
                    }
                    .into();
                    v["error"] = failure.error.clone().into();
                    v["help"] = failure.help.clone().into();
                }
            }
            v
        })
        .collect();
    json_text(&json!({ "servers": servers }))
}
