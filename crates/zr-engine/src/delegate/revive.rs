//! Reviving a subagent from its transcript: reading it back, and either
//! its recorded result (a run that finished) or an [`AgentRun`] that
//! continues its history (a run cut short). Used by a resumed `Task` or
//! `MultiTask` call (`task.rs`), by a background agent the kill cut off
//! (`background.rs`) and by `Agent::resume_subagent` (`resume/`): one
//! rebuild for all three, which then run through the one lifecycle
//! (`subagent::live`).
//!
//! A resumed agent never gets more than it started with. A typed one runs
//! with the definition its header recorded, whatever the configuration
//! has now: a type that changed or is gone is a warning, and the change
//! takes effect for new agents only. Its pool is resolved from that
//! definition against the tools that exist now: a custom or connection
//! tool the runtime no longer has is left out (a warning), never invented.
//! Its permission mode is the stricter of the one it started with and
//! what its type and the root's mode give now. A header of the older
//! format (version 1, a hash of the definition alone) resumes with the
//! configuration's definition while its hash is the recorded one, and is
//! refused once it changed or is gone ([`EngineError::DefinitionChanged`]).
//!
//! A fork gets its parent's system prompt from the parent's transcript and
//! its shared prefix back (`cache_prefix`). An agent works in its recorded
//! folder, or in its parent's when that folder is gone (a warning).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use zr_caps::{AgentDefinition, Budget};
use zr_protocol::transcript::Header;
use zr_resolve::{Depth, DerivedKind, Role};
use zr_types::{AgentId, AgentName, SessionId, ToolDefinition, error_chain};

use crate::config::definition_hash;
use crate::error::{EngineError, TranscriptError};
use crate::history::{Opening, called_tools};
use crate::meta::AgentMeta;
use crate::model::agent_model::effort;
use crate::model::structured::{Structured, subagent_output};
use crate::outcome::{TaskResult, TaskStatus};
use crate::session::Session;
use crate::session::pools::{derived_kind, subagent_tools, system_prompt};
use crate::tools::AgentTools;
use crate::transcript::{self, Loaded};
use crate::turn::agent_run::{AgentRun, Delegate, Resumption};

/// The error of a transcript that cannot be resumed.
pub(crate) fn resume_error(
    session: &SessionId,
    agent: &AgentId,
    source: TranscriptError,
) -> EngineError {
    EngineError::Resume {
        session: session.clone(),
        agent: agent.clone(),
        source,
    }
}

/// Logs what was read, and what reading `loaded` ignored or repaired.
pub(crate) fn log_repairs(agent: &AgentId, path: &Path, loaded: &Loaded) {
    tracing::info!(%agent, path = %path.display(), records = loaded.records, messages = loaded.history.len(), interrupted = loaded.finished.is_none(), "resuming from the transcript");
    if loaded.torn {
        tracing::warn!(%agent, path = %path.display(), "the transcript's last line is torn; it is ignored");
    }
    let r = loaded.repairs;
    if r.any() {
        tracing::warn!(%agent, path = %path.display(), calls = r.calls, results = r.results, empty = r.empty, "dropped tool calls without results, results without calls and empty messages");
    }
}

/// Reads the transcript of `id` in `session`.
pub(crate) fn load(session: &Session, id: &AgentId) -> Result<Loaded, EngineError> {
    let path = session
        .transcripts
        .path(id)
        .ok_or(EngineError::TranscriptsOff)?;
    let loaded = transcript::read(&path).map_err(|e| resume_error(&session.id, id, e))?;
    log_repairs(id, &path, &loaded);
    Ok(loaded)
}

/// The result a finished transcript recorded, for task `index` (`None`
/// when its last run was cut short). Its duration is not recorded: zero.
pub(crate) fn recorded_result(id: &AgentId, loaded: &Loaded, index: usize) -> Option<TaskResult> {
    let finished = loaded.finished.as_ref()?;
    let header = &loaded.header;
    let description = header
        .task
        .as_ref()
        .map(|t| t.description.clone())
        .unwrap_or_default();
    let mut result = TaskResult::pending(index, header.agent_type.clone(), description);
    result.agent_id = Some(id.clone());
    result.status = TaskStatus::from_name(&finished.status).unwrap_or(TaskStatus::Failed);
    result.output = finished.output.clone();
    result.turns = finished.turns;
    result.usage = finished.usage;
    result.error = finished.error.clone();
    result.value = finished.value.clone();
    result.duration = Duration::ZERO;
    Some(result)
}

