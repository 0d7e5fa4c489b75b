//! Durable runs: `zr run` stopped by Ctrl-C or killed with SIGKILL at any
//! transcript record, then `zr resume`, loses nothing and repeats
//! nothing. Side effects are lines a Bash `echo` appends to a file, one
//! distinct line per call, so that counting lines counts runs.
//!
//! The crash matrix (`crash_matrix`, ignored by `cargo test`, run by its
//! own `cargo xtask ci` step) kills `zr` through the test-only hook
//! `ZR_TEST_SIGKILL_AFTER_RECORDS` (`src/crash_hook.rs`) after the Nth
//! record, at `ZR_CRASH_POINTS` points (30 by default; `all` for every
//! record) spread over the uninterrupted run's records.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::support::{TempProject, spawn_zr, stderr, stdout, zr_process};

/// Generous: the machine is shared and slow.
const PATIENCE: Duration = Duration::from_secs(90);

/// The answer an interrupted, not repeated, call gets (zr-engine's
/// `INTERRUPTED_CALL`).
const INTERRUPTED: &str = "interrupted: this call had started";

/// A Bash call appending `line` to the project's `side.txt`.
fn echo(project: &Path, line: &str) -> Value {
    let side = project.join("side.txt");
    json!({"name": "Bash", "input": {"command": format!("echo {line} >> {}", side.display())}})
}

/// The lines of the project's `side.txt`.
fn side_lines(project: &Path) -> Vec<String> {
    std::fs::read_to_string(project.join("side.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The one session folder under `.zr/sessions`.
fn session_folder(project: &Path) -> Option<PathBuf> {
    std::fs::read_dir(project.join(".zr/sessions"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
}

/// The complete records of a transcript.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every transcript of the session in `folder`, by agent id.
fn transcripts(folder: &Path) -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(folder)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".jsonl")?.to_owned();
            Some((id, e.path()))
        })
        .collect()
}

/// The JSON results of the root's foreground Task and MultiTask calls,
/// in call order: (description, status, output) per task.
fn multitask_results(folder: &Path) -> Vec<(String, String, String)> {
    let root = records(&folder.join("root.jsonl"));
    let mut uses = BTreeSet::new();
    let mut found = Vec::new();
    let mut add = |r: &Value| {
        found.push((
            r["description"].as_str().unwrap().to_owned(),
            r["status"].as_str().unwrap().to_owned(),
            r["output"].as_str().unwrap().to_owned(),
        ));
    };
    for record in &root {
        let Some(content) = record["message"]["content"].as_array() else {
            continue;
        };
        for block in content {
            let foreground = block["input"]["run_in_background"] != json!(true);
            if block["type"] == "tool_use"
                && (block["name"] == "MultiTask" || block["name"] == "Task")
                && foreground
            {
                uses.insert(block["id"].as_str().unwrap().to_owned());
            }
            if block["type"] == "tool_result"
                && uses.contains(block["tool_use_id"].as_str().unwrap_or_default())
            {
                let value = &block["content"][0]["value"];
                match value["results"].as_array() {
                    Some(results) => results.iter().for_each(&mut add),
                    None => add(value),
                }
            }
        }
    }
    found
}

/// Processes (other than this test) whose command line names `needle`.
fn processes_naming(needle: &str) -> Vec<(i32, String)> {
    let me = i32::try_from(std::process::id()).unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let line = String::from_utf8_lossy(&bytes).replace('\0', " ");
            line.contains(needle).then_some((pid, line))
        })
        .collect()
}

