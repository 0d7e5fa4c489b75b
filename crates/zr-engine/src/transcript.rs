//! Transcripts: every agent appends JSONL records of its history to
//! `<sessions_dir>/<session>/<agent>.jsonl` as it runs. The records and
//! their version are zr-protocol's ([`zr_protocol::transcript`]), which
//! other programs (`zr sessions`) read too.
//!
//! Each record is one JSON object and its newline, written with one
//! `write_all` on a file opened for appending, so a process killed at any
//! moment leaves at most one torn last line, which the reader ignores.
//! Records are not fsynced: a write that returned is in the kernel's page
//! cache and survives the process being killed; only a machine crash can
//! lose the tail. Measured on the development machine (ext4): 1.7 us per
//! record written, 4 ms per record with `fdatasync`. The `finished` record
//! alone is followed by `sync_data`.
//!
//! Besides messages, the writer records each tool result as its call
//! ends (a `message` record of the user holding that one block, merged by
//! the reader into the turn's results) and, before a call that is not
//! read-only runs, a `call_started` record: after a kill, a result on disk
//! is never produced again, and a started call without one is answered
//! as interrupted rather than run twice (see `resume.rs`).
//!
//! What "finished" means on disk: an agent's run finished when its
//! `finished` record is the last record after its last message (status,
//! output, turns and usage are that record's). A run whose last message is
//! the model's answer without tool calls had answered but was cut short
//! before its `finished` record; it is finished again from that answer,
//! without a model request.
//!
//! A host's [`AgentObserver::record_written`] hears of every record once
//! its write returned (what a kill no longer loses).
//!
//! A writing error never stops the agent: it is logged, sent once as
//! [`EventKind::TranscriptError`], and nothing more is written to that
//! transcript (a transcript with a gap would resume into a wrong history;
//! a short one resumes into an earlier, true one).

mod read;

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use zr_caps::AgentDefinition;
use zr_protocol::transcript::{Finished, Header, RecordRef, VERSION};
use zr_types::{AgentId, ContentBlock, Message, MessageRole, SessionId, error_chain};

use crate::config::definition_hash;
use crate::effects::Effects;
use crate::event::{EventKind, EventSink};
use crate::meta::AgentMeta;
use crate::model::structured::Structured;
use crate::outcome::{RunOutcome, outcome_error};
use crate::runtime::AgentObserver;
use crate::sync::lock;

pub(crate) use read::{Loaded, read, read_header, results_of};

/// What a new transcript's header records beside the agent's meta.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start<'a> {
    /// The definition of the subagent type it runs as (`None` for the
    /// root and forks).
    pub(crate) definition: Option<&'a AgentDefinition>,
    /// How many first messages of its history are its parent's (a fork).
    pub(crate) inherited_messages: usize,
}

/// The transcripts of a session: its folder, and the open ones by agent.
#[derive(Debug)]
pub(crate) struct Transcripts {
    /// `<sessions_dir>/<session>`; `None` when transcripts are off.
    folder: Option<PathBuf>,
    session: SessionId,
    /// The runtime's folder: an agent working elsewhere worked in a
    /// worktree (the header says so).
    runtime_cwd: PathBuf,
    /// The clock of the headers' `created_ms`.
    clock: Arc<dyn Effects>,
    /// Told of every record written.
    observer: Option<Arc<dyn AgentObserver>>,
    open: Mutex<BTreeMap<AgentId, Arc<Mutex<Writer>>>>,
}

/// Whom a writer tells of each record it wrote.
#[derive(Debug, Clone)]
struct Notify {
    observer: Arc<dyn AgentObserver>,
    session: SessionId,
    agent: AgentId,
}

/// Where a writer stands.
#[derive(Debug)]
enum State {
    /// Nothing written yet: the header goes first.
    New,
    Open(File),
    /// Writing failed once; nothing more is written.
    Failed,
}

