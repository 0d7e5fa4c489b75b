//! `zr.toml` `[hooks]` and the `hooks` of Claude Code's settings files
//! (`claude_settings.rs`, after zr.toml's): shell commands at PreToolUse,
//! PostToolUse, SubagentStart, SubagentStop and Stop, in the shape of
//! Claude Code's settings, run as the engine's hooks (one pipeline: each command is one
//! [`Hook`] added with its timeout, after the `[permissions]` deny list).
//!
//! A command runs with `sh -c` in the project folder, in its own process
//! group, with the settings files' `env` and `ZR_PROJECT_DIR` and
//! `CLAUDE_PROJECT_DIR` set to the project, and gets the event as one JSON object on standard input, with
//! Claude Code's field names: `session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `hook_event_name`, `agent_id`, `agent_type`; for the
//! tool events `tool_name`, `tool_input`, `tool_use_id` (and
//! `tool_response` after the call); for SubagentStop
//! `agent_transcript_path`, `last_assistant_message`, `status`; for Stop
//! `last_assistant_message`; `stop_hook_active` is always `false`.
//!
//! Its answer:
//! - exit code 2: at PreToolUse the call is blocked and standard error is
//!   the reason the model reads; at the other events standard error is
//!   shown to the user as a warning (the tool already ran);
//! - exit code 0 with a JSON object on standard output: at PreToolUse
//!   `hookSpecificOutput.permissionDecision` `"deny"` blocks with
//!   `permissionDecisionReason`, `"allow"` runs the call without a
//!   question (the deny list and plan mode still hold), `"ask"` leaves it
//!   to the usual check; `hookSpecificOutput.updatedInput` replaces the
//!   input; the older `"decision": "block"` / `"approve"` with `reason`
//!   are understood too. Other output is ignored;
//! - any other exit code, or a command that cannot start: a warning, and
//!   the call goes on;
//! - no answer within its `timeout` (seconds, default 60): the engine's
//!   timeout; the process group is killed, and a PreToolUse call is
//!   denied saying so.

mod answer;
mod spawn;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use zr_engine::{AgentConfig, Hook, HookAgent, Hooks, PreToolUse, TaskResult};
use zr_types::{AgentId, BoxFuture, ToolCall, ToolOutput};

use crate::config::HookGroup;
use crate::config_key::config_key_error;
use crate::error::CliError;
use crate::project::Project;

pub(crate) use answer::pre_tool_use_answer;
use spawn::spawn_hook;

/// The events a command can be set for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    PreToolUse,
    PostToolUse,
    SubagentStart,
    SubagentStop,
    Stop,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::Stop => "Stop",
        }
    }
}

/// Which names a group's commands run for.
#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    /// Empty, missing or `*`.
    All,
    /// `Bash`, `Write|Edit`: exact names.
    Names(Vec<String>),
    /// Anything else: a regular expression over the whole name.
    Regex(regex::Regex),
}

impl Matcher {
    /// The matcher `text` means.
    ///
    /// # Errors
    ///
    /// The regular expression's error.
    pub(crate) fn parse(text: Option<&str>) -> Result<Self, regex::Error> {
        let text = text.unwrap_or("").trim();
        if text.is_empty() || text == "*" {
            return Ok(Self::All);
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '|';
        if text.chars().all(plain) {
            return Ok(Self::Names(text.split('|').map(str::to_owned).collect()));
        }
        regex::Regex::new(&format!("^(?:{text})$")).map(Self::Regex)
    }

    pub(crate) fn matches(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Names(names) => names.iter().any(|n| n == name),
            Self::Regex(re) => re.is_match(name),
        }
    }
}

/// One command of `[hooks]`.
#[derive(Debug)]
struct ShellHook {
    event: Event,
    matcher: Matcher,
    command: String,
    project: PathBuf,
    /// The settings files' `env`, set for the command.
    env: Arc<Vec<(String, String)>>,
}

