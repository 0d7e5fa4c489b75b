//! One agent's loop: the agent ready to run ([`agent_run`]), its turns
//! ([`run`]) and the tool calls of a turn ([`exec`]).

pub(crate) mod agent_run;
pub(crate) mod exec;
pub(crate) mod run;
