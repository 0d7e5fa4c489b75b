//! Resuming from transcripts: a session's root with its history, and any
//! subagent of it, which runs again from where its transcript stops.

mod subagent;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use zr_types::{AgentId, SessionId};

use crate::agent::{Agent, Query, QueryOverrides};
use crate::config::AgentConfig;
use crate::error::{EngineError, TranscriptError};
use crate::event::EventSink;
use crate::history::called_tools;
use crate::runtime::RuntimeEnvironment;
use crate::session::{QueryCtx, Session};
use crate::transcript::{self, Loaded};

fn resume_error(session: &SessionId, agent: &AgentId, source: TranscriptError) -> EngineError {
    EngineError::Resume {
        session: session.clone(),
        agent: agent.clone(),
        source,
    }
}

/// Logs what was read, and what reading `loaded` ignored or repaired.
fn log_repairs(agent: &AgentId, path: &Path, loaded: &Loaded) {
    tracing::info!(%agent, path = %path.display(), records = loaded.records, messages = loaded.history.len(), interrupted = loaded.finished.is_none(), "resuming from the transcript");
    if loaded.torn {
        tracing::warn!(%agent, path = %path.display(), "the transcript's last line is torn; it is ignored");
    }
    let r = loaded.repairs;
    if r.any() && loaded.finished.is_none() && r.results == 0 {
        // A run cut short leaves its last calls unanswered (and a message
        // they alone filled empty): dropping them is the expected repair,
        // not news. A result without its call is damage: a warning.
        tracing::info!(%agent, path = %path.display(), calls = r.calls, results = r.results, empty = r.empty, "dropped the unanswered tool calls of the interrupted run");
    } else if r.any() {
        tracing::warn!(%agent, path = %path.display(), calls = r.calls, results = r.results, empty = r.empty, "dropped tool calls without results, results without calls and empty messages");
    }
}

/// The highest number of a direct subagent of the root with a transcript
/// in `dir` (0 when there is none).
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
            let (seq, _) = id.as_str().strip_prefix("root.")?.split_once('-')?;
            (id.depth() == 1).then(|| seq.parse::<u32>().ok())?
        })
        .max()
        .unwrap_or(0)
}

impl Agent {
    /// The root of the existing session `session`, rebuilt from its
    /// transcript in `config.sessions_dir`: the same session id, the
    /// history the transcript holds (a torn last line ignored; tool calls
    /// without results, results without calls and empty messages dropped),
    /// the deferred tools it loaded through FindTool and called loaded
    /// again (one it loaded but never called must be loaded anew), new
    /// subagents numbered after the existing ones. Queries continue the
    /// history and append to the same transcript.
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
        state.skip_children(last_child(&dir.join(session.as_str())));
        state.transcripts.reopen(&root, &loaded);
        let tools = called_tools(&loaded.history);
        Ok(Self::restored(state, loaded.history, tools))
    }

    /// Whether the agent was resumed from a transcript whose last run was
    /// cut short (no `finished` record after its last message: the process
    /// was killed, or the query cancelled) and no query has run since;
    /// [`Agent::continue_interrupted`] finishes it. Always `false` for an
    /// agent made with [`Agent::new`].
    #[must_use]
    pub fn interrupted(&self) -> bool {
        self.session().transcripts.cut_short(&AgentId::root())
    }

    /// Runs the root on its history without a new prompt: after
    /// [`Agent::resume`], this finishes the turn a kill cut short. When the
    /// history ends with the model's message (its unanswered tool calls
    /// were dropped, or its last query had ended), the model is first told
    /// that its run was interrupted and to continue. Otherwise as
    /// [`Agent::query`].
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
    /// [`Agent::resume`]), then `prompt`, or without one continues as in
    /// [`Agent::continue_interrupted`]. Its type comes from the
    /// transcript's header: a type the configuration no longer has runs as
    /// `general-purpose` (the configuration's, else one with the recorded
    /// system prompt and no tools of its own); a fork gets its parent's
    /// system prompt from the parent's transcript. Its pool is resolved
    /// again from the current configuration. It works in its recorded
    /// folder, or in its parent's when that folder is gone. Each such
    /// change is a [`EventKind::ResumeWarning`]. It runs in the foreground
    /// within the `subagent.timeout` budget, with the SubagentStart and
    /// SubagentStop hooks of a new subagent, and appends to its
    /// transcript.
    /// The root's id continues the root (as `query` or
    /// `continue_interrupted`).
    ///
    /// The query fails with [`EngineError::TranscriptsOff`],
    /// [`EngineError::Busy`] (the subagent is running),
    /// [`EngineError::Resume`] (the transcript cannot be read),
    /// [`EngineError::Resolve`] or [`EngineError::MissingHandler`].
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
        let ctx = QueryCtx::new(Arc::clone(&session), EventSink::new(Instant::now(), tx));
        let id = agent.clone();
        let root_loaded = self.loaded();
        let task = handle.spawn(async move { subagent::run(&ctx, id, prompt, &root_loaded).await });
        Query::spawned(rx, task, session)
    }
}