/// Adds the commands of `project`'s `[hooks]` to `config.hooks`, in file
/// order, each with its timeout.
///
/// # Errors
///
/// [`CliError::Config`] for a `type` other than `"command"`, an empty
/// command or a matcher that is not a regular expression.
pub(crate) fn install(project: &Project, config: &mut AgentConfig) -> Result<(), CliError> {
    // zr.toml's groups, then the settings files' (checked when read).
    let h = &project.hooks();
    let events = [
        (Event::PreToolUse, &h.pre_tool_use),
        (Event::PostToolUse, &h.post_tool_use),
        (Event::SubagentStart, &h.subagent_start),
        (Event::SubagentStop, &h.subagent_stop),
        (Event::Stop, &h.stop),
    ];
    let mut hooks = std::mem::take(&mut config.hooks);
    for (event, groups) in events {
        for (i, group) in groups.iter().enumerate() {
            for (hook, timeout) in commands(project, event, i, group)? {
                hooks = hooks.with_timeout(hook, timeout);
            }
        }
    }
    config.hooks = hooks;
    Ok(())
}

/// A hook with the timeout of each of its calls.
type TimedHook = (Arc<dyn Hook>, Duration);

fn commands(
    project: &Project,
    event: Event,
    index: usize,
    group: &HookGroup,
) -> Result<Vec<TimedHook>, CliError> {
    let key = format!("hooks.{}[{index}]", event.name());
    let matcher = Matcher::parse(group.matcher.as_deref()).map_err(|e| {
        config_key_error(
            project,
            &format!("{key}.matcher"),
            format!("the matcher is not a regular expression: {e}"),
            "write a tool name, names joined by |, a regular expression, or \"*\" for all",
        )
    })?;
    let mut out: Vec<TimedHook> = Vec::new();
    let env: Arc<Vec<(String, String)>> = Arc::new(project.child_env().into_iter().collect());
    for (j, command) in group.hooks.iter().enumerate() {
        let at = format!("{key}.hooks[{j}]");
        if command.kind != "command" {
            return Err(config_key_error(
                project,
                &format!("{at}.type"),
                format!("unknown hook type \"{}\"", command.kind),
                "zr runs hooks of type = \"command\"",
            ));
        }
        if command.command.trim().is_empty() {
            return Err(config_key_error(
                project,
                &format!("{at}.command"),
                "the command is empty".to_owned(),
                "give a shell command, e.g. command = \".zr/hooks/check.sh\"",
            ));
        }
        let timeout = command
            .timeout
            .map_or(Hooks::DEFAULT_TIMEOUT, Duration::from_secs);
        out.push((
            Arc::new(ShellHook {
                event,
                matcher: matcher.clone(),
                command: command.command.clone(),
                project: project.root.clone(),
                env: Arc::clone(&env),
            }),
            timeout,
        ));
    }
    Ok(out)
}

/// What a finished command said.
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// The most bytes read of a command's standard output and error each.
const OUTPUT_LIMIT: u64 = 64 * 1024;

