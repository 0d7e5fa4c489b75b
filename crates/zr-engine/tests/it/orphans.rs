//! No orphans, no zombies: however a subagent ends (completed, failed,
//! timed out, cancelled, its query dropped, a tool that panics), no process
//! its tool calls started is alive or a zombie afterwards, its background
//! commands' logs are gone, and the observer heard of its end once.
//!
//! Each test starts `sleep` under its own names (symbolic links named
//! `zo<pid><tag><role>`), so that `/proc/<pid>/stat` names them even as
//! zombies, whose command line is empty.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tempfile::TempDir;
use zr_caps::{AgentCapabilities, AgentType};
use zr_engine::{AgentConfig, Event, EventKind, Query, QueryOverrides, TaskStatus};
use zr_resolve::ResolvedPool;
use zr_types::{
    AgentId, BoxFuture, SessionId, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput,
};

use crate::support::{Harness, custom, finished, run, sub_agent, task_call, text};

/// The three commands of a test: one in the background, two started by a
/// foreground call (one of them left behind with `&`).
struct Marks {
    dir: TempDir,
    names: [String; 3],
}

impl Marks {
    fn new(tag: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let sleep = ["/bin/sleep", "/usr/bin/sleep"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap();
        let pid = std::process::id() % 100_000;
        let names = ["b", "f", "g"].map(|role| format!("zo{pid}{tag}{role}"));
        for name in &names {
            assert!(name.len() <= 15, "{name} fits a process name");
            std::os::unix::fs::symlink(sleep, dir.path().join(name)).unwrap();
        }
        Self { dir, names }
    }

    fn bin(&self, i: usize) -> String {
        self.dir.path().join(&self.names[i]).display().to_string()
    }

    /// `Bash` with `run_in_background`.
    fn background(&self) -> Value {
        json!({"name": "Bash", "input": {"command": format!("{} 600", self.bin(0)), "run_in_background": true}})
    }

    /// A foreground command that leaves one process behind and waits for
    /// another (`hang`) or returns after two seconds.
    fn foreground_command(&self, hang: bool) -> String {
        let (f, g) = (self.bin(1), self.bin(2));
        if hang {
            format!("{f} 600 & {g} 600")
        } else {
            format!("{f} 600 & {g} 600 & sleep 2; echo started")
        }
    }

    fn foreground(&self, hang: bool) -> Value {
        json!({"name": "Bash", "input": {"command": self.foreground_command(hang)}})
    }
}

/// A process of ours found in `/proc`.
#[derive(Debug)]
#[allow(dead_code, reason = "printed when a test fails")]
struct Found {
    pid: u32,
    name: String,
    /// Named so itself (else: a shell with the name in its command line).
    own: bool,
    state: char,
    parent: u32,
}

/// Processes named one of `names` (in `stat`, which zombies keep) or with
/// one of them in their command line.
fn scan(names: &[String]) -> Vec<Found> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = &stat[open + 1..close];
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let parent = rest.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
        let named = names.iter().find(|n| comm == n.as_str());
        if let Some(name) = named.or_else(|| names.iter().find(|n| cmdline.contains(n.as_str()))) {
            found.push(Found {
                pid,
                name: name.clone(),
                own: named.is_some(),
                state,
                parent,
            });
        }
    }
    found
}

