//! Unit tests of stamps: when a cached entry may be reused.

use std::time::{Duration, SystemTime};

use super::*;

fn stamp(mtime: Option<SystemTime>, size: u64) -> Stamp {
    Stamp {
        mtime,
        ctime: Some((1, 2)),
        size,
        inode: 7,
    }
}

#[test]
fn recent_future_and_unknown_times_are_racy() {
    let now = SystemTime::now();
    assert!(!stamp(Some(now - Duration::from_secs(60)), 1).is_racy(now));
    assert!(!stamp(Some(now - RACY_WINDOW), 1).is_racy(now));
    assert!(stamp(Some(now - Duration::from_millis(1_999)), 1).is_racy(now));
    assert!(stamp(Some(now), 1).is_racy(now));
    assert!(stamp(Some(now + Duration::from_secs(3_600)), 1).is_racy(now));
    assert!(stamp(None, 1).is_racy(now));
}

#[test]
fn only_a_trusted_equal_stamp_is_still_the_same() {
    let now = SystemTime::now();
    let old = stamp(Some(now - Duration::from_secs(60)), 10);
    let seen = Seen::new(old, now);
    assert!(seen.trusted());
    assert!(seen.still(&old));
    assert!(!seen.still(&stamp(Some(now - Duration::from_secs(60)), 11)));
    assert!(!seen.still(&stamp(Some(now - Duration::from_secs(59)), 10)));
    assert!(!seen.still(&Stamp { inode: 8, ..old }));
    // A modification time set back by hand does not hide a change: the
    // change time moved.
    assert!(!seen.still(&Stamp {
        ctime: Some((1, 3)),
        ..old
    }));
    // A racy stamp is never trusted, even when nothing changed.
    let fresh = stamp(Some(now), 10);
    let seen = Seen::new(fresh, now);
    assert!(!seen.trusted());
    assert!(!seen.still(&fresh));
}
