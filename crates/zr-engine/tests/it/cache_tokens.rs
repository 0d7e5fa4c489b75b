//! What a 10-way MultiTask reads from and writes to the Messages API's
//! prompt cache, per agent, as zr counts it (issue 39). The root and its
//! subagents talk to the loopback server playing the API's prompt cache
//! (`prompt_cache.rs`: tools, system, then messages; entries at
//! breakpoints of at least 1,024 tokens, readable once their writer's
//! answer has begun, 200 ms after it was sent; tokens as JSON bytes / 4):
//! every answer's usage is the server's charge for its request, and each
//! agent's usage is what zr summed from those answers. Each subagent
//! makes one Glob call, then answers: its second request reads its first.
//!
//! With `--nocapture` each test prints its rows of the table BENCHMARKS.md
//! holds and one `cache-tokens:` JSON line; `cargo xtask bench` runs them
//! one after another and reads both.

use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, AgentConfig, AnthropicConfig, AnthropicProvider, QueryOverrides};
use zr_types::Usage;

use crate::support::{finished, run, runtime_in, sub_agent};
use zr_test_support::prompt_cache::{Charge, PromptCache};
use zr_test_support::replay::{Recorded, Replay, Reply, fast_retry};

const N: usize = 10;

/// Who the ten siblings are, and how many run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FanOut {
    /// Ten subagents of one type, all at once (`max_concurrent` 10).
    TypedAtOnce,
    /// Ten subagents of one type, one after another (`max_concurrent` 1).
    TypedOneByOne,
    /// Ten forks of the root, all at once.
    ForksAtOnce,
}

impl FanOut {
    fn describe(self) -> &'static str {
        match self {
            Self::TypedAtOnce => "one type, all at once",
            Self::TypedOneByOne => "one type, one after another",
            Self::ForksAtOnce => "forks, all at once",
        }
    }

    fn at_once(self) -> bool {
        self != Self::TypedOneByOne
    }
}

/// What a fan-out's agents used, as zr counted it, and the server's
/// requests with its charges.
struct Outcome {
    root: Usage,
    /// By task index.
    subagents: Vec<Usage>,
    total: Usage,
    requests: Vec<Recorded>,
}

fn glob(i: usize) -> Reply {
    Reply::anthropic(
        None,
        &[(
            &format!("toolu_glob_{i}"),
            "Glob",
            json!({"pattern": "*.txt"}),
        )],
    )
}

