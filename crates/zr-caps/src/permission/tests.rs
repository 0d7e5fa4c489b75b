//! Tests of the permission-mode lattice (C4).

use proptest::prelude::*;

use super::*;

fn mode() -> impl Strategy<Value = PermissionMode> {
    prop::sample::select(PermissionMode::ALL.to_vec())
}

#[test]
fn order_is_exactly_strictest_first() {
    use PermissionMode::*;
    let order = [Plan, DontAsk, Default, Auto, AcceptEdits, BypassPermissions];
    assert_eq!(PermissionMode::ALL, order);
    for pair in order.windows(2) {
        assert!(pair[0] < pair[1], "{} < {}", pair[0], pair[1]);
    }
    let names: Vec<&str> = order.iter().map(|m| m.as_str()).collect();
    assert_eq!(
        names,
        [
            "plan",
            "dontAsk",
            "default",
            "auto",
            "acceptEdits",
            "bypassPermissions"
        ]
    );
    assert_eq!(PermissionMode::default(), Default);
}

#[test]
fn names_round_trip_and_unknown_names_are_refused() {
    for m in PermissionMode::ALL {
        assert_eq!(m.to_string().parse::<PermissionMode>(), Ok(m));
        let json = serde_json::to_string(&m).unwrap_or_default();
        assert_eq!(json, format!("\"{m}\""));
    }
    let err = "bypass".parse::<PermissionMode>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown permission mode 'bypass'; expected one of plan, dontAsk, default, auto, acceptEdits, bypassPermissions"
    );
    assert!("Plan".parse::<PermissionMode>().is_err());
}

proptest! {
    #[test]
    fn prop_clamp_never_widens(parent in mode(), declared in prop::option::of(mode())) {
        let got = parent.clamp(declared);
        prop_assert!(got <= parent);
        if let Some(d) = declared {
            prop_assert!(got <= d);
            // The stricter of the two, not something stricter still.
            prop_assert!(got == parent || got == d);
        } else {
            prop_assert_eq!(got, parent);
        }
    }

    #[test]
    fn prop_clamp_is_idempotent(parent in mode(), declared in prop::option::of(mode())) {
        let once = parent.clamp(declared);
        prop_assert_eq!(once.clamp(declared), once);
    }

    #[test]
    fn prop_clamp_is_monotone_in_the_parent(a in mode(), b in mode(), d in prop::option::of(mode())) {
        if a <= b {
            prop_assert!(a.clamp(d) <= b.clamp(d));
        }
    }
}
