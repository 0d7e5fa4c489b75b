//! Shared set-up of the engine tests: a scripted runtime in a temporary
//! folder, a provider that records every request, tools and script pieces,
//! event helpers, the conversation checks and a process scan.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use tempfile::TempDir;
use zr_caps::{AgentCapabilities, AgentDefinition, AgentType, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, EngineError, Event, EventKind, ModelProvider, ModelRequest, ModelStream,
    Query, QueryResult, RuntimeEnvironment, ScriptedProvider, TaskResult,
};
use zr_tools::BuiltinTools;
use zr_types::{
    Annotations, BoxFuture, ContentBlock, Message, MessageRole, ToolCall, ToolContext,
    ToolDefinition, ToolError, ToolHandler, ToolOrigin, ToolOutput, ToolResultContent, Usage,
};

/// A scripted provider that keeps a copy of every request.
#[derive(Debug)]
pub(crate) struct Recording {
    inner: ScriptedProvider,
    pub(crate) requests: Mutex<Vec<ModelRequest>>,
}

impl Recording {
    pub(crate) fn new(script: &Value) -> Arc<Self> {
        Arc::new(Self {
            inner: ScriptedProvider::from_json(&script.to_string())
                .expect("test scripts are valid"),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// The requests of agents of `agent_type`, in order.
    pub(crate) fn of_type(&self, agent_type: &str) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| *r.origin.agent_type == *agent_type)
            .cloned()
            .collect()
    }
}

impl ModelProvider for Recording {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.stream(request)
    }
}

/// A temporary project folder with a runtime over a recorded script.
pub(crate) struct Harness {
    pub(crate) dir: TempDir,
    pub(crate) provider: Arc<Recording>,
    pub(crate) runtime: Arc<RuntimeEnvironment>,
}

impl Harness {
    pub(crate) fn new(script: &Value) -> Self {
        Self::with_runtime(script, |r| r)
    }

    pub(crate) fn with_runtime(
        script: &Value,
        build: impl FnOnce(RuntimeEnvironment) -> RuntimeEnvironment,
    ) -> Self {
        Self::with_services(script, |t| t, build)
    }

    /// A harness whose builtins get their host services from `services`.
    pub(crate) fn with_services(
        script: &Value,
        services: impl FnOnce(BuiltinTools) -> BuiltinTools,
        build: impl FnOnce(RuntimeEnvironment) -> RuntimeEnvironment,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let provider = Recording::new(script);
        let settings = RuntimeSettings {
            model: "scripted-model".to_owned(),
            cwd: dir.path().to_path_buf(),
            env: [("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]
                .into_iter()
                .collect(),
        };
        let tools = services(BuiltinTools::new(dir.path().join(".zr/cron.json")));
        let runtime = build(RuntimeEnvironment::new(
            Arc::clone(&provider) as Arc<dyn ModelProvider>,
            settings,
            tools,
        ));
        Self {
            dir,
            provider,
            runtime: Arc::new(runtime),
        }
    }

    pub(crate) fn agent(&self, config: AgentConfig) -> Agent {
        Agent::new(Arc::clone(&self.runtime), config)
    }
}

/// A runtime over `provider` (a real one, against a loopback server)
/// whose project folder is `dir`: model `model`, no environment.
pub(crate) fn runtime_in(
    dir: &std::path::Path,
    model: &str,
    provider: Arc<dyn ModelProvider>,
) -> Arc<RuntimeEnvironment> {
    let settings = RuntimeSettings {
        model: model.to_owned(),
        cwd: dir.to_path_buf(),
        env: Default::default(),
    };
    Arc::new(RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.join("cron.json")),
    ))
}

/// A subagent type.
pub(crate) fn sub_agent(name: &str, agent_type: AgentType) -> AgentDefinition {
    AgentDefinition::new(
        name.parse().unwrap(),
        format!("the {name} agent"),
        format!("You are the {name} agent."),
    )
    .with_type(agent_type)
}

/// Every event of a query and its result.
pub(crate) async fn run(query: Query) -> (Vec<Event>, Result<QueryResult, EngineError>) {
    let mut query = query;
    let mut events = Vec::new();
    let collect = async {
        while let Some(event) = query.next().await {
            events.push(event);
        }
    };
    tokio::time::timeout(Duration::from_secs(60), collect)
        .await
        .expect("the query ends within a minute");
    let result = query.finish().await;
    (events, result)
}

/// The results of subagents, in the order they finished.
pub(crate) fn finished(events: &[Event]) -> Vec<TaskResult> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubagentFinished { result } => Some((**result).clone()),
            _ => None,
        })
        .collect()
}

/// The tool results (text) an agent's requests carried, in order.
pub(crate) fn tool_results(request: &ModelRequest) -> Vec<(bool, String)> {
    request
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::User)
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                content, is_error, ..
            } => Some((*is_error, text(content))),
            _ => None,
        })
        .collect()
}

