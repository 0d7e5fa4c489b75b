//! `zr worker`, `zr run --durable` and `zr resume` of a durable session:
//! sessions on a Restate server (zr-restate). A worker serves the
//! project's sessions; `--durable` sends a turn to the server's ingress,
//! follows its journal live through the admin API (when `[durable] admin`
//! is known) and prints its answer; `zr resume` attaches to a durable
//! session's running turn, or runs its next one.

mod follow;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use zr_engine::{AgentConfig, RuntimeEnvironment, TaskStatus};
use zr_restate::SessionHost;
use zr_types::SessionId;

use crate::ask::Asking;
use crate::cli::{OutputArgs, ResumeArgs, RunArgs, WorkerArgs};
use crate::error::{CliError, EXIT_FAILED};
use crate::project::Project;
use crate::provider;
use crate::run::{open_workspace, prompt_of, warn_diagnostics};
use crate::signal::Signals;
use follow::Shown;

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

/// `zr worker`: serves the project until a signal stops it (its agents'
/// spans exported with `[telemetry]`).
pub(crate) async fn worker(root: PathBuf, args: &WorkerArgs) -> Result<u8, CliError> {
    let project = Project::load(root)?;
    crate::telemetry::around(&project, serve_project(&project, args)).await
}

/// `zr worker` once the project is loaded.
async fn serve_project(project: &Project, args: &WorkerArgs) -> Result<u8, CliError> {
    warn_diagnostics(project);
    let chosen = provider::choose(project, &args.provider, &|v| project.var(v))?;
    let mut signals = Signals::install();
    // Nobody watches a worker: nothing is asked at a terminal.
    let workspace = open_workspace(project, chosen, Asking::Never, &mut signals).await?;
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

/// The server's URLs from the flags, else `[durable]`.
struct Server {
    ingress: String,
    admin: Option<String>,
}

impl Server {
    fn of(project: &Project, ingress: Option<&String>) -> Result<Self, CliError> {
        let ingress = ingress
            .or(project.config.durable.ingress.as_ref())
            .cloned()
            .ok_or_else(|| {
                CliError::usage(
                    "--durable needs the Restate server's ingress URL",
                    "set [durable] ingress = \"http://HOST:8080\" in zr.toml, or give --ingress URL",
                )
            })?;
        Ok(Self {
            ingress,
            admin: project.config.durable.admin.clone(),
        })
    }

    /// Waits for the turn `invocation` of `session`, following its
    /// journal when the admin API is known; prints the answer (with
    /// `--json`, the `result` line).
    async fn finish(
        &self,
        session: &SessionId,
        invocation: &str,
        shown: Shown,
    ) -> Result<u8, CliError> {
        let start = Instant::now();
        let answer = zr_restate::attach(&self.ingress, session, invocation);
        let answer = match &self.admin {
            Some(admin) => {
                let (ended, on_end) = tokio::sync::oneshot::channel::<()>();
                let following = follow::follow(admin, invocation, shown, start, async {
                    let _ = on_end.await;
                });
                let (answer, ()) = tokio::join!(
                    async {
                        let answer = answer.await;
                        let _ = ended.send(());
                        answer
                    },
                    following
                );
                answer
            }
            None => answer.await,
        };
        let mut out = std::io::stdout().lock();
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) if shown == Shown::Json => {
                let error = zr_types::error_chain(&e);
                let _ = writeln!(out, "{}", result_line(session, invocation, None, &error));
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        if shown == Shown::Json {
            let _ = writeln!(
                out,
                "{}",
                result_line(session, invocation, Some(&answer), "")
            );
        } else {
            let _ = writeln!(out, "{}", crate::run::for_stdout(&answer.output));
        }
        Ok(if answer.status == TaskStatus::Completed {
            0
        } else {
            EXIT_FAILED
        })
    }

    /// Sends a turn of `session` and finishes it.
    async fn turn(&self, session: &SessionId, prompt: &str, shown: Shown) -> Result<u8, CliError> {
        let invocation = zr_restate::send(&self.ingress, session, prompt).await?;
        if shown != Shown::Quiet {
            let _ = writeln!(
                std::io::stderr(),
                "session {session}: submitted to {} (invocation {invocation})",
                self.ingress
            );
        }
        self.finish(session, &invocation, shown).await
    }
}

/// The `result` line of `--json` for a durable turn: `session`, `status`,
/// `output`, `turns` and the turn's `invocation`, as a local run's
/// `result` line; `status` `error` with `error` when the answer could
/// not be had.
fn result_line(
    session: &SessionId,
    invocation: &str,
    answer: Option<&zr_restate::TurnAnswer>,
    error: &str,
) -> String {
    let mut fields = vec![
        ("type", json!("result")),
        ("session", json!(session.as_str())),
    ];
    match answer {
        Some(answer) => fields.extend([
            ("status", json!(answer.status.as_str())),
            ("output", json!(answer.output)),
            ("turns", json!(answer.turns)),
        ]),
        None => fields.extend([("status", json!("error")), ("error", json!(error))]),
    }
    fields.push(("invocation", json!(invocation)));
    crate::render::json::line(&fields)
}

/// How `output` asks a turn to be shown.
fn shown(output: &OutputArgs) -> Shown {
    if output.json {
        Shown::Json
    } else if output.quiet {
        Shown::Quiet
    } else {
        Shown::Plain
    }
}

/// `zr run --durable`: one turn of a new session, run by the workers.
pub(crate) async fn submit(root: PathBuf, args: &RunArgs) -> Result<u8, CliError> {
    let prompt = prompt_of(args)?;
    let project = Project::load(root)?;
    let server = Server::of(&project, args.ingress.as_ref())?;
    server
        .turn(&new_session(), &prompt, shown(&args.output))
        .await
}

/// `zr resume SESSION` of a session the Restate server of `[durable]
/// admin` holds: attaches to its turn while it runs; once it ended, runs
/// the next turn with the prompt given (without one, says so and prints
/// the last answer). `None`: not a durable session (no `[durable]`
/// admin, an id the server does not know): the local resume applies.
///
/// # Errors
///
/// What attaching or the turn fails with.
pub(crate) async fn resume(
    root: &std::path::Path,
    args: &ResumeArgs,
) -> Option<Result<u8, CliError>> {
    let project = match Project::load(root.to_owned()) {
        Ok(project) => project,
        Err(e) => return Some(Err(e)),
    };
    let admin = project.config.durable.admin.clone()?;
    let session: SessionId = args.session.parse().ok()?;
    let turn = match zr_restate::last_turn(&admin, &session).await {
        Ok(turn) => turn?,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "warning: {}; resuming {session} from this machine's transcripts",
                zr_types::error_chain(&e)
            );
            return None;
        }
    };
    let server = match Server::of(&project, None) {
        Ok(server) => server,
        Err(e) => return Some(Err(e)),
    };
    let shown = shown(&args.output);
    let mut err = std::io::stderr();
    Some(if !turn.ended() {
        let _ = writeln!(
            err,
            "session {session}: its turn {} is {} on the Restate server; following it",
            turn.invocation, turn.status
        );
        server.finish(&session, &turn.invocation, shown).await
    } else if let Some(prompt) = &args.prompt {
        let _ = writeln!(
            err,
            "session {session}: its last turn {} ended; running the next turn",
            turn.invocation
        );
        server.turn(&session, prompt, shown).await
    } else {
        let _ = writeln!(
            err,
            "session {session}: its last turn {} ended; its answer follows (give a prompt to run the next turn)",
            turn.invocation
        );
        server.finish(&session, &turn.invocation, shown).await
    })
}

/// The durable sessions of the server of `[durable] admin`, for `zr
/// sessions` (empty without one; a server that cannot be asked is a
/// warning).
pub(crate) async fn sessions(
    root: &std::path::Path,
) -> (Vec<zr_restate::DurableTurn>, Option<String>) {
    let Ok(project) = Project::load(root.to_owned()) else {
        return (Vec::new(), None);
    };
    let Some(admin) = project.config.durable.admin.as_ref() else {
        return (Vec::new(), None);
    };
    match zr_restate::sessions(admin).await {
        Ok(turns) => (turns, None),
        Err(e) => (Vec::new(), Some(zr_types::error_chain(&e))),
    }
}
