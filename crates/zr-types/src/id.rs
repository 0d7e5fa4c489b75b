//! Agent and session ids: stable, printable, sortable.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::IdError;

/// The id of an agent within a session.
///
/// The root is `root`; a subagent is `{parent}.{seq:04}-{type}`:
/// `root.0003-explore` is the third subagent the root started, of type
/// `explore`. Ids print as a path.
///
/// Ids are ordered segment by segment, each by its number and then its
/// type, so siblings sort in start order at any count (`root.9999-x` <
/// `root.10000-x`), and a parent sorts before its children. Each id has one
/// spelling: the number has at least four digits, and no leading zero when
/// it has more (`root.0001-x`, never `root.00001-x`).
///
/// ```
/// use zr_types::AgentId;
/// let root = AgentId::root();
/// assert!(root.child(9_999, "x") < root.child(10_000, "x"));
/// assert_eq!(root.child(10_000, "x").as_str(), "root.10000-x");
/// assert!("root.00001-x".parse::<AgentId>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct AgentId(Arc<str>);

const AGENT_SHAPE: &str = "expected 'root' followed by '.NNNN-type' segments (NNNN: a number below 2^32 written with at least four digits, no leading zero beyond four; type: lowercase letters, digits, '-')";

impl AgentId {
    /// The root agent's id.
    #[must_use]
    pub fn root() -> Self {
        Self(Arc::from("root"))
    }

    /// The id of the `seq`-th subagent of `self`, of type `agent_type`.
    /// Characters of the type outside `[a-z0-9-]` become `-`.
    #[must_use]
    pub fn child(&self, seq: u32, agent_type: &str) -> Self {
        // Written into one string (every subagent gets an id).
        let mut id = String::with_capacity(self.0.len() + 12 + agent_type.len().max(5));
        id.push_str(&self.0);
        id.push('.');
        // Writing to a `String` cannot fail.
        let _ = write!(id, "{seq:04}-");
        if agent_type.is_empty() {
            id.push_str("agent");
        }
        id.extend(agent_type.chars().map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        }));
        Self(Arc::from(id))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root.
    #[must_use]
    pub fn is_root(&self) -> bool {
        &*self.0 == "root"
    }

    /// Nesting depth: 0 for the root.
    #[must_use]
    pub fn depth(&self) -> usize {
        self.0.matches('.').count()
    }
}

impl Ord for AgentId {
    /// Segment by segment: the number (numerically), then the type; a
    /// parent before its children.
    fn cmp(&self, other: &Self) -> Ordering {
        // Parsing and `child` only ever produce canonical numbers (no
        // leading zero beyond four digits), so a longer digit string is a
        // larger number and equal lengths compare as text.
        //
        // The segments before the one holding the first differing byte are
        // equal, so the comparison starts at that segment (maps keyed by
        // ids of one parent compare only the last segment).
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        if common == a.len() && common == b.len() {
            return Ordering::Equal;
        }
        match a[..common].iter().rposition(|&c| c == b'.') {
            // Right after a `.`, a char boundary in both.
            Some(dot) => order_keys(&self.0[dot + 1..]).cmp(order_keys(&other.0[dot + 1..])),
            None => order_keys(&self.0)
                .skip(1)
                .cmp(order_keys(&other.0).skip(1)),
        }
    }
}

/// What orders each segment of `path` (`0001-explore.0002-plan`): the
/// number's length, the number, the type.
fn order_keys(path: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    path.split('.').map(|seg| {
        let (seq, ty) = seg.split_once('-').unwrap_or((seg, ""));
        (seq.len(), seq, ty)
    })
}

impl PartialOrd for AgentId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl FromStr for AgentId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, IdError> {
        let bad = || IdError::Malformed {
            kind: "agent",
            text: s.to_owned(),
            expected: AGENT_SHAPE,
        };
        let mut parts = s.split('.');
        if parts.next() != Some("root") {
            return Err(bad());
        }
        for seg in parts {
            let (seq, ty) = seg.split_once('-').ok_or_else(bad)?;
            let canonical = seq.len() == 4 || !seq.starts_with('0');
            let seq_ok = seq.len() >= 4
                && canonical
                && seq.bytes().all(|b| b.is_ascii_digit())
                && seq.parse::<u32>().is_ok();
            let ty_ok = !ty.is_empty()
                && ty
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !seq_ok || !ty_ok {
                return Err(bad());
            }
        }
        Ok(Self(Arc::from(s)))
    }
}

/// The id of a session: `s-` then 13 hex digits of a timestamp in
/// milliseconds and 8 hex digits of randomness, so ids sort by start time.
/// Build one from its parts (the engine owns the clock and the randomness)
/// or parse one.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// The session id for a start time and a random nonce.
    #[must_use]
    pub fn from_parts(unix_millis: u64, nonce: u32) -> Self {
        Self(Arc::from(format!("s-{unix_millis:013x}-{nonce:08x}")))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SessionId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, IdError> {
        let hex = |t: &str, n: usize| {
            t.len() == n
                && t.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        };
        let ok = s
            .strip_prefix("s-")
            .and_then(|rest| rest.split_once('-'))
            .is_some_and(|(ts, nonce)| hex(ts, 13) && hex(nonce, 8));
        if ok {
            Ok(Self(Arc::from(s)))
        } else {
            Err(IdError::Malformed {
                kind: "session",
                text: s.to_owned(),
                expected: "expected 's-' + 13 lowercase hex digits + '-' + 8 lowercase hex digits",
            })
        }
    }
}

macro_rules! id_impls {
    ($ty:ident) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($ty), &*self.0)
            }
        }
        impl TryFrom<&str> for $ty {
            type Error = IdError;
            fn try_from(s: &str) -> Result<Self, IdError> {
                s.parse()
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

id_impls!(AgentId);
id_impls!(SessionId);

#[cfg(test)]
mod tests;
