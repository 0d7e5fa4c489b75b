//! A 10-way MultiTask on the Anthropic wire reads one cached prefix: the
//! ten siblings' first request bodies are byte-identical up to their last
//! shared cache breakpoint, and the breakpoints are where the Messages
//! API counts them (system, the last tool, the end of a fork's shared
//! history, the last block; never more than four). The root and its
//! subagents talk to the loopback server that speaks the API's SSE
//! (`replay.rs`), which records every body (and, with
//! `ZR_CAPTURED_BODIES`, hands it to the SDK-type check).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, AgentConfig, AnthropicConfig, AnthropicProvider};

use crate::fork_cache::breakpoints;
use crate::support::{runtime_in, sub_agent};
use zr_test_support::replay::{Recorded, Replay, Reply, fast_retry};

/// The marker the provider writes at a breakpoint.
const MARK: &[u8] = br#""cache_control":{"type":"ephemeral"}"#;

/// Runs a root whose first answer is a MultiTask of `tasks`, each
/// subagent answering at once, and returns the recorded requests.
async fn fan_out(tasks: Vec<Value>, config: AgentConfig) -> Vec<Recorded> {
    let n = tasks.len();
    let mut replies = vec![Reply::anthropic(
        Some("Fanning out."),
        &[("toolu_multi", "MultiTask", json!({"tasks": tasks}))],
    )];
    replies.extend((0..n).map(|_| Reply::anthropic(Some("Done."), &[])));
    replies.push(Reply::anthropic(Some("All done."), &[]));
    let server = Replay::start(replies).await;
    let dir = tempfile::tempdir().unwrap();
    let mut provider = AnthropicConfig::new("test-key")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    provider.http.idle_timeout = Duration::from_secs(30);
    let provider = Arc::new(AnthropicProvider::new(provider).unwrap());
    let runtime = runtime_in(dir.path(), "claude-test", provider);
    let agent = Agent::new(runtime, config);
    let result = tokio::time::timeout(Duration::from_secs(120), agent.prompt("Fan out."))
        .await
        .expect("the query ends within two minutes")
        .unwrap();
    assert_eq!(result.output, "All done.");
    let requests = server.requests();
    assert_eq!(requests.len(), n + 2, "root, {n} subagents, root");
    requests
}

/// The bytes every body of `bodies` starts with.
fn common_prefix<'a>(bodies: &[&'a [u8]]) -> &'a [u8] {
    let first = bodies[0];
    let len = bodies
        .iter()
        .map(|b| b.iter().zip(first).take_while(|(x, y)| x == y).count())
        .min()
        .unwrap_or(0);
    &first[..len]
}

/// How many breakpoints `bytes` holds whole.
fn marks(bytes: &[u8]) -> usize {
    bytes.windows(MARK.len()).filter(|w| *w == MARK).count()
}

fn tasks(n: usize, subagent_type: Option<&str>) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut task = json!({"description": format!("part {i}"), "prompt": format!("Check part {i} of the code.")});
            if let Some(ty) = subagent_type {
                task["subagent_type"] = Value::from(ty);
            }
            task
        })
        .collect()
}

