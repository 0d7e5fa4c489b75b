//! The project's instructions (`AgentConfig::instructions`) end the
//! system prompt of the root and of typed subagents, forks keep their
//! parent's, and a types source replaces them while the session runs.

use std::sync::{Arc, Mutex};

use serde_json::json;
use zr_engine::{AgentConfig, AgentTypes, AgentTypesSource};

use crate::support::{Harness, root_with_worker, task_call};

fn system_of(h: &Harness, agent_type: &str) -> Vec<String> {
    h.provider
        .of_type(agent_type)
        .iter()
        .map(|r| r.system.to_string())
        .collect()
}

#[tokio::test]
async fn the_root_and_typed_subagents_end_their_prompt_with_them_and_forks_keep_the_parents() {
    let fork = json!({"name": "Task", "input": {"description": "d", "prompt": "p"}});
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker"), fork]}, {"text": "done"}]}],
        "worker": [{"turns": [{"text": "w"}]}],
        "fork": [{"turns": [{"text": "f"}]}],
    }}));
    let mut config = root_with_worker();
    config.instructions = Some(Arc::from("# Instructions\n\nBe brief."));
    h.agent(config).prompt("go").await.unwrap();
    let root = system_of(&h, "root");
    assert_eq!(root[0], "root\n\n# Instructions\n\nBe brief.");
    assert_eq!(
        system_of(&h, "worker"),
        ["You are the worker agent.\n\n# Instructions\n\nBe brief."]
    );
    assert_eq!(system_of(&h, "fork"), [root[0].clone()]);
}

/// A source that hands out new types once, on its `at`-th call.
#[derive(Debug)]
struct Changes {
    calls: Mutex<usize>,
    at: usize,
    types: Mutex<Option<AgentTypes>>,
}

impl AgentTypesSource for Changes {
    fn changed(&self) -> Option<AgentTypes> {
        let mut calls = self.calls.lock().unwrap();
        *calls += 1;
        if *calls == self.at {
            self.types.lock().unwrap().take()
        } else {
            None
        }
    }
}

#[tokio::test]
async fn changed_instructions_reach_the_roots_next_request_and_later_subagents() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("worker")]},
            {"tool_calls": [task_call("worker")]},
            {"text": "done"},
        ]}],
        "worker": [{"turns": [{"text": "w"}]}, {"turns": [{"text": "w"}]}],
    }}));
    let mut config: AgentConfig = root_with_worker();
    config.instructions = Some(Arc::from("old"));
    let types = AgentTypes {
        sub_agents: config.sub_agents.clone(),
        skills: Vec::new(),
        listed_first: Vec::new(),
        instructions: Some(Arc::from("new")),
        skills_listed_first: Vec::new(),
    };
    // Asked before each root request: the second request sees the change.
    config.types_source = Some(Arc::new(Changes {
        calls: Mutex::new(0),
        at: 2,
        types: Mutex::new(Some(types)),
    }));
    h.agent(config).prompt("go").await.unwrap();
    assert_eq!(
        system_of(&h, "root"),
        ["root\n\nold", "root\n\nnew", "root\n\nnew"]
    );
    assert_eq!(
        system_of(&h, "worker"),
        [
            "You are the worker agent.\n\nold",
            "You are the worker agent.\n\nnew"
        ]
    );
}
