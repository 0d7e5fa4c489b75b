//! `zr run` and `zr resume`: build the agent, stream its query through a
//! renderer, stop cleanly on Ctrl-C.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt as _;
use zr_engine::{
    Agent, Query, QueryOverrides, QueryResult, SessionEndReason, TaskResult, TaskStatus,
};

use crate::ask::{Asking, Screen, ScreenRequests};
use crate::cli::{OutputArgs, ResumeArgs, RunArgs};
use crate::error::{CliError, EXIT_FAILED, EXIT_OK};
use crate::project::Project;
use crate::provider;
use crate::render::{self, Renderer};
use crate::session::Workspace;
use crate::sessions;
use crate::signal::Signals;
use crate::telemetry;

mod background;
mod mcp_prompt;
pub(crate) mod resume_checks;

/// `zr run PROMPT`.
///
/// # Errors
///
/// Any [`CliError`]; Ctrl-C, SIGTERM and SIGHUP are [`CliError::Stopped`].
pub(crate) async fn run(root: PathBuf, args: &RunArgs) -> Result<u8, CliError> {
    let prompt = prompt_of(args)?;
    let command = mcp_prompt::parse(&prompt, &args.args)?;
    let project = crate::preflight::load(root, &args.provider)?;
    if let Some(command) = &command {
        command.check(&project)?;
    }
    telemetry::around(
        &project,
        run_loaded(&project, prompt, command.as_ref(), args),
    )
    .await
}

/// `zr run` once the project is loaded and logging started; `command` is
/// a `/server:prompt` the prompt named.
async fn run_loaded(
    project: &Project,
    prompt: String,
    command: Option<&mcp_prompt::PromptCommand>,
    args: &RunArgs,
) -> Result<u8, CliError> {
    warn_diagnostics(project);
    let chosen = provider::choose(project, &args.provider, &|v| project.var(v))?;
    tracing::debug!(provider = ?chosen.kind, model = %chosen.model, "provider chosen");
    warn_aliases(project, chosen.kind);
    let mut signals = Signals::install();
    let workspace = open_workspace(project, chosen, Asking::OnTerminal, &mut signals).await?;
    warn_servers(&workspace);
    let prompt = match command {
        Some(command) => command.expand(&workspace).await?,
        None => prompt,
    };
    let agent = Agent::new(Arc::clone(&workspace.runtime), workspace.config.clone());
    // A new session: nobody else holds its lock, and nothing was left.
    let _running = sessions::RunningMark::acquire(&project.sessions_dir(), agent.session_id())
        .map_err(|held| resume_checks::running_now(agent.session_id(), &held))?;
    let overrides = QueryOverrides {
        max_turns: args.max_turns,
        ..QueryOverrides::default()
    };
    let query = agent.query(prompt, overrides);
    show(agent, workspace, query, &args.output, &mut signals).await
}

/// The prompt of `zr run -`: all of standard input.
/// The prompt of `zr run` (`-`: standard input), refused when empty.
pub(crate) fn prompt_of(args: &RunArgs) -> Result<String, CliError> {
    let prompt = if args.prompt == "-" {
        read_stdin()?
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return Err(empty_prompt(
            "zr run \"PROMPT\" (or text on standard input with `zr run -`)",
        ));
    }
    Ok(prompt)
}

fn read_stdin() -> Result<String, CliError> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text).map_err(|e| {
        CliError::usage(
            format!("cannot read the prompt from standard input: {e}"),
            "pipe UTF-8 text into `zr run -`, or give the prompt as an argument",
        )
    })?;
    Ok(text)
}

