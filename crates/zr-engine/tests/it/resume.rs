//! Transcripts and resume: a real process killed with SIGKILL mid-turn is
//! resumed from its transcript and finishes; subagents resume with their
//! type, with the definition they started with when the type is gone, in
//! their parent's folder when theirs is gone, and forks with their
//! parent's prompt.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, EngineError, EventKind, ModelProvider, QueryOverrides, RuntimeEnvironment,
    TaskStatus, TranscriptError,
};
use zr_tools::BuiltinTools;
use zr_types::{AgentId, Message, MessageRole, SessionId};

use crate::support::{
    Recording, finished, processes_with, record_kinds, root_with_worker, run, task_call, wait_gone,
};

/// Names the folder of the child process's project.
const CHILD_DIR: &str = "ZR_RESUME_TEST_DIR";
/// `model` (killed while the model thinks), `tool` (killed while a tool
/// runs), `background` (a background agent killed while its model thinks)
/// or `structured` (a subagent with its call's output schema, killed while
/// its model thinks).
const CHILD_MODE: &str = "ZR_RESUME_TEST_MODE";
/// The command the `tool` mode's root runs (and the test kills after).
const SLEEP: &str = "sleep 61.2345";

/// A runtime over `script` whose project folder is `dir`.
pub(crate) fn scripted(dir: &Path, script: &Value) -> (Arc<Recording>, Arc<RuntimeEnvironment>) {
    scripted_with(dir, script, |runtime| runtime)
}

/// [`scripted`], the runtime changed by `build` (custom tools).
pub(crate) fn scripted_with(
    dir: &Path,
    script: &Value,
    build: impl FnOnce(RuntimeEnvironment) -> RuntimeEnvironment,
) -> (Arc<Recording>, Arc<RuntimeEnvironment>) {
    let provider = Recording::new(script);
    let settings = RuntimeSettings {
        model: "scripted-model".to_owned(),
        cwd: dir.to_path_buf(),
        env: [("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]
            .into_iter()
            .collect(),
    };
    let runtime = build(RuntimeEnvironment::new(
        Arc::clone(&provider) as Arc<dyn ModelProvider>,
        settings,
        BuiltinTools::new(dir.join(".zr/cron.json")),
    ));
    (provider, Arc::new(runtime))
}

/// The root with a `worker` type, writing transcripts under `dir`.
fn config(dir: &Path) -> AgentConfig {
    let mut config = root_with_worker();
    config.sessions_dir = Some(dir.join("sessions"));
    config
}

/// The complete lines of a transcript, parsed.
pub(crate) fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let Some(end) = text.rfind('\n') else {
        return Vec::new();
    };
    text[..end]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The messages of `message` records, in order.
fn messages(records: &[Value]) -> Vec<Message> {
    records
        .iter()
        .filter(|r| r["kind"] == "message")
        .map(|r| serde_json::from_value(r["message"].clone()).unwrap())
        .collect()
}

/// The text blocks of `message`, joined.
fn text_of(message: &Message) -> String {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            zr_types::ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The session folder the child made under `dir/sessions`.
fn session_of(dir: &Path) -> Option<SessionId> {
    let entry = std::fs::read_dir(dir.join("sessions"))
        .ok()?
        .flatten()
        .next()?;
    entry.file_name().to_str()?.parse().ok()
}

/// The child process; killed and reaped however the test ends.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs [`child_runs_until_killed`] in a new process of this test binary,
/// waits until the root's transcript has `records` complete records, kills
/// it with SIGKILL, and returns the session and the transcript's bytes.
fn run_and_kill(dir: &Path, mode: &str, records_wanted: usize) -> (SessionId, Vec<u8>) {
    run_and_kill_at(dir, mode, "root", records_wanted)
}

/// [`run_and_kill`], waiting for `records` of `agent`'s transcript.
pub(crate) fn run_and_kill_at(
    dir: &Path,
    mode: &str,
    agent: &str,
    records_wanted: usize,
) -> (SessionId, Vec<u8>) {
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume::child_runs_until_killed",
            "--nocapture",
            "--ignored",
        ])
        .env(CHILD_DIR, dir)
        .env(CHILD_MODE, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = ChildGuard(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    let session = loop {
        if let Some(session) = session_of(dir) {
            let path = dir.join(format!("sessions/{session}/{agent}.jsonl"));
            if records(&path).len() >= records_wanted {
                break session;
            }
        }
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "the child ended before it was killed"
        );
        assert!(
            Instant::now() < deadline,
            "the child wrote its records within a minute"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let pid = child.0.id();
    // `Child::kill` is SIGKILL on Unix.
    child.0.kill().unwrap();
    let status = child.0.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "killed by SIGKILL"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the child is reaped"
    );
    let bytes = std::fs::read(dir.join(format!("sessions/{session}/{agent}.jsonl"))).unwrap();
    (session, bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of the kill-and-resume tests; does nothing on its own"]
async fn child_runs_until_killed() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mode = std::env::var(CHILD_MODE).unwrap_or_default();
    let script = if mode == "tool" {
        json!({"agents": {"root": [{"turns": [
            {"text": "running it", "tool_calls": [{"name": "Bash", "input": {"command": SLEEP}}]},
            {"text": "never"}
        ]}]}})
    } else if mode == "background" {
        json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [{"name": "Task", "input": {
                    "description": "d", "prompt": "p", "subagent_type": "worker",
                    "run_in_background": true
                }}]},
                {"text": "it runs in the background"}
            ]}],
            "worker": [{"turns": [
                {"text": "step one", "tool_calls": [{"name": "Bash", "input": {"command": "echo one"}}]},
                {"delay_ms": 60_000, "text": "too late"}
            ]}]
        }})
    } else if mode == "structured" {
        crate::structured::killed_in_a_structured_task()
    } else {
        json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [task_call("worker")]},
                {"delay_ms": 60_000, "text": "too late"}
            ]}],
            "worker": [{"turns": [{"text": "worker found 42"}]}]
        }})
    };
    let (_, runtime) = scripted(&dir, &script);
    let config = if mode == "structured" {
        crate::structured::resumable(&dir)
    } else {
        config(&dir)
    };
    let agent = Agent::new(runtime, config);
    let _ = agent.prompt("find the answer").await;
    // A background agent runs on after the query: wait with it.
    agent.wait_background().await;
    panic!("the test kills this process before its query ends");
}

