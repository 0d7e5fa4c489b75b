//! `zr.toml`: the project's settings, every key optional, unknown keys
//! refused; errors name the file, line, column and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cli::ProviderKind;
use crate::error::CliError;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ZrConfig {
    /// `[model]`.
    pub(crate) model: ModelConfig,
    /// `[agent]`: the root.
    pub(crate) agent: RootConfig,
    /// `[subagents]`.
    pub(crate) subagents: SubagentsConfig,
    /// `[budget]`: what each run's whole tree (root and every subagent
    /// together) may spend: `tokens`, `cost_usd`.
    pub(crate) budget: zr_engine::TreeBudget,
    /// `[tools]`: session-wide allow and deny lists.
    pub(crate) tools: ToolsConfig,
    /// `[policy]`: the resolver's policy.
    pub(crate) policy: PolicyConfig,
    /// `[compaction]`.
    pub(crate) compaction: CompactionSettings,
    /// `[permissions]`.
    pub(crate) permissions: PermissionsConfig,
    /// `[sandbox]`.
    pub(crate) sandbox: SandboxSettings,
    /// `[web_fetch]`.
    pub(crate) web_fetch: WebFetchSettings,
    /// `[mcp]`: time limits of the MCP servers.
    pub(crate) mcp: McpSettings,
    /// `[skills]`: how skills are shown to the model.
    pub(crate) skills: SkillsSettings,
    /// `[web_search]`: the search service behind `WebSearch`.
    pub(crate) web_search: WebSearchSettings,
    /// `[hooks]`: shell commands run at PreToolUse, PostToolUse,
    /// SubagentStart, SubagentStop, Stop, UserPromptSubmit, SessionStart,
    /// SessionEnd, PreCompact and Notification, in Claude Code's shape.
    pub(crate) hooks: HooksConfig,
    /// `[telemetry]`: OpenTelemetry export; off without the table (and
    /// without the `OTEL_EXPORTER_OTLP_*` variables).
    pub(crate) telemetry: Option<TelemetrySettings>,
    /// `[durable]`: the Restate server of `zr run --durable` and
    /// `zr worker`.
    pub(crate) durable: DurableSettings,
    /// `[providers.NAME]`: provider profiles; an agent runs on one with
    /// `model: NAME:model-id`.
    pub(crate) providers: BTreeMap<String, ProfileConfig>,
}

/// `[providers.NAME]`: a named provider (read by `provider.rs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileConfig {
    /// The wire: `anthropic`, `openai` (Chat Completions) or
    /// `openai-responses`.
    pub(crate) kind: ProviderKind,
    /// The API's base URL; `None`: the wire's public API.
    pub(crate) base_url: Option<String>,
    /// The environment variable holding the key; `None`: none sent
    /// (a local server).
    pub(crate) api_key_env: Option<String>,
    /// alias -> model id on this provider (`model: NAME:alias`).
    #[serde(default)]
    pub(crate) aliases: BTreeMap<String, String>,
}

/// `[durable]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct DurableSettings {
    /// The ingress URL (`http://HOST:8080`) turns are submitted to.
    pub(crate) ingress: Option<String>,
    /// The admin URL (`http://HOST:9070`) a worker registers with.
    pub(crate) admin: Option<String>,
}

/// `[telemetry]`: where the spans of a run go. Read by `telemetry.rs`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TelemetrySettings {
    /// `false` turns export off, whatever the variables say.
    pub(crate) enabled: Option<bool>,
    /// The OTLP/HTTP traces URL (default: `OTEL_EXPORTER_OTLP_*`, else
    /// `http://localhost:4318/v1/traces`).
    pub(crate) endpoint: Option<String>,
    /// Headers of every export request.
    pub(crate) headers: BTreeMap<String, String>,
    /// Send prompts, answers, tool arguments and results too.
    pub(crate) capture_content: bool,
    /// `service.name` (default `zr`).
    pub(crate) service_name: Option<String>,
    /// The export queue's bound, in spans (1 to 1,000,000).
    #[serde(deserialize_with = "within::<_, _, 1, 1_000_000>")]
    pub(crate) queue_size: Option<usize>,
}

