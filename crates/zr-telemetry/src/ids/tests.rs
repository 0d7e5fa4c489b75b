//! Ids are never 0 and not repeated.

use std::collections::BTreeSet;

use super::*;

#[test]
fn ids_are_distinct_and_never_zero() {
    let ids = Ids::with_seed(0);
    let spans: BTreeSet<u64> = (0..10_000).map(|_| ids.span_id()).collect();
    assert_eq!(spans.len(), 10_000);
    assert!(!spans.contains(&0));
    let traces: BTreeSet<u128> = (0..1_000).map(|_| ids.trace_id()).collect();
    assert_eq!(traces.len(), 1_000);
}

#[test]
fn two_seeds_make_different_ids() {
    assert_ne!(Ids::with_seed(1).span_id(), Ids::with_seed(2).span_id());
    assert_ne!(Ids::new().trace_id(), Ids::new().trace_id());
}
