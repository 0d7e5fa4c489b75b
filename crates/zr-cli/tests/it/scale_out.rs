//! Scaling out, end to end with real processes: a `restate-server`, two
//! `zr worker` processes (this crate's binary: what users run) serving one
//! project behind a loopback TCP proxy, a model on loopback speaking the
//! Anthropic wire format, and a session fanning out [`subagents`]
//! subagents (MultiTask calls of ten) whose every subagent makes one
//! side-effecting `Bash` call. The busy worker is SIGKILLed mid fan-out
//! and a third worker, started mid-run, is put behind the proxy.
//!
//! The side effect is the ledger an external system would keep: the
//! command appends its `ZR_IDEMPOTENCY_KEY` to `attempts` (with the pid of
//! the worker that ran it) every time it runs, and to `effects` only when
//! the key is not there yet, as a tool author is told to do.
//!
//! `ZR_SCALE_OUT_SUBAGENTS` sets the size (100 by default, the issue's
//! must-show size);
//! `ZR_TEST_WORKER_LOG` is the workers' `ZR_LOG` (their standard error goes
//! to `worker-PID.log` in the project, shown when the run does not end).

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::support::{TempProject, stderr, stdout, zr_process};
use crate::worker::registered;
use zr_test_support::loopback::{Reply, Request, Server};
use zr_test_support::proxy::Proxy;
use zr_test_support::restate::RestateServer;

/// Generous: the machine is shared and slow.
const PATIENCE: Duration = Duration::from_secs(180);

/// The root's prompt.
pub(crate) const PROMPT: &str = "fan out now";

/// How long each subagent's command sleeps in the tests (seconds): long
/// enough for the kill to land mid fan-out. The bench sleeps `0`.
pub(crate) const PAUSE: &str = "0.3";

/// The fan-out's size: `ZR_SCALE_OUT_SUBAGENTS`, else the must-show's 100
/// (both tests take 12 to 16 s together in a debug build at load 4.5).
/// A multiple of ten: MultiTask takes at most ten tasks.
fn subagents() -> usize {
    std::env::var("ZR_SCALE_OUT_SUBAGENTS")
        .ok()
        .map_or(100, |n| {
            n.parse().expect("ZR_SCALE_OUT_SUBAGENTS: a number")
        })
}

/// The text of the first user message of `request`.
fn first_message(request: &Request) -> String {
    request.body["messages"][0]["content"].to_string()
}

/// The model: the root's first `n / 10` turns make a MultiTask call of
/// ten tasks each, its last answers with how many tasks reported done (read
/// from the results it was sent); task `i`'s first turn is the ledger
/// command, its second says it is done. Every answer follows from the
/// request alone, whichever worker sends it and in whatever order.
fn model(ledger: &Path, n: usize, pause: &'static str) -> Server {
    let ledger = ledger.to_owned();
    Server::answering(move |request, _| {
        let first = first_message(request);
        let turn = request.body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
        if first.contains(PROMPT) {
            return root_turn(request, turn, n);
        }
        let Some(task) = first
            .split("do task number ")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .and_then(|i| i.parse::<usize>().ok())
        else {
            return Reply {
                status: 400,
                body: format!("{{\"type\":\"error\",\"error\":{{\"type\":\"invalid_request_error\",\"message\":\"the test model does not know {first}\"}}}}").into_bytes(),
            };
        };
        if turn == 0 {
            let (attempts, effects) = (ledger.join("attempts"), ledger.join("effects"));
            let command = format!(
                "echo \"$ZR_IDEMPOTENCY_KEY $PPID\" >> {a}; grep -qxF \"$ZR_IDEMPOTENCY_KEY\" {e} 2>/dev/null || echo \"$ZR_IDEMPOTENCY_KEY\" >> {e}; sleep {pause}; echo applied",
                a = attempts.display(),
                e = effects.display()
            );
            Reply::anthropic(
                None,
                &[(
                    &format!("toolu_task_{task}"),
                    "Bash",
                    json!({ "command": command }),
                )],
            )
        } else {
            Reply::anthropic(Some(&format!("done with task #{task}.")), &[])
        }
    })
}