impl ShellHook {
    /// The fields every event has.
    fn base(&self, agent: &HookAgent) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        map.insert("session_id".into(), json!(agent.session.as_str()));
        map.insert("transcript_path".into(), json!(agent.transcript_path));
        map.insert("cwd".into(), json!(self.project));
        map.insert("permission_mode".into(), json!(agent.mode.as_str()));
        map.insert("hook_event_name".into(), json!(self.event.name()));
        map.insert("agent_id".into(), json!(agent.agent.as_str()));
        map.insert("agent_type".into(), json!(agent.agent_type));
        map
    }

    fn tool_event(&self, agent: &HookAgent, call: &ToolCall) -> serde_json::Map<String, Value> {
        let mut map = self.base(agent);
        map.insert("tool_name".into(), json!(call.name.as_str()));
        map.insert("tool_input".into(), call.input.clone());
        map.insert("tool_use_id".into(), json!(call.id));
        map
    }

    /// Runs the command with `event` on its standard input; `None` (with
    /// a warning) when it cannot start.
    async fn run(&self, event: serde_json::Map<String, Value>) -> Option<Ran> {
        let project = self.project.to_string_lossy();
        let mut env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        env.extend([
            ("ZR_PROJECT_DIR", project.as_ref()),
            ("CLAUDE_PROJECT_DIR", project.as_ref()),
        ]);
        let mut process = match spawn_hook(self.event.name(), &self.command, &self.project, &env) {
            Ok(p) => p,
            Err(error) => {
                tracing::warn!(
                    "the {} hook `{}` could not start: {error}",
                    self.event.name(),
                    self.command
                );
                return None;
            }
        };
        let input = Value::Object(event).to_string();
        let mut stdin = process.child.stdin.take();
        let mut stdout = process.child.stdout.take();
        let mut stderr = process.child.stderr.take();
        let write = async {
            if let Some(mut pipe) = stdin.take() {
                // A command that does not read its input is no error.
                let _ = pipe.write_all(input.as_bytes()).await;
                let _ = pipe.shutdown().await;
            }
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (child, group) = (&mut process.child, &process.group);
        let status = {
            let reads = async {
                tokio::join!(
                    read_into(stdout.take(), &mut out),
                    read_into(stderr.take(), &mut err)
                )
            };
            let exits = async {
                write.await;
                child.wait().await
            };
            tokio::pin!(reads, exits);
            let status = tokio::select! {
                _ = &mut reads => exits.await,
                status = &mut exits => {
                    // The command ended, but something it started may hold
                    // its output open: take what comes within a moment,
                    // then kill its group (what holds the pipes) and stop
                    // waiting.
                    if tokio::time::timeout(AFTER_EXIT, &mut reads).await.is_err() {
                        group.end();
                        let _ = tokio::time::timeout(AFTER_EXIT, &mut reads).await;
                    }
                    status
                }
            };
            status
        };
        let code = status.ok().and_then(|s| s.code());
        let ran = Ran {
            code,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        };
        if !matches!(ran.code, Some(0 | 2)) {
            tracing::warn!(
                "the {} hook `{}` failed ({}): {}",
                self.event.name(),
                self.command,
                ran.code.map_or_else(
                    || "killed by a signal".to_owned(),
                    |c| format!("exit code {c}")
                ),
                ran.stderr.trim()
            );
        }
        Some(ran)
    }

    /// Runs a hook of an event that cannot block: exit code 2 shows its
    /// standard error to the user.
    async fn notify(&self, event: serde_json::Map<String, Value>) {
        if let Some(ran) = self.run(event).await
            && ran.code == Some(2)
        {
            tracing::warn!(
                "the {} hook `{}`: {}",
                self.event.name(),
                self.command,
                ran.stderr.trim()
            );
        }
    }
}

/// How long a command's output is read after the command exited, before
/// what it left holding the pipes is killed.
const AFTER_EXIT: Duration = Duration::from_millis(200);

/// Up to [`OUTPUT_LIMIT`] bytes of `pipe` into `text` (what was read stays
/// there if the read is given up).
async fn read_into(pipe: Option<impl tokio::io::AsyncRead + Unpin>, text: &mut Vec<u8>) {
    if let Some(pipe) = pipe {
        // What was read before an error is what the command said.
        let _ = pipe.take(OUTPUT_LIMIT).read_to_end(text).await;
    }
}

impl Hook for ShellHook {
    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, PreToolUse> {
        Box::pin(async move {
            if self.event != Event::PreToolUse || !self.matcher.matches(call.name.as_str()) {
                return PreToolUse::Continue;
            }
            match self.run(self.tool_event(agent, call)).await {
                Some(ran) => pre_tool_use_answer(&ran),
                None => PreToolUse::Continue,
            }
        })
    }

    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.event != Event::PostToolUse || !self.matcher.matches(call.name.as_str()) {
                return;
            }
            let mut event = self.tool_event(agent, call);
            event.insert(
                "tool_response".into(),
                json!({"content": output.content, "is_error": output.is_error}),
            );
            self.notify(event).await;
        })
    }

    fn subagent_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        parent: &'a AgentId,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.event != Event::SubagentStart || !self.matcher.matches(&agent.agent_type) {
                return;
            }
            let mut event = self.base(agent);
            event.insert("parent_id".into(), json!(parent.as_str()));
            self.notify(event).await;
        })
    }

    fn subagent_stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        result: &'a TaskResult,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.event != Event::SubagentStop || !self.matcher.matches(&agent.agent_type) {
                return;
            }
            let mut event = self.base(agent);
            event.insert("agent_transcript_path".into(), json!(agent.transcript_path));
            event.insert("last_assistant_message".into(), json!(result.output));
            event.insert("status".into(), json!(result.status.as_str()));
            event.insert("stop_hook_active".into(), json!(false));
            self.notify(event).await;
        })
    }

    fn stop<'a>(&'a self, agent: &'a HookAgent, answer: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.event != Event::Stop {
                return;
            }
            let mut event = self.base(agent);
            event.insert("last_assistant_message".into(), json!(answer));
            event.insert("stop_hook_active".into(), json!(false));
            self.notify(event).await;
        })
    }
}

#[cfg(test)]
mod tests;