/// Notes every command seen running (alive, not a zombie; the process
/// itself, not a shell naming it) until dropped.
struct Watch {
    seen: Arc<Mutex<BTreeSet<String>>>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    fn new(marks: &Marks) -> Self {
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let names = marks.names.to_vec();
        std::thread::spawn({
            let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
            move || {
                while !stop.load(Ordering::Relaxed) {
                    for f in scan(&names) {
                        if f.own && f.state != 'Z' {
                            seen.lock().unwrap().insert(f.name);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        Self { seen, stop }
    }

    fn seen(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Waits until all three were seen alive.
    async fn all_running(&self) {
        let start = Instant::now();
        while self.seen() < 3 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the commands never ran: {:?}",
                self.seen.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Counts each agent's ends.
#[derive(Debug, Default)]
struct Ends(Mutex<Vec<AgentId>>);

impl Ends {
    fn of(&self, agent: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a.as_str() == agent)
            .count()
    }
}

impl zr_engine::AgentObserver for Ends {
    fn agent_started(&self, _: &SessionId, _: &AgentId, _: &ResolvedPool) {}

    fn agent_finished(&self, _: &SessionId, agent: &AgentId) {
        self.0.lock().unwrap().push(agent.clone());
    }
}

/// The log file a background `Bash` call reported.
fn log_of(output: &str) -> PathBuf {
    let start = output.find("go to ").unwrap() + "go to ".len();
    let len = output[start..].find("; Read").unwrap();
    PathBuf::from(&output[start..start + len])
}

/// The log of the worker's background command, from the events.
fn background_log(events: &[Event]) -> PathBuf {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCallFinished { summary, .. }
                if summary.starts_with("Started in the background") =>
            {
                Some(log_of(summary))
            }
            _ => None,
        })
        .expect("a background command started")
}

/// After an exit path: every command ran; none of them is left alive or
/// a zombie of this process; the orphans that init inherited when their
/// shell was killed are reaped too; the background log is gone; the
/// worker ended once.
async fn assert_clean(marks: &Marks, watch: &Watch, log: &Path, ends: &Ends) {
    assert_eq!(watch.seen(), 3, "every command ran");
    let me = std::process::id();
    let ours = || -> Vec<Found> {
        scan(&marks.names)
            .into_iter()
            .filter(|f| f.state != 'Z' || f.parent == me)
            .collect()
    };
    // Killed processes take a moment to die, and a dropped query's
    // cleanup runs on its own.
    let start = Instant::now();
    let mut left = ours();
    while !left.is_empty() && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = ours();
    }
    assert!(left.is_empty(), "alive, or zombies of ours: {left:?}");
    // Init reaps its orphans in its own time (in some sandboxes, seconds).
    let start = Instant::now();
    let mut left = scan(&marks.names);
    while !left.is_empty() && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = scan(&marks.names);
    }
    assert!(left.is_empty(), "never reaped: {left:?}");
    assert!(!log.exists(), "{} was removed", log.display());
    let start = Instant::now();
    while ends.of("root.0001-worker") == 0 && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(ends.of("root.0001-worker"), 1);
}

fn worker_config(timeout: Duration) -> AgentConfig {
    let mut config =
        AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    config.subagent.timeout = timeout;
    config
}

/// A harness whose worker's script is `worker`.
fn harness(worker: &Value, ends: &Arc<Ends>) -> Harness {
    Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "reported"}]}],
            "worker": [worker]
        }}),
        |r| r.with_observer(Arc::clone(ends) as Arc<dyn zr_engine::AgentObserver>),
    )
}

/// One test's commands, observer of ends, harness, agent and watch.
struct Case {
    marks: Marks,
    ends: Arc<Ends>,
    /// Kept alive: it owns the run's folder.
    _harness: Harness,
    agent: zr_engine::Agent,
    watch: Watch,
}

impl Case {
    /// A case whose harness `harness` builds; the worker times out after
    /// `timeout`.
    fn new(
        tag: &str,
        timeout: Duration,
        harness: impl FnOnce(&Marks, &Arc<Ends>) -> Harness,
    ) -> Self {
        let marks = Marks::new(tag);
        let ends = Arc::new(Ends::default());
        let h = harness(&marks, &ends);
        let agent = h.agent(worker_config(timeout));
        let watch = Watch::new(&marks);
        Self {
            marks,
            ends,
            _harness: h,
            agent,
            watch,
        }
    }

    /// A case whose worker starts the three commands (the foreground call
    /// hangs if `hang`), then answers `then`, or fails if `None`.
    fn worker(tag: &str, hang: bool, then: Option<&str>, timeout: Duration) -> Self {
        Self::new(tag, timeout, |marks, ends| {
            let mut turns =
                vec![json!({"tool_calls": [marks.background(), marks.foreground(hang)]})];
            turns.extend(then.map(|t| json!({"text": t})));
            harness(&json!({ "turns": turns }), ends)
        })
    }

    async fn assert_clean(&self, events: &[Event]) {
        assert_clean(
            &self.marks,
            &self.watch,
            &background_log(events),
            &self.ends,
        )
        .await;
    }
}