pub(crate) fn text(content: &[ToolResultContent]) -> String {
    content
        .iter()
        .map(|c| match c {
            ToolResultContent::Text { text } => text.clone(),
            ToolResultContent::Json { value } => value.to_string(),
            ToolResultContent::Image { .. } => "[image]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pids of live processes whose command line contains `marker`.
pub(crate) fn processes_with(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until no process has `marker` in its command line.
pub(crate) async fn wait_gone(marker: &str) -> Vec<u32> {
    for _ in 0..100 {
        let left = processes_with(marker);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    processes_with(marker)
}

/// Checks what every provider requires of a conversation: no empty
/// message, no empty text block, and every tool use answered by exactly one
/// tool result in the next message (and no result without its use).
pub(crate) fn assert_valid(messages: &[Message], what: &str) {
    let roles: Vec<MessageRole> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles.first(),
        Some(&MessageRole::User),
        "{what}: starts with the user"
    );
    assert!(
        roles.windows(2).all(|w| w[0] != w[1]),
        "{what}: roles do not alternate: {roles:?}"
    );
    for (i, message) in messages.iter().enumerate() {
        assert!(!message.content.is_empty(), "{what}: message {i} is empty");
        for block in &message.content {
            if let ContentBlock::Text { text } = block {
                assert!(!text.is_empty(), "{what}: message {i} has an empty text");
            }
        }
        let uses: Vec<&str> = message
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        let results = |m: &Message| -> Vec<String> {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                    _ => None,
                })
                .collect()
        };
        if message.role == MessageRole::Assistant {
            if uses.is_empty() {
                continue;
            }
            let next = messages
                .get(i + 1)
                .unwrap_or_else(|| panic!("{what}: message {i}'s tool uses are unanswered"));
            assert_eq!(next.role, MessageRole::User, "{what}: message {}", i + 1);
            let mut answered = results(next);
            answered.sort();
            let mut asked: Vec<String> = uses.iter().map(|s| (*s).to_owned()).collect();
            asked.sort();
            assert_eq!(answered, asked, "{what}: answers to message {i}");
        } else {
            let answered = results(message);
            if answered.is_empty() {
                continue;
            }
            let previous = i
                .checked_sub(1)
                .and_then(|p| messages.get(p))
                .filter(|m| m.role == MessageRole::Assistant)
                .unwrap_or_else(|| panic!("{what}: results in {i} without tool uses"));
            for id in answered {
                assert!(
                    previous
                        .content
                        .iter()
                        .any(|b| matches!(b, ContentBlock::ToolUse { id: u, .. } if *u == id)),
                    "{what}: result {id} in {i} answers nothing"
                );
            }
        }
    }
}

/// Checks [`assert_valid`] on every request the harness's provider got, and
/// that each ends with the user's message.
pub(crate) fn assert_all_requests_valid(h: &Harness) {
    let requests: Vec<ModelRequest> = h.provider.requests.lock().unwrap().clone();
    assert!(!requests.is_empty());
    for r in &requests {
        assert_valid(
            &r.messages,
            &format!("request of {} turn {}", r.origin.agent, r.origin.turn),
        );
        assert_eq!(
            r.messages.last().map(|m| m.role),
            Some(MessageRole::User),
            "the last message is the user's"
        );
    }
}

/// Echoes its call: `{name} {input}`.
#[derive(Debug)]
pub(crate) struct Echo;

impl ToolHandler for Echo {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Ok(ToolOutput::text(format!("{} {}", call.name, call.input))) })
    }
}

/// A custom tool `name`, read-only or not.
pub(crate) fn custom(name: &str, read_only: bool) -> Arc<ToolDefinition> {
    Arc::new(
        ToolDefinition::new(
            name.parse().unwrap(),
            format!("{name} probe"),
            ToolOrigin::Custom,
        )
        .with_annotations(Annotations {
            read_only,
            ..Annotations::default()
        }),
    )
}

/// The read-only tool `mcp__db__query` of the server `db`, which the
/// engine defers until `FindTool` loads it.
fn db_query() -> Arc<ToolDefinition> {
    Arc::new(
        ToolDefinition::new(
            "mcp__db__query".parse().unwrap(),
            "Run a SQL query on the database",
            ToolOrigin::Connection {
                server: "db".parse().unwrap(),
            },
        )
        .with_annotations(Annotations::read_only()),
    )
}

/// The names of the tools a request advertised, in order.
pub(crate) fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.to_string()).collect()
}

/// A `Task` call (description `d`, prompt `p`) to a subagent of type
/// `subagent_type`.
pub(crate) fn task_call(subagent_type: &str) -> Value {
    serde_json::json!({"name": "Task", "input": {"description": "d", "prompt": "p", "subagent_type": subagent_type}})
}

/// The root's config with one general-purpose subagent type, `worker`.
pub(crate) fn root_with_worker() -> AgentConfig {
    AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose))
}

