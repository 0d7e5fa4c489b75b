//! The resolver from Rust (the README's snippet): the tool pool of an
//! `Explore` subagent with default options and capabilities, printed with
//! why every other tool is gone; then a `PoolMemo` that resolves equal
//! inputs once.
//!
//! Run it with `cargo run -p zr-resolve --example 11_resolver`. No model,
//! no I/O: the resolver is a pure function.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use zr_caps::{AgentCapabilities, AgentOptions, derive};
use zr_resolve::{
    DerivedKind, PoolMemo, ResolveInput, ResolvePolicy, Role, default_builtins, resolve,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let builtins = default_builtins();
    let caps = derive(&AgentOptions::default(), &AgentCapabilities::default());
    let policy = ResolvePolicy::default();
    let role = Role::Derived {
        kind: DerivedKind::Explore,
        background: false,
    };
    let pool = resolve(&ResolveInput::new(role, &builtins, &caps, &[], &policy))?;
    println!("{pool}");

    // At most 64 pools, least recently used out first.
    let mut memo = PoolMemo::new(64);
    let first = memo.resolve(&ResolveInput::new(role, &builtins, &caps, &[], &policy))?;
    let again = memo.resolve(&ResolveInput::new(role, &builtins, &caps, &[], &policy))?;
    println!(
        "memo: the second resolve is the first pool: {}",
        std::sync::Arc::ptr_eq(&first, &again)
    );
    Ok(())
}
