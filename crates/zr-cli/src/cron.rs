//! `zr cron`: the scheduler of the prompts `CronCreate` stored, run in the
//! foreground, each firing a new session; `zr cron list`.
//!
//! The scheduler is the engine's [`CronScheduler`] (one query at a time,
//! missed runs of a recurring prompt folded into one firing with a note);
//! this module gives each firing a fresh [`Agent`] (a new session, listed
//! by `zr sessions`, resumable with `zr resume`), shows it, and holds the
//! store's scheduler lock (`.zr/cron.json.scheduler`, an OS file lock the
//! kernel releases if zr dies) so that two schedulers never fire one job
//! twice.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::json;
use zr_engine::{Agent, CronScheduler, Fired};
use zr_tools::{CronJob, CronStore, CronStoreError};
use zr_types::error_chain;

use crate::ask::Asking;
use crate::cli::{CronArgs, Format};
use crate::clock::Clock;
use crate::error::CliError;
use crate::project::Project;
use crate::run::resume_checks::running_now;
use crate::run::{drive, open_workspace, say, warn_aliases, warn_diagnostics, warn_servers};
use crate::signal::Signals;
use crate::{provider, render, sessions};

/// How often the scheduler looks for due prompts: occurrences are whole
/// minutes, so a prompt fires within a second of its time.
const POLL: Duration = Duration::from_secs(1);

/// Characters of a prompt shown in a line about it.
const PROMPT_CHARS: usize = 60;

/// `zr cron`: fires due prompts until a signal stops it.
///
/// # Errors
///
/// A [`CliError::Usage`] when another scheduler runs for this project;
/// any error of opening the workspace; [`CliError::Stopped`] at the
/// signal that stops it (the usual way it ends).
pub(crate) async fn run(root: PathBuf, args: &CronArgs) -> Result<u8, CliError> {
    let project = Project::load(root)?;
    crate::telemetry::around(&project, schedule(&project, args)).await
}

/// `zr cron` once the project is loaded (its agents' spans exported with
/// `[telemetry]`).
async fn schedule(project: &Project, args: &CronArgs) -> Result<u8, CliError> {
    warn_diagnostics(project);
    let clock = Clock::from_env(&|v| std::env::var(v).ok());
    let store = CronStore::new(project.cron_store());
    // Before any server starts: a second scheduler costs nothing.
    let _lock = store.lock_scheduler().map_err(store_error)?;
    let chosen = provider::choose(project, &args.provider, &|v| project.var(v))?;
    warn_aliases(project, chosen.kind);
    let mut signals = Signals::install();
    let workspace = open_workspace(project, chosen, Asking::Never, &mut signals).await?;
    warn_servers(&workspace);
    say(&format!(
        "zr cron: firing the prompts scheduled in {} (Ctrl-C stops). {}",
        relative(project, &store),
        waiting_for(&store, clock.now())
    ));

    let mut scheduler = CronScheduler::unbound();
    // The agent the next firing gets; a new one (a new session) after each.
    let mut next: Option<Arc<Agent>> = None;
    let mut last_error: Option<String> = None;
    let mut interval = tokio::time::interval(POLL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            stop = signals.recv() => {
                say(&format!("{}: zr cron stopped; no prompt was running", stop.name()));
                return Err(stop.into());
            }
        }
        let agent = Arc::clone(next.get_or_insert_with(|| {
            Arc::new(Agent::new(
                Arc::clone(&workspace.runtime),
                workspace.config.clone(),
            ))
        }));
        let now = clock.now();
        let ticked = tokio::task::spawn_blocking(move || {
            let fired = scheduler.tick_on(&agent, now);
            (scheduler, agent, fired)
        })
        .await;
        let Ok((back, agent, fired)) = ticked else {
            return Err(CliError::usage(
                "the cron scheduler stopped unexpectedly",
                "run `zr cron` again; ZR_LOG=debug shows more",
            ));
        };
        scheduler = back;
        let fired = match fired {
            Ok(Some(fired)) => fired,
            Ok(None) => continue,
            Err(e) => {
                // Said once until it changes: the next tick retries.
                let text = error_chain(&e);
                if last_error.as_deref() != Some(text.as_str()) {
                    say(&format!("warning: {text}; retrying every second"));
                    last_error = Some(text);
                }
                continue;
            }
        };
        last_error = None;
        next = None;
        fire(project, &store, &agent, fired, args, &mut signals, clock).await?;
    }
}

