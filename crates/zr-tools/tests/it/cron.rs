//! Cron: the tools, due times, jitter, and a store that survives crashes.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;
use zr_tools::{CronStore, CronStoreError, NewCronJob};

use crate::support::{Kit, assert_error, text};

fn at(h: u32, m: u32, day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, day, h, m, 0).unwrap()
}

fn job(cron: &str, recurring: bool, jitter: u32) -> NewCronJob {
    NewCronJob {
        cron: cron.to_owned(),
        prompt: "check the build".to_owned(),
        recurring,
        jitter_seconds: jitter,
    }
}

#[tokio::test]
async fn tools_create_list_and_delete() {
    let kit = Kit::new();
    let out = kit
        .call(
            "CronCreate",
            json!({"cron": "0 9 * * 1-5", "prompt": "standup notes"}),
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(t.starts_with("Scheduled cron-1: `0 9 * * 1-5` = At 09:00, on Monday, Tuesday, Wednesday, Thursday, and Friday (UTC), recurring; next run 20"), "{t}");
    assert!(t.contains("recurring; next run 20"), "{t}");
    let out = kit
        .call("CronCreate", json!({"cron": "0 9 * *", "prompt": "x"}))
        .await;
    assert_error(&out, "has 4 fields; a cron expression has 5");
    let out = kit
        .call("CronCreate", json!({"cron": "61 * * * *", "prompt": "x"}))
        .await;
    assert!(out.is_error, "{}", text(&out));
    assert!(
        text(&out).starts_with("CronCreate: invalid cron expression '61 * * * *': "),
        "{}",
        text(&out)
    );
    let t = text(&kit.call("CronList", json!({})).await);
    assert!(
        t.starts_with("1 scheduled prompts:\n- cron-1: `0 9 * * 1-5`"),
        "{t}"
    );
    assert!(t.contains("\"standup notes\""), "{t}");
    let out = kit.call("CronDelete", json!({"id": "cron-7"})).await;
    assert_error(&out, "no scheduled job with id 'cron-7'");
    let out = kit.call("CronDelete", json!({"id": "cron-1"})).await;
    assert_eq!(text(&out), "Deleted cron-1 (`0 9 * * 1-5`).");
    assert_eq!(
        text(&kit.call("CronList", json!({})).await),
        "No scheduled prompts."
    );
    // Durable: a new store on the same file sees what the tools wrote.
    kit.call(
        "CronCreate",
        json!({"cron": "*/5 * * * *", "prompt": "poll"}),
    )
    .await;
    let again = CronStore::new(kit.path("state/cron.json"));
    let jobs = again.list().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].id, "cron-2");
}

/// Regression: an expression that parses but matches no date (the 30th of
/// February) was stored with "next run never"; the scheduler then searched
/// years ahead for it on every `due` call.
#[tokio::test]
async fn an_expression_that_never_fires_is_refused() {
    let kit = Kit::new();
    let out = kit
        .call("CronCreate", json!({"cron": "0 0 30 2 *", "prompt": "x"}))
        .await;
    let t = text(&out);
    assert!(out.is_error, "{t}");
    assert!(
        t.contains("cron expression '0 0 30 2 *' never fires"),
        "{t}"
    );
    assert_eq!(
        text(&kit.call("CronList", json!({})).await),
        "No scheduled prompts."
    );
    let store = kit.tools.cron();
    assert!(matches!(
        store.create(job("0 0 31 4 *", true, 0), at(0, 0, 1)),
        Err(CronStoreError::NeverFires { .. })
    ));
    // Rare is not never: the 29th of February comes every four years.
    let leap = store
        .create(job("0 0 29 2 *", true, 0), at(0, 0, 1))
        .unwrap();
    assert_eq!(
        leap.next_fire_after(at(0, 0, 1)),
        Some(Utc.with_ymd_and_hms(2028, 2, 29, 0, 0, 0).unwrap())
    );
}