/// One agent's transcript file and how much of its history is in it.
#[derive(Debug)]
pub(crate) struct Writer {
    path: PathBuf,
    state: State,
    /// Messages of the history on disk.
    messages: usize,
    /// The last of them as it is on disk: a history extends the file only
    /// if its message at the same place starts with the same blocks (a
    /// root query that failed leaves its prompt on disk, not in the
    /// history).
    last: Option<Message>,
    /// A run started and has not written its `finished` record.
    in_run: bool,
    /// Reopened from a transcript whose last run was cut short, and no run
    /// has started since.
    cut_short: bool,
    /// Claimed for a resumed subagent whose run has not begun yet.
    claimed: bool,
    /// The last record on disk is a `finished` one: a run that adds
    /// nothing (a resumed agent finished from its recorded answer) does
    /// not write a second.
    ended: bool,
    notify: Option<Notify>,
}

impl Transcripts {
    /// The transcripts of `session` in `folder` (`None`: none are written).
    pub(crate) fn new(
        folder: Option<PathBuf>,
        session: SessionId,
        runtime_cwd: PathBuf,
        clock: Arc<dyn Effects>,
        observer: Option<Arc<dyn AgentObserver>>,
    ) -> Self {
        Self {
            folder,
            session,
            runtime_cwd,
            clock,
            observer,
            open: Mutex::default(),
        }
    }

    fn notify(&self, agent: &AgentId) -> Option<Notify> {
        self.observer.as_ref().map(|observer| Notify {
            observer: Arc::clone(observer),
            session: self.session.clone(),
            agent: agent.clone(),
        })
    }

    /// Whether transcripts are written at all.
    pub(crate) fn enabled(&self) -> bool {
        self.folder.is_some()
    }

    /// Where `agent`'s transcript is written, when transcripts are on.
    pub(crate) fn path(&self, agent: &AgentId) -> Option<PathBuf> {
        self.folder
            .as_ref()
            .map(|dir| dir.join(format!("{agent}.jsonl")))
    }

    /// The writer of `agent`, made on first use; `None` when transcripts
    /// are off.
    fn writer(&self, agent: &AgentId) -> Option<Arc<Mutex<Writer>>> {
        let path = self.path(agent)?;
        let notify = self.notify(agent);
        let mut open = lock(&self.open);
        let writer = open.entry(agent.clone()).or_insert_with(|| {
            Arc::new(Mutex::new(Writer {
                path,
                state: State::New,
                messages: 0,
                last: None,
                in_run: false,
                cut_short: false,
                claimed: false,
                ended: false,
                notify,
            }))
        });
        Some(Arc::clone(writer))
    }

    /// Makes `agent` append to its existing transcript, read back as
    /// `loaded`: a torn tail is cut off, and a history the reader had to
    /// repair is written whole, so that the file says what the agent has.
    pub(crate) fn reopen(&self, agent: &AgentId, loaded: &Loaded) {
        if let Some(path) = self.path(agent) {
            let writer = Writer::reopened(path, loaded, self.notify(agent));
            lock(&self.open).insert(agent.clone(), Arc::new(Mutex::new(writer)));
        }
    }

    /// For a subagent about to run again from its transcript: `false` when
    /// a run of `agent` writes it now, or another claim's run has not
    /// ended (nothing is touched then); else reopens it as
    /// [`Transcripts::reopen`] does, and `agent` counts as running until its
    /// run ends or its writer is closed.
    pub(crate) fn claim(&self, agent: &AgentId, loaded: &Loaded) -> bool {
        // Checked and claimed under one lock: two claims never both win.
        let mut open = lock(&self.open);
        if open.get(agent).is_some_and(|w| {
            let w = lock(w);
            w.in_run || w.claimed
        }) {
            return false;
        }
        let notify = self.notify(agent);
        if let Some(mut writer) = self
            .path(agent)
            .map(|path| Writer::reopened(path, loaded, notify))
        {
            writer.claimed = true;
            open.insert(agent.clone(), Arc::new(Mutex::new(writer)));
        }
        true
    }