/// `zr resume SESSION [--agent ID] [PROMPT]`: the session's root (or
/// `--agent`) continues from its transcript; with no prompt, the turn an
/// interruption cut short is finished.
///
/// # Errors
///
/// Any [`CliError`]; Ctrl-C, SIGTERM and SIGHUP are [`CliError::Stopped`].
pub(crate) async fn resume(root: PathBuf, args: &ResumeArgs) -> Result<u8, CliError> {
    if args.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
        return Err(empty_prompt(&format!(
            "zr resume {} \"PROMPT\", or no prompt to finish an interrupted run",
            args.session
        )));
    }
    let project = Project::load(root)?;
    telemetry::around(&project, resume_loaded(&project, args)).await
}

/// `zr resume` once the project is loaded and logging started.
async fn resume_loaded(project: &Project, args: &ResumeArgs) -> Result<u8, CliError> {
    warn_diagnostics(project);
    let session = resume_checks::check(&project.root, args)?;
    // Held until the run ends; before any server starts. What a killed
    // run of this session left running is killed here.
    let running = sessions::RunningMark::acquire(&project.sessions_dir(), &session.id)
        .map_err(|held| resume_checks::running_now(&session.id, &held))?;
    let _running = running.map(|(mark, killed)| {
        report_killed(&session.id, &killed);
        mark
    });
    let chosen = provider::choose(project, &args.provider, &|v| project.var(v))?;
    warn_aliases(project, chosen.kind);
    let mut signals = Signals::install();
    let workspace = open_workspace(project, chosen, Asking::OnTerminal, &mut signals).await?;
    warn_servers(&workspace);
    let agent = Agent::resume(
        Arc::clone(&workspace.runtime),
        workspace.config.clone(),
        &session.id,
    )?;
    let query = match &session.agent {
        Some(id) => agent.resume_subagent(id, args.prompt.clone()),
        None => match &args.prompt {
            Some(prompt) => agent.query(prompt.clone(), QueryOverrides::default()),
            None if agent.interrupted() => agent.continue_interrupted(QueryOverrides::default()),
            None => return Err(resume_checks::nothing_to_continue(&session.id, "finished")),
        },
    };
    show(agent, workspace, query, &args.output, &mut signals).await
}

/// `killed N processes (pid P: COMMAND; ...) that an earlier run of
/// session S left running when it was killed`.
fn report_killed(session: &zr_types::SessionId, killed: &[zr_process::Leftover]) {
    if !killed.is_empty() {
        say(&format!(
            "killed {} that an earlier run of session {session} left running when it was killed",
            sessions::describe(killed)
        ));
    }
}

/// Streams `query` through the renderer `output` asks for; then stops the
/// agent (its background agents) before the MCP servers.
async fn show(
    agent: Agent,
    workspace: Workspace,
    query: Query,
    output: &OutputArgs,
    signals: &mut Signals,
) -> Result<u8, CliError> {
    let mut workspace = workspace;
    let mut renderer = render::choose(output, workspace.colours());
    let announce = !output.json && !output.quiet;
    let screen = workspace.screen.take();
    let outcome = drive(&agent, query, renderer.as_mut(), signals, announce, screen).await;
    // The SessionEnd hooks, before the agent and its servers go.
    agent.end(SessionEndReason::Other).await;
    drop(agent);
    drop(workspace);
    outcome
}

/// Connects the MCP servers and builds the runtime; a stopping signal
/// meanwhile drops what was started (the servers are killed) and stops.
pub(crate) async fn open_workspace(
    project: &Project,
    chosen: provider::Chosen,
    asking: Asking,
    signals: &mut Signals,
) -> Result<Workspace, CliError> {
    tokio::select! {
        workspace = Workspace::open(
            project,
            chosen.provider,
            chosen.model,
            crate::model_aliases::family(Some(chosen.kind)),
            asking,
        ) => workspace,
        stop = signals.recv() => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{}: stopped while starting, before the run began", stop.name());
            Err(stop.into())
        }
    }
}

