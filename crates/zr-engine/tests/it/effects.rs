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
        call: ToolCall,
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
