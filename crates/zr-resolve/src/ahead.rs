//! Reading definitions ahead of use, so that the cache misses of a large
//! pool overlap instead of coming one after another.
//!
//! A pool of 20,000 tools does not fit in a 1 MiB cache: every definition's
//! first read in a pool is a miss. In a loop whose body is long, or that
//! changes a reference count (an atomic instruction, which waits for the
//! reads before it), the processor cannot reach the next definition's read
//! before the current one's miss is served. These helpers read the fields of a
//! short chunk of definitions in a tight loop with nothing depending on
//! them, so that the chunk's misses are in flight at once; the loop that
//! then uses the chunk finds it in cache. Nothing is computed from what
//! they read (the value goes to `black_box`).

use std::hint::black_box;
use std::sync::Arc;

use zr_types::{ToolDefinition, ToolOrigin};

/// How many definitions are read ahead at a time: enough to keep the
/// processor's outstanding misses busy, few enough to stay in L1.
pub(crate) const READ_AHEAD: usize = 16;

/// What the resolver reads of a definition (origin, name hash and length,
/// annotations, defer flag, server hash), folded into one value.
fn touch(tool: &ToolDefinition) -> u64 {
    let server = match &tool.origin {
        ToolOrigin::Connection { server } => server.stable_hash(),
        ToolOrigin::Builtin | ToolOrigin::Custom => 0,
    };
    server
        ^ tool.name.stable_hash()
        ^ tool.name.as_str().len() as u64
        ^ u64::from(tool.annotations.read_only)
        ^ u64::from(tool.defer.unwrap_or(false))
}

/// Reads every definition of `chunk` ([`touch`]).
pub(crate) fn read_ahead(chunk: &[Arc<ToolDefinition>]) {
    black_box(chunk.iter().fold(0, |folded, tool| folded ^ touch(tool)));
}