/// Resumes the killed `session` in `dir` over `script`: checks it comes
/// back interrupted with `history` (else fails with `what`), then
/// continues the interrupted turn to its end.
async fn resume_and_continue(
    dir: &Path,
    session: &SessionId,
    script: &Value,
    history: &[Message],
    what: &str,
) -> (Arc<Recording>, Agent, zr_engine::QueryResult) {
    let (provider, runtime) = scripted(dir, script);
    let agent = Agent::resume(runtime, config(dir), session).unwrap();
    assert_eq!(agent.session_id(), session);
    assert_eq!(agent.history(), history, "{what}");
    assert!(agent.interrupted());
    let result = agent
        .continue_interrupted(QueryOverrides::default())
        .finish()
        .await
        .unwrap();
    (provider, agent, result)
}

#[tokio::test]
async fn a_root_killed_mid_turn_resumes_from_its_transcript_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    // Header, prompt, the Task call, its result: written before the 2nd
    // model request, which the kill interrupts.
    let (session, before) = run_and_kill(dir.path(), "model", 4);
    let root_path = dir.path().join(format!("sessions/{session}/root.jsonl"));
    let before_records = records(&root_path);
    assert_eq!(before_records.len(), 4);
    let written = messages(&before_records);
    let roles: Vec<MessageRole> = written.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [MessageRole::User, MessageRole::Assistant, MessageRole::User]
    );
    assert_eq!(before_records[0]["agent_type"], "root");
    assert_eq!(before_records[0]["system_prompt"], "root");
    assert_eq!(before_records[0]["parent"], Value::Null);
    // A kill in the middle of a write leaves a torn last line.
    let mut torn = before.clone();
    torn.extend_from_slice(
        br#"{"kind":"message","message":{"role":"assistant","content":[{"type":"te"#,
    );
    std::fs::write(&root_path, &torn).unwrap();

    let (provider, agent, result) = resume_and_continue(
        dir.path(),
        &session,
        &json!({"agents": {
            "root": [{"turns": [{"text": "The answer is 42."}]}],
            "worker": [{"turns": [{"text": "doubled: 84"}]}]
        }}),
        &written,
        "nothing before the torn line is lost",
    )
    .await;
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "The answer is 42.")
    );
    assert!(!agent.interrupted());
    let request = provider.of_type("root").remove(0);
    assert_eq!(
        *request.messages, written,
        "the interrupted turn is re-run as it was"
    );
    assert_eq!(&*request.system, "root");

    // The transcript: the bytes before the kill, untouched; the torn tail
    // cut; then the answer and the end.
    let after = std::fs::read(&root_path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let after_records = records(&root_path);
    assert_eq!(&after_records[..4], &before_records[..]);
    let tail: Vec<&Value> = after_records[4..].iter().collect();
    assert_eq!(tail.len(), 2, "{tail:?}");
    assert_eq!(
        tail[0]["message"],
        json!({"role": "assistant", "content": [{"type": "text", "text": "The answer is 42."}]})
    );
    assert_eq!(
        (&tail[1]["kind"], &tail[1]["status"], &tail[1]["output"]),
        (
            &json!("finished"),
            &json!("completed"),
            &json!("The answer is 42.")
        )
    );

    // The subagent finished before the kill; any result can be resumed.
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let (events, result) = run(agent.resume_subagent(&worker, Some("double it".to_owned()))).await;
    let result = result.unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "doubled: 84")
    );
    let results = finished(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].agent_id.as_ref(), Some(&worker));
    assert_eq!(results[0].agent_type, "worker");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::ResumeWarning { .. })),
        "nothing changed: no warning"
    );
    let request = provider.of_type("worker").remove(0);
    assert_eq!(request.origin.agent, worker);
    assert_eq!(&*request.system, "You are the worker agent.");
    assert_eq!(
        *request.messages,
        [
            Message::user_text("p"),
            Message::assistant_text("worker found 42"),
            Message::user_text("double it"),
        ]
    );
    let worker_path = dir
        .path()
        .join(format!("sessions/{session}/root.0001-worker.jsonl"));
    let worker_records = records(&worker_path);
    assert_eq!(
        record_kinds(&worker_path),
        [
            "header", "message", "message", "finished", "message", "message", "finished"
        ]
    );
    assert_eq!(worker_records[0]["parent"], "root");
    assert_eq!(worker_records[0]["agent_type"], "worker");
    assert!(
        worker_records[0]["definition_hash"]
            .as_str()
            .is_some_and(|h| h.len() == 16)
    );
}

