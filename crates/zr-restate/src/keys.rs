//! The Restate names and keys of zr's objects that more than one module
//! needs: the subagent object's name and its key.

use zr_engine::SubagentSpec;
use zr_types::SessionId;

/// The Restate name of the subagent object.
pub const AGENT_OBJECT: &str = "ZrAgent";

/// The key of the invocation of the subagent `spec` describes, in
/// `session`: `{session}/{agent id}`.
pub(crate) fn agent_key(session: &SessionId, spec: &SubagentSpec) -> String {
    format!("{session}/{}", spec.agent)
}
