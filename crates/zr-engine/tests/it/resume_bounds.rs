//! A resumed subagent never gets more than it started with: it runs with
//! the definition its transcript's header recorded, whatever the
//! configuration says now; a changed or removed type is reported, not
//! adopted; a transcript of the older format (no recorded definition)
//! resumes only while its type is unchanged.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, AgentDefinition, AgentType};
use zr_engine::{Agent, AgentConfig, EngineError, Event, RuntimeEnvironment, TaskStatus};
use zr_types::{AgentId, SessionId, ToolDefinition};

use crate::resume::{edit_header, records, scripted_with};
use crate::support::{
    Echo, Recording, custom, resume_warnings, run, sub_agent, task_call, tool_names, tool_results,
};

/// The reader's id in every session of these tests.
const READER: &str = "root.0001-reader";

/// The file the resumed reader's Bash call would make.
const ESCAPED: &str = "escaped.txt";

/// The `reader` type: allowed `tools` and the custom tools `custom`.
fn reader(tools: &[&str], custom: &[&Arc<ToolDefinition>]) -> AgentDefinition {
    sub_agent("reader", AgentType::GeneralPurpose).with_capabilities(AgentCapabilities {
        allowed_tools: Some(tools.iter().map(|t| t.parse().unwrap()).collect()),
        custom_tools: (!custom.is_empty()).then(|| custom.iter().map(|t| Arc::clone(t)).collect()),
        ..AgentCapabilities::default()
    })
}

/// The root's configuration with `types`, writing transcripts under `dir`.
fn config(dir: &Path, types: impl IntoIterator<Item = AgentDefinition>) -> AgentConfig {
    let mut config = AgentConfig::new("root");
    for definition in types {
        config = config.with_sub_agent(definition);
    }
    config.sessions_dir = Some(dir.join("sessions"));
    config
}