#[tokio::test]
async fn a_root_killed_while_a_tool_ran_answers_the_call_as_interrupted_and_continues() {
    let dir = tempfile::tempdir().unwrap();
    // Header, prompt, the answer with its Bash call, the call started
    // (running when killed).
    let (session, before) = run_and_kill(dir.path(), "tool", 4);
    // The command the killed process started outlives it: end it here.
    for pid in processes_with(SLEEP) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert_eq!(wait_gone(SLEEP).await, Vec::<u32>::new());
    let root_path = dir.path().join(format!("sessions/{session}/root.jsonl"));
    assert_eq!(
        record_kinds(&root_path),
        ["header", "message", "message", "call_started"]
    );
    let answer = messages(&records(&root_path)).remove(1);
    let kept = [Message::user_text("find the answer"), answer.clone()];
    let (provider, _agent, result) = resume_and_continue(
        dir.path(),
        &session,
        &json!({"agents": {"root": [{"turns": [{"text": "finished without the command"}]}]}}),
        &kept,
        "the call without a result is kept, to be answered",
    )
    .await;
    assert_eq!(result.output, "finished without the command");
    assert!(
        processes_with(SLEEP).is_empty(),
        "the command is not run again"
    );
    let request = provider.of_type("root").remove(0);
    assert_eq!(&request.messages[..2], &kept);
    assert_eq!(request.messages.len(), 3);
    let zr_types::ContentBlock::ToolResult {
        tool_use_id,
        content,
        is_error,
        ..
    } = &request.messages[2].content[0]
    else {
        panic!("a tool result: {:?}", request.messages[2]);
    };
    assert_eq!(tool_use_id, "toolu_01_0");
    assert!(*is_error);
    let text = serde_json::to_string(content).unwrap();
    assert!(
        text.contains("interrupted: this call had started"),
        "{text}"
    );
    let after = std::fs::read(&root_path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(
        record_kinds(&root_path),
        [
            "header",
            "message",
            "message",
            "call_started",
            "message",
            "message",
            "finished"
        ]
    );
}

/// Runs the root once: it delegates to `worker` (or forks without a
/// type), which answers; returns the folder and the session.
async fn one_delegation(subagent_type: Option<&str>) -> (tempfile::TempDir, SessionId) {
    let dir = tempfile::tempdir().unwrap();
    let call = match subagent_type {
        Some(ty) => task_call(ty),
        None => json!({"name": "Task", "input": {"description": "d", "prompt": "p"}}),
    };
    let (_, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [call]}, {"text": "ok"}]}],
            "*": [{"turns": [{"text": "sub done"}]}]
        }}),
    );
    let agent = Agent::new(runtime, config(dir.path()));
    let result = agent.prompt("delegate").await.unwrap();
    assert_eq!(result.output, "ok");
    let session = agent.session_id().clone();
    (dir, session)
}

