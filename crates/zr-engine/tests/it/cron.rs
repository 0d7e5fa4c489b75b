//! The cron scheduler end to end: jobs the scripted root schedules with
//! `CronCreate` (or written to the store with explicit times) fire as new
//! queries of the root, driven by an explicit clock or by the wall clock.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone as _, Utc};
use futures_util::StreamExt as _;
use serde_json::json;
use zr_engine::{Agent, AgentConfig, CronScheduler, Fired, QueryOverrides};
use zr_tools::{CronStore, NewCronJob};
use zr_types::{ContentBlock, MessageRole};

use crate::support::Harness;

fn at(day: u32, hour: u32, minute: u32, second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, day, hour, minute, second)
        .unwrap()
}

fn store(h: &Harness) -> &CronStore {
    h.runtime.builtin_tools().cron()
}

/// A daily 09:00 job created on 1 January at 08:00.
fn daily(h: &Harness, prompt: &str, recurring: bool) -> String {
    let new = NewCronJob {
        cron: "0 9 * * *".into(),
        prompt: prompt.into(),
        recurring,
        jitter_seconds: 0,
    };
    store(h).create(new, at(1, 8, 0, 0)).unwrap().id
}

/// A root over `turns` (its replies across queries), shared.
fn root(turns: serde_json::Value) -> (Harness, Arc<Agent>) {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": turns}]}}));
    let agent = Arc::new(h.agent(AgentConfig::new("root")));
    (h, agent)
}

/// The user's text at the end of each request of the root.
fn prompts(h: &Harness) -> Vec<String> {
    h.provider
        .of_type("root")
        .iter()
        .map(|r| {
            let last = r.messages.last().unwrap();
            assert_eq!(last.role, MessageRole::User);
            match last.content.last() {
                Some(ContentBlock::Text { text }) => text.clone(),
                other => format!("{other:?}"),
            }
        })
        .collect()
}

/// The output of a fired query.
async fn output(fired: Fired) -> String {
    tokio::time::timeout(Duration::from_secs(60), fired.query.finish())
        .await
        .expect("the fired query ends within a minute")
        .unwrap()
        .output
}

#[tokio::test]
async fn a_prompt_scheduled_by_the_root_fires_as_a_new_query_and_recurs() {
    let (h, agent) = root(json!([
        {"tool_calls": [{"name": "FindTool", "input": {"query": "select:CronCreate"}}]},
        {"tool_calls": [{"name": "CronCreate", "input": {"cron": "0 9 * * *", "prompt": "Check the build."}}]},
        {"text": "Scheduled."},
        {"text": "Build checked."},
        {"text": "Checked again."}
    ]));
    let result = agent
        .prompt("Check the build every morning.")
        .await
        .unwrap();
    assert_eq!(result.output, "Scheduled.");
    let jobs = store(&h).list().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let job = jobs[0].clone();
    assert_eq!(
        (job.cron.as_str(), job.prompt.as_str(), job.recurring),
        ("0 9 * * *", "Check the build.", true)
    );
    let nine = job.next_fire_after(job.created_at).unwrap();

    let mut scheduler = CronScheduler::new(&agent);
    assert!(
        scheduler
            .tick(nine - TimeDelta::seconds(1))
            .unwrap()
            .is_none()
    );
    let fired = scheduler.tick(nine).unwrap().expect("due at nine");
    assert_eq!(
        (
            fired.job.id.as_str(),
            fired.prompt.as_str(),
            fired.scheduled_for,
            fired.missed
        ),
        (job.id.as_str(), "Check the build.", nine, 0)
    );
    assert_eq!(output(fired).await, "Build checked.");
    assert_eq!(prompts(&h).last().unwrap(), "Check the build.");
    assert_eq!(store(&h).list().unwrap()[0].last_fired, Some(nine));

    // Not again until its next occurrence, the next day.
    assert!(
        scheduler
            .tick(nine + TimeDelta::hours(23))
            .unwrap()
            .is_none()
    );
    let fired = scheduler
        .tick(nine + TimeDelta::days(1))
        .unwrap()
        .expect("due the next day");
    assert_eq!(fired.prompt, "Check the build.");
    assert_eq!(output(fired).await, "Checked again.");
    assert_eq!(
        agent.history().len(),
        // Three queries: the scheduling one (prompt, FindTool, its result,
        // CronCreate, its result, answer) and two fired ones.
        6 + 2 + 2
    );
}