/// Runs the query to its end; the worker's result.
async fn run_to_end(query: Query) -> (Vec<Event>, zr_engine::TaskResult) {
    let (events, result) = run(query).await;
    assert_eq!(result.unwrap().output, "reported");
    let worker = finished(&events).remove(0);
    (events, worker)
}

#[tokio::test]
async fn a_completed_subagent_leaves_no_process() {
    let case = Case::worker("cmp", false, Some("done"), Duration::from_secs(300));
    let (events, worker) = run_to_end(case.agent.query("go", QueryOverrides::default())).await;
    assert_eq!(worker.status, TaskStatus::Completed);
    case.assert_clean(&events).await;
}

#[tokio::test]
async fn a_failed_subagent_leaves_no_process() {
    // The script has no second turn: the provider fails.
    let case = Case::worker("fai", false, None, Duration::from_secs(300));
    let (events, worker) = run_to_end(case.agent.query("go", QueryOverrides::default())).await;
    assert_eq!(worker.status, TaskStatus::Failed);
    assert!(
        worker
            .error
            .as_deref()
            .unwrap()
            .starts_with("scripted provider: "),
        "{worker:?}"
    );
    case.assert_clean(&events).await;
}

#[tokio::test]
async fn a_timed_out_subagent_leaves_no_process() {
    let case = Case::worker("tmo", true, Some("never"), Duration::from_secs(10));
    let (events, worker) = run_to_end(case.agent.query("go", QueryOverrides::default())).await;
    assert_eq!(worker.status, TaskStatus::TimedOut);
    case.assert_clean(&events).await;
}

/// Reads events until the worker's commands all run; returns them.
async fn until_running(
    events_of: &mut (impl futures_util::Stream<Item = Event> + Unpin),
    watch: &Watch,
) -> Vec<Event> {
    let mut events = Vec::new();
    let wait = async {
        loop {
            tokio::select! {
                event = events_of.next() => events.push(event.expect("the events go on")),
                () = watch.all_running() => return,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .unwrap();
    events
}

#[tokio::test]
async fn a_cancelled_subagent_leaves_no_process() {
    let case = Case::worker("can", true, Some("never"), Duration::from_secs(300));
    let mut query = case.agent.query("go", QueryOverrides::default());
    let events = until_running(&mut query, &case.watch).await;
    query.cancel().await;
    assert_eq!(
        case.ends.of("root.0001-worker"),
        1,
        "cancel waited for the cleanup"
    );
    case.assert_clean(&events).await;
}

#[tokio::test]
async fn a_subagent_of_a_dropped_query_leaves_no_process() {
    let case = Case::worker("drp", true, Some("never"), Duration::from_secs(300));
    let mut query = case.agent.query("go", QueryOverrides::default());
    let events = until_running(&mut query, &case.watch).await;
    drop(query);
    case.assert_clean(&events).await;
}

/// A custom tool that starts a background command and a foreground one
/// through the `Bash` handler, and panics while the foreground call runs.
#[derive(Debug)]
struct Explodes {
    bash: Arc<dyn ToolHandler>,
    background: String,
    foreground: String,
    /// The test's watch: the tool panics once it saw all commands run.
    seen: Arc<Mutex<BTreeSet<String>>>,
    /// Where the background command's log went.
    log: Arc<Mutex<Option<PathBuf>>>,
}

impl ToolHandler for Explodes {
    fn call<'a>(
        &'a self,
        _: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let call = |input: Value| ToolCall {
                id: "inner".to_owned(),
                name: "Bash".to_owned(),
                input,
            };
            let started = self
                .bash
                .call(
                    &call(json!({"command": self.background, "run_in_background": true})),
                    ctx.clone(),
                )
                .await?;
            *self.log.lock().unwrap() = Some(log_of(&text(&started.content)));
            let foreground_call = call(json!({"command": self.foreground}));
            let foreground = self.bash.call(&foreground_call, ctx);
            tokio::pin!(foreground);
            let running = async {
                while self.seen.lock().unwrap().len() < 3 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            };
            tokio::select! {
                _ = &mut foreground => panic!("the foreground command ended"),
                _ = tokio::time::timeout(Duration::from_secs(60), running) => {}
            }
            panic!("exploded while its Bash call ran");
        })
    }
}

