//! The memo's bounds and its misses on inputs that differ.

use std::sync::Arc;

use zr_types::{ToolDefinition, ToolName};

use super::*;
use crate::resolve::default_builtins;
use crate::test_input::{EXPLORE, caps_with, custom};

#[test]
fn an_equal_input_made_of_other_allocations_hits() {
    let builtins = default_builtins();
    let policy = ResolvePolicy::default();
    let a = caps_with(vec![custom("search", true)]);
    let b = caps_with(vec![custom("search", true)]);
    let mut memo = PoolMemo::new(4);
    let first = memo
        .resolve(&ResolveInput::new(EXPLORE, &builtins, &a, &[], &policy))
        .unwrap();
    let second = memo
        .resolve(&ResolveInput::new(EXPLORE, &builtins, &b, &[], &policy))
        .unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    assert_eq!((memo.hits(), memo.misses()), (1, 1));
}

#[test]
fn a_definition_changed_behind_the_same_name_misses() {
    let builtins = default_builtins();
    let policy = ResolvePolicy::default();
    let read_only = caps_with(vec![custom("search", true)]);
    let mut writes = ToolDefinition::clone(&custom("search", true));
    writes.description = "now it writes".to_owned();
    let changed = caps_with(vec![Arc::new(writes)]);
    let mut memo = PoolMemo::new(4);
    let first = memo
        .resolve(&ResolveInput::new(
            EXPLORE,
            &builtins,
            &read_only,
            &[],
            &policy,
        ))
        .unwrap();
    let second = memo
        .resolve(&ResolveInput::new(
            EXPLORE,
            &builtins,
            &changed,
            &[],
            &policy,
        ))
        .unwrap();
    assert!(!Arc::ptr_eq(&first, &second));
    assert_eq!(
        second
            .advertised()
            .iter()
            .find(|t| t.name.as_str() == "search")
            .unwrap()
            .description,
        "now it writes"
    );
    assert_eq!((memo.hits(), memo.misses(), memo.len()), (0, 2, 2));
}

#[test]
fn the_least_recently_used_entry_goes_first() {
    let builtins = default_builtins();
    let policy = ResolvePolicy::default();
    let caps: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|n| caps_with(vec![custom(n, true)]))
        .collect();
    let input = |i: usize| ResolveInput::new(EXPLORE, &builtins, &caps[i], &[], &policy);
    let mut memo = PoolMemo::new(2);
    memo.resolve(&input(0)).unwrap();
    memo.resolve(&input(1)).unwrap();
    // 0 used again: 1 is now the oldest.
    memo.resolve(&input(0)).unwrap();
    memo.resolve(&input(2)).unwrap();
    assert_eq!(memo.len(), 2);
    assert!(memo.get(&input(0)).is_some());
    assert!(memo.get(&input(2)).is_some());
    assert!(memo.get(&input(1)).is_none());
}

#[test]
fn forks_and_errors_are_not_remembered() {
    let builtins = default_builtins();
    let policy = ResolvePolicy::default();
    let caps = caps_with(Vec::new());
    let root = resolve(&ResolveInput::new(
        Role::Root,
        &builtins,
        &caps,
        &[],
        &policy,
    ))
    .unwrap();
    let fork = ResolveInput::new(
        Role::Fork { background: false },
        &builtins,
        &caps,
        &[],
        &policy,
    )
    .with_parent(&root);
    let reserved = caps_with(vec![custom("Task", false)]);
    let mut memo = PoolMemo::new(4);
    memo.resolve(&fork).unwrap();
    memo.resolve(&fork).unwrap();
    let bad = ResolveInput::new(EXPLORE, &builtins, &reserved, &[], &policy);
    assert!(memo.resolve(&bad).is_err());
    assert!(memo.resolve(&bad).is_err());
    assert_eq!((memo.hits(), memo.len()), (0, 0));
}

#[test]
fn capacity_zero_memoizes_nothing() {
    let builtins = default_builtins();
    let policy = ResolvePolicy::default();
    let caps = caps_with(Vec::new());
    let input = ResolveInput::new(EXPLORE, &builtins, &caps, &[], &policy);
    let mut memo = PoolMemo::new(0);
    let a = memo.resolve(&input).unwrap();
    let b = memo.resolve(&input).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
    assert_eq!(*a, *b);
    assert!(memo.is_empty());
}

#[test]
fn inputs_that_differ_only_in_the_builtins_without_a_service_miss() {
    let builtins = default_builtins();
    let policy = ResolvePolicy::default();
    let caps = caps_with(Vec::new());
    let none: Vec<ToolName> = Vec::new();
    let search: Vec<ToolName> = vec!["WebSearch".parse().unwrap()];
    let input = |no_service| {
        ResolveInput::new(EXPLORE, &builtins, &caps, &[], &policy).with_no_service(no_service)
    };
    let mut memo = PoolMemo::new(4);
    let with = memo.resolve(&input(&none)).unwrap();
    let without = memo.resolve(&input(&search)).unwrap();
    let named = |pool: &ResolvedPool| -> Vec<String> {
        pool.advertised()
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    };
    assert!(named(&with).contains(&"WebSearch".to_owned()));
    assert!(!named(&without).contains(&"WebSearch".to_owned()));
    assert_eq!((memo.hits(), memo.misses(), memo.len()), (0, 2, 2));
    // Each is still found under its own input.
    assert!(Arc::ptr_eq(
        &memo.resolve(&input(&search)).unwrap(),
        &without
    ));
    assert!(Arc::ptr_eq(&memo.resolve(&input(&none)).unwrap(), &with));
    assert_eq!(memo.hits(), 2);
}
