//! Claude Code's command hooks: zr.toml `[hooks]` (and an agent file's
//! `hooks`) as shell commands on the engine's hook pipeline, with Claude
//! Code's events, input and answers. Each command is one [`Hook`] added
//! with its timeout: zr.toml's to the session ([`install`]), an agent
//! file's to the agents of its type only ([`FileHooks`]).
//!
//! zr.toml's `[hooks]` come first, then the `hooks` of Claude Code's
//! settings files (`claude_settings.rs`), each file's in its own order.
//!
//! A command runs with `sh -c` in the project folder, in its own process
//! group, with the settings files' `env` and `ZR_PROJECT_DIR` and
//! `CLAUDE_PROJECT_DIR` set to the project, and gets its event as one JSON object on standard input, with
//! Claude Code's field names: `session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `hook_event_name`, `agent_id`, `agent_type`, and
//! per event:
//!
//! | event | fields | matcher over |
//! |---|---|---|
//! | PreToolUse | `tool_name`, `tool_input`, `tool_use_id` | the tool's name |
//! | PostToolUse | the same and `tool_response` (`content`, `is_error`) | the tool's name |
//! | Stop | `stop_hook_active`, `last_assistant_message` | – |
//! | SubagentStop | the same and `agent_transcript_path`; `status` when the subagent ended without stopping on its own (not blockable then) | the agent type |
//! | SubagentStart | `parent_id` | the agent type |
//! | UserPromptSubmit | `prompt` | – |
//! | SessionStart | `source` (`startup`, `resume`) | the source |
//! | SessionEnd | `reason` (`prompt_input_exit`, `clear`, `other`) | the reason |
//! | PreCompact | `trigger` (`auto`, `manual`), `custom_instructions` | the trigger |
//! | Notification | `message`, `notification_type` (`permission_prompt`) | the type |
//!
//! Its answer (`hooks/answer.rs`): exit code 2 blocks (PreToolUse,
//! PostToolUse, Stop, SubagentStop, UserPromptSubmit) with standard error
//! as the reason, or shows standard error to the user (the others); exit
//! code 0 with a JSON object in Claude Code's format; any other code, or
//! a command that cannot start, is a warning and the event goes on. No
//! answer within its `timeout` (seconds, default 60) is the engine's
//! timeout: the process group is killed, a PreToolUse call refused, any
//! other event goes on.
//!
//! In an agent file's `hooks`, `Stop` and `SubagentStop` both run when
//! that agent is about to stop (Claude Code turns a subagent's `Stop`
//! into `SubagentStop`), PreToolUse, PostToolUse, PreCompact and
//! Notification for that agent's events; the session's events
//! (SessionStart, SessionEnd, UserPromptSubmit, SubagentStart) do not
//! apply there and are warned about.

mod answer;
mod spawn;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use zr_caps::AgentDefinition;
use zr_engine::{
    AgentConfig, CompactTrigger, Hook, HookAgent, HookReply, Hooks, Notice, SessionEndReason,
    SessionSource, TaskResult, TaskStatus, TypeHooks,
};
use zr_types::{AgentId, BoxFuture, ToolCall, ToolOutput};

use crate::config::{HookGroup, HooksConfig};
use crate::config_key::config_key_error;
use crate::error::CliError;
use crate::hook_matcher::Matcher;
use crate::project::Project;

use answer::reply;

/// The events a command can be set for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    PreToolUse,
    PostToolUse,
    SubagentStart,
    SubagentStop,
    Stop,
    UserPromptSubmit,
    SessionStart,
    SessionEnd,
    PreCompact,
    Notification,
}

impl Event {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::Stop => "Stop",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::PreCompact => "PreCompact",
            Self::Notification => "Notification",
        }
    }

    /// Whether exit code 2 (or `"decision": "block"`) blocks it.
    pub(crate) fn blocks(self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::PostToolUse
                | Self::Stop
                | Self::SubagentStop
                | Self::UserPromptSubmit
        )
    }

    /// Whether what a command writes on standard output (not JSON) is
    /// context for the model.
    pub(crate) fn takes_plain_context(self) -> bool {
        matches!(self, Self::UserPromptSubmit | Self::SessionStart)
    }

    /// Whether it can be set in an agent file's `hooks` (an event of that
    /// agent's own).
    fn of_an_agent(self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::PostToolUse
                | Self::Stop
                | Self::SubagentStop
                | Self::PreCompact
                | Self::Notification
        )
    }
}

/// Whose events a command runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// zr.toml's (and settings'): every agent's.
    Session,
    /// An agent file's: its agents' own (Stop is their SubagentStop).
    Own,
}