/// A harness whose root may run only the custom tool `tool`, handled by
/// `handler`; its model calls the tool once, then answers `survived`.
pub(crate) fn one_custom_call(
    tool: &Arc<ToolDefinition>,
    handler: Arc<dyn ToolHandler>,
) -> (Harness, AgentConfig) {
    let h = Harness::with_runtime(
        &serde_json::json!({"agents": {"root": [{"turns": [
            {"tool_calls": [{"name": tool.name.as_str()}]},
            {"text": "survived"}
        ]}]}}),
        |r| r.with_tool(Arc::clone(tool), handler),
    );
    let mut config = AgentConfig::new("root");
    config.capabilities = AgentCapabilities {
        custom_tools: Some(vec![Arc::clone(tool)]),
        ..AgentCapabilities::default()
    };
    (h, config)
}

/// A harness over `script` where `mcp__db__query` ([`db_query`]) is
/// handled by `handler`, and the root's config, which defers that tool.
pub(crate) fn with_db_query(
    script: &Value,
    handler: Arc<dyn ToolHandler>,
) -> (Harness, AgentConfig) {
    let deferred = db_query();
    let h = Harness::with_runtime(script, |r| r.with_tool(Arc::clone(&deferred), handler));
    let mut config = AgentConfig::new("root");
    config.options.mcp_tools = vec![deferred];
    (h, config)
}

/// The total usage the last `Usage` event reported.
pub(crate) fn last_total(events: &[Event]) -> Usage {
    events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::Usage { total, .. } => Some(*total),
            _ => None,
        })
        .expect("a usage event")
}

/// A permission handler that records every request and answers with
/// `decide`.
pub(crate) struct Policy {
    decide: Box<dyn Fn(&zr_engine::PermissionRequest) -> zr_engine::Decision + Send + Sync>,
    pub(crate) seen: Mutex<Vec<zr_engine::PermissionRequest>>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").finish_non_exhaustive()
    }
}

impl Policy {
    pub(crate) fn new(
        decide: impl Fn(&zr_engine::PermissionRequest) -> zr_engine::Decision + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            decide: Box::new(decide),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// The requests so far.
    pub(crate) fn seen(&self) -> Vec<zr_engine::PermissionRequest> {
        self.seen.lock().unwrap().clone()
    }
}

impl zr_engine::PermissionHandler for Policy {
    fn can_use_tool<'a>(
        &'a self,
        request: &'a zr_engine::PermissionRequest,
    ) -> BoxFuture<'a, zr_engine::Decision> {
        self.seen.lock().unwrap().push(request.clone());
        let decision = (self.decide)(request);
        Box::pin(async move { decision })
    }
}

/// A `Write` call of `content` into `file`.
pub(crate) fn write_call(file: &str, content: &str) -> Value {
    serde_json::json!({"name": "Write", "input": {"file_path": file, "content": content}})
}

/// The reasons of the `PermissionDenied` events of `agent`, in order.
pub(crate) fn denials_of(events: &[Event], agent: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.agent.as_str() == agent)
        .filter_map(|e| match &e.kind {
            EventKind::PermissionDenied { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

/// Runs a query to its end, then waits for the session's background
/// agents: the query's events, its result, and every event of the
/// background agents (from a subscription made before the query).
pub(crate) async fn run_and_wait(
    agent: &Agent,
    prompt: &str,
) -> (Vec<Event>, Result<QueryResult, EngineError>, Vec<Event>) {
    use futures_util::FutureExt as _;
    let mut background = agent.background_events();
    let (events, result) = run(agent.query(prompt, zr_engine::QueryOverrides::default())).await;
    tokio::time::timeout(Duration::from_secs(60), agent.wait_background())
        .await
        .expect("the background agents end within a minute");
    let mut later = Vec::new();
    while let Some(Some(event)) = background.next().now_or_never() {
        later.push(event);
    }
    (events, result, later)
}

/// The `TaskResult` JSON of the background-task notification in the last
/// message of `request`.
pub(crate) fn notification(request: &ModelRequest) -> Value {
    let last = request.messages.last().expect("a message");
    let text: String = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let json = text
        .split_once("Its result:\n")
        .and_then(|(_, rest)| rest.split_once("\n</background-task-finished>"))
        .map(|(json, _)| json)
        .unwrap_or_else(|| panic!("no notification in {text:?}"));
    serde_json::from_str(json).expect("the notification holds JSON")
}

/// The `kind` of each complete record (a line with its newline) of the
/// transcript at `path`.
pub(crate) fn record_kinds(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .map(|line| {
            let record: Value = serde_json::from_str(line).unwrap();
            record["kind"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The text of the last user message of `request`.
pub(crate) fn text_of_last_user(request: &ModelRequest) -> String {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == MessageRole::User)
        .map(|m| {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The resume warnings among `events`.
pub(crate) fn resume_warnings(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ResumeWarning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}
