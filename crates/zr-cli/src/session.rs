//! From a project to a runnable agent: MCP servers connected through
//! leases and their tools materialised, agent types and skills loaded, the
//! runtime and the root's configuration built from `zr.toml`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use zr_caps::{ModelFamily, PermissionMode, RuntimeSettings};
use zr_engine::{AgentConfig, AgentObserver, ModelProvider, RuntimeEnvironment};
use zr_mcp::{Lease, McpHub, McpTool};
use zr_resolve::{LazyPolicy, ResolvePolicy, ResolvedPool};
use zr_skills::SkillTool;
use zr_tools::{BuiltinTools, WebFetchPolicy};
// An error and its causes on one line (zr_types' own).
pub(crate) use zr_types::error_chain;
use zr_types::{AgentId, SessionId, ToolDefinition, ToolName};

use crate::ask::Asking;
use crate::config::{LazySetting, ZrConfig};
use crate::config_key::{config_key_error, patterns};
use crate::crash_hook::KillAfter;
use crate::error::CliError;
use crate::project::{CONFIG_FILE, Project};

/// The root's system prompt when `zr.toml` sets none.
pub(crate) const DEFAULT_SYSTEM_PROMPT: &str = "You are zr's root agent, working in the user's project folder. \
Delegate self-contained pieces of work to subagents with Task (one) or MultiTask (several at once): \
each gets its own context and returns only its conclusion. Answer the user concisely.";

/// Everything a run holds open: the MCP hub and its leases (servers stop
/// when the last lease and the hub are dropped), and what the agent is
/// built from.
#[derive(Debug)]
pub(crate) struct Workspace {
    /// The runtime every agent of the session shares.
    pub(crate) runtime: Arc<RuntimeEnvironment>,
    /// The root's configuration.
    pub(crate) config: AgentConfig,
    /// The MCP servers.
    pub(crate) hub: McpHub,
    /// One lease per connected server, in `.mcp.json` order.
    pub(crate) leases: Vec<Lease>,
    /// Servers that could not be started, with the error.
    pub(crate) failed_servers: Vec<crate::mcp_start::Failure>,
    /// With a terminal: where its asker asks the renderer to pause.
    pub(crate) screen: Option<crate::ask::ScreenRequests>,
}

/// Grants each agent the skills of its resolved pool, and revokes them when
/// it ends; counts transcript records for the test-only crash hook.
#[derive(Debug)]
struct SkillGrants(Arc<SkillTool>, Option<KillAfter>);

impl AgentObserver for SkillGrants {
    fn agent_started(&self, _: &SessionId, agent: &AgentId, pool: &ResolvedPool) {
        self.0.grant(agent.clone(), pool.skills().iter().cloned());
    }

    fn agent_finished(&self, _: &SessionId, agent: &AgentId) {
        self.0.revoke(agent);
    }

    fn record_written(&self, _: &SessionId, _: &AgentId) {
        if let Some(hook) = &self.1 {
            hook.record_written();
        }
    }
}

impl Workspace {
    /// The agent types' `color` keys, by type name (for the live tree).
    pub(crate) fn colours(&self) -> BTreeMap<String, String> {
        self.config
            .sub_agents
            .iter()
            .filter_map(|(name, d)| d.color.clone().map(|c| (name.to_string(), c)))
            .collect()
    }

