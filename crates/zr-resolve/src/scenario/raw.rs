//! The scenario file's raw JSON shapes and their conversion to the model.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use zr_caps::{AgentCapabilities, AgentOptions, ToolPattern};
use zr_types::{
    AgentName, Annotations, ServerName, SkillDefinition, SkillName, ToolDefinition, ToolName,
    ToolOrigin,
};

use super::{Scenario, Subagent};
use crate::error::ScenarioError;
use crate::policy::{LazyPolicy, ResolvePolicy};
use crate::resolve::default_builtins;
use crate::role::{DerivedKind, Role};

// ---- shape check -----------------------------------------------------------

fn expect_object(value: &Value, path: &str) -> Result<(), ScenarioError> {
    if value.is_object() || value.is_null() {
        Ok(())
    } else {
        let path = if path.is_empty() { "." } else { path };
        Err(ScenarioError::NotAnObject {
            path: path.to_owned(),
        })
    }
}

/// The items of the lists under `keys` of `parent` (at `path`) are
/// objects. Anything else under those keys is left to the typed reading.
fn list_items(parent: &Value, path: &str, keys: &[&str]) -> Result<(), ScenarioError> {
    for key in keys {
        if let Some(Value::Array(items)) = parent.get(key) {
            let path = if path.is_empty() {
                (*key).to_owned()
            } else {
                format!("{path}.{key}")
            };
            for (i, item) in items.iter().enumerate() {
                expect_object(item, &format!("{path}[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Every place the format expects an object holds one (or null).
pub(super) fn objects_only(root: &Value) -> Result<(), ScenarioError> {
    const TOOL_LISTS: &[&str] = &["custom_tools", "connection_tools"];
    expect_object(root, "")?;
    for key in [
        "options",
        "capabilities",
        "query_override",
        "policy",
        "subagents",
    ] {
        if let Some(v) = root.get(key) {
            expect_object(v, key)?;
        }
    }
    list_items(root, "", &["builtins", "skills"])?;
    if let Some(options) = root.get("options") {
        list_items(options, "options", &["custom_tools", "mcp_tools"])?;
    }
    for key in ["capabilities", "query_override"] {
        if let Some(caps) = root.get(key) {
            list_items(caps, key, TOOL_LISTS)?;
        }
    }
    if let Some(Value::Object(subagents)) = root.get("subagents") {
        for (name, sub) in subagents {
            let path = format!("subagents.{name}");
            expect_object(sub, &path)?;
            if let Some(caps) = sub.get("capabilities") {
                let path = format!("{path}.capabilities");
                expect_object(caps, &path)?;
                list_items(caps, &path, TOOL_LISTS)?;
            }
        }
    }
    Ok(())
}

// ---- raw file shapes -------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    #[serde(default)]
    #[allow(dead_code, reason = "a free-text note for readers of the file")]
    description: Option<String>,
    #[serde(default)]
    builtins: RawBuiltins,
    #[serde(default)]
    options: RawOptions,
    #[serde(default)]
    capabilities: Option<RawCaps>,
    #[serde(default)]
    query_override: Option<RawCaps>,
    #[serde(default)]
    skills: Vec<RawSkill>,
    #[serde(default)]
    policy: RawPolicy,
    #[serde(default)]
    no_service: Vec<ToolName>,
    #[serde(default, deserialize_with = "zr_types::ordered_entries")]
    subagents: Vec<(String, RawSubagent)>,
}

#[derive(Default)]
enum RawBuiltins {
    #[default]
    Default,
    List(Vec<RawTool>),
}

impl<'de> Deserialize<'de> for RawBuiltins {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawBuiltins;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"default\" or a list of tools in registry order")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawBuiltins, E> {
                if v == "default" {
                    Ok(RawBuiltins::Default)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawBuiltins, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(RawBuiltins::List)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    name: ToolName,
    #[serde(default)]
    description: String,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    defer: bool,
    #[serde(default)]
    input_schema: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcpTool {
    server: ServerName,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    read_only: bool,
    /// `destructiveHint`; unset when absent.
    #[serde(default)]
    destructive: Option<bool>,
    #[serde(default)]
    defer: Option<bool>,
    #[serde(default)]
    input_schema: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOptions {
    #[serde(default)]
    custom_tools: Vec<RawTool>,
    #[serde(default)]
    mcp_tools: Vec<RawMcpTool>,
    #[serde(default)]
    allowed_tools: Option<Vec<ToolPattern>>,
    #[serde(default)]
    disallowed_tools: Option<Vec<ToolPattern>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCaps {
    #[serde(default)]
    custom_tools: Option<Vec<RawTool>>,
    #[serde(default)]
    connection_tools: Option<Vec<RawMcpTool>>,
    #[serde(default)]
    skills: Option<Vec<SkillName>>,
    #[serde(default)]
    allowed_tools: Option<Vec<ToolPattern>>,
    #[serde(default)]
    disallowed_tools: Option<Vec<ToolPattern>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSkill {
    name: SkillName,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    lazy: RawLazy,
    #[serde(default)]
    derived_blocklist: Option<Vec<ToolName>>,
    #[serde(default)]
    background_allowlist: Option<Vec<ToolName>>,
    #[serde(default = "yes")]
    delegation: bool,
    #[serde(default = "one")]
    max_depth: u32,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

impl Default for RawPolicy {
    fn default() -> Self {
        Self {
            lazy: RawLazy::Always,
            derived_blocklist: None,
            background_allowlist: None,
            delegation: true,
            max_depth: 1,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "lowercase")]
enum RawLazy {
    #[default]
    Always,
    Never,
    Auto(usize),
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "kebab-case")]
enum RawKind {
    /// DESIGN: missing keys take their defaults; a subagent without `kind`
    /// is general-purpose.
    #[default]
    GeneralPurpose,
    Explore,
    Plan,
    Custom,
    Fork,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubagent {
    #[serde(default)]
    kind: RawKind,
    #[serde(default)]
    background: bool,
    #[serde(default)]
    capabilities: Option<RawCaps>,
    /// The agent that delegates to it: `root` (the default) or a subagent
    /// listed before it.
    #[serde(default)]
    parent: Option<String>,
    /// The type's own `maxDepth`: how many levels may be below it.
    #[serde(default)]
    max_depth: Option<u32>,
}

// ---- raw -> model ----------------------------------------------------------

/// A definition from the fields every scenario tool has.
fn definition(
    name: ToolName,
    description: String,
    annotations: Annotations,
    defer: Option<bool>,
    schema: Option<Value>,
    origin: ToolOrigin,
) -> Arc<ToolDefinition> {
    let def = ToolDefinition::new(name, description, origin)
        .with_annotations(annotations)
        .with_defer(defer);
    Arc::new(match schema {
        Some(schema) => def.with_schema(schema),
        None => def,
    })
}

fn tools(raw: Vec<RawTool>, origin: &ToolOrigin) -> Vec<Arc<ToolDefinition>> {
    raw.into_iter()
        .map(|t| {
            let defer = t.defer.then_some(true);
            definition(
                t.name,
                t.description,
                Annotations {
                    read_only: t.read_only,
                    ..Annotations::default()
                },
                defer,
                t.input_schema,
                origin.clone(),
            )
        })
        .collect()
}

fn mcp_tools(raw: Vec<RawMcpTool>, path: &str) -> Result<Vec<Arc<ToolDefinition>>, ScenarioError> {
    raw.into_iter()
        .enumerate()
        .map(|(i, t)| {
            let name = ToolName::mcp(&t.server, &t.name).map_err(|source| ScenarioError::Name {
                path: format!("{path}[{i}].name"),
                source,
            })?;
            let origin = ToolOrigin::Connection { server: t.server };
            Ok(definition(
                name,
                t.description,
                Annotations {
                    read_only: t.read_only,
                    destructive: t.destructive,
                    ..Annotations::default()
                },
                t.defer,
                t.input_schema,
                origin,
            ))
        })
        .collect()
}

fn caps(raw: RawCaps, path: &str) -> Result<AgentCapabilities, ScenarioError> {
    Ok(AgentCapabilities {
        connection_tools: raw
            .connection_tools
            .map(|t| mcp_tools(t, &format!("{path}.connection_tools")))
            .transpose()?,
        custom_tools: raw.custom_tools.map(|t| tools(t, &ToolOrigin::Custom)),
        skills: raw.skills,
        allowed_tools: raw.allowed_tools,
        disallowed_tools: raw.disallowed_tools,
    })
}

impl RawScenario {
    pub(super) fn build(self) -> Result<Scenario, ScenarioError> {
        let builtins = match self.builtins {
            RawBuiltins::Default => default_builtins(),
            RawBuiltins::List(list) => tools(list, &ToolOrigin::Builtin).into(),
        };
        let options = AgentOptions {
            custom_tools: tools(self.options.custom_tools, &ToolOrigin::Custom),
            mcp_tools: mcp_tools(self.options.mcp_tools, "options.mcp_tools")?,
            allowed_tools: self.options.allowed_tools,
            disallowed_tools: self.options.disallowed_tools,
        };
        let capabilities = caps(self.capabilities.unwrap_or_default(), "capabilities")?;
        let query_override = self
            .query_override
            .map(|c| caps(c, "query_override"))
            .transpose()?;
        let skills = self
            .skills
            .into_iter()
            .map(|s| Arc::new(SkillDefinition::inline(s.name, s.description, "")))
            .collect();
        let policy = ResolvePolicy {
            lazy: match self.policy.lazy {
                RawLazy::Always => LazyPolicy::Always,
                RawLazy::Never => LazyPolicy::Never,
                RawLazy::Auto(bytes) => LazyPolicy::Auto { bytes },
            },
            derived_blocklist: self
                .policy
                .derived_blocklist
                .unwrap_or_else(ResolvePolicy::default_derived_blocklist),
            background_allowlist: self
                .policy
                .background_allowlist
                .unwrap_or_else(ResolvePolicy::default_background_allowlist),
            delegation: self.policy.delegation,
            max_depth: self.policy.max_depth,
        };
        let mut subagents = Vec::with_capacity(self.subagents.len());
        for (key, raw) in self.subagents {
            if key == "root" {
                return Err(ScenarioError::ReservedAgentName);
            }
            let path = format!("subagents.{key}");
            let name: AgentName = key.parse().map_err(|source| ScenarioError::Name {
                path: path.clone(),
                source,
            })?;
            let background = raw.background;
            let parent = match raw.parent.as_deref() {
                None | Some("root") => None,
                Some(parent) => match subagents
                    .iter()
                    .position(|s: &Subagent| s.name.as_str() == parent)
                {
                    Some(at) => Some(at),
                    None => {
                        return Err(ScenarioError::UnknownParent {
                            agent: key,
                            parent: parent.to_owned(),
                        });
                    }
                },
            };
            let kind = match raw.kind {
                RawKind::GeneralPurpose => DerivedKind::GeneralPurpose,
                RawKind::Explore => DerivedKind::Explore,
                RawKind::Plan => DerivedKind::Plan,
                RawKind::Custom => DerivedKind::Custom,
                RawKind::Fork if raw.capabilities.is_some() => {
                    return Err(ScenarioError::ForkWithCapabilities { agent: key });
                }
                RawKind::Fork => {
                    subagents.push(Subagent {
                        name,
                        role: Role::Fork { background },
                        capabilities: AgentCapabilities::default(),
                        parent,
                        max_depth: raw.max_depth,
                    });
                    continue;
                }
            };
            let caps = caps(
                raw.capabilities.unwrap_or_default(),
                &format!("{path}.capabilities"),
            )?;
            subagents.push(Subagent {
                name,
                role: Role::Derived { kind, background },
                capabilities: caps,
                parent,
                max_depth: raw.max_depth,
            });
        }
        Ok(Scenario {
            builtins,
            options,
            capabilities,
            query_override,
            skills,
            policy,
            no_service: self.no_service,
            subagents,
        })
    }
}