#[test]
fn due_follows_occurrences_and_firings() {
    let dir = tempfile::tempdir().unwrap();
    let store = CronStore::new(dir.path().join("c.json"));
    let daily = store
        .create(job("0 9 * * *", true, 0), at(0, 0, 1))
        .unwrap();
    let once = store
        .create(job("30 9 * * *", false, 0), at(0, 0, 1))
        .unwrap();
    assert!(store.due(at(8, 59, 1)).unwrap().is_empty());
    let due: Vec<String> = store
        .due(at(9, 0, 1))
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(due, std::slice::from_ref(&daily.id));
    store.mark_fired(&daily.id, at(9, 0, 1)).unwrap();
    let due: Vec<String> = store
        .due(at(9, 45, 1))
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(due, std::slice::from_ref(&once.id));
    store.mark_fired(&once.id, at(9, 45, 1)).unwrap();
    assert_eq!(
        store.list().unwrap().len(),
        1,
        "a one-shot job goes once fired"
    );
    assert!(store.due(at(23, 0, 1)).unwrap().is_empty());
    assert_eq!(store.due(at(9, 0, 2)).unwrap().len(), 1);
}

#[test]
fn jitter_is_a_fixed_offset_per_job() {
    let dir = tempfile::tempdir().unwrap();
    let store = CronStore::new(dir.path().join("c.json"));
    let j = store
        .create(job("0 9 * * *", true, 600), at(0, 0, 1))
        .unwrap();
    let first = j.next_fire_after(at(0, 0, 1)).unwrap();
    let offset = first - at(9, 0, 1);
    assert!(offset >= chrono::TimeDelta::zero() && offset <= chrono::TimeDelta::seconds(600));
    assert!(
        store
            .due(first - chrono::TimeDelta::seconds(1))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.due(first).unwrap().len(), 1);
    // Same id, same offset, on every day and in every process.
    let reopened = CronStore::new(dir.path().join("c.json")).list().unwrap();
    let next_day = reopened[0].next_fire_after(first).unwrap();
    assert_eq!(next_day - at(9, 0, 2), offset);
}

#[test]
fn a_torn_temp_file_left_by_a_crash_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let store = CronStore::new(path.clone());
    store
        .create(job("0 9 * * *", true, 0), at(0, 0, 1))
        .unwrap();
    // A crash between write and rename leaves a partial temp file.
    std::fs::write(
        dir.path().join(".cron-store-XXXX.tmp"),
        "{\"version\":1,\"jo",
    )
    .unwrap();
    let jobs = CronStore::new(path.clone()).list().unwrap();
    assert_eq!(jobs.len(), 1);
    store
        .create(job("0 10 * * *", true, 0), at(0, 0, 1))
        .unwrap();
    assert_eq!(CronStore::new(path).list().unwrap().len(), 2);
}

#[test]
fn a_torn_store_file_is_reported_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, "{\"version\":1,\"jo").unwrap();
    let err = CronStore::new(path).list().unwrap_err();
    assert!(matches!(err, CronStoreError::Parse { .. }), "{err:?}");
}

const CRASH_ENV: &str = "ZR_TOOLS_CRON_CRASH_STORE";

/// Run as a child process by the crash test: writes the store in a loop
/// until killed. Without the variable it does nothing.
#[test]
fn crash_writer_child() {
    let Ok(path) = std::env::var(CRASH_ENV) else {
        return;
    };
    let store = CronStore::new(path.into());
    let big = "p".repeat(256 * 1024);
    loop {
        let j = store
            .create(
                NewCronJob {
                    prompt: big.clone(),
                    ..job("* * * * *", true, 0)
                },
                at(0, 0, 1),
            )
            .unwrap();
        if store.list().unwrap().len() > 3 {
            store.delete(&j.id).unwrap();
        }
    }
}

const HOLDER_ENV: &str = "ZR_TOOLS_CRON_HOLD_SCHEDULER";

