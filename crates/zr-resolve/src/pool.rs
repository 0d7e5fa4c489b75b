//! The resolver's output: a resolved pool and its trace.

use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use zr_caps::ToolPattern;
use zr_types::{SkillDefinition, SkillName, ToolDefinition, ToolName, ToolOrigin};

use crate::list::{Slot, Sources, Tools};

/// A step of the resolver (DESIGN.md section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// Assemble.
    R1,
    /// Allow list.
    R2,
    /// Deny list.
    R3,
    /// Derived roles.
    R4,
    /// Background derived roles.
    R5,
    /// Explore and Plan.
    R6,
    /// Nothing to act on.
    R7,
    /// Lazy split.
    R8,
    /// The Fork role.
    Fork,
}

impl Step {
    /// `R1` ... `R8` or `Fork`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::R1 => "R1",
            Self::R2 => "R2",
            Self::R3 => "R3",
            Self::R4 => "R4",
            Self::R5 => "R5",
            Self::R6 => "R6",
            Self::R7 => "R7",
            Self::R8 => "R8",
            Self::Fork => "Fork",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Why a tool was removed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RemovalReason {
    /// R1: a builtin whose runtime service the host did not configure
    /// ([`crate::ResolveInput::no_service`]).
    NoService,
    /// R2: a builtin no allow pattern matched.
    NotAllowed,
    /// R3: a deny pattern matched.
    Denied {
        /// The first pattern that matched.
        pattern: ToolPattern,
        /// Whether it came from the session-wide options and the agent is a
        /// subagent (at the root those options are its own top-level list).
        session: bool,
    },
    /// R4: an agent at the depth limit cannot delegate.
    NoDelegation {
        /// The agent's level (the root is 0).
        level: u32,
        /// The deepest level its subtree may reach.
        limit: u32,
    },
    /// R4: on the policy's derived block list.
    DerivedBlocklist,
    /// R5: a builtin outside the background allow list.
    NotForBackground,
    /// R6: not read-only in an Explore or Plan agent.
    NotReadOnly {
        /// `explore` or `plan`.
        kind: &'static str,
    },
    /// R7: `Skill` with no skills.
    NoSkills,
    /// R7: delegation is off.
    DelegationOff,
    /// R8: `FindTool` with nothing deferred.
    NothingDeferred,
    /// Fork: advertised for cache parity but not executable (the fork is
    /// at the depth limit).
    ForkCannotDelegate {
        /// The fork's level.
        level: u32,
        /// The deepest level its subtree may reach.
        limit: u32,
    },
}

impl fmt::Display for RemovalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoService => f.write_str("no service configured"),
            Self::NotAllowed => f.write_str("not matched by allowed_tools"),
            Self::Denied { pattern, session: false } => write!(f, "denied by '{pattern}'"),
            Self::Denied { pattern, session: true } => {
                write!(f, "denied session-wide by '{pattern}'")
            }
            Self::NoDelegation { level: _, limit: 1 } => {
                f.write_str("subagents cannot delegate (depth 1)")
            }
            Self::NoDelegation { level, limit } => {
                write!(f, "agents at depth {level} cannot delegate (max depth {limit})")
            }
            Self::DerivedBlocklist => f.write_str("blocked for subagents (derived_blocklist)"),
            Self::NotForBackground => {
                f.write_str("not allowed in background agents (background_allowlist)")
            }
            Self::NotReadOnly { kind } => write!(
                f,
                "not read-only ({kind} agents keep read-only tools and builtin Bash)"
            ),
            Self::NoSkills => f.write_str("the agent has no skills"),
            Self::DelegationOff => f.write_str("delegation is off"),
            Self::NothingDeferred => f.write_str("no tool is deferred"),
            Self::ForkCannotDelegate { level: _, limit: 1 } => f.write_str(
                "advertised to keep the parent's prompt prefix, not executable: subagents cannot delegate (depth 1)",
            ),
            Self::ForkCannotDelegate { level, limit } => write!(
                f,
                "advertised to keep the parent's prompt prefix, not executable: agents at depth {level} cannot delegate (max depth {limit})"
            ),
        }
    }
}

/// A tool taken out of the pool, with the one step that took it (a view
/// that borrows the pool).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Removed<'a> {
    /// The tool.
    pub tool: &'a Arc<ToolDefinition>,
    /// The step.
    pub step: Step,
    /// Why.
    pub reason: &'a RemovalReason,
}

/// A removal as a pool keeps it: the tool's slot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Removal {
    pub(crate) at: Slot,
    pub(crate) step: Step,
    pub(crate) reason: RemovalReason,
}

impl Removal {
    fn view<'a>(&'a self, sources: &'a Sources) -> Removed<'a> {
        Removed {
            tool: sources.get(self.at),
            step: self.step,
            reason: &self.reason,
        }
    }
}

