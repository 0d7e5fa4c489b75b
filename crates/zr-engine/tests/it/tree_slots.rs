//! `max_concurrent` slots shared by the whole tree (`session/slots.rs`):
//! over random trees (depth up to 3, fan-out 1 to 3, Task calls side by
//! side or one MultiTask, `max_concurrent` 1 to 4) every run completes,
//! and no more than `max_concurrent` subagents ever ask their model at
//! once: a parent waiting on its children gives its slot to them (no
//! deadlock), and the limit is the tree's, not one per delegating agent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use proptest::prelude::*;
use serde_json::{Value, json};
use zr_caps::AgentType;
use zr_engine::{
    Agent, AgentConfig, EventKind, ModelEvent, ModelProvider, ModelRequest, ModelStream,
    QueryOverrides, ScriptedProvider, TaskStatus,
};

use crate::support::{run, runtime_in, sub_agent};

/// A scripted provider that counts the subagents' requests in flight
/// (from the request until its answer is complete) and keeps the most.
#[derive(Debug)]
struct Counting {
    inner: ScriptedProvider,
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

/// One request in flight, counted down once: at its answer or its drop.
struct InFlight(Option<Arc<AtomicUsize>>);

impl InFlight {
    fn end(&mut self) {
        if let Some(now) = self.0.take() {
            now.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.end();
    }
}

impl ModelProvider for Counting {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let inner = self.inner.stream(request.clone());
        if request.origin.agent.is_root() {
            return inner;
        }
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let mut flight = InFlight(Some(Arc::clone(&self.now)));
        Box::pin(inner.map(move |event| {
            if matches!(event, Ok(ModelEvent::Completed(_)) | Err(_)) {
                flight.end();
            }
            event
        }))
    }
}

/// An agent of the tree: how long its model takes, whether its children
/// go in one MultiTask (else one Task call each, in one turn), its
/// children.
#[derive(Debug, Clone)]
struct Node {
    delay_ms: u64,
    multi: bool,
    children: Vec<Node>,
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = (0u64..4).prop_map(|delay_ms| Node {
        delay_ms,
        multi: false,
        children: Vec::new(),
    });
    // Up to 3 levels under the root.
    leaf.prop_recursive(3, 40, 3, |inner| {
        (0u64..4, any::<bool>(), prop::collection::vec(inner, 1..=3)).prop_map(
            |(delay_ms, multi, children)| Node {
                delay_ms,
                multi,
                children,
            },
        )
    })
}

/// The script of `node` (named `[id]` in its task) and of everything
/// under it, into `nodes`; its own turns returned.
fn script(node: &Node, id: &str, nodes: &mut Vec<Value>) -> Value {
    if node.children.is_empty() {
        return json!([{"delay_ms": node.delay_ms, "text": format!("leaf {id}")}]);
    }
    let tasks: Vec<Value> = node
        .children
        .iter()
        .enumerate()
        .map(|(i, child)| {
            let child_id = format!("{id}.{i}");
            let turns = script(child, &child_id, nodes);
            nodes.push(json!({"match": format!("[{child_id}]"), "turns": turns}));
            json!({"description": format!("node {child_id}"), "prompt": format!("[{child_id}] go"), "subagent_type": "node"})
        })
        .collect();
    let calls: Vec<Value> = if node.multi {
        vec![json!({"name": "MultiTask", "input": {"tasks": tasks}})]
    } else {
        tasks
            .into_iter()
            .map(|input| json!({"name": "Task", "input": input}))
            .collect()
    };
    json!([
        {"delay_ms": node.delay_ms, "tool_calls": calls},
        {"text": format!("done {id}")}
    ])
}

fn count(node: &Node) -> usize {
    node.children.iter().map(|c| 1 + count(c)).sum()
}

/// Runs the tree `root` with `max_concurrent` slots: the most subagent
/// requests in flight at once, and every subagent's status.
async fn run_tree(root: &Node, max_concurrent: usize) -> (usize, Vec<TaskStatus>) {
    let mut nodes = Vec::new();
    let turns = script(root, "0", &mut nodes);
    let script = json!({"agents": {"root": [{"turns": turns}], "node": nodes}});
    let now = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let provider = Arc::new(Counting {
        inner: ScriptedProvider::from_json(&script.to_string()).unwrap(),
        now: Arc::clone(&now),
        most: Arc::clone(&most),
    });
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime_in(dir.path(), "scripted-model", provider);
    let mut config =
        AgentConfig::new("root").with_sub_agent(sub_agent("node", AgentType::GeneralPurpose));
    config.policy.max_depth = 3;
    config.subagent.max_concurrent = max_concurrent;
    config.subagent.timeout = Duration::from_secs(120);
    let agent = Agent::new(runtime, config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.status, TaskStatus::Completed, "{result:?}");
    let statuses = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubagentFinished { result } => Some(result.status),
            _ => None,
        })
        .collect();
    (most.load(Ordering::SeqCst), statuses)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every tree completes (a deadlock would hit the 60 s limit of
    /// `run`), every subagent completes, and at most `max_concurrent`
    /// subagents ask their model at once.
    #[test]
    fn prop_the_trees_slots_bound_every_level_and_never_deadlock(
        root in node(),
        max_concurrent in 1usize..=4,
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (most, statuses) = runtime.block_on(run_tree(&root, max_concurrent));
        prop_assert_eq!(statuses.len(), count(&root));
        prop_assert!(statuses.iter().all(|s| *s == TaskStatus::Completed), "{:?}", statuses);
        prop_assert!(most <= max_concurrent, "{} subagents asked at once, limit {}", most, max_concurrent);
    }
}

/// The shape the property's limit is about, fixed: the root starts two
/// leads, each lead two workers, with two slots. One semaphore per
/// delegating agent let four workers ask at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_slots_bound_four_grandchildren_and_a_waiting_lead_holds_none() {
    let leaf = Node {
        delay_ms: 50,
        multi: false,
        children: Vec::new(),
    };
    let lead = Node {
        delay_ms: 0,
        multi: true,
        children: vec![leaf.clone(), leaf],
    };
    let root = Node {
        delay_ms: 0,
        multi: false,
        children: vec![lead.clone(), lead],
    };
    let (most, statuses) = run_tree(&root, 2).await;
    assert_eq!(statuses, [TaskStatus::Completed; 6]);
    assert_eq!(most, 2);
    // With one slot, the lead that holds it gives it to its first worker:
    // the tree still ends.
    let (most, statuses) = run_tree(&root, 1).await;
    assert_eq!(statuses, [TaskStatus::Completed; 6]);
    assert_eq!(most, 1);
}
