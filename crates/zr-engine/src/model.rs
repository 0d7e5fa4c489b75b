//! Which model an agent runs on, what its calls cost, the tree's budget,
//! and the shape its answer must have.

pub(crate) mod agent_model;
pub(crate) mod budget;
pub(crate) mod price;
pub(crate) mod structured;