/// Shows one firing and runs its query to its end (one at a time: the
/// scheduler looks again only afterwards).
async fn fire(
    project: &Project,
    store: &CronStore,
    agent: &Agent,
    fired: Fired,
    args: &CronArgs,
    signals: &mut Signals,
    clock: Clock,
) -> Result<(), CliError> {
    let id = fired.job.id.clone();
    let missed = match fired.missed {
        0 => String::new(),
        1 => "; 1 missed run folded into this one".to_owned(),
        n => format!("; {n} missed runs folded into this one"),
    };
    say(&format!(
        "{} fired {id} (scheduled for {}{missed}) as session {}: {}",
        time(clock.now()),
        time(fired.scheduled_for),
        agent.session_id(),
        short(&fired.job.prompt)
    ));
    // A new session: nobody else holds its lock, and nothing was left.
    let _running = sessions::RunningMark::acquire(&project.sessions_dir(), agent.session_id())
        .map_err(|held| running_now(agent.session_id(), &held))?;
    let mut renderer = render::choose(&args.output, BTreeMap::new());
    let announce = !args.output.json && !args.output.quiet;
    let outcome = drive(
        agent,
        fired.query,
        renderer.as_mut(),
        signals,
        announce,
        None,
    )
    .await;
    let how = match outcome {
        Ok(0) => "finished".to_owned(),
        Ok(_) => "ended without completing".to_owned(),
        Err(e @ CliError::Stopped { .. }) => return Err(e),
        Err(e) => format!("failed: {}", error_chain(&e)),
    };
    say(&format!(
        "{} {id} {how} (session {}). {}",
        time(clock.now()),
        agent.session_id(),
        waiting_for(store, clock.now())
    ));
    Ok(())
}

/// `zr cron list`: every scheduled prompt with its next run.
///
/// # Errors
///
/// [`CliError::Usage`] when the store cannot be read or parsed.
pub(crate) fn list(project: &Project, format: Format) -> Result<String, CliError> {
    let store = CronStore::new(project.cron_store());
    let jobs = store.list().map_err(store_error)?;
    let now = Utc::now();
    Ok(match format {
        Format::Json => {
            let jobs: Vec<_> = jobs
                .iter()
                .map(|job| {
                    json!({
                        "id": job.id,
                        "cron": job.cron,
                        "schedule": describe(job),
                        "recurring": job.recurring,
                        "jitter_seconds": job.jitter_seconds,
                        "created_at": stamp(job.created_at),
                        "last_fired": job.last_fired.map(stamp),
                        "due": job.is_due(now),
                        "next_run": next_run(job, now).map(stamp),
                        "prompt": job.prompt,
                    })
                })
                .collect();
            format!("{}\n", json!({ "jobs": jobs }))
        }
        Format::Table if jobs.is_empty() => format!(
            "No scheduled prompts in {}. The model schedules them with CronCreate during `zr run`; `zr cron` fires them.\n",
            relative(project, &store)
        ),
        Format::Table => table(&jobs, now),
    })
}

fn table(jobs: &[CronJob], now: DateTime<Utc>) -> String {
    let rows: Vec<[String; 5]> = jobs
        .iter()
        .map(|job| {
            let next = if job.is_due(now) {
                "due now".to_owned()
            } else {
                next_run(job, now).map_or_else(|| "never".to_owned(), stamp)
            };
            let kind = if job.recurring { "recurring" } else { "once" };
            [
                job.id.clone(),
                format!("{} ({})", job.cron, describe(job)),
                next,
                kind.to_owned(),
                short(&job.prompt),
            ]
        })
        .collect();
    let header = ["ID", "SCHEDULE (UTC)", "NEXT RUN", "KIND", "PROMPT"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header.map(str::to_owned)).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The next occurrence of `job` after `now` (jitter included).
fn next_run(job: &CronJob, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    job.next_fire_after(now)
}

fn describe(job: &CronJob) -> String {
    job.schedule().map_or_else(
        |e| e.to_string(),
        |s| s.describe().trim_end_matches('.').to_owned(),
    )
}

/// "Next: cron-2 at ..." or that nothing is scheduled.
fn waiting_for(store: &CronStore, now: DateTime<Utc>) -> String {
    let Ok(jobs) = store.list() else {
        return String::new();
    };
    let next = jobs
        .iter()
        .filter_map(|job| {
            let at = if job.is_due(now) {
                Some(now)
            } else {
                next_run(job, now)
            };
            at.map(|at| (at, job))
        })
        .min_by_key(|(at, _)| *at);
    match next {
        Some((at, job)) => format!(
            "{} scheduled; next: {} at {}.",
            plural(jobs.len()),
            job.id,
            time(at)
        ),
        None => "No prompt is scheduled: waiting for CronCreate (during `zr run`) to add one."
            .to_owned(),
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 prompt".to_owned()
    } else {
        format!("{n} prompts")
    }
}

fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// The first line of a prompt, cut to [`PROMPT_CHARS`] characters.
fn short(prompt: &str) -> String {
    let line = prompt.lines().next().unwrap_or_default();
    let cut: String = line.chars().take(PROMPT_CHARS).collect();
    if cut.len() < prompt.trim_end().len() {
        format!("{cut}...")
    } else {
        cut
    }
}

fn relative(project: &Project, store: &CronStore) -> String {
    store
        .path()
        .strip_prefix(&project.root)
        .unwrap_or(store.path())
        .display()
        .to_string()
}

/// A store problem: another scheduler, or a store that cannot be read.
fn store_error(e: CronStoreError) -> CliError {
    match e {
        CronStoreError::SchedulerRunning { .. } => CliError::usage(
            e.to_string(),
            "one `zr cron` per project fires every prompt; stop the other one first to run this one",
        ),
        other => CliError::usage(
            error_chain(&other),
            "fix or remove .zr/cron.json (the scheduled prompts); `zr cron list` shows what it holds",
        ),
    }
}
