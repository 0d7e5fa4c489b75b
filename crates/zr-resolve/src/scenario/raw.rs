//! The scenario file's raw JSON shapes and their conversion to the model.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use zr_caps::{AgentCapabilities, AgentOptions, ToolPattern};
use zr_types::{
    AgentName, Annotations, ServerName, SkillDefinition, SkillName, ToolDefinition, ToolName,
    ToolOrigin,
};

use super::Scenario;
use crate::{DerivedKind, LazyPolicy, ResolvePolicy, Role, ScenarioError, default_builtins};

// ---- shape check -----------------------------------------------------------

fn expect_object(value: &Value, path: &str) -> Result<(), ScenarioError> {
    if value.is_object() || value.is_null() {
        Ok(())
    } else {
        Err(ScenarioError::NotAnObject {
            path: if path.is_empty() {
                ".".to_owned()
            } else {
                path.to_owned()
            },
        })
    }
}

fn tool_lists(caps: &Value, path: &str, keys: &[&str]) -> Result<(), ScenarioError> {
    for key in keys {
        if let Some(Value::Array(tools)) = caps.get(key) {
            for (i, tool) in tools.iter().enumerate() {
                expect_object(tool, &format!("{path}.{key}[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Every place the format expects an object holds one (or null).
pub(super) fn objects_only(root: &Value) -> Result<(), ScenarioError> {
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
    if let Some(Value::Array(list)) = root.get("builtins") {
        for (i, tool) in list.iter().enumerate() {
            expect_object(tool, &format!("builtins[{i}]"))?;
        }
    }
    if let Some(Value::Array(list)) = root.get("skills") {
        for (i, skill) in list.iter().enumerate() {
            expect_object(skill, &format!("skills[{i}]"))?;
        }
    }
    let caps_keys = ["custom_tools", "connection_tools"];
    if let Some(options) = root.get("options") {
        tool_lists(options, "options", &["custom_tools", "mcp_tools"])?;
    }
    for key in ["capabilities", "query_override"] {
        if let Some(caps) = root.get(key) {
            tool_lists(caps, key, &caps_keys)?;
        }
    }
    if let Some(Value::Object(subagents)) = root.get("subagents") {
        for (name, sub) in subagents {
            let path = format!("subagents.{name}");
            expect_object(sub, &path)?;
            if let Some(caps) = sub.get("capabilities") {
                let path = format!("{path}.capabilities");
                expect_object(caps, &path)?;
                tool_lists(caps, &path, &caps_keys)?;
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
    subagents: Ordered<RawSubagent>,
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

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawKind {
    GeneralPurpose,
    Explore,
    Plan,
    Custom,
    Fork,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubagent {
    kind: RawKind,
    #[serde(default)]
    background: bool,
    #[serde(default)]
    capabilities: Option<RawCaps>,
}

/// A JSON object read as a list of entries in file order (serde_json's own
/// map type sorts its keys).
struct Ordered<T>(Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<T>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

// ---- raw -> model ----------------------------------------------------------

fn tool(raw: RawTool, origin: ToolOrigin) -> Arc<ToolDefinition> {
    let annotations = Annotations {
        read_only: raw.read_only,
        ..Annotations::default()
    };
    let mut def = ToolDefinition::new(raw.name, raw.description, origin)
        .with_annotations(annotations)
        .with_defer(raw.defer.then_some(true));
    if let Some(schema) = raw.input_schema {
        def = def.with_schema(schema);
    }
    Arc::new(def)
}

fn tools(raw: Vec<RawTool>, origin: &ToolOrigin) -> Vec<Arc<ToolDefinition>> {
    raw.into_iter().map(|t| tool(t, origin.clone())).collect()
}

fn mcp_tools(raw: Vec<RawMcpTool>, path: &str) -> Result<Vec<Arc<ToolDefinition>>, ScenarioError> {
    raw.into_iter()
        .enumerate()
        .map(|(i, t)| {
            let name = ToolName::mcp(&t.server, &t.name).map_err(|source| ScenarioError::Name {
                path: format!("{path}[{i}].name"),
                source,
            })?;
            let annotations = Annotations {
                read_only: t.read_only,
                ..Annotations::default()
            };
            let mut def = ToolDefinition::new(
                name,
                t.description,
                ToolOrigin::Connection { server: t.server },
            )
            .with_annotations(annotations)
            .with_defer(t.defer);
            if let Some(schema) = t.input_schema {
                def = def.with_schema(schema);
            }
            Ok(Arc::new(def))
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
            RawBuiltins::List(list) => tools(list, &ToolOrigin::Builtin),
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
        };
        let mut subagents: Vec<(AgentName, Role, AgentCapabilities)> = Vec::new();
        for (key, raw) in self.subagents.0 {
            let path = format!("subagents.{key}");
            if key == "root" {
                return Err(ScenarioError::ReservedAgentName);
            }
            let name: AgentName = key.parse().map_err(|source| ScenarioError::Name {
                path: path.clone(),
                source,
            })?;
            if subagents.iter().any(|(n, _, _)| n == &name) {
                return Err(ScenarioError::DuplicateAgent { agent: key });
            }
            let kind = match raw.kind {
                RawKind::GeneralPurpose => DerivedKind::GeneralPurpose,
                RawKind::Explore => DerivedKind::Explore,
                RawKind::Plan => DerivedKind::Plan,
                RawKind::Custom => DerivedKind::Custom,
                RawKind::Fork => {
                    if raw.capabilities.is_some() {
                        return Err(ScenarioError::ForkWithCapabilities { agent: key });
                    }
                    subagents.push((
                        name,
                        Role::Fork {
                            background: raw.background,
                        },
                        AgentCapabilities::default(),
                    ));
                    continue;
                }
            };
            let role = Role::Derived {
                kind,
                background: raw.background,
            };
            let caps = caps(
                raw.capabilities.unwrap_or_default(),
                &format!("{path}.capabilities"),
            )?;
            subagents.push((name, role, caps));
        }
        Ok(Scenario {
            builtins,
            options,
            capabilities,
            query_override,
            skills,
            policy,
            subagents,
        })
    }
}
