//! Tool patterns: the entries of allow and deny lists.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zr_types::{ServerName, ToolDefinition, ToolName, ToolOrigin};

use crate::error::PatternError;

/// An entry of an allow or deny list.
///
/// - `*` matches every tool;
/// - `mcp__{server}` (no further `__`) matches every tool of that MCP server
///   and of no other, by origin, so a shortened name still matches;
/// - a trailing `*` matches by prefix (`mcp__gh*`, `Web*`);
/// - anything else is an exact name; a `*` elsewhere is a literal character
///   (and since tool names cannot hold `*`, such a pattern matches nothing
///   and earns a warning). An exact `mcp__{server}__{tool}` may use the
///   tool's name as its server lists it: when that name had to be cleaned
///   or shortened to fit (`read.file`, names over 64 characters), the
///   pattern also matches the shortened name [`ToolName::mcp`] gives.
///
/// Patterns use ASCII letters, digits, `_`, `-`, `*` and `.`; anything else
/// is refused, and a permission rule with an argument (`Bash(git:*)`) is
/// refused with a hint, because keeping it would deny or allow nothing.
///
/// ```
/// use zr_caps::{PatternKind, ToolPattern};
/// let p: ToolPattern = "mcp__gh".parse().unwrap();
/// assert_eq!(p.kind(), PatternKind::Server("gh"));
/// let p: ToolPattern = "Web*".parse().unwrap();
/// assert_eq!(p.kind(), PatternKind::Prefix("Web"));
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolPattern {
    text: Arc<str>,
    /// The kind, worked out once at parse time: the resolver matches every
    /// pattern against every tool of a pool.
    tag: Tag,
    /// `stable_hash` of what the pattern compares, to compare it with a
    /// tool's precomputed hash before touching any bytes: the whole text of
    /// an exact pattern (against the tool's name), the server of a server
    /// pattern (against the tool's server); unused for the other kinds.
    hash: u64,
    /// For an exact `mcp__{server}__{tool}` whose tool name does not fit the
    /// tool-name rules as written: the name [`ToolName::mcp`] makes of it.
    alias: Option<ToolName>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Tag {
    All,
    Server,
    Prefix,
    Exact,
}

fn tag_of(s: &str) -> Tag {
    if s == "*" {
        Tag::All
    } else if s.ends_with('*') {
        Tag::Prefix
    } else if let Some(server) = s.strip_prefix("mcp__")
        && !server.is_empty()
        && !server.contains("__")
    {
        Tag::Server
    } else {
        Tag::Exact
    }
}

/// How a [`ToolPattern`] matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind<'a> {
    /// `*`: everything.
    All,
    /// `mcp__{server}`: every tool of that server.
    Server(&'a str),
    /// `{prefix}*`: names starting with the prefix.
    Prefix(&'a str),
    /// An exact name.
    Exact(&'a str),
}

impl ToolPattern {
    /// The pattern as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How the pattern matches.
    #[must_use]
    pub fn kind(&self) -> PatternKind<'_> {
        let s = &*self.text;
        match self.tag {
            Tag::All => PatternKind::All,
            Tag::Prefix => PatternKind::Prefix(&s[..s.len() - 1]),
            Tag::Server => PatternKind::Server(&s["mcp__".len()..]),
            Tag::Exact => PatternKind::Exact(s),
        }
    }

    /// Whether the pattern matches `tool`.
    #[must_use]
    pub fn matches(&self, tool: &ToolDefinition) -> bool {
        match self.kind() {
            PatternKind::All => true,
            PatternKind::Server(server) => {
                matches!(&tool.origin, ToolOrigin::Connection { server: s }
                    if s.stable_hash() == self.hash && s.is(server))
            }
            // The names' inline heads: a pool's names are not read from
            // their own allocations for prefixes of up to 16 bytes.
            PatternKind::Prefix(prefix) => tool.name.starts_with(prefix),
            PatternKind::Exact(name) => {
                (tool.name.stable_hash() == self.hash && tool.name.as_str() == name)
                    || self.alias.as_ref() == Some(&tool.name)
            }
        }
    }

    /// Whether the pattern matches a builtin called `name` (allow lists and
    /// name-based block lists, where origin is known to be builtin).
    #[must_use]
    pub fn matches_name(&self, name: &str) -> bool {
        match self.kind() {
            PatternKind::All => true,
            PatternKind::Server(_) => false,
            PatternKind::Prefix(prefix) => name.starts_with(prefix),
            PatternKind::Exact(exact) => name == exact,
        }
    }
}

impl FromStr for ToolPattern {
    type Err = PatternError;
    fn from_str(s: &str) -> Result<Self, PatternError> {
        if s.is_empty() {
            return Err(PatternError::Empty);
        }
        if let Some((tool, _)) = s.split_once('(') {
            return Err(PatternError::PermissionRule {
                pattern: s.to_owned(),
                tool: tool.trim().to_owned(),
            });
        }
        if s.chars().any(char::is_whitespace) {
            return Err(PatternError::Whitespace {
                pattern: s.to_owned(),
            });
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.');
        if let Some(ch) = s.chars().find(|&c| !allowed(c)) {
            return Err(PatternError::InvalidChar {
                pattern: s.to_owned(),
                ch,
            });
        }
        let tag = tag_of(s);
        Ok(Self {
            text: Arc::from(s),
            tag,
            hash: zr_types::stable_hash(match tag {
                Tag::Server => &s.as_bytes()["mcp__".len()..],
                Tag::All | Tag::Prefix | Tag::Exact => s.as_bytes(),
            }),
            alias: if tag == Tag::Exact {
                mcp_alias(s)
            } else {
                None
            },
        })
    }
}

/// The shortened name of an exact `mcp__{server}__{tool}` pattern whose
/// tool part is not a valid tool name as written.
fn mcp_alias(s: &str) -> Option<ToolName> {
    let (server, tool) = s.strip_prefix("mcp__")?.split_once("__")?;
    let server: ServerName = server.parse().ok()?;
    let name = ToolName::mcp(&server, tool).ok()?;
    (name.as_str() != s).then_some(name)
}

impl TryFrom<&str> for ToolPattern {
    type Error = PatternError;
    fn try_from(s: &str) -> Result<Self, PatternError> {
        s.parse()
    }
}

impl fmt::Display for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ToolPattern({:?})", &*self.text)
    }
}

impl Serialize for ToolPattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for ToolPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