/// `[hooks]`: per event, groups of commands with a matcher, in Claude
/// Code's shape (`hooks.rs` runs them); also the shape of the `hooks` of
/// an agent file's front matter and of `.claude/settings.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct HooksConfig {
    /// Before a tool call; may block, allow, ask or rewrite it.
    #[serde(rename = "PreToolUse")]
    pub(crate) pre_tool_use: Vec<HookGroup>,
    /// After a tool call ran; may tell the model something with its
    /// result.
    #[serde(rename = "PostToolUse")]
    pub(crate) post_tool_use: Vec<HookGroup>,
    /// A subagent was created.
    #[serde(rename = "SubagentStart")]
    pub(crate) subagent_start: Vec<HookGroup>,
    /// A subagent is about to stop (may keep it working), or ended
    /// otherwise.
    #[serde(rename = "SubagentStop")]
    pub(crate) subagent_stop: Vec<HookGroup>,
    /// The root is about to stop (may keep it working).
    #[serde(rename = "Stop")]
    pub(crate) stop: Vec<HookGroup>,
    /// The user sent a prompt (may refuse it or add context).
    #[serde(rename = "UserPromptSubmit")]
    pub(crate) user_prompt_submit: Vec<HookGroup>,
    /// The session's first query (may add context).
    #[serde(rename = "SessionStart")]
    pub(crate) session_start: Vec<HookGroup>,
    /// The session ended.
    #[serde(rename = "SessionEnd")]
    pub(crate) session_end: Vec<HookGroup>,
    /// An agent's history is about to be compacted.
    #[serde(rename = "PreCompact")]
    pub(crate) pre_compact: Vec<HookGroup>,
    /// A person is about to be asked whether a call may run.
    #[serde(rename = "Notification")]
    pub(crate) notification: Vec<HookGroup>,
    /// How many Stop (or SubagentStop) blocks in a row keep one agent
    /// working (default 8, as Claude Code; 0 to 100; 0: none).
    #[serde(deserialize_with = "within::<_, _, 0, 100>")]
    pub(crate) max_stop_blocks: Option<u32>,
}

/// `{ matcher = "Bash", hooks = [...] }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct HookGroup {
    /// What the commands run for: tool names (PreToolUse, PostToolUse),
    /// agent types (SubagentStart, SubagentStop), `startup`/`resume`
    /// (SessionStart), `manual`/`auto` (PreCompact), the notification's
    /// type (Notification), the end's reason (SessionEnd); a name, `A|B`,
    /// a regular expression; empty or `*`: all. Stop and
    /// UserPromptSubmit have none.
    pub(crate) matcher: Option<String>,
    /// The commands, run in order.
    pub(crate) hooks: Vec<HookCommand>,
}

/// `{ type = "command", command = "...", timeout = 60 }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HookCommand {
    /// Only `"command"`.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// Run with `sh -c` in the project folder.
    pub(crate) command: String,
    /// Seconds it may take (default 60; 1 to 86,400, a day).
    #[serde(default, deserialize_with = "within::<_, _, 1, 86_400>")]
    pub(crate) timeout: Option<u64>,
}

/// `[web_search]`: without `backend`, `WebSearch` is in no pool.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct WebSearchSettings {
    /// `"searxng"` or `"brave"`.
    pub(crate) backend: Option<SearchBackendKind>,
    /// SearXNG: the instance's address (required). Brave: the endpoint
    /// (default: the public API).
    pub(crate) url: Option<String>,
    /// Brave: the environment variable holding the subscription token
    /// (default `BRAVE_SEARCH_API_KEY`).
    pub(crate) api_key_env: Option<String>,
    /// Results per search (1 to 20, default 10; `services.rs` says why
    /// more is refused).
    #[serde(deserialize_with = "within::<_, _, 1, 1_000>")]
    pub(crate) max_results: Option<usize>,
    /// Seconds one search may take (default 20; 1 to 3,600).
    #[serde(deserialize_with = "within::<_, _, 1, 3_600>")]
    pub(crate) timeout_secs: Option<u64>,
}

