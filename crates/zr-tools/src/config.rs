//! `Config`: reads and changes settable keys of the runtime configuration
//! through a host service, with type checks.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use zr_types::{BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::error::ServiceError;
use crate::toolkit::{Builtin, Hints, tool_failed};

/// The type of a configuration value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigKind {
    /// `true` or `false`.
    Boolean,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// Text.
    String,
    /// One of these strings.
    Choice(Vec<String>),
}

impl ConfigKind {
    /// Whether `value` has this type.
    #[must_use]
    pub fn accepts(&self, value: &Value) -> bool {
        match self {
            Self::Boolean => value.is_boolean(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Number => value.is_number(),
            Self::String => value.is_string(),
            Self::Choice(options) => value
                .as_str()
                .is_some_and(|s| options.iter().any(|o| o == s)),
        }
    }
}

impl fmt::Display for ConfigKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Boolean => f.write_str("a boolean"),
            Self::Integer => f.write_str("an integer"),
            Self::Number => f.write_str("a number"),
            Self::String => f.write_str("a string"),
            Self::Choice(options) => write!(f, "one of: {}", options.join(", ")),
        }
    }
}

/// One settable key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSetting {
    /// The key, e.g. `model` or `subagent.max_concurrent`.
    pub key: String,
    /// Its type.
    pub kind: ConfigKind,
    /// What it does.
    pub description: String,
}

/// The host's runtime configuration.
pub trait ConfigService: Send + Sync + fmt::Debug {
    /// The keys the model may read and set.
    fn settings(&self) -> Vec<ConfigSetting>;
    /// The current value of `key`.
    ///
    /// # Errors
    ///
    /// [`ServiceError`] when the value cannot be read.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Value, ServiceError>>;
    /// Sets `key` to `value` (already type-checked against
    /// [`ConfigService::settings`]).
    ///
    /// # Errors
    ///
    /// [`ServiceError`] when the value cannot be stored.
    fn set<'a>(&'a self, key: &'a str, value: Value) -> BoxFuture<'a, Result<(), ServiceError>>;
}

/// Input of `Config`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigInput {
    /// The key to read or set; leave out to list every settable key with its value.
    setting: Option<String>,
    /// The new value (string, number or boolean); leave out to read the key.
    #[serde(default, deserialize_with = "present")]
    #[schemars(transform = no_default)]
    value: Option<Value>,
}

/// Drops the `"default": null` that `serde(default)` would show the model:
/// null is exactly what `value` refuses.
fn no_default(schema: &mut schemars::Schema) {
    schema.remove("default");
}

/// Keeps a present `null` as `Some(Value::Null)` (plain `Option` would read
/// it as absent), so `"value": null` is refused instead of reading the key.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The `Config` tool.
#[derive(Debug)]
pub(crate) struct ConfigTool {
    service: Option<Arc<dyn ConfigService>>,
}

impl ConfigTool {
    pub(crate) fn new(service: Option<Arc<dyn ConfigService>>) -> Self {
        Self { service }
    }
}

fn failed(e: ServiceError) -> Result<ToolOutput, ToolError> {
    match e {
        ServiceError::UnknownKey { .. } | ServiceError::WrongType { .. } => {
            Ok(ToolOutput::error(format!("Config: {e}.")))
        }
        other => Err(tool_failed("Config", other)),
    }
}

impl Builtin for ConfigTool {
    type Input = ConfigInput;
    const NAME: BuiltinName = BuiltinName::Config;
    const HINTS: Hints = Hints::local_change(false, true);

    fn details(&self) -> String {
        "Without `setting`, lists the settable keys with their types and values; with `setting` alone, reads it; with `setting` and `value`, sets it (the value must have the key's type).".to_owned()
    }

    fn run<'a>(
        &'a self,
        input: ConfigInput,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let Some(service) = &self.service else {
                return Ok(ToolOutput::error(
                    "Config: no configuration service is configured on this host; nothing can be read or changed.",
                ));
            };
            let settings = service.settings();
            let Some(key) = input.setting else {
                let mut text = String::from("Settable keys:\n");
                for s in &settings {
                    let value = match service.get(&s.key).await {
                        Ok(v) => v.to_string(),
                        Err(e) => format!("(unreadable: {e})"),
                    };
                    let _ = writeln!(
                        text,
                        "- {} ({}) = {value}: {}",
                        s.key, s.kind, s.description
                    );
                }
                return Ok(ToolOutput::text(text));
            };
            let Some(setting) = settings.iter().find(|s| s.key == key) else {
                let keys: Vec<&str> = settings.iter().map(|s| s.key.as_str()).collect();
                return Ok(ToolOutput::error(format!(
                    "Config: '{key}' is not a settable key. Settable keys: {}.",
                    if keys.is_empty() {
                        "none".to_owned()
                    } else {
                        keys.join(", ")
                    }
                )));
            };
            match input.value {
                None => match service.get(&key).await {
                    Ok(v) => Ok(ToolOutput::text(format!("{key} = {v}"))),
                    Err(e) => failed(e),
                },
                Some(Value::Null) => Ok(ToolOutput::error(format!(
                    "Config: `value` is null; a key cannot be unset. Send {} to set '{key}', or leave `value` out to read it.",
                    setting.kind
                ))),
                Some(value) => {
                    if !setting.kind.accepts(&value) {
                        return Ok(ToolOutput::error(format!(
                            "Config: '{key}' takes {}; got {value}.",
                            setting.kind
                        )));
                    }
                    let shown = value.to_string();
                    match service.set(&key, value).await {
                        Ok(()) => Ok(ToolOutput::text(format!("Set {key} = {shown}."))),
                        Err(e) => failed(e),
                    }
                }
            }
        })
    }
}