/// Rewrites the header of a transcript with `edit`.
pub(crate) fn edit_header(path: &Path, edit: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(first).unwrap();
    edit(&mut header);
    std::fs::write(path, format!("{header}\n{rest}")).unwrap();
}

#[tokio::test]
async fn an_unknown_type_resumes_with_the_definition_it_started_with_in_its_parents_folder() {
    let (dir, session) = one_delegation(Some("worker")).await;
    let path = dir
        .path()
        .join(format!("sessions/{session}/root.0001-worker.jsonl"));
    edit_header(&path, |h| {
        h["agent_type"] = json!("ghost");
        h["cwd"] = json!("/nonexistent/zr-worktree-gone");
        h["worktree"] = json!("/nonexistent/zr-worktree-gone");
    });
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {"worker": [{"turns": [{"text": "resumed as itself"}]}]}}),
    );
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let (events, result) = run(agent.resume_subagent(&worker, Some("go on".to_owned()))).await;
    assert_eq!(result.unwrap().output, "resumed as itself");
    let warnings: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ResumeWarning { message } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        warnings,
        [
            "no subagent type 'ghost' in the configuration any more; the agent resumes with the definition it started with".to_owned(),
            format!(
                "the agent's folder /nonexistent/zr-worktree-gone is gone; it resumes in its parent's, {}",
                dir.path().display()
            ),
        ]
    );
    let request = provider.of_type("worker").remove(0);
    assert_eq!(request.origin.agent, worker);
    assert_eq!(&*request.system, "You are the worker agent.");
    assert_eq!(
        *request.messages,
        [
            Message::user_text("p"),
            Message::assistant_text("sub done"),
            Message::user_text("go on"),
        ]
    );
    let results = finished(&events);
    assert_eq!(
        (results[0].agent_type.as_str(), results[0].status),
        ("worker", TaskStatus::Completed)
    );

    // A transcript of the older format, which recorded no definition, is
    // not resumed as another type.
    edit_header(&path, |h| {
        h.as_object_mut().unwrap().remove("definition");
    });
    let (provider, runtime) = scripted(dir.path(), &json!({"agents": {}}));
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    let (_, result) = run(agent.resume_subagent(&worker, None)).await;
    let error = result.unwrap_err();
    assert_eq!(
        zr_types::error_chain(&error),
        "cannot resume agent root.0001-worker: there is no subagent type 'ghost' in the configuration any more, and its transcript (an older format) does not record the definition it started with; start a new agent of the type instead"
    );
    assert!(provider.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_finished_subagent_resumed_without_a_prompt_returns_its_answer_without_a_request() {
    let (dir, session) = one_delegation(Some("worker")).await;
    let path = dir
        .path()
        .join(format!("sessions/{session}/root.0001-worker.jsonl"));
    let before = record_kinds(&path);
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {"worker": [{"turns": [{"text": "never asked"}]}]}}),
    );
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let (_, result) = run(agent.resume_subagent(&worker, None)).await;
    let result = result.unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "sub done")
    );
    assert!(provider.of_type("worker").is_empty(), "no model request");
    assert_eq!(record_kinds(&path), before, "nothing written again");
}

#[tokio::test]
async fn a_fork_resumes_with_its_parents_prompt_from_the_parents_transcript() {
    let (dir, session) = one_delegation(None).await;
    let sessions = dir.path().join(format!("sessions/{session}"));
    // The prompt is read from the parent's header, not the fork's own.
    edit_header(&sessions.join("root.jsonl"), |h| {
        h["system_prompt"] = json!("the parent's prompt on disk");
    });
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {"fork": [{"turns": [{"text": "fork again"}]}]}}),
    );
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    let fork: AgentId = "root.0001-fork".parse().unwrap();
    let (events, result) = run(agent.resume_subagent(&fork, Some("more".to_owned()))).await;
    assert_eq!(result.unwrap().output, "fork again");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::ResumeWarning { .. }))
    );
    let request = provider.of_type("fork").remove(0);
    assert_eq!(&*request.system, "the parent's prompt on disk");
    let last = request.messages.last().unwrap();
    assert_eq!(text_of(last), "more");
    assert_eq!(request.messages[0], Message::user_text("delegate"));

    // A new delegation after resuming is numbered after the existing one.
    let (_, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "ok"}]}],
            "worker": [{"turns": [{"text": "w"}]}]
        }}),
    );
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    let (events, _) = run(agent.query("again", QueryOverrides::default())).await;
    assert_eq!(
        finished(&events)[0].agent_id,
        Some("root.0002-worker".parse().unwrap())
    );
    assert!(sessions.join("root.0002-worker.jsonl").is_file());
}

