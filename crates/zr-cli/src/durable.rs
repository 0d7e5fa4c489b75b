//! `zr worker` and `zr run --durable`: sessions on a Restate server
//! (zr-restate). A worker serves the project's sessions; `--durable`
//! submits a turn to the server's ingress and prints its answer.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use zr_engine::{AgentConfig, RuntimeEnvironment, TaskStatus};
use zr_restate::SessionHost;
use zr_types::SessionId;

use crate::ask::Asking;
use crate::cli::{RunArgs, WorkerArgs};
use crate::error::{CliError, EXIT_FAILED};
use crate::project::Project;
use crate::provider;
use crate::run::{open_workspace, prompt_of, warn_diagnostics};
use crate::signal::Signals;

/// The project a worker serves: its runtime and root configuration,
/// built once; each attempt of a turn runs on a copy.
#[derive(Debug)]
struct ProjectHost {
    runtime: Arc<RuntimeEnvironment>,
    config: AgentConfig,
}

impl SessionHost for ProjectHost {
    fn open(&self) -> Result<(RuntimeEnvironment, AgentConfig), String> {
        Ok(((*self.runtime).clone(), self.config.clone()))
    }
}

/// `zr worker`: serves the project until a signal stops it.
pub(crate) async fn worker(root: PathBuf, args: &WorkerArgs) -> Result<u8, CliError> {
    let project = Project::load(root)?;
    warn_diagnostics(&project);
    let chosen = provider::choose(&project, &args.provider, &|v| std::env::var(v).ok())?;
    let mut signals = Signals::install();
    // Nobody watches a worker: nothing is asked at a terminal.
    let workspace = open_workspace(&project, chosen, Asking::Never, &mut signals).await?;
    let host = Arc::new(ProjectHost {
        runtime: Arc::clone(&workspace.runtime),
        config: workspace.config.clone(),
    });
    let listener = zr_restate::listen(&args.listen).await?;
    let addr = listener.local_addr().map_err(|e| {
        CliError::usage(
            format!("cannot listen on {}: {e}", args.listen),
            "choose another --listen address",
        )
    })?;
    let url = args
        .advertise
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(zr_restate::serve(listener, host, async move {
        let _ = stop_rx.await;
    }));
    // No lock on standard error across an await: the log lines of the
    // serving task (`ZR_LOG`) would wait for it while the registration
    // waits for the serving task.
    let _ = writeln!(
        std::io::stderr(),
        "zr worker: serving {} at {url}",
        project.root.display()
    );
    match args
        .admin
        .as_ref()
        .or(project.config.durable.admin.as_ref())
    {
        Some(admin) => {
            zr_restate::register(admin, &url).await?;
            let _ = writeln!(std::io::stderr(), "zr worker: registered with {admin}");
        }
        None => {
            let _ = writeln!(
                std::io::stderr(),
                "zr worker: register it with: curl -X POST http://ADMIN:9070/deployments -H 'content-type: application/json' -d '{{\"uri\": \"{url}\"}}' (or give --admin, or [durable] admin in zr.toml)"
            );
        }
    }
    let stop = signals.recv().await;
    let _ = stop_tx.send(());
    let _ = serving.await;
    drop(workspace);
    Err(stop.into())
}

/// A new session id from the clock and a nonce.
fn new_session() -> SessionId {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let millis = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
    SessionId::from_parts(millis, now.subsec_nanos() ^ std::process::id())
}

/// `zr run --durable`: one turn of a new session, run by the workers.
pub(crate) async fn submit(root: PathBuf, args: &RunArgs) -> Result<u8, CliError> {
    let prompt = prompt_of(args)?;
    let project = Project::load(root)?;
    let ingress = args
        .ingress
        .as_ref()
        .or(project.config.durable.ingress.as_ref())
        .ok_or_else(|| {
            CliError::usage(
                "--durable needs the Restate server's ingress URL",
                "set [durable] ingress = \"http://HOST:8080\" in zr.toml, or give --ingress URL",
            )
        })?;
    let session = new_session();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "session {session}: submitted to {ingress}");
    drop(err);
    let answer = zr_restate::submit(ingress, &session, &prompt).await?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", answer.output);
    Ok(if answer.status == TaskStatus::Completed {
        0
    } else {
        EXIT_FAILED
    })
}
