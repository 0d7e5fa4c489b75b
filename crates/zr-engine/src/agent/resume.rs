//! Resuming from transcripts: a session's root with its history, and any
//! subagent of it, which runs again from where its transcript stops.
//!
//! Resume never repeats finished work. What is on disk decides:
//!
//! - a tool result in a transcript is never produced again: the turn a
//!   kill left open is finished with the results it recorded;
//! - a call recorded as started (`call_started`, written before a call
//!   that is not read-only runs) without a result is answered to the model
//!   as interrupted and not run again; a read-only one, or one that never
//!   started, runs;
//! - a `Task` or `MultiTask` call left open is entered again: each task
//!   whose subagent's transcript (found by the call id and task index in
//!   its header) has a `finished` record gets that record's status,
//!   output, turns and usage without running; one cut short continues
//!   from its own transcript; one that never started runs anew;
//! - a background agent cut short after its call returned is revived in
//!   the background at the root's next run; one that finished but whose
//!   notification is not in the root's history is reported to the root
//!   again;
//! - a run whose history ends with the model's answer (cut short before
//!   its `finished` record) is finished from that answer without a request.
//!
//! Resuming appends to the same transcripts and writes nothing that is
//! already there.

mod subagent;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use zr_types::{AgentId, Message, SessionId};

use crate::agent::{Agent, Query, QueryOverrides};
use crate::config::AgentConfig;
use crate::delegate::revive::{log_repairs, recorded_result, resume_error};
use crate::error::EngineError;
use crate::event::EventSink;
use crate::history::{called_tools, text_of};
use crate::policy::hooks::SessionSource;
use crate::runtime::RuntimeEnvironment;
use crate::session::registry::notified_in;
use crate::session::{Found, QueryCtx, Session};
use crate::sync::lock;
use crate::transcript;

/// The highest number of a subagent with a transcript in `dir` (0 when
/// there is none): the session numbers its subagents at every depth from
/// one counter (`root.0001-lead.0002-worker` is its second).
fn last_child(dir: &Path) -> u32 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let stem = name.to_str()?.strip_suffix(".jsonl")?;
            let id: AgentId = stem.parse().ok()?;
            let last = id.as_str().rsplit('.').next()?;
            let (seq, _) = last.split_once('-')?;
            (id.depth() >= 1).then(|| seq.parse::<u32>().ok())?
        })
        .max()
        .unwrap_or(0)
}

/// The subagents of the session in `folder` that a resumed run takes up
/// (`root` is the root's history): tasks by their call, background agents
/// cut short after their call returned. A background agent that finished
/// unheard of is reported to its parent here. A transcript that cannot be
/// read is left out with a warning.
fn survey(session: &Session, folder: &Path, root: &[Message]) -> Found {
    let mut found = Found::default();
    let answered: BTreeSet<String> = root.iter().flat_map(transcript::results_of).collect();
    let said: Vec<String> = root.iter().map(|m| text_of(&m.content)).collect();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return found;
    };
    let mut ids: Vec<AgentId> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".jsonl")?.parse().ok())
        .filter(|id: &AgentId| !id.is_root())
        .collect();
    ids.sort();
    for id in ids {
        let Some(path) = session.transcripts.path(&id) else {
            continue;
        };
        let loaded = match transcript::read(&path) {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::warn!(agent = %id, error = %zr_types::error_chain(&error), "cannot read the subagent's transcript; it is not resumed");
                continue;
            }
        };
        let Some(task) = loaded.header.task.clone() else {
            continue;
        };
        let parent = loaded.header.parent.clone().unwrap_or_else(AgentId::root);
        if loaded.header.background && answered.contains(&task.call) {
            match recorded_result(&id, &loaded, task.index) {
                Some(result) if !said.iter().any(|t| notified_in(t, &id)) => {
                    session.background.report(&result, &parent);
                }
                Some(_) => {}
                None => found.background.push(id),
            }
        } else if !answered.contains(&task.call) {
            // Its call is open: entering it again takes the task up.
            found.tasks.insert((parent, task.call, task.index), id);
        }
    }
    found
}