#[tokio::test]
async fn resume_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let (_, runtime) = scripted(dir.path(), &json!({"agents": {}}));
    let session: SessionId = "s-0000000000001-00000002".parse().unwrap();
    let off = Agent::resume(Arc::clone(&runtime), root_with_worker(), &session).unwrap_err();
    assert!(matches!(off, EngineError::TranscriptsOff), "{off:?}");
    let missing = Agent::resume(Arc::clone(&runtime), config(dir.path()), &session).unwrap_err();
    assert!(
        matches!(
            &missing,
            EngineError::Resume {
                source: TranscriptError::Io { .. },
                ..
            }
        ),
        "{missing:?}"
    );

    let (dir, session) = one_delegation(Some("worker")).await;
    let path = dir.path().join(format!("sessions/{session}/root.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "garbage";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (_, runtime) = scripted(dir.path(), &json!({"agents": {}}));
    let error = Agent::resume(runtime, config(dir.path()), &session).unwrap_err();
    assert_eq!(
        zr_types::error_chain(&error),
        format!(
            "cannot resume agent root of session {session}: transcript {}, line 3: not a valid record: expected value at line 1 column 1",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_cancelled_or_failed_query_leaves_the_transcript_equal_to_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {"root": [{"turns": [
            {"delay_ms": 60_000, "text": "never"},
            {"stop_reason": "max_tokens"},
            {"text": "ok"}
        ]}]}}),
    );
    let agent = Agent::new(runtime, config(dir.path()));
    let query = agent.query("slow", QueryOverrides::default());
    let deadline = Instant::now() + Duration::from_secs(30);
    while provider.requests.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the request was made");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    query.cancel().await;
    let failed = agent.prompt("fails").await.unwrap_err();
    assert!(matches!(failed, EngineError::NoAnswer { .. }), "{failed:?}");
    let result = agent.prompt("again").await.unwrap();
    assert_eq!(result.output, "ok");
    let history = agent.history();
    assert_eq!(
        history,
        [Message::user_text("again"), Message::assistant_text("ok")]
    );
    let session = agent.session_id().clone();
    drop(agent);
    let (_, runtime) = scripted(dir.path(), &json!({"agents": {}}));
    let resumed = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    assert_eq!(resumed.history(), history);
    assert!(!resumed.interrupted(), "its last query finished");
    let path = dir.path().join(format!("sessions/{session}/root.jsonl"));
    assert_eq!(
        record_kinds(&path),
        [
            "header",
            "message",
            // The cancelled query's prompt replaced by the failed one's.
            "history_replaced",
            "finished",
            "query_failed",
            "message",
            "message",
            "finished"
        ]
    );
}

#[tokio::test]
async fn a_running_subagent_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "ok"}]}],
            "worker": [{"turns": [{"delay_ms": 60_000, "text": "late"}]}]
        }}),
    );
    let agent = Agent::new(runtime, config(dir.path()));
    let query = agent.query("go", QueryOverrides::default());
    let deadline = Instant::now() + Duration::from_secs(30);
    while provider.of_type("worker").is_empty() {
        assert!(Instant::now() < deadline, "the worker's request was made");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let busy = agent
        .resume_subagent(&worker, None)
        .finish()
        .await
        .unwrap_err();
    assert!(
        matches!(&busy, EngineError::Busy { agent } if *agent == worker),
        "{busy:?}"
    );
    query.cancel().await;
}