#[tokio::test]
async fn a_tool_that_panics_while_its_commands_run_leaves_no_process() {
    let marks = Marks::new("pan");
    let ends = Arc::new(Ends::default());
    let watch = Watch::new(&marks);
    let tool = custom("explode", false);
    let log = Arc::new(Mutex::new(None));
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "reported"}]}],
            "worker": [{"turns": [{"tool_calls": [{"name": "explode"}]}, {"text": "survived"}]}]
        }}),
        |r| {
            let bash = r
                .builtin_tools()
                .tools()
                .into_iter()
                .find(|(d, _)| d.name.as_str() == "Bash")
                .unwrap()
                .1;
            let handler = Arc::new(Explodes {
                bash,
                background: format!("{} 600", marks.bin(0)),
                foreground: marks.foreground_command(true),
                seen: Arc::clone(&watch.seen),
                log: Arc::clone(&log),
            });
            r.with_tool(Arc::clone(&tool), handler)
                .with_observer(Arc::clone(&ends) as Arc<dyn zr_engine::AgentObserver>)
        },
    );
    let mut worker = sub_agent("worker", AgentType::GeneralPurpose);
    worker.capabilities = AgentCapabilities {
        custom_tools: Some(vec![Arc::clone(&tool)]),
        ..AgentCapabilities::default()
    };
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker));
    let (events, worker) = run_to_end(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(
        (worker.status, worker.output.as_str()),
        (TaskStatus::Completed, "survived")
    );
    let failure = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolFailed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        failure,
        "tool 'explode' panicked: exploded while its Bash call ran"
    );
    let log = log.lock().unwrap().clone().unwrap();
    assert_clean(&marks, &watch, &log, &ends).await;
}

/// A harness whose root starts the worker in the background, then answers
/// `reported`; the worker starts the three commands and hangs.
fn background_harness(marks: &Marks, ends: &Arc<Ends>) -> Harness {
    Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [{"name": "Task", "input": {
                    "description": "d", "prompt": "p", "subagent_type": "worker",
                    "run_in_background": true
                }}]},
                {"text": "reported"}
            ]}],
            "worker": [{"turns": [
                {"tool_calls": [marks.background(), marks.foreground(true)]},
                {"text": "never"}
            ]}]
        }}),
        |r| r.with_observer(Arc::clone(ends) as Arc<dyn zr_engine::AgentObserver>),
    )
}

/// Runs the root's query (the worker goes on in the background) and
/// waits until the worker's commands all run; the background events so
/// far.
async fn background_running(agent: &zr_engine::Agent, watch: &Watch) -> Vec<Event> {
    let mut background = agent.background_events();
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let mut events = until_running(&mut background, watch).await;
    // The background call's result came before the hanging call started.
    while !events.iter().any(|e| {
        matches!(&e.kind, EventKind::ToolCallFinished { summary, .. } if summary.starts_with("Started in the background"))
    }) {
        let next = tokio::time::timeout(Duration::from_secs(60), background.next());
        events.push(next.await.unwrap().unwrap());
    }
    events
}

#[tokio::test]
async fn a_background_agent_stopped_by_the_host_leaves_no_process() {
    let case = Case::new("bgs", Duration::from_secs(300), background_harness);
    let events = background_running(&case.agent, &case.watch).await;
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    assert!(case.agent.stop_background(&worker).await);
    assert_eq!(
        case.ends.of("root.0001-worker"),
        1,
        "stopping waited for the cleanup"
    );
    let result = case
        .agent
        .background_agent(&worker)
        .unwrap()
        .result
        .unwrap();
    assert_eq!(result.status, TaskStatus::Cancelled);
    case.assert_clean(&events).await;
}

#[tokio::test]
async fn a_background_agent_cut_by_the_end_of_its_session_leaves_no_process() {
    let Case {
        marks,
        ends,
        _harness,
        agent,
        watch,
    } = Case::new("bge", Duration::from_secs(300), background_harness);
    let events = background_running(&agent, &watch).await;
    drop(agent);
    assert_clean(&marks, &watch, &background_log(&events), &ends).await;
}
