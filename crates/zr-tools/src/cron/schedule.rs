//! A parsed 5-field cron expression with deterministic per-job jitter.

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds};

use crate::error::CronStoreError;

/// A standard 5-field cron expression (minute, hour, day of month, month,
/// day of week), evaluated in UTC. Day of month and day of week combine
/// with OR, as in Vixie cron.
#[derive(Debug, Clone)]
pub struct Schedule {
    expression: String,
    cron: Cron,
}

impl Schedule {
    /// Parses `expression`.
    ///
    /// # Errors
    ///
    /// [`CronStoreError::FieldCount`] when it does not have exactly five
    /// fields, [`CronStoreError::Expression`] when a field is invalid.
    pub fn parse(expression: &str) -> Result<Self, CronStoreError> {
        let fields = expression.split_whitespace().count();
        if fields != 5 {
            return Err(CronStoreError::FieldCount {
                expression: expression.to_owned(),
                fields,
            });
        }
        let parser = CronParser::builder().seconds(Seconds::Disallowed).build();
        let cron = parser
            .parse(expression)
            .map_err(|e| CronStoreError::Expression {
                expression: expression.to_owned(),
                source: Box::new(e),
            })?;
        Ok(Self {
            expression: expression.split_whitespace().collect::<Vec<_>>().join(" "),
            cron,
        })
    }

    /// The expression, whitespace normalised.
    #[must_use]
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// A description in English ("At 09:00 on Monday").
    #[must_use]
    pub fn describe(&self) -> String {
        self.cron.describe()
    }

    /// The first occurrence strictly after `after`, shifted by `jitter`;
    /// `None` when there is none (also at the ends of the date range).
    #[must_use]
    pub fn next_after(&self, after: DateTime<Utc>, jitter: Duration) -> Option<DateTime<Utc>> {
        let jitter = TimeDelta::from_std(jitter).ok()?;
        let from = after.checked_sub_signed(jitter)?;
        let occ = self.cron.find_next_occurrence(&from, false).ok()?;
        occ.checked_add_signed(jitter)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expression)
    }
}

/// The jitter of job `id` for a window of `max_seconds`: a stable hash of
/// the id, so a job always fires at the same offset (no randomness).
#[must_use]
pub(crate) fn jitter_of(id: &str, max_seconds: u32) -> Duration {
    if max_seconds == 0 {
        return Duration::ZERO;
    }
    let h = zr_types::stable_hash(id.as_bytes());
    Duration::from_secs(h % (u64::from(max_seconds) + 1))
}
