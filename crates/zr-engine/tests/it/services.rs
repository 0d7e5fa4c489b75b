//! Builtins backed by a host service: `AskUserQuestion` is offered only
//! when the host gave a way to ask, and never to a background agent (it
//! leaves at R1 with "no service configured", whatever the policy says).

use std::sync::{Arc, Mutex};

use serde_json::json;
use zr_caps::AgentType;
use zr_engine::{AgentConfig, AgentObserver};
use zr_resolve::{ResolvePolicy, ResolvedPool, Step};
use zr_test_support::services::PicksOption;
use zr_types::{AgentId, SessionId};

use crate::support::{Harness, run_and_wait, sub_agent};

/// What each agent's pool says about `AskUserQuestion`, by agent id:
/// `offered` (advertised, executable or deferred) or the step and reason
/// of its removal.
#[derive(Debug, Default)]
struct AskSeen(Mutex<Vec<(String, String)>>);

impl AgentObserver for AskSeen {
    fn agent_started(&self, _: &SessionId, agent: &AgentId, pool: &ResolvedPool) {
        let named = |t: &&Arc<zr_types::ToolDefinition>| t.name.as_str() == "AskUserQuestion";
        let offered = pool.executable().iter().any(|t| named(&t))
            || pool.deferred().iter().any(|t| named(&t));
        let seen = if offered {
            "offered".to_owned()
        } else {
            pool.removed()
                .find(|r| r.tool.name.as_str() == "AskUserQuestion")
                .map_or("absent".to_owned(), |r| {
                    format!("{:?}: {}", r.step, r.reason)
                })
        };
        self.0.lock().unwrap().push((agent.to_string(), seen));
    }

    fn agent_finished(&self, _: &SessionId, _: &AgentId) {}
}

/// A root that starts one foreground and one background `worker`, under a
/// policy that would let both keep AskUserQuestion (an empty derived block
/// list, a background allow list naming it).
async fn pools_with(ask: bool) -> Vec<(String, String)> {
    let seen = Arc::new(AskSeen::default());
    let task = |background: bool| {
        json!({"name": "Task", "input": {"description": "d", "prompt": "p",
            "subagent_type": "worker", "run_in_background": background}})
    };
    let h = Harness::with_services(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [task(false)]},
                {"tool_calls": [task(true)]},
                {"text": "ok"}
            ]}],
            "worker": [{"turns": [{"text": "done"}]}]
        }}),
        |tools| {
            if ask {
                tools.with_ask_user(Arc::new(PicksOption(0)))
            } else {
                tools
            }
        },
        |r| r.with_observer(seen.clone()),
    );
    let mut config =
        AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    let mut background = ResolvePolicy::default_background_allowlist();
    background.push("AskUserQuestion".parse().unwrap());
    config.policy = ResolvePolicy {
        derived_blocklist: Vec::new(),
        background_allowlist: background,
        ..ResolvePolicy::default()
    };
    let agent = h.agent(config);
    let (_, result, _) = run_and_wait(&agent, "go").await;
    result.unwrap();
    let mut seen = seen.0.lock().unwrap().clone();
    seen.sort();
    seen
}

#[tokio::test]
async fn ask_user_question_is_offered_only_with_a_service_and_never_in_the_background() {
    let no_service = format!("{:?}: no service configured", Step::R1);
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        pools_with(true).await,
        pairs(&[
            ("root", "offered"),
            ("root.0001-worker", "offered"),
            ("root.0002-worker", &no_service),
        ])
    );
    assert_eq!(
        pools_with(false).await,
        pairs(&[
            ("root", &no_service),
            ("root.0001-worker", &no_service),
            ("root.0002-worker", &no_service),
        ])
    );
}
