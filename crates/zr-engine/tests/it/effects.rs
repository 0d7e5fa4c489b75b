//! The effects seam: every model request (turns and side requests), every
//! tool call and every subagent run of a query goes through the runtime's
//! `Effects`, and an implementation that answers a subagent from its
//! journal replaces the run without forking the loop.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::json;
use zr_caps::AgentType;
use zr_engine::{
    Effects, ModelProvider, ModelRequest, ModelStream, TaskResult, TaskStatus, ToolChoice,
};
use zr_types::{
    AgentId, BoxFuture, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput, Usage,
};

use crate::support::{Harness, sub_agent, task_call};

/// Records every effect, then does what the engine does; with `journal`,
/// answers each subagent with it instead of running it.
#[derive(Debug, Default)]
struct Journal {
    seen: Mutex<Vec<String>>,
    journal: Option<TaskResult>,
}

impl Journal {
    fn note(&self, entry: String) {
        self.seen.lock().unwrap().push(entry);
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Effects for Journal {
    fn model_request(
        &self,
        provider: &Arc<dyn ModelProvider>,
        request: ModelRequest,
    ) -> ModelStream {
        let tools = match request.tool_choice {
            ToolChoice::None => "tools disabled",
            _ => "tools on",
        };
        self.note(format!(
            "model {} turn {} {tools}",
            request.origin.agent, request.origin.turn
        ));
        provider.stream(request)
    }

    fn tool_call<'a>(
        &'a self,
        handler: &'a Arc<dyn ToolHandler>,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let key = ctx.idempotency_key.as_deref().unwrap_or("no key");
        let key = key.replacen(ctx.session.as_str(), "SESSION", 1);
        self.note(format!("tool {} {} {key}", ctx.agent, call.name));
        handler.call(call, ctx)
    }

    fn subagent<'a>(
        &'a self,
        agent: &'a AgentId,
        run: BoxFuture<'a, TaskResult>,
    ) -> BoxFuture<'a, TaskResult> {
        self.note(format!("subagent {agent}"));
        match &self.journal {
            Some(recorded) => {
                let recorded = recorded.clone();
                Box::pin(async move { recorded })
            }
            None => run,
        }
    }

    fn now(&self) -> SystemTime {
        self.note("clock".to_owned());
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }
}

fn script() -> serde_json::Value {
    json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{
            "turns": [{"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]}],
            "summary": "I ran echo."
        }]
    }})
}

fn harness(journal: &Arc<Journal>) -> Harness {
    let effects = Arc::clone(journal) as Arc<dyn Effects>;
    Harness::with_runtime(&script(), |r| r.with_effects(effects))
}

fn config() -> zr_engine::AgentConfig {
    let mut worker = sub_agent("worker", AgentType::GeneralPurpose);
    worker.max_turns = Some(1);
    zr_engine::AgentConfig::new("root").with_sub_agent(worker)
}

#[tokio::test]
async fn every_model_request_tool_call_and_subagent_goes_through_the_effects() {
    let journal = Arc::new(Journal::default());
    let h = harness(&journal);
    let agent = h.agent(config());
    let session = agent.session_id().to_string();
    let result = agent.prompt("go").await.unwrap();
    assert_eq!(result.output, "root done");
    // The session id's time part comes from the effects' clock.
    let millis = format!("s-{:013x}-", 1_700_000_000_000_u64);
    assert!(session.starts_with(&millis), "{session}");
    assert_eq!(
        journal.seen(),
        vec![
            "clock",
            "model root turn 1 tools on",
            "subagent root.0001-worker",
            "model root.0001-worker turn 1 tools on",
            // The idempotency key: `{session}/{call id}`.
            "tool root.0001-worker Bash SESSION/toolu_01_0",
            // The turn-limit summary: a side request, tools disabled.
            "model root.0001-worker turn 2 tools disabled",
            "model root turn 2 tools on",
        ]
    );
}

