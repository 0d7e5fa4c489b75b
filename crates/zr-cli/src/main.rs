//! zr
fn main() {}
