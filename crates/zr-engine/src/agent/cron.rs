//! The cron scheduler: runs the prompts that `CronCreate` scheduled as new
//! queries of the session's root, one query at a time, with the runs a
//! recurring job missed while zr was down folded into one.

mod firing;

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use zr_tools::CronJob;
use zr_types::error_chain;

use crate::agent::{Agent, Query, QueryOverrides};
use crate::error::EngineError;

/// The shortest poll interval [`CronScheduler::spawn`] uses.
const MIN_POLL: Duration = Duration::from_millis(10);

/// One firing of a scheduled prompt: the query it started.
#[derive(Debug)]
#[non_exhaustive]
pub struct Fired {
    /// The job as it was before it fired (a one-shot job is gone from the
    /// store now; a recurring one has `last_fired` set to the firing time).
    pub job: CronJob,
    /// The occurrence (jitter included) this firing stands for: the only
    /// one of a one-shot job, the latest due one of a recurring job.
    pub scheduled_for: DateTime<Utc>,
    /// Earlier occurrences of a recurring job that are not run: they fell
    /// due while zr was not running or while another query ran, and this
    /// one firing stands for them all (at most 999 are counted; the prompt
    /// then says "more than 999").
    pub missed: u64,
    /// The prompt the query was sent: the job's prompt, followed by a note
    /// in parentheses when the firing is more than a minute late or stands
    /// for missed runs (when it was scheduled, how many runs were missed,
    /// and whether zr was not running or another query was).
    pub prompt: String,
    /// The query, already running on the Tokio runtime. Its events and
    /// result are the host's; dropping it cancels the query.
    pub query: Query,
}

/// Fires the due prompts of the runtime's cron store
/// (`BuiltinTools::cron`, where `CronCreate` writes) into the session as
/// new queries of its root [`Agent`].
///
/// Semantics:
///
/// - **One query at a time.** A job fires only when the root is free; a
///   job that falls due while a query runs waits for it (it stays due in
///   the store) and fires at the first tick after it. One tick fires at
///   most one job; several due jobs fire one after the other, in creation
///   order.
/// - **Recurring jobs** fire again at their next occurrence after the
///   firing. A recurring job with several due occurrences (zr was not
///   running, or a long query held the root) fires **once**, and its
///   prompt says how many runs were missed and why.
/// - **One-shot jobs** fire once, at the first occurrence after their
///   creation, however late, and are then removed from the store.
/// - **Jitter** is the store's: each job's occurrences are shifted by its
///   fixed offset.
/// - A firing is recorded in the store (`mark_fired`) right after its
///   query started, whatever the query's outcome: a query that fails or is
///   cancelled is not fired again. If the store cannot be written, the
///   scheduler keeps the firing in memory, so that the job does not fire
///   again from this scheduler; another process would fire it again.
///
/// Two schedulers over one store would fire each job twice: a host runs
/// one per store by holding the store's scheduler lock
/// (`CronStore::lock_scheduler`, an OS file lock the kernel releases if
/// the process dies) while its scheduler runs, as `zr cron` does. The
/// scheduler holds its root weakly and stops when it is dropped.
///
/// A host that fires each prompt into a new session makes the scheduler
/// with [`CronScheduler::unbound`] and passes a fresh [`Agent`] to each
/// [`CronScheduler::tick_on`]; running each fired query to its end before
/// the next tick keeps "one query at a time".
///
/// [`CronScheduler::tick`] takes the time as an argument (tests drive it
/// with any clock); [`CronScheduler::spawn`] runs it on the wall clock.
#[derive(Debug)]
pub struct CronScheduler {
    agent: Weak<Agent>,
    /// The time of the first tick: occurrences before it were missed while
    /// zr was not running.
    started: Option<DateTime<Utc>>,
    /// Firings the store could not record, by job id.
    unrecorded: BTreeMap<String, DateTime<Utc>>,
}

impl CronScheduler {
    /// A scheduler for the session of `agent` (held weakly).
    #[must_use]
    pub fn new(agent: &Arc<Agent>) -> Self {
        Self {
            agent: Arc::downgrade(agent),
            started: None,
            unrecorded: BTreeMap::new(),
        }
    }

    /// A scheduler with no root of its own: [`CronScheduler::tick`] and
    /// [`CronScheduler::spawn`] do nothing; the host passes the agent to
    /// fire into to each [`CronScheduler::tick_on`].
    #[must_use]
    pub fn unbound() -> Self {
        Self {
            agent: Weak::new(),
            started: None,
            unrecorded: BTreeMap::new(),
        }
    }

