//! A bounded memo of resolved pools: identical resolver inputs resolve once.
//!
//! [`resolve`] is pure, so a pool computed once for an input is the pool of
//! every equal input. Most subagents of a fan-out share a type and
//! capabilities; a [`PoolMemo`] held by the caller for a session answers
//! them from the first one's pool.
//!
//! An entry is found by a 64-bit fingerprint of the input (FNV-1a's step over each
//! definition's precomputed name hash, origin, annotations and defer flag,
//! the patterns, the skills, the policy and the builtins without a
//! service) and then confirmed by comparing
//! the whole input with the one stored: definitions by pointer first, by
//! value when the pointers differ. A fingerprint collision or a definition
//! changed behind the same name (a reloaded agent type) is therefore a
//! miss, never a wrong pool. Fork inputs are not memoized: a fork's pool is
//! its parent's advertised list and one filter over it.
//!
//! The memo keeps at most `capacity` entries and forgets the least
//! recently used one first. It holds no clock, no lock and no seeded hash:
//! the same calls in the same order give the same pools and the same
//! hits, and callers that share it across threads wrap it in their own lock.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use zr_caps::{EffectiveCapabilities, SkillView, ToolList, ToolPattern};
use zr_types::{SkillDefinition, ToolName, stable_hash};

use crate::error::ResolveError;
use crate::input::ResolveInput;
use crate::policy::ResolvePolicy;
use crate::pool::ResolvedPool;
use crate::resolve::resolve;
use crate::role::Role;

/// The number of entries [`PoolMemo::default`] keeps.
pub const DEFAULT_MEMO_CAPACITY: usize = 64;

/// A bounded, least-recently-used memo of [`resolve`]'s answers.
///
/// ```
/// use zr_caps::{derive, AgentCapabilities, AgentOptions};
/// use zr_resolve::{default_builtins, resolve, DerivedKind, PoolMemo, ResolveInput, ResolvePolicy, Role};
///
/// let builtins = default_builtins();
/// let caps = derive(&AgentOptions::default(), &AgentCapabilities::default());
/// let policy = ResolvePolicy::default();
/// let role = Role::Derived { kind: DerivedKind::Explore, background: false };
/// let input = ResolveInput::new(role, &builtins, &caps, &[], &policy);
/// let mut memo = PoolMemo::new(8);
/// let first = memo.resolve(&input).unwrap();
/// let again = memo.resolve(&input).unwrap();
/// assert!(std::sync::Arc::ptr_eq(&first, &again));
/// assert_eq!(*first, resolve(&input).unwrap());
/// assert_eq!((memo.hits(), memo.misses()), (1, 1));
/// ```
#[derive(Debug)]
pub struct PoolMemo {
    capacity: usize,
    /// Least recently used first.
    entries: Vec<Entry>,
    hits: u64,
    misses: u64,
}

#[derive(Debug)]
struct Entry {
    fingerprint: u64,
    input: OwnedInput,
    pool: Arc<ResolvedPool>,
}

/// What a memoized pool was resolved from, kept to confirm a hit.
#[derive(Debug)]
struct OwnedInput {
    role: Role,
    builtins: ToolList,
    capabilities: EffectiveCapabilities,
    skills: Vec<Arc<SkillDefinition>>,
    policy: ResolvePolicy,
    /// [`ResolveInput::no_service`]: the same definitions with and without
    /// a service are different pools.
    no_service: Vec<ToolName>,
    /// [`ResolveInput::depth`]: R4 reads it.
    depth: crate::depth::Depth,
}

impl Default for PoolMemo {
    fn default() -> Self {
        Self::new(DEFAULT_MEMO_CAPACITY)
    }
}

