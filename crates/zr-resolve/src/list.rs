//! A pool's lists as positions into the lists it was resolved from.
//!
//! A pool of 20,000 tools that held an `Arc<ToolDefinition>` per tool would
//! change every definition's reference count when it is built and again
//! when it is dropped: a locked instruction on the definition's own cache
//! line, which in a large pool is a miss each time. A [`ResolvedPool`]
//! holds instead the three source lists (builtins, custom tools,
//! connection tools, one count each) and a [`Slot`] per tool; [`Tools`]
//! reads the definitions through them.
//!
//! [`ResolvedPool`]: crate::ResolvedPool

use std::fmt;
use std::iter::FusedIterator;
use std::ops::Index;
use std::sync::Arc;

use zr_caps::ToolList;
use zr_types::ToolDefinition;

/// Where one tool of a pool is: its source list (two high bits) and its
/// index in that list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot(u32);

/// Bits of a [`Slot`] for the index.
const INDEX_BITS: u32 = 30;

impl Slot {
    /// Builtins, custom tools, connection tools.
    pub(crate) const BUILTINS: usize = 0;
    pub(crate) const CUSTOM: usize = 1;
    pub(crate) const CONNECTION: usize = 2;

    /// The slot of `list`'s entry `index`.
    ///
    /// # Panics
    ///
    /// When a list holds 2^30 tools or more (a billion definitions would
    /// not fit in memory first).
    pub(crate) fn new(list: usize, index: usize) -> Self {
        let index = u32::try_from(index)
            .ok()
            .filter(|i| *i < 1 << INDEX_BITS)
            .expect("a tool list never holds 2^30 tools");
        let list = u32::try_from(list).expect("three source lists");
        Self(list << INDEX_BITS | index)
    }

    fn list(self) -> usize {
        (self.0 >> INDEX_BITS) as usize
    }

    fn index(self) -> usize {
        (self.0 & ((1 << INDEX_BITS) - 1)) as usize
    }
}

/// The lists a pool's slots point into, in [`Slot`]'s order.
#[derive(Debug, Clone)]
pub(crate) struct Sources([ToolList; 3]);

impl Sources {
    pub(crate) fn new(builtins: ToolList, custom: ToolList, connection: ToolList) -> Self {
        Self([builtins, custom, connection])
    }

    /// The definition at `slot`.
    pub(crate) fn get(&self, slot: Slot) -> &Arc<ToolDefinition> {
        &self.0[slot.list()][slot.index()]
    }
}

/// Tools of a pool, in order: a view of its definitions that borrows the
/// pool. Iterates, indexes and compares like a slice of
/// `Arc<ToolDefinition>`; [`Tools::to_vec`] copies it out.
#[derive(Clone, Copy)]
pub struct Tools<'a> {
    sources: &'a Sources,
    slots: &'a [Slot],
}

impl<'a> Tools<'a> {
    pub(crate) fn new(sources: &'a Sources, slots: &'a [Slot]) -> Self {
        Self { sources, slots }
    }

    /// How many tools.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The tool at `index`, if there is one.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<&'a Arc<ToolDefinition>> {
        let sources = self.sources;
        self.slots.get(index).map(|slot| sources.get(*slot))
    }

    /// The first tool.
    #[must_use]
    pub fn first(&self) -> Option<&'a Arc<ToolDefinition>> {
        self.get(0)
    }

    /// The tools in order.
    #[must_use]
    pub fn iter(&self) -> ToolsIter<'a> {
        ToolsIter {
            sources: self.sources,
            slots: self.slots.iter(),
        }
    }

    /// The tools as an owned list (one reference count each).
    #[must_use]
    pub fn to_vec(&self) -> Vec<Arc<ToolDefinition>> {
        self.iter().cloned().collect()
    }
}

impl Index<usize> for Tools<'_> {
    type Output = Arc<ToolDefinition>;

    fn index(&self, index: usize) -> &Arc<ToolDefinition> {
        self.sources.get(self.slots[index])
    }
}

impl PartialEq for Tools<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for Tools<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Tools<'a> {
    type Item = &'a Arc<ToolDefinition>;
    type IntoIter = ToolsIter<'a>;

    fn into_iter(self) -> ToolsIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Tools<'a> {
    type Item = &'a Arc<ToolDefinition>;
    type IntoIter = ToolsIter<'a>;

    fn into_iter(self) -> ToolsIter<'a> {
        self.iter()
    }
}

/// The iterator of [`Tools`].
#[derive(Clone)]
pub struct ToolsIter<'a> {
    sources: &'a Sources,
    slots: std::slice::Iter<'a, Slot>,
}

impl<'a> Iterator for ToolsIter<'a> {
    type Item = &'a Arc<ToolDefinition>;

    fn next(&mut self) -> Option<Self::Item> {
        let sources = self.sources;
        self.slots.next().map(|slot| sources.get(*slot))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl DoubleEndedIterator for ToolsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let sources = self.sources;
        self.slots.next_back().map(|slot| sources.get(*slot))
    }
}

impl ExactSizeIterator for ToolsIter<'_> {}

impl FusedIterator for ToolsIter<'_> {}

impl fmt::Debug for ToolsIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

#[cfg(test)]
mod tests;