    /// Connects the project's MCP servers (a server that fails is left
    /// out, with its error in `failed_servers`), then builds the runtime
    /// on `provider` and the root's configuration.
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] for a value of `zr.toml` the engine refuses
    /// (a bad tool pattern or permission mode).
    pub(crate) async fn open(
        project: &Project,
        provider: Arc<dyn ModelProvider>,
        model: String,
        family: ModelFamily,
        asking: Asking,
    ) -> Result<Self, CliError> {
        // zr.toml's values are checked before any server starts: a typo
        // costs nothing (the same build runs again below with the tools).
        root_config(project, &BTreeMap::new(), Vec::new())?;
        for warning in crate::permission_names::warnings(project) {
            eprintln!("{warning}");
        }
        print_once(project);
        let web_search = crate::services::web_search(project, &|v| project.var(v))?;
        let hub = McpHub::new(project.hub_config(), project.hub_options());
        // On a terminal, servers' forms are asked there; without one (or
        // for `zr cron`, which never asks), every form is declined.
        let (asker, screen) = asking.asker().unzip();
        if let Some(asker) = &asker {
            hub.set_elicitor(Some(asker.clone()));
        }
        let mut leases = Vec::new();
        let mut failed_servers = Vec::new();
        let mut server_tools: BTreeMap<String, Vec<McpTool>> = BTreeMap::new();
        // Every server starts at once: one slow handshake does not delay
        // the others (the hub bounds each by its connect timeout).
        // The agent files' inline servers start with the others, shared and
        // counted by the hub alike; only their agents get their tools.
        let every = project.hub_config();
        let names: Vec<String> = every.servers().iter().map(|s| s.name.to_string()).collect();
        let started = futures_util::future::join_all(every.servers().iter().map(|config| {
            let hub = &hub;
            async move {
                let name = config.name.as_str();
                tracing::info!(server = %name, "starting MCP server");
                let work = async {
                    let lease = hub.acquire(name).await?;
                    let tools = lease.tools().await?;
                    Ok::<_, zr_mcp::McpError>((lease, tools))
                };
                crate::mcp_start::shown(name, work)
                    .await
                    .map_err(|e| crate::mcp_start::Failure::of(project, config, &e))
            }
        }))
        .await;
        for (name, started) in names.into_iter().zip(started) {
            match started {
                Ok((lease, tools)) => {
                    leases.push(lease);
                    server_tools.insert(name, tools);
                }
                Err(failure) => failed_servers.push(failure),
            }
        }

        let settings = RuntimeSettings {
            model,
            cwd: project.root.clone(),
            // The settings files' `env`: every process a tool starts gets
            // these (and nothing else of zr's environment).
            env: project.child_env(),
        };
        let skill_tool = Arc::new(SkillTool::with_roots(project.skills.roots().clone()));
        let web_fetch = &project.config.web_fetch;
        let mut builtins = BuiltinTools::new(project.cron_store())
            .with_cron_note(crate::services::FIRES_UNDER)
            .with_web_fetch_policy(WebFetchPolicy {
                allow_private: web_fetch.allow_private,
                private_hosts: web_fetch.private_hosts.clone(),
            });
        builtins =
            builtins.with_config(Arc::new(crate::config_service::ProjectConfig::new(project)));
        if let Some(service) = web_search {
            builtins = builtins.with_web_search(service);
        }
        if let Some(asker) = &asker {
            builtins = builtins.with_ask_user(asker.clone());
        }
        let mut runtime = RuntimeEnvironment::new(provider, settings, builtins)
            .with_skill_tool(Arc::new(SkillTool::definition()), skill_tool.clone())
            .with_observer(Arc::new(SkillGrants(
                skill_tool,
                KillAfter::from_env(&|v| std::env::var(v).ok()),
            )));
        if let Some(max_tokens) = project.config.model.max_tokens {
            runtime = runtime.with_max_tokens(max_tokens);
        }
        if let Some(tracer) = crate::telemetry::tracer() {
            runtime = runtime.with_tracer(tracer);
        }
        runtime = crate::remote_agents::wire(project, runtime);
        let order: Vec<_> = every.servers().iter().map(|s| s.name.clone()).collect();
        for warning in crate::mcp_names::distinct(&order, &mut server_tools) {
            eprintln!("{warning}");
        }
        // The root's pool holds the `.mcp.json` servers' tools only: an
        // inline server's reach its agents as connection tools.
        let mut all_mcp: Vec<Arc<ToolDefinition>> = Vec::new();
        for server in every.servers() {
            let named = project.mcp.get(server.name.as_str()).is_some();
            for tool in server_tools.get(server.name.as_str()).into_iter().flatten() {
                runtime = runtime.with_tool(Arc::clone(&tool.definition), tool.handler.clone());
                if named {
                    all_mcp.push(Arc::clone(&tool.definition));
                }
            }
        }

        let mut config = root_config(project, &server_tools, all_mcp)?;
        if let Some(asker) = asker {
            let prompt = crate::ask::PermissionPrompt::new(asker, project.root.join(CONFIG_FILE));
            crate::permissions::ConfigPermissions::from_project(project)?
                .asking(Arc::new(prompt))
                .replace_handler(&mut config);
        }
        config.model_aliases = crate::model_aliases::table(project, family)?;
        config.model_check = crate::model_profiles::check(project, family);
        config.types_source = Some(Arc::new(crate::reload::RegistrySource::new(
            project,
            crate::reload::server_definitions(&server_tools, &project.inline_mcp),
        )));
        Ok(Self {
            runtime: Arc::new(runtime),
            config,
            hub,
            leases,
            failed_servers,
            screen,
        })
    }
}

