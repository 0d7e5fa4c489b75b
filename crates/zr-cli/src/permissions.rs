//! `zr.toml` `[permissions]` and `[sandbox]`, with the `permissions` of
//! Claude Code's settings files (`claude_settings.rs`): the project's
//! permission rules (all sources together, deny first), its additional
//! directories and the sandbox of its commands, handed to the engine's
//! permission gate; and the handler that answers what the rules leave
//! open.
//!
//! The engine decides first (`zr_engine::PermissionConfig`): `deny` rules
//! refuse, in every mode, read-only tools included; calls that cross the
//! effects boundary (a path outside the agent's roots, a protected file)
//! and calls matching an `ask` rule are asked about whatever the mode
//! says; plan mode runs only read-only tools; `allow` rules, read-only
//! tools and `acceptEdits` edits inside the roots run. What is left comes
//! here:
//!
//! - `TodoWrite` (the agent's own list) runs;
//! - a tool the person allowed "always" during this run runs;
//! - any other call of a foreground agent, in `default` or `auto` mode,
//!   is asked about when standard input and standard error are a terminal
//!   (allow once, for the session, always, or deny; a crossing: once or
//!   deny);
//! - and refused otherwise (no terminal, `dontAsk`, a background agent)
//!   with the reason "'Bash' is not in zr.toml `[permissions]` allow; add
//!   it there to let it run". The model reads the reason, and the
//!   progress output shows the denial.
//!
//! Without a `[permissions]` table, a project therefore runs read-only
//! tools, `TodoWrite` and `Task`/`MultiTask`/`FindTool` (never asked
//! about), and nothing else; `zr init`'s zr.toml says how to allow more.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zr_caps::{PermissionMode, PermissionRule, PermissionRules};
use zr_engine::{
    AgentConfig, Boundary, Decision, PermissionConfig, PermissionHandler, PermissionRequest,
    SandboxConfig,
};
use zr_types::{BoxFuture, BuiltinName};

use crate::ask::PermissionPrompt;
use crate::claude_settings::Located;
use crate::config_key::config_key_error;
use crate::error::CliError;
use crate::project::Project;

/// Tools that are not read-only but change nothing outside the agent
/// itself: they run unless a `deny` rule names them.
const HARMLESS: [BuiltinName; 1] = [BuiltinName::TodoWrite];

/// The `[permissions]` rules and boundary, and the handler of what they
/// leave open.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConfigPermissions {
    rules: PermissionRules,
    /// Where the settings files' rules are written, by rule text.
    rule_origins: BTreeMap<String, String>,
    boundary: Boundary,
    /// The terminal's question, when there is a terminal.
    prompt: Option<Arc<PermissionPrompt>>,
}