/// A definition replaced at R1 by a later one of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The name both definitions share.
    pub name: ToolName,
    /// Where the replaced definition came from.
    pub previous: ToolOrigin,
    /// Where the winning definition came from.
    pub by: ToolOrigin,
}

/// Something in the input that is probably a mistake but not an error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Warning {
    /// An allow pattern matched no builtin.
    AllowUnmatched {
        /// The pattern.
        pattern: ToolPattern,
    },
    /// A deny pattern matched no tool.
    DenyUnmatched {
        /// The pattern.
        pattern: ToolPattern,
        /// Whether it is a session-wide pattern (judged at the root only).
        session: bool,
    },
    /// A skill name is not in the registry.
    UnknownSkill {
        /// The name.
        name: SkillName,
    },
    /// The agent was given skills but has no `Skill` tool to use them.
    SkillsWithoutSkillTool {
        /// The skills it loses.
        skills: Vec<SkillName>,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AllowUnmatched { pattern } => write!(
                f,
                "allowed_tools pattern '{pattern}' matches no builtin tool (the allow list constrains builtins only)"
            ),
            Self::DenyUnmatched {
                pattern,
                session: false,
            } => write!(f, "disallowed_tools pattern '{pattern}' matches no tool"),
            Self::DenyUnmatched {
                pattern,
                session: true,
            } => write!(
                f,
                "session-wide disallowed_tools pattern '{pattern}' matches no tool in the root's pool"
            ),
            Self::UnknownSkill { name } => write!(f, "skill '{name}' is not in the registry"),
            Self::SkillsWithoutSkillTool { skills } => {
                f.write_str("skills ")?;
                write_joined(f, skills)?;
                f.write_str(" are unavailable: the Skill tool is not in this agent's pool")
            }
        }
    }
}

fn write_joined<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// The tools one agent can see and run, and how they were decided.
///
/// Only [`crate::resolve`] builds one. Every list is ordered and the order
/// is part of the contract: [`fmt::Display`] is the stable text form that
/// snapshots record, and [`Serialize`] gives the JSON of
/// `zr resolve --format json`. The lists are views ([`Tools`]) into the
/// source lists the pool holds (`zr_caps::ToolList`, one count each), so
/// building, cloning and dropping a pool changes no definition's
/// reference count. Two pools are equal when their lists hold equal
/// definitions in the same order, wherever those are held.
#[derive(Clone)]
pub struct ResolvedPool {
    pub(crate) sources: Sources,
    // Shared slices: an agent whose executable pool equals its advertised
    // one, and a fork that advertises its parent's pool, hold the same
    // allocation instead of a copy.
    pub(crate) advertised: Arc<[Slot]>,
    pub(crate) executable: Arc<[Slot]>,
    pub(crate) deferred: Arc<[Slot]>,
    pub(crate) removed: Vec<Removal>,
    pub(crate) replaced: Vec<Replaced>,
    pub(crate) skills: Vec<Arc<SkillDefinition>>,
    pub(crate) warnings: Vec<Warning>,
}

impl ResolvedPool {
    /// The tools the model is told about, in order.
    #[must_use]
    pub fn advertised(&self) -> Tools<'_> {
        Tools::new(&self.sources, &self.advertised)
    }

    /// The tools the engine may run. Equal to [`Self::advertised`] except for
    /// a fork, which sees its parent's pool but cannot delegate.
    #[must_use]
    pub fn executable(&self) -> Tools<'_> {
        Tools::new(&self.sources, &self.executable)
    }

    /// The tools `FindTool` can load, in order.
    #[must_use]
    pub fn deferred(&self) -> Tools<'_> {
        Tools::new(&self.sources, &self.deferred)
    }

    /// The removed tools, each with its step and reason, in step order.
    pub fn removed(
        &self,
    ) -> impl DoubleEndedIterator<Item = Removed<'_>> + ExactSizeIterator + Clone + '_ {
        self.removed.iter().map(|r| r.view(&self.sources))
    }

    /// The definitions replaced at R1.
    #[must_use]
    pub fn replaced(&self) -> &[Replaced] {
        &self.replaced
    }

    /// The agent's skills, in order.
    #[must_use]
    pub fn skills(&self) -> &[Arc<SkillDefinition>] {
        &self.skills
    }

    /// Warnings about the input.
    #[must_use]
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

impl PartialEq for ResolvedPool {
    fn eq(&self, other: &Self) -> bool {
        self.advertised() == other.advertised()
            && self.executable() == other.executable()
            && self.deferred() == other.deferred()
            && self.removed().eq(other.removed())
            && self.replaced == other.replaced
            && self.skills == other.skills
            && self.warnings == other.warnings
    }
}

impl fmt::Debug for ResolvedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedPool")
            .field("advertised", &self.advertised())
            .field("executable", &self.executable())
            .field("deferred", &self.deferred())
            .field("removed", &Listed(self.removed()))
            .field("replaced", &self.replaced)
            .field("skills", &self.skills)
            .field("warnings", &self.warnings)
            .finish()
    }
}