#[tokio::test]
async fn a_recurring_job_that_missed_runs_while_zr_was_down_fires_once_with_a_note() {
    let (h, agent) = root(json!([{"text": "Logs rotated."}, {"text": "unexpected"}]));
    let id = daily(&h, "Rotate the logs.", true);
    store(&h).mark_fired(&id, at(1, 9, 0, 0)).unwrap();

    // zr starts again on 5 January at 10:00: the runs of the 2nd, 3rd,
    // 4th and 5th are due.
    let mut scheduler = CronScheduler::new(&agent);
    let fired = scheduler.tick(at(5, 10, 0, 0)).unwrap().expect("due");
    assert_eq!((fired.scheduled_for, fired.missed), (at(5, 9, 0, 0), 3));
    let expected = format!(
        "Rotate the logs.\n\n(Scheduled prompt {id} for 2026-01-05 09:00 UTC; 3 earlier runs were missed while zr was not running.)"
    );
    assert_eq!(fired.prompt, expected);
    assert_eq!(output(fired).await, "Logs rotated.");
    // Once, not four times.
    assert!(scheduler.tick(at(5, 10, 0, 1)).unwrap().is_none());
    assert!(scheduler.tick(at(5, 23, 59, 0)).unwrap().is_none());
    assert_eq!(prompts(&h), vec![expected]);
    assert_eq!(
        store(&h).list().unwrap()[0].last_fired,
        Some(at(5, 10, 0, 0))
    );
}

#[tokio::test]
async fn a_job_that_falls_due_while_a_query_runs_fires_after_it() {
    let (h, agent) = root(json!([
        {"delay_ms": 1500, "text": "slow answer"},
        {"text": "cron answer"}
    ]));
    let id = daily(&h, "Check the build.", false);
    let mut scheduler = CronScheduler::new(&agent);
    assert!(
        scheduler.tick(at(1, 8, 59, 0)).unwrap().is_none(),
        "not yet"
    );

    let running = agent.query("slow work", QueryOverrides::default());
    assert!(
        scheduler.tick(at(1, 9, 0, 30)).unwrap().is_none(),
        "the root is busy"
    );
    let jobs = store(&h).list().unwrap();
    assert_eq!(
        (jobs.len(), jobs[0].last_fired),
        (1, None),
        "the job waits, it is not lost"
    );
    assert_eq!(running.finish().await.unwrap().output, "slow answer");

    let fired = scheduler.tick(at(1, 9, 5, 0)).unwrap().expect("due");
    assert_eq!(fired.job.id, id);
    assert_eq!(
        fired.prompt,
        format!(
            "Check the build.\n\n(Scheduled prompt {id} for 2026-01-01 09:00 UTC; it ran late because another query was running.)"
        )
    );
    assert_eq!(output(fired).await, "cron answer");
    assert_eq!(
        prompts(&h),
        vec![
            "slow work".to_owned(),
            format!(
                "Check the build.\n\n(Scheduled prompt {id} for 2026-01-01 09:00 UTC; it ran late because another query was running.)"
            )
        ]
    );
}

#[tokio::test]
async fn a_one_shot_job_fires_once_and_is_gone() {
    let (h, agent) = root(json!([{"text": "done once"}, {"text": "unexpected"}]));
    let once = daily(&h, "Say hello once.", false);
    let kept = daily(&h, "Say hello daily.", true);
    let mut scheduler = CronScheduler::new(&agent);
    let fired = scheduler.tick(at(1, 9, 0, 10)).unwrap().expect("due");
    assert_eq!(
        (
            fired.job.id.as_str(),
            fired.job.recurring,
            fired.prompt.as_str()
        ),
        (once.as_str(), false, "Say hello once.")
    );
    let ids: Vec<String> = store(&h)
        .list()
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(ids, vec![kept.clone()], "the one-shot job is gone");
    // The recurring job, due at the same time, waits for the root.
    assert!(scheduler.tick(at(1, 9, 0, 20)).unwrap().is_none());
    assert_eq!(output(fired).await, "done once");
    assert_eq!(prompts(&h), vec!["Say hello once.".to_owned()]);
}

#[tokio::test]
async fn the_spawned_scheduler_fires_on_the_wall_clock_and_ends_with_its_agent() {
    let (h, agent) = root(json!([{"text": "fired on the wall clock"}]));
    let new = NewCronJob {
        cron: "* * * * *".into(),
        prompt: "Tick.".into(),
        recurring: false,
        jitter_seconds: 0,
    };
    // Its only run was due between 150 and 90 s ago: it is overdue.
    let job = store(&h)
        .create(new, Utc::now() - TimeDelta::seconds(150))
        .unwrap();
    let due = job.next_fire_after(job.created_at).unwrap();
    let mut handle = CronScheduler::new(&agent)
        .spawn(Duration::from_millis(20))
        .unwrap();
    let fired = tokio::time::timeout(Duration::from_secs(30), handle.next())
        .await
        .expect("fires within 30 s")
        .expect("a firing");
    assert_eq!((&fired.job.id, fired.scheduled_for), (&job.id, due));
    assert_eq!(
        fired.prompt,
        format!(
            "Tick.\n\n(Scheduled prompt {} for {}; it ran late because zr was not running.)",
            job.id,
            due.format("%Y-%m-%d %H:%M UTC")
        )
    );
    assert_eq!(output(fired).await, "fired on the wall clock");
    assert!(store(&h).list().unwrap().is_empty());

    drop(agent);
    let end = tokio::time::timeout(Duration::from_secs(30), handle.next())
        .await
        .expect("the handle ends once the agent is gone");
    assert!(end.is_none());
}