#[tokio::test]
async fn a_transcript_that_cannot_be_written_warns_once_and_the_agents_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let (_, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [task_call("worker")]},
                {"text": "ok"},
                {"text": "second"}
            ]}],
            "worker": [{"turns": [{"text": "w"}]}]
        }}),
    );
    // The sessions folder is a file: no transcript can be made.
    let blocked = dir.path().join("not-a-folder");
    std::fs::write(&blocked, "").unwrap();
    let mut config = root_with_worker();
    config.sessions_dir = Some(blocked.clone());
    let agent = Agent::new(runtime, config);
    let (mut events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "ok");
    let (more, result) = run(agent.query("more", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "second");
    events.extend(more);
    let session = agent.session_id().clone();
    let errors: Vec<(String, PathBuf, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TranscriptError { path, error } => {
                Some((e.agent.to_string(), path.clone(), error.clone()))
            }
            _ => None,
        })
        .collect();
    let error = "Not a directory (os error 20)".to_owned();
    assert_eq!(
        errors,
        [
            (
                "root".to_owned(),
                blocked.join(format!("{session}/root.jsonl")),
                error.clone()
            ),
            (
                "root.0001-worker".to_owned(),
                blocked.join(format!("{session}/root.0001-worker.jsonl")),
                error
            ),
        ],
        "one per transcript, across queries"
    );
}

fn script_turn() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    prop_oneof![
        Just(json!({"text": "words"})),
        Just(json!({"thinking": "hmm", "text": "thought"})),
        Just(json!({"stop_reason": "max_tokens"})),
        Just(json!({"text": "", "tool_calls": [{"name": "Nope"}]})),
        Just(json!({"tool_calls": [task_call("worker")]})),
        Just(json!({"text": "forking", "tool_calls": [
            {"name": "Task", "input": {"description": "d", "prompt": "p"}},
            {"name": "Nope", "input": {"x": 1}}
        ]})),
    ]
}

/// Runs `queries` root queries over `root` turns (subagents answer with
/// `sub` turns), whatever they end with, and checks that the session
/// resumed from disk has the root's history and that every subagent's
/// transcript ends with its `finished` record.
fn check_transcripts_match(root: Vec<Value>, sub: Vec<Value>, max_turns: u32, queries: usize) {
    // In memory where there is such a folder: the property is about what
    // is written, and each `finished` record is synced to disk.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let script = json!({"agents": {
        "root": [{"turns": root, "summary": "summary"}],
        "*": [{"turns": sub, "summary": "sub summary"}]
    }});
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (_, runtime) = scripted(dir.path(), &script);
        let mut config = config(dir.path());
        config.max_turns = max_turns;
        let agent = Agent::new(runtime, config.clone());
        for q in 0..queries {
            let _ = agent.prompt(format!("query {q}")).await;
        }
        let (_, runtime) = scripted(dir.path(), &json!({"agents": {}}));
        let resumed = Agent::resume(runtime, config, agent.session_id()).unwrap();
        assert_eq!(resumed.history(), agent.history());
        assert!(!resumed.interrupted(), "every query ended");
        let folder = dir.path().join(format!("sessions/{}", agent.session_id()));
        for entry in std::fs::read_dir(folder).unwrap().flatten() {
            let records = records(&entry.path());
            if entry.file_name() != "root.jsonl" {
                assert_eq!(records.last().unwrap()["kind"], "finished", "{entry:?}");
            }
        }
    });
}

#[test]
fn prop_a_resumed_root_has_the_history_it_had() {
    use proptest::collection::vec;
    // Each case runs a whole session on disk (3 to 10 ms on a loaded
    // machine): a fiftieth of the configured cases (200 under CI), at
    // least 16.
    let mut config = proptest::test_runner::Config::default();
    config.cases = (config.cases / 50).max(16);
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let inputs = (
        vec(script_turn(), 0..6),
        vec(script_turn(), 0..3),
        1u32..4,
        1usize..4,
    );
    runner
        .run(&inputs, |(root, sub, max_turns, queries)| {
            check_transcripts_match(root, sub, max_turns, queries);
            Ok(())
        })
        .unwrap();
}

#[tokio::test]
async fn a_timed_out_subagent_is_resumed_in_the_same_session() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "ok"}]}],
            "worker": [{"turns": [
                {"delay_ms": 60_000, "text": "late"},
                {"text": "finished on resume"}
            ]}]
        }}),
    );
    let mut config = config(dir.path());
    config.subagent.timeout = Duration::from_secs(2);
    let agent = Agent::new(runtime, config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "ok");
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let results = finished(&events);
    assert_eq!(
        (results[0].agent_id.as_ref(), results[0].status),
        (Some(&worker), TaskStatus::TimedOut)
    );
    // Its run was stopped, so it is not running any more: it resumes.
    let (events, result) = run(agent.resume_subagent(&worker, None)).await;
    let result = result.unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "finished on resume")
    );
    assert_eq!(finished(&events)[0].status, TaskStatus::Completed);
    let request = provider.of_type("worker").remove(1);
    // Cut short before its model answered: it goes on from its prompt.
    assert_eq!(*request.messages, [Message::user_text("p")]);
}