/// The root: one MultiTask call of ten tasks per turn, then the answer.
/// (One call per turn: the subagents of calls made in one turn start in
/// an order that timing decides, and a durable replay must start them
/// in the order of the first run; see the crate's decisions.)
fn root_turn(request: &Request, turn: usize, n: usize) -> Reply {
    if turn < n / 10 {
        let tasks: Vec<Value> = (0..10)
            .map(|t| {
                let i = turn * 10 + t;
                json!({"description": format!("task {i}"), "prompt": format!("do task number {i}."), "subagent_type": "general-purpose"})
            })
            .collect();
        return Reply::anthropic(
            None,
            &[(
                &format!("toolu_multi_{turn}"),
                "MultiTask",
                json!({ "tasks": tasks }),
            )],
        );
    }
    let results = request.body["messages"].to_string();
    let done = (0..n)
        .filter(|i| results.contains(&format!("done with task #{i}.")))
        .count();
    Reply::anthropic(Some(&format!("FINAL: {done} of {n} tasks done")), &[])
}

/// A project whose model is `model`, allowed to run Bash, with the Restate
/// server's URLs when `server` is given.
/// The root's turn limit in the fan-out's project.
const MAX_ROOT_TURNS: u32 = 10_000;

fn project(model: &Server, server: Option<&RestateServer>) -> TempProject {
    let project = TempProject::new();
    let mut toml = format!(
        "[model]\nprovider = \"anthropic\"\nbase_url = \"{}\"\n\n[agent]\nmax_turns = {}\n\n[permissions]\nallow = [\"Bash\"]\n\n[subagents]\nmax_concurrent = 10\n",
        model.url,
        // The root makes one turn per MultiTask of ten, and a last one: the
        // bench's 1,000 subagents need 101 (the default limit is 100).
        MAX_ROOT_TURNS
    );
    if let Some(server) = server {
        toml.push_str(&format!(
            "\n[durable]\ningress = \"{}\"\nadmin = \"{}\"\n",
            server.ingress_url(),
            server.admin_url()
        ));
    }
    project.write("zr.toml", &toml);
    project
}

