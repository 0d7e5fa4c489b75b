//! `CronCreate`, `CronDelete`, `CronList`: prompts scheduled with 5-field
//! cron expressions, kept durably in a JSON file. The engine's scheduler
//! asks [`CronStore::due`] which prompts to run, under
//! [`CronStore::lock_scheduler`].

mod lock;
mod schedule;
mod store;
mod tools;

pub use lock::SchedulerLock;
pub use schedule::Schedule;
pub use store::{CronJob, CronStore, NewCronJob};
pub(crate) use tools::{CronCreateTool, CronDeleteTool, CronListTool};
