//! R8 Lazy split, only when `FindTool` survived the steps above: tools
//! marked deferred move, in pool order, from the advertised pool to the
//! FindTool directory. Deferred are: builtins flagged so in the registry,
//! custom tools with `defer: true`, and MCP tools as the lazy policy says
//! (`"always"`, the default; `"never"`; or `{"auto": BYTES}`: all of them
//! once their serialised definitions together exceed BYTES), where a
//! per-server or per-tool `defer` setting wins. If nothing was deferred,
//! `FindTool` is removed too. Without `FindTool` every tool stays
//! advertised.

use zr_types::{ToolDefinition, ToolOrigin};

use crate::draft::Draft;
use crate::policy::LazyPolicy;
use crate::pool::{RemovalReason, Step};

pub(crate) fn lazy_split(lazy: LazyPolicy, pool: &mut Draft) {
    if !pool.tools().any(|tool| is_find_tool(tool)) {
        return;
    }
    let by_policy = match lazy {
        LazyPolicy::Always => true,
        LazyPolicy::Never => false,
        LazyPolicy::Auto { bytes } => exceeds(pool, bytes),
    };
    pool.defer(|tool| !is_find_tool(tool) && own_setting(tool).unwrap_or(by_policy));
    if pool.nothing_deferred() {
        pool.remove(Step::R8, |tool| {
            is_find_tool(tool).then_some(RemovalReason::NothingDeferred)
        });
    }
}

fn is_find_tool(tool: &ToolDefinition) -> bool {
    tool.origin == ToolOrigin::Builtin && tool.name.is("FindTool")
}

/// A tool's own setting: the registry's flag, `defer` on a custom tool, a
/// per-server or per-tool setting on an MCP tool. `None` (an MCP tool
/// without one) leaves it to the lazy policy.
fn own_setting(tool: &ToolDefinition) -> Option<bool> {
    match (&tool.origin, tool.defer) {
        (ToolOrigin::Connection { .. }, setting) => setting,
        (ToolOrigin::Builtin | ToolOrigin::Custom, setting) => Some(setting == Some(true)),
    }
}

/// Whether the serialised definitions of the MCP tools the policy decides
/// exceed `bytes` together (counting stops once they do).
fn exceeds(pool: &Draft, bytes: usize) -> bool {
    let mut total = 0usize;
    pool.tools()
        .filter(|tool| own_setting(tool).is_none())
        .any(|tool| {
            total = total.saturating_add(tool.wire_size());
            total > bytes
        })
}
