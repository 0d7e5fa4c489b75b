//! Tests of agent and session ids: printing, parsing, order.

use proptest::prelude::*;

use super::*;

#[test]
fn agent_ids_print_as_paths_and_round_trip() {
    let root = AgentId::root();
    let child = root.child(3, "Explore");
    assert_eq!(child.as_str(), "root.0003-explore");
    assert_eq!(child.depth(), 1);
    assert_eq!(child.as_str().parse::<AgentId>().unwrap(), child);
    assert!(root.child(2, "a") < root.child(10, "a"));
    assert!("root.3-x".parse::<AgentId>().is_err());
    assert!("child".parse::<AgentId>().is_err());
}

#[test]
fn siblings_sort_in_start_order_past_9999() {
    let root = AgentId::root();
    assert!(root.child(9_999, "x") < root.child(10_000, "x"));
    assert!(root.child(99_999, "z") < root.child(100_000, "a"));
    let parsed = |s: &str| s.parse::<AgentId>().unwrap();
    assert!(parsed("root.9999-x") < parsed("root.10000-x"));
    assert!(parsed("root.0001-x.9999-y") < parsed("root.0001-x.10000-y"));
    // A parent first, then its children, then its next sibling.
    assert!(root < root.child(1, "a"));
    assert!(root.child(1, "a") < root.child(1, "a").child(1, "b"));
    assert!(root.child(1, "a").child(10_000, "b") < root.child(2, "a"));
    // Same number: by type.
    assert!(root.child(1, "a") < root.child(1, "b"));
}

#[test]
fn agent_ids_have_one_spelling() {
    for bad in [
        "root.00001-x",
        "root.01000-x",
        "root.0001-x.00002-y",
        "root.4294967296-x",
        "root.99999999999999999999-x",
    ] {
        assert!(bad.parse::<AgentId>().is_err(), "{bad}");
    }
    for good in [
        "root.0000-x",
        "root.0001-x",
        "root.10000-x",
        "root.4294967295-x",
    ] {
        assert_eq!(good.parse::<AgentId>().unwrap().as_str(), good);
    }
    let max = AgentId::root().child(u32::MAX, "x");
    assert_eq!(max.as_str().parse::<AgentId>().unwrap(), max);
}

#[test]
fn session_ids_sort_by_time() {
    let a = SessionId::from_parts(1_000, 0xffff_ffff);
    let b = SessionId::from_parts(2_000, 0);
    assert!(a < b);
    assert_eq!(a.as_str().parse::<SessionId>().unwrap(), a);
    assert!("s-xyz".parse::<SessionId>().is_err());
}

fn agent_id() -> impl Strategy<Value = (AgentId, Vec<(u32, String)>)> {
    prop::collection::vec((any::<u32>(), "[a-c]{1,2}"), 0..4).prop_map(|segments| {
        let id = segments
            .iter()
            .fold(AgentId::root(), |id, (seq, ty)| id.child(*seq, ty));
        (id, segments)
    })
}

/// Ids that often share their first segments and differ in a digit or a
/// letter (`1` and `10`, `a` and `ab`, types with a `-`).
fn close_agent_id() -> impl Strategy<Value = (AgentId, Vec<(u32, String)>)> {
    prop::collection::vec((0u32..12, "[ab]{1,2}(-[ab])?"), 0..4).prop_map(|segments| {
        let id = segments
            .iter()
            .fold(AgentId::root(), |id, (seq, ty)| id.child(*seq, ty));
        (id, segments)
    })
}

proptest! {
    #[test]
    fn prop_close_agent_ids_order_like_their_segments((a, sa) in close_agent_id(), (b, sb) in close_agent_id()) {
        prop_assert_eq!(a.cmp(&b), sa.cmp(&sb));
        prop_assert_eq!(a == b, sa == sb);
    }

    #[test]
    fn prop_agent_ids_order_like_their_segments((a, sa) in agent_id(), (b, sb) in agent_id()) {
        prop_assert_eq!(a.cmp(&b), sa.cmp(&sb));
        prop_assert_eq!(a == b, sa == sb);
    }

    #[test]
    fn prop_agent_ids_round_trip((id, _) in agent_id()) {
        prop_assert_eq!(id.as_str().parse::<AgentId>().unwrap(), id);
    }
}
