//! The command line: every command, flag and help text (clap derive).
//! `zr completions SHELL` is generated from this definition.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// zr: agents that delegate work to subagents, each with its own context,
/// tools, skills and budget.
///
/// Run `zr init` in a project folder, then `zr run "PROMPT"`. Settings live
/// in `zr.toml`, MCP servers in `.mcp.json`, agent types in `.zr/agents/`,
/// skills in `.zr/skills/` and transcripts in `.zr/sessions/`.
#[derive(Debug, Parser)]
#[command(name = "zr", version, about, long_about, propagate_version = true)]
#[command(after_help = TOP_EXAMPLES)]
pub(crate) struct Cli {
    /// The project folder (default: the nearest folder upwards with a
    /// zr.toml, else the current folder).
    #[arg(long, short = 'C', global = true, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create zr.toml, .mcp.json and the .zr folders with commented
    /// defaults, an example agent type and an example skill.
    Init(InitArgs),
    /// Run a prompt: the root agent and its subagents, with live progress,
    /// then the answer.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Serve this project's sessions to a Restate server (durable runs:
    /// `zr run --durable` submits to it; see the README's "Scaling out").
    Worker(WorkerArgs),
    /// Continue a session from its transcripts (after Ctrl-C, a crash or a
    /// finished run).
    #[command(after_help = RESUME_EXAMPLES)]
    Resume(ResumeArgs),
    /// Show which tools each agent can see and run, and why others are gone.
    #[command(after_help = RESOLVE_EXAMPLES)]
    Resolve(ResolveArgs),
    /// Show the settings a run uses and where each comes from: zr.toml
    /// merged with Claude Code's settings files (~/.claude/settings.json,
    /// .claude/settings.json, .claude/settings.local.json).
    #[command(after_help = CONFIG_EXAMPLES)]
    Config(ConfigArgs),
    /// List the agent types, or show one.
    Agents(AgentsArgs),
    /// List the skills, or show one.
    Skills(SkillsArgs),
    /// Show the project's MCP servers and their tools (`zr mcp list`), or
    /// serve the agent types to other MCP hosts (`zr mcp serve`).
    Mcp(McpArgs),
    /// Fire the prompts that `CronCreate` scheduled, each as a new session,
    /// until stopped (`zr cron list` shows them).
    ///
    /// Runs in the foreground: one prompt at a time, each firing shown on
    /// standard error and its answer on standard output; runs missed while
    /// no scheduler ran fire once, with a note to the model. One scheduler
    /// per project: a second `zr cron` refuses to start.
    #[command(after_help = CRON_EXAMPLES)]
    Cron(CronArgs),
    /// Speak the host protocol on standard input and output (JSON lines
    /// both ways; schema/host-protocol.schema.json): how the Python and
    /// TypeScript packages drive zr.
    Host(HostArgs),
    /// List the sessions in .zr/sessions with their status and cost, or
    /// show one (`zr sessions show SESSION`).
    ///
    /// Newest first: status, prompt, agents, turns, tokens (input, output
    /// and prompt cache) and cost (an estimate from the list prices of
    /// known models; tokens of runs cut short are not recorded).
    #[command(after_help = SESSIONS_EXAMPLES)]
    Sessions(SessionsArgs),
    /// Print a shell completion script for bash, zsh, fish, elvish or
    /// PowerShell.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Overwrite files that already exist (otherwise they are kept).
    #[arg(long)]
    pub(crate) force: bool,
}

/// How a run's progress is shown.
#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// Print every event as one JSON object per line (NDJSON) instead of
    /// progress and the answer.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print nothing but the answer.
    #[arg(long, short, conflicts_with = "json")]
    pub(crate) quiet: bool,
}

/// Which model answers.
#[derive(Debug, Args)]
pub(crate) struct ProviderArgs {
    /// The provider (default: zr.toml's `[model] provider`, else the first
    /// of ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL set).
    #[arg(long, value_enum)]
    pub(crate) provider: Option<ProviderKind>,
    /// The script for `--provider scripted` (JSON; see
    /// examples/research-team/script.json).
    #[arg(long, value_name = "FILE")]
    pub(crate) script: Option<PathBuf>,
    /// The model name (default: zr.toml's `[model] name`, else the
    /// provider's default).
    #[arg(long)]
    pub(crate) model: Option<String>,
}