/// Column widths of a pool's text form.
#[derive(Clone, Copy)]
struct Widths {
    name: usize,
    origin: usize,
}

fn write_tools(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    tools: Tools<'_>,
    w: Widths,
) -> fmt::Result {
    writeln!(f, "{title} ({}):", tools.len())?;
    for t in tools {
        let name = t.name.as_str();
        if t.is_read_only() {
            let origin = t.origin.to_string();
            writeln!(f, "  {name:<0$}  {origin:<1$}  read-only", w.name, w.origin)?;
        } else {
            writeln!(f, "  {name:<0$}  {1}", w.name, t.origin)?;
        }
    }
    Ok(())
}

impl fmt::Display for ResolvedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let listed = || self.advertised().iter().chain(self.deferred().iter());
        let w = Widths {
            name: listed()
                .map(|t| t.name.as_str().len())
                .chain(self.removed().map(|r| r.tool.name.as_str().len()))
                .chain(self.replaced.iter().map(|r| r.name.as_str().len()))
                .max()
                .unwrap_or(0),
            origin: listed()
                .map(|t| t.origin.to_string().len())
                .max()
                .unwrap_or(0),
        };
        write_tools(f, "advertised", self.advertised(), w)?;
        if self.executable() == self.advertised() {
            writeln!(f, "executable: same as advertised")?;
        } else {
            write_tools(f, "executable", self.executable(), w)?;
        }
        write_tools(f, "deferred", self.deferred(), w)?;
        writeln!(f, "removed ({}):", self.removed.len())?;
        for r in self.removed() {
            let name = r.tool.name.as_str();
            writeln!(f, "  {name:<0$}  {1:<4}  {2}", w.name, r.step, r.reason)?;
        }
        if !self.replaced.is_empty() {
            writeln!(f, "replaced ({}):", self.replaced.len())?;
            for r in &self.replaced {
                let name = r.name.as_str();
                let step = Step::R1;
                writeln!(
                    f,
                    "  {name:<0$}  {step:<4}  {1} replaced by {2}",
                    w.name, r.previous, r.by
                )?;
            }
        }
        write!(f, "skills ({}):", self.skills.len())?;
        for s in &self.skills {
            write!(f, " {}", s.name)?;
        }
        writeln!(f)?;
        if !self.warnings.is_empty() {
            writeln!(f, "warnings ({}):", self.warnings.len())?;
            for w in &self.warnings {
                writeln!(f, "  - {w}")?;
            }
        }
        Ok(())
    }
}

/// One tool as the JSON form lists it.
struct ToolEntry<'a>(&'a ToolDefinition);

impl Serialize for ToolEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", &self.0.name)?;
        m.serialize_entry("origin", &self.0.origin.to_string())?;
        m.serialize_entry("read_only", &self.0.is_read_only())?;
        m.end()
    }
}

/// A list of tools as the JSON form lists them.
fn entries(list: Tools<'_>) -> Listed<impl Iterator<Item = ToolEntry<'_>> + Clone> {
    Listed(list.into_iter().map(|t| ToolEntry(t)))
}

/// A sequence the pool lists lazily (its tools, its removals), for
/// `Debug` and for the JSON form.
struct Listed<I>(I);

impl<I> Serialize for Listed<I>
where
    I: Iterator + Clone,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.clone())
    }
}

impl<I> fmt::Debug for Listed<I>
where
    I: Iterator + Clone,
    I::Item: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.clone()).finish()
    }
}

impl Serialize for Removed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", &self.tool.name)?;
        m.serialize_entry("step", &self.step.to_string())?;
        m.serialize_entry("reason", &self.reason.to_string())?;
        m.end()
    }
}

impl Serialize for Replaced {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("previous", &self.previous.to_string())?;
        m.serialize_entry("by", &self.by.to_string())?;
        m.end()
    }
}

impl ResolvedPool {
    /// Writes the pool's JSON fields into an open map (the agent report
    /// adds `agent` and `role` before them).
    pub(crate) fn serialize_fields<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        m.serialize_entry("advertised", &entries(self.advertised()))?;
        m.serialize_entry("executable", &entries(self.executable()))?;
        m.serialize_entry("deferred", &entries(self.deferred()))?;
        m.serialize_entry("removed", &Listed(self.removed()))?;
        m.serialize_entry("replaced", &self.replaced)?;
        let skills: Vec<&SkillName> = self.skills.iter().map(|s| &s.name).collect();
        m.serialize_entry("skills", &skills)?;
        let warnings: Vec<String> = self.warnings.iter().map(ToString::to_string).collect();
        m.serialize_entry("warnings", &warnings)
    }
}

impl Serialize for ResolvedPool {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(7))?;
        self.serialize_fields(&mut m)?;
        m.end()
    }
}