/// `zr ARGS` in `project`, its output collected.
fn zr_out(project: &TempProject, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = zr_process();
    cmd.args(args)
        .current_dir(project.path())
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

const SCRIPTED: [&str; 4] = ["--provider", "scripted", "--script", "script.json"];

/// `zr resume SESSION` with the project's script until the session has
/// nothing left to continue; the last answer printed, if any.
fn resume_until_done(project: &TempProject, session: &str) -> Option<String> {
    let mut answer = None;
    for _ in 0..4 {
        let mut args = vec!["resume", session];
        args.extend(SCRIPTED);
        let out = zr_out(project, &args, &[]);
        match out.status.code() {
            Some(0) => answer = Some(stdout(&out)),
            Some(2) if stderr(&out).contains("there is no interrupted run to continue") => {
                return answer;
            }
            _ => panic!(
                "zr resume failed ({:?}): {}\n{}",
                out.status,
                stdout(&out),
                stderr(&out)
            ),
        }
    }
    panic!("the session still had something to continue after 4 resumes");
}

/// Runs a root whose first turn makes `calls` (delegating tasks A, B and
/// C to general-purpose agents), stops `zr` with Ctrl-C once task A
/// finished (B and C wait for their model), then resumes with a script
/// under which running a task again would show: resume runs only B and
/// C, takes A's result from its untouched transcript, and starts no new
/// subagent. `order`: the tasks' descriptions in call order.
fn interrupted_after_task_a(calls: &Value, order: [&str; 3]) {
    let dir = TempProject::new();
    let p = dir.path();
    let root = json!([{"turns": [
        {"tool_calls": calls},
        {"text": "all three done"}
    ]}]);
    let run = json!({"turns_from": "history", "agents": {
        "root": root,
        "general-purpose": [
            {"match": "task A", "turns": [{"tool_calls": [echo(p, "A")]}, {"text": "A done"}]},
            {"match": "task B", "turns": [{"delay_ms": 600_000, "text": "never"}]},
            {"match": "task C", "turns": [{"delay_ms": 600_000, "text": "never"}]}
        ]
    }});
    // What the resumed run would do if it ran a task again: task A would
    // append a second line.
    let resume = json!({"turns_from": "history", "agents": {
        "root": root,
        "general-purpose": [
            {"match": "task A", "turns": [{"tool_calls": [echo(p, "A-again")]}, {"text": "A again"}]},
            {"match": "task B", "turns": [{"tool_calls": [echo(p, "B")]}, {"text": "B done"}]},
            {"match": "task C", "turns": [{"tool_calls": [echo(p, "C")]}, {"text": "C done"}]}
        ]
    }});
    dir.write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("run.json", &run.to_string())
        .write("resume.json", &resume.to_string());

    let mut child = spawn_zr(
        &dir,
        &[
            "run",
            "--provider",
            "scripted",
            "--script",
            "run.json",
            "do three things",
        ],
    );
    // Task A finished (its transcript's `finished` record is on disk); B
    // and C wait for their model. A is the only subagent that can finish.
    let deadline = Instant::now() + PATIENCE;
    let a_done = |folder: &Path| {
        transcripts(folder).into_iter().find(|(id, path)| {
            id != "root" && records(path).iter().any(|r| r["kind"] == "finished")
        })
    };
    let a_path = loop {
        if let Some((_, path)) = session_folder(p).and_then(|f| a_done(&f)) {
            break path;
        }
        assert!(child.try_wait().unwrap().is_none(), "zr ended early");
        assert!(Instant::now() < deadline, "task A finished in time");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(side_lines(p), ["A"]);
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let folder = session_folder(p).unwrap();
    let session = folder.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        stderr(&out).contains(&format!("zr resume {session}")),
        "{}",
        stderr(&out)
    );
    let a_before = std::fs::read(&a_path).unwrap();

    let out = zr_out(
        &dir,
        &[
            "resume",
            &session,
            "--provider",
            "scripted",
            "--script",
            "resume.json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "all three done");
    // One line from the first task, one from each of the other two.
    let mut lines = side_lines(p);
    assert_eq!(lines.first().map(String::as_str), Some("A"));
    lines.sort();
    assert_eq!(lines, ["A", "B", "C"]);
    assert_eq!(
        std::fs::read(&a_path).unwrap(),
        a_before,
        "task A's transcript is not touched"
    );
    let expected: Vec<(String, String, String)> = order
        .iter()
        .map(|d| {
            let done = format!("{} done", d.to_uppercase());
            ((*d).to_owned(), "completed".to_owned(), done)
        })
        .collect();
    assert_eq!(multitask_results(&folder), expected);
    // B and C continued their own transcripts: one header each.
    for (agent, path) in transcripts(&folder) {
        let kinds: Vec<Value> = records(&path).iter().map(|r| r["kind"].clone()).collect();
        assert_eq!(
            kinds.iter().filter(|k| **k == "header").count(),
            1,
            "{agent}: {kinds:?}"
        );
        assert_eq!(kinds.last(), Some(&json!("finished")), "{agent}");
    }
    assert_eq!(transcripts(&folder).len(), 4, "no new subagent was started");
}

/// A delegated task `d` of a call (prompt `prompt`) to a general-purpose
/// agent.
fn gp_task(d: &str, prompt: &str) -> Value {
    json!({"description": d, "prompt": prompt, "subagent_type": "general-purpose"})
}

#[test]
fn ctrl_c_after_one_of_three_tasks_finished_resume_runs_only_the_other_two() {
    let tasks =
        json!({"tasks": [gp_task("a", "task A"), gp_task("b", "task B"), gp_task("c", "task C")]});
    interrupted_after_task_a(
        &json!([{"name": "MultiTask", "input": tasks}]),
        ["a", "b", "c"],
    );
}

#[test]
fn ctrl_c_in_a_turn_of_two_tasks_and_a_multitask_resume_runs_only_the_unfinished() {
    // The three calls of one turn run side by side; task B's Task call
    // comes first, so A's result is not the first result of the turn.
    interrupted_after_task_a(
        &json!([
            {"name": "Task", "input": gp_task("b", "task B")},
            {"name": "MultiTask", "input": {"tasks": [gp_task("a", "task A")]}},
            {"name": "Task", "input": gp_task("c", "task C")}
        ]),
        ["b", "a", "c"],
    );
}

/// The crash matrix's session: the root starts a background agent, then,
/// in one turn, a MultiTask of three, a fork and a typed Task (the three
/// calls run side by side), then appends a line itself, then answers.
/// Every subagent appends lines too; task C has a read-only and a
/// side-effecting call in one turn.
fn matrix_script(p: &Path) -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {
                "description": "bg", "prompt": "background job",
                "subagent_type": "general-purpose", "run_in_background": true}}]},
            {"tool_calls": [
                {"name": "MultiTask", "input": {"tasks": [
                    {"description": "a", "prompt": "task A", "subagent_type": "general-purpose"},
                    {"description": "b", "prompt": "task B", "subagent_type": "general-purpose"},
                    {"description": "c", "prompt": "task C", "subagent_type": "general-purpose"}
                ]}},
                {"name": "Task", "input": {"description": "f", "prompt": "fork job"}},
                {"name": "Task", "input": {
                    "description": "d", "prompt": "task D", "subagent_type": "general-purpose"}}
            ]},
            {"tool_calls": [echo(p, "R1")]},
            {"text": "FINAL: every task is done"}
        ]}],
        "general-purpose": [
            {"match": "task A", "turns": [
                {"tool_calls": [echo(p, "A1")]},
                {"tool_calls": [echo(p, "A2")]},
                {"text": "A done"}
            ]},
            {"match": "task B", "turns": [{"tool_calls": [echo(p, "B1")]}, {"text": "B done"}]},
            {"match": "task C", "turns": [
                {"tool_calls": [
                    {"name": "Read", "input": {"file_path": p.join("zr.toml").display().to_string()}},
                    echo(p, "C1")
                ]},
                {"text": "C done"}
            ]},
            {"match": "task D", "turns": [{"tool_calls": [echo(p, "D1")]}, {"text": "D done"}]},
            {"match": "background job", "turns": [
                {"tool_calls": [echo(p, "G1")]},
                {"text": "background done"}
            ]}
        ],
        "fork": [{"turns": [{"tool_calls": [echo(p, "F1")]}, {"text": "fork done"}]}]
    }})
}

