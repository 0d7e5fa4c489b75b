//! A small deterministic name index for R1 assembly.
//!
//! Open addressing keyed by each name's precomputed `stable_hash`: no random seed, no
//! iteration (only look-ups), so nothing about it can change the resolver's
//! output between runs. A `BTreeMap<&str, usize>` did the same job at about
//! ten times the cost on 20,000-tool pools (string comparisons on every
//! level of the tree).
//!
//! Each slot is one `u64` (32 bits of the hash, the position plus one; zero
//! is empty), so a probe reads one cache line, and the table is at most
//! 2/3 full: 256 KiB for 20,000 names.

use zr_types::ToolName;

/// Maps names to positions in a pool.
pub(crate) struct NameIndex {
    /// Each slot holds `hash << 32 | position + 1`, or 0.
    slots: Vec<u64>,
    mask: usize,
}

impl NameIndex {
    /// An index for up to `n` names.
    pub(crate) fn with_capacity(n: usize) -> Self {
        let size = (n.max(4) + n / 2).next_power_of_two();
        Self {
            slots: vec![0; size],
            mask: size - 1,
        }
    }

    /// The first slot `name` is looked for in: read ahead of
    /// [`NameIndex::find_or_insert`] so that its cache miss overlaps with
    /// others.
    pub(crate) fn first_slot(&self, name: &ToolName) -> u64 {
        // Truncation is intended: the low bits pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let slot = (name.stable_hash() as usize) & self.mask;
        self.slots[slot]
    }

    /// Finds `name`, or inserts it at `position`. `name_at` gives the name
    /// stored at a position. Returns the existing position when the name
    /// was already there.
    pub(crate) fn find_or_insert<'a>(
        &mut self,
        name: &ToolName,
        position: usize,
        name_at: impl Fn(usize) -> &'a ToolName,
    ) -> Option<usize> {
        let hash = name.stable_hash();
        // Truncation is intended: the low bits pick the slot, the high 32
        // bits are kept to compare.
        #[allow(clippy::cast_possible_truncation)]
        let mut slot = (hash as usize) & self.mask;
        let short = hash >> 32;
        loop {
            match self.slots[slot] {
                0 => {
                    let stored =
                        u32::try_from(position + 1).expect("a pool never holds 4 billion tools");
                    self.slots[slot] = short << 32 | u64::from(stored);
                    return None;
                }
                entry if entry >> 32 == short => {
                    let at = (entry & u64::from(u32::MAX)) as usize - 1;
                    if name_at(at) == name {
                        return Some(at);
                    }
                    slot = (slot + 1) & self.mask;
                }
                _ => slot = (slot + 1) & self.mask,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_inserted_and_only_that() {
        let names: Vec<ToolName> = (0..1001)
            .map(|i| format!("tool{i}").parse().unwrap())
            .collect();
        let mut index = NameIndex::with_capacity(names.len());
        for (i, n) in names.iter().enumerate().take(1000) {
            assert_eq!(index.find_or_insert(n, i, |at| &names[at]), None);
        }
        for (i, n) in names.iter().enumerate().take(1000) {
            assert_eq!(index.find_or_insert(n, 99_999, |at| &names[at]), Some(i));
        }
        assert_eq!(
            index.find_or_insert(&names[1000], 1000, |at| &names[at]),
            None
        );
    }
}
