//! R6 Explore and Plan: keep a tool only if it is read-only, or it is the
//! builtin `Bash` (origin Builtin; a custom tool that replaced Bash gets no
//! exception). MCP `readOnlyHint: true` means read-only; tools without
//! annotations are not.

use zr_types::ToolOrigin;

use crate::draft::Draft;
use crate::pool::{RemovalReason, Step};

/// `kind` is `explore` or `plan`, for the reason.
pub(crate) fn explore_and_plan(kind: &'static str, pool: &mut Draft) {
    pool.remove(Step::R6, |tool| {
        let builtin_bash = tool.origin == ToolOrigin::Builtin && tool.name.is("Bash");
        (!tool.is_read_only() && !builtin_bash).then_some(RemovalReason::NotReadOnly { kind })
    });
}
