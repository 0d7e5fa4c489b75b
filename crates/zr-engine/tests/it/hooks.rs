//! Hooks end to end: SubagentStart, SubagentStop, PreToolUse (deny,
//! rewrite) and PostToolUse, with each agent's id, type and transcript
//! path; a panicking hook.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use zr_caps::AgentType;
use zr_engine::{
    Agent, AgentConfig, Decision, EventKind, Hook, HookAgent, HookReply, Hooks, PermissionConfig,
    QueryOverrides, TaskResult,
};
use zr_types::{AgentId, BoxFuture, ContentBlock, MessageRole, ToolCall, ToolOutput};

use crate::support::{
    Harness, Policy, denials_of, finished, root_with_worker, run, sub_agent, task_call,
    tool_results, write_call,
};

/// What a PreToolUse of the recording hook answers for a call.
type Decide = Box<dyn Fn(&ToolCall) -> HookReply + Send + Sync>;

/// Records every hook call as a line of text, with each agent's view.
struct Recorder {
    log: Mutex<Vec<String>>,
    agents: Mutex<Vec<HookAgent>>,
    /// Whether each call's transcript file existed when the hook ran.
    transcripts: Mutex<Vec<bool>>,
    decide: Decide,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    fn new(decide: impl Fn(&ToolCall) -> HookReply + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            log: Mutex::new(Vec::new()),
            agents: Mutex::new(Vec::new()),
            transcripts: Mutex::new(Vec::new()),
            decide: Box::new(decide),
        })
    }

    fn note(&self, agent: &HookAgent, line: String) {
        let exists = agent.transcript_path.as_ref().is_some_and(|p| p.is_file());
        self.log.lock().unwrap().push(line);
        self.agents.lock().unwrap().push(agent.clone());
        self.transcripts.lock().unwrap().push(exists);
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Hook for Recorder {
    fn subagent_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        parent: &'a AgentId,
    ) -> BoxFuture<'a, ()> {
        self.note(
            agent,
            format!(
                "SubagentStart {} {} parent={parent}",
                agent.agent, agent.agent_type
            ),
        );
        Box::pin(async {})
    }

    fn subagent_stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        result: &'a TaskResult,
    ) -> BoxFuture<'a, ()> {
        self.note(
            agent,
            format!(
                "SubagentStop {} {} {} {:?}",
                agent.agent,
                agent.agent_type,
                result.status.as_str(),
                result.output
            ),
        );
        Box::pin(async {})
    }

    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        self.note(
            agent,
            format!(
                "PreToolUse {} {} {} {}",
                agent.agent, agent.agent_type, call.name, call.input
            ),
        );
        let decision = (self.decide)(call);
        Box::pin(async move { decision })
    }

    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        self.note(
            agent,
            format!(
                "PostToolUse {} {} {} {} error={}",
                agent.agent, agent.agent_type, call.name, call.input, output.is_error
            ),
        );
        Box::pin(async { HookReply::proceed() })
    }
}

fn with_hook(config: AgentConfig, hook: &Arc<Recorder>) -> AgentConfig {
    let mut config = config;
    config.hooks = Hooks::new().with(Arc::clone(hook) as _);
    config
}

/// The root delegates to a worker scripted with `worker_turns`, under a
/// hook that lets every call go on, with transcripts in `.zr/sessions`;
/// checks the root answers `root done`. The harness, the agent, the hook
/// and the transcripts' folder.
async fn delegate_under_hook(worker_turns: Value) -> (Harness, Agent, Arc<Recorder>, PathBuf) {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{"turns": worker_turns}]
    }}));
    let hook = Recorder::new(|_| HookReply::proceed());
    let sessions = h.dir.path().join(".zr/sessions");
    let mut config = with_hook(root_with_worker(), &hook);
    config.sessions_dir = Some(sessions.clone());
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    (h, agent, hook, sessions)
}

#[tokio::test]
async fn each_hook_fires_with_the_agents_id_type_and_transcript_path() {
    let (_h, agent, hook, sessions) = delegate_under_hook(json!([
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.md"}}]},
        {"text": "found it"}
    ]))
    .await;
    let task_input = r#"{"description":"d","prompt":"p","subagent_type":"worker"}"#;
    assert_eq!(
        hook.log(),
        [
            format!("PreToolUse root root Task {task_input}"),
            "SubagentStart root.0001-worker worker parent=root".to_owned(),
            r#"PreToolUse root.0001-worker worker Glob {"pattern":"*.md"}"#.to_owned(),
            r#"PostToolUse root.0001-worker worker Glob {"pattern":"*.md"} error=false"#.to_owned(),
            r#"SubagentStop root.0001-worker worker completed "found it""#.to_owned(),
            format!("PostToolUse root root Task {task_input} error=false"),
        ]
    );
    let session = agent.session_id().as_str().to_owned();
    let paths: Vec<(String, String, Option<std::path::PathBuf>)> = hook
        .agents
        .lock()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a.agent.to_string(),
                a.agent_type.clone(),
                a.transcript_path.clone(),
            )
        })
        .collect();
    let root = Some(sessions.join(&session).join("root.jsonl"));
    let worker = Some(sessions.join(&session).join("root.0001-worker.jsonl"));
    assert_eq!(
        paths,
        [
            ("root".to_owned(), "root".to_owned(), root.clone()),
            (
                "root.0001-worker".to_owned(),
                "worker".to_owned(),
                worker.clone()
            ),
            (
                "root.0001-worker".to_owned(),
                "worker".to_owned(),
                worker.clone()
            ),
            (
                "root.0001-worker".to_owned(),
                "worker".to_owned(),
                worker.clone()
            ),
            ("root.0001-worker".to_owned(), "worker".to_owned(), worker),
            ("root".to_owned(), "root".to_owned(), root),
        ]
    );
    // A new subagent's transcript is made when its run starts, after
    // SubagentStart (a queued agent has none yet).
    assert_eq!(
        *hook.transcripts.lock().unwrap(),
        [true, false, true, true, true, true]
    );
}