/// `[web_search] backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SearchBackendKind {
    /// A SearXNG instance's JSON API.
    Searxng,
    /// The Brave Search API.
    Brave,
}

/// `[skills]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SkillsSettings {
    /// The size limit, in characters, of the skill listing in each agent's
    /// `Skill` tool description; skills beyond it are left out and counted
    /// (at most 1,000,000).
    #[serde(deserialize_with = "within::<_, _, 0, 1_000_000>")]
    pub(crate) listing_chars: Option<usize>,
}

/// The seconds an MCP server may take to start and answer the handshake
/// when `zr.toml` says nothing: long enough for a server started through
/// `npx` that downloads its package first.
pub(crate) const DEFAULT_CONNECT_TIMEOUT_SECS: u64 = 30;
/// The seconds one MCP tool call may take when `zr.toml` says nothing.
pub(crate) const DEFAULT_CALL_TIMEOUT_SECS: u64 = 120;

/// `[mcp]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct McpSettings {
    /// Seconds a server may take to start and answer the handshake (1 to
    /// 86,400).
    #[serde(deserialize_with = "within::<_, _, 1, 86_400>")]
    pub(crate) connect_timeout_secs: Option<u64>,
    /// Seconds one tool call may take (1 to 86,400).
    #[serde(deserialize_with = "within::<_, _, 1, 86_400>")]
    pub(crate) call_timeout_secs: Option<u64>,
    /// The folders servers are told they may work in (MCP roots),
    /// relative to the project folder; `None`: the project folder.
    pub(crate) roots: Option<Vec<PathBuf>>,
}

/// `[model]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ModelConfig {
    /// The provider; `None`: from the environment.
    pub(crate) provider: Option<ProviderKind>,
    /// The model name; `None`: the provider's default.
    pub(crate) name: Option<String>,
    /// The most tokens one reply may have (1 to 1,000,000).
    #[serde(deserialize_with = "within::<_, _, 1, 1_000_000>")]
    pub(crate) max_tokens: Option<u32>,
    /// The API's base URL (an OpenAI-compatible local server, a proxy).
    pub(crate) base_url: Option<String>,
    /// The environment variable holding the API key (default
    /// `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`).
    pub(crate) api_key_env: Option<String>,
    /// The script of `provider = "scripted"`, relative to the project.
    pub(crate) script: Option<PathBuf>,
    /// `[model.aliases]`: alias -> model id, added to (or overriding)
    /// zr-caps' table for the provider.
    pub(crate) aliases: BTreeMap<String, String>,
}

/// `[agent]`: the root agent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RootConfig {
    /// The root's system prompt.
    pub(crate) system_prompt: Option<String>,
    /// The root's turn limit (1 to 100,000).
    #[serde(deserialize_with = "within::<_, _, 1, 100_000>")]
    pub(crate) max_turns: Option<u32>,
}

/// `[subagents]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SubagentsConfig {
    /// Whether the root may delegate at all.
    pub(crate) enabled: Option<bool>,
    /// Subagents of one agent running at once, over the Task and MultiTask
    /// calls of its turn (1 to 1,024).
    #[serde(deserialize_with = "within::<_, _, 1, 1_024>")]
    pub(crate) max_concurrent: Option<usize>,
    /// Seconds one Task/MultiTask call may take, queueing included (1 to
    /// 604,800, a week).
    #[serde(deserialize_with = "within::<_, _, 1, 604_800>")]
    pub(crate) timeout_secs: Option<u64>,
    /// Seconds between progress summaries of background agents (0: off;
    /// at most 86,400).
    #[serde(deserialize_with = "within::<_, _, 0, 86_400>")]
    pub(crate) progress_interval_secs: Option<u64>,
    /// The size limit, in characters, of the listing of subagent types in
    /// the `Task` tool's description; past it descriptions are shortened,
    /// then types are left out and counted (still reachable by name).
    #[serde(deserialize_with = "within::<_, _, 0, 1_000_000>")]
    pub(crate) listing_chars: Option<usize>,
    /// Levels of subagents (1 to 16; 1: only the root delegates): agents
    /// below this depth keep Task and MultiTask, those at it lose them.
    #[serde(deserialize_with = "within::<_, _, 1, 16>")]
    pub(crate) max_depth: Option<u32>,
}