impl Agent {
    /// The root of the existing session `session`, rebuilt from its
    /// transcript in `config.sessions_dir`: the same session id, the
    /// history the transcript holds (a torn last line ignored; a turn cut
    /// short kept with the results it recorded, to be finished by the next
    /// query; other tool calls without results, results without calls and
    /// empty messages dropped), the deferred tools it loaded through FindTool and called loaded
    /// again (one it loaded but never called must be loaded anew), new
    /// subagents numbered after the existing ones. Queries continue the
    /// history and append to the same transcript. The subagents' transcripts
    /// are read too: the tasks of a call left open are taken up when the
    /// call is entered again, background agents cut short are revived at
    /// the next query, and a finished background agent whose parent never
    /// heard of it is reported at the root's next turn (see the module
    /// documentation).
    ///
    /// A query cut short (the process killed mid-turn) is finished with
    /// [`Agent::continue_interrupted`]. The configuration should be the
    /// one the session ran with (its subagent types, tools and prompt);
    /// the transcript holds only the conversation.
    ///
    /// # Errors
    ///
    /// - [`EngineError::TranscriptsOff`]: `config.sessions_dir` is `None`;
    /// - [`EngineError::Resume`]: the root's transcript cannot be read
    ///   (missing, no header, an invalid line before the last, a newer
    ///   format).
    pub fn resume(
        runtime: Arc<RuntimeEnvironment>,
        config: AgentConfig,
        session: &SessionId,
    ) -> Result<Self, EngineError> {
        let dir = config
            .sessions_dir
            .clone()
            .ok_or(EngineError::TranscriptsOff)?;
        let state = Session::new(session.clone(), runtime, config);
        let root = AgentId::root();
        let path = state
            .transcripts
            .path(&root)
            .ok_or(EngineError::TranscriptsOff)?;
        let loaded = transcript::read(&path).map_err(|e| resume_error(session, &root, e))?;
        log_repairs(&root, &path, &loaded);
        let folder = dir.join(session.as_str());
        state.skip_children(last_child(&folder));
        state.transcripts.reopen(&root, &loaded);
        let found = survey(&state, &folder, &loaded.history);
        *lock(&state.found) = found;
        let tools = called_tools(&loaded.history);
        Ok(Self::restored(
            state,
            loaded.history,
            tools,
            Some(loaded.started),
            Some(SessionSource::Resume),
        ))
    }

    /// Whether the agent was resumed from a transcript whose last run was
    /// cut short (no `finished` record after its last message: the process
    /// was killed, or the query cancelled), or with background agents cut
    /// short, and no query has run since;
    /// [`Agent::continue_interrupted`] finishes it. Always `false` for an
    /// agent made with [`Agent::new`].
    #[must_use]
    pub fn interrupted(&self) -> bool {
        let session = self.session();
        session.transcripts.cut_short(&AgentId::root())
            || !lock(&session.found).background.is_empty()
    }

    /// Runs the root on its history without a new prompt: after
    /// [`Agent::resume`], this finishes the turn a kill cut short (its
    /// recorded results kept, its open Task and MultiTask calls entered
    /// again, a started call that is not read-only answered as
    /// interrupted) and revives the background agents cut short. When the
    /// history ends with the model's answer, that answer is the result and
    /// no request is made. Otherwise as [`Agent::query`].
    pub fn continue_interrupted(&self, overrides: QueryOverrides) -> Query {
        self.start(None, overrides)
    }

    /// Runs the subagent `agent` of this session again from its transcript
    /// and returns the query it runs in; the subagent's [`TaskResult`] is
    /// the query's [`EventKind::SubagentFinished`] event, and
    /// [`Query::finish`] returns its status, output, turns and usage
    /// (a subagent that fails is a `failed` status, not an error).
    ///
    /// The subagent gets its history from its transcript (repaired as in
    /// [`Agent::resume`]; a turn cut short is finished first), then
    /// `prompt`, or without one continues as in
    /// [`Agent::continue_interrupted`] (one whose history ends with its
    /// answer returns that answer). It never gets more than it started
    /// with: it runs with the definition of its type that its transcript's
    /// header recorded, whatever the configuration has now (a type that
    /// changed or is gone is a warning; the change takes effect for new
    /// agents), its pool resolved from that definition against the tools
    /// the runtime has now (a custom or connection tool it no longer has is
    /// left out), in a permission mode no wider than the one it started
    /// in. A fork gets its parent's system prompt from the parent's
    /// transcript. It works in its recorded folder, or in its parent's when
    /// that folder is gone. Each such change is a
    /// [`EventKind::ResumeWarning`]. It runs in the foreground
    /// within the `subagent.timeout` budget, with the SubagentStart and
    /// SubagentStop hooks of a new subagent, and appends to its
    /// transcript.
    /// The root's id continues the root (as `query` or
    /// `continue_interrupted`).
    ///
    /// The query fails with [`EngineError::TranscriptsOff`],
    /// [`EngineError::Busy`] (the subagent is running),
    /// [`EngineError::Resume`] (the transcript cannot be read),
    /// [`EngineError::DefinitionChanged`] (a transcript of the older
    /// format, which does not record the definition, whose type changed
    /// or is gone), [`EngineError::Resolve`] or
    /// [`EngineError::MissingHandler`].
    ///
    /// [`TaskResult`]: crate::TaskResult
    /// [`EventKind::SubagentFinished`]: crate::EventKind::SubagentFinished
    /// [`EventKind::ResumeWarning`]: crate::EventKind::ResumeWarning
    pub fn resume_subagent(&self, agent: &AgentId, prompt: Option<String>) -> Query {
        if agent.is_root() {
            return self.start(prompt, QueryOverrides::default());
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return Query::failed(rx, EngineError::NoRuntime);
        };
        let session = Arc::clone(self.session());
        // Taken up here: neither its call nor the root's next run revives
        // it again.
        session.forget_found(agent);
        let ctx = QueryCtx::new(Arc::clone(&session), EventSink::new(Instant::now(), tx));
        let id = agent.clone();
        let root_loaded = self.loaded();
        let task = handle.spawn(async move { subagent::run(&ctx, id, prompt, &root_loaded).await });
        Query::spawned(rx, task, session)
    }
}