    /// Whether `agent` was reopened from a transcript whose last run was
    /// cut short, and no run of it has started since.
    pub(crate) fn cut_short(&self, agent: &AgentId) -> bool {
        let writer = lock(&self.open).get(agent).cloned();
        writer.is_some_and(|w| lock(&w).cut_short)
    }

    /// Forgets `agent`'s writer (closing its file).
    pub(crate) fn close(&self, agent: &AgentId) {
        lock(&self.open).remove(agent);
    }

    /// For an agent that goes on from a host's copy of its `history`
    /// rather than from its transcript (a durable backend's state): when
    /// the transcript, up to one of its last `finished` records, holds
    /// exactly `history` (what the agent's last run left on this machine),
    /// the transcript is cut back there and appended to; otherwise (no
    /// file, a file another machine's runs made different) the file is
    /// removed, and the agent's next run writes it anew: the header, then
    /// `history` whole. Either way no record is on disk twice, and nothing
    /// the host's copy does not hold stays (the records of an attempt that
    /// did not finish, or whose end the host never kept).
    ///
    /// The kept bytes go to a new file renamed over the old one, as a
    /// removed file is unlinked: a process that still holds the old file
    /// open (an attempt on a worker the backend gave up on) writes into
    /// the unlinked one, never into this.
    pub(crate) fn continue_from(&self, agent: &AgentId, history: &[Message]) {
        let Some(path) = self.path(agent) else {
            return;
        };
        lock(&self.open).remove(agent);
        let bytes = zr_tools::read_regular(&path, read::LIMIT).unwrap_or_default();
        let kept = finished_ends(&bytes).into_iter().find_map(|end| {
            let prefix = bytes.get(..end)?;
            let loaded = read::parse(&path, prefix).ok()?;
            let whole = !loaded.torn
                && usize::try_from(loaded.valid_len).ok() == Some(end)
                && !loaded.repairs.any();
            (whole && loaded.finished.is_some() && loaded.history == history)
                .then_some((loaded, prefix))
        });
        if let Some((loaded, prefix)) = kept {
            match replace_file(&path, prefix) {
                Ok(()) => return self.reopen(agent, &loaded),
                Err(error) => {
                    tracing::warn!(path = %path.display(), error = %error_chain(&error), "cannot cut the transcript back; it is written anew");
                }
            }
        }
        if let Err(error) = std::fs::remove_file(&path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), error = %error_chain(&error), "cannot remove the transcript to write it anew");
        }
    }
}

/// How many of a transcript's last `finished` records
/// [`Transcripts::continue_from`] tries: the host's copy is the last
/// run's, or the one before when a later run finished on disk but its
/// end never reached the host.
const FINISHED_TRIED: usize = 3;

/// Where the last [`FINISHED_TRIED`] `finished` records of `bytes` end,
/// the last first.
fn finished_ends(bytes: &[u8]) -> Vec<usize> {
    #[derive(serde::Deserialize)]
    struct Kind {
        kind: String,
    }
    let mut ends = Vec::new();
    let mut end = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        end += line.len();
        if line.ends_with(b"\n")
            && serde_json::from_slice::<Kind>(line).is_ok_and(|k| k.kind == "finished")
        {
            ends.push(end);
        }
    }
    ends.into_iter().rev().take(FINISHED_TRIED).collect()
}

/// Replaces the file at `path` with a new one holding `bytes` (written
/// next to it, then renamed over it).
fn replace_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut cut = path.as_os_str().to_owned();
    cut.push(".cut");
    let cut = PathBuf::from(cut);
    std::fs::write(&cut, bytes)?;
    std::fs::rename(&cut, path)
}