/// `[tools]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ToolsConfig {
    /// The root's allow list (tool names or patterns such as `mcp__github__*`).
    pub(crate) allow: Option<Vec<String>>,
    /// The session-wide deny list: no agent gets these.
    pub(crate) deny: Option<Vec<String>>,
}

/// `[policy]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PolicyConfig {
    /// `"always"`, `"never"` or a byte count: when MCP tools are deferred
    /// to FindTool.
    pub(crate) lazy: Option<LazySetting>,
    /// Tools no derived subagent gets.
    pub(crate) derived_blocklist: Option<Vec<String>>,
    /// The only builtins a background subagent keeps.
    pub(crate) background_allowlist: Option<Vec<String>>,
}

/// `[policy] lazy`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(crate) enum LazySetting {
    /// `"always"` or `"never"`.
    Word(String),
    /// Defer once the definitions exceed this many bytes.
    Bytes(usize),
}

/// `[compaction]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct CompactionSettings {
    /// Whether long histories are summarised.
    pub(crate) enabled: Option<bool>,
    /// The model's context window in tokens (at most 100,000,000).
    #[serde(deserialize_with = "within::<_, _, 0, 100_000_000>")]
    pub(crate) context_window: Option<u64>,
    /// Compact above this many tokens (at most 100,000,000).
    #[serde(deserialize_with = "within::<_, _, 0, 100_000_000>")]
    pub(crate) threshold: Option<u64>,
    /// Tool results above this many bytes are cut and saved to a file (at
    /// most 1,000,000,000).
    #[serde(deserialize_with = "within::<_, _, 0, 1_000_000_000>")]
    pub(crate) max_tool_result_bytes: Option<usize>,
}

/// `[permissions]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PermissionsConfig {
    /// The root's permission mode (`default`, `plan`, `dontAsk`,
    /// `acceptEdits`, `bypassPermissions`).
    pub(crate) mode: Option<String>,
    /// Rules of calls that run without asking (`Bash(npm run test:*)`).
    pub(crate) allow: Option<Vec<String>>,
    /// Rules of calls that are always asked about.
    pub(crate) ask: Option<Vec<String>>,
    /// Rules of calls that are always refused.
    pub(crate) deny: Option<Vec<String>>,
    /// Folders agents may also write and read beneath (`~/` is the home
    /// folder; relative paths are read from the project folder).
    pub(crate) additional_directories: Option<Vec<String>>,
}

/// `[sandbox]`: the OS sandbox of Bash and every process a tool starts.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SandboxSettings {
    /// `false` turns the sandbox off (default on).
    pub(crate) enabled: Option<bool>,
    /// `true` lets sandboxed commands reach the network (default off).
    pub(crate) network: Option<bool>,
}

/// `[web_fetch]`: which private addresses `WebFetch` may reach.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct WebFetchSettings {
    /// Hosts (names or addresses) on loopback or a private network that
    /// `WebFetch` may fetch from (`localhost`, `wiki.corp`).
    pub(crate) private_hosts: Vec<String>,
    /// Every private address (an intranet): loopback, private,
    /// link-local.
    pub(crate) allow_private: bool,
}

/// The largest zr.toml read.
const FILE_LIMIT: u64 = 4 * 1024 * 1024;

