//! `zr host`: the host protocol (`zr_protocol`) over standard input
//! and output, one JSON object per line each way, for the Python and
//! TypeScript packages and any program that drives zr.
//!
//! The session is built from the project (zr.toml, agent types, MCP
//! servers, `[permissions]`, `[hooks]`) as `zr run` builds it, then from
//! the host's `query` options: its agent types are added, its tools become
//! custom tools (`tools.rs`), its `can_use_tool` answers what the rules
//! leave open and its hooks run after zr.toml's (`answers.rs`). Nothing is
//! asked at a terminal. Standard error carries logs and warnings only.
//!
//! `wire.rs` reads and writes the lines; the engine's events go out as
//! their own protocol form (`zr_engine::Event::to_wire`), `events.rs`
//! makes the `result` of a query.

mod answers;
mod events;
mod tools;
mod wire;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use zr_caps::PermissionMode;
use zr_engine::{Agent, Query, QueryOverrides};
use zr_protocol::{HostMessage, PROTOCOL_VERSION, QueryEnd, QueryOptions, ZrMessage};
use zr_types::{SessionId, ToolHandler};

use crate::ask::Asking;
use crate::cli::{HostArgs, ProviderArgs};
use crate::error::{CliError, EXIT_FAILED, EXIT_OK};
use crate::permissions::ConfigPermissions;
use crate::project::Project;
use crate::signal::Signals;
use wire::{Incoming, Wire};

/// `zr host`.
///
/// # Errors
///
/// What stops the session before its first query runs (a project that
/// does not load, no provider, a bad option), also sent to the host as a
/// fatal `error` line with the same text.
pub(crate) async fn host(root: PathBuf, args: &HostArgs) -> Result<u8, CliError> {
    let wire = Arc::new(Wire::default());
    let mut incoming = wire.read_stdin();
    match next(&mut incoming).await {
        None => return Ok(EXIT_OK),
        Some(HostMessage::Hello { protocol, .. }) if protocol == PROTOCOL_VERSION => {
            wire.send(&ZrMessage::Hello {
                protocol: PROTOCOL_VERSION,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            });
        }
        Some(HostMessage::Hello { protocol, .. }) => {
            return fatal(
                &wire,
                CliError::usage(
                    format!(
                        "the host speaks protocol {protocol}; this zr speaks {PROTOCOL_VERSION}"
                    ),
                    "install the zr package and binary of one release",
                ),
            );
        }
        Some(other) => {
            return fatal(
                &wire,
                CliError::usage(
                    format!("the first message must be hello, not {}", kind(&other)),
                    format!("send {{\"type\":\"hello\",\"protocol\":{PROTOCOL_VERSION}}} first"),
                ),
            );
        }
    }
    let (prompt, options) = loop {
        match next(&mut incoming).await {
            None => return Ok(EXIT_OK),
            Some(HostMessage::Query { prompt, options }) => break (prompt, options),
            Some(other) => wire.warn(format!(
                "no session is open: send a query before a {}",
                kind(&other)
            )),
        }
    };
    let project = match crate::preflight::load(root, &provider_args(args, &options)) {
        Ok(project) => project,
        Err(e) => return fatal(&wire, e),
    };
    let session = Session {
        project: &project,
        args,
        wire: &wire,
        options: &options,
    };
    match crate::telemetry::around(&project, session.run(prompt, &mut incoming)).await {
        Ok(code) => Ok(code),
        Err(e) => fatal(&wire, e),
    }
}

/// The next message for the loop; `None` when the host is gone.
async fn next(incoming: &mut mpsc::UnboundedReceiver<Incoming>) -> Option<HostMessage> {
    match incoming.recv().await {
        Some(Incoming::Message(message)) => Some(*message),
        Some(Incoming::Closed) | None => None,
    }
}

/// Sends `error` as a fatal `error` line and returns it.
fn fatal(wire: &Wire, error: CliError) -> Result<u8, CliError> {
    wire.send(&ZrMessage::Error {
        message: error.to_string(),
        help: None,
        fatal: true,
    });
    Err(error)
}

/// A message's `type`, for errors.
fn kind(message: &HostMessage) -> String {
    serde_json::to_value(message)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "message".to_owned())
}

fn provider_args(args: &HostArgs, options: &QueryOptions) -> ProviderArgs {
    ProviderArgs {
        provider: args.provider.provider,
        script: args.provider.script.clone(),
        model: options
            .model
            .clone()
            .or_else(|| args.provider.model.clone()),
    }
}

/// One host's session.
struct Session<'a> {
    project: &'a Project,
    args: &'a HostArgs,
    wire: &'a Arc<Wire>,
    options: &'a QueryOptions,
}