#[tokio::test]
async fn ten_siblings_of_one_type_send_one_prefix_up_to_the_last_tools_breakpoint() {
    let mut config = AgentConfig::new("You are the root.")
        .with_sub_agent(sub_agent("checker", zr_caps::AgentType::GeneralPurpose));
    config.subagent.max_concurrent = 10;
    let requests = fan_out(tasks(10, Some("checker")), config).await;
    let siblings: Vec<&Recorded> = requests[1..=10].iter().collect();
    for sibling in &siblings {
        let body = sibling.json();
        assert_eq!(body["system"][0]["text"], "You are the checker agent.");
        let tools = body["tools"].as_array().unwrap().len();
        assert_eq!(
            breakpoints(&body),
            vec![
                "/messages/0/content/0".to_owned(),
                "/system/0".to_owned(),
                format!("/tools/{}", tools - 1),
            ],
            "system, the last tool, the last block"
        );
    }
    let bodies: Vec<&[u8]> = siblings.iter().map(|r| r.body.as_slice()).collect();
    let shared = common_prefix(&bodies);
    // Everything up to the messages is shared: model, limits, system and
    // tools, with both of their breakpoints; the bodies part at the task.
    let messages = br#""messages":[{"role":"user","content":[{"type":"text","text":"Check part "#;
    assert!(
        shared.ends_with(messages),
        "the siblings part at the task's text: {}",
        String::from_utf8_lossy(&shared[shared.len().saturating_sub(120)..])
    );
    assert_eq!(marks(shared), 2, "system and the last tool are shared");
    let last = shared.windows(MARK.len()).rposition(|w| w == MARK).unwrap();
    assert!(
        shared[last..].starts_with(&[MARK, br#"}],"messages""#].concat()),
        "the last shared breakpoint closes the tools: {}",
        String::from_utf8_lossy(&shared[last..])
    );
}

#[tokio::test]
async fn ten_forks_send_their_parents_prefix_up_to_the_shared_historys_breakpoint() {
    let mut config = AgentConfig::new("You are the root.");
    config.subagent.max_concurrent = 10;
    let requests = fan_out(tasks(10, None), config).await;
    let parent = requests[0].json();
    let forks: Vec<&Recorded> = requests[1..=10].iter().collect();
    for fork in &forks {
        let body = fork.json();
        assert_eq!(body["system"], parent["system"]);
        assert_eq!(body["tools"], parent["tools"]);
        let tools = body["tools"].as_array().unwrap().len();
        // The root's prompt, its answer with the MultiTask call, then the
        // fork's task: the prompt is the history the parent's request sent.
        assert_eq!(body["messages"].as_array().unwrap().len(), 3);
        assert_eq!(
            breakpoints(&body),
            vec![
                "/messages/0/content/0".to_owned(),
                "/messages/2/content/1".to_owned(),
                "/system/0".to_owned(),
                format!("/tools/{}", tools - 1),
            ],
            "four, the API's limit"
        );
    }
    let bodies: Vec<&[u8]> = forks.iter().map(|r| r.body.as_slice()).collect();
    let shared = common_prefix(&bodies);
    assert_eq!(
        marks(shared),
        3,
        "system, the last tool and the parent's history"
    );
    // The parent's own request, without its closing `]}`, is the forks'
    // prefix: what it wrote to the cache, they read.
    let parent_bytes = &requests[0].body[..requests[0].body.len() - 2];
    assert!(shared.starts_with(parent_bytes));
}

/// The project's instructions end every system prompt: siblings of one
/// type still share their whole prefix up to the tools' breakpoint, and
/// forks still send their parent's bytes.
#[tokio::test]
async fn instructions_keep_siblings_and_forks_on_one_cached_prefix() {
    const INSTRUCTIONS: &str = "# Instructions\n\nContents of CLAUDE.md (project instructions, checked in):\n\nRun the tests.";
    let mut config = AgentConfig::new("You are the root.")
        .with_sub_agent(sub_agent("checker", zr_caps::AgentType::GeneralPurpose));
    config.subagent.max_concurrent = 10;
    config.instructions = Some(Arc::from(INSTRUCTIONS));
    let requests = fan_out(tasks(4, Some("checker")), config.clone()).await;
    assert_eq!(
        requests[0].json()["system"][0]["text"],
        format!("You are the root.\n\n{INSTRUCTIONS}")
    );
    let siblings: Vec<&[u8]> = requests[1..=4].iter().map(|r| r.body.as_slice()).collect();
    for sibling in &requests[1..=4] {
        assert_eq!(
            sibling.json()["system"][0]["text"],
            format!("You are the checker agent.\n\n{INSTRUCTIONS}")
        );
    }
    let shared = common_prefix(&siblings);
    assert_eq!(marks(shared), 2, "system and the last tool are shared");

    let requests = fan_out(tasks(4, None), config).await;
    let parent_bytes = &requests[0].body[..requests[0].body.len() - 2];
    for fork in &requests[1..=4] {
        assert!(
            fork.body.starts_with(parent_bytes),
            "a fork sends its parent's bytes"
        );
    }
}
