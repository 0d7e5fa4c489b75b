//! R1 Assemble: builtins (registry order), then custom tools, then
//! connection tools. A later entry with an earlier entry's name replaces it
//! in place. The reserved names `Task`, `MultiTask`, `FindTool`, `Skill`
//! cannot be defined by custom or connection tools:
//! `ResolveError::ReservedName`.
//!
//! Also checked here: a definition carries the origin of the list it came
//! in (it cannot claim to be a builtin to get the builtin rules), and
//! `mcp__` names belong to connection tools and only to them.
//!
//! A builtin whose runtime service is not configured (web search,
//! ask-user, config) is not offered: it leaves the pool at R1 with "no
//! service configured" ([`crate::ResolveInput::no_service`]), after
//! replacement, so that a custom or connection tool that took its name
//! stays.

use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use indexmap::IndexMap;
use indexmap::map::Entry;
use zr_types::{RESERVED_TOOL_NAMES, ToolDefinition, ToolName, ToolOrigin};

use crate::draft::Draft;
use crate::error::ResolveError;
use crate::input::ResolveInput;
use crate::list::{Slot, Sources};
use crate::pool::{RemovalReason, Replaced, Step};

/// Positions by name, in insertion order.
type ByName<'a> = IndexMap<Key<'a>, Slot, BuildHasherDefault<KeyHasher>>;

/// A name as [`ByName`]'s key, hashed by the hash it was made with
/// ([`ToolName::stable_hash`]): no name's text is hashed again, and nothing
/// is seeded (the map is read in insertion order anyway).
#[derive(PartialEq, Eq)]
struct Key<'a>(&'a ToolName);

impl Hash for Key<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.stable_hash());
    }
}

/// Hands on the one word [`Key`] writes.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }
}

/// Builtins, then custom tools, then connection tools, a later name
/// replacing an earlier one in place; every replacement is recorded.
///
/// # Errors
///
/// The first entry, in that order, that [`check_entry`] refuses.
pub(crate) fn assemble(input: &ResolveInput<'_>) -> Result<Draft, ResolveError> {
    let caps = input.capabilities;
    let sources = Sources::new(
        Arc::clone(input.builtins),
        Arc::clone(&caps.custom_tools),
        Arc::clone(&caps.connection_tools),
    );
    let lists = [
        (Slot::BUILTINS, Source::Builtins, input.builtins),
        (Slot::CUSTOM, Source::Custom, &caps.custom_tools),
        (Slot::CONNECTION, Source::Connection, &caps.connection_tools),
    ];
    let total = lists.iter().map(|(_, _, list)| list.len()).sum();
    let mut pool = ByName::with_capacity_and_hasher(total, BuildHasherDefault::default());
    let mut replaced = Vec::new();
    for (list, source, tools) in lists {
        for (index, tool) in tools.iter().enumerate() {
            check_entry(tool, source)?;
            let slot = Slot::new(list, index);
            match pool.entry(Key(&tool.name)) {
                Entry::Occupied(mut earlier) => {
                    let previous = sources.get(earlier.insert(slot));
                    replaced.push(Replaced {
                        name: tool.name.clone(),
                        previous: previous.origin.clone(),
                        by: tool.origin.clone(),
                    });
                }
                Entry::Vacant(new) => {
                    new.insert(slot);
                }
            }
        }
    }
    let pool = pool.into_values().collect();
    Ok(Draft::assembled(sources, pool, replaced))
}

/// Removes the builtins whose runtime service is not configured.
pub(crate) fn remove_without_service(no_service: &[ToolName], pool: &mut Draft) {
    if no_service.is_empty() {
        return;
    }
    pool.remove(Step::R1, |tool| {
        (tool.origin == ToolOrigin::Builtin && no_service.contains(&tool.name))
            .then_some(RemovalReason::NoService)
    });
}

/// The list a definition was given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Builtins,
    Custom,
    Connection,
}

impl Source {
    fn label(self) -> &'static str {
        match self {
            Self::Builtins => "builtin registry",
            Self::Custom => "custom_tools",
            Self::Connection => "connection_tools",
        }
    }
}

/// One entry's origin, reserved name and `mcp__` prefix.
fn check_entry(tool: &ToolDefinition, source: Source) -> Result<(), ResolveError> {
    let origin_ok = match source {
        Source::Builtins => tool.origin == ToolOrigin::Builtin,
        Source::Custom => tool.origin == ToolOrigin::Custom,
        Source::Connection => matches!(tool.origin, ToolOrigin::Connection { .. }),
    };
    if !origin_ok {
        return Err(ResolveError::WrongOrigin {
            name: tool.name.clone(),
            list: source.label(),
            origin: tool.origin.clone(),
        });
    }
    if source != Source::Builtins && RESERVED_TOOL_NAMES.iter().any(|r| tool.name.is(r)) {
        return Err(ResolveError::ReservedName {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        });
    }
    match (source, tool.name.starts_with("mcp__")) {
        (Source::Connection, false) => Err(ResolveError::ConnectionName {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        }),
        (Source::Builtins | Source::Custom, true) => Err(ResolveError::ReservedPrefix {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        }),
        _ => Ok(()),
    }
}
