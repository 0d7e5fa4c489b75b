//! Tool definitions: what the model is told about a tool, and where it came from.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::name::{ServerName, ToolName};

/// Behavioural hints about a tool, after MCP's tool annotations.
///
/// `read_only` is the one the resolver acts on (Explore and Plan agents keep
/// only read-only tools); the others are carried for hosts and permission
/// callbacks. A tool without annotations is treated as not read-only.
///
/// The other hints are `None` when not stated, and MCP's defaults apply
/// then: read them through [`Annotations::is_destructive`],
/// [`Annotations::is_idempotent`] and [`Annotations::is_open_world`], so
/// that an unannotated tool is never taken for a harmless one. In JSON, a
/// hint that is not stated is absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Annotations {
    /// The tool does not change its environment (`readOnlyHint`); false when
    /// not stated.
    pub read_only: bool,
    /// The tool may destroy data (`destructiveHint`). `None` = not stated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it twice with the same input has no further effect
    /// (`idempotentHint`). `None` = not stated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches outside the machine (`openWorldHint`). `None` = not
    /// stated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Annotations of a read-only tool; the other hints are not stated.
    #[must_use]
    pub fn read_only() -> Self {
        Self {
            read_only: true,
            ..Self::default()
        }
    }

    /// Whether the tool may destroy data: the stated hint, else MCP's
    /// default (true), which only means something for a tool that is not
    /// read-only (a read-only tool destroys nothing).
    #[must_use]
    pub fn is_destructive(&self) -> bool {
        self.destructive.unwrap_or(!self.read_only)
    }

    /// Whether repeating a call has no further effect: the stated hint, else
    /// MCP's default (false).
    #[must_use]
    pub fn is_idempotent(&self) -> bool {
        self.idempotent.unwrap_or(false)
    }

    /// Whether the tool reaches outside the machine: the stated hint, else
    /// MCP's default (true).
    #[must_use]
    pub fn is_open_world(&self) -> bool {
        self.open_world.unwrap_or(true)
    }
}

/// Where a tool definition came from. The resolver's rules depend on it: the
/// allow list constrains builtins only, the background allow list passes
/// custom and connection tools, and only the builtin `Bash` is exempt from
/// the read-only rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOrigin {
    /// A tool from the runtime's builtin registry.
    Builtin,
    /// A tool the host defined in code.
    Custom,
    /// A tool of an MCP server connection.
    Connection {
        /// The server that provides it.
        server: ServerName,
    },
}

impl fmt::Display for ToolOrigin {
    /// `builtin`, `custom` or `mcp:SERVER`: the form of the resolver's output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Builtin => f.write_str("builtin"),
            Self::Custom => f.write_str("custom"),
            Self::Connection { server } => write!(f, "mcp:{server}"),
        }
    }
}

/// A tool as the model is told about it.
///
/// Definitions are shared as `Arc<ToolDefinition>` between the registry, the
/// capability lists and every resolved pool: resolving never copies a schema.
///
/// The fields are laid out in declaration order (`repr(C)`), the ones the
/// resolver reads for every tool of every pool first: with the `Arc`'s
/// reference counts in front, name, annotations, defer flag and origin take
/// about two cache lines, where the compiler's own order spread them over
/// three or four. Serde still sees the order `name`, `description`,
/// `input_schema`, `annotations`, `origin`, `defer`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "SerdeFields")]
#[repr(C)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: ToolName,
    /// Behavioural hints.
    pub annotations: Annotations,
    /// Whether it should be kept out of the advertised pool and found
    /// through `FindTool`. `None` follows the default for its origin: not
    /// deferred for builtins and custom tools, the lazy policy for
    /// connection tools. `Some` is an explicit per-tool (or per-server)
    /// setting and wins over the policy.
    pub defer: Option<bool>,
    /// Where it came from.
    pub origin: ToolOrigin,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
}

/// [`ToolDefinition`]'s fields in serde's order (the declaration order
/// before the layout of [`ToolDefinition`] changed), so that derived
/// deserialisation, a sequence form included, is unchanged.
#[derive(Deserialize)]
#[serde(rename = "ToolDefinition")]
struct SerdeFields {
    name: ToolName,
    description: String,
    input_schema: Value,
    annotations: Annotations,
    origin: ToolOrigin,
    defer: Option<bool>,
}

impl From<SerdeFields> for ToolDefinition {
    fn from(f: SerdeFields) -> Self {
        Self {
            name: f.name,
            annotations: f.annotations,
            defer: f.defer,
            origin: f.origin,
            description: f.description,
            input_schema: f.input_schema,
        }
    }
}

impl Serialize for ToolDefinition {
    /// The fields in serde's order (see `SerdeFields`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ToolDefinition", 6)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("description", &self.description)?;
        st.serialize_field("input_schema", &self.input_schema)?;
        st.serialize_field("annotations", &self.annotations)?;
        st.serialize_field("origin", &self.origin)?;
        st.serialize_field("defer", &self.defer)?;
        st.end()
    }
}

impl ToolDefinition {
    /// A definition with an empty object schema, no annotations and no
    /// defer setting.
    #[must_use]
    pub fn new(name: ToolName, description: impl Into<String>, origin: ToolOrigin) -> Self {
        Self {
            name,
            description: description.into(),
            input_schema: serde_json::json!({"type": "object"}),
            annotations: Annotations::default(),
            origin,
            defer: None,
        }
    }

    /// Sets the input schema.
    #[must_use]
    pub fn with_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the explicit defer flag.
    #[must_use]
    pub fn with_defer(mut self, defer: Option<bool>) -> Self {
        self.defer = defer;
        self
    }

    /// Whether the tool is read-only: it says so, and does not also say
    /// it is destructive (`readOnlyHint` and `destructiveHint` both true
    /// contradict each other; the tool is taken at its worse word).
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.annotations.read_only && self.annotations.destructive != Some(true)
    }

    /// The server of a connection tool.
    #[must_use]
    pub fn server(&self) -> Option<&ServerName> {
        match &self.origin {
            ToolOrigin::Connection { server } => Some(server),
            ToolOrigin::Builtin | ToolOrigin::Custom => None,
        }
    }

    /// The size in bytes of the definition as sent to a provider
    /// (`{"name","description","input_schema"}` as compact JSON). The lazy
    /// policy `{"auto": BYTES}` compares the sum of these against its limit.
    #[must_use]
    pub fn wire_size(&self) -> usize {
        #[derive(Serialize)]
        struct Wire<'a> {
            name: &'a ToolName,
            description: &'a str,
            input_schema: &'a Value,
        }
        let wire = Wire {
            name: &self.name,
            description: &self.description,
            input_schema: &self.input_schema,
        };
        let mut counter = ByteCounter(0);
        // Writing JSON into a counter cannot fail: values are already valid
        // JSON and the counter's writes never fail.
        match serde_json::to_writer(&mut counter, &wire) {
            Ok(()) | Err(_) => counter.0,
        }
    }
}

struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