/// Runs the root once with `definition` as its `reader` type (and `build`
/// on the runtime): it delegates to a reader, whose model calls Read, then
/// answers. The reader's transcript is then cut back to that first answer,
/// as a kill before the Read's result leaves it. Returns the folder, the
/// session and the reader's transcript.
async fn a_cut_reader(
    definition: AgentDefinition,
    build: impl FnOnce(RuntimeEnvironment) -> RuntimeEnvironment,
) -> (tempfile::TempDir, SessionId, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (_, runtime) = scripted_with(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task_call("reader")]}, {"text": "ok"}]}],
            "reader": [{"turns": [
                {"tool_calls": [{"name": "Read", "input": {"file_path": "."}}]},
                {"text": "read"}
            ]}]
        }}),
        build,
    );
    let agent = Agent::new(runtime, config(dir.path(), [definition]));
    assert_eq!(agent.prompt("delegate").await.unwrap().output, "ok");
    let session = agent.session_id().clone();
    let path = dir
        .path()
        .join(format!("sessions/{session}/{READER}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text.lines().take(3).collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    let kinds: Vec<Value> = records(&path).iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, ["header", "message", "message"]);
    (dir, session, path)
}

/// The script of a resumed reader: it calls Bash (which would make
/// [`ESCAPED`]), then answers `done`.
fn calls_bash() -> Value {
    json!({"agents": {"reader": [{"turns": [
        {"tool_calls": [{"name": "Bash", "input": {"command": format!("touch {ESCAPED}")}}]},
        {"text": "done"}
    ]}]}})
}

/// Resumes the reader of `session` under `types` and runs it on; its
/// events and status.
async fn resume_reader(
    dir: &Path,
    session: &SessionId,
    types: impl IntoIterator<Item = AgentDefinition>,
) -> (Arc<Recording>, Vec<Event>, Result<TaskStatus, EngineError>) {
    let (provider, runtime) = scripted_with(dir, &calls_bash(), |r| r);
    let agent = Agent::resume(runtime, config(dir, types), session).unwrap();
    let id: AgentId = READER.parse().unwrap();
    let (events, result) = run(agent.resume_subagent(&id, None)).await;
    (provider, events, result.map(|r| r.status))
}

/// The text of the resumed reader's result for its Bash call.
fn bash_result(provider: &Recording) -> (bool, String) {
    let second = &provider.of_type("reader")[1];
    tool_results(second).pop().unwrap()
}

#[tokio::test]
async fn a_subagent_whose_type_gained_bash_resumes_without_it_and_is_told_why() {
    let (dir, session, _) = a_cut_reader(reader(&["Read"], &[]), |r| r).await;
    let (provider, events, status) =
        resume_reader(dir.path(), &session, [reader(&["Read", "Bash"], &[])]).await;
    assert_eq!(status.unwrap(), TaskStatus::Completed);
    assert!(!dir.path().join(ESCAPED).exists(), "Bash did not run");
    assert_eq!(
        bash_result(&provider),
        (
            true,
            format!("tool 'Bash' is not available to agent {READER}")
        )
    );
    let first = &provider.of_type("reader")[0];
    assert!(
        !tool_names(first).contains(&"Bash".to_owned()),
        "{:?}",
        tool_names(first)
    );
    assert_eq!(
        resume_warnings(&events),
        [
            "the definition of type 'reader' changed since the agent started; it resumes with the one it started with (the change takes effect for new agents)"
        ]
    );
}

#[tokio::test]
async fn an_unchanged_type_resumes_without_a_warning() {
    let (dir, session, path) = a_cut_reader(reader(&["Read"], &[]), |r| r).await;
    let header = &records(&path)[0];
    assert_eq!(
        (&header["version"], &header["permission_mode"]),
        (&json!(2), &json!("default"))
    );
    assert_eq!(
        header["definition"]["capabilities"]["allowed_tools"],
        json!(["Read"])
    );
    let (provider, events, status) =
        resume_reader(dir.path(), &session, [reader(&["Read"], &[])]).await;
    assert_eq!(status.unwrap(), TaskStatus::Completed);
    assert_eq!(resume_warnings(&events), Vec::<String>::new());
    assert!(bash_result(&provider).0, "Bash is not its tool");
    assert!(!dir.path().join(ESCAPED).exists());
}

#[tokio::test]
async fn a_removed_type_resumes_with_the_definition_it_started_with() {
    let (dir, session, _) = a_cut_reader(reader(&["Read"], &[]), |r| r).await;
    let general = sub_agent("general-purpose", AgentType::GeneralPurpose);
    let (provider, events, status) = resume_reader(dir.path(), &session, [general]).await;
    assert_eq!(status.unwrap(), TaskStatus::Completed);
    assert_eq!(
        resume_warnings(&events),
        [
            "no subagent type 'reader' in the configuration any more; the agent resumes with the definition it started with"
        ]
    );
    let first = &provider.of_type("reader")[0];
    assert_eq!(&*first.system, "You are the reader agent.");
    assert!(bash_result(&provider).0, "Bash is not its tool");
    assert!(!dir.path().join(ESCAPED).exists());
}

/// Makes the header of `path` one of the older format, which recorded the
/// definition's hash alone.
fn older_format(path: &Path) {
    edit_header(path, |h| {
        let header = h.as_object_mut().unwrap();
        assert!(header.remove("definition").is_some(), "{header:?}");
        header.remove("permission_mode");
        header.insert("version".to_owned(), json!(1));
    });
}

#[tokio::test]
async fn an_older_transcript_resumes_while_its_type_is_unchanged_and_is_refused_once_it_changed() {
    let (dir, session, path) = a_cut_reader(reader(&["Read"], &[]), |r| r).await;
    older_format(&path);
    let (provider, events, status) =
        resume_reader(dir.path(), &session, [reader(&["Read"], &[])]).await;
    assert_eq!(status.unwrap(), TaskStatus::Completed);
    assert_eq!(resume_warnings(&events), Vec::<String>::new());
    assert!(bash_result(&provider).0, "Bash is not its tool");

    let (dir, session, path) = a_cut_reader(reader(&["Read"], &[]), |r| r).await;
    older_format(&path);
    let before = std::fs::read(&path).unwrap();
    let (provider, _, status) =
        resume_reader(dir.path(), &session, [reader(&["Read", "Bash"], &[])]).await;
    let error = status.unwrap_err();
    assert!(
        matches!(error, EngineError::DefinitionChanged { .. }),
        "{error:?}"
    );
    assert_eq!(
        zr_types::error_chain(&error),
        format!(
            "cannot resume agent {READER}: the definition of type 'reader' changed since it started, and its transcript (an older format) does not record the definition it started with; start a new agent of the type instead"
        )
    );
    assert!(provider.of_type("reader").is_empty(), "no model request");
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
    assert!(!dir.path().join(ESCAPED).exists());
}

#[tokio::test]
async fn a_custom_tool_the_runtime_no_longer_has_is_left_out_not_invented() {
    let lint = custom("lint", true);
    let (dir, session, path) = a_cut_reader(reader(&["Read"], &[&lint]), |r| {
        r.with_tool(Arc::clone(&lint), Arc::new(Echo))
    })
    .await;
    let header = &records(&path)[0];
    assert_eq!(
        header["definition"]["capabilities"]["custom_tools"][0]["name"],
        "lint"
    );
    // The runtime no longer has `lint`, and the type no longer names it.
    let (provider, events, status) =
        resume_reader(dir.path(), &session, [reader(&["Read"], &[])]).await;
    assert_eq!(status.unwrap(), TaskStatus::Completed);
    assert_eq!(
        resume_warnings(&events),
        [
            "the definition of type 'reader' changed since the agent started; it resumes with the one it started with (the change takes effect for new agents)",
            "tool 'lint' that the agent started with is no longer in the runtime; it resumes without it"
        ]
    );
    let first = &provider.of_type("reader")[0];
    assert!(!tool_names(first).contains(&"lint".to_owned()));

    // With the same tool registered again, it keeps it.
    let (dir, session, _) = a_cut_reader(reader(&["Read"], &[&lint]), |r| {
        r.with_tool(Arc::clone(&lint), Arc::new(Echo))
    })
    .await;
    let again = custom("lint", true);
    let (provider, runtime) = scripted_with(dir.path(), &calls_bash(), |r| {
        r.with_tool(Arc::clone(&again), Arc::new(Echo))
    });
    let agent = Agent::resume(
        runtime,
        config(dir.path(), [reader(&["Read"], &[&again])]),
        &session,
    )
    .unwrap();
    let (events, result) = run(agent.resume_subagent(&READER.parse().unwrap(), None)).await;
    assert_eq!(result.unwrap().status, TaskStatus::Completed);
    assert_eq!(resume_warnings(&events), Vec::<String>::new());
    let first = &provider.of_type("reader")[0];
    assert!(tool_names(first).contains(&"lint".to_owned()));
}
