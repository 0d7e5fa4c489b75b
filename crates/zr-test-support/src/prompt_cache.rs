//! A model of the Anthropic Messages API's prompt cache, for the loopback
//! server (`replay.rs`, [`Replay::start_caching`](crate::replay::Replay::start_caching)):
//! from the bodies it has seen, it works out each request's
//! `cache_read_input_tokens`, `cache_creation_input_tokens` and
//! `input_tokens` as the API reports them, deterministically, so that
//! tests and `cargo xtask bench` can count what a fan-out reads and
//! writes without a real model. The rules, as Anthropic's prompt-caching
//! guide states them:
//!
//! - The prompt is read in the API's order, not the body's: the tools,
//!   then the system blocks, then each message's content blocks. A prefix
//!   is the model, the blocks up to one of them, and for message blocks
//!   also `tool_choice` and `thinking` (changing them invalidates the
//!   messages' cache, not the tools' or the system's).
//! - An entry is written only at a breakpoint (a block with
//!   `cache_control`), at most 4 a request (more is refused with 400, as
//!   the API does), and only when its prefix holds at least
//!   [`PromptCache::min_tokens`] (1,024, Claude Sonnet's and Opus's
//!   minimum); a shorter prefix is processed as plain input.
//! - A request reads the longest stored prefix that ends at one of its
//!   breakpoints or at most [`PromptCache::lookback`] (20) blocks before
//!   one; it writes every token from there to its last cacheable
//!   breakpoint; the rest is `input_tokens`.
//! - An entry can be read once the response of the request that wrote it
//!   has begun: requests sent at the same moment all miss. The server
//!   holds each response [`PromptCache::first_token_delay`] (200 ms, a
//!   time to first token) before it stores the request's entries and
//!   answers, so that requests sent together, as a MultiTask's siblings
//!   are, find each other's entries missing, whatever the machine's
//!   speed, and requests sent one after another find them.
//!
//! Not modelled: the entries' lifetime (5 minutes; a test is shorter),
//! `ttl`, automatic caching by a top-level `cache_control` (zr sets
//! breakpoints itself), images and documents. Tokens are an estimate,
//! each block's JSON (without `cache_control`) in bytes / 4, rounded up:
//! the same estimate zr's `request_size` and `zr resolve` use, not a
//! tokenizer's count. Figures compare layouts; they are not a bill.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use serde_json::{Value, json};

/// What the API would report for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Charge {
    /// Tokens neither read from nor written to the cache.
    pub input: u64,
    /// `cache_read_input_tokens`.
    pub read: u64,
    /// `cache_creation_input_tokens`.
    pub write: u64,
}

/// A request's charge and the entries it stores once its response has
/// begun.
#[derive(Debug, Clone)]
pub struct Lookup {
    pub charge: Charge,
    writes: Vec<u64>,
}

/// The stored prefixes (hashes of model and blocks) and the rules' limits.
#[derive(Debug, Clone)]
pub struct PromptCache {
    entries: HashSet<u64>,
    /// The shortest prefix, in tokens, that is stored.
    pub min_tokens: u64,
    /// How many blocks before a breakpoint a stored prefix is looked for.
    pub lookback: usize,
    /// How long the server holds a response before it stores the
    /// request's entries and begins to answer.
    pub first_token_delay: Duration,
}

/// The estimate of a block's tokens: its JSON bytes / 4, rounded up.
pub fn tokens(block: &Value) -> u64 {
    let bytes = serde_json::to_vec(block).expect("JSON").len();
    u64::try_from(bytes.div_ceil(4)).expect("a small block")
}

/// One block of the prompt, in the API's order.
struct Block {
    tokens: u64,
    breakpoint: bool,
    /// The hash of the prefix that ends with this block.
    prefix: u64,
}

/// `value` without its `cache_control`, and whether it had one.
fn strip(value: &Value) -> (Value, bool) {
    let mut value = value.clone();
    let marked = value
        .as_object_mut()
        .and_then(|object| object.remove("cache_control"))
        .is_some();
    (value, marked)
}

