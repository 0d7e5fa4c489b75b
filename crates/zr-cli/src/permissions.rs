//! `zr.toml` `[permissions]`: which tool calls run, decided from the
//! `allow` and `deny` lists of tool names or patterns.
//!
//! The lists decide first; what they leave open is asked at the terminal
//! when there is one (`ask.rs`), and refused otherwise:
//!
//! - a tool matching `deny` is refused, in every mode, read-only tools
//!   included (a PreToolUse hook), with a reason naming zr.toml;
//! - read-only tools run (the engine's mode rules; in `plan` mode only
//!   they run);
//! - `acceptEdits` also runs `Write` and `Edit`, `bypassPermissions` runs
//!   everything not denied;
//! - otherwise (`default`, `dontAsk`, `auto`) a tool matching `allow` runs;
//! - any other call of a foreground agent, in `default` or `auto` mode,
//!   is asked about when standard input and standard error are a terminal
//!   (allow once, for the session, always, or deny);
//! - and refused otherwise (no terminal, `dontAsk`, a background agent)
//!   with the reason "'Bash' is not in zr.toml `[permissions]` allow; add
//!   it there to let it run". The model reads the reason, and the
//!   progress output shows the denial.
//!
//! `TodoWrite` (the agent's own list) runs too unless denied. Without a
//! `[permissions]` table, a project therefore runs read-only tools,
//! `TodoWrite` and `Task`/`MultiTask`/`FindTool` (never asked about), and
//! nothing else; `zr init`'s zr.toml says how to allow more.

use std::sync::Arc;

use zr_caps::{PermissionMode, ToolPattern};
use zr_engine::{
    AgentConfig, Decision, Hook, HookAgent, PermissionConfig, PermissionHandler, PermissionRequest,
    PreToolUse,
};
use zr_types::{BoxFuture, ToolCall};

use crate::ask::PermissionPrompt;
use crate::config_key::patterns;
use crate::error::CliError;
use crate::project::Project;

/// Tools that are not read-only but change nothing outside the agent
/// itself: they run unless `deny` lists them.
const HARMLESS: [&str; 1] = ["TodoWrite"];

/// The `[permissions]` lists, as the permission handler and a hook.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConfigPermissions {
    allow: Vec<ToolPattern>,
    deny: Vec<ToolPattern>,
    /// The terminal's question, when there is a terminal.
    prompt: Option<Arc<PermissionPrompt>>,
}

impl ConfigPermissions {
    /// The lists of `project`'s zr.toml.
    ///
    /// # Errors
    ///
    /// [`CliError::Config`] for an entry that is not a tool name or pattern.
    pub(crate) fn from_project(project: &Project) -> Result<Self, CliError> {
        let p = &project.config.permissions;
        Ok(Self {
            allow: patterns(project, "permissions.allow", p.allow.as_deref())?.unwrap_or_default(),
            deny: patterns(project, "permissions.deny", p.deny.as_deref())?.unwrap_or_default(),
            prompt: None,
        })
    }

    /// The same lists, asking `prompt` about what they leave open.
    pub(crate) fn asking(mut self, prompt: Arc<PermissionPrompt>) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// Installs the lists into `config`: the handler always, the hook when
    /// something is denied.
    pub(crate) fn install(self, config: &mut AgentConfig) {
        let this = Arc::new(self);
        config.permissions = PermissionConfig {
            handler: Some(this.clone()),
            ..config.permissions.clone()
        };
        if !this.deny.is_empty() {
            config.hooks = std::mem::take(&mut config.hooks).with(this);
        }
    }

    /// Replaces the handler that [`ConfigPermissions::install`] put into
    /// `config` with this one (the deny hook stays).
    pub(crate) fn replace_handler(self, config: &mut AgentConfig) {
        config.permissions.handler = Some(Arc::new(self));
    }

    /// Why `tool` is refused by the deny list, if it is.
    fn denied(&self, tool: &str) -> Option<String> {
        self.deny.iter().find(|p| p.matches_name(tool)).map(|p| {
            format!("it matches \"{p}\" in zr.toml [permissions] deny; remove it from there to let it run")
        })
    }

    /// The decision about `tool` (a call the mode leaves to the host):
    /// `Ask` only with a terminal, for a foreground agent not in
    /// `dontAsk` mode.
    pub(crate) fn decide(&self, tool: &str, asked: Option<&PermissionRequest>) -> Decision {
        let can_ask = asked.is_some_and(|r| !r.background && r.mode != PermissionMode::DontAsk);
        let crossing = asked.and_then(|r| r.crossing.as_deref());
        if let Some(reason) = self.denied(tool) {
            Decision::Deny(reason)
        } else if let Some(why) = crossing {
            // No list allows a crossing: the person is asked, or it is refused.
            if can_ask && self.prompt.is_some() {
                Decision::Ask
            } else {
                Decision::Deny(format!(
                    "{why}; nobody can be asked here (no terminal, or a background agent)"
                ))
            }
        } else if HARMLESS.contains(&tool)
            || self.allow.iter().any(|p| p.matches_name(tool))
            || self.prompt.as_ref().is_some_and(|p| p.allowed_always(tool))
        {
            Decision::Allow
        } else if can_ask && self.prompt.is_some() {
            Decision::Ask
        } else {
            Decision::Deny(format!(
                "'{tool}' is not in zr.toml [permissions] allow; add it there to let it run (or set mode = \"bypassPermissions\")"
            ))
        }
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

impl Hook for ConfigPermissions {
    fn pre_tool_use<'a>(
        &'a self,
        _agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, PreToolUse> {
        let verdict = match self.denied(call.name.as_str()) {
            Some(reason) => PreToolUse::Deny(reason),
            None => PreToolUse::Continue,
        };
        Box::pin(async move { verdict })
    }
}