#[tokio::test]
async fn a_subagent_answered_from_the_journal_does_not_run_again() {
    let journal = Arc::new(Journal {
        journal: Some(journaled("from the journal")),
        ..Journal::default()
    });
    let h = harness(&journal);
    let agent = h.agent(config());
    assert_eq!(agent.prompt("go").await.unwrap().output, "root done");
    let seen = journal.seen();
    assert!(
        !seen.iter().any(|e| e.contains("model root.0001-worker")),
        "the worker's model was asked: {seen:?}"
    );
    let root = h.provider.of_type("root");
    let answer = crate::support::tool_results(&root[1]);
    assert_eq!(answer.len(), 1);
    assert!(answer[0].1.contains("from the journal"), "{answer:?}");
}

/// A completed result of the worker, as a journal would hold it.
fn journaled(output: &str) -> TaskResult {
    TaskResult {
        index: 0,
        agent_id: Some("root.0001-worker".parse().unwrap()),
        agent_type: "worker".to_owned(),
        description: "d".to_owned(),
        status: TaskStatus::Completed,
        output: output.to_owned(),
        value: None,
        turns: 1,
        usage: Usage::default(),
        cost_usd: None,
        duration: Duration::ZERO,
        error: None,
        worktree: None,
    }
}

/// Runs each typed subagent of the root that is in the background
/// "elsewhere": records when the engine asks (beside the model requests),
/// and ends it when the test says so, or never.
#[derive(Debug)]
struct Elsewhere {
    seen: Arc<Mutex<Vec<String>>>,
    /// Told to end the remote run with `from elsewhere`; `None`: it never
    /// ends.
    end: Option<Arc<tokio::sync::Notify>>,
    /// Opened when the remote run ended.
    ended: Arc<tokio::sync::Semaphore>,
}

/// Records in `0` that the remote run of agent `1` was dropped before its
/// end.
struct Dropped(Arc<Mutex<Vec<String>>>, Option<String>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if let Some(agent) = self.1.take() {
            self.0.lock().unwrap().push(format!("dropped {agent}"));
        }
    }
}

impl Effects for Elsewhere {
    fn model_request(
        &self,
        provider: &Arc<dyn ModelProvider>,
        request: ModelRequest,
    ) -> ModelStream {
        self.seen.lock().unwrap().push(format!(
            "model {} turn {}",
            request.origin.agent, request.origin.turn
        ));
        provider.stream(request)
    }

    fn remote_subagent(
        &self,
        spec: &zr_engine::SubagentSpec,
    ) -> Option<BoxFuture<'static, Result<zr_engine::RemoteEnd, String>>> {
        if !spec.background {
            return None;
        }
        self.seen
            .lock()
            .unwrap()
            .push(format!("elsewhere {} in the background", spec.agent));
        let mut result = journaled("from elsewhere");
        result.agent_id = Some(spec.agent.clone());
        result.description.clone_from(&spec.description);
        let end = self.end.clone();
        let ended = Arc::clone(&self.ended);
        let dropped = Dropped(Arc::clone(&self.seen), Some(spec.agent.to_string()));
        Some(Box::pin(async move {
            let mut dropped = dropped;
            match end {
                Some(end) => end.notified().await,
                None => std::future::pending().await,
            }
            dropped.1 = None;
            ended.add_permits(1);
            Ok(zr_engine::RemoteEnd {
                result,
                usage: zr_types::Usage::default(),
                cost_usd: 0.0,
            })
        }))
    }
}

/// A custom tool that answers once `open` has a permit.
#[derive(Debug)]
struct Gate(Arc<tokio::sync::Semaphore>);

impl ToolHandler for Gate {
    fn call<'a>(
        &'a self,
        _: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let permit = tokio::time::timeout(Duration::from_secs(30), self.0.acquire())
                .await
                .expect("the gate opens within 30 s")
                .expect("the gate is never closed");
            permit.forget();
            Ok(ToolOutput::text("gate passed"))
        })
    }
}

