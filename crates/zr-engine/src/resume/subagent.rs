//! Rebuilding a subagent's run from its transcript and running it to its
//! result.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use zr_caps::{AgentDefinition, AgentType, Budget, Isolation};
use zr_resolve::Role;
use zr_types::{AgentId, AgentName, ToolName, error_chain};

use super::{log_repairs, resume_error};
use crate::agent::QueryResult;
use crate::agent_run::AgentRun;
use crate::config::definition_hash;
use crate::effects::deadline_after;
use crate::error::EngineError;
use crate::event::EventKind;
use crate::history::{called_tools, continue_history, push_user_text};
use crate::meta::AgentMeta;
use crate::outcome::TaskResult;
use crate::pools::{derived_kind, root_tools, subagent_tools, system_prompt};
use crate::session::{QueryCtx, Session};
use crate::subagent::{self, Announce, Limits, Subagent};
use crate::transcript::{self, Header};

/// The description of a resumed subagent's task.
const RESUMED: &str = "resumed";

/// What the subagent runs as: its type's definition (`None` for a fork),
/// its label and system prompt.
struct Kind {
    definition: Option<AgentDefinition>,
    label: String,
    system: String,
}

fn kind(session: &Session, header: &Header, warnings: &mut Vec<String>) -> Kind {
    if header.agent_type == "fork" {
        let parent = header.parent.clone().unwrap_or_else(AgentId::root);
        let from_parent = session
            .transcripts
            .path(&parent)
            .map(|path| transcript::read_header(&path));
        let system = match from_parent {
            Some(Ok(parent)) => parent.system_prompt,
            Some(Err(error)) => {
                warnings.push(format!(
                    "cannot read the header of the parent {parent} ({}); the fork resumes with the system prompt its own transcript recorded",
                    error_chain(&error)
                ));
                header.system_prompt.clone()
            }
            None => header.system_prompt.clone(),
        };
        return Kind {
            definition: None,
            label: "fork".to_owned(),
            system,
        };
    }
    let catalog = session.catalog.current();
    let known = header
        .agent_type
        .parse::<AgentName>()
        .ok()
        .and_then(|name| catalog.sub_agents.get(&name));
    let definition = match known {
        Some(d) => {
            if definition_hash(d) != header.definition_hash {
                warnings.push(format!(
                    "the definition of type '{}' changed since the agent started; it resumes with the current one",
                    header.agent_type
                ));
            }
            d.clone()
        }
        None => {
            let name: AgentName = "general-purpose"
                .parse()
                .expect("'general-purpose' is a valid agent name (lowercase letters and a hyphen)");
            let fallback = catalog.sub_agents.get(&name).cloned();
            warnings.push(format!(
                "no subagent type '{}' in the configuration; the agent resumes as general-purpose{}",
                header.agent_type,
                if fallback.is_some() {
                    ""
                } else {
                    " (its recorded system prompt, no tools of its own)"
                }
            ));
            fallback.unwrap_or_else(|| {
                AgentDefinition::new(name, "general-purpose", header.system_prompt.clone())
                    .with_type(AgentType::GeneralPurpose)
            })
        }
    };
    Kind {
        label: definition.name.as_str().to_owned(),
        system: system_prompt(&definition),
        definition: Some(definition),
    }
}

/// The recorded folder, or the parent's when it is gone.
fn folder(session: &Session, header: &Header, warnings: &mut Vec<String>) -> PathBuf {
    if header.cwd.is_dir() {
        return header.cwd.clone();
    }
    let parent = header.parent.clone().unwrap_or_else(AgentId::root);
    let runtime_cwd = session.runtime.settings().cwd.clone();
    let fallback = session
        .transcripts
        .path(&parent)
        .and_then(|path| transcript::read_header(&path).ok())
        .map(|h| h.cwd)
        .filter(|cwd| cwd.is_dir())
        .unwrap_or(runtime_cwd);
    warnings.push(format!(
        "the agent's folder {} is gone; it resumes in its parent's, {}",
        header.cwd.display(),
        fallback.display()
    ));
    fallback
}