/// The root's configuration from `zr.toml`, the agent types (with their
/// `mcpServers` materialised into connection tools) and the skills.
pub(crate) fn root_config(
    project: &Project,
    server_tools: &BTreeMap<String, Vec<McpTool>>,
    all_mcp: Vec<Arc<ToolDefinition>>,
) -> Result<AgentConfig, CliError> {
    let file = &project.config;
    let mut config = AgentConfig::new(
        file.agent
            .system_prompt
            .clone()
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned()),
    );
    if let Some(turns) = file.agent.max_turns {
        config.max_turns = turns;
    }
    config.options.mcp_tools = all_mcp;
    let (allow, deny) = (
        crate::claude_names::tools_list(file.tools.allow.as_deref()),
        crate::claude_names::tools_list(file.tools.deny.as_deref()),
    );
    config.options.allowed_tools = patterns(project, "tools.allow", allow.as_deref())?;
    config.options.disallowed_tools = patterns(project, "tools.deny", deny.as_deref())?;
    config.skills = project.skills_view.definitions().to_vec();
    if let Some(chars) = file.skills.listing_chars {
        config.skill_listing_chars = chars;
    }
    config.model_aliases =
        crate::model_aliases::table(project, crate::model_aliases::family(file.model.provider))?;
    config.sessions_dir = Some(project.sessions_dir());
    config.policy = policy(project, file)?;
    apply_subagents(&mut config, file);
    apply_compaction(&mut config, file);
    if let Some(mode) = &file.permissions.mode {
        config.permission_mode = mode.parse().map_err(|_| {
            config_key_error(
                project,
                "permissions.mode",
                format!("unknown permission mode \"{mode}\""),
                &crate::config::suggest(mode, &PermissionMode::ALL.map(PermissionMode::as_str)),
            )
        })?;
    } else if let Some(mode) = project.settings.mode() {
        // zr.toml's explicit key wins; else the settings files' last.
        config.permission_mode = mode.value;
    }
    config.instructions = project.instructions_view.prompt().map(Arc::from);
    crate::permissions::ConfigPermissions::from_project(project)?.install(&mut config);
    crate::hooks::install(project, &mut config)?;
    let servers = crate::reload::server_definitions(server_tools, &project.inline_mcp);
    for entry in project.agents.types() {
        config = config.with_sub_agent(crate::reload::type_definition(entry, &servers));
    }
    config.listed_first = crate::reload::project_types(project.agents.types());
    config.skills_listed_first = crate::reload::project_skills(&project.skills_view);
    Ok(config)
}

/// Prints, once per process, the settings files' warnings and the
/// instruction files zr leaves out.
fn print_once(project: &Project) {
    static PRINTED: std::sync::Once = std::sync::Once::new();
    PRINTED.call_once(|| {
        for warning in &project.settings.warnings {
            eprintln!("{warning}");
        }
        for warning in crate::instructions::warnings(project) {
            eprintln!("{warning}");
        }
    });
}

fn apply_subagents(config: &mut AgentConfig, file: &ZrConfig) {
    let s = &file.subagents;
    if let Some(enabled) = s.enabled {
        config.subagent.enabled = enabled;
        config.policy.delegation = enabled;
    }
    if let Some(n) = s.max_concurrent {
        config.subagent.max_concurrent = n;
    }
    if let Some(secs) = s.timeout_secs {
        config.subagent.timeout = Duration::from_secs(secs);
    }
    if let Some(secs) = s.progress_interval_secs {
        config.subagent.progress_interval = (secs > 0).then(|| Duration::from_secs(secs));
    }
    if let Some(chars) = s.listing_chars {
        config.type_listing_chars = chars;
    }
    if let Some(levels) = s.max_depth {
        config.policy.max_depth = levels;
    }
    config.budget = file.budget;
}

fn apply_compaction(config: &mut AgentConfig, file: &ZrConfig) {
    let c = &file.compaction;
    if let Some(enabled) = c.enabled {
        config.compaction.enabled = enabled;
    }
    if let Some(window) = c.context_window {
        config.compaction.context_window = window;
    }
    if let Some(threshold) = c.threshold {
        config.compaction.threshold = threshold;
    }
    if let Some(bytes) = c.max_tool_result_bytes {
        config.compaction.max_tool_result_bytes = Some(bytes);
    }
}

pub(crate) fn policy(project: &Project, file: &ZrConfig) -> Result<ResolvePolicy, CliError> {
    let mut policy = ResolvePolicy::default();
    match &file.policy.lazy {
        None => {}
        Some(LazySetting::Bytes(bytes)) => policy.lazy = LazyPolicy::Auto { bytes: *bytes },
        Some(LazySetting::Word(w)) if w == "always" => policy.lazy = LazyPolicy::Always,
        Some(LazySetting::Word(w)) if w == "never" => policy.lazy = LazyPolicy::Never,
        Some(LazySetting::Word(w)) => {
            return Err(config_key_error(
                project,
                "policy.lazy",
                format!("unknown value \"{w}\""),
                &format!(
                    "{} (or a number of bytes)",
                    crate::config::suggest(w, &["always", "never"])
                ),
            ));
        }
    }
    if let Some(list) = &file.policy.derived_blocklist {
        policy.derived_blocklist = names(project, "policy.derived_blocklist", list)?;
    }
    if let Some(list) = &file.policy.background_allowlist {
        policy.background_allowlist = names(project, "policy.background_allowlist", list)?;
    }
    Ok(policy)
}

fn names(project: &Project, key: &str, list: &[String]) -> Result<Vec<ToolName>, CliError> {
    list.iter()
        .map(|n| {
            n.parse().map_err(|e: zr_types::NameError| {
                config_key_error(
                    project,
                    key,
                    format!("'{n}': {e}"),
                    "write a tool name such as Read or mcp__server__tool",
                )
            })
        })
        .collect()
}