    /// Fires the first job due at `now`, if the root is free: starts its
    /// query, records the firing and returns it. `Ok(None)` when nothing
    /// is due, the root is running a query, or the [`Agent`] is gone. The
    /// first call's `now` counts as the time the scheduler started.
    ///
    /// Reads and writes the store file: call it where blocking is allowed
    /// (as [`CronScheduler::spawn`] does, through `spawn_blocking`), within
    /// a Tokio runtime (the query runs there).
    ///
    /// # Errors
    ///
    /// - [`EngineError::Cron`]: the store cannot be read or parsed;
    /// - [`EngineError::NoRuntime`]: called outside a Tokio runtime.
    pub fn tick(&mut self, now: DateTime<Utc>) -> Result<Option<Fired>, EngineError> {
        let Some(agent) = self.agent.upgrade() else {
            return Ok(None);
        };
        self.tick_on(&agent, now)
    }

    /// [`CronScheduler::tick`] into `agent`'s session instead of the
    /// scheduler's own root: the store is `agent`'s runtime's, the query is
    /// `agent`'s. What fired and what this scheduler could not record are
    /// remembered across calls, whichever agent each one gets.
    ///
    /// # Errors
    ///
    /// As [`CronScheduler::tick`].
    pub fn tick_on(
        &mut self,
        agent: &Agent,
        now: DateTime<Utc>,
    ) -> Result<Option<Fired>, EngineError> {
        let started = *self.started.get_or_insert(now);
        let store = agent.runtime().builtin_tools().cron();
        let jobs = store
            .list()
            .map_err(|source| EngineError::Cron { source })?;
        let Some((job, due)) = jobs.into_iter().find_map(|mut job| {
            if let Some(at) = self.unrecorded.get(&job.id) {
                if !job.recurring {
                    return None;
                }
                job.last_fired = job.last_fired.max(Some(*at));
            }
            let due = firing::due(&job, now)?;
            Some((job, due))
        }) else {
            return Ok(None);
        };
        let prompt = firing::prompt(&job, &due, now, started);
        let mut query = agent.query(prompt.clone(), QueryOverrides::default());
        match query.take_early_error() {
            None => {}
            Some(EngineError::Busy { .. }) => return Ok(None),
            Some(error) => return Err(error),
        }
        tracing::info!(job = %job.id, scheduled_for = %due.scheduled_for, missed = due.missed, "cron job fired");
        if let Err(error) = store.mark_fired(&job.id, now) {
            tracing::warn!(
                job = %job.id,
                error = %error_chain(&error),
                "the cron store cannot record a firing; this scheduler remembers it"
            );
            self.unrecorded.insert(job.id.clone(), now);
        }
        Ok(Some(Fired {
            job,
            scheduled_for: due.scheduled_for,
            missed: due.missed,
            prompt,
            query,
        }))
    }

    /// Runs the scheduler on the wall clock: a tick at once, then one every
    /// `poll_interval` (at least 10 ms), each in `spawn_blocking`. A due
    /// job fires within one interval of its time, or of the end of the
    /// query it waited for. Store errors are logged and retried at the next
    /// tick.
    ///
    /// The returned [`CronHandle`] yields each [`Fired`] query. It ends
    /// when the [`Agent`] is dropped; dropping the handle stops the
    /// scheduler and cancels the fired queries not taken from it.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoRuntime`] when called outside a Tokio runtime.
    pub fn spawn(self, poll_interval: Duration) -> Result<CronHandle, EngineError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| EngineError::NoRuntime)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let task = runtime.spawn(poll(self, poll_interval.max(MIN_POLL), tx));
        Ok(CronHandle { rx, task })
    }
}

async fn poll(mut scheduler: CronScheduler, every: Duration, tx: mpsc::UnboundedSender<Fired>) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        if scheduler.agent.strong_count() == 0 || tx.is_closed() {
            return;
        }
        let now = Utc::now();
        let ticked = tokio::task::spawn_blocking(move || {
            let result = scheduler.tick(now);
            (scheduler, result)
        })
        .await;
        let Ok((back, result)) = ticked else {
            tracing::error!("the cron scheduler's tick panicked; the scheduler stops");
            return;
        };
        scheduler = back;
        match result {
            Ok(Some(fired)) => {
                if tx.send(fired).is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(error = %error_chain(&error), "cron tick failed; retrying at the next one");
            }
        }
    }
}

/// A running [`CronScheduler`]: a `Stream` of the queries it fires.
/// Dropping it stops the scheduler.
#[derive(Debug)]
pub struct CronHandle {
    rx: mpsc::UnboundedReceiver<Fired>,
    task: JoinHandle<()>,
}

impl CronHandle {
    /// Stops the scheduler and waits until its task is gone. Queries
    /// already fired keep running where they were taken to; those not yet
    /// taken are cancelled.
    pub async fn stop(mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }
}

impl Stream for CronHandle {
    type Item = Fired;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Fired>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for CronHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests;
