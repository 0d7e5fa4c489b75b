//! The `zr` command: a project folder's agents, run from a terminal.
//!
//! See `zr --help` and the README. Exit codes: 0 done, 1 the run failed
//! (or ended other than `completed`), 2 the command line or a project file
//! is wrong (nothing ran), 130 interrupted by Ctrl-C (143 by SIGTERM, 129
//! by SIGHUP).
//!
//! zr.toml's `[permissions]` and `[sandbox]` set the engine's permission
//! rules and effects boundary (read-only tools run; other tools when
//! `allow` lists them or the mode lets them; `deny` refuses in every mode;
//! a path outside the project or a protected file is a question). What the
//! rules leave open is asked about on a terminal (a foreground agent) and
//! refused otherwise (no terminal, `dontAsk`, a background agent).
//! See [`permissions`].
//!
//! `zr run` and `zr resume` show progress as plain lines on standard error
//! when it is not a terminal ([`render::plain`]); `--json` prints every
//! event as NDJSON on standard output, in the format of [`render::json`].
//!
//! # Structure
//!
//! `cli.rs` is the whole command line (clap derive; `zr completions` comes
//! from it); `main.rs` dispatches and starts logging; `error.rs` maps
//! errors to exit codes.
//!
//! - Reading a project: `project.rs` (find it, load its files),
//!   `preflight.rs` (everything `zr run` reads, checked together),
//!   `config.rs` (`zr.toml`), `config_key.rs` (tool patterns from
//!   `zr.toml` and the error that points at a key's line),
//!   `mcp_config.rs` (`.mcp.json` errors by file and line), `init.rs` (+
//!   `init/`, the templates: `zr init`); `claude_settings.rs` (+
//!   `claude_settings/`: Claude Code's `settings.json` files, every value
//!   with its file, line and column, merged by one precedence),
//!   `instructions.rs` (the instruction files as `zr` shows them).
//! - What a run is built from: `provider.rs` (which provider),
//!   `model_aliases.rs`; `permissions.rs` (`[permissions]` and `[sandbox]`
//!   as the engine's `PermissionConfig`, and the handler of what the rules
//!   leave open), `permission_names.rs` (typos in `[permissions]`);
//!   `ask.rs` (+ `ask/`): on a terminal, the permission question, the
//!   `AskUserQuestion` service and MCP servers' forms, one at a time,
//!   pausing the renderer; `hooks.rs` (+ `hooks/`): `[hooks]` commands, one
//!   engine `Hook` each, started through zr-process; `services.rs` (the
//!   `WebSearch` backend), `config_service.rs` (the `Config` tool's safe
//!   `zr.toml` settings); `telemetry.rs` (`[telemetry]` and `OTEL_*`: the
//!   exporter's tracer given to every runtime the process builds, then the
//!   bounded flush).
//! - `session.rs`: `Workspace::open` (MCP leases, tools registered with the
//!   runtime, skills granted per agent through an `AgentObserver`, the
//!   root's `AgentConfig` from `zr.toml`); `reload.rs` (hot reload's
//!   source); `mcp_start.rs` (a slow or failed server, as a person sees
//!   it); `mcp_names.rs` (two servers' tools that come out under one
//!   name: the later one renamed, with a warning); `mcp_login.rs` (`zr
//!   mcp login`/`logout`).
//! - Running: `run.rs` (+ `run/background.rs`, `run/resume_checks.rs`,
//!   `run/mcp_prompt.rs`: `zr run /server:prompt ARGS`): `zr run` and `zr
//!   resume`; `signal.rs` (SIGINT, SIGTERM, SIGHUP to a cancelled run);
//!   `render.rs` (+ `render/`): the live tree, plain lines and NDJSON, all
//!   following one `AgentTable` (`render/state.rs`); `crash_hook.rs` (the
//!   test-only SIGKILL after N transcript records, debug builds);
//!   `durable.rs` (+ `durable/follow.rs`): `zr worker`, `zr run --durable`
//!   and `zr resume` of a durable session, through zr-restate; `cron.rs`
//!   (`zr cron`, on `clock.rs`'s clock).
//! - `serve.rs` (+ `serve/`): `zr mcp serve`, the agent types as MCP tools
//!   on rmcp's server side (`tools.rs`, `handler.rs` through
//!   `Agent::run_task`; `stdio.rs`, lines up to 16 MiB, a longer one
//!   answered with an error naming the limit; `http.rs`: streamable HTTP
//!   on loopback, with `http/front.rs` turning a body rmcp cannot read
//!   into a JSON-RPC error, `http/limits.rs` the head and body timeouts
//!   and the connection cap, `http/sessions.rs` idle expiry and a cap on
//!   MCP sessions; `jsonrpc.rs` the error lines both use).
//! - Inspecting: `inspect.rs` (+ `inspect/`): `zr agents`, `zr skills`,
//!   `zr mcp list`; `settings_view.rs`: `zr config` (the merged settings
//!   and where each comes from); `resolve.rs`: `zr resolve` (through
//!   `Agent::preview_pools`); `sessions.rs` (+ `sessions/`): `zr sessions`
//!   and `zr sessions show`, one stack: `read.rs` (one transcript, read
//!   tolerantly) → `view.rs` (`SessionView`) → `show.rs` (the tree),
//!   `conversation.rs` (`--agent`), `timeline.rs` (`--html`); `running.rs`:
//!   the session's `flock`, `zr.pid`, the process record and what a killed
//!   run left.
//!
//! Tests (`tests/it/`, one binary) run the built `zr` as a child process in
//! temporary project folders with a clean environment (`support.rs`);
//! `wiring.rs` is the wiring test; `tests/corpus/` holds agent files in the
//! shapes Claude Code users write.

