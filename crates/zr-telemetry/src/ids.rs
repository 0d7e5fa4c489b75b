//! Trace and span ids: random-looking, unique within the process (each is
//! the SplitMix64 step of a counter, a bijection, from a seed that
//! differs between processes), without a random number generator's
//! state or a lock.

use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};

/// SplitMix64's increment (the golden ratio's 64-bit fraction).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Makes ids.
#[derive(Debug)]
pub(crate) struct Ids {
    seed: u64,
    next: AtomicU64,
}

impl Ids {
    /// Ids seeded from the process's hash keys (random per process), its
    /// id and the time.
    pub(crate) fn new() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u64(crate::record::now());
        Self::with_seed(hasher.finish())
    }

    pub(crate) fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            next: AtomicU64::new(0),
        }
    }

    /// A span id: never 0 (OTLP's "no span"), never the same twice in
    /// 2^64 calls.
    pub(crate) fn span_id(&self) -> u64 {
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let id = mix(self.seed.wrapping_add(n.wrapping_mul(GOLDEN)));
            if id != 0 {
                return id;
            }
        }
    }

    /// A trace id: two span ids, so never 0 either.
    pub(crate) fn trace_id(&self) -> u128 {
        u128::from(self.span_id()) << 64 | u128::from(self.span_id())
    }
}

/// SplitMix64's output function: a bijection on `u64`.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