/// What the subagent runs as: its type's definition (`None` for a fork),
/// its label and system prompt.
struct Kind {
    definition: Option<AgentDefinition>,
    label: String,
    system: Arc<str>,
}

fn kind(
    session: &Session,
    id: &AgentId,
    header: &Header,
    warnings: &mut Vec<String>,
) -> Result<Kind, EngineError> {
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
        return Ok(Kind {
            definition: None,
            label: "fork".to_owned(),
            system: Arc::from(system),
        });
    }
    let definition = typed(session, id, header, warnings)?;
    // Its memory as it is now, as when an agent of its type starts.
    let memory = crate::delegate::agent_memory::folder(
        &definition,
        &session.runtime.settings().cwd,
        session.config.permissions.boundary.home.as_deref(),
    );
    // With the project's instructions as they are now, as the root resumes
    // with them.
    let system = crate::delegate::agent_memory::with_section(
        system_prompt(
            &definition,
            session.catalog.current().instructions.as_deref(),
        ),
        memory.as_deref(),
    );
    Ok(Kind {
        label: definition.name.as_str().to_owned(),
        system,
        definition: Some(definition),
    })
}

/// The definition a typed subagent resumes with: the one its header
/// recorded, whatever the configuration has now (a change or a removal
/// is a warning); for a header of the older format, which recorded a
/// hash alone, the configuration's while its hash is the recorded one,
/// else [`EngineError::DefinitionChanged`].
fn typed(
    session: &Session,
    id: &AgentId,
    header: &Header,
    warnings: &mut Vec<String>,
) -> Result<AgentDefinition, EngineError> {
    let catalog = session.catalog.current();
    let current = header
        .agent_type
        .parse::<AgentName>()
        .ok()
        .and_then(|name| catalog.sub_agents.get(&name));
    let changed = current.is_some_and(|d| definition_hash(d) != header.definition_hash);
    let Some(recorded) = &header.definition else {
        return match current {
            Some(d) if !changed => Ok(d.clone()),
            _ => Err(EngineError::DefinitionChanged {
                agent: id.clone(),
                agent_type: header.agent_type.clone(),
                removed: current.is_none(),
            }),
        };
    };
    match current {
        Some(_) if changed => warnings.push(format!(
            "the definition of type '{}' changed since the agent started; it resumes with the one it started with (the change takes effect for new agents)",
            header.agent_type
        )),
        Some(_) => {}
        None => warnings.push(format!(
            "no subagent type '{}' in the configuration any more; the agent resumes with the definition it started with",
            header.agent_type
        )),
    }
    let mut definition = AgentDefinition::clone(recorded);
    let capabilities = &mut definition.capabilities;
    for list in [
        &mut capabilities.custom_tools,
        &mut capabilities.connection_tools,
    ]
    .into_iter()
    .flatten()
    {
        *list = present(session, list, warnings);
    }
    Ok(definition)
}

/// The tools of `recorded` that the runtime still has, as it registered
/// them (their handlers are found by the registered `Arc`); a tool it no
/// longer has is left out with a warning, never invented.
fn present(
    session: &Session,
    recorded: &[Arc<ToolDefinition>],
    warnings: &mut Vec<String>,
) -> Vec<Arc<ToolDefinition>> {
    let registered = session.runtime.tools();
    recorded
        .iter()
        .filter_map(|tool| {
            let found = registered.registered(tool).cloned();
            if found.is_none() {
                warnings.push(format!(
                    "tool '{}' that the agent started with is no longer in the runtime; it resumes without it",
                    tool.name
                ));
            }
            found
        })
        .collect()
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

/// The output schema the `Task` call passed, as the header recorded it.
fn call_schema(id: &AgentId, header: &Header) -> Result<Option<Arc<Structured>>, EngineError> {
    header
        .output_schema
        .as_ref()
        .map(|schema| {
            Structured::compile_call(schema).map_err(|message| EngineError::OutputSchema {
                agent: id.clone(),
                from: "its Task call, as its transcript recorded it".to_owned(),
                message,
            })
        })
        .transpose()
}

/// How a revived subagent runs.
#[derive(Debug, Clone)]
pub(crate) struct Revive<'a> {
    /// Its parent's tools (a fork's pool derives from them).
    pub(crate) parent: &'a AgentTools,
    /// A new prompt; `None` continues where the transcript stops.
    pub(crate) prompt: Option<String>,
    /// In the background (as it was recorded), or in the foreground.
    pub(crate) background: bool,
    /// How its Task and MultiTask calls run when its depth lets it
    /// delegate (the session's subagent code; `None`: it cannot).
    pub(crate) delegate: Option<Arc<dyn Delegate>>,
}