// The CLI's job is to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ask;
mod claude_names;
mod claude_settings;
mod cli;
mod clock;
mod config;
mod config_key;
mod config_service;
mod crash_hook;
mod cron;
mod durable;
mod error;
mod hook_matcher;
mod hooks;
mod host;
mod init;
mod inspect;
mod instructions;
mod mcp_config;
mod mcp_login;
mod mcp_names;
mod mcp_start;
mod model_aliases;
mod model_profiles;
mod permission_names;
mod permissions;
mod preflight;
mod project;
mod provider;
mod reload;
mod remote_agents;
mod render;
mod resolve;
mod run;
mod serve;
mod services;
mod session;
mod sessions;
mod settings_view;
mod signal;
mod telemetry;

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser as _};

use crate::cli::{Cli, Command};
use crate::error::{CliError, EXIT_OK};
use crate::project::Project;

/// Runs the command; `Ok` holds the exit code.
async fn dispatch(cli: Cli) -> Result<u8, CliError> {
    let project = || Project::locate(cli.project.as_deref());
    match &cli.command {
        Command::Run(args) if args.durable => durable::submit(project()?, args).await,
        Command::Run(args) => run::run(project()?, args).await,
        Command::Host(args) => host::host(project()?, args).await,
        Command::Worker(args) => durable::worker(project()?, args).await,
        Command::Resume(args) => {
            let root = project()?;
            match durable::resume(&root, args).await {
                Some(done) => done,
                None => run::resume(root, args).await,
            }
        }
        Command::Resolve(args) => {
            let out = match &args.scenario {
                Some(path) => resolve::scenario(args, path)?,
                None => resolve::project(&Project::load(project()?)?, args).await?,
            };
            print!("{out}");
            Ok(EXIT_OK)
        }
        Command::Completions(args) => {
            clap_complete::generate(
                args.shell,
                &mut Cli::command(),
                "zr",
                &mut std::io::stdout(),
            );
            Ok(EXIT_OK)
        }
        Command::Config(args) => {
            print!(
                "{}",
                settings_view::show(&Project::load(project()?)?, args.format)?
            );
            Ok(EXIT_OK)
        }
        Command::Agents(args) => inspect::agents::run(&Project::load(project()?)?, args),
        Command::Skills(args) => inspect::skills::run(&Project::load(project()?)?, args),
        Command::Mcp(cli::McpArgs { command }) => match command {
            cli::McpCommand::List { format } => {
                inspect::mcp::list(&Project::load(project()?)?, *format).await
            }
            cli::McpCommand::Login {
                server,
                scopes,
                timeout,
            } => {
                let project = Project::load(project()?)?;
                let timeout = std::time::Duration::from_secs(*timeout);
                mcp_login::login(&project, server, scopes, timeout).await
            }
            cli::McpCommand::Logout { server } => {
                mcp_login::logout(&Project::load(project()?)?, server)
            }
            cli::McpCommand::Serve(args) => serve::serve(project()?, args).await,
        },
        Command::Cron(args) => match &args.command {
            None => cron::run(project()?, args).await,
            Some(cli::CronCommand::List { format }) => {
                print!("{}", cron::list(&Project::load(project()?)?, *format)?);
                Ok(EXIT_OK)
            }
        },
        Command::Init(args) => {
            print!("{}", init::init(cli.project.as_deref(), args)?);
            Ok(EXIT_OK)
        }
        Command::Sessions(args) => {
            let root = project()?;
            let (durable, unreachable) = durable::sessions(&root).await;
            let (out, mut warnings) = sessions::command(&root, args, &durable)?;
            warnings.extend(unreachable);
            for warning in warnings {
                eprintln!("warning: {warning}");
            }
            print!("{out}");
            Ok(EXIT_OK)
        }
    }
}