/// `records` as JSON lines.
fn encode(records: &[RecordRef<'_>]) -> std::io::Result<Vec<u8>> {
    let mut lines = Vec::new();
    for record in records {
        serde_json::to_writer(&mut lines, record)?;
        lines.push(b'\n');
    }
    Ok(lines)
}

impl Writer {
    /// The writer of `agent`'s existing transcript, read back as `loaded`
    /// at `path` (see [`Transcripts::reopen`]).
    fn reopened(path: PathBuf, loaded: &Loaded, notify: Option<Notify>) -> Self {
        let mut writer = Self {
            path,
            state: State::Failed,
            messages: loaded.history.len(),
            last: loaded.history.last().cloned(),
            in_run: false,
            cut_short: loaded.finished.is_none() && !loaded.history.is_empty(),
            claimed: false,
            ended: loaded.finished.is_some(),
            notify,
        };
        let opened = OpenOptions::new()
            .append(true)
            .open(&writer.path)
            .and_then(|file| file.set_len(loaded.valid_len).map(|()| file));
        match opened {
            Ok(file) => {
                writer.state = State::Open(file);
                if loaded.repairs.any()
                    && let Err(error) = writer.replace(&loaded.history)
                {
                    tracing::warn!(path = %writer.path.display(), error = %error_chain(&error), "cannot write the repaired history; the transcript is not written further");
                    writer.state = State::Failed;
                }
            }
            Err(error) => {
                tracing::warn!(path = %writer.path.display(), error = %error_chain(&error), "cannot reopen the transcript; it is not written further");
            }
        }
        writer
    }

    fn append(&mut self, record: &RecordRef<'_>) -> std::io::Result<()> {
        self.append_all(std::slice::from_ref(record))
    }

    /// Appends `records` with one write: a kill leaves all of them or a
    /// torn tail, never a header without the messages written with it.
    fn append_all(&mut self, records: &[RecordRef<'_>]) -> std::io::Result<()> {
        let State::Open(file) = &mut self.state else {
            return Ok(());
        };
        file.write_all(&encode(records)?)?;
        self.written(records);
        Ok(())
    }

    /// Notes that `records` reached the file.
    fn written(&mut self, records: &[RecordRef<'_>]) {
        self.ended = matches!(records.last(), Some(RecordRef::Finished(_)));
        if let Some(n) = &self.notify {
            for _ in records {
                n.observer.record_written(&n.session, &n.agent);
            }
        }
    }

    /// Appends one tool result of the turn that runs: the first opens the
    /// user's message after the answer, the others extend it.
    fn add_result(&mut self, block: &ContentBlock, at_ms: u64) -> std::io::Result<()> {
        if !self.is_open() {
            return Ok(());
        }
        let message = Message {
            role: MessageRole::User,
            content: vec![block.clone()],
        };
        self.append(&RecordRef::Message {
            message: &message,
            at_ms,
        })?;
        match &mut self.last {
            Some(last) if last.role == MessageRole::User => last.content.push(block.clone()),
            _ => {
                self.messages += 1;
                self.last = Some(message);
            }
        }
        Ok(())
    }

    fn is_open(&self) -> bool {
        matches!(self.state, State::Open(_))
    }

    fn replace(&mut self, history: &[Message]) -> std::io::Result<()> {
        if !self.is_open() {
            return Ok(());
        }
        self.append(&RecordRef::HistoryReplaced { history })?;
        self.messages = history.len();
        self.last = history.last().cloned();
        Ok(())
    }

    /// Writes what `history` has beyond what is on disk: blocks added to
    /// the last message, then new messages. A history that does not extend
    /// what is on disk is written whole.
    fn sync(&mut self, history: &[Message], at_ms: u64) -> std::io::Result<()> {
        // Nothing is counted as written before the header is.
        if !self.is_open() {
            return Ok(());
        }
        let at = self.messages.checked_sub(1).and_then(|i| history.get(i));
        let extends = match (&self.last, at) {
            (None, _) => self.messages == 0,
            (Some(last), Some(now)) => {
                now.role == last.role && now.content.starts_with(&last.content)
            }
            (Some(_), None) => false,
        };
        if !extends {
            return self.replace(history);
        }
        let extra = match (&self.last, at) {
            (Some(last), Some(now)) => now.content.get(last.content.len()..).unwrap_or_default(),
            _ => &[],
        };
        let new = history.get(self.messages..).unwrap_or_default();
        if extra.is_empty() && new.is_empty() {
            return Ok(());
        }
        if !extra.is_empty()
            && let Some(now) = at
        {
            let message = Message {
                role: now.role,
                content: extra.to_vec(),
            };
            self.append(&RecordRef::Message {
                message: &message,
                at_ms,
            })?;
        }
        for message in new {
            self.append(&RecordRef::Message { message, at_ms })?;
        }
        self.messages = history.len();
        self.last = history.last().cloned();
        Ok(())
    }

    /// Creates the file with `header` and the messages of `history`. The
    /// records are written under a `.partial` name first and the file
    /// appears under its own name only whole, so a kill at any instant
    /// leaves no transcript or one with its header and prompt, never an
    /// empty file that a resume would take for a started agent.
    fn open_new(
        &mut self,
        header: &Header,
        history: &[Message],
        at_ms: u64,
    ) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut records = vec![RecordRef::Header(header)];
        records.extend(
            history
                .iter()
                .map(|message| RecordRef::Message { message, at_ms }),
        );
        let mut partial = self.path.clone().into_os_string();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        // A partial file is left only by a kill before its link: its agent
        // never started, so it is written anew.
        match std::fs::remove_file(&partial) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        let mut file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&partial)?;
        file.write_all(&encode(&records)?)?;
        // A file that exists belongs to another agent (or another session
        // under the same id): linking fails and nothing is written into it.
        let linked = std::fs::hard_link(&partial, &self.path);
        std::fs::remove_file(&partial)?;
        linked?;
        self.state = State::Open(file);
        self.written(&records);
        self.messages = history.len();
        self.last = history.last().cloned();
        Ok(())
    }

    /// Runs `write`; on its first failure, stops writing and reports.
    fn guard(
        &mut self,
        sink: &EventSink,
        run: (&AgentId, &Arc<str>),
        write: impl FnOnce(&mut Self) -> std::io::Result<()>,
    ) {
        if matches!(self.state, State::Failed) {
            return;
        }
        if let Err(error) = write(self) {
            self.state = State::Failed;
            let error = error_chain(&error);
            tracing::warn!(agent = %run.0, path = %self.path.display(), %error, "cannot write the transcript; the agent goes on without it");
            sink.send(
                run.0,
                run.1,
                EventKind::TranscriptError {
                    path: self.path.clone(),
                    error,
                },
            );
        }
    }
}

impl Transcripts {
    /// The session clock's time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64 {
        self.clock
            .now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    fn header(&self, agent: &AgentMeta, start: &Start<'_>) -> Header {
        Header {
            version: VERSION,
            session: self.session.clone(),
            agent: agent.id.clone(),
            agent_type: agent.agent_type.to_string(),
            parent: agent.parent.clone(),
            definition_hash: start.definition.and_then(definition_hash),
            definition: start.definition.cloned().map(Box::new),
            permission_mode: agent.parent.is_some().then_some(agent.mode),
            system_prompt: agent.system.to_string(),
            model: agent.model.to_string(),
            cwd: agent.cwd.to_path_buf(),
            worktree: (*agent.cwd != *self.runtime_cwd).then(|| agent.cwd.to_path_buf()),
            created_ms: self.now_ms(),
            max_turns: agent.max_turns,
            inherited_messages: start.inherited_messages,
            task: agent.task.clone(),
            background: agent.background,
            output_schema: agent
                .output
                .as_deref()
                .and_then(Structured::call_schema)
                .cloned(),
            depth_ceiling: agent.parent.is_some().then_some(agent.depth.ceiling),
        }
    }

    /// A run of `agent` starts with `history`: writes the header of a new
    /// transcript, or, when the previous run of the same agent (a root
    /// query) was cut short, its history whole; then the history so far.
    pub(crate) fn begin(
        &self,
        sink: &EventSink,
        agent: &AgentMeta,
        history: &[Message],
        start: Start<'_>,
    ) {
        let Some(writer) = self.writer(&agent.id) else {
            return;
        };
        let at_ms = self.now_ms();
        let mut writer = lock(&writer);
        writer.guard(sink, (&agent.id, &agent.agent_type), |w| {
            if matches!(w.state, State::New) {
                w.open_new(&self.header(agent, &start), history, at_ms)?;
            } else if w.in_run {
                w.replace(history)?;
            }
            w.in_run = true;
            w.cut_short = false;
            w.claimed = false;
            w.sync(history, at_ms)
        });
    }

    /// Appends what `agent`'s history gained since the last record.
    pub(crate) fn sync(&self, sink: &EventSink, agent: &AgentMeta, history: &[Message]) {
        let Some(writer) = self.writer(&agent.id) else {
            return;
        };
        let at_ms = self.now_ms();
        lock(&writer).guard(sink, (&agent.id, &agent.agent_type), |w| {
            w.sync(history, at_ms)
        });
    }

    /// Records the result of one of the calls of `agent`'s turn as it
    /// ends, in call order.
    pub(crate) fn result(&self, sink: &EventSink, agent: &AgentMeta, block: &ContentBlock) {
        let Some(writer) = self.writer(&agent.id) else {
            return;
        };
        let at_ms = self.now_ms();
        lock(&writer).guard(sink, (&agent.id, &agent.agent_type), |w| {
            w.add_result(block, at_ms)
        });
    }

    /// Records that the call `id` of `agent`, which is not read-only, is
    /// about to run.
    pub(crate) fn call_started(&self, sink: &EventSink, agent: &AgentMeta, id: &str) {
        let Some(writer) = self.writer(&agent.id) else {
            return;
        };
        lock(&writer).guard(sink, (&agent.id, &agent.agent_type), |w| {
            if w.is_open() {
                w.append(&RecordRef::CallStarted { id })?;
            }
            Ok(())
        });
    }

    /// Writes `agent`'s history whole, replacing what the transcript held:
    /// for code that rewrites the history rather than appending to it
    /// (compaction).
    pub(crate) fn replace_history(&self, sink: &EventSink, agent: &AgentMeta, history: &[Message]) {
        let Some(writer) = self.writer(&agent.id) else {
            return;
        };
        lock(&writer).guard(sink, (&agent.id, &agent.agent_type), |w| w.replace(history));
    }

    /// The root's query failed, so the root keeps `history`, its history
    /// from before the query: the transcript says so too (a session resumed
    /// from it continues from the same history as the live root would).
    pub(crate) fn forget_query(&self, sink: &EventSink, history: &[Message]) {
        let root = AgentId::root();
        let Some(writer) = self.writer(&root) else {
            return;
        };
        lock(&writer).guard(sink, (&root, &Arc::from("root")), |w| {
            if !w.is_open() {
                return Ok(());
            }
            w.append(&RecordRef::QueryFailed { history })?;
            w.messages = history.len();
            w.last = history.last().cloned();
            Ok(())
        });
    }

    /// The run of `agent` ended with `outcome`: its last messages, then a
    /// `finished` record, synced to disk.
    pub(crate) fn finish(&self, sink: &EventSink, agent: &AgentMeta, outcome: &RunOutcome) {
        let Some(writer) = self.writer(&agent.id) else {
            return;
        };
        let at_ms = self.now_ms();
        lock(&writer).guard(sink, (&agent.id, &agent.agent_type), |w| {
            w.sync(&outcome.history, at_ms)?;
            if w.ended {
                w.in_run = false;
                return Ok(());
            }
            let finished = Finished {
                status: outcome.status.as_str().to_owned(),
                output: outcome.output.clone(),
                turns: outcome.turns,
                usage: outcome.usage,
                error: outcome_error(outcome),
                at_ms: Some(at_ms),
                value: outcome.value.clone(),
            };
            w.append(&RecordRef::Finished(&finished))?;
            w.in_run = false;
            if let State::Open(file) = &w.state {
                file.sync_data()?;
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests;
