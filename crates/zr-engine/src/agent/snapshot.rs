//! A root's conversation as a host can keep it elsewhere: what the root
//! carries from one query to the next ([`RootSnapshot`]), taken after a
//! query and given to a new [`Agent`] of the same session, maybe in
//! another process on another machine (a durable backend keeps it in its
//! own state, so that each turn of a session may run on any worker).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zr_types::{AgentId, Message, SessionId, ToolName};

use crate::agent::Agent;
use crate::config::AgentConfig;
use crate::policy::hooks::SessionSource;
use crate::runtime::RuntimeEnvironment;
use crate::session::Session;

/// What a root carries from one query to the next, as plain data
/// ([`Agent::snapshot`], [`Agent::from_snapshot`]). Its size is the
/// conversation's (which compaction bounds as it bounds the model's
/// context) plus a few names and a number. It holds nothing about the
/// machine that took it (no file length or offset): a durable backend
/// whose attempt is replayed on another machine stores the same value, as
/// long as the conversation is the same.
///
/// Not in it, as not in a transcript ([`Agent::resume`] does not bring
/// them back either): the root's todo list and read ledger (a file read
/// in an earlier query must be read again before an edit), its background
/// commands and background agents (they belong to the process that runs
/// them), and the permissions the host granted for the session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RootSnapshot {
    /// The conversation so far ([`Agent::history`]).
    pub history: Vec<Message>,
    /// The deferred tools the root loaded through FindTool: still
    /// advertised in the next query, as on a root that lives on.
    pub loaded: Vec<ToolName>,
    /// The number of the session's last subagent: the next query's
    /// subagents are numbered after it (`root.0004-explore` after three),
    /// so that no id, transcript or durable key of an earlier query's
    /// subagent is taken again.
    pub subagents: u32,
}

impl Agent {
    /// What the root carries to its next query, for a host that keeps it
    /// elsewhere; `None` while a query runs.
    #[must_use]
    pub fn snapshot(&self) -> Option<RootSnapshot> {
        let (history, loaded) = self.kept()?;
        let session = self.session();
        Some(RootSnapshot {
            history,
            loaded,
            subagents: session.last_child(),
        })
    }

    /// The root of the session `session` going on from `snapshot` (taken
    /// by [`Agent::snapshot`] after the session's last query, here or on
    /// another machine), rather than from its transcript as
    /// [`Agent::resume`] does: its queries continue the snapshot's history
    /// with its loaded tools, and number their subagents after its.
    /// `RootSnapshot::default()` starts the session anew.
    ///
    /// The root's transcript in `config.sessions_dir` goes on from the
    /// snapshot too: when it holds exactly the snapshot's history up to
    /// one of its last `finished` records (the snapshot was taken on this
    /// machine, or on one sharing the folder), anything after that record
    /// (the records of an attempt that did not finish) is cut off and the
    /// next query appends; otherwise the file is removed and the next
    /// query writes it anew, the snapshot's history whole after the
    /// header. No record is on disk twice.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zr_caps::RuntimeSettings;
    /// # use zr_engine::{Agent, AgentConfig, RootSnapshot, RuntimeEnvironment, ScriptedProvider};
    /// # use zr_tools::BuiltinTools;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let script = r#"{"agents": {"root": [{"turns": [{"text": "Hello."}, {"text": "Hello again."}]}]}}"#;
    /// let provider = Arc::new(ScriptedProvider::from_json(script)?);
    /// # let settings = RuntimeSettings { model: "scripted".into(), cwd: dir.path().into(), env: Default::default() };
    /// let runtime = Arc::new(RuntimeEnvironment::new(provider, settings, BuiltinTools::new(dir.path().join("cron.json"))));
    /// let first = Agent::new(Arc::clone(&runtime), AgentConfig::new("You are helpful."));
    /// first.prompt("Say hello").await?;
    /// // Kept anywhere (as JSON here) until the next query.
    /// let kept = serde_json::to_string(&first.snapshot().expect("no query runs"))?;
    /// let session = first.session_id().clone();
    /// drop(first);
    ///
    /// let snapshot: RootSnapshot = serde_json::from_str(&kept)?;
    /// let next = Agent::from_snapshot(runtime, AgentConfig::new("You are helpful."), session, snapshot);
    /// assert_eq!(next.prompt("Once more").await?.output, "Hello again.");
    /// assert_eq!(next.history().len(), 4, "both queries' messages");
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn from_snapshot(
        runtime: Arc<RuntimeEnvironment>,
        config: AgentConfig,
        session: SessionId,
        snapshot: RootSnapshot,
    ) -> Self {
        let RootSnapshot {
            history,
            loaded,
            subagents,
        } = snapshot;
        let state = Session::new(session, runtime, config);
        state.skip_children(subagents);
        state.transcripts.continue_from(&AgentId::root(), &history);
        // The session started with its first turn, wherever that ran.
        let start = history.is_empty().then_some(SessionSource::Startup);
        Self::restored(state, history, loaded, None, start)
    }
}
