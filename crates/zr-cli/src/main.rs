//! The `zr` command: a project folder's agents, run from a terminal.
//!
//! See `zr --help` and the README. Exit codes: 0 done, 1 the run failed
//! (or ended other than `completed`), 2 the command line or a project file
//! is wrong (nothing ran), 130 interrupted by Ctrl-C (143 by SIGTERM, 129
//! by SIGHUP).
//!
//! zr never asks for permission while it runs: zr.toml's `[permissions]`
//! decides (read-only tools run; other tools only when `allow` lists them
//! or the mode lets them; `deny` refuses in every mode). See
//! [`permissions`].
//!
//! `zr run` and `zr resume` show progress as plain lines on standard error
//! when it is not a terminal ([`render::plain`]); `--json` prints every
//! event as NDJSON on standard output, in the format of [`render::json`].

// The CLI's job is to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ask;
mod cli;
mod clock;
mod config;
mod config_key;
mod config_service;
mod crash_hook;
mod cron;
mod durable;
mod error;
mod hooks;
mod init;
mod inspect;
mod mcp_config;
mod mcp_login;
mod mcp_names;
mod mcp_start;
mod model_aliases;
mod permission_names;
mod permissions;
mod preflight;
mod project;
mod provider;
mod reload;
mod render;
mod resolve;
mod run;
mod serve;
mod services;
mod session;
mod sessions;
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