impl Session<'_> {
    async fn run(
        &self,
        prompt: String,
        incoming: &mut mpsc::UnboundedReceiver<Incoming>,
    ) -> Result<u8, CliError> {
        let project = self.project;
        crate::run::warn_diagnostics(project);
        let chosen =
            crate::provider::choose(project, &provider_args(self.args, self.options), &|v| {
                std::env::var(v).ok()
            })?;
        let mut signals = Signals::install();
        let workspace =
            crate::run::open_workspace(project, chosen, Asking::Never, &mut signals).await?;
        crate::run::warn_servers(&workspace);
        let (runtime, config) = self.configure(&workspace)?;
        let agent = match &self.options.resume {
            Some(typed) => {
                let (id, folder) = crate::sessions::find(&project.root, typed)?;
                if let Some(held) = crate::sessions::running(&folder) {
                    return Err(crate::run::resume_checks::running_now(&id, &held));
                }
                Agent::resume(runtime, config, &id)?
            }
            None => Agent::new(runtime, config),
        };
        let _running =
            crate::sessions::RunningMark::acquire(&project.sessions_dir(), agent.session_id())
                .map_err(|held| {
                    crate::run::resume_checks::running_now(agent.session_id(), &held)
                })?;
        let mut prompt = prompt;
        let mut code;
        loop {
            let overrides = QueryOverrides {
                max_turns: self.options.max_turns,
                ..QueryOverrides::default()
            };
            let query = agent.query(prompt, overrides);
            let (end, gone) = drive(&agent, query, self.wire, incoming, &mut signals).await;
            code = if end.status == "completed" {
                EXIT_OK
            } else {
                EXIT_FAILED
            };
            self.wire.send(&ZrMessage::Result(end));
            if gone {
                break;
            }
            prompt = loop {
                match next(incoming).await {
                    None => return Ok(code),
                    Some(HostMessage::Prompt { prompt }) => break prompt,
                    Some(HostMessage::Interrupt) => {}
                    Some(other) => self.wire.warn(format!(
                        "a session is open: send a prompt (the next query of it), not a {}",
                        kind(&other)
                    )),
                }
            };
        }
        drop(agent);
        drop(workspace);
        Ok(code)
    }

    /// The runtime and root configuration of `workspace` with the host's
    /// options: its tools, agent types, permission answers and hooks.
    fn configure(
        &self,
        workspace: &crate::session::Workspace,
    ) -> Result<(Arc<zr_engine::RuntimeEnvironment>, zr_engine::AgentConfig), CliError> {
        let options = self.options;
        let definitions = tools::definitions(&options.tools)?;
        let handler: Arc<dyn ToolHandler> =
            Arc::new(tools::HostToolHandler::new(Arc::clone(self.wire)));
        let mut runtime = (*workspace.runtime).clone();
        for definition in definitions.values() {
            runtime = runtime.with_tool(Arc::clone(definition), Arc::clone(&handler));
        }
        let mut config = workspace.config.clone();
        config
            .options
            .custom_tools
            .extend(definitions.values().cloned());
        for (name, spec) in &options.agents {
            config = config.with_sub_agent(tools::agent(name, spec, &definitions)?);
        }
        if let Some(mode) = &options.permission_mode {
            config.permission_mode = mode.parse().map_err(|_| {
                CliError::usage(
                    format!("unknown permission mode \"{mode}\""),
                    crate::config::suggest(mode, &PermissionMode::ALL.map(PermissionMode::as_str)),
                )
            })?;
        }
        if let Some(prompt) = &options.system_prompt {
            config.system_prompt.clone_from(prompt);
        }
        if let Some(turns) = options.max_turns {
            config.max_turns = turns;
        }
        config.permissions.handler = Some(Arc::new(answers::HostPermissions {
            wire: Arc::clone(self.wire),
            ask_host: options.can_use_tool,
            host_tools: definitions.keys().cloned().collect(),
            config: ConfigPermissions::from_project(self.project)?,
        }));
        let hook = answers::HostHook::new(Arc::clone(self.wire), &options.hooks).map_err(|e| {
            CliError::usage(
                e,
                "write a tool name, names joined by |, or a regular expression",
            )
        })?;
        if let Some(hook) = hook {
            config.hooks = std::mem::take(&mut config.hooks).with(Arc::new(hook));
        }
        Ok((Arc::new(runtime), config))
    }
}

/// Streams `query`'s events to the host until it ends, the host
/// interrupts it or goes away (`true`), or a signal stops it.
async fn drive(
    agent: &Agent,
    mut query: Query,
    wire: &Wire,
    incoming: &mut mpsc::UnboundedReceiver<Incoming>,
    signals: &mut Signals,
) -> (QueryEnd, bool) {
    let session: SessionId = agent.session_id().clone();
    let stopped = loop {
        tokio::select! {
            event = query.next() => match event {
                Some(event) => wire.send(&ZrMessage::Event(event.to_wire())),
                None => break None,
            },
            message = incoming.recv() => match message {
                Some(Incoming::Message(message)) if matches!(*message, HostMessage::Interrupt) => {
                    break Some(("the host interrupted the query".to_owned(), false));
                }
                Some(Incoming::Message(other)) => wire.warn(format!(
                    "a query is running: a {} waits until its result (send interrupt to stop it)",
                    kind(&other)
                )),
                Some(Incoming::Closed) | None => {
                    break Some(("the host closed zr's standard input".to_owned(), true));
                }
            },
            stop = signals.recv() => break Some((format!("{}: stopped", stop.name()), true)),
        }
    };
    if let Some((why, gone)) = stopped {
        query.cancel().await;
        let text = format!(
            "interrupted: {why}; session {session} is saved (resume it with the option resume = \"{session}\")"
        );
        return (events::failed(&session, "interrupted", text), gone);
    }
    match query.finish().await {
        Ok(result) => (events::ended(&session, &result), false),
        Err(e) => (
            events::failed(&session, "error", crate::session::error_chain(&e)),
            false,
        ),
    }
}
