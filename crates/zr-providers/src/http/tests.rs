//! Unit tests of the shared HTTP layer.

use std::time::{Duration, UNIX_EPOCH};

use reqwest::header::{HeaderMap, HeaderValue};

use super::status::{StatusClass, classify, parse_http_date, retry_after};
use super::{RetryPolicy, truncate};

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_static(value));
    }
    map
}

#[test]
fn statuses_are_classified_as_documented() {
    for status in [401, 403] {
        assert_eq!(classify(status), StatusClass::Auth, "{status}");
    }
    for status in [400, 404, 413, 422, 418, 302] {
        assert_eq!(classify(status), StatusClass::Rejected, "{status}");
    }
    for status in [408, 409, 429, 500, 502, 503, 504, 529] {
        assert_eq!(classify(status), StatusClass::Retry, "{status}");
    }
}

#[test]
fn backoff_grows_with_full_jitter_up_to_max_delay() {
    let policy = RetryPolicy {
        max_attempts: 10,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(1000),
    };
    for _ in 0..200 {
        assert!(policy.delay(1, None) <= Duration::from_millis(100));
        assert!(policy.delay(3, None) <= Duration::from_millis(400));
        assert!(policy.delay(40, None) <= Duration::from_millis(1000));
    }
    // Full jitter spreads the waits: 200 draws are not all equal.
    let draws: Vec<_> = (0..200).map(|_| policy.delay(4, None)).collect();
    assert!(draws.iter().any(|draw| *draw != draws[0]));
    // A server hint is used as is, capped at max_delay.
    assert_eq!(
        policy.delay(1, Some(Duration::from_millis(700))),
        Duration::from_millis(700)
    );
    assert_eq!(
        policy.delay(1, Some(Duration::from_secs(60))),
        Duration::from_millis(1000)
    );
}

#[test]
fn default_policy_matches_the_documentation() {
    let policy = RetryPolicy::default();
    assert_eq!(policy.max_attempts, 5);
    assert_eq!(policy.base_delay, Duration::from_millis(500));
    assert_eq!(policy.max_delay, Duration::from_secs(30));
}

#[test]
fn retry_after_headers_are_read() {
    let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
    assert_eq!(
        retry_after(&headers(&[("retry-after", "3")]), now),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        retry_after(
            &headers(&[("retry-after-ms", "250"), ("retry-after", "3")]),
            now
        ),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        retry_after(
            &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")]),
            now
        ),
        Some(Duration::from_secs(10))
    );
    // A date in the past means "now".
    assert_eq!(
        retry_after(
            &headers(&[("retry-after", "Sun, 06 Nov 1994 08:48:37 GMT")]),
            now
        ),
        Some(Duration::ZERO)
    );
    for bad in ["soon", "-1", "1.5", ""] {
        assert_eq!(
            retry_after(&headers(&[("retry-after", bad)]), now),
            None,
            "{bad}"
        );
    }
    assert_eq!(
        retry_after(&headers(&[("retry-after-ms", "-5")]), now),
        None
    );
    assert_eq!(retry_after(&HeaderMap::new(), now), None);
}

#[test]
fn http_dates_parse_exactly() {
    assert_eq!(
        parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(UNIX_EPOCH + Duration::from_secs(784_111_777))
    );
    assert_eq!(
        parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"),
        Some(UNIX_EPOCH)
    );
    assert_eq!(
        parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT"),
        Some(UNIX_EPOCH + Duration::from_secs(951_825_600))
    );
    for bad in [
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT extra",
        "",
    ] {
        assert_eq!(parse_http_date(bad), None, "{bad}");
    }
}

#[test]
fn truncate_cuts_on_a_character_boundary() {
    assert_eq!(truncate("short", 10), "short");
    assert_eq!(truncate("ééé", 3), "é... (6 bytes)");
}

proptest::proptest! {
    /// Law: the wait never exceeds max_delay, whatever the attempt or hint.
    #[test]
    fn prop_delay_never_exceeds_max_delay(attempt in proptest::num::u32::ANY, base_ms in 0_u64..100_000, max_ms in 0_u64..100_000, hint_ms in proptest::option::of(0_u64..u64::MAX / 2)) {
        let policy = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(base_ms),
            max_delay: Duration::from_millis(max_ms),
        };
        let delay = policy.delay(attempt, hint_ms.map(Duration::from_millis));
        proptest::prop_assert!(delay <= policy.max_delay);
    }

    /// Law: header parsing never panics.
    #[test]
    fn prop_retry_after_never_panics(text in "\\PC{0,40}") {
        let _ = parse_http_date(&text);
        if let Ok(value) = HeaderValue::from_str(&text) {
            let mut map = HeaderMap::new();
            map.insert("retry-after", value.clone());
            map.insert("retry-after-ms", value);
            let _ = retry_after(&map, UNIX_EPOCH);
        }
    }
}
