//! A property: whatever the models answer (empty answers, unknown tools,
//! refused delegation, budgets, turn limits, forks, tool uses where tools
//! are disabled), every request carries a valid conversation and so does
//! the root's history.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use proptest::prelude::*;
use serde_json::json;
use zr_caps::{AgentCapabilities, AgentType, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, ModelEvent, ModelProvider, ModelRequest, ModelResponse, ModelStream,
    RuntimeEnvironment, ToolChoice,
};
use zr_tools::BuiltinTools;
use zr_types::{Annotations, ContentBlock, Message, StopReason, ToolDefinition, ToolOrigin, Usage};

use crate::support::{Echo, assert_valid};

#[derive(Debug, Clone, Copy)]
enum Call {
    Look,
    Poke,
    Unknown,
    Find,
    Fork,
    Typed(&'static str),
}

#[derive(Debug, Clone)]
struct Turn {
    text: Option<&'static str>,
    calls: Vec<Call>,
    tokens: u64,
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        Just(Call::Look),
        Just(Call::Poke),
        Just(Call::Unknown),
        Just(Call::Find),
        Just(Call::Fork),
        prop_oneof![Just("frugal"), Just("counted"), Just("looper")].prop_map(Call::Typed),
    ]
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        prop_oneof![Just(None), Just(Some("")), Just(Some("words"))],
        proptest::collection::vec(call(), 0..4),
        0u64..400,
    )
        .prop_map(|(text, calls, tokens)| Turn {
            text,
            calls,
            tokens,
        })
}

/// Plays one plan per agent type; `summaries` says how tools-disabled
/// requests are answered (with a tool use, empty, or text).
#[derive(Debug)]
struct Planned {
    plans: BTreeMap<String, Vec<Turn>>,
    summary: u8,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ModelProvider for Planned {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.requests.lock().unwrap().push(request.clone());
        let ty = &*request.origin.agent_type;
        let plan = self
            .plans
            .get(ty)
            .or_else(|| self.plans.get("sub"))
            .cloned()
            .unwrap_or_default();
        let index = usize::try_from(request.origin.turn).unwrap() - 1;
        let mut content = Vec::new();
        let mut tokens = 10;
        if request.tool_choice == ToolChoice::None {
            match self.summary % 3 {
                0 => content.push(ContentBlock::ToolUse {
                    id: "s".to_owned(),
                    name: "Look".to_owned(),
                    input: json!({}),
                }),
                1 => content.push(ContentBlock::Text {
                    text: String::new(),
                }),
                _ => content.push(ContentBlock::Text {
                    text: "summary".to_owned(),
                }),
            }
        } else if let Some(turn) = plan.get(index) {
            tokens = turn.tokens;
            if let Some(text) = turn.text {
                content.push(ContentBlock::Text {
                    text: text.to_owned(),
                });
            }
            for (i, c) in turn.calls.iter().enumerate() {
                let (name, input) = match c {
                    Call::Look => ("Look", json!({})),
                    Call::Poke => ("Poke", json!({})),
                    Call::Unknown => ("Nope", json!({"x": 1})),
                    Call::Find => ("FindTool", json!({"query": "select:mcp__db__query"})),
                    Call::Fork => ("Task", json!({"description": "d", "prompt": "p"})),
                    Call::Typed(t) => (
                        "Task",
                        json!({"description": "d", "prompt": "p", "subagent_type": t}),
                    ),
                };
                content.push(ContentBlock::ToolUse {
                    id: format!("c{}_{i}", request.origin.turn),
                    name: name.to_owned(),
                    input,
                });
            }
        } else {
            content.push(ContentBlock::Text {
                text: "done".to_owned(),
            });
        }
        let stop_reason = if content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
        {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        };
        let response = ModelResponse {
            content,
            stop_reason,
            usage: Usage {
                input_tokens: tokens,
                output_tokens: 1,
                ..Usage::default()
            },
        };
        futures_util::stream::iter([Ok(ModelEvent::Completed(response))]).boxed()
    }
}

fn tool(name: &str, read_only: bool, origin: ToolOrigin) -> Arc<ToolDefinition> {
    Arc::new(
        ToolDefinition::new(name.parse().unwrap(), format!("{name} tool"), origin)
            .with_annotations(Annotations {
                read_only,
                ..Annotations::default()
            }),
    )
}

#[allow(clippy::too_many_arguments)]
fn check(
    root: Vec<Turn>,
    sub: Vec<Turn>,
    summary: u8,
    max_turns: u32,
    tokens: u64,
    tool_calls: u32,
    looper_turns: u32,
    queries: usize,
) {
    // Only custom tools run: no file is written.
    let dir = std::env::temp_dir();
    let provider = Arc::new(Planned {
        plans: [("root".to_owned(), root), ("sub".to_owned(), sub)]
            .into_iter()
            .collect(),
        summary,
        requests: Mutex::new(Vec::new()),
    });
    let look = tool("Look", true, ToolOrigin::Custom);
    let poke = tool("Poke", false, ToolOrigin::Custom);
    let db = tool(
        "mcp__db__query",
        true,
        ToolOrigin::Connection {
            server: "db".parse().unwrap(),
        },
    );
    let settings = RuntimeSettings {
        model: "m".to_owned(),
        cwd: dir.clone(),
        env: BTreeMap::new(),
    };
    let runtime = RuntimeEnvironment::new(
        Arc::clone(&provider) as Arc<dyn ModelProvider>,
        settings,
        BuiltinTools::new(dir.join("zr-history-property-cron.json")),
    )
    .with_tool(Arc::clone(&look), Arc::new(Echo))
    .with_tool(Arc::clone(&poke), Arc::new(Echo))
    .with_tool(Arc::clone(&db), Arc::new(Echo));
    let sub_agent = |name: &str| {
        zr_caps::AgentDefinition::new(name.parse().unwrap(), "d", "p")
            .with_type(AgentType::GeneralPurpose)
    };
    let mut frugal = sub_agent("frugal");
    frugal.budget.tokens = Some(tokens);
    let mut counted = sub_agent("counted");
    counted.budget.tool_calls = Some(tool_calls);
    let mut looper = sub_agent("looper");
    looper.max_turns = Some(looper_turns);
    let mut config = AgentConfig::new("root")
        .with_sub_agent(frugal)
        .with_sub_agent(counted)
        .with_sub_agent(looper);
    config.max_turns = max_turns;
    config.options.custom_tools = vec![look, poke];
    config.options.mcp_tools = vec![db];
    config.capabilities = AgentCapabilities::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let agent = Agent::new(Arc::new(runtime), config);
        for q in 0..queries {
            agent.prompt(format!("query {q}")).await.unwrap();
        }
        let history: Vec<Message> = agent.history();
        assert_valid(&history, "the root's history");
    });
    for r in provider.requests.lock().unwrap().iter() {
        assert_valid(
            &r.messages,
            &format!("request of {} turn {}", r.origin.agent, r.origin.turn),
        );
    }
}

proptest! {
    #[test]
    fn every_conversation_stays_valid(
        root in proptest::collection::vec(turn(), 0..5),
        sub in proptest::collection::vec(turn(), 0..4),
        summary in 0u8..3,
        max_turns in 0u32..5,
        tokens in 0u64..500,
        tool_calls in 0u32..4,
        looper_turns in 1u32..3,
        queries in 1usize..3,
    ) {
        check(root, sub, summary, max_turns, tokens, tool_calls, looper_turns, queries);
    }
}
