//! Rebuilding a subagent's run from its transcript and running it to its
//! result.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use zr_caps::{AgentDefinition, AgentType, Budget};
use zr_resolve::Role;
use zr_types::{AgentId, AgentName, ToolName, error_chain, stable_hash};

use super::{called_tools, continue_history, log_repairs, resume_error};
use crate::agent::QueryResult;
use crate::agent::root_tools;
use crate::error::EngineError;
use crate::event::EventKind;
use crate::hooks;
use crate::run::{AgentRun, Progress, push_user_text};
use crate::session::{Cleanup, QueryCtx, Session};
use crate::task::{
    derived_kind, fill_from_outcome, fill_from_progress, subagent_tools, system_prompt,
};
use crate::transcript::{self, Header};
use crate::{TaskResult, TaskStatus};

fn definition_hash(definition: &AgentDefinition) -> Option<String> {
    serde_json::to_vec(definition)
        .ok()
        .map(|json| format!("{:016x}", stable_hash(&json)))
}

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
            .transcript_path(&parent)
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
        .transcript_path(&parent)
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
        .transcript_path(id)
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
    if !session.transcripts.claim(session, id, &loaded) {
        return Err(EngineError::Busy { agent: id.clone() });
    }
    let run = AgentRun {
        id: id.clone(),
        agent_type: Arc::from(label.as_str()),
        model: header.model.clone(),
        system,
        tools,
        history,
        max_turns: header.max_turns,
        budget: definition
            .as_ref()
            .map_or_else(Budget::default, |d| d.budget),
        progress: Arc::new(Mutex::new(Progress::default())),
        parent: header.parent.clone(),
        cwd,
        mode: crate::permission::effective_mode(
            config.permission_mode,
            definition.as_ref().and_then(|d| d.permission_mode),
        ),
        background: false,
        denials: crate::permission::Denials::default(),
        // The parent's prefix is not rebuilt: a resumed fork's requests
        // mark only the usual breakpoints.
        cache_prefix: None,
        reload: None,
    };
    Ok((run, warnings))
}

/// Rebuilds and runs the subagent `id`; its result is sent as
/// `SubagentFinished` and returned as the query's.
pub(super) async fn run(
    ctx: &QueryCtx,
    id: AgentId,
    prompt: Option<String>,
    root_loaded: &[ToolName],
) -> Result<QueryResult, EngineError> {
    let start = Instant::now();
    let (run, warnings) = rebuild(ctx, &id, prompt, root_loaded)?;
    let ty = Arc::clone(&run.agent_type);
    let parent = run.parent.clone().unwrap_or_else(AgentId::root);
    for message in warnings {
        tracing::warn!(agent = %id, "{message}");
        ctx.sink
            .send(&id, &ty, EventKind::ResumeWarning { message });
    }
    ctx.sink.send(
        &id,
        &ty,
        EventKind::SubagentStarted {
            parent: parent.clone(),
            description: "resumed".to_owned(),
            index: 0,
            background: false,
        },
    );
    let session = &ctx.session;
    if let Some(observer) = session.runtime.observer() {
        observer.agent_started(&session.id, &id, run.tools.pool());
    }
    let cleanup = Cleanup::new(Arc::clone(session), id.clone());
    // After the cleanup is armed, as for a new subagent.
    let hook_agent = hooks::agent_of(ctx, &run);
    hooks::subagent_start(ctx, &hook_agent, &parent).await;
    ctx.sink.send(&id, &ty, EventKind::SubagentRunning);
    let progress = Arc::clone(&run.progress);
    let timeout = session.config.subagent.timeout;
    let mut result = TaskResult::pending(0, ty.to_string(), "resumed".to_owned());
    result.agent_id = Some(id.clone());
    match tokio::time::timeout(timeout, run.run(ctx)).await {
        Ok(outcome) => fill_from_outcome(&mut result, outcome),
        Err(_) => {
            fill_from_progress(&mut result, &progress);
            result.status = TaskStatus::TimedOut;
            result.error = Some(format!(
                "did not finish within the {:.0} s budget and was stopped; the output is what it wrote so far",
                timeout.as_secs_f64()
            ));
        }
    }
    cleanup.run().await;
    result.duration = start.elapsed();
    hooks::subagent_stop(ctx, &hook_agent, &result).await;
    ctx.sink.send(
        &id,
        &ty,
        EventKind::SubagentFinished {
            result: Box::new(result.clone()),
        },
    );
    Ok(QueryResult {
        status: result.status,
        output: result.output,
        turns: result.turns,
        usage: result.usage,
        total_usage: ctx.total_usage(),
        duration: result.duration,
        failed_subagents: ctx.failed_subagents(),
    })
}