/// Run as a child process by the lock test: holds the scheduler lock of
/// the store until killed. Without the variable it does nothing.
#[test]
fn scheduler_holder_child() {
    let Ok(path) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let store = CronStore::new(path.into());
    // The parent tries the lock too while it waits for this one.
    let _lock = loop {
        match store.lock_scheduler() {
            Ok(lock) => break lock,
            Err(CronStoreError::SchedulerRunning { .. }) => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("{e}"),
        }
    };
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn the_store_survives_a_writer_killed_at_any_moment() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let exe = std::env::current_exe().unwrap();
    let mut saw_jobs = false;
    for round in 0..6_u64 {
        let mut child = std::process::Command::new(&exe)
            .args([
                "cron::crash_writer_child",
                "--exact",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CRASH_ENV, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300 + 170 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        // Old or new, never torn.
        match CronStore::new(path.clone()).list() {
            Ok(jobs) => saw_jobs |= !jobs.is_empty(),
            Err(e) => panic!("round {round}: store torn by a crash: {e:?}"),
        }
    }
    assert!(saw_jobs, "the writer never got to write");
}

/// Regression: `Schedule::next_after` (and so `CronStore::due` over a store
/// whose dates were edited by hand) panicked with an overflow when the
/// jitter shifted a time past the ends of chrono's date range.
#[test]
fn extreme_dates_do_not_panic() {
    let every_minute = zr_tools::Schedule::parse("* * * * *").unwrap();
    for t in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC] {
        for jitter in [0, 30, 3600] {
            let _ = every_minute.next_after(t, Duration::from_secs(jitter));
        }
    }
    assert_eq!(
        every_minute.next_after(DateTime::<Utc>::MAX_UTC, Duration::from_secs(30)),
        None
    );
    // A store file whose creation date is the earliest chrono knows.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(
        &path,
        r#"{"version":1,"next_id":1,"jobs":[{"id":"cron-1","cron":"* * * * *","prompt":"p","recurring":true,"jitter_seconds":3600,"created_at":"-262143-01-01T00:00:00Z"}]}"#,
    )
    .unwrap();
    let store = CronStore::new(path);
    let _ = store.due(at(9, 0, 1)).unwrap();
}

mod laws {
    use proptest::prelude::*;

    fn field() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[0-9*/,LW#?A-Z-]{1,6}").unwrap()
    }

    proptest! {
        /// Any five fields: parsing and describing answer, never panic.
        #[test]
        fn prop_cron_parsing_never_panics(fields in proptest::collection::vec(field(), 5)) {
            let expr = fields.join(" ");
            if let Ok(s) = zr_tools::Schedule::parse(&expr) {
                prop_assert!(!s.describe().is_empty());
                prop_assert_eq!(s.expression(), expr);
            }
        }
    }
}

#[test]
fn stores_of_one_file_never_lose_each_others_changes() {
    // Two stores over one file stand for two processes (each has its own
    // in-process lock): only the file lock between them keeps every job.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron.json");
    let stores = [CronStore::new(path.clone()), CronStore::new(path.clone())];
    std::thread::scope(|s| {
        for store in &stores {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10 {
                        store
                            .create(job("0 9 * * *", true, 0), at(8, 0, 1))
                            .unwrap();
                    }
                });
            }
        }
    });
    let jobs = stores[0].list().unwrap();
    assert_eq!(jobs.len(), 80);
    let ids: std::collections::BTreeSet<_> = jobs.iter().map(|j| j.id.clone()).collect();
    assert_eq!(ids.len(), 80, "every job has its own id");
}

#[test]
fn one_scheduler_per_store_and_the_kernel_frees_a_dead_holders_lock() {
    let dir = tempfile::tempdir().unwrap();
    let store = CronStore::new(dir.path().join(".zr/cron.json"));
    let lock = store.lock_scheduler().unwrap();
    assert_eq!(lock.path(), dir.path().join(".zr/cron.json.scheduler"));
    let again = CronStore::new(dir.path().join(".zr/cron.json"));
    match again.lock_scheduler() {
        Err(CronStoreError::SchedulerRunning { pid, .. }) => {
            assert_eq!(pid, Some(std::process::id()));
        }
        other => panic!("expected SchedulerRunning, got {other:?}"),
    }
    // Changes still go through while a scheduler runs.
    again
        .create(job("0 9 * * *", true, 0), at(8, 0, 1))
        .unwrap();
    drop(lock);
    drop(store.lock_scheduler().unwrap());

    // Another process holds it (this binary, as `scheduler_holder_child`),
    // then is killed: no destructor runs, the kernel drops the lock.
    let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "cron::scheduler_holder_child",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(HOLDER_ENV, store.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let holder_pid = loop {
        match store.lock_scheduler() {
            Err(CronStoreError::SchedulerRunning { pid, .. }) => break pid,
            Ok(lock) => drop(lock),
            Err(e) => panic!("{e}"),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the child never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(holder_pid, Some(holder.id()));
    holder.kill().unwrap();
    holder.wait().unwrap();
    store
        .lock_scheduler()
        .expect("the kernel released the dead holder's lock");
}
