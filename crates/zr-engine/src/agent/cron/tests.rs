//! Unit tests of the cron scheduler's firing rules: due occurrences, missed
//! runs and the prompt's note.

use chrono::{DateTime, TimeZone as _, Utc};
use zr_tools::CronJob;

use super::firing::{Due, MAX_COUNTED, due, prompt};

fn at(day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, day, hour, minute, 0).unwrap()
}

fn job(cron: &str, recurring: bool, created: DateTime<Utc>) -> CronJob {
    CronJob {
        id: "cron-7".into(),
        cron: cron.into(),
        prompt: "Check the build.".into(),
        recurring,
        jitter_seconds: 0,
        created_at: created,
        last_fired: None,
    }
}

#[test]
fn a_recurring_job_after_downtime_is_due_once_for_its_latest_occurrence() {
    let mut daily = job("0 9 * * *", true, at(1, 8, 0));
    daily.last_fired = Some(at(1, 9, 0));
    assert_eq!(due(&daily, at(1, 23, 0)), None);
    assert_eq!(
        due(&daily, at(5, 10, 0)),
        Some(Due {
            first: at(2, 9, 0),
            scheduled_for: at(5, 9, 0),
            missed: 3,
            capped: false,
        })
    );
    // The scheduler started after all of them: zr was not running.
    let d = due(&daily, at(5, 10, 0)).unwrap();
    assert_eq!(
        prompt(&daily, &d, at(5, 10, 0), at(5, 10, 0)),
        "Check the build.\n\n(Scheduled prompt cron-7 for 2026-01-05 09:00 UTC; 3 earlier runs were missed while zr was not running.)"
    );
    // It was running, and a query held the root.
    assert_eq!(
        prompt(&daily, &d, at(5, 10, 0), at(1, 0, 0)),
        "Check the build.\n\n(Scheduled prompt cron-7 for 2026-01-05 09:00 UTC; 3 earlier runs were missed while another query was running.)"
    );
}

#[test]
fn a_firing_on_time_sends_the_prompt_alone_and_a_late_one_says_why() {
    let daily = job("0 9 * * *", true, at(1, 8, 0));
    let d = due(&daily, at(1, 9, 1)).unwrap();
    assert_eq!((d.scheduled_for, d.missed), (at(1, 9, 0), 0));
    assert_eq!(
        prompt(&daily, &d, at(1, 9, 1), at(1, 8, 0)),
        "Check the build."
    );
    assert_eq!(
        prompt(&daily, &d, at(1, 9, 30), at(1, 8, 0)),
        "Check the build.\n\n(Scheduled prompt cron-7 for 2026-01-01 09:00 UTC; it ran late because another query was running.)"
    );
    let d = due(&daily, at(1, 9, 30)).unwrap();
    assert_eq!(
        prompt(&daily, &d, at(1, 9, 30), at(1, 9, 30)),
        "Check the build.\n\n(Scheduled prompt cron-7 for 2026-01-01 09:00 UTC; it ran late because zr was not running.)"
    );
}

#[test]
fn an_overdue_one_shot_is_due_once_for_its_first_occurrence() {
    let once = job("0 9 * * *", false, at(1, 8, 0));
    let d = due(&once, at(5, 10, 0)).unwrap();
    assert_eq!(
        d,
        Due {
            first: at(1, 9, 0),
            scheduled_for: at(1, 9, 0),
            missed: 0,
            capped: false,
        }
    );
    assert!(
        prompt(&once, &d, at(5, 10, 0), at(5, 10, 0))
            .ends_with("for 2026-01-01 09:00 UTC; it ran late because zr was not running.)")
    );
}

#[test]
fn counting_missed_runs_stops_at_the_cap() {
    let every_minute = job("* * * * *", true, at(1, 0, 0));
    let d = due(&every_minute, at(31, 0, 0)).unwrap();
    assert_eq!((d.missed, d.capped), (MAX_COUNTED - 1, true));
    // The firing still stands for the latest occurrence, not the last one
    // counted.
    assert_eq!(d.scheduled_for, at(31, 0, 0));
    assert!(
        prompt(&every_minute, &d, at(31, 0, 0), at(31, 0, 0))
            .ends_with(" for 2026-01-31 00:00 UTC; more than 999 earlier runs were missed while zr was not running.)"),
    );
    // Exactly as many as are counted: not capped.
    let d = due(&every_minute, at(1, 16, 40)).unwrap();
    assert_eq!(
        (d.missed, d.capped, d.scheduled_for),
        (MAX_COUNTED - 1, false, at(1, 16, 40))
    );
    assert!(
        prompt(&every_minute, &d, at(1, 16, 40), at(1, 16, 40))
            .ends_with("; 999 earlier runs were missed while zr was not running.)")
    );
    // Between two occurrences, and with jitter: the latest one before now.
    let mut jittered = job("*/5 * * * *", true, at(1, 0, 0));
    jittered.jitter_seconds = 120;
    // Its offset within the five minutes (at most two: before 00:03).
    let first = jittered.next_fire_after(at(1, 0, 0)).unwrap();
    let offset = chrono::TimeDelta::seconds((first - at(1, 0, 0)).num_seconds() % 300);
    let d = due(&jittered, at(31, 0, 3)).unwrap();
    assert!(d.capped);
    let latest = at(31, 0, 0) + offset;
    assert_eq!(d.scheduled_for, latest);
}

#[test]
fn jitter_shifts_each_occurrence() {
    let mut daily = job("0 9 * * *", true, at(1, 8, 0));
    daily.jitter_seconds = 600;
    let d = due(&daily, at(1, 9, 11)).unwrap();
    let offset = d.scheduled_for.signed_duration_since(at(1, 9, 0));
    assert!((0..=600).contains(&offset.num_seconds()), "{offset}");
    assert_eq!(
        due(&daily, d.scheduled_for - chrono::TimeDelta::seconds(1)),
        None
    );
}

#[test]
fn extreme_dates_never_panic() {
    // A store edited by hand: the first and last instants chrono knows.
    let mut ancient = job("* * * * *", true, DateTime::<Utc>::MIN_UTC);
    let d = due(&ancient, at(1, 0, 0)).unwrap();
    assert_eq!((d.missed, d.capped), (MAX_COUNTED - 1, true));
    // The store's schedule finds no occurrence when the jitter would
    // shift the time before the start of chrono's range.
    ancient.jitter_seconds = 3600;
    assert_eq!(due(&ancient, at(1, 0, 0)), None);
    let mut future = job("* * * * *", false, DateTime::<Utc>::MAX_UTC);
    future.jitter_seconds = 3600;
    assert_eq!(due(&future, DateTime::<Utc>::MAX_UTC), None);
    future.recurring = true;
    future.last_fired = Some(DateTime::<Utc>::MAX_UTC);
    assert_eq!(due(&future, DateTime::<Utc>::MAX_UTC), None);
}
