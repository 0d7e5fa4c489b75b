//! Permission modes and their lattice (rule C4).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::UnknownPermissionMode;

/// How freely an agent may act, from strictest to loosest.
///
/// The derived `Ord` is the strictness order: `Plan < DontAsk < Default <
/// Auto < AcceptEdits < BypassPermissions`. A subagent never gets a wider
/// mode than its parent: see [`PermissionMode::clamp`].
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Read-only tools only; the agent plans.
    Plan,
    /// Never ask: whatever is not allowed outright is denied.
    DontAsk,
    /// Ask the host for anything not allowed outright.
    #[default]
    Default,
    /// A classifier decides what needs asking.
    Auto,
    /// File edits are accepted without asking.
    AcceptEdits,
    /// Everything is allowed.
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode, strictest first.
    pub const ALL: [Self; 6] = [
        Self::Plan,
        Self::DontAsk,
        Self::Default,
        Self::Auto,
        Self::AcceptEdits,
        Self::BypassPermissions,
    ];

    /// The effective mode of a subagent (C4): the stricter of its parent's
    /// mode and its declared one; with nothing declared, the parent's.
    ///
    /// ```
    /// use zr_caps::PermissionMode::*;
    /// assert_eq!(Default.clamp(Some(BypassPermissions)), Default);
    /// assert_eq!(AcceptEdits.clamp(Some(Plan)), Plan);
    /// assert_eq!(Auto.clamp(None), Auto);
    /// ```
    #[must_use]
    pub fn clamp(self, declared: Option<Self>) -> Self {
        declared.map_or(self, |d| self.min(d))
    }

    /// The name used in files and on the command line.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::DontAsk => "dontAsk",
            Self::Default => "default",
            Self::Auto => "auto",
            Self::AcceptEdits => "acceptEdits",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = UnknownPermissionMode;
    fn from_str(s: &str) -> Result<Self, UnknownPermissionMode> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownPermissionMode(s.to_owned()))
    }
}

#[cfg(test)]
mod tests;
