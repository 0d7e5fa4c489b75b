//! Validated names: tools, MCP servers and skills.
//!
//! Every name is a newtype built through `TryFrom`/`FromStr`, so a value of
//! the type is valid by construction. Names are reference-counted strings:
//! cloning one never allocates.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::NameError;

/// The longest tool name the providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

const TOOL_ALPHABET: &str = "ASCII letters, digits, '_' and '-'";
const SKILL_ALPHABET: &str = "lowercase ASCII letters, digits and single '-' between them";

fn is_tool_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn check_alphabet(
    kind: &'static str,
    name: &str,
    max: usize,
    allowed: &'static str,
    ok: impl Fn(char) -> bool,
) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty { kind });
    }
    if let Some((position, ch)) = name.chars().enumerate().find(|&(_, c)| !ok(c)) {
        return Err(NameError::InvalidChar {
            kind,
            name: name.to_owned(),
            ch,
            position,
            allowed,
        });
    }
    let len = name.chars().count();
    if len > max {
        return Err(NameError::TooLong {
            kind,
            name: name.to_owned(),
            len,
            max,
        });
    }
    Ok(())
}

/// A stable 64-bit FNV-1a hash.
///
/// Used wherever a hash must be the same on every machine and every run
/// (shortened tool names, definition hashes); `std`'s hashers are seeded
/// randomly and must never be used for that.
#[must_use]
pub fn stable_hash(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

/// How many of a name's first bytes it keeps inline ([`ToolName::starts_with`]).
const HEAD: usize = 16;

/// The first [`HEAD`] bytes of `text`, zero-padded.
fn head_of(text: &str) -> [u8; HEAD] {
    let mut head = [0; HEAD];
    let n = text.len().min(HEAD);
    head[..n].copy_from_slice(&text.as_bytes()[..n]);
    head
}

macro_rules! name_type {
    ($(#[$meta:meta])* $ty:ident) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub struct $ty {
            text: Arc<str>,
            /// `stable_hash` of the text, computed once: the resolver looks
            /// names up and compares them for every tool of every pool.
            hash: u64,
            /// A copy of the text's first bytes, so that prefix checks
            /// (`mcp__`, prefix patterns, reserved names) read the name's
            /// holder only, not the text's own allocation: in pools of
            /// thousands of tools that allocation is a cache miss.
            head: [u8; HEAD],
        }

        impl $ty {
            fn from_valid(text: Arc<str>) -> Self {
                let hash = stable_hash(text.as_bytes());
                let head = head_of(&text);
                Self { text, hash, head }
            }

            /// The name's [`stable_hash`], computed once when it was built.
            #[must_use]
            pub fn stable_hash(&self) -> u64 {
                self.hash
            }

            /// Whether the name starts with `prefix`; reads the text's
            /// own allocation only beyond its first 16 bytes.
            #[must_use]
            pub fn starts_with(&self, prefix: &str) -> bool {
                let prefix = prefix.as_bytes();
                let inline = prefix.len().min(HEAD);
                prefix.len() <= self.text.len()
                    && self.head[..inline] == prefix[..inline]
                    && (prefix.len() <= HEAD
                        || self.text.as_bytes()[HEAD..prefix.len()] == prefix[HEAD..])
            }

            /// Whether the name is `text`; a name of at most 16 bytes is
            /// compared without reading its own allocation.
            #[must_use]
            pub fn is(&self, text: &str) -> bool {
                self.text.len() == text.len() && self.starts_with(text)
            }
        }

        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                self.hash == other.hash && self.text == other.text
            }
        }

        impl Eq for $ty {}

        impl PartialOrd for $ty {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $ty {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.text.cmp(&other.text)
            }
        }

        impl std::hash::Hash for $ty {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.text.hash(state);
            }
        }

        impl $ty {
            /// The name as a string slice.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.text
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.text)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($ty), &*self.text)
            }
        }

        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.text
            }
        }

        impl std::borrow::Borrow<str> for $ty {
            fn borrow(&self) -> &str {
                &self.text
            }
        }

        impl FromStr for $ty {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::validate(s)?;
                Ok(Self::from_valid(Arc::from(s)))
            }
        }

        impl TryFrom<&str> for $ty {
            type Error = NameError;
            fn try_from(s: &str) -> Result<Self, NameError> {
                s.parse()
            }
        }

        impl TryFrom<String> for $ty {
            type Error = NameError;
            fn try_from(s: String) -> Result<Self, NameError> {
                Self::validate(&s)?;
                Ok(Self::from_valid(Arc::from(s)))
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.text)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::try_from(s).map_err(serde::de::Error::custom)
            }
        }
    };
}

