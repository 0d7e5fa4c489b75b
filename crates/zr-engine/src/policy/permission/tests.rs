//! Tests of the mode clamp (C4) as a law over the lattice, and of the
//! denial count.

use proptest::prelude::*;

use super::*;

fn mode() -> impl Strategy<Value = PermissionMode> {
    proptest::sample::select(PermissionMode::ALL.to_vec())
}

proptest! {
    /// C4: a subagent (typed or fork) is never wider than its parent, and
    /// takes its declared mode whenever that is at least as strict.
    #[test]
    fn prop_a_child_is_never_wider_than_its_parent(
        root in mode(),
        declared in proptest::option::of(mode()),
    ) {
        let child = effective_mode(root, declared);
        prop_assert!(child <= root);
        match declared {
            Some(d) => prop_assert_eq!(child, d.min(root)),
            None => prop_assert_eq!(child, root, "a fork or an undeclared type keeps its parent's mode"),
        }
        // A fork of the child (no declared mode) keeps the child's.
        prop_assert_eq!(effective_mode(child, None), child);
    }

    /// Clamping again with the same declaration changes nothing, and a
    /// stricter parent never gives a wider child (monotone).
    #[test]
    fn prop_the_clamp_is_idempotent_and_monotone(
        a in mode(),
        b in mode(),
        declared in proptest::option::of(mode()),
    ) {
        let (low, high) = (a.min(b), a.max(b));
        prop_assert!(effective_mode(low, declared) <= effective_mode(high, declared));
        let once = effective_mode(high, declared);
        prop_assert_eq!(effective_mode(once, declared), once);
    }
}

#[test]
fn the_lattice_is_ordered_as_c4_says() {
    use PermissionMode::*;
    assert_eq!(
        PermissionMode::ALL,
        [Plan, DontAsk, Default, Auto, AcceptEdits, BypassPermissions]
    );
    assert_eq!(effective_mode(Default, Some(BypassPermissions)), Default);
    assert_eq!(effective_mode(BypassPermissions, Some(Plan)), Plan);
}

fn limits(consecutive: u32, total: u32) -> PermissionConfig {
    PermissionConfig {
        max_consecutive_denials: consecutive,
        max_total_denials: total,
        ..PermissionConfig::default()
    }
}

#[test]
fn three_denials_in_a_row_stop_an_agent_and_an_allowed_call_resets_the_streak() {
    let config = limits(3, 20);
    let denials = Denials::default();
    denials.denied(&config, "a");
    denials.denied(&config, "b");
    denials.allowed();
    denials.denied(&config, "c");
    denials.denied(&config, "d");
    assert_eq!(denials.stopped(), None);
    denials.denied(&config, "e");
    assert_eq!(
        denials.stopped().as_deref(),
        Some("stopped after 3 consecutive permission denials; the last: e")
    );
    // The first reason stays.
    denials.denied(&config, "f");
    assert_eq!(
        denials.stopped().as_deref(),
        Some("stopped after 3 consecutive permission denials; the last: e")
    );
}

#[test]
fn the_total_limit_counts_across_streaks_and_zero_is_no_limit() {
    let config = limits(3, 4);
    let denials = Denials::default();
    for reason in ["a", "b", "c"] {
        denials.denied(&config, reason);
        denials.allowed();
    }
    assert_eq!(denials.stopped(), None);
    denials.denied(&config, "d");
    assert_eq!(
        denials.stopped().as_deref(),
        Some("stopped after 4 permission denials in total; the last: d")
    );

    let unlimited = limits(0, 0);
    let denials = Denials::default();
    for _ in 0..100 {
        denials.denied(&unlimited, "x");
    }
    assert_eq!(denials.stopped(), None);
}
