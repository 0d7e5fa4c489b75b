//! The three cron tools over one [`CronStore`].

use std::fmt::Write as _;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use super::store::{CronJob, CronStore, NewCronJob};
use crate::error::CronStoreError;
use crate::toolkit::{Builtin, Hints, blocking, tool_failed};

/// Largest jitter a job may ask for.
pub(crate) const MAX_JITTER_SECONDS: u32 = 3600;

fn summary(job: &CronJob, now: DateTime<Utc>) -> String {
    let what = job.schedule().map_or_else(
        |e| e.to_string(),
        |s| s.describe().trim_end_matches('.').to_owned(),
    );
    let next = job.next_fire_after(now).map_or_else(
        || "never".to_owned(),
        |t| t.to_rfc3339_opts(SecondsFormat::Secs, true),
    );
    let kind = if job.recurring { "recurring" } else { "once" };
    let jitter = if job.jitter_seconds > 0 {
        format!(", jitter up to {} s", job.jitter_seconds)
    } else {
        String::new()
    };
    format!(
        "{}: `{}` = {what} (UTC), {kind}{jitter}; next run {next}; prompt: {:?}",
        job.id, job.cron, job.prompt
    )
}

fn store_failed(tool: &str, e: CronStoreError) -> Result<ToolOutput, ToolError> {
    match e {
        CronStoreError::Expression { ref source, .. } => {
            Ok(ToolOutput::error(format!("{tool}: {e}: {source}.")))
        }
        CronStoreError::FieldCount { .. }
        | CronStoreError::NeverFires { .. }
        | CronStoreError::UnknownJob { .. } => Ok(ToolOutput::error(format!("{tool}: {e}."))),
        other => Err(tool_failed(tool, other)),
    }
}

/// Input of `CronCreate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CronCreateInput {
    /// A standard 5-field cron expression in UTC: minute hour day-of-month month day-of-week, e.g. `0 9 * * 1-5`.
    cron: String,
    /// The prompt to run when it fires.
    prompt: String,
    /// Fire on every occurrence (default true); false fires once, then the job is removed.
    recurring: Option<bool>,
    /// Delay each firing by a fixed offset of up to this many seconds (at most 3600), to spread load.
    #[schemars(range(max = 3600))]
    jitter_seconds: Option<u32>,
}

/// The `CronCreate` tool.
#[derive(Debug)]
pub(crate) struct CronCreateTool {
    store: Arc<CronStore>,
    /// The host's word on when stored prompts fire, added to the answer.
    fires_under: Option<Arc<str>>,
}

impl CronCreateTool {
    pub(crate) fn new(store: Arc<CronStore>, fires_under: Option<Arc<str>>) -> Self {
        Self { store, fires_under }
    }
}

impl Builtin for CronCreateTool {
    type Input = CronCreateInput;
    const NAME: BuiltinName = BuiltinName::CronCreate;
    const HINTS: Hints = Hints::local_change(false, false);

    fn details(&self) -> String {
        "`cron` is a standard 5-field expression evaluated in UTC; `recurring` (default true) or once; optional `jitter_seconds`. Schedules are stored durably and run by the host as new prompts. Returns the job id and its next run.".to_owned()
    }

    fn run<'a>(
        &'a self,
        input: CronCreateInput,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if input.prompt.trim().is_empty() {
                return Ok(ToolOutput::error("CronCreate: `prompt` is empty."));
            }
            let jitter = input.jitter_seconds.unwrap_or(0);
            if jitter > MAX_JITTER_SECONDS {
                return Ok(ToolOutput::error(format!(
                    "CronCreate: `jitter_seconds` is {jitter}; at most {MAX_JITTER_SECONDS} is allowed."
                )));
            }
            let store = Arc::clone(&self.store);
            let now = Utc::now();
            let new = NewCronJob {
                cron: input.cron,
                prompt: input.prompt,
                recurring: input.recurring.unwrap_or(true),
                jitter_seconds: jitter,
            };
            match blocking(Self::NAME.as_str(), move || store.create(new, now)).await? {
                Ok(job) => {
                    let mut text = format!("Scheduled {}", summary(&job, now));
                    if let Some(note) = &self.fires_under {
                        let _ = write!(text, "\n{note}");
                    }
                    Ok(ToolOutput::text(text))
                }
                Err(e) => store_failed(Self::NAME.as_str(), e),
            }
        })
    }
}

/// Input of `CronDelete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CronDeleteInput {
    /// The job id, as CronCreate or CronList gave it (e.g. `cron-3`).
    id: String,
}

/// The `CronDelete` tool.
#[derive(Debug)]
pub(crate) struct CronDeleteTool {
    store: Arc<CronStore>,
}

impl CronDeleteTool {
    pub(crate) fn new(store: Arc<CronStore>) -> Self {
        Self { store }
    }
}

impl Builtin for CronDeleteTool {
    type Input = CronDeleteInput;
    const NAME: BuiltinName = BuiltinName::CronDelete;
    const HINTS: Hints = Hints::local_change(true, true);

    fn details(&self) -> String {
        "Removes the job with this `id` (see CronList).".to_owned()
    }

    fn run<'a>(
        &'a self,
        input: CronDeleteInput,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let store = Arc::clone(&self.store);
            let id = input.id;
            match blocking(Self::NAME.as_str(), move || store.delete(&id)).await? {
                Ok(job) => Ok(ToolOutput::text(format!(
                    "Deleted {} (`{}`).",
                    job.id, job.cron
                ))),
                Err(e) => store_failed(Self::NAME.as_str(), e),
            }
        })
    }
}

/// Input of `CronList` (no fields).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CronListInput {}

/// The `CronList` tool.
#[derive(Debug)]
pub(crate) struct CronListTool {
    store: Arc<CronStore>,
}

impl CronListTool {
    pub(crate) fn new(store: Arc<CronStore>) -> Self {
        Self { store }
    }
}

impl Builtin for CronListTool {
    type Input = CronListInput;
    const NAME: BuiltinName = BuiltinName::CronList;
    const HINTS: Hints = Hints::LOCAL;

    fn details(&self) -> String {
        "Shows each job's id, expression, a plain-English summary, whether it recurs, its next run (UTC) and its prompt.".to_owned()
    }

    fn run<'a>(
        &'a self,
        _input: CronListInput,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let store = Arc::clone(&self.store);
            let now = Utc::now();
            match blocking(Self::NAME.as_str(), move || store.list()).await? {
                Ok(jobs) if jobs.is_empty() => Ok(ToolOutput::text("No scheduled prompts.")),
                Ok(jobs) => {
                    let mut text = format!("{} scheduled prompts:\n", jobs.len());
                    for job in &jobs {
                        let _ = writeln!(text, "- {}", summary(job, now));
                    }
                    Ok(ToolOutput::text(text))
                }
                Err(e) => store_failed(Self::NAME.as_str(), e),
            }
        })
    }
}
