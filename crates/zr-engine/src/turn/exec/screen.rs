//! The first stage of a call: what is settled before any hook or tool
//! is asked. A result recorded before a resume is taken as it is; a
//! stopped agent's call, a call of a tool the agent does not have, and a
//! call with effects that had started before the resume are answered
//! without running.

use zr_types::{ContentBlock, ToolCall, ToolOutput};

use super::{Answer, Recorded};
use crate::telemetry::ToolStatus;
use crate::tools::Callable;
use crate::turn::agent_run::AgentRun;

/// The answer to a call that had started when the process stopped and
/// whose result was not recorded.
pub(crate) const INTERRUPTED_CALL: &str = "interrupted: this call had started when the previous run stopped, and its result was not recorded. It was not run again: its effect may or may not have happened. Check before repeating it.";

/// What the screen let through.
pub(super) enum Screened<'a> {
    /// The result the transcript holds: not produced, reported or
    /// written again.
    Replayed(ContentBlock),
    /// Answered here; nothing runs.
    Answered(Answer),
    /// On to the hooks and the gate, for this tool.
    Run(&'a Callable),
}

/// Screens `call` of `agent`, in this order: a recorded result, the
/// agent stopped (by denials or a hook's halt), an unknown tool, a call
/// with effects started before the resume.
pub(super) fn screen<'a>(
    agent: &'a AgentRun,
    call: &ToolCall,
    recorded: &Recorded,
) -> Screened<'a> {
    if let Some(block) = recorded.results.get(&call.id) {
        return Screened::Replayed(block.clone());
    }
    if let Some(why) = agent.stopped() {
        let why = format!("not run: agent {} was {why}", agent.meta.id);
        return Screened::Answered(Answer::new(ToolOutput::error(why), ToolStatus::Denied));
    }
    let Some(tool) = agent.tools.get(&call.name) else {
        let name = &call.name;
        let hint = if agent.tools.in_directory(name) {
            format!(" yet: load it first with FindTool (query \"select:{name}\")")
        } else {
            String::new()
        };
        tracing::info!(tool = %name, "refused: not in the agent's pool");
        let output = ToolOutput::error(format!(
            "tool '{name}' is not available to agent {}{hint}",
            agent.meta.id
        ));
        return Screened::Answered(Answer::new(output, ToolStatus::Error));
    };
    if tool.has_effects() && recorded.started.contains(&call.id) {
        tracing::info!(tool = %call.name, "answered as interrupted: started before the resume, no result recorded");
        let output = ToolOutput::error(INTERRUPTED_CALL);
        return Screened::Answered(Answer::new(output, ToolStatus::Denied));
    }
    Screened::Run(tool)
}
