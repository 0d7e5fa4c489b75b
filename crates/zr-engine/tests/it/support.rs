//! Shared set-up of the engine tests: a scripted runtime in a temporary
//! folder, a provider that records every request, event helpers and a
//! process scan.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use tempfile::TempDir;
use zr_caps::{AgentDefinition, AgentType, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, EngineError, Event, EventKind, ModelProvider, ModelRequest, ModelStream,
    Query, QueryResult, RuntimeEnvironment, ScriptedProvider, TaskResult,
};
use zr_tools::BuiltinTools;
use zr_types::{ContentBlock, MessageRole, ToolResultContent};

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
            .filter(|r| r.origin.agent_type == agent_type)
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
        let dir = tempfile::tempdir().unwrap();
        let provider = Recording::new(script);
        let settings = RuntimeSettings {
            model: "scripted-model".to_owned(),
            cwd: dir.path().to_path_buf(),
            env: [("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]
                .into_iter()
                .collect(),
        };
        let tools = BuiltinTools::new(dir.path().join(".zr/cron.json"));
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