/// The subagent `id`, rebuilt from `loaded` (its transcript) to go on as
/// `how` says; and the warnings to send. Its transcript is claimed last:
/// a subagent that runs now is [`EngineError::Busy`] and its transcript
/// is not touched.
pub(crate) fn rebuild(
    session: &Session,
    id: &AgentId,
    loaded: &Loaded,
    how: Revive<'_>,
) -> Result<(AgentRun, Vec<String>), EngineError> {
    let header = &loaded.header;
    let mut warnings = Vec::new();
    let Kind {
        definition,
        label,
        system,
    } = kind(session, id, header, &mut warnings)?;
    let cwd = folder(session, header, &mut warnings);
    let role = match &definition {
        Some(d) => Role::Derived {
            kind: derived_kind(&d.agent_type),
            background: how.background,
        },
        None => Role::Fork {
            background: how.background,
        },
    };
    // Its level is its id's; its ceiling as it started (older transcripts
    // were made when only the root delegated).
    let level = u32::try_from(id.depth()).unwrap_or(u32::MAX);
    let depth = Depth {
        level,
        ceiling: header.depth_ceiling.unwrap_or(level),
    };
    let mut tools = subagent_tools(session, id, definition.as_ref(), (role, depth), how.parent)?;
    tools.load(&called_tools(&loaded.history));
    if !session.transcripts.claim(id, loaded) {
        return Err(EngineError::Busy { agent: id.clone() });
    }
    let meta = AgentMeta {
        id: id.clone(),
        agent_type: Arc::from(label.as_str()),
        parent: header.parent.clone(),
        // Never wider than it started with, nor than its type and its
        // parent allow now.
        mode: crate::policy::permission::effective_mode(
            session.config.permission_mode,
            definition.as_ref().and_then(|d| d.permission_mode),
        )
        .clamp(header.permission_mode),
        background: how.background,
        cwd: cwd.into(),
        // A removed worktree: the agent works in its parent's folder now.
        worktree: header
            .worktree
            .as_deref()
            .filter(|w| w.is_dir())
            .map(Arc::from),
        memory: definition
            .as_ref()
            .and_then(|d| {
                crate::delegate::agent_memory::folder(
                    d,
                    &session.runtime.settings().cwd,
                    session.config.permissions.boundary.home.as_deref(),
                )
            })
            .map(Arc::from),
        reads_only: matches!(
            role,
            Role::Derived {
                kind: DerivedKind::Explore | DerivedKind::Plan,
                ..
            }
        ),
        writes: crate::session::pools::writes_files(&tools, definition.as_ref()),
        narrowing: definition
            .as_ref()
            .and_then(crate::session::pools::narrowing),
        model: Arc::from(header.model.as_str()),
        system,
        max_turns: header.max_turns,
        task: header.task.clone(),
        // The schema the Task call passed (its header has it) wins over
        // the type's, as it did before.
        output: subagent_output(call_schema(id, header)?, definition.as_ref(), id)?,
        effort: definition.as_ref().and_then(|d| d.effort).map(effort),
        depth,
    };
    let budget = definition
        .as_ref()
        .map_or_else(Budget::default, |d| d.budget);
    // A fork's first messages are its parent's history up to the answer
    // that forked it: the same prefix as before the kill.
    let cache_prefix = definition
        .is_none()
        .then(|| header.inherited_messages.checked_sub(1))
        .flatten();
    let resumption = Resumption {
        started: loaded.started.clone(),
        opening: Opening::prompt(how.prompt),
    };
    let hooks = session.config.hooks_of_type(definition.as_ref());
    let mut run = AgentRun::new(meta, tools, loaded.history.clone());
    if let Some(delegate) = how.delegate
        && depth.delegates(session.config.policy.max_depth)
    {
        run = run.with_delegate(delegate);
    }
    let run = run
        .with_definition(definition.map(Arc::new))
        .with_budget(budget, None)
        .with_cache_prefix(cache_prefix)
        .with_hooks(hooks)
        .with_resumption(resumption);
    Ok((run, warnings))
}