#[tokio::test]
async fn without_transcripts_the_path_is_none() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]},
        {"text": "done"}
    ]}]}}));
    let hook = Recorder::new(|_| HookReply::proceed());
    let agent = h.agent(with_hook(AgentConfig::new("root"), &hook));
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let agents = hook.agents.lock().unwrap().clone();
    assert_eq!(agents.len(), 2);
    assert!(agents.iter().all(|a| a.transcript_path.is_none()));
}

#[tokio::test]
async fn a_pre_tool_use_rewrite_changes_what_runs_and_what_is_reported_but_not_the_models_call() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("out.txt", "from the model")]},
        {"text": "done"}
    ]}]}}));
    let hook = Recorder::new(|call| {
        if call.name == "Write" {
            HookReply::proceed()
                .with_input(json!({"file_path": "out.txt", "content": "from the hook"}))
        } else {
            HookReply::proceed()
        }
    });
    let policy = Policy::new(|_| Decision::Allow);
    let mut config = with_hook(AgentConfig::new("root"), &hook);
    config.permissions = PermissionConfig::with_handler(Arc::clone(&policy) as _);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("out.txt")).unwrap(),
        "from the hook"
    );
    let rewritten = json!({"file_path": "out.txt", "content": "from the hook"});
    let started: Vec<Value> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCallStarted { input, .. } => Some(input.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        std::slice::from_ref(&rewritten),
        "the host's event shows the input that ran"
    );
    assert_eq!(
        policy.seen()[0].input,
        rewritten,
        "the permission check saw it too"
    );
    assert_eq!(
        hook.log()[1],
        format!("PostToolUse root root Write {rewritten} error=false")
    );
    // The model's own call stays as it wrote it.
    let second = &h.provider.of_type("root")[1];
    let call = second
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::Assistant)
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolUse { input, .. } => Some(input.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        call,
        json!({"file_path": "out.txt", "content": "from the model"})
    );
}

#[tokio::test]
async fn a_pre_tool_use_deny_stops_the_call() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{"turns": [
            {"tool_calls": [write_call("friday.txt", "x")]},
            {"text": "could not write"}
        ]}]
    }}));
    let hook = Recorder::new(|call| {
        if call.name == "Write" {
            HookReply::block("no writes on Fridays")
        } else {
            HookReply::proceed()
        }
    });
    let policy = Policy::new(|_| Decision::Allow);
    let mut config = with_hook(
        AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose)),
        &hook,
    );
    config.permissions = PermissionConfig::with_handler(Arc::clone(&policy) as _);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    assert!(!h.dir.path().join("friday.txt").exists());
    let reason = "tool 'Write' was not run: a PreToolUse hook denied it: no writes on Fridays";
    assert_eq!(
        tool_results(&h.provider.of_type("worker")[1]),
        [(true, reason.to_owned())]
    );
    assert_eq!(denials_of(&events, "root.0001-worker"), [reason]);
    assert!(
        policy.seen().is_empty(),
        "a denied call is not put to the host"
    );
    assert!(
        !hook
            .log()
            .iter()
            .any(|l| l.starts_with("PostToolUse root.0001-worker")),
        "a call that did not run gets no PostToolUse: {:?}",
        hook.log()
    );
    assert_eq!(finished(&events)[0].output, "could not write");
}

/// A hook that panics in the PreToolUse of Write (inside its future) and
/// in every PostToolUse (before it makes one).
#[derive(Debug)]
struct Panics;

impl Hook for Panics {
    fn pre_tool_use<'a>(
        &'a self,
        _: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            assert!(call.name != "Write", "the hook broke");
            HookReply::proceed()
        })
    }

    fn post_tool_use<'a>(
        &'a self,
        _: &'a HookAgent,
        _: &'a ToolCall,
        _: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        panic!("not even a future")
    }
}