/// The subagent `id`, rebuilt from its transcript, with `prompt` (or the
/// continue note) added; and the warnings to send.
fn rebuild(
    ctx: &QueryCtx,
    id: &AgentId,
    prompt: Option<String>,
    root_loaded: &[ToolName],
) -> Result<(AgentRun, Vec<String>), EngineError> {
    let session = &ctx.session;
    let path = session
        .transcripts
        .path(id)
        .ok_or(EngineError::TranscriptsOff)?;
    let loaded = transcript::read(&path).map_err(|e| resume_error(&session.id, id, e))?;
    log_repairs(id, &path, &loaded);
    let header = &loaded.header;
    let mut warnings = Vec::new();
    let Kind {
        definition,
        label,
        system,
    } = kind(session, header, &mut warnings);
    let cwd = folder(session, header, &mut warnings);
    let config = &session.config;
    // The root's pool as its queries resolve it (no overrides).
    let parent = root_tools(session, &session.catalog.current(), None, root_loaded)?;
    let role = match &definition {
        Some(d) => Role::Derived {
            kind: derived_kind(&d.agent_type),
            background: d.background,
        },
        None => Role::Fork { background: false },
    };
    let mut tools = subagent_tools(session, id, definition.as_ref(), role, &parent)?;
    tools.load(&called_tools(&loaded.history));
    let mut history = loaded.history.clone();
    match &prompt {
        Some(prompt) => push_user_text(&mut history, prompt),
        None => continue_history(&mut history),
    }
    // Last: a busy agent's transcript is not touched.
    if !session.transcripts.claim(id, &loaded) {
        return Err(EngineError::Busy { agent: id.clone() });
    }
    let meta = AgentMeta {
        id: id.clone(),
        agent_type: Arc::from(label.as_str()),
        parent: header.parent.clone(),
        mode: crate::permission::effective_mode(
            config.permission_mode,
            definition.as_ref().and_then(|d| d.permission_mode),
        ),
        background: false,
        cwd,
        model: header.model.clone(),
        system,
        max_turns: header.max_turns,
    };
    let budget = definition
        .as_ref()
        .map_or_else(Budget::default, |d| d.budget);
    // The parent's prefix is not rebuilt: a resumed fork's requests mark
    // only the usual breakpoints.
    let run = AgentRun::new(meta, tools, history).with_budget(budget);
    Ok((run, warnings))
}

/// Rebuilds and runs the subagent `id` through the subagent lifecycle,
/// within the `subagent.timeout` budget; its result is sent as
/// `SubagentFinished` and returned as the query's.
pub(super) async fn run(
    ctx: &QueryCtx,
    id: AgentId,
    prompt: Option<String>,
    root_loaded: &[ToolName],
) -> Result<QueryResult, EngineError> {
    let start = Instant::now();
    let (run, warnings) = rebuild(ctx, &id, prompt, root_loaded)?;
    for message in warnings {
        tracing::warn!(agent = %id, "{message}");
        ctx.sink
            .emit(&run.meta, EventKind::ResumeWarning { message });
    }
    subagent::started(ctx, &run, RESUMED, 0);
    let timeout = ctx.session.config.subagent.timeout;
    let mut result = TaskResult::pending(0, run.meta.agent_type.to_string(), RESUMED.to_owned());
    result.agent_id = Some(id);
    let subagent = Subagent {
        run,
        result,
        // It works in its recorded folder (or its parent's): a worktree is
        // not made again.
        isolation: Isolation::None,
        start,
    };
    let timed_out = |_| {
        format!(
            "did not finish within the {:.0} s budget and was stopped; the output is what it wrote so far",
            timeout.as_secs_f64()
        )
    };
    let limits = Limits {
        slots: None,
        deadline: Some(deadline_after(timeout)),
        timed_out: &timed_out,
    };
    let result = subagent::live(ctx, subagent, limits, std::future::pending(), &mut Announce).await;
    Ok(QueryResult {
        status: result.status,
        output: result.output,
        turns: result.turns,
        usage: result.usage,
        total_usage: ctx.total_usage(),
        cost_usd: ctx.total_cost(),
        duration: result.duration,
        failed_subagents: ctx.failed_subagents(),
    })
}