impl ZrConfig {
    /// Reads `path`; a missing file is the defaults.
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] when the file cannot be read, or naming the
    /// line, column and key of a problem.
    pub(crate) fn load(path: &Path) -> Result<Self, CliError> {
        let text = match zr_tools::read_regular_to_string(path, FILE_LIMIT) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(unreadable(path, &source)),
        };
        Self::parse(path, &text)
    }

    /// Parses the text of `path`, reporting every problem at once: all
    /// the syntax errors, or else the first problem of each table.
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] naming the line, column and key of a problem;
    /// [`CliError::Several`] when there are more, in the file's order.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, CliError> {
        let (document, syntax) = toml::de::DeTable::parse_recoverable(text);
        if !syntax.is_empty() {
            // What follows a syntax error is guesswork: only those, the
            // first of each line (the parser's recovery may add more).
            let mut lines = std::collections::BTreeSet::new();
            let errors: Vec<CliError> = syntax
                .iter()
                .map(|e| config_error(path, text, "", e))
                .filter(|e| match e {
                    CliError::Config { line, .. } => lines.insert(*line),
                    _ => true,
                })
                .collect();
            return Err(in_order(errors).expect_err("there was a syntax error"));
        }
        let span = document.span();
        let mut tables = document.into_inner();
        // Each table alone, so that one table's mistake hides no other's.
        let mut problems = Vec::new();
        let names: Vec<_> = tables.keys().cloned().collect();
        for name in names {
            let Some(value) = tables.get(&name).cloned() else {
                continue;
            };
            let mut one = toml::de::DeTable::new();
            one.insert(name.clone(), value);
            if let Err(e) = Self::from_table(path, text, toml::Spanned::new(span.clone(), one)) {
                problems.push(e);
                tables.remove(&name);
            }
        }
        in_order(problems)?;
        Self::from_table(path, text, toml::Spanned::new(span, tables))
    }

    fn from_table(
        path: &Path,
        text: &str,
        table: toml::Spanned<toml::de::DeTable<'_>>,
    ) -> Result<Self, CliError> {
        serde_path_to_error::deserialize(toml::de::Deserializer::from(table)).map_err(|e| {
            let key = e.path().to_string();
            let key = if key == "." { String::new() } else { key };
            config_error(path, text, &key, e.inner())
        })
    }
}

/// `problems` sorted by where they are, as one error (none: `Ok`).
fn in_order(mut problems: Vec<CliError>) -> Result<(), CliError> {
    problems.sort_by_key(|e| match e {
        CliError::Config { line, column, .. } => (*line, *column),
        _ => (0, 0),
    });
    CliError::all(problems)
}

/// A [`CliError::Config`] for `error` at `key` in `text`.
fn config_error(path: &Path, text: &str, key: &str, error: &toml::de::Error) -> CliError {
    let (line, column) = error
        .span()
        .map_or((0, 0), |span| line_column(text, span.start));
    let raw = error.message().trim();
    let (message, help) = describe(key, raw);
    let key = match raw.strip_prefix("unknown field `") {
        Some(rest) => {
            let unknown = rest.split('`').next().unwrap_or_default();
            match key {
                "" => unknown.to_owned(),
                k if k.ends_with(unknown) => k.to_owned(),
                k => format!("{k}.{unknown}"),
            }
        }
        None => key.to_owned(),
    };
    CliError::config(path, (line, column), key, message, help)
}