/// One command.
#[derive(Debug)]
struct ShellHook {
    event: Event,
    scope: Scope,
    matcher: Matcher,
    command: String,
    project: PathBuf,
    /// The settings files' `env`, set for the command.
    env: Env,
}

/// Variables set for every hook command (the settings files' `env`).
type Env = Arc<Vec<(String, String)>>;

/// A problem with one entry of a hooks table: its key
/// (`hooks.PreToolUse[0].matcher`), what is wrong, and what to write.
#[derive(Debug)]
pub(crate) struct EntryError {
    pub(crate) key: String,
    pub(crate) message: String,
    pub(crate) help: &'static str,
}

/// A hook with the timeout of each of its calls.
type TimedHook = (Arc<dyn Hook>, Duration);

/// Every event's groups in `table`, in a fixed order.
fn events(table: &HooksConfig) -> [(Event, &Vec<HookGroup>); 10] {
    [
        (Event::SessionStart, &table.session_start),
        (Event::UserPromptSubmit, &table.user_prompt_submit),
        (Event::PreToolUse, &table.pre_tool_use),
        (Event::PostToolUse, &table.post_tool_use),
        (Event::SubagentStart, &table.subagent_start),
        (Event::SubagentStop, &table.subagent_stop),
        (Event::Stop, &table.stop),
        (Event::PreCompact, &table.pre_compact),
        (Event::Notification, &table.notification),
        (Event::SessionEnd, &table.session_end),
    ]
}

/// The commands of `table`, in file order per event, for `scope`; their
/// keys start with `prefix`.
fn commands_of(
    table: &HooksConfig,
    scope: Scope,
    (root, env): (&std::path::Path, &Env),
    prefix: &str,
) -> Result<Vec<TimedHook>, EntryError> {
    let mut out = Vec::new();
    for (event, groups) in events(table) {
        for (i, group) in groups.iter().enumerate() {
            let key = format!("{prefix}.{}[{i}]", event.name());
            out.extend(commands(event, scope, (root, env), &key, group)?);
        }
    }
    Ok(out)
}

/// Adds the commands of `project`'s `[hooks]` to `config.hooks`, after
/// those already there, each with its timeout; sets `max_stop_blocks`;
/// and reads agent files' `hooks` ([`FileHooks`]).
///
/// # Errors
///
/// [`CliError::Config`] for a `type` other than `"command"`, an empty
/// command or a matcher that is not a regular expression.
pub(crate) fn install(project: &Project, config: &mut AgentConfig) -> Result<(), CliError> {
    // zr.toml's groups, then the settings files' (checked when read).
    let table = &project.hooks();
    let env: Env = Arc::new(project.child_env().into_iter().collect());
    let hooks = std::mem::take(&mut config.hooks);
    config.hooks = add_commands(hooks, table, (&project.root, &env), "hooks")
        .map_err(|e| config_key_error(project, &e.key, e.message, e.help))?;
    config.type_hooks = Some(Arc::new(FileHooks {
        project: project.root.clone(),
        env,
        warned: Mutex::new(Vec::new()),
    }));
    Ok(())
}

/// `hooks` with the session's commands of `table` added after them (a
/// command runs in `root`; an entry's key in an error starts with
/// `prefix`), and `table`'s `max_stop_blocks` if it sets one. zr.toml's
/// `[hooks]` goes through here, and so can another file's table in the
/// same shape (`.claude/settings.json`), with its own error location.
///
/// # Errors
///
/// The first entry zr cannot run ([`EntryError`]).
pub(crate) fn add_commands(
    hooks: Hooks,
    table: &HooksConfig,
    place: (&std::path::Path, &Env),
    prefix: &str,
) -> Result<Hooks, EntryError> {
    let mut hooks = hooks;
    for (hook, timeout) in commands_of(table, Scope::Session, place, prefix)? {
        hooks = hooks.with_timeout(hook, timeout);
    }
    if let Some(n) = table.max_stop_blocks {
        hooks = hooks.with_max_stop_blocks(n);
    }
    Ok(hooks)
}

