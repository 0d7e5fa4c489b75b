//! The `zr` command.
//!
//! For now it has one command, `zr resolve --scenario FILE`, which prints
//! every agent's resolved tool pool of a scenario file as a table or JSON.

// The CLI's job is to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use zr_resolve::Scenario;

/// zr: agents that delegate work to subagents, each with its own tools.
#[derive(Debug, Parser)]
#[command(name = "zr", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show which tools each agent can see and run, and why others are gone.
    Resolve(ResolveArgs),
}

#[derive(Debug, clap::Args)]
struct ResolveArgs {
    /// A scenario file (JSON): builtins, options, capabilities, skills,
    /// policy and subagents. No MCP server is started.
    #[arg(long, value_name = "FILE")]
    scenario: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Show only this agent (`root` or a subagent's name).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// A readable table per agent.
    Table,
    /// The JSON documented in DESIGN.md.
    Json,
}

fn resolve(args: &ResolveArgs) -> anyhow::Result<String> {
    tracing::debug!(scenario = %args.scenario.display(), "reading scenario");
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("cannot read scenario file {}", args.scenario.display()))?;
    let scenario = Scenario::from_json(&text)
        .with_context(|| format!("invalid scenario file {}", args.scenario.display()))?;
    let mut report = scenario
        .resolve()
        .with_context(|| format!("cannot resolve scenario {}", args.scenario.display()))?;
    tracing::debug!(agents = report.agents.len(), "resolved every agent");
    if let Some(agent) = &args.agent {
        let names: Vec<&str> = report.agents.iter().map(|a| a.agent.as_str()).collect();
        let Some(only) = report.only(agent) else {
            bail!(
                "no agent '{agent}' in {}; agents: {}",
                args.scenario.display(),
                names.join(", ")
            );
        };
        report = only;
    }
    Ok(match args.format {
        Format::Table => report.to_string(),
        Format::Json => {
            let mut json = serde_json::to_string_pretty(&report)?;
            json.push('\n');
            json
        }
    })
}

/// Logs go to standard error, filtered by `ZR_LOG` (e.g. `ZR_LOG=debug`);
/// standard output carries only the command's result.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ZR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let result = match &cli.command {
        Command::Resolve(args) => resolve(args),
    };
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
