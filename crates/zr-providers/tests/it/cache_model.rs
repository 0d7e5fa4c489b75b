//! The loopback server's model of the Messages API's prompt cache
//! (`prompt_cache.rs`): what it charges for bodies it has and has not
//! seen, and that the Anthropic provider reads its charges as usage.

use std::sync::Arc;

use serde_json::{Value, json};
use zr_providers::ModelProvider;
use zr_types::Usage;

use crate::anthropic::provider;
use zr_test_support::fixture;
use zr_test_support::prompt_cache::{Charge, PromptCache, tokens};
use zr_test_support::replay::{Replay, Reply, collect, simple_request};

const MARK: &str = "ephemeral";

/// A tool of about `chars` / 4 tokens, marked as a breakpoint if `mark`.
fn tool(name: &str, chars: usize, mark: bool) -> Value {
    let mut tool =
        json!({"name": name, "description": "d".repeat(chars), "input_schema": {"type": "object"}});
    if mark {
        tool["cache_control"] = json!({"type": MARK});
    }
    tool
}

fn text(text: &str, mark: bool) -> Value {
    let mut block = json!({"type": "text", "text": text});
    if mark {
        block["cache_control"] = json!({"type": MARK});
    }
    block
}

/// A body with a large tool, a system block and one user message, each a
/// breakpoint, as the provider sends them (system before tools).
fn body(system: &str, user: &str) -> Value {
    json!({
        "model": "claude-test", "max_tokens": 100, "stream": true,
        "system": [text(system, true)],
        "tools": [tool("Big", 8_000, true)],
        "messages": [{"role": "user", "content": [text(user, true)]}]
    })
}

/// The tokens of the body's tool, system and message blocks.
fn parts(body: &Value) -> (u64, u64, u64) {
    let strip = |block: &Value| {
        let mut block = block.clone();
        block.as_object_mut().unwrap().remove("cache_control");
        tokens(&block)
    };
    (
        strip(&body["tools"][0]),
        strip(&body["system"][0]),
        strip(&body["messages"][0]["content"][0]),
    )
}

/// Looks `body` up and stores its entries, as the server does once the
/// answer begins.
fn send(cache: &mut PromptCache, body: &Value) -> Charge {
    let found = cache.look_up(body).unwrap();
    cache.store(&found);
    found.charge
}

#[test]
fn a_new_prefix_is_written_and_the_same_prefix_is_then_read() {
    let mut cache = PromptCache::anthropic();
    let first = body("You are terse.", "Part 1.");
    let (tool, system, user) = parts(&first);
    assert!(tool >= 1_024, "the tool alone is cacheable");
    let all = tool + system + user;
    assert_eq!(
        send(&mut cache, &first),
        Charge {
            input: 0,
            read: 0,
            write: all
        }
    );
    assert_eq!(
        send(&mut cache, &first),
        Charge {
            input: 0,
            read: all,
            write: 0
        }
    );
    // Another task: the tools and the system are read, the task written.
    let second = body("You are terse.", "Part 2.");
    assert_eq!(
        send(&mut cache, &second),
        Charge {
            input: 0,
            read: tool + system,
            write: user
        }
    );
}

#[test]
fn tools_come_before_system_whatever_the_bodys_order() {
    let mut cache = PromptCache::anthropic();
    send(&mut cache, &body("You are terse.", "Part 1."));
    // Another system prompt: the system comes first in the body, but the
    // API reads tools first, so the tools' entry is still read.
    let other = body("You are the checker.", "Part 1.");
    let (tool, system, user) = parts(&other);
    assert_eq!(
        send(&mut cache, &other),
        Charge {
            input: 0,
            read: tool,
            write: system + user
        }
    );
    // Other tools: nothing is read.
    let mut tools = body("You are terse.", "Part 1.");
    tools["tools"][0]["name"] = json!("Other");
    assert_eq!(send(&mut cache, &tools).read, 0);
}