/// `zr host`.
#[derive(Debug, Args)]
pub(crate) struct HostArgs {
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// What to ask the root agent; `-` reads it from standard input (e.g.
    /// `git diff | zr run -` with the task in the piped text);
    /// `/server:prompt` runs an MCP server's prompt, filled with ARGS.
    #[arg(value_name = "PROMPT")]
    pub(crate) prompt: String,
    /// The arguments of a `/server:prompt`: positional in the prompt's
    /// declared order, or `name=value`.
    #[arg(value_name = "ARGS")]
    pub(crate) args: Vec<String>,
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    /// The root's turn limit (default: zr.toml's `[agent] max_turns`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_turns: Option<u32>,
    /// Submit the session to a Restate server (zr.toml's `[durable]
    /// ingress`, or `--ingress`) and print its answer; `zr worker`
    /// processes run it.
    #[arg(long)]
    pub(crate) durable: bool,
    /// The Restate ingress URL of `--durable` (`http://HOST:PORT`).
    #[arg(long, value_name = "URL", requires = "durable")]
    pub(crate) ingress: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// Where to listen for the Restate server (`HOST:PORT`).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9080")]
    pub(crate) listen: String,
    /// The URL the server reaches this worker at (default:
    /// `http://` + the address listened on).
    #[arg(long, value_name = "URL")]
    pub(crate) advertise: Option<String>,
    /// The Restate admin URL to register with (default: zr.toml's
    /// `[durable] admin`; without either, the command to register is
    /// printed).
    #[arg(long, value_name = "URL")]
    pub(crate) admin: Option<String>,
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The session id `zr run` printed (see `zr sessions`).
    #[arg(value_name = "SESSION")]
    pub(crate) session: String,
    /// Run this subagent again (its id, e.g. `root.0001-explore`) instead
    /// of the root.
    #[arg(long, value_name = "ID")]
    pub(crate) agent: Option<String>,
    /// A new prompt; without one, an interrupted run is finished.
    #[arg(value_name = "PROMPT")]
    pub(crate) prompt: Option<String>,
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// A scenario file (JSON) instead of the project: builtins, options,
    /// capabilities, skills, policy and subagents. No MCP server is
    /// started.
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// Show only this agent (`root`, `fork` or an agent type's name).
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct AgentsArgs {
    #[command(subcommand)]
    pub(crate) command: Option<ShowCommand>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, global = true)]
    pub(crate) format: Format,
}

#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
}