/// Streams `query` into `renderer` until it ends or a signal stops it;
/// prints the answer; returns the exit code.
///
/// On a signal the query is cancelled: its agents stop, the processes of
/// their tool calls are killed and waited for, and the transcripts stay
/// resumable; the session id is printed with the `zr resume` command. A
/// second signal while that runs stops waiting: the caller's drops (and
/// the runtime's shutdown) still kill every process.
pub(crate) async fn drive(
    agent: &Agent,
    mut query: Query,
    renderer: &mut dyn Renderer,
    signals: &mut Signals,
    announce: bool,
    mut screen: Option<ScreenRequests>,
) -> Result<u8, CliError> {
    let session = agent.session_id().clone();
    let mut tick = tokio::time::interval(render::TICK);
    let mut follow = background::Follow::new(agent);
    // Events that came while the person was asked, shown afterwards.
    let mut held: Option<Vec<zr_engine::Event>> = None;
    let stopped = loop {
        tokio::select! {
            event = query.next() => match event {
                Some(event) => {
                    follow.seen(&event);
                    match &mut held {
                        Some(held) => held.push(event),
                        None => renderer.event(&event),
                    }
                }
                None => break None,
            },
            stop = signals.recv() => break Some(stop),
            request = next_request(&mut screen) => match request {
                Screen::Pause(ack) => {
                    if held.is_none() {
                        renderer.pause();
                        held = Some(Vec::new());
                    }
                    let _ = ack.send(());
                }
                Screen::Resume => {
                    for event in held.take().unwrap_or_default() {
                        renderer.event(&event);
                    }
                    renderer.resume();
                }
            },
            _ = tick.tick() => if held.is_none() {
                renderer.tick();
            },
        }
    };
    for event in held.take().unwrap_or_default() {
        renderer.event(&event);
    }
    if let Some(stop) = stopped {
        tracing::debug!(signal = stop.name(), "stopping the run");
        renderer.finish(&session, None, Some(render::INTERRUPTED));
        say(&format!(
            "{}: stopping the agents and their processes (again to stop at once)",
            stop.name()
        ));
        tokio::select! {
            () = async {
                query.cancel().await;
                let _ = background::stop_all(agent).await;
            } => {}
            again = signals.recv() => {
                say(&format!("{}: not waiting for the agents to stop; killing their processes", again.name()));
            }
        }
        say(&format!(
            "interrupted; session {session} is saved. To continue it: zr resume {session}"
        ));
        return Err(stop.into());
    }
    match query.finish().await {
        Ok(result) => {
            // The root answered; its background agents may still work.
            let late = background::wait(follow, agent, renderer, signals, announce).await;
            let mut stopped = Vec::new();
            if let Some(stop) = late {
                say(&format!(
                    "{}: stopping the background agents and their processes (again to stop at once)",
                    stop.name()
                ));
                tokio::select! {
                    ids = background::stop_all(agent) => stopped = ids,
                    again = signals.recv() => {
                        say(&format!("{}: not waiting for the agents to stop; killing their processes", again.name()));
                    }
                }
            }
            renderer.finish(&session, Some(&result), None);
            for failed in &result.failed_subagents {
                say(&failed_line(failed));
            }
            if let Some(end) = result.budget_ended {
                say(&format!(
                    "stopped: {end} is spent; the answer is the agents' summary"
                ));
            }
            if renderer.prints_answer() {
                print_answer(&result);
            }
            match late {
                Some(stop) => {
                    // The root finished: what can go on is a stopped agent.
                    let ids: Vec<String> = stopped.iter().map(ToString::to_string).collect();
                    let hint = match ids.as_slice() {
                        [one] => format!(
                            "To continue its background agent: zr resume {session} --agent {one}"
                        ),
                        [] => format!(
                            "To continue a background agent: zr resume {session} --agent ID"
                        ),
                        many => format!(
                            "To continue a background agent: zr resume {session} --agent ID (one of {})",
                            many.join(", ")
                        ),
                    };
                    say(&format!("interrupted; session {session} is saved. {hint}"));
                    Err(stop.into())
                }
                None => Ok(exit_code(&result)),
            }
        }
        Err(e) => {
            let text = crate::session::error_chain(&e);
            renderer.finish(&session, None, Some(&text));
            Err(e.into())
        }
    }
}