/// What a finished session left: the root's last answer, its MultiTask's
/// results, and how many records its transcripts hold.
struct Outcome {
    answer: String,
    tasks: Vec<(String, String, String)>,
    records: usize,
    /// Whether the run was killed (not: it had ended before the point).
    killed: bool,
    /// Calls answered as interrupted after the resume.
    interrupted: usize,
}

fn outcome(folder: &Path, killed: bool, interrupted: usize) -> Outcome {
    let root = records(&folder.join("root.jsonl"));
    let answer = root
        .iter()
        .rev()
        .find(|r| r["kind"] == "finished")
        .map(|r| r["output"].as_str().unwrap().to_owned())
        .unwrap_or_default();
    let records = transcripts(folder).values().map(|p| records(p).len()).sum();
    Outcome {
        answer,
        tasks: multitask_results(folder),
        records,
        killed,
        interrupted,
    }
}

/// Checks a session that `zr resume` finished after a kill: every agent's
/// transcript ends with `finished`, holds one header and no record twice
/// (no tool use or result id twice either); each line of `side.txt` was
/// appended at most once, and exactly once when its call's result says it
/// ran. Returns how many calls were answered as interrupted.
fn check_finished_session(p: &Path, folder: &Path, point: usize) -> usize {
    let mut interrupted_calls = 0;
    let lines = side_lines(p);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for line in &lines {
        *counts.entry(line.as_str()).or_default() += 1;
    }
    for (line, n) in &counts {
        assert_eq!(
            *n, 1,
            "point {point}: '{line}' appended {n} times: {lines:?}"
        );
    }
    for (agent, path) in transcripts(folder) {
        let all = records(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut seen = BTreeSet::new();
        for line in text.lines() {
            assert!(
                seen.insert(line),
                "point {point}: {agent} has a record twice: {line}"
            );
        }
        assert_eq!(
            all.iter().filter(|r| r["kind"] == "header").count(),
            1,
            "point {point}: {agent}"
        );
        assert_eq!(
            all.last().map(|r| r["kind"].clone()),
            Some(json!("finished")),
            "point {point}: {agent} did not finish"
        );
        let mut uses = BTreeMap::new();
        let mut results = BTreeMap::new();
        for record in all.iter().filter(|r| r["kind"] == "message") {
            for block in record["message"]["content"].as_array().unwrap() {
                match block["type"].as_str() {
                    Some("tool_use") => {
                        let id = block["id"].as_str().unwrap().to_owned();
                        assert!(
                            uses.insert(id.clone(), block.clone()).is_none(),
                            "point {point}: {agent} asked for call {id} twice"
                        );
                    }
                    Some("tool_result") => {
                        let id = block["tool_use_id"].as_str().unwrap().to_owned();
                        assert!(
                            results.insert(id.clone(), block.clone()).is_none(),
                            "point {point}: {agent} answered call {id} twice"
                        );
                    }
                    _ => {}
                }
            }
        }
        for (id, call) in &uses {
            let Some(command) = call["input"]["command"].as_str() else {
                continue;
            };
            let line = command
                .strip_prefix("echo ")
                .and_then(|c| c.split(' ').next())
                .unwrap();
            let result = results
                .get(id)
                .unwrap_or_else(|| panic!("point {point}: {agent}'s call {id} has no result"));
            let interrupted = result.to_string().contains(INTERRUPTED);
            interrupted_calls += usize::from(interrupted);
            if !interrupted {
                assert_eq!(
                    counts.get(line),
                    Some(&1),
                    "point {point}: {agent}'s completed call '{line}' ran once: {lines:?}"
                );
            }
        }
    }
    interrupted_calls
}

/// Runs the matrix's session in a new project, killed after `kill_after`
/// records (`None`: not killed), resumed until done; returns its outcome.
fn matrix_point(kill_after: Option<usize>) -> Outcome {
    let dir = TempProject::new();
    let p = dir.path().to_owned();
    let script = matrix_script(&p);
    dir.write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("script.json", &script.to_string());
    let mut args = vec!["run"];
    args.extend(SCRIPTED);
    args.push("run the matrix");
    let env: Vec<(&str, String)> = kill_after
        .map(|n| ("ZR_TEST_SIGKILL_AFTER_RECORDS", n.to_string()))
        .into_iter()
        .collect();
    let out = zr_out(&dir, &args, &env);
    let point = kill_after.unwrap_or(0);
    let folder = session_folder(&p).expect("a session folder");
    let session = folder.file_name().unwrap().to_str().unwrap().to_owned();
    let killed = std::os::unix::process::ExitStatusExt::signal(&out.status) == Some(9);
    match kill_after {
        None => assert_eq!(out.status.code(), Some(0), "{}", stderr(&out)),
        Some(_) => assert!(
            killed || out.status.code() == Some(0),
            "point {point}: {:?} {}",
            out.status,
            stderr(&out)
        ),
    }
    let needle = p.display().to_string();
    let wait_gone = |when: &str| {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = processes_naming(&needle);
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "point {point}: processes of the run survive {when}: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_gone("the kill");
    if killed {
        let answer = resume_until_done(&dir, &session);
        wait_gone("the resume");
        let interrupted = check_finished_session(&p, &folder, point);
        let result = outcome(&folder, true, interrupted);
        if let Some(answer) = answer {
            assert_eq!(
                answer.trim(),
                result.answer,
                "point {point}: the answer printed"
            );
        }
        result
    } else {
        let interrupted = check_finished_session(&p, &folder, point);
        assert_eq!(
            interrupted, 0,
            "point {point}: not killed, nothing interrupted"
        );
        outcome(&folder, false, 0)
    }
}

#[test]
#[ignore = "the crash matrix: run by `cargo xtask ci` (its own step), or with --ignored"]
fn crash_matrix() {
    let start = Instant::now();
    let baseline = matrix_point(None);
    assert_eq!(baseline.answer, "FINAL: every task is done");
    // The MultiTask's three, the fork, task D: in call order.
    assert_eq!(baseline.tasks.len(), 5);
    assert!(
        baseline.tasks.iter().all(|t| t.1 == "completed"),
        "{:?}",
        baseline.tasks
    );
    let total = baseline.records;
    let wanted = match std::env::var("ZR_CRASH_POINTS").as_deref() {
        Ok("all") => total,
        Ok(n) => n.parse().expect("ZR_CRASH_POINTS: a number or 'all'"),
        Err(_) => 30,
    }
    .clamp(1, total);
    // Spread over the records, the first and the last included.
    let points: BTreeSet<usize> = (0..wanted)
        .map(|i| 1 + i * (total - 1) / (wanted - 1).max(1))
        .collect();
    let points: Vec<usize> = points.into_iter().collect();
    let half = points.len().div_ceil(2);
    let (left, right) = points.split_at(half);
    let run = |points: &[usize]| {
        let (mut killed, mut interrupted) = (0, 0);
        for &n in points {
            let got = matrix_point(Some(n));
            assert_eq!(got.answer, baseline.answer, "point {n}: the final answer");
            assert_eq!(
                got.tasks, baseline.tasks,
                "point {n}: the MultiTask results"
            );
            killed += usize::from(got.killed);
            interrupted += got.interrupted;
        }
        (killed, interrupted)
    };
    let (a, b) = std::thread::scope(|s| {
        let other = s.spawn(|| run(right));
        let mine = run(left);
        (mine, other.join().unwrap())
    });
    let killed = a.0 + b.0;
    assert!(
        killed * 10 >= points.len() * 9,
        "at least 90% of the points kill the run: {killed} of {}",
        points.len()
    );
    // The figure the CI log shows.
    println!(
        "crash matrix: {} kill points over {total} records ({killed} killed and resumed, {} calls answered as interrupted), every one resumed to the same answer, in {:.1} s",
        points.len(),
        a.1 + b.1,
        start.elapsed().as_secs_f64()
    );
}