#[tokio::test]
async fn a_panicking_hook_denies_the_call_and_the_engine_goes_on() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.none"}}, write_call("a.txt", "a")]},
        {"text": "still here"}
    ]}]}}));
    let mut config = AgentConfig::new("root");
    config.hooks = Hooks::new().with(Arc::new(Panics));
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "still here");
    assert!(!h.dir.path().join("a.txt").exists());
    assert_eq!(
        denials_of(&events, "root"),
        ["tool 'Write' was not run: the PreToolUse hook panicked: the hook broke"]
    );
    // Glob ran; the panic in its PostToolUse was ignored.
    assert_eq!(
        tool_results(&h.provider.of_type("root")[1]),
        [
            (
                false,
                format!(
                    "No files match \"*.none\" under {}.",
                    h.dir.path().display()
                )
            ),
            (
                true,
                "tool 'Write' was not run: the PreToolUse hook panicked: the hook broke".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn a_resumed_subagent_runs_its_start_and_stop_hooks_with_its_transcript() {
    let (_h, agent, hook, sessions) = delegate_under_hook(json!([
        {"text": "first"},
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.md"}}]},
        {"text": "resumed"}
    ]))
    .await;
    let before = hook.log().len();
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let (events, result) = run(agent.resume_subagent(&worker, Some("more".to_owned()))).await;
    assert_eq!(result.unwrap().output, "resumed");
    assert_eq!(finished(&events).len(), 1);
    assert_eq!(
        hook.log()[before..],
        [
            "SubagentStart root.0001-worker worker parent=root".to_owned(),
            r#"PreToolUse root.0001-worker worker Glob {"pattern":"*.md"}"#.to_owned(),
            r#"PostToolUse root.0001-worker worker Glob {"pattern":"*.md"} error=false"#.to_owned(),
            r#"SubagentStop root.0001-worker worker completed "resumed""#.to_owned(),
        ]
    );
    let path = sessions
        .join(agent.session_id().as_str())
        .join("root.0001-worker.jsonl");
    let agents = hook.agents.lock().unwrap()[before..].to_vec();
    assert!(
        agents
            .iter()
            .all(|a| a.transcript_path.as_ref() == Some(&path)),
        "{agents:?}"
    );
    assert_eq!(
        hook.transcripts.lock().unwrap()[before..],
        [true; 4],
        "its transcript is there at every hook"
    );
}

/// A SubagentStart hook that takes its time.
#[derive(Debug)]
struct SlowStart;

impl Hook for SlowStart {
    fn subagent_start<'a>(&'a self, _: &'a HookAgent, _: &'a AgentId) -> BoxFuture<'a, ()> {
        Box::pin(tokio::time::sleep(std::time::Duration::from_millis(300)))
    }
}

#[tokio::test]
async fn a_subagent_resumed_twice_at_once_runs_once_the_other_is_busy() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{"turns": [{"text": "first"}, {"text": "resumed"}, {"text": "twice"}]}]
    }}));
    let mut config = root_with_worker();
    config.hooks = Hooks::new().with(Arc::new(SlowStart) as _);
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config);
    assert_eq!(agent.prompt("go").await.unwrap().output, "root done");
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    let one = agent.resume_subagent(&worker, Some("more".to_owned()));
    let two = agent.resume_subagent(&worker, Some("more".to_owned()));
    let (one, two) = tokio::join!(one.finish(), two.finish());
    let mut outcomes: Vec<String> = [one, two]
        .into_iter()
        .map(|r| match r {
            Ok(result) => result.output,
            Err(error) => zr_types::error_chain(&error),
        })
        .collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        [
            "agent root.0001-worker is already running a query; wait for it to finish or cancel it"
                .to_owned(),
            "resumed".to_owned()
        ]
    );
    assert_eq!(h.provider.of_type("worker").len(), 2, "one more request");
}

#[tokio::test]
async fn a_resumed_subagent_is_clamped_to_the_roots_mode() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{"turns": [
            {"text": "planned"},
            {"tool_calls": [write_call("out.txt", "x")]},
            {"text": "could not write"}
        ]}]
    }}));
    let hook = Recorder::new(|_| HookReply::proceed());
    let mut worker = sub_agent("worker", AgentType::GeneralPurpose);
    worker.permission_mode = Some(zr_caps::PermissionMode::BypassPermissions);
    let mut config = with_hook(AgentConfig::new("root").with_sub_agent(worker), &hook);
    config.permission_mode = zr_caps::PermissionMode::Plan;
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config);
    assert_eq!(agent.prompt("go").await.unwrap().output, "root done");
    let before = hook.agents.lock().unwrap().len();
    let id: AgentId = "root.0001-worker".parse().unwrap();
    let (events, result) = run(agent.resume_subagent(&id, Some("write it".to_owned()))).await;
    assert_eq!(result.unwrap().output, "could not write");
    let modes: Vec<zr_caps::PermissionMode> = hook.agents.lock().unwrap()[before..]
        .iter()
        .map(|a| a.mode)
        .collect();
    assert_eq!(modes, [zr_caps::PermissionMode::Plan; 3]);
    assert_eq!(
        denials_of(&events, "root.0001-worker"),
        [
            "tool 'Write' was not run: agent root.0001-worker is in plan mode, where only read-only tools run; describe the change in your plan instead"
        ]
    );
    assert!(!h.dir.path().join("out.txt").exists());
}