/// A string as the text block the API reads it as.
fn text_block(value: &Value) -> Value {
    match value {
        Value::String(text) => json!({"type": "text", "text": text}),
        other => other.clone(),
    }
}

/// The blocks of `body`: tools, system, then messages.
fn blocks(body: &Value) -> Vec<Block> {
    let mut hasher = DefaultHasher::new();
    body["model"].to_string().hash(&mut hasher);
    let mut out = Vec::new();
    let mut push = |hasher: &mut DefaultHasher, role: &str, value: &Value| {
        let (block, breakpoint) = strip(value);
        role.hash(hasher);
        block.to_string().hash(hasher);
        out.push(Block {
            tokens: tokens(&block),
            breakpoint,
            prefix: hasher.finish(),
        });
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(&mut hasher, "tool", tool);
    }
    match &body["system"] {
        Value::Array(system) => {
            for block in system {
                push(&mut hasher, "system", block);
            }
        }
        Value::Null => {}
        text => push(&mut hasher, "system", &text_block(text)),
    }
    body["tool_choice"].to_string().hash(&mut hasher);
    body["thinking"].to_string().hash(&mut hasher);
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("?");
        match &message["content"] {
            Value::Array(content) => {
                for block in content {
                    push(&mut hasher, role, block);
                }
            }
            text => push(&mut hasher, role, &text_block(text)),
        }
    }
    out
}

impl PromptCache {
    /// An empty cache with the Messages API's limits (Claude Sonnet's
    /// minimum) and a 200 ms time to first token.
    pub fn anthropic() -> Self {
        Self {
            entries: HashSet::new(),
            min_tokens: 1_024,
            lookback: 20,
            first_token_delay: Duration::from_millis(200),
        }
    }

    /// What `body` reads and writes against the entries stored so far;
    /// the API's refusal when it has more than 4 breakpoints.
    pub fn look_up(&self, body: &Value) -> Result<Lookup, String> {
        let blocks = blocks(body);
        let mut cumulative = Vec::with_capacity(blocks.len());
        let mut sum = 0;
        for block in &blocks {
            sum += block.tokens;
            cumulative.push(sum);
        }
        let breakpoints: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].breakpoint)
            .collect();
        if breakpoints.len() > 4 {
            return Err(format!(
                "A maximum of 4 blocks with cache_control may be provided. Found {}.",
                breakpoints.len()
            ));
        }
        let hit = breakpoints
            .iter()
            .filter_map(|&at| {
                (at.saturating_sub(self.lookback)..=at)
                    .rev()
                    .find(|&j| self.entries.contains(&blocks[j].prefix))
            })
            .max();
        let read = hit.map_or(0, |j| cumulative[j]);
        let cacheable: Vec<usize> = breakpoints
            .iter()
            .copied()
            .filter(|&at| cumulative[at] >= self.min_tokens && hit.is_none_or(|j| at > j))
            .collect();
        let write = cacheable.last().map_or(0, |&at| cumulative[at] - read);
        Ok(Lookup {
            charge: Charge {
                input: sum - read - write,
                read,
                write,
            },
            writes: cacheable.iter().map(|&at| blocks[at].prefix).collect(),
        })
    }

    /// Stores the entries `lookup` writes.
    pub fn store(&mut self, lookup: &Lookup) {
        self.entries.extend(&lookup.writes);
    }
}

/// `sse` (a Messages API stream) with `charge` as the input figures of
/// its `message_start` event's usage.
pub fn with_usage(sse: &[u8], charge: Charge) -> Vec<u8> {
    let text = String::from_utf8_lossy(sse);
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            let Some(data) = line.strip_prefix("data: ") else {
                return line.to_owned();
            };
            let Ok(mut event) = serde_json::from_str::<Value>(data) else {
                return line.to_owned();
            };
            if event["type"] != "message_start" {
                return line.to_owned();
            }
            let usage = &mut event["message"]["usage"];
            usage["input_tokens"] = json!(charge.input);
            usage["cache_creation_input_tokens"] = json!(charge.write);
            usage["cache_read_input_tokens"] = json!(charge.read);
            format!("data: {event}")
        })
        .collect();
    lines.join("\n").into_bytes()
}