#[tokio::test]
async fn a_background_agent_killed_with_its_process_resumes_after_the_session() {
    let dir = tempfile::tempdir().unwrap();
    // Header, prompt, the answer with its Bash call, the call started, its
    // result: written before the request that the kill interrupts.
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let (session, before) = run_and_kill_at(dir.path(), "background", worker.as_str(), 5);
    let worker_path = dir
        .path()
        .join(format!("sessions/{session}/{worker}.jsonl"));
    let before_records = records(&worker_path);
    assert_eq!(before_records.len(), 5, "{before_records:?}");
    assert_eq!(before_records[0]["agent_type"], "worker");
    assert_eq!(before_records[0]["parent"], "root");
    let written = messages(&before_records);

    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {"worker": [{"turns": [{"text": "finished after the kill"}]}]}}),
    );
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    // The root's query had finished before the kill; its background agent
    // had not.
    assert!(agent.interrupted());
    let history = agent.history();
    assert_eq!(history.len(), 4);
    assert_eq!(history[0], Message::user_text("find the answer"));
    assert_eq!(
        history[3],
        Message::assistant_text("it runs in the background")
    );
    let started = serde_json::to_string(&history[2]).unwrap();
    assert!(
        started.contains(r#""status":"background""#)
            && started.contains("Started in the background as root.0001-worker."),
        "{started}"
    );
    let (events, result) = run(agent.resume_subagent(&worker, None)).await;
    let result = result.unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "finished after the kill")
    );
    let results = finished(&events);
    assert_eq!(
        (results[0].agent_id.as_ref(), results[0].agent_type.as_str()),
        (Some(&worker), "worker")
    );
    // It goes on from its tool's result, as it was before the kill.
    let request = provider.of_type("worker").remove(0);
    assert_eq!(*request.messages, written);
    assert_eq!(&*request.system, "You are the worker agent.");
    let after = std::fs::read(&worker_path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(
        record_kinds(&worker_path),
        [
            "header",
            "message",
            "message",
            "call_started",
            "message",
            "message",
            "finished"
        ]
    );
    // Taken up on its own: the root's next run does not revive it again.
    assert!(!agent.interrupted());
}

#[tokio::test]
async fn continuing_a_session_revives_its_background_agent_and_keeps_the_roots_answer() {
    let dir = tempfile::tempdir().unwrap();
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let (session, _) = run_and_kill_at(dir.path(), "background", worker.as_str(), 5);
    let root_path = dir.path().join(format!("sessions/{session}/root.jsonl"));
    let root_before = std::fs::read(&root_path).unwrap();
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"text": "the root is asked nothing"}]}],
            "worker": [{"turns": [{"text": "finished after the kill"}]}]
        }}),
    );
    let agent = Agent::resume(runtime, config(dir.path()), &session).unwrap();
    assert!(agent.interrupted(), "its background agent was cut short");
    let (events, result) = run(agent.continue_interrupted(QueryOverrides::default())).await;
    let result = result.unwrap();
    // The root had answered before the kill: its answer stands.
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "it runs in the background")
    );
    assert!(
        provider.of_type("root").is_empty(),
        "no request of the root"
    );
    assert!(
        events.iter().any(|e| e.agent == worker
            && matches!(
                e.kind,
                EventKind::SubagentStarted {
                    background: true,
                    ..
                }
            )),
        "revived in the background"
    );
    agent.wait_background().await;
    let revived = agent.background_agent(&worker).unwrap();
    let done = revived.result.unwrap();
    assert_eq!(
        (done.status, done.output.as_str()),
        (TaskStatus::Completed, "finished after the kill")
    );
    let worker_path = dir
        .path()
        .join(format!("sessions/{session}/{worker}.jsonl"));
    assert_eq!(record_kinds(&worker_path).last().unwrap(), "finished");
    assert_eq!(
        std::fs::read(&root_path).unwrap(),
        root_before,
        "nothing is written to the root's transcript again"
    );
    assert!(!agent.interrupted());
}

