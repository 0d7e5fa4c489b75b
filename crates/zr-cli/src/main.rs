//! zr
fn main(){}
