//! The pool's list views answer as the slices they replace, and a pool is
//! told apart by its definitions, not by where they are held.

use std::sync::Arc;

use zr_caps::EffectiveCapabilities;
use zr_types::ToolDefinition;

use super::*;
use crate::input::ResolveInput;
use crate::policy::ResolvePolicy;
use crate::pool::{RemovalReason, ResolvedPool, Step};
use crate::resolve::{default_builtins, resolve};
use crate::test_input::{EXPLORE, caps_with, custom};

fn explore(builtins: &ToolList, caps: &EffectiveCapabilities) -> ResolvedPool {
    let policy = ResolvePolicy::default();
    resolve(&ResolveInput::new(EXPLORE, builtins, caps, &[], &policy)).unwrap()
}

#[test]
fn a_list_view_reads_like_the_slice_it_replaces() {
    let builtins = default_builtins();
    let caps = caps_with(vec![
        custom("alpha", true),
        custom("write_it", false),
        custom("omega", true),
    ]);
    let pool = explore(&builtins, &caps);
    let advertised = pool.advertised();
    let names: Vec<&str> = advertised.iter().map(|t| t.name.as_str()).collect();

    assert!(names.ends_with(&["alpha", "omega"]), "{names:?}");
    assert_eq!(advertised.len(), names.len());
    assert!(!advertised.is_empty());
    assert_eq!(
        advertised.first().map(|t| t.name.as_str()),
        names.first().copied()
    );
    assert_eq!(advertised[names.len() - 1].name.as_str(), "omega");
    assert!(advertised.get(names.len()).is_none());
    let backwards: Vec<&str> = advertised.iter().rev().map(|t| t.name.as_str()).collect();
    assert!(backwards.iter().rev().eq(names.iter()));
    assert_eq!(advertised.iter().len(), names.len());
    // `to_vec` copies out the same definitions, by pointer.
    let owned = advertised.to_vec();
    assert!(owned.iter().zip(advertised).all(|(a, b)| Arc::ptr_eq(a, b)));
    // The definitions are the caller's own, not copies.
    assert!(Arc::ptr_eq(
        &advertised[names.len() - 1],
        &caps.custom_tools[2]
    ));

    let write_it = pool
        .removed()
        .find(|r| r.tool.name.as_str() == "write_it")
        .expect("Explore removes a tool that is not read-only");
    assert_eq!(write_it.step, Step::R6);
    assert!(matches!(write_it.reason, RemovalReason::NotReadOnly { .. }));
    assert!(Arc::ptr_eq(write_it.tool, &caps.custom_tools[1]));
    // Forwards, backwards and by count alike.
    let removed = pool.removed();
    assert_eq!(removed.len(), removed.clone().count());
    assert!(
        removed
            .clone()
            .rev()
            .eq(removed.collect::<Vec<_>>().into_iter().rev())
    );
}

#[test]
fn pools_are_equal_by_their_definitions_not_by_where_they_are_held() {
    let builtins = default_builtins();
    let a = explore(&builtins, &caps_with(vec![custom("alpha", true)]));
    // Other allocations of equal definitions, another copy of the builtins.
    let copy: ToolList = builtins
        .iter()
        .map(|t| Arc::new(ToolDefinition::clone(t)))
        .collect();
    let b = explore(&copy, &caps_with(vec![custom("alpha", true)]));
    assert_eq!(a, b);
    assert_eq!(a.to_string(), b.to_string());
    // One definition differs: the pools differ.
    let c = explore(&builtins, &caps_with(vec![custom("alpha", false)]));
    assert_ne!(a, c);
    assert_ne!(a.advertised(), c.advertised());
}

#[test]
fn a_slot_keeps_its_list_and_index() {
    for (list, index) in [
        (Slot::BUILTINS, 0),
        (Slot::CUSTOM, 7),
        (Slot::CONNECTION, (1 << 30) - 1),
    ] {
        let slot = Slot::new(list, index);
        assert_eq!((slot.list(), slot.index()), (list, index));
    }
}

#[test]
#[should_panic(expected = "never holds 2^30 tools")]
fn a_slot_refuses_an_index_past_its_bits() {
    let _ = Slot::new(Slot::CUSTOM, 1 << 30);
}
