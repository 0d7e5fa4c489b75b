//! A small deterministic name index for R1 assembly.
//!
//! Open addressing keyed by each name's precomputed `stable_hash`: no random seed, no
//! iteration (only look-ups), so nothing about it can change the resolver's
//! output between runs. A `BTreeMap<&str, usize>` did the same job at about
//! ten times the cost on 20,000-tool pools (string comparisons on every
//! level of the tree).

use zr_types::ToolName;

const EMPTY: u32 = u32::MAX;

/// Maps names to positions in a pool.
pub(crate) struct NameIndex {
    /// Each slot holds a position, or `EMPTY`.
    slots: Vec<u32>,
    /// The hash of each slot's name, to skip most string comparisons.
    hashes: Vec<u32>,
    mask: usize,
}

impl NameIndex {
    /// An index for up to `n` names.
    pub(crate) fn with_capacity(n: usize) -> Self {
        let size = (n.max(4) * 2).next_power_of_two();
        Self {
            slots: vec![EMPTY; size],
            hashes: vec![0; size],
            mask: size - 1,
        }
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
        // Truncation is intended: the low bits pick the slot, 32 bits are
        // kept to compare.
        #[allow(clippy::cast_possible_truncation)]
        let short = hash as u32;
        #[allow(clippy::cast_possible_truncation)]
        let mut slot = (hash as usize) & self.mask;
        loop {
            match self.slots[slot] {
                EMPTY => {
                    self.slots[slot] =
                        u32::try_from(position).expect("a pool never holds 4 billion tools");
                    self.hashes[slot] = short;
                    return None;
                }
                at if self.hashes[slot] == short && name_at(at as usize) == name => {
                    return Some(at as usize);
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