/// The next request of the terminal's asker; never, without a terminal.
async fn next_request(screen: &mut Option<ScreenRequests>) -> Screen {
    match screen {
        Some(rx) => match rx.recv().await {
            Some(request) => request,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// A subagent that failed, though the root went on: `warning: subagent
/// ID (TYPE) failed: WHY`.
fn failed_line(failed: &TaskResult) -> String {
    let id = failed
        .agent_id
        .as_ref()
        .map_or_else(|| "-".to_owned(), ToString::to_string);
    let why = failed.error.as_deref().unwrap_or("no reason given");
    format!(
        "warning: subagent {id} ({}) failed: {why}",
        failed.agent_type
    )
}

/// A line on standard error, whatever the renderer (also with `--quiet`
/// and `--json`).
pub(crate) fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
    let _ = err.flush();
}

/// The answer on standard output: as the model wrote it when that is a
/// file or a pipe (the raw text is what was asked for), without control
/// sequences on a terminal (a model's text must not write the clipboard or
/// retitle the window).
fn print_answer(result: &QueryResult) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", for_stdout(&result.output));
    if !result.output.ends_with('\n') {
        let _ = writeln!(out);
    }
    let _ = out.flush();
}

/// `text` as printed on standard output: [`printable`] on a terminal,
/// raw otherwise.
///
/// [`printable`]: crate::render::plain::printable
pub(crate) fn for_stdout(text: &str) -> std::borrow::Cow<'_, str> {
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        std::borrow::Cow::Owned(crate::render::plain::printable(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// 0 for a completed run, 1 for one that ended otherwise.
fn exit_code(result: &QueryResult) -> u8 {
    if result.status == TaskStatus::Completed {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// Problems in `.mcp.json` server entries, agent and skill files, as
/// `warning: FILE:LINE: ...` lines on standard error (paths relative to the
/// project); the run goes on without the servers and files that could not
/// be loaded.
pub(crate) fn warn_diagnostics(project: &Project) {
    for warning in project.mcp_warnings() {
        eprintln!("{warning}");
    }
    crate::inspect::print_diagnostics(project, project.diagnostics());
}

/// Agent types whose `model` is an alias the chosen provider has no id
/// for, as `warning: FILE:LINE: ...` lines (the agent runs on the
/// session's model), and those whose `model: NAME:id` names a provider
/// profile `zr.toml` lacks (a Task call for them fails). A broken `[model.aliases]` is reported when the
/// workspace opens.
pub(crate) fn warn_aliases(project: &Project, kind: crate::cli::ProviderKind) {
    let family = crate::model_aliases::family(Some(kind));
    if let Ok(aliases) = crate::model_aliases::table(project, family) {
        for line in crate::model_aliases::warnings(project, &project.agents, &aliases) {
            eprintln!("{line}");
        }
        for line in crate::model_profiles::warnings(project, &project.agents, &aliases, family) {
            eprintln!("{line}");
        }
    }
}

pub(crate) fn warn_servers(workspace: &Workspace) {
    tracing::debug!(
        configured = workspace.hub.config().servers().len(),
        connected = workspace.leases.len(),
        "MCP servers"
    );
    for failed in &workspace.failed_servers {
        eprintln!(
            "warning: MCP server '{}' is left out, the run goes on without its tools: {}\n  help: {}; `zr mcp list` shows every server's status",
            failed.name, failed.summary, failed.help
        );
    }
}

/// An empty or blank prompt: nothing to ask (`example`: the command to
/// type instead).
fn empty_prompt(example: &str) -> CliError {
    CliError::usage(
        "the prompt is empty",
        format!("give the task in words: {example}"),
    )
}
