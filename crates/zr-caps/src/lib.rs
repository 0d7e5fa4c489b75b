//! Capability model.
