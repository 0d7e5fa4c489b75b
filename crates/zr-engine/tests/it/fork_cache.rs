//! A fork's requests repeat its parent's prefix byte for byte, with the
//! Anthropic provider's cache breakpoints at the shared prefix's end: the
//! root and its fork talk to a loopback server speaking the Messages API's
//! SSE, which records every body.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, AgentConfig, AnthropicConfig, AnthropicProvider};

use crate::support::runtime_in;
use zr_test_support::replay::{Replay, Reply, fast_retry};

/// Where the `cache_control` breakpoints of a request body are, as JSON
/// pointers, sorted.
pub(crate) fn breakpoints(body: &Value) -> Vec<String> {
    fn walk(value: &Value, at: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if map.get("cache_control") == Some(&json!({"type": "ephemeral"})) {
                    out.push(at.to_owned());
                }
                for (key, value) in map {
                    walk(value, &format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    walk(value, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, "", &mut out);
    out.sort();
    out
}

#[tokio::test]
async fn a_forks_first_request_starts_with_its_parents_last_request_and_reads_it_from_cache() {
    let server = Replay::start(vec![
        // The root looks around first, so that the shared prefix holds a
        // tool call and its result.
        Reply::anthropic(
            Some("Looking first."),
            &[("toolu_glob", "Glob", json!({"pattern": "*.txt"}))],
        ),
        // Then it forks.
        Reply::anthropic(
            None,
            &[(
                "toolu_task",
                "Task",
                json!({"description": "count", "prompt": "Count the notes."}),
            )],
        ),
        // The fork looks too, then answers.
        Reply::anthropic(
            None,
            &[("toolu_fork_glob", "Glob", json!({"pattern": "*.txt"}))],
        ),
        Reply::anthropic(Some("There is one note."), &[]),
        Reply::anthropic(Some("The fork counted one note."), &[]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "a note").unwrap();
    let mut config = AnthropicConfig::new("test-key")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    config.http.idle_timeout = Duration::from_secs(30);
    let provider = Arc::new(AnthropicProvider::new(config).unwrap());
    let runtime = runtime_in(dir.path(), "claude-test", provider);
    let agent = Agent::new(runtime, AgentConfig::new("You are the root."));
    let result = tokio::time::timeout(Duration::from_secs(60), agent.prompt("Count the notes."))
        .await
        .expect("the query ends within a minute")
        .unwrap();
    assert_eq!(result.output, "The fork counted one note.");

    let requests = server.requests();
    assert_eq!(requests.len(), 5, "root, root, fork, fork, root");
    let (parent, fork) = (&requests[1], &requests[2]);
    let (parent_json, fork_json) = (parent.json(), fork.json());
    assert_eq!(parent_json["messages"].as_array().unwrap().len(), 3);
    assert_eq!(fork_json["messages"].as_array().unwrap().len(), 5);
    assert!(
        fork_json["messages"][4]["content"]
            .to_string()
            .contains("Count the notes."),
        "the fork's last message is its task: {}",
        fork_json["messages"][4]
    );

    // The parent's last request ends with its messages: `...}]}`. Its
    // bytes without the closing `]}` are the shared prefix (model, limits,
    // system, tools and the three messages); the fork's body starts with
    // exactly those bytes and continues with the parent's tool call.
    assert!(parent.body.ends_with(b"}]}"), "messages come last");
    let shared = &parent.body[..parent.body.len() - 2];
    let same = fork
        .body
        .iter()
        .zip(shared)
        .take_while(|(a, b)| a == b)
        .count();
    assert_eq!(
        same,
        shared.len(),
        "the fork's body departs from its parent's prefix at byte {same}: parent {:?}, fork {:?}",
        String::from_utf8_lossy(&shared[same.saturating_sub(80)..(same + 80).min(shared.len())]),
        String::from_utf8_lossy(
            &fork.body[same.saturating_sub(80)..(same + 80).min(fork.body.len())]
        ),
    );
    assert!(
        fork.body[shared.len()..].starts_with(
            br#",{"role":"assistant","content":[{"type":"tool_use","id":"toolu_task""#
        ),
        "{}",
        String::from_utf8_lossy(&fork.body[shared.len()..])
    );

    // Breakpoints: system, last tool, the shared prefix's end, the last
    // block; at most four, as the API allows.
    let tools = fork_json["tools"].as_array().unwrap().len();
    assert_eq!(
        breakpoints(&fork_json),
        vec![
            "/messages/2/content/0".to_owned(),
            "/messages/4/content/1".to_owned(),
            "/system/0".to_owned(),
            format!("/tools/{}", tools - 1),
        ]
    );
    assert_eq!(
        breakpoints(&parent_json),
        vec![
            "/messages/2/content/0".to_owned(),
            "/system/0".to_owned(),
            format!("/tools/{}", tools - 1),
        ]
    );
    // The fork's next request still starts with the shared prefix and
    // keeps its breakpoint.
    let next = &requests[3];
    assert!(next.body.starts_with(shared));
    assert_eq!(
        breakpoints(&next.json()),
        vec![
            "/messages/2/content/0".to_owned(),
            "/messages/6/content/0".to_owned(),
            "/system/0".to_owned(),
            format!("/tools/{}", tools - 1),
        ]
    );
    // The root's own requests keep three: nothing is shared with another
    // agent's request.
    let last = requests[4].json();
    assert!(
        last["messages"][4]
            .to_string()
            .contains("There is one note."),
        "the root got the fork's conclusion: {}",
        last["messages"][4]
    );
    assert_eq!(breakpoints(&last).len(), 3);
}