/// `zr ARGS` in `project`, with an API key, its output piped.
pub(crate) fn spawn(project: &TempProject, args: &[&str]) -> Child {
    zr_process()
        .args(args)
        .current_dir(project.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env(
            "ZR_LOG",
            std::env::var("ZR_TEST_WORKER_LOG").unwrap_or_default(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the zr binary starts")
}

/// A loopback port nothing listens on now (a worker binds it a moment
/// later).
fn free_port() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// A running `zr worker`: its process and address.
struct Worker {
    child: Child,
    addr: SocketAddr,
}

impl Worker {
    /// Starts a worker of `project` on `addr`, advertised as `proxy`, and
    /// waits until it registered.
    fn start(project: &TempProject, addr: SocketAddr, proxy: &str, server: &RestateServer) -> Self {
        let listen = addr.to_string();
        let mut child = spawn(
            project,
            &["worker", "--listen", &listen, "--advertise", proxy],
        );
        let log = project.path().join(format!("worker-{}.log", child.id()));
        registered(&mut child, Some(log), server);
        Self { child, addr }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `attempts` ledger: (key, pid of the worker that ran it) per line.
fn attempts(ledger: &Path) -> Vec<(String, u32)> {
    std::fs::read_to_string(ledger.join("attempts"))
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let (key, pid) = line.rsplit_once(' ').expect("KEY PID");
            (key.to_owned(), pid.parse().expect("a pid"))
        })
        .collect()
}

/// The `effects` ledger's keys, in order.
fn effects(ledger: &Path) -> Vec<String> {
    std::fs::read_to_string(ledger.join("effects"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits until `done` holds, or panics with `what` and the server's log.
fn wait_for(what: &str, server: &RestateServer, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The transcripts of the session in `folder`, by who wrote them (`root`
/// or `task N`): each transcript's records in order, with what differs
/// between two runs taken out (times, durations, folders, token counts
/// and the agent's and session's ids).
fn transcripts(folder: &Path, ledger: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(folder).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // The commands name the run's own ledger.
        let text = text.replace(&ledger.display().to_string(), "LEDGER");
        let mut lines = BTreeSet::new();
        for line in text.lines() {
            assert!(
                lines.insert(line),
                "{} holds a record twice: {line}",
                path.display()
            );
        }
        let who = if path.file_stem().is_some_and(|s| s == "root") {
            "root".to_owned()
        } else {
            let task = text
                .split("do task number ")
                .nth(1)
                .and_then(|rest| rest.split('.').next());
            format!(
                "task {}",
                task.expect("a subagent's transcript names its task")
            )
        };
        let records: Vec<Value> = text
            .lines()
            .map(|line| {
                let mut value: Value = serde_json::from_str(line).unwrap();
                strip(&mut value);
                value
            })
            .collect();
        assert!(
            all.insert(who.clone(), records).is_none(),
            "two transcripts of {who} in {}",
            folder.display()
        );
    }
    all
}

fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| {
                !k.ends_with("_ms")
                    && ![
                        "cwd",
                        "display",
                        "input_tokens",
                        "session",
                        "session_id",
                        "agent",
                        "agent_id",
                        "id",
                        "at",
                        "time",
                        "timestamp",
                    ]
                    .contains(&k.as_str())
            });
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        // A result's text names the agent ids and the session.
        Value::String(text) if text.contains("root.") || text.contains("s-0") => {
            *text = String::from("<ids>");
        }
        _ => {}
    }
}

/// The local run of the fan-out: its answer (checked) and its session's
/// folder, kept with the project.
pub(crate) fn local_run(
    n: usize,
    pause: &'static str,
) -> (TempProject, tempfile::TempDir, String, std::path::PathBuf) {
    let ledger = tempfile::tempdir().unwrap();
    let model = model(ledger.path(), n, pause);
    let local = project(&model, None);
    let out = spawn(&local, &["run", PROMPT]).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = stdout(&out);
    assert_eq!(answer, format!("FINAL: {n} of {n} tasks done\n"));
    assert_eq!(effects(ledger.path()).len(), n);
    let folder = std::fs::read_dir(local.path().join(".zr/sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the local session's folder");
    (local, ledger, answer, folder)
}

/// The durable side: a server, the shared project, its ledger and model,
/// the proxy and the two first workers behind it.
pub(crate) struct Cluster {
    ledger: tempfile::TempDir,
    pub(crate) shared: TempProject,
    workers: Vec<Worker>,
    proxy: Proxy,
    _model: Server,
    pub(crate) server: RestateServer,
    _rt: tokio::runtime::Runtime,
}

impl Cluster {
    /// A server and `workers` workers (one or more) behind the proxy,
    /// their subagents' commands sleeping `pause` seconds.
    pub(crate) fn start(n: usize, workers: usize, pause: &'static str) -> Self {
        let rt = tokio::runtime::Runtime::new().expect("a runtime for the proxy");
        let server = RestateServer::start();
        let ledger = tempfile::tempdir().unwrap();
        let model = model(ledger.path(), n, pause);
        let shared = project(&model, Some(&server));
        let a_addr = free_port();
        // The first worker's registration reaches it through the proxy.
        let proxy = rt.block_on(Proxy::start(a_addr));
        let url = proxy.url();
        let a = Worker::start(&shared, a_addr, &url, &server);
        let mut all = vec![a];
        for _ in 1..workers {
            all.push(Worker::start(&shared, free_port(), &url, &server));
        }
        let addrs: Vec<SocketAddr> = all.iter().map(|w| w.addr).collect();
        proxy.point_to_all(&addrs);
        Self {
            ledger,
            shared,
            workers: all,
            proxy,
            _model: model,
            server,
            _rt: rt,
        }
    }

    /// Waits for `submit` (`zr run --durable`) to end; panics with every
    /// log when it does not.
    pub(crate) fn finish(&self, mut submit: Child) -> std::process::Output {
        let deadline = Instant::now() + PATIENCE;
        while submit.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = submit.kill();
                let logs: Vec<String> = std::fs::read_dir(self.shared.path())
                    .unwrap()
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("worker-"))
                    .map(|e| std::fs::read_to_string(e.path()).unwrap())
                    .collect();
                panic!(
                    "the durable run did not end\n{}\n{}",
                    self.server.log(),
                    logs.join("\n----\n")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = submit.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}\n{}",
            stderr(&out),
            self.server.log()
        );
        out
    }

    /// Checks a finished durable run against the local one: the answer,
    /// every effect once, the transcripts record for record and none
    /// twice. Returns the commands run per worker pid.
    pub(crate) fn check(
        &self,
        out: &std::process::Output,
        local: &(TempProject, tempfile::TempDir, String, std::path::PathBuf),
        n: usize,
    ) -> BTreeMap<u32, usize> {
        assert_eq!(stdout(out), local.2, "the same answer as the local run");
        let session = stderr(out)
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.strip_suffix(':'))
            .expect("`session ID: submitted to ...`")
            .to_owned();
        let keys: BTreeSet<String> = (0..n)
            .map(|i| format!("{session}/toolu_task_{i}"))
            .collect();
        let applied = effects(self.ledger.path());
        assert_eq!(applied.len(), n, "{applied:?}");
        assert_eq!(
            applied.iter().cloned().collect::<BTreeSet<_>>(),
            keys,
            "one effect per key"
        );
        let mut by_worker: BTreeMap<u32, usize> = BTreeMap::new();
        for (key, pid) in attempts(self.ledger.path()) {
            assert!(keys.contains(&key), "an unknown key {key}");
            *by_worker.entry(pid).or_default() += 1;
        }
        let want = transcripts(&local.3, local.1.path());
        let got = transcripts(
            &self.shared.path().join(".zr/sessions").join(&session),
            self.ledger.path(),
        );
        assert_eq!(want.len(), n + 1, "the root's and every subagent's");
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>()
        );
        for (who, records) in &want {
            assert_eq!(&got[who], records, "{who}'s transcript");
        }
        by_worker
    }
}

/// Each subagent is a child invocation: the proxy's round robin spreads
/// them over both workers.
#[test]
fn a_durable_fan_out_over_two_workers_is_the_local_run() {
    let n = subagents();
    let local = local_run(n, PAUSE);
    let cluster = Cluster::start(n, 2, PAUSE);
    let started = Instant::now();
    let submit = spawn(&cluster.shared, &["run", "--durable", PROMPT]);
    let out = cluster.finish(submit);
    println!(
        "scale-out: the durable run took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let by_worker = cluster.check(&out, &local, n);
    let pids: Vec<u32> = cluster.workers.iter().map(Worker::pid).collect();
    assert!(
        by_worker.keys().all(|pid| pids.contains(pid)),
        "only the workers ran commands: {by_worker:?} {pids:?}"
    );
    assert_eq!(
        by_worker.values().sum::<usize>(),
        n,
        "each command once: {by_worker:?}"
    );
    assert!(
        pids.iter()
            .all(|pid| by_worker.get(pid).is_some_and(|&k| k > 0)),
        "the children ran on both workers: {by_worker:?}"
    );
}

#[test]
fn a_fan_out_survives_its_busy_worker_and_a_new_worker_takes_work() {
    let n = subagents();
    let local = local_run(n, PAUSE);
    let mut cluster = Cluster::start(n, 2, PAUSE);
    let ledger = cluster.ledger.path().to_owned();
    let submit = spawn(&cluster.shared, &["run", "--durable", PROMPT]);

    // Mid-run: a third worker starts once the fan-out has begun.
    wait_for("the first effect", &cluster.server, || {
        !attempts(&ledger).is_empty()
    });
    let c = Worker::start(
        &cluster.shared,
        free_port(),
        &cluster.proxy.url(),
        &cluster.server,
    );
    wait_for("a quarter of the fan-out", &cluster.server, || {
        attempts(&ledger).len() >= n / 4
    });
    let busy_pid = attempts(&ledger)[0].1;
    let busy = cluster
        .workers
        .iter()
        .position(|w| w.pid() == busy_pid)
        .expect("a worker ran the first subagent");
    let busy = cluster.workers.remove(busy);
    let other = cluster.workers[0].pid();
    // The new worker first in turn: the next connection goes to it.
    cluster
        .proxy
        .point_to_all(&[c.addr, cluster.workers[0].addr]);
    let before_kill = attempts(&ledger).len();
    assert!(
        before_kill < n,
        "the kill must land mid fan-out: {before_kill} of {n} ran already"
    );
    kill(
        Pid::from_raw(i32::try_from(busy_pid).unwrap()),
        Signal::SIGKILL,
    )
    .unwrap();
    drop(busy);

    let out = cluster.finish(submit);
    let by_worker = cluster.check(&out, &local, n);
    let count = |pid: u32| by_worker.get(&pid).copied().unwrap_or(0);
    println!(
        "scale-out: {n} subagents; {before_kill} commands ran before the kill, {} ran again with the same key after it; commands per worker: killed {}, other {}, new {}",
        by_worker.values().sum::<usize>() - n,
        count(busy_pid),
        count(other),
        count(c.pid()),
    );
    // The children spread: both first workers ran some before the kill,
    // and the worker started mid-run took some after it.
    assert!(
        count(busy_pid) > 0 && count(other) > 0,
        "the children ran on both first workers: {by_worker:?}"
    );
    assert!(
        count(c.pid()) > 0,
        "the worker started mid-run took work: {by_worker:?}"
    );
    assert!(
        by_worker
            .keys()
            .all(|pid| [busy_pid, other, c.pid()].contains(pid)),
        "only the workers ran commands: {by_worker:?}"
    );
}