name_type!(
    /// The name of a tool as the model sees it: `^[A-Za-z0-9_-]{1,64}$`.
    ///
    /// Connection (MCP) tools are namespaced `mcp__{server}__{tool}`; build
    /// them with [`ToolName::mcp`], which keeps the result within the limit.
    ///
    /// ```
    /// use zr_types::ToolName;
    /// let read: ToolName = "Read".parse().unwrap();
    /// assert_eq!(read.as_str(), "Read");
    /// assert!("no spaces".parse::<ToolName>().is_err());
    /// ```
    ToolName
);

name_type!(
    /// The name of an MCP server: `^[A-Za-z0-9_-]{1,64}$` without `__`.
    ///
    /// The double underscore separates server and tool in
    /// `mcp__{server}__{tool}`, so a server name may not contain it: the
    /// pattern `mcp__{server}` must name exactly one server.
    ServerName
);

name_type!(
    /// The name of a skill: lowercase letters, digits and hyphens, at most
    /// 64 characters, no leading, trailing or doubled hyphen (the Agent
    /// Skills rules).
    SkillName
);

name_type!(
    /// The name of an agent type (`explore`, `code-reviewer`): the rules of
    /// [`SkillName`], widened by one: a `.` between two letters or digits
    /// (`dotnet-framework-4.8-expert`, a shape Claude Code accepts). So a
    /// name never starts or ends with `.`, never holds `..`, `.-` or `-.`,
    /// and can still name a file; [`AgentId::child`](crate::AgentId::child)
    /// turns the `.` into `-` in ids.
    ///
    /// ```
    /// use zr_types::AgentName;
    /// assert!("dotnet-framework-4.8-expert".parse::<AgentName>().is_ok());
    /// assert!("../x".parse::<AgentName>().is_err());
    /// assert!("x.".parse::<AgentName>().is_err());
    /// ```
    AgentName
);

/// Where `s` has a `.` that is not between two lowercase letters or digits.
fn stray_dot(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (0..bytes.len())
        .find(|&i| bytes[i] == b'.' && !(i > 0 && word(bytes.get(i - 1)) && word(bytes.get(i + 1))))
}

impl AgentName {
    fn validate(s: &str) -> Result<(), NameError> {
        const AGENT_ALPHABET: &str = "lowercase ASCII letters, digits, single '-' between them and '.' between two letters or digits";
        if let Some(position) = stray_dot(s) {
            return Err(NameError::InvalidChar {
                kind: "agent",
                name: s.to_owned(),
                ch: '.',
                position,
                allowed: AGENT_ALPHABET,
            });
        }
        // Checked as a skill name with each (well-placed) dot read as a
        // letter: the rest of the rules are the same.
        let undotted = s.replace('.', "a");
        SkillName::validate(&undotted).map_err(|e| match e {
            NameError::Empty { .. } => NameError::Empty { kind: "agent" },
            NameError::TooLong { len, max, .. } => NameError::TooLong {
                kind: "agent",
                name: s.to_owned(),
                len,
                max,
            },
            NameError::InvalidChar { ch, position, .. } => NameError::InvalidChar {
                kind: "agent",
                name: s.to_owned(),
                ch,
                position,
                allowed: AGENT_ALPHABET,
            },
        })
    }
}

impl ToolName {
    fn validate(s: &str) -> Result<(), NameError> {
        check_alphabet("tool", s, MAX_TOOL_NAME_LEN, TOOL_ALPHABET, is_tool_char)
    }

