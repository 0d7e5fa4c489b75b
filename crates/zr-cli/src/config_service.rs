//! The service behind the `Config` tool: reads and changes a short list of
//! `zr.toml` settings that are safe to change from a session.
//!
//! Safe means a change can neither widen what an agent may do nor send
//! anything somewhere new: limits, compaction, the listing size, the
//! result count and the model name (same provider, key and address).
//! Permissions, tools, policy, hooks, MCP servers, the provider, its
//! address and key variable, the system prompt and the search backend are
//! not settable: a prompt-injected model could otherwise grant itself
//! tools, lift its limits' safety rails or redirect traffic and keys.
//!
//! A change is written into `zr.toml` at once (comments and layout kept,
//! the file replaced atomically) and takes effect at the next run.

use std::path::PathBuf;

use serde_json::Value;
use toml_edit::DocumentMut;
use zr_engine::AgentConfig;
use zr_tools::{ConfigKind, ConfigService, ConfigSetting, ServiceError};
use zr_types::BoxFuture;

use crate::project::{CONFIG_FILE, Project};

/// One settable key: its type, the least value for numbers, the default.
struct Key {
    key: &'static str,
    kind: fn() -> ConfigKind,
    /// For integers: the smallest and largest value allowed.
    range: (i64, i64),
    what: &'static str,
}

const KEYS: &[Key] = &[
    Key {
        key: "model.name",
        kind: || ConfigKind::String,
        range: (0, 0),
        what: "the model of the next runs (same provider and key)",
    },
    Key {
        key: "agent.max_turns",
        kind: || ConfigKind::Integer,
        range: (1, 10_000),
        what: "the root's turn limit",
    },
    Key {
        key: "subagents.max_concurrent",
        kind: || ConfigKind::Integer,
        range: (1, 10),
        what: "subagents of one call running at once",
    },
    Key {
        key: "subagents.timeout_secs",
        kind: || ConfigKind::Integer,
        range: (1, 86_400),
        what: "seconds one Task or MultiTask call may take",
    },
    Key {
        key: "subagents.progress_interval_secs",
        kind: || ConfigKind::Integer,
        range: (0, 86_400),
        what: "seconds between progress summaries of background agents (0: off)",
    },
    Key {
        key: "compaction.enabled",
        kind: || ConfigKind::Boolean,
        range: (0, 0),
        what: "whether long histories are summarised",
    },
    Key {
        key: "compaction.threshold",
        kind: || ConfigKind::Integer,
        range: (1_000, 10_000_000),
        what: "compact above this many tokens",
    },
    Key {
        key: "subagents.listing_chars",
        kind: || ConfigKind::Integer,
        range: (0, 100_000),
        what: "characters of the subagent type listing in the Task tool",
    },
    Key {
        key: "skills.listing_chars",
        kind: || ConfigKind::Integer,
        range: (0, 100_000),
        what: "characters of the skill listing in each agent's Skill tool",
    },
    Key {
        key: "web_search.max_results",
        kind: || ConfigKind::Integer,
        range: (1, 20),
        what: "results per WebSearch",
    },
];

/// `Config` over the project's `zr.toml`.
#[derive(Debug)]
pub(crate) struct ProjectConfig {
    path: PathBuf,
}

impl ProjectConfig {
    pub(crate) fn new(project: &Project) -> Self {
        Self {
            path: project.root.join(CONFIG_FILE),
        }
    }