#[derive(Debug, Args)]
pub(crate) struct SkillsArgs {
    #[command(subcommand)]
    pub(crate) command: Option<ShowCommand>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, global = true)]
    pub(crate) format: Format,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ShowCommand {
    /// Show one in full.
    Show {
        /// Its name.
        name: String,
    },
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct CronArgs {
    #[command(subcommand)]
    pub(crate) command: Option<CronCommand>,
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CronCommand {
    /// Show the scheduled prompts with their next run (UTC).
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    pub(crate) command: McpCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Connect to every server in .mcp.json and show its status and its
    /// tools with their flags.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Log in to an HTTP server that asks for OAuth: prints a URL to open
    /// in a browser and waits for it on a loopback redirect. The tokens go
    /// to your config folder (~/.config/zr/mcp-auth), never the project.
    Login {
        /// The server's name in .mcp.json.
        server: String,
        /// A scope to ask for (repeatable; "a b" counts as two); by default
        /// the server's challenge or its scopes_supported decide.
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// How long to wait for the browser, in seconds.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
    /// Forget the tokens of a server logged in to.
    Logout {
        /// The server's name in .mcp.json.
        server: String,
    },
    /// Serve the project's agent types as MCP tools, over standard
    /// input and output (or streamable HTTP on loopback with --http), so
    /// that another MCP host can delegate to them.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve streamable HTTP at this loopback address (e.g.
    /// 127.0.0.1:8765; the endpoint is /mcp) instead of standard input
    /// and output.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
}

#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    #[command(subcommand)]
    pub(crate) command: Option<SessionsCommand>,
    /// Output format of the list.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// One session: its agent tree with each agent's type, status, turns,
    /// tokens (and those read from and written to the prompt cache), cost,
    /// start, wait and duration, tool calls and conclusion.
    Show(ShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The session id (`zr sessions` lists them).
    pub(crate) session: String,
    /// Print this agent's conversation instead (tool calls and results
    /// cut short).
    #[arg(long, value_name = "ID")]
    pub(crate) agent: Option<String>,
    /// Also write one self-contained HTML page (no network) with a
    /// timeline of the agents and the tree.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Output format of the inspecting commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Readable text.
    Table,
    /// JSON.
    Json,
}

/// The model providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ProviderKind {
    /// The Anthropic Messages API (ANTHROPIC_API_KEY).
    Anthropic,
    /// OpenAI Chat Completions or a local server speaking it
    /// (OPENAI_API_KEY, OPENAI_BASE_URL).
    Openai,
    /// OpenAI's Responses API (OPENAI_API_KEY, OPENAI_BASE_URL), with
    /// reasoning carried between turns.
    #[value(name = "openai-responses")]
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    /// Replies from a script file, offline (`--script FILE`).
    Scripted,
}

/// `zr run --help`'s examples.
const RUN_EXAMPLES: &str = "\
Examples:
  zr run \"Which modules have no tests? Look at each one in parallel.\"
  zr run --json \"Summarise the README\" > events.ndjson
  zr run --provider scripted --script script.json \"Try it offline\"
  zr run /github:review-pr 1234 focus=security
  zr run -q --model claude-opus-4-1 \"Review the last commit\"

Progress goes to standard error (a live tree on a terminal, lines
otherwise), the answer to standard output. Ctrl-C stops every agent and
prints the session id for `zr resume`.
Exit codes: 0 done, 1 the run failed, 2 wrong usage or project file,
130 interrupted.";

/// `zr resume --help`'s examples.
const RESUME_EXAMPLES: &str = "\
Examples:
  zr resume s-019ad5f3c2e10-5f1c2a9b          finish an interrupted run
  zr resume s-019ad5f3c2e10-5f1c2a9b \"And the tests?\"
  zr resume s-019ad5f3c2e10-5f1c2a9b --agent root.0001-explore \"Look deeper\"

`zr sessions` lists the sessions with their status.";

/// `zr sessions --help`'s examples.
const SESSIONS_EXAMPLES: &str = "\
Examples:
  zr sessions                                       newest first
  zr sessions --format json | jq '.[0].id'
  zr sessions show s-019ad5f3c2e10-5f1c2a9b         the agent tree
  zr sessions show s-019ad5f3c2e10-5f1c2a9b --agent root.0001-explore
  zr sessions show s-019ad5f3c2e10-5f1c2a9b --html run.html";

/// `zr resolve --help`'s examples.
const RESOLVE_EXAMPLES: &str = "\
Examples:
  zr resolve                          every agent of this project
  zr resolve --agent explore          one agent type
  zr resolve --format json | jq .
  zr resolve --scenario examples/research-team.json";

const CONFIG_EXAMPLES: &str = "\
Precedence, highest first: zr.toml's explicit keys, .claude/settings.local.json,
.claude/settings.json, ~/.claude/settings.json. Permission rules of every file
are used together (deny, then ask, then allow: a deny anywhere wins).

Examples:
  zr config                           the merged settings with their origins
  zr config --format json | jq .permissions";

/// `zr --help`'s examples.
const CRON_EXAMPLES: &str = "\
Examples:
  zr cron                             fire the scheduled prompts until Ctrl-C
  zr cron list                        the prompts and their next runs
  zr cron --json >> cron.ndjson       every firing's events, for a log

Prompts are scheduled by the model's CronCreate tool during `zr run` and
kept in .zr/cron.json; they fire only while `zr cron` runs.";

const TOP_EXAMPLES: &str = "\
Examples:
  zr init                          create zr.toml, .mcp.json and .zr/
  zr run \"Where is the config parsed? Explain it briefly.\"
  zr resolve --agent explore       the tools an explore subagent gets
  zr sessions                      past runs, to `zr resume`

Logs go to standard error; set ZR_LOG=debug for more.";

/// `zr completions --help`'s examples.
const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  zr completions bash > ~/.local/share/bash-completion/completions/zr
  zr completions zsh > ~/.zfunc/_zr       (with fpath+=~/.zfunc in ~/.zshrc)
  zr completions fish > ~/.config/fish/completions/zr.fish";