/// What is wrong and how to fix it, from the parser's `message` about
/// `key`.
fn describe(key: &str, message: &str) -> (String, String) {
    const DEFAULTS: &str =
        "`zr init` in an empty folder writes a zr.toml showing every key with its default";
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let unknown = rest.split('`').next().unwrap_or_default();
        let known = expected_names(message);
        let section = key
            .strip_suffix(unknown)
            .map_or(key, |k| k.trim_end_matches('.'));
        let (what, place) = if section.is_empty() {
            ("table", "zr.toml".to_owned())
        } else {
            ("key", format!("[{section}]"))
        };
        let list = known.join(", ");
        let help = match closest(unknown, &known) {
            Some(best) => format!("did you mean `{best}`? the {what}s of {place} are: {list}"),
            None => format!("remove it; the {what}s of {place} are: {list}"),
        };
        return (format!("unknown {what} `{unknown}`"), help);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let unknown = rest.split('`').next().unwrap_or_default();
        let known = expected_names(message);
        return (
            format!("unknown value \"{unknown}\""),
            suggest(unknown, &known),
        );
    }
    if message.contains("untagged enum LazySetting") {
        return (
            "expected \"always\", \"never\" or a number of bytes".to_owned(),
            "write lazy = \"always\", lazy = \"never\" or lazy = 20000 (defer MCP tools above 20000 bytes of definitions)".to_owned(),
        );
    }
    if let Some((found, expected)) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.split_once(", expected "))
    {
        let (expected, how) = match expected {
            "u8" | "u16" | "u32" | "u64" | "usize" => {
                ("a whole number", "write a number without quotes, e.g. 3")
            }
            "a boolean" => ("true or false", "write true or false without quotes"),
            "a string" => ("a string", "write the value in double quotes"),
            "a sequence" => ("a list", "write a list such as [\"Read\", \"Grep\"]"),
            other => (other, "fix the value"),
        };
        return (
            format!("expected {expected}, found {found}"),
            format!("{how}, or remove the key to use its default; {DEFAULTS}"),
        );
    }
    if key.is_empty() {
        return (
            format!("invalid TOML: {}", message.replace('\n', "; ")),
            "fix the syntax: `key = value` lines under `[table]` headers, strings in double quotes"
                .to_owned(),
        );
    }
    (
        message.to_owned(),
        format!("fix the value or remove the key to use its default; {DEFAULTS}"),
    )
}

/// "use one of "a", "b"", led by "did you mean "a"?" when `word` is a
/// likely typo of one of `known`.
pub(crate) fn suggest(word: &str, known: &[&str]) -> String {
    let list = known
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    match closest(word, known) {
        Some(best) => format!("did you mean \"{best}\"? use one of {list}"),
        None => format!("use one of {list}"),
    }
}

/// The names listed in a parser message's "expected one of `a`, `b`".
pub(crate) fn expected_names(message: &str) -> Vec<&str> {
    message
        .split_once("expected ")
        .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default()
}

/// The name in `known` closest to `word`, if it is close enough to be a
/// typo (at most a third of its letters differ).
pub(crate) fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(&word.to_lowercase(), &k.to_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Edit distance in characters, a swap of two neighbours counting as one
/// edit (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    // d[i * width + j]: the distance of a[..i] and b[..j].
    let mut d: Vec<usize> = vec![0; (a.len() + 1) * width];
    for (i, cell) in d.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

/// The 1-based line and column of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A whole number from `MIN` to `MAX`: at least 1 for limits where 0
/// would stop every run before it starts (a turn limit, a concurrency, a
/// time budget); at most a bound no real setting reaches, so that no count
/// overflows a sum, an allocation or a deadline later (a concurrency of
/// 2^61 once passed here and panicked at the first Task).
fn within<'de, D, T, const MIN: u64, const MAX: u64>(de: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error as _;
    let value = u64::deserialize(de)?;
    if value < MIN {
        return Err(D::Error::custom(format!(
            "must be at least {MIN}, found {value}"
        )));
    }
    if value > MAX {
        return Err(D::Error::custom(format!(
            "must be at most {MAX}, found {value}"
        )));
    }
    T::try_from(value)
        .map(Some)
        .map_err(|_| D::Error::custom(format!("must be at most {MAX}, found {value}")))
}

/// A project file (`zr.toml`, `.mcp.json`) that exists but cannot be read:
/// a project-file error (exit 2) naming it.
pub(crate) fn unreadable(path: &Path, source: &std::io::Error) -> CliError {
    CliError::config(
        path,
        (0, 0),
        "",
        format!("cannot read it: {source}"),
        "make it a readable file, or remove it to use the defaults",
    )
}

#[cfg(test)]
mod tests;