fn commands(
    event: Event,
    scope: Scope,
    (root, env): (&std::path::Path, &Env),
    key: &str,
    group: &HookGroup,
) -> Result<Vec<TimedHook>, EntryError> {
    let matcher = Matcher::parse(group.matcher.as_deref()).map_err(|e| EntryError {
        key: format!("{key}.matcher"),
        message: format!("the matcher is not a regular expression: {e}"),
        help: "write a tool name, names joined by |, a regular expression, or \"*\" for all",
    })?;
    let mut out: Vec<TimedHook> = Vec::new();
    for (j, command) in group.hooks.iter().enumerate() {
        let at = format!("{key}.hooks[{j}]");
        if command.kind != "command" {
            return Err(EntryError {
                key: format!("{at}.type"),
                message: format!("unknown hook type \"{}\"", command.kind),
                help: "zr runs hooks of type = \"command\"",
            });
        }
        if command.command.trim().is_empty() {
            return Err(EntryError {
                key: format!("{at}.command"),
                message: "the command is empty".to_owned(),
                help: "give a shell command, e.g. command = \".zr/hooks/check.sh\"",
            });
        }
        let timeout = command
            .timeout
            .map_or(Hooks::DEFAULT_TIMEOUT, Duration::from_secs);
        out.push((
            Arc::new(ShellHook {
                event,
                scope,
                matcher: matcher.clone(),
                command: command.command.clone(),
                project: root.to_path_buf(),
                env: Arc::clone(env),
            }),
            timeout,
        ));
    }
    Ok(out)
}

/// The `hooks` of agent files ([`AgentDefinition::hooks`]) as the hooks of
/// their agents: read when an agent of the type is built; a table zr
/// cannot run is warned about once per type and runs nothing.
#[derive(Debug)]
pub(crate) struct FileHooks {
    project: PathBuf,
    /// The settings files' `env`, set for every command.
    env: Env,
    /// The types already warned about.
    warned: Mutex<Vec<String>>,
}

impl FileHooks {
    fn warn_once(&self, name: &str, message: &str) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if !warned.iter().any(|n| n == name) {
            warned.push(name.to_owned());
            tracing::warn!("agent type {name}: {message}");
        }
    }
}

/// The hooks of an agent file's `hooks` table, or what is wrong with it.
pub(crate) fn file_hooks(
    value: &Value,
    place: (&std::path::Path, &Env),
) -> Result<Vec<TimedHook>, String> {
    let table: HooksConfig = serde_json::from_value(value.clone())
        .map_err(|e| format!("its hooks cannot be read: {e}"))?;
    for (event, groups) in events(&table) {
        if !groups.is_empty() && !event.of_an_agent() {
            return Err(format!(
                "its hooks set {}, a session event that an agent file cannot set (PreToolUse, PostToolUse, Stop, SubagentStop, PreCompact and Notification can)",
                event.name()
            ));
        }
    }
    commands_of(&table, Scope::Own, place, "hooks")
        .map_err(|e| format!("{}: {} ({})", e.key, e.message, e.help))
}

impl TypeHooks for FileHooks {
    fn hooks(&self, definition: &AgentDefinition) -> Hooks {
        let Some(value) = &definition.hooks else {
            return Hooks::new();
        };
        match file_hooks(value, (&self.project, &self.env)) {
            Ok(commands) => commands
                .into_iter()
                .fold(Hooks::new(), |h, (hook, timeout)| {
                    h.with_timeout(hook, timeout)
                }),
            Err(message) => {
                self.warn_once(
                    definition.name.as_str(),
                    &format!("{message}; none of them run"),
                );
                Hooks::new()
            }
        }
    }
}

impl ShellHook {
    /// The fields every event has, `event` named as it happens.
    fn base(&self, agent: &HookAgent, event: Event) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        map.insert("session_id".into(), json!(agent.session.as_str()));
        map.insert("transcript_path".into(), json!(agent.transcript_path));
        map.insert("cwd".into(), json!(self.project));
        map.insert("permission_mode".into(), json!(agent.mode.as_str()));
        map.insert("hook_event_name".into(), json!(event.name()));
        map.insert("agent_id".into(), json!(agent.agent.as_str()));
        map.insert("agent_type".into(), json!(agent.agent_type));
        map
    }

    fn tool_event(&self, agent: &HookAgent, call: &ToolCall) -> serde_json::Map<String, Value> {
        let mut map = self.base(agent, self.event);
        map.insert("tool_name".into(), json!(call.name.as_str()));
        map.insert("tool_input".into(), call.input.clone());
        map.insert("tool_use_id".into(), json!(call.id));
        map
    }

    /// Whether it runs at `event` for `name` (what its matcher reads).
    fn fires(&self, event: Event, name: &str) -> bool {
        self.event == event && self.matcher.matches(name)
    }

    /// Runs the command with `input` on its standard input (as the
    /// `event` it happens as): its answer.
    async fn ask(&self, event: Event, input: serde_json::Map<String, Value>) -> HookReply {
        let input = Value::Object(input).to_string();
        match spawn::run_command(
            event.name(),
            &self.command,
            (&self.project, &self.env),
            input,
        )
        .await
        {
            Some(ran) => reply(event, &self.command, &ran),
            None => HookReply::proceed(),
        }
    }
}

