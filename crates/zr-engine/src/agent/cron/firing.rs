//! When a due cron job should have fired, what it missed, and the prompt
//! that tells the model so.

use chrono::{DateTime, TimeDelta, Utc};
use zr_tools::CronJob;

/// A job that fires this much after its occurrence (or less) is on time;
/// later, its prompt says that it is late.
pub(super) const LATE_AFTER: TimeDelta = TimeDelta::seconds(60);

/// At most this many due occurrences of one job are counted (an
/// every-minute job after a year of downtime has half a million).
pub(super) const MAX_COUNTED: u64 = 1000;

/// The occurrences of a due job that have not fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Due {
    /// The first of them.
    pub(super) first: DateTime<Utc>,
    /// The one this firing stands for: the latest for a recurring job,
    /// the only one for a one-shot.
    pub(super) scheduled_for: DateTime<Utc>,
    /// Earlier occurrences of a recurring job that are not run (0 for a
    /// one-shot).
    pub(super) missed: u64,
    /// Whether more occurrences were due than [`MAX_COUNTED`], which were
    /// not counted (`missed` is then a lower bound).
    pub(super) capped: bool,
}

/// The occurrences of `job` (its jitter included) after its last firing
/// (or its creation) and no later than `now`; `None` when there is none.
pub(super) fn due(job: &CronJob, now: DateTime<Utc>) -> Option<Due> {
    let first = job.next_fire_after(job.last_fired.unwrap_or(job.created_at))?;
    if first > now {
        return None;
    }
    if !job.recurring {
        return Some(Due {
            first,
            scheduled_for: first,
            missed: 0,
            capped: false,
        });
    }
    let (mut latest, mut count) = (first, 1_u64);
    while count < MAX_COUNTED {
        match job.next_fire_after(latest) {
            Some(next) if next > latest && next <= now => {
                latest = next;
                count += 1;
            }
            _ => break,
        }
    }
    let mut capped = false;
    if count == MAX_COUNTED {
        let last = latest_until(job, latest, now);
        capped = last > latest;
        latest = last;
    }
    Some(Due {
        first,
        scheduled_for: latest,
        missed: count - 1,
        capped,
    })
}

/// The latest occurrence of `job` no later than `now`, given `known`, one
/// of them: a binary search over the time before it (`next_fire_after` only
/// grows with its argument), so that a long downtime costs a few dozen
/// look-ups, not one per occurrence.
fn latest_until(job: &CronJob, known: DateTime<Utc>, now: DateTime<Utc>) -> DateTime<Utc> {
    let (mut lo, mut hi) = (known, now);
    while hi - lo > TimeDelta::seconds(1) {
        let mid = lo + (hi - lo) / 2;
        if job.next_fire_after(mid).is_some_and(|next| next <= now) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Occurrences are at least a minute apart: the one after `lo` is the
    // last one, if it is not `known` itself.
    job.next_fire_after(lo)
        .filter(|next| *next <= now)
        .map_or(known, |next| next.max(known))
}

/// The prompt of a firing: the job's prompt, and when the firing is late
/// or stands for missed runs, a note saying so and why. `started` is when
/// the scheduler first looked: what was due before it was missed while zr
/// was not running; what fell due later waited for another query.
pub(super) fn prompt(
    job: &CronJob,
    due: &Due,
    now: DateTime<Utc>,
    started: DateTime<Utc>,
) -> String {
    let late = now.signed_duration_since(due.scheduled_for) > LATE_AFTER;
    if !late && due.missed == 0 {
        return job.prompt.clone();
    }
    let why = if due.first < started {
        "zr was not running"
    } else {
        "another query was running"
    };
    let at = due.scheduled_for.format("%Y-%m-%d %H:%M UTC");
    let what = match (due.missed, due.capped) {
        (0, _) => format!("it ran late because {why}"),
        (1, _) => format!("1 earlier run was missed while {why}"),
        (n, false) => format!("{n} earlier runs were missed while {why}"),
        (n, true) => format!("more than {n} earlier runs were missed while {why}"),
    };
    format!(
        "{}\n\n(Scheduled prompt {} for {at}; {what}.)",
        job.prompt, job.id
    )
}