impl PoolMemo {
    /// A memo of at most `capacity` pools (0 memoizes nothing).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Vec::with_capacity(capacity.min(DEFAULT_MEMO_CAPACITY)),
            hits: 0,
            misses: 0,
        }
    }

    /// The pool of `input`: the memoized one if an equal input was
    /// resolved before, otherwise [`resolve`]'s answer, remembered.
    /// Errors are not remembered.
    ///
    /// # Errors
    ///
    /// As [`resolve`].
    pub fn resolve(&mut self, input: &ResolveInput<'_>) -> Result<Arc<ResolvedPool>, ResolveError> {
        if let Some(pool) = self.get(input) {
            return Ok(pool);
        }
        let pool = Arc::new(resolve(input)?);
        self.insert(input, Arc::clone(&pool));
        Ok(pool)
    }

    /// The memoized pool of `input`, if any; counts a hit or a miss. For
    /// callers that resolve outside their lock: `get`, then [`resolve`],
    /// then [`PoolMemo::insert`].
    pub fn get(&mut self, input: &ResolveInput<'_>) -> Option<Arc<ResolvedPool>> {
        if !memoizable(input) || self.capacity == 0 {
            self.misses += 1;
            return None;
        }
        let fingerprint = fingerprint(input);
        let found = self
            .entries
            .iter()
            .rposition(|e| e.fingerprint == fingerprint && e.input.same_as(input));
        match found {
            Some(at) => {
                self.hits += 1;
                // Most recently used last.
                let entry = self.entries.remove(at);
                let pool = Arc::clone(&entry.pool);
                self.entries.push(entry);
                Some(pool)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Remembers `pool` as the pool of `input`, forgetting the least
    /// recently used entry when full. Does nothing for a fork's input or
    /// when an equal input is already remembered (another caller resolved
    /// it first).
    pub fn insert(&mut self, input: &ResolveInput<'_>, pool: Arc<ResolvedPool>) {
        if !memoizable(input) || self.capacity == 0 {
            return;
        }
        let fingerprint = fingerprint(input);
        if self
            .entries
            .iter()
            .any(|e| e.fingerprint == fingerprint && e.input.same_as(input))
        {
            return;
        }
        if self.entries.len() >= self.capacity {
            self.entries.remove(0);
        }
        self.entries.push(Entry {
            fingerprint,
            input: OwnedInput::of(input),
            pool,
        });
    }

    /// How many look-ups found a pool.
    #[must_use]
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// How many look-ups found none (each then resolved).
    #[must_use]
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// How many pools are remembered now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no pool is remembered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Forks depend on their parent's pool, which the memo does not key on.
fn memoizable(input: &ResolveInput<'_>) -> bool {
    !matches!(input.role, Role::Fork { .. })
}

impl OwnedInput {
    fn of(input: &ResolveInput<'_>) -> Self {
        Self {
            role: input.role,
            builtins: Arc::clone(input.builtins),
            capabilities: input.capabilities.clone(),
            skills: input.skills.to_vec(),
            policy: input.policy.clone(),
            no_service: input.no_service.to_vec(),
            depth: input.depth,
        }
    }

    /// Whether `input` is equal to this one in everything the resolver
    /// reads (a non-fork input's parent is not read).
    fn same_as(&self, input: &ResolveInput<'_>) -> bool {
        let caps = input.capabilities;
        let mine = &self.capabilities;
        self.role == input.role
            && same_list(&self.builtins, input.builtins)
            && same_list(&mine.custom_tools, &caps.custom_tools)
            && same_list(&mine.connection_tools, &caps.connection_tools)
            && mine.skills == caps.skills
            && mine.allowed_tools == caps.allowed_tools
            && mine.disallowed_tools == caps.disallowed_tools
            && mine.session_disallowed_tools == caps.session_disallowed_tools
            && same_list(&self.skills, input.skills)
            && self.policy == *input.policy
            && self.no_service == input.no_service
            && self.depth == input.depth
    }
}

/// Element-wise equality, by pointer first (the whole list's, then each
/// element's): agents that share a `ToolList` compare in one step.
fn same_list<T: PartialEq>(a: &[Arc<T>], b: &[Arc<T>]) -> bool {
    std::ptr::eq(a, b)
        || a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| Arc::ptr_eq(x, y) || **x == **y)
}

/// FNV-1a's step, 64 bits, taken a word at a time (integers whole, bytes
/// eight at a time, little-endian): the same fingerprint on every run and
/// machine, one multiplication per word rather than per byte. It only
/// finds candidates; [`OwnedInput::same_as`] decides.
struct Fnv(u64);

impl Fnv {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(Self::PRIME);
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut le = [0; 8];
            le.copy_from_slice(word);
            self.word(u64::from_le_bytes(le));
        }
        for &b in words.remainder() {
            self.word(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }
}

/// The input's fingerprint. Cheap by design (no schema or description is
/// read): a name's hash was computed when the name was made, so this is a
/// few words per definition; [`OwnedInput::same_as`] decides.
fn fingerprint(input: &ResolveInput<'_>) -> u64 {
    let mut h = Fnv(stable_hash(b"zr-resolve pool memo"));
    input.role.hash(&mut h);
    let caps = input.capabilities;
    for list in [
        input.builtins,
        &caps.custom_tools[..],
        &caps.connection_tools[..],
    ] {
        h.write_usize(list.len());
        for tool in list {
            h.write_u64(tool.name.stable_hash());
            tool.origin.hash(&mut h);
            tool.annotations.hash(&mut h);
            tool.defer.hash(&mut h);
        }
    }
    match &caps.skills {
        SkillView::All => h.write_u8(0),
        SkillView::Only(names) => {
            h.write_u8(1);
            names.hash(&mut h);
        }
    }
    let patterns = |h: &mut Fnv, list: &[ToolPattern]| {
        h.write_usize(list.len());
        list.iter().for_each(|p| p.hash(h));
    };
    match &caps.allowed_tools {
        Some(allowed) => {
            h.write_u8(1);
            patterns(&mut h, allowed);
        }
        None => h.write_u8(0),
    }
    patterns(&mut h, &caps.disallowed_tools);
    patterns(&mut h, &caps.session_disallowed_tools);
    h.write_usize(input.skills.len());
    for skill in input.skills {
        skill.name.hash(&mut h);
    }
    let policy = input.policy;
    policy.lazy.hash(&mut h);
    policy.derived_blocklist.hash(&mut h);
    policy.background_allowlist.hash(&mut h);
    policy.delegation.hash(&mut h);
    policy.max_depth.hash(&mut h);
    input.depth.hash(&mut h);
    h.write_usize(input.no_service.len());
    for name in input.no_service {
        h.write_u64(name.stable_hash());
    }
    h.finish()
}

#[cfg(test)]
mod tests;