    /// The namespaced name of tool `tool` of MCP server `server`:
    /// `mcp__{server}__{tool}`.
    ///
    /// MCP servers may use tool names that are longer than 64 characters or
    /// hold characters outside the alphabet (the MCP spec allows `.`). Such a
    /// name is made to fit: characters outside the alphabet become `_`, the
    /// name is cut, and `_` plus 8 hex digits of [`stable_hash`] of the full
    /// original name are appended, so the result is stable across runs and
    /// machines and two different originals do not collide in practice.
    ///
    /// ```
    /// use zr_types::{ServerName, ToolName};
    /// let gh: ServerName = "gh".parse().unwrap();
    /// assert_eq!(ToolName::mcp(&gh, "create_issue").unwrap().as_str(), "mcp__gh__create_issue");
    /// let long = ToolName::mcp(&gh, &"x".repeat(100)).unwrap();
    /// assert_eq!(long.as_str().len(), 64);
    /// ```
    ///
    /// # Errors
    ///
    /// [`NameError::Empty`] when `tool` is empty.
    pub fn mcp(server: &ServerName, tool: &str) -> Result<Self, NameError> {
        if tool.is_empty() {
            return Err(NameError::Empty { kind: "MCP tool" });
        }
        let full = format!("mcp__{server}__{tool}");
        if Self::validate(&full).is_ok() {
            return Ok(Self::from_valid(Arc::from(full)));
        }
        Ok(Self::with_suffix(&full, stable_hash(full.as_bytes())))
    }

    /// `mcp__{server}__{tool}` with a stable hash suffix of the server and
    /// the tool (`mcp__trusted___x_1f2e3d4c`), cut as [`ToolName::mcp`]
    /// cuts a long name: the name a host gives a server's tool whose
    /// [`ToolName::mcp`] another server's tool already has (`trusted_` +
    /// `x` and `trusted` + `_x` both make `mcp__trusted___x`). Two pairs
    /// that make the same `mcp` name get different suffixes.
    ///
    /// # Errors
    ///
    /// [`NameError::Empty`] when `tool` is empty.
    pub fn mcp_distinct(server: &ServerName, tool: &str) -> Result<Self, NameError> {
        if tool.is_empty() {
            return Err(NameError::Empty { kind: "MCP tool" });
        }
        let full = format!("mcp__{server}__{tool}");
        let pair = format!("{server}\0{tool}");
        Ok(Self::with_suffix(&full, stable_hash(pair.as_bytes())))
    }

    /// `full` with characters outside the alphabet as `_`, cut to leave
    /// room for `_` and eight hex digits of `hash`, then those.
    fn with_suffix(full: &str, hash: u64) -> Self {
        let suffix = format!("_{:08x}", hash & 0xffff_ffff);
        let keep = MAX_TOOL_NAME_LEN - suffix.len();
        let mut short: String = full
            .chars()
            .map(|c| if is_tool_char(c) { c } else { '_' })
            .take(keep)
            .collect();
        short.push_str(&suffix);
        Self::from_valid(Arc::from(short))
    }
}

impl ServerName {
    fn validate(s: &str) -> Result<(), NameError> {
        check_alphabet("server", s, MAX_TOOL_NAME_LEN, TOOL_ALPHABET, is_tool_char)?;
        if let Some(position) = s.find("__") {
            return Err(NameError::InvalidChar {
                kind: "server",
                name: s.to_owned(),
                ch: '_',
                position: position + 1,
                allowed: "ASCII letters, digits, '-' and single '_' ('__' separates server and tool)",
            });
        }
        Ok(())
    }
}

impl SkillName {
    fn validate(s: &str) -> Result<(), NameError> {
        check_alphabet("skill", s, 64, SKILL_ALPHABET, |c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
        })?;
        let bad_hyphen = if s.starts_with('-') {
            Some(0)
        } else if s.ends_with('-') {
            Some(s.len() - 1)
        } else {
            s.find("--").map(|p| p + 1)
        };
        match bad_hyphen {
            Some(position) => Err(NameError::InvalidChar {
                kind: "skill",
                name: s.to_owned(),
                ch: '-',
                position,
                allowed: SKILL_ALPHABET,
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