    fn document(&self) -> Result<DocumentMut, ServiceError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(failed(e)),
        };
        text.parse::<DocumentMut>().map_err(failed)
    }

    fn read(&self, key: &str) -> Result<Value, ServiceError> {
        let doc = self.document()?;
        let (table, leaf) = split(key)?;
        let written = doc
            .get(table)
            .and_then(|t| t.get(leaf))
            .and_then(toml_edit::Item::as_value)
            .map(|v| match v {
                toml_edit::Value::String(s) => Value::from(s.value().as_str()),
                toml_edit::Value::Integer(i) => Value::from(*i.value()),
                toml_edit::Value::Boolean(b) => Value::from(*b.value()),
                other => Value::from(other.to_string().trim()),
            });
        Ok(written.unwrap_or_else(|| default_of(key)))
    }

    fn write(&self, key: &str, value: &Value) -> Result<(), ServiceError> {
        let spec = spec(key)?;
        let item = match value {
            Value::Bool(b) => toml_edit::value(*b),
            Value::String(s) => toml_edit::value(s.as_str()),
            Value::Number(n) => {
                let (lo, hi) = spec.range;
                match n.as_i64().filter(|i| (lo..=hi).contains(i)) {
                    Some(i) => toml_edit::value(i),
                    None => {
                        return Err(ServiceError::WrongType {
                            key: key.to_owned(),
                            expected: format!("a whole number from {lo} to {hi}"),
                        });
                    }
                }
            }
            _ => {
                return Err(ServiceError::WrongType {
                    key: key.to_owned(),
                    expected: (spec.kind)().to_string(),
                });
            }
        };
        let mut doc = self.document()?;
        let (table, leaf) = split(key)?;
        if !doc.contains_table(table) {
            doc.insert(table, toml_edit::table());
        }
        // A value written before keeps its comments and spacing.
        let mut item = item;
        if let (Some(old), Some(new)) = (
            doc[table].get(leaf).and_then(toml_edit::Item::as_value),
            item.as_value_mut(),
        ) {
            *new.decor_mut() = old.decor().clone();
        }
        doc[table][leaf] = item;
        let tmp = self.path.with_extension("toml.zr-tmp");
        std::fs::write(&tmp, doc.to_string()).map_err(failed)?;
        std::fs::rename(&tmp, &self.path).map_err(failed)
    }
}

impl ConfigService for ProjectConfig {
    fn settings(&self) -> Vec<ConfigSetting> {
        KEYS.iter()
            .map(|k| ConfigSetting {
                key: k.key.to_owned(),
                kind: (k.kind)(),
                description: format!(
                    "{} (written to zr.toml; takes effect at the next run)",
                    k.what
                ),
            })
            .collect()
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Value, ServiceError>> {
        Box::pin(async move { self.read(key) })
    }

    fn set<'a>(&'a self, key: &'a str, value: Value) -> BoxFuture<'a, Result<(), ServiceError>> {
        Box::pin(async move { self.write(key, &value) })
    }
}

fn spec(key: &str) -> Result<&'static Key, ServiceError> {
    KEYS.iter()
        .find(|k| k.key == key)
        .ok_or_else(|| ServiceError::UnknownKey {
            key: key.to_owned(),
        })
}

fn split(key: &str) -> Result<(&str, &str), ServiceError> {
    spec(key)?;
    key.split_once('.').ok_or_else(|| ServiceError::UnknownKey {
        key: key.to_owned(),
    })
}

/// The value a run uses when `zr.toml` does not set `key`.
fn default_of(key: &str) -> Value {
    let config = AgentConfig::new("");
    match key {
        "agent.max_turns" => Value::from(config.max_turns),
        "subagents.max_concurrent" => Value::from(config.subagent.max_concurrent),
        "subagents.timeout_secs" => Value::from(config.subagent.timeout.as_secs()),
        "subagents.progress_interval_secs" => {
            Value::from(config.subagent.progress_interval.map_or(0, |d| d.as_secs()))
        }
        "compaction.enabled" => Value::from(config.compaction.enabled),
        "compaction.threshold" => Value::from(config.compaction.threshold),
        "skills.listing_chars" => Value::from(config.skill_listing_chars),
        "subagents.listing_chars" => Value::from(config.type_listing_chars),
        "web_search.max_results" => Value::from(crate::services::DEFAULT_MAX_RESULTS),
        // model.name: the provider's default.
        _ => Value::Null,
    }
}

fn failed(e: impl std::error::Error + Send + Sync + 'static) -> ServiceError {
    ServiceError::Failed {
        service: "config",
        source: Box::new(e),
    }
}