impl Hook for ShellHook {
    fn session_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        source: SessionSource,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            if self.scope != Scope::Session || !self.fires(Event::SessionStart, source.as_str()) {
                return HookReply::proceed();
            }
            let mut input = self.base(agent, Event::SessionStart);
            input.insert("source".into(), json!(source.as_str()));
            self.ask(Event::SessionStart, input).await
        })
    }

    fn user_prompt_submit<'a>(
        &'a self,
        agent: &'a HookAgent,
        prompt: &'a str,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            if self.scope != Scope::Session || self.event != Event::UserPromptSubmit {
                return HookReply::proceed();
            }
            let mut input = self.base(agent, Event::UserPromptSubmit);
            input.insert("prompt".into(), json!(prompt));
            self.ask(Event::UserPromptSubmit, input).await
        })
    }

    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            if !self.fires(Event::PreToolUse, call.name.as_str()) {
                return HookReply::proceed();
            }
            self.ask(Event::PreToolUse, self.tool_event(agent, call))
                .await
        })
    }

    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            if !self.fires(Event::PostToolUse, call.name.as_str()) {
                return HookReply::proceed();
            }
            let mut input = self.tool_event(agent, call);
            input.insert(
                "tool_response".into(),
                json!({"content": output.content, "is_error": output.is_error}),
            );
            self.ask(Event::PostToolUse, input).await
        })
    }

    fn stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        answer: &'a str,
        active: bool,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            // What happens: the root's stop is Stop, a subagent's
            // SubagentStop; an agent file's Stop is its SubagentStop.
            let event = if agent.is_root() {
                Event::Stop
            } else {
                Event::SubagentStop
            };
            let fires = match self.scope {
                Scope::Session if event == Event::Stop => self.event == Event::Stop,
                Scope::Session => self.fires(Event::SubagentStop, &agent.agent_type),
                Scope::Own => matches!(self.event, Event::Stop | Event::SubagentStop),
            };
            if !fires {
                return HookReply::proceed();
            }
            let mut input = self.base(agent, event);
            input.insert("stop_hook_active".into(), json!(active));
            input.insert("last_assistant_message".into(), json!(answer));
            if event == Event::SubagentStop {
                input.insert("agent_transcript_path".into(), json!(agent.transcript_path));
            }
            self.ask(event, input).await
        })
    }

    fn subagent_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        parent: &'a AgentId,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.scope != Scope::Session || !self.fires(Event::SubagentStart, &agent.agent_type)
            {
                return;
            }
            let mut input = self.base(agent, Event::SubagentStart);
            input.insert("parent_id".into(), json!(parent.as_str()));
            self.ask(Event::SubagentStart, input).await;
        })
    }

    fn subagent_stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        result: &'a TaskResult,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // A subagent that completed ran SubagentStop at its stop; one
            // that ended otherwise (failed, timed out, cancelled, denied,
            // stopped, at its turn limit or budget) gets it here, where
            // nothing can keep it working.
            if self.scope != Scope::Session
                || result.status == TaskStatus::Completed
                || !self.fires(Event::SubagentStop, &agent.agent_type)
            {
                return;
            }
            let mut input = self.base(agent, Event::SubagentStop);
            input.insert("stop_hook_active".into(), json!(false));
            input.insert("agent_transcript_path".into(), json!(agent.transcript_path));
            input.insert("last_assistant_message".into(), json!(result.output));
            input.insert("status".into(), json!(result.status.as_str()));
            self.ask(Event::SubagentStop, input).await;
        })
    }

    fn pre_compact<'a>(
        &'a self,
        agent: &'a HookAgent,
        trigger: CompactTrigger,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if !self.fires(Event::PreCompact, trigger.as_str()) {
                return;
            }
            let mut input = self.base(agent, Event::PreCompact);
            input.insert("trigger".into(), json!(trigger.as_str()));
            input.insert("custom_instructions".into(), json!(""));
            self.ask(Event::PreCompact, input).await;
        })
    }

    fn notification<'a>(&'a self, agent: &'a HookAgent, notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if !self.fires(Event::Notification, notice.kind.as_str()) {
                return;
            }
            let mut input = self.base(agent, Event::Notification);
            input.insert("message".into(), json!(notice.message));
            input.insert("notification_type".into(), json!(notice.kind.as_str()));
            self.ask(Event::Notification, input).await;
        })
    }

    fn session_end<'a>(
        &'a self,
        agent: &'a HookAgent,
        reason: SessionEndReason,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.scope != Scope::Session || !self.fires(Event::SessionEnd, reason.as_str()) {
                return;
            }
            let mut input = self.base(agent, Event::SessionEnd);
            input.insert("reason".into(), json!(reason.as_str()));
            self.ask(Event::SessionEnd, input).await;
        })
    }
}

#[cfg(test)]
mod tests;
