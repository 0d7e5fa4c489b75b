//! The roles an agent resolves under.

use std::fmt;

use serde::Serialize;

/// The kind of a derived (delegated) agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DerivedKind {
    /// General-purpose subagents.
    GeneralPurpose,
    /// Explore: read-only tools and builtin Bash (R6).
    Explore,
    /// Plan: read-only tools and builtin Bash (R6).
    Plan,
    /// A user-defined type; resolves like general-purpose.
    Custom,
}

/// The role an agent resolves under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The root agent of a session.
    Root,
    /// A subagent started by `Task` or `MultiTask` with a type.
    Derived {
        /// Its kind.
        kind: DerivedKind,
        /// Whether it runs in the background (R5).
        background: bool,
    },
    /// A subagent started without a type: it sees its parent's advertised
    /// pool unchanged (prompt-cache parity) but cannot run Task/MultiTask.
    Fork {
        /// Whether it runs in the background (R5 narrows what it may run).
        background: bool,
    },
}

impl Role {
    /// Whether the role runs in the background.
    #[must_use]
    pub fn is_background(self) -> bool {
        match self {
            Self::Root => false,
            Self::Derived { background, .. } | Self::Fork { background } => background,
        }
    }

    /// The label used in outputs: `root`, `general-purpose`, `explore`,
    /// `plan`, `custom` or `fork`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Root => "root",
            Self::Derived { kind, .. } => match kind {
                DerivedKind::GeneralPurpose => "general-purpose",
                DerivedKind::Explore => "explore",
                DerivedKind::Plan => "plan",
                DerivedKind::Custom => "custom",
            },
            Self::Fork { .. } => "fork",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())?;
        if self.is_background() {
            f.write_str(", background")?;
        }
        Ok(())
    }
}