/// The root starts a worker in the background, then waits at the gate
/// (opened when the worker's remote run ends), then answers.
fn elsewhere_harness(effects: &Arc<Elsewhere>) -> (Harness, zr_engine::AgentConfig) {
    let script = json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "bg job", "prompt": "p", "subagent_type": "worker", "run_in_background": true}}]},
            {"tool_calls": [{"name": "gate", "input": {}}]},
            {"text": "root done"}
        ]}],
        "worker": [{"turns": [{"text": "ran here"}]}]
    }});
    let gate = crate::support::custom("gate", false);
    let handler = Arc::new(Gate(Arc::clone(&effects.ended)));
    let shared = Arc::clone(effects) as Arc<dyn Effects>;
    let h = Harness::with_runtime(&script, |r| {
        r.with_tool(Arc::clone(&gate), handler).with_effects(shared)
    });
    let mut config = zr_engine::AgentConfig::new("root")
        .with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    config.capabilities.custom_tools = Some(vec![gate]);
    (h, config)
}

#[tokio::test]
async fn a_background_subagent_run_elsewhere_starts_before_its_call_returns_and_its_end_reaches_the_parent()
 {
    let end = Arc::new(tokio::sync::Notify::new());
    let effects = Arc::new(Elsewhere {
        seen: Arc::default(),
        end: Some(Arc::clone(&end)),
        ended: Arc::new(tokio::sync::Semaphore::new(0)),
    });
    let (h, config) = elsewhere_harness(&effects);
    let agent = h.agent(config);
    let query = agent.query("go", zr_engine::QueryOverrides::default());
    // The remote run ends once the root waits at the gate.
    let ender = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        end.notify_one();
    });
    let result = query.finish().await.unwrap();
    ender.await.unwrap();
    assert_eq!(result.output, "root done");
    // Asked when the call started it, before the call returned (the
    // root's next request); it never ran here.
    assert_eq!(
        effects.seen.lock().unwrap().clone(),
        vec![
            "model root turn 1",
            "elsewhere root.0001-worker in the background",
            "model root turn 2",
            "model root turn 3",
        ]
    );
    assert!(h.provider.of_type("worker").is_empty());
    let root = h.provider.of_type("root");
    // The call's result: started in the background.
    let started = crate::support::tool_results(&root[1]);
    assert!(
        started[0].1.contains("\"status\":\"background\""),
        "{started:?}"
    );
    // The remote end, as a local background agent's: in the root's next
    // request, and in the host's list.
    let told = crate::support::notification(&root[2]);
    assert_eq!(told["agent_id"], "root.0001-worker");
    assert_eq!(told["status"], "completed");
    assert_eq!(told["output"], "from elsewhere");
    let listed = agent.background_agents();
    assert_eq!(listed.len(), 1);
    let ended = listed[0].result.as_ref().expect("it ended");
    assert_eq!(
        (ended.status, ended.output.as_str()),
        (TaskStatus::Completed, "from elsewhere")
    );
}

#[tokio::test]
async fn stopping_a_background_subagent_run_elsewhere_drops_its_remote_run() {
    let effects = Arc::new(Elsewhere {
        seen: Arc::default(),
        end: None,
        ended: Arc::new(tokio::sync::Semaphore::new(0)),
    });
    let (h, config) = elsewhere_harness(&effects);
    // The root does not wait at the gate here.
    effects.ended.add_permits(1);
    let agent = h.agent(config);
    let result = agent.prompt("go").await.unwrap();
    assert_eq!(result.output, "root done");
    let id: AgentId = "root.0001-worker".parse().unwrap();
    assert!(agent.background_agent(&id).unwrap().is_running());
    assert!(agent.stop_background(&id).await);
    let stopped = agent.background_agent(&id).unwrap();
    let stopped = stopped.result.expect("it ended");
    assert_eq!(stopped.status, TaskStatus::Cancelled);
    assert!(
        effects
            .seen
            .lock()
            .unwrap()
            .contains(&"dropped root.0001-worker".to_owned()),
        "{:?}",
        effects.seen.lock().unwrap()
    );
}