async fn fan_out(kind: FanOut) -> Outcome {
    let tasks: Vec<Value> = (0..N)
        .map(|i| {
            let mut task = json!({"description": format!("part {i}"), "prompt": format!("Check part {i} of the code.")});
            if kind != FanOut::ForksAtOnce {
                task["subagent_type"] = json!("checker");
            }
            task
        })
        .collect();
    let mut replies = vec![Reply::anthropic(
        Some("Fanning out."),
        &[("toolu_multi", "MultiTask", json!({"tasks": tasks}))],
    )];
    // In arrival order: at once, the ten first requests come before any
    // second one (their answers are held 200 ms); one by one, each
    // subagent's two requests follow each other.
    if kind.at_once() {
        replies.extend((0..N).map(glob));
        replies.extend((0..N).map(|_| Reply::anthropic(Some("Done."), &[])));
    } else {
        for i in 0..N {
            replies.extend([glob(i), Reply::anthropic(Some("Done."), &[])]);
        }
    }
    replies.push(Reply::anthropic(Some("All done."), &[]));
    let server = Replay::start_caching(replies, PromptCache::anthropic()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut provider = AnthropicConfig::new("test-key")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    provider.http.idle_timeout = Duration::from_secs(30);
    let provider = std::sync::Arc::new(AnthropicProvider::new(provider).unwrap());
    let mut config = AgentConfig::new("You are the root.")
        .with_sub_agent(sub_agent("checker", zr_caps::AgentType::GeneralPurpose));
    config.subagent.max_concurrent = if kind.at_once() { N } else { 1 };
    let agent = Agent::new(runtime_in(dir.path(), "claude-test", provider), config);
    let (events, result) = run(agent.query("Fan out.", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.output, "All done.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2 + 2 * N, "root, two per subagent, root");
    if kind.at_once() {
        // The ten first requests were all sent before the first answer
        // began: what the figures below rely on.
        let spread = requests[N].at - requests[1].at;
        assert!(
            spread < PromptCache::anthropic().first_token_delay,
            "the siblings' first requests were {spread:?} apart, more than the simulated time to first token: the machine is too slow for this fan-out's figures"
        );
    }
    let mut done = finished(&events);
    done.sort_by_key(|r| r.index);
    assert_eq!(done.len(), N);
    assert!(
        done.iter().all(|r| r.turns == 2),
        "each subagent made two requests"
    );
    Outcome {
        root: result.usage,
        subagents: done.iter().map(|r| r.usage).collect(),
        total: result.total_usage,
        requests,
    }
}

/// The server's charges, one per request.
fn charges(requests: &[Recorded]) -> Vec<Charge> {
    requests
        .iter()
        .map(|r| r.cache.expect("every request was looked up"))
        .collect()
}

/// The input figures of `usage` as a charge.
fn charge_of(usage: Usage) -> Charge {
    Charge {
        input: usage.input_tokens,
        read: usage.cache_read_input_tokens,
        write: usage.cache_creation_input_tokens,
    }
}

fn sum(charges: impl IntoIterator<Item = Charge>) -> Charge {
    charges.into_iter().fold(Charge::default(), |a, b| Charge {
        input: a.input + b.input,
        read: a.read + b.read,
        write: a.write + b.write,
    })
}

/// A table row (fan-out, agent, requests, input, cache write, cache
/// read; `cargo xtask bench` prints the header).
fn row(kind: &str, who: &str, requests: usize, c: Charge) -> String {
    format!(
        "| {kind} | {who} | {requests} | {} | {} | {} |\n",
        c.input, c.write, c.read
    )
}

/// Checks the figures zr counted against the server's charges; returns
/// the fan-out's table rows and its `cache-tokens:` line, for the test
/// to print.
fn report(kind: FanOut, outcome: &Outcome) -> String {
    let all = charges(&outcome.requests);
    assert_eq!(
        charge_of(outcome.total),
        sum(all.iter().copied()),
        "zr counted every token the server charged"
    );
    let root = charge_of(outcome.root);
    let first = charge_of(outcome.subagents[0]);
    let later = charge_of(outcome.subagents[1]);
    assert!(
        outcome.subagents[1..]
            .iter()
            .all(|u| charge_of(*u) == later),
        "every later subagent used the same: {:?}",
        outcome.subagents
    );
    let per = sum(outcome.subagents.iter().copied().map(charge_of));
    let mut rows = row(kind.describe(), "root", 2, root);
    if first == later {
        rows.push_str(&row("", "each subagent", 2, first));
    } else {
        rows.push_str(&row("", "first subagent", 2, first));
        rows.push_str(&row("", "each later subagent", 2, later));
    }
    rows.push_str(&row("", "10 subagents", 2 * N, per));
    rows.push_str(&row("", "all 11 agents", 2 + 2 * N, sum(all)));
    let line = json!({
        "fan_out": kind.describe(),
        "subagent_write": per.write / N as u64,
        "subagent_read": per.read / N as u64,
        "subagent_input": per.input / N as u64,
        "first_write": first.write,
        "later_write": later.write,
        "later_read": later.read,
        "root_write": root.write,
        "root_read": root.read,
    });
    rows.push_str(&format!("cache-tokens: {line}\n"));
    rows
}

#[tokio::test]
async fn ten_siblings_of_one_type_at_once_each_write_their_prefix() {
    let outcome = fan_out(FanOut::TypedAtOnce).await;
    let rows = report(FanOut::TypedAtOnce, &outcome);
    let charges = charges(&outcome.requests);
    // Sent together, no first request finds another's entry: each writes
    // the tools, the system prompt and its task.
    for first in &charges[1..=N] {
        assert_eq!(first.read, 0, "{first:?}");
        assert_eq!(first.write, charges[1].write);
        assert!(first.write > 1_024, "{first:?}");
    }
    // Each second request reads its own first one.
    for second in &charges[N + 1..=2 * N] {
        assert_eq!(second.read, charges[1].write);
    }
    let each = charge_of(outcome.subagents[0]);
    assert_eq!(each.read, charges[1].write);
    // A line of its own: libtest may have begun one.
    eprintln!("\n{rows}");
}

#[tokio::test]
async fn ten_siblings_of_one_type_one_by_one_read_the_first_ones_prefix() {
    let outcome = fan_out(FanOut::TypedOneByOne).await;
    let rows = report(FanOut::TypedOneByOne, &outcome);
    let first = charge_of(outcome.subagents[0]);
    let later = charge_of(outcome.subagents[1]);
    // The later ones read the tools and the system prompt the first one
    // wrote, and write only their task and what followed.
    let shared = first.write - later.write;
    assert!(shared > 1_024, "{first:?} {later:?}");
    assert_eq!(later.read - first.read, shared);
    let charges = charges(&outcome.requests);
    for i in 1..N {
        let first_request = charges[1 + 2 * i];
        assert_eq!(
            first_request.read, shared,
            "subagent {i}: {first_request:?}"
        );
    }
    // A line of its own: libtest may have begun one.
    eprintln!("\n{rows}");
}

#[tokio::test]
async fn ten_forks_at_once_read_their_parents_prefix() {
    let outcome = fan_out(FanOut::ForksAtOnce).await;
    let rows = report(FanOut::ForksAtOnce, &outcome);
    let charges = charges(&outcome.requests);
    // The root's first request wrote its tools, system and prompt; every
    // fork's first request reads all of it, and writes the root's
    // MultiTask call and its own task.
    assert_eq!(charges[0].input, 0);
    for first in &charges[1..=N] {
        assert_eq!(first.read, charges[0].write, "{first:?}");
        assert!(first.write > 0 && first.write < first.read, "{first:?}");
    }
    // A line of its own: libtest may have begun one.
    eprintln!("\n{rows}");
}
