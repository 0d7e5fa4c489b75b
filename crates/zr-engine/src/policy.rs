//! What a call may do: the effects boundary ([`boundary`]), permissions
//! ([`permission`]) and the host's hooks ([`hooks`]).

pub(crate) mod boundary;
pub(crate) mod hooks;
pub(crate) mod permission;