#[test]
fn tool_choice_invalidates_the_messages_only() {
    let mut cache = PromptCache::anthropic();
    let first = body("You are terse.", "Part 1.");
    send(&mut cache, &first);
    let mut forced = first.clone();
    forced["tool_choice"] = json!({"type": "tool", "name": "Big"});
    let (tool, system, user) = parts(&first);
    assert_eq!(
        send(&mut cache, &forced),
        Charge {
            input: 0,
            read: tool + system,
            write: user
        }
    );
}

#[test]
fn a_prefix_under_the_minimum_is_plain_input() {
    let mut cache = PromptCache::anthropic();
    let mut small = body("You are terse.", "Part 1.");
    small["tools"] = json!([tool("Small", 40, true)]);
    let (tool, system, user) = parts(&small);
    let charge = send(&mut cache, &small);
    assert_eq!(
        charge,
        Charge {
            input: tool + system + user,
            read: 0,
            write: 0
        }
    );
    assert_eq!(send(&mut cache, &small), charge, "nothing was stored");
}

#[test]
fn a_stored_prefix_is_found_at_most_twenty_blocks_before_a_breakpoint() {
    let turns = |n: usize| {
        let mut messages = vec![json!({"role": "user", "content": [text("Start.", false)]})];
        for i in 0..n {
            messages.push(json!({"role": "assistant", "content": [text(&format!("a{i}"), false)]}));
            messages.push(json!({"role": "user", "content": [text(&format!("u{i}"), false)]}));
        }
        let mut body = body("You are terse.", "Start.");
        body["messages"] = json!(messages);
        let last = body["messages"].as_array().unwrap().len() - 1;
        body["messages"][last]["content"][0]["cache_control"] = json!({"type": MARK});
        body["system"][0]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        body["tools"][0]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        body
    };
    let mut cache = PromptCache::anthropic();
    let start = send(&mut cache, &turns(0));
    // 10 turns: the breakpoint is 20 blocks after the stored one.
    let near = cache.look_up(&turns(10)).unwrap().charge;
    assert_eq!(near.read, start.write);
    // 11 turns: 22 blocks after, past the look-back.
    let far = cache.look_up(&turns(11)).unwrap().charge;
    assert_eq!(far.read, 0);
}

#[test]
fn more_than_four_breakpoints_are_refused() {
    let mut body = body("You are terse.", "Part 1.");
    body["tools"] = json!([
        tool("A", 10, true),
        tool("B", 10, true),
        tool("C", 10, true)
    ]);
    let error = PromptCache::anthropic().look_up(&body).unwrap_err();
    assert!(error.contains("Found 5"), "{error}");
}

/// A request whose system prompt alone is cacheable.
fn large_request() -> zr_providers::ModelRequest {
    let mut request = simple_request("hi");
    request.system = format!("You are terse. {}", "Be brief. ".repeat(600)).into();
    request
}

#[tokio::test]
async fn the_server_reports_its_charges_as_the_answers_usage() {
    let text_reply = || Reply::sse(fixture::bytes("anthropic/text.sse"));
    let server = Replay::start_caching(
        vec![text_reply(), text_reply(), text_reply(), text_reply()],
        PromptCache::anthropic(),
    )
    .await;
    let provider = Arc::new(provider(&server, 1));
    // Two requests at once: neither finds the other's entry.
    let (a, b) = tokio::join!(
        collect(provider.stream(large_request())),
        collect(provider.stream(large_request()))
    );
    let (a, b) = (a.1.unwrap().usage, b.1.unwrap().usage);
    assert_eq!(a, b);
    assert!(
        a.cache_creation_input_tokens > 1_024 && a.cache_read_input_tokens == 0,
        "{a:?}"
    );
    // Then one after the other: the next reads what they wrote.
    let (_, c) = collect(provider.stream(large_request())).await;
    let c = c.unwrap().usage;
    assert_eq!(
        c,
        Usage {
            input_tokens: 0,
            output_tokens: 15,
            cache_read_input_tokens: a.cache_creation_input_tokens,
            cache_creation_input_tokens: 0,
        }
    );
    let charges: Vec<Option<Charge>> = server.requests().iter().map(|r| r.cache).collect();
    assert_eq!(charges.len(), 3);
    assert_eq!(
        charges[2],
        Some(Charge {
            input: 0,
            read: a.cache_creation_input_tokens,
            write: 0
        })
    );
}
