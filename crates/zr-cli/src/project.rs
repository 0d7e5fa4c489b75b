//! A project folder: where it is, and what its files say (`zr.toml`,
//! `.mcp.json`, `.zr/agents/`, `.zr/skills/`, Claude Code's
//! `.claude/settings*.json` and `~/.claude/settings.json`, and the
//! instruction files `CLAUDE.md`, `AGENTS.md`, `CLAUDE.local.md`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zr_mcp::{McpConfig, ServerConfig, TokenStore};
use zr_skills::{
    AgentRegistry, AgentSource, AgentTypesView, Diagnostic, InstructionRegistry, InstructionsView,
    Roots, SkillRegistry, SkillsView,
};
use zr_types::AgentName;

use crate::claude_settings::ClaudeSettings;
use crate::config::{HooksConfig, ZrConfig};
use crate::error::CliError;

/// The user's OAuth token store for MCP servers (`zr mcp login` writes
/// it; a project's connections read it).
pub(crate) fn user_tokens() -> Option<TokenStore> {
    TokenStore::for_user(&|name| std::env::var(name).ok())
}

/// The settings file's name.
pub(crate) const CONFIG_FILE: &str = "zr.toml";
/// The MCP servers file's name.
pub(crate) const MCP_FILE: &str = ".mcp.json";

/// A loaded project.
#[derive(Debug)]
pub(crate) struct Project {
    /// The project folder (absolute).
    pub(crate) root: PathBuf,
    /// The user's home folder (`$HOME`), whose `.zr`, `.claude` and
    /// `.agents` folders hold the user's agent types and skills.
    pub(crate) home: Option<PathBuf>,
    /// `zr.toml` (the defaults when there is none).
    pub(crate) config: ZrConfig,
    /// `.mcp.json` (no servers when there is none), without the servers
    /// whose entries are wrong.
    pub(crate) mcp: McpConfig,
    /// Claude Code's settings files, merged (none when there are none);
    /// `zr.toml`'s explicit keys win over them.
    pub(crate) settings: ClaudeSettings,
    /// The instruction files (a running session re-reads them, see
    /// `reload.rs`).
    pub(crate) instructions: Arc<InstructionRegistry>,
    /// The instruction files found.
    pub(crate) instructions_view: Arc<InstructionsView>,
    /// The MCP servers agent files define inline (`mcpServers: [{NAME:
    /// {command, args, env}}]`), each with the type whose file defines
    /// it: started with the `.mcp.json` servers, their tools given to
    /// agents of that type only.
    pub(crate) inline_mcp: Vec<(AgentName, ServerConfig)>,
    /// The `.mcp.json` servers (and agent files' inline servers) left out,
    /// each with its file, line and what to fix: commands warn and go on
    /// without them.
    pub(crate) mcp_problems: Vec<CliError>,
    /// The skill registry (the `Skill` tool reads through its roots; a
    /// running session re-reads it, see `reload.rs`).
    pub(crate) skills: Arc<SkillRegistry>,
    /// The agent-type registry (a running session re-reads it).
    pub(crate) agent_registry: Arc<AgentRegistry>,
    /// The skills found.
    pub(crate) skills_view: Arc<SkillsView>,
    /// The agent types found (builtins, then files).
    pub(crate) agents: Arc<AgentTypesView>,
}

impl Project {
    /// The project folder: `explicit`, else the nearest folder upwards from
    /// the current one with a `zr.toml`, else the current folder.
    ///
    /// # Errors
    ///
    /// [`CliError::Usage`] when `explicit` does not exist or is not a
    /// folder, [`CliError::Io`] when it or the current folder cannot be
    /// read.
    pub(crate) fn locate(explicit: Option<&Path>) -> Result<PathBuf, CliError> {
        let cwd = std::env::current_dir().map_err(|source| CliError::Io {
            action: "read the current folder",
            path: PathBuf::from("."),
            source,
        })?;
        if let Some(given) = explicit {
            let dir = cwd.join(given);
            return match std::fs::metadata(&dir) {
                Ok(m) if m.is_dir() => Ok(dir),
                Ok(_) => Err(CliError::usage(
                    format!("--project {}: not a folder", dir.display()),
                    "pass the project's folder",
                )),
                Err(source) if source.kind() == std::io::ErrorKind::NotFound => {
                    Err(CliError::usage(
                        format!("--project {}: no such folder", dir.display()),
                        format!(
                            "pass an existing project folder, or create one with `zr -C {} init`",
                            quoted(given)
                        ),
                    ))
                }
                Err(source) => Err(CliError::Io {
                    action: "open",
                    path: dir,
                    source,
                }),
            };
        }
        Ok(cwd
            .ancestors()
            .find(|dir| dir.join(CONFIG_FILE).is_file())
            .unwrap_or(&cwd)
            .to_path_buf())
    }