/// Logs go to standard error (above the live tree while it is drawn),
/// filtered by `ZR_LOG` (e.g. `ZR_LOG=debug`); standard output carries
/// only the command's result. By default the MCP library (`rmcp`) is
/// silent: zr-mcp reports its failures as errors that say what to do, and
/// its own lines are internal. Whatever `ZR_LOG` says, the OAuth code of
/// `rmcp` logs nothing below `info` ([`zr_mcp::SECRET_LOG_TARGET`]): its
/// debug lines carry the authorization code and token responses.
/// (Telemetry does not go through the subscriber: `telemetry::around`.)
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ZR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"));
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::FilterExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let lines = tracing_subscriber::fmt::layer()
        .with_writer(|| crate::render::held_logs::LogWriter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .with_filter(filter.and(tracing_subscriber::filter::filter_fn(|meta| {
            !(meta.target().starts_with(zr_mcp::SECRET_LOG_TARGET)
                && *meta.level() > tracing::Level::INFO)
        })));
    tracing_subscriber::registry().with(lines).init();
}

/// Kills what zr's commands and hooks started that left their process
/// group (`setsid sleep 600 &`) and still runs, and says so: no process
/// outlives zr, however the run ended short of a SIGKILL (after one, the
/// next `zr resume` of the session kills them).
fn kill_strays() {
    let strays = zr_process::strays();
    if strays.is_empty() {
        return;
    }
    zr_process::kill_strays(&strays);
    let list: Vec<String> = strays
        .iter()
        .map(|s| format!("pid {}: {}", s.pid, s.command))
        .collect();
    eprintln!(
        "warning: killed {} process{} that zr's commands or hooks left running: {}",
        strays.len(),
        if strays.len() == 1 { "" } else { "es" },
        list.join("; ")
    );
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(error::EXIT_FAILED);
        }
    };
    let result = runtime.block_on(dispatch(cli));
    // Children (MCP servers, shells) were stopped by the drops inside
    // `dispatch`; do not wait on stray blocking tasks.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    kill_strays();
    match result {
        Ok(code) => ExitCode::from(code),
        // The run already said how it stopped.
        Err(err @ CliError::Stopped { .. }) => ExitCode::from(err.exit_code()),
        Err(err) => {
            eprintln!("error: {}", zr_types::error_chain(&err));
            ExitCode::from(err.exit_code())
        }
    }
}