impl ConfigPermissions {
    /// The rules and boundary of `project`'s zr.toml and Claude Code
    /// settings files (whose rules were checked when they were read).
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] for a zr.toml entry that is not a rule, naming
    /// the line and what to write.
    pub(crate) fn from_project(project: &Project) -> Result<Self, CliError> {
        let p = &project.config.permissions;
        let s = &project.settings;
        // zr.toml's rules, then the settings files' (user, project,
        // local): deny, then ask, then allow over all of them, so a deny
        // anywhere wins.
        let own = PermissionRules {
            allow: rules(project, "permissions.allow", p.allow.as_deref())?,
            ask: rules(project, "permissions.ask", p.ask.as_deref())?,
            deny: rules(project, "permissions.deny", p.deny.as_deref())?,
        };
        // Refusals quote a deny or an ask rule and name where it is
        // written: zr.toml (the default origin), else the settings file.
        let mut rule_origins = BTreeMap::new();
        for (settings, toml) in [(&s.deny, &own.deny), (&s.ask, &own.ask)] {
            for rule in settings {
                if toml.contains(&rule.value) {
                    continue;
                }
                let file = crate::inspect::shown(project, &rule.origin.path);
                rule_origins
                    .entry(rule.value.as_str().to_owned())
                    .or_insert_with(|| format!("{file} permissions"));
            }
        }
        let with = |mut own: Vec<PermissionRule>, more: &[Located<PermissionRule>]| {
            own.extend(more.iter().map(|r| r.value.clone()));
            own
        };
        let rules = PermissionRules {
            allow: with(own.allow, &s.allow),
            ask: with(own.ask, &s.ask),
            deny: with(own.deny, &s.deny),
        };
        let home = Boundary::default().home;
        let dirs = p
            .additional_directories
            .iter()
            .flatten()
            .chain(s.additional_directories.iter().map(|d| &d.value))
            .map(|d| directory(&project.root, home.as_deref(), d))
            .collect();
        let s = &project.config.sandbox;
        let sandbox = if s.enabled == Some(false) {
            SandboxConfig::off()
        } else {
            SandboxConfig::on(s.network.unwrap_or(false))
        };
        Ok(Self {
            rules,
            rule_origins,
            boundary: Boundary::default()
                .with_home(home)
                .with_additional_directories(dirs)
                .with_sandbox(sandbox),
            prompt: None,
        })
    }

    /// The same rules, asking `prompt` about what they leave open.
    pub(crate) fn asking(mut self, prompt: Arc<PermissionPrompt>) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// Installs the rules, the boundary and the handler into `config`.
    pub(crate) fn install(self, config: &mut AgentConfig) {
        config.permissions = PermissionConfig {
            rules: self.rules.clone(),
            rules_origin: "zr.toml [permissions]".to_owned(),
            rule_origins: self.rule_origins.clone(),
            boundary: self.boundary.clone(),
            handler: Some(Arc::new(self)),
            ..config.permissions.clone()
        };
    }

    /// Replaces the handler that [`ConfigPermissions::install`] put into
    /// `config` with this one (the rules stay).
    pub(crate) fn replace_handler(self, config: &mut AgentConfig) {
        config.permissions.handler = Some(Arc::new(self));
    }

    /// The decision about `tool` (a call the engine leaves to the host):
    /// `Ask` only with a terminal, for a foreground agent not in
    /// `dontAsk` mode.
    pub(crate) fn decide(&self, tool: &str, asked: Option<&PermissionRequest>) -> Decision {
        let can_ask = asked.is_some_and(|r| !r.background && r.mode != PermissionMode::DontAsk)
            && self.prompt.is_some();
        if let Some(why) = asked.and_then(|r| r.crossing.as_deref()) {
            // No list allows a crossing: the person is asked, or it is refused.
            return if can_ask {
                Decision::Ask
            } else {
                Decision::Deny(format!(
                    "{why}; nobody can be asked here (no terminal, or a background agent)"
                ))
            };
        }
        if HARMLESS.iter().any(|h| h.is(tool))
            || self.prompt.as_ref().is_some_and(|p| p.allowed_always(tool))
        {
            Decision::Allow
        } else if can_ask {
            Decision::Ask
        } else {
            Decision::Deny(format!(
                "'{tool}' is not in zr.toml [permissions] allow; add it there to let it run (or set mode = \"bypassPermissions\")"
            ))
        }
    }
}

/// The rules of the zr.toml list at `key`.
fn rules(
    project: &Project,
    key: &str,
    list: Option<&[String]>,
) -> Result<Vec<PermissionRule>, CliError> {
    list.unwrap_or_default()
        .iter()
        .filter_map(|text| crate::claude_names::rule_text(text))
        .map(|text| {
            text.parse().map_err(|e: zr_caps::RuleError| {
                config_key_error(
                    project,
                    key,
                    format!("'{text}': {e}"),
                    "write a rule such as Bash, Bash(npm run test:*), Read(./.env), Edit(src/**), WebFetch(domain:docs.rs) or mcp__github",
                )
            })
        })
        .collect()
}

/// An `additional_directories` entry as a path: `~/` from the home
/// folder, a relative path from the project folder.
fn directory(project: &Path, home: Option<&Path>, entry: &str) -> PathBuf {
    match (entry.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if entry == "~" => home.map_or_else(|| PathBuf::from(entry), Path::to_path_buf),
        _ => project.join(entry),
    }
}

impl PermissionHandler for ConfigPermissions {
    fn can_use_tool<'a>(&'a self, request: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        let decision = self.decide(request.tool.as_str(), Some(request));
        Box::pin(async move { decision })
    }

    fn prompt<'a>(&'a self, request: &'a PermissionRequest) -> Option<BoxFuture<'a, Decision>> {
        let prompt = self.prompt.as_ref()?;
        Some(Box::pin(prompt.ask(request)))
    }
}