    /// Loads the project at `root`: its settings, MCP servers, agent types
    /// and skills. Broken agent and skill files do not stop the load: they
    /// are in [`Project::diagnostics`].
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] for a `zr.toml` or `.mcp.json` that is broken
    /// or cannot be read; [`CliError::Several`] for more than one problem
    /// (each file is read whatever the other holds).
    pub(crate) fn load(root: PathBuf) -> Result<Self, CliError> {
        let home = zr_skills::home_dir();
        // Every file is read whatever the others hold: their problems are
        // reported together. The settings' `env` is seen by `${VAR}` in
        // `.mcp.json`, as Claude Code applies it before reading servers.
        let settings = ClaudeSettings::load(&root, home.as_deref());
        let config = ZrConfig::load(&root.join(CONFIG_FILE));
        let mcp_path = root.join(MCP_FILE);
        // A server whose entry is wrong is left out with a warning
        // (`mcp_problems`); only a file that is not JSON stops the load.
        let mut mcp_problems = Vec::new();
        let mcp = if mcp_path.is_file() {
            let var = |v: &str| {
                settings
                    .as_ref()
                    .ok()
                    .and_then(|s| s.var(v))
                    .or_else(|| std::env::var(v).ok())
            };
            McpConfig::load_each(&mcp_path, &var)
                .map_err(|e| crate::mcp_config::error(&mcp_path, e))
                .map(|(mcp, errors)| {
                    mcp_problems = errors
                        .into_iter()
                        .map(|e| crate::mcp_config::error(&mcp_path, e))
                        .collect();
                    mcp
                })
        } else {
            Ok(McpConfig::default())
        };
        let (settings, config, mcp) = match (settings, config, mcp) {
            (Ok(settings), Ok(config), Ok(mcp)) => (settings, config, mcp),
            (settings, config, mcp) => {
                return Err(CliError::all(
                    [settings.err(), config.err(), mcp.err()]
                        .into_iter()
                        .flatten(),
                )
                .expect_err("one of the three failed"));
            }
        };
        let agent_registry = Arc::new(AgentRegistry::new(Roots::agents(&root, home.as_deref())));
        let agents = agent_registry.view();
        let inline_mcp = inline_servers(&mcp, &agents, &mut mcp_problems);
        let skills = Arc::new(SkillRegistry::new(Roots::skills(&root, home.as_deref())));
        let skills_view = skills.view();
        let instructions = Arc::new(InstructionRegistry::new(&root, home.as_deref()));
        let instructions_view = instructions.view();
        Ok(Self {
            root,
            home,
            config,
            mcp,
            settings,
            instructions,
            instructions_view,
            inline_mcp,
            mcp_problems,
            skills,
            agent_registry,
            skills_view,
            agents,
        })
    }

    /// The variable `name` as zr reads it: the settings files' `env`
    /// first (as Claude Code applies it over its own environment), then
    /// zr's environment.
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        self.settings.var(name).or_else(|| std::env::var(name).ok())
    }

    /// The hooks that run: `zr.toml`'s `[hooks]`, then the settings
    /// files' of the events zr runs.
    pub(crate) fn hooks(&self) -> HooksConfig {
        self.settings.add_hooks(&self.config.hooks)
    }

    /// The variables the settings files set for every process zr starts.
    pub(crate) fn child_env(&self) -> std::collections::BTreeMap<String, String> {
        self.settings
            .env()
            .into_iter()
            .map(|(name, entry)| (name, entry.value.1.clone()))
            .collect()
    }

    /// Every server the hub may start: `.mcp.json`'s, then the agent
    /// files' inline ones.
    pub(crate) fn hub_config(&self) -> McpConfig {
        let mut config = self.mcp.clone();
        for (_, server) in &self.inline_mcp {
            config.insert(server.clone());
        }
        config
    }

    /// The `.mcp.json` servers left out, as `warning: .mcp.json:LINE:COLUMN:
    /// mcpServers.NAME: ... (the server is left out)` with its help line.
    pub(crate) fn mcp_warnings(&self) -> impl Iterator<Item = String> {
        let prefix = format!("{}/", self.root.display());
        self.mcp_problems.iter().map(move |e| {
            let text = e.to_string();
            let text = text.strip_prefix(&prefix).unwrap_or(&text);
            match text.split_once("\n") {
                Some((first, rest)) => {
                    format!("warning: {first} (the server is left out)\n{rest}")
                }
                None => format!("warning: {text} (the server is left out)"),
            }
        })
    }

    /// Problems in agent and skill files (each names the file, line and
    /// what to fix).
    pub(crate) fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.agents
            .diagnostics()
            .iter()
            .chain(self.skills_view.diagnostics())
    }

    /// The MCP hub's options: servers work in the project folder, with
    /// `[mcp]`'s time limits and roots (each relative to the project
    /// folder, `..` resolved when the folder exists).
    pub(crate) fn hub_options(&self) -> zr_mcp::HubOptions {
        let mcp = &self.config.mcp;
        let secs =
            |value: Option<u64>, default| std::time::Duration::from_secs(value.unwrap_or(default));
        let roots = match &mcp.roots {
            None => vec![self.root.clone()],
            Some(roots) => roots
                .iter()
                .map(|r| {
                    let path = self.root.join(r);
                    std::fs::canonicalize(&path).unwrap_or(path)
                })
                .collect(),
        };
        let mut options = zr_mcp::HubOptions::new(&self.root);
        // The settings' `env` for every server; a server's own `env` in
        // `.mcp.json` wins.
        options.base_env.extend(self.child_env());
        options
            .with_roots(roots)
            .with_connect_timeout(secs(
                mcp.connect_timeout_secs,
                crate::config::DEFAULT_CONNECT_TIMEOUT_SECS,
            ))
            .with_call_timeout(secs(
                mcp.call_timeout_secs,
                crate::config::DEFAULT_CALL_TIMEOUT_SECS,
            ))
            .with_tokens(user_tokens())
    }

    /// `.zr/sessions`: one folder of JSONL transcripts per session.
    pub(crate) fn sessions_dir(&self) -> PathBuf {
        let dir = self.root.join(".zr").join("sessions");
        self.note_link_out(&dir);
        dir
    }

    /// Says once per process, on standard error, where transcripts go
    /// when `dir` (through a symbolic link of its own or of `.zr`) leads
    /// out of the project: zr follows the link, and the user should know
    /// that a session's files are written there.
    fn note_link_out(&self, dir: &Path) {
        static NOTED: std::sync::Once = std::sync::Once::new();
        let (Ok(real), Ok(root)) = (
            std::fs::canonicalize(dir),
            std::fs::canonicalize(&self.root),
        ) else {
            return;
        };
        if real.starts_with(&root) {
            return;
        }
        NOTED.call_once(|| {
            eprintln!(
                "warning: {} is a link to {}, outside the project: transcripts are written there\n  help: make .zr/sessions a folder of the project to keep them in it",
                dir.display(),
                real.display()
            );
        });
    }

    /// The cron store, where `CronCreate` keeps scheduled prompts and
    /// `zr cron` finds them.
    pub(crate) fn cron_store(&self) -> PathBuf {
        self.root.join(".zr").join("cron.json")
    }
}