#[tokio::test]
async fn a_resumed_root_keeps_the_deferred_tools_it_had_loaded_and_called() {
    let (h, mut config) = crate::support::with_db_query(
        &json!({"agents": {"root": [{"turns": [
            {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__db__query"}}]},
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 1}}]},
            {"text": "found"},
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 2}}]},
            {"text": "again"}
        ]}]}}),
        Arc::new(crate::support::Echo),
    );
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config.clone());
    assert_eq!(agent.prompt("go").await.unwrap().output, "found");
    let session = agent.session_id().clone();
    drop(agent);

    let resumed = Agent::resume(Arc::clone(&h.runtime), config, &session).unwrap();
    let (_, result) = run(resumed.query("again", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "again");
    let requests = h.provider.of_type("root");
    assert!(
        crate::support::tool_names(&requests[3])
            .iter()
            .any(|t| t == "mcp__db__query"),
        "advertised again after the resume"
    );
    assert_eq!(
        crate::support::tool_results(&requests[4]).pop(),
        Some((false, r#"mcp__db__query {"n":2}"#.to_owned()))
    );
}

/// Records the level and message of each `dropped ...` log event.
#[derive(Debug, Default, Clone)]
struct Drops(Arc<std::sync::Mutex<Vec<(tracing::Level, String)>>>);

#[derive(Default)]
struct MessageField(String);

impl tracing::field::Visit for MessageField {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Drops {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut message = MessageField::default();
        event.record(&mut message);
        if message.0.starts_with("dropped") {
            let level = *event.metadata().level();
            self.0.lock().unwrap().push((level, message.0));
        }
    }
}

#[tokio::test]
async fn a_cut_short_turn_is_kept_and_damage_is_dropped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (_, runtime) = scripted(
        dir.path(),
        &json!({"agents": {"root": [{"turns": [{"text": "done"}]}]}}),
    );
    let agent = Agent::new(Arc::clone(&runtime), config(dir.path()));
    assert_eq!(agent.prompt("go").await.unwrap().output, "done");
    let session = agent.session_id().clone();
    drop(agent);
    let path = dir.path().join(format!("sessions/{session}/root.jsonl"));
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        record_kinds(&path),
        ["header", "message", "message", "finished"]
    );
    // The answer becomes a call that never got its result.
    let mut call: Value = serde_json::from_str(&lines[2]).unwrap();
    call["message"] = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_9", "name": "Glob", "input": {"pattern": "*"}}
    ]});
    let call = call.to_string();

    // See engine.rs: a second dispatcher keeps callsites first hit on other
    // tests' threads from being cached as disabled.
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    // A result whose call is gone: damage, also in a run cut short.
    let mut orphan: Value = serde_json::from_str(&lines[2]).unwrap();
    orphan["message"] = json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "ghost", "content": [{"type": "text", "text": "x"}], "is_error": false}
    ]});
    let orphan = orphan.to_string();
    let mut seen = Vec::new();
    for (finished, extra) in [(false, None), (true, None), (false, Some(&orphan))] {
        let mut records = vec![lines[0].clone(), lines[1].clone(), call.clone()];
        records.extend(extra.cloned());
        if finished {
            records.push(lines[3].clone());
        }
        std::fs::write(&path, records.join("\n") + "\n").unwrap();
        let drops = Drops::default();
        {
            use tracing_subscriber::layer::SubscriberExt as _;
            let _guard = tracing::subscriber::set_default(
                tracing_subscriber::registry().with(drops.clone()),
            );
            let resumed =
                Agent::resume(Arc::clone(&runtime), config(dir.path()), &session).unwrap();
            assert_eq!(resumed.interrupted(), !finished);
            let call: Message = serde_json::from_value(
                serde_json::from_str::<Value>(&call).unwrap()["message"].clone(),
            )
            .unwrap();
            let history = if finished || extra.is_some() {
                vec![Message::user_text("go")]
            } else {
                vec![Message::user_text("go"), call]
            };
            assert_eq!(resumed.history(), history);
        }
        seen.push(drops.0.lock().unwrap().clone());
    }
    assert_eq!(
        seen,
        [
            // The turn the kill cut short is kept whole, to be finished.
            vec![],
            vec![(
                tracing::Level::WARN,
                "dropped tool calls without results, results without calls and empty messages"
                    .to_owned()
            )],
            vec![(
                tracing::Level::WARN,
                "dropped tool calls without results, results without calls and empty messages"
                    .to_owned()
            )],
        ]
    );
}
