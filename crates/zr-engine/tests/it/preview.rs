//! `Agent::preview_pools`: the pools a query would resolve, without
//! running one, equal to what each agent's first request advertises.

use serde_json::json;
use zr_caps::AgentType;
use zr_engine::{AgentConfig, QueryOverrides};
use zr_resolve::{DerivedKind, Role};

use crate::support::{Harness, run, sub_agent, task_call, tool_names};

fn names(tools: zr_resolve::Tools<'_>) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn the_preview_is_what_each_agent_is_sent() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("scout")]},
            {"tool_calls": [{"name": "Task", "input": {"description": "d", "prompt": "p"}}]},
            {"text": "done"}
        ]}],
        "scout": [{"turns": [{"text": "scouted"}]}],
        "fork": [{"turns": [{"text": "forked"}]}]
    }}));
    let mut background = sub_agent("reporter", AgentType::GeneralPurpose);
    background.background = true;
    let config = AgentConfig::new("root")
        .with_sub_agent(sub_agent("scout", AgentType::Explore))
        .with_sub_agent(background);
    let agent = h.agent(config);

    let report = agent.preview_pools().unwrap();
    let agents: Vec<(&str, Role)> = report
        .agents
        .iter()
        .map(|a| (a.agent.as_str(), a.role))
        .collect();
    assert_eq!(
        agents,
        [
            ("root", Role::Root),
            (
                "reporter",
                Role::Derived {
                    kind: DerivedKind::GeneralPurpose,
                    background: true
                }
            ),
            (
                "scout",
                Role::Derived {
                    kind: DerivedKind::Explore,
                    background: false
                }
            ),
            ("fork", Role::Fork { background: false }),
        ]
    );

    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let sent = |agent_type: &str| tool_names(&h.provider.of_type(agent_type)[0]);
    let pool = |i: usize| names(report.agents[i].pool.advertised());
    assert_eq!(pool(0), sent("root"));
    assert_eq!(pool(2), sent("scout"));
    assert_eq!(pool(3), sent("fork"));
    // The explore type really is narrower than the root: the comparison
    // above is not between equal lists.
    assert!(pool(0).contains(&"Write".to_owned()));
    assert!(!pool(2).contains(&"Write".to_owned()));
    assert!(pool(0).contains(&"Task".to_owned()));
    // The background type keeps only the allow-listed builtins.
    assert!(!pool(1).contains(&"Task".to_owned()));
}