/// A path as the user wrote it, quoted when it holds a space.
fn quoted(path: &Path) -> String {
    let text = path.display().to_string();
    if text.contains(char::is_whitespace) {
        format!("\"{text}\"")
    } else {
        text
    }
}

/// The servers the files of `agents` define inline, read as `.mcp.json`
/// entries; a broken one, or one whose name another server has, is left
/// out with its problem in `problems` (naming the agent file and line).
fn inline_servers(
    mcp: &McpConfig,
    agents: &AgentTypesView,
    problems: &mut Vec<CliError>,
) -> Vec<(AgentName, ServerConfig)> {
    let mut found: Vec<(AgentName, ServerConfig)> = Vec::new();
    for entry in agents.types() {
        let AgentSource::File { path, .. } = &entry.source else {
            continue;
        };
        for server in &entry.inline_servers {
            let name = server.name.as_str();
            let problem = |message: String| {
                CliError::config(
                    path,
                    (server.line, 0),
                    format!("mcpServers.{name}"),
                    message,
                    "an inline server takes the form of a .mcp.json entry: {command, args, env} or {type: http|sse, url, headers}, with a name no other server has",
                )
            };
            let config =
                match McpConfig::entry(name, server.config.clone(), &|v| std::env::var(v).ok()) {
                    Ok(config) => config,
                    Err(error) => {
                        problems.push(problem(error.to_string()));
                        continue;
                    }
                };
            if mcp.get(name).is_some() {
                problems.push(problem(format!(
                    "'{name}' is also a server of {MCP_FILE}; give the agent's own server another name"
                )));
                continue;
            }
            if let Some((other, _)) = found.iter().find(|(_, c)| c.name == config.name) {
                problems.push(problem(format!(
                    "agent type '{other}' defines a server named '{name}' too; give each its own name"
                )));
                continue;
            }
            found.push((entry.name().clone(), config));
        }
    }
    found
}
