//! The wall clock `zr cron` fires by, and its test-only offset:
//! `ZR_TEST_CLOCK_OFFSET_SECS=N` makes a debug build's scheduler read the
//! clock N seconds ahead, so that a test waits seconds for the next whole
//! minute instead of up to a minute.
//!
//! It cannot be set by accident: release builds never read the variable,
//! and a debug build that reads it says so on standard error.

use chrono::{DateTime, TimeDelta, Utc};

/// The variable that shifts the clock.
pub(crate) const VAR: &str = "ZR_TEST_CLOCK_OFFSET_SECS";

/// The clock: the system's, shifted by the test offset.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Clock {
    offset: TimeDelta,
}

impl Clock {
    /// The system clock, shifted when this is a debug build and `get(VAR)`
    /// is a number of seconds (at most a day either way).
    pub(crate) fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Self {
        if !cfg!(debug_assertions) {
            return Self::default();
        }
        let Some(secs) = get(VAR)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|s| s.abs() <= 86_400)
        else {
            return Self::default();
        };
        eprintln!(
            "warning: {VAR}={secs}: this test build's scheduler reads the clock {secs} s ahead"
        );
        Self {
            offset: TimeDelta::seconds(secs),
        }
    }

    /// Now, as the scheduler sees it.
    pub(crate) fn now(self) -> DateTime<Utc> {
        Utc::now() + self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_number_of_seconds_within_a_day_shifts_the_clock() {
        let with = |value: &'static str| Clock::from_env(&move |_| Some(value.to_owned()));
        assert_eq!(with("40").offset, TimeDelta::seconds(40));
        assert_eq!(with(" -5 ").offset, TimeDelta::seconds(-5));
        for ignored in ["", "soon", "1.5", "86401"] {
            assert_eq!(with(ignored).offset, TimeDelta::zero(), "{ignored:?}");
        }
        assert_eq!(Clock::from_env(&|_| None).offset, TimeDelta::zero());
        let ahead = with("3600").now() - Utc::now();
        assert!(ahead > TimeDelta::seconds(3590), "{ahead}");
    }
}
