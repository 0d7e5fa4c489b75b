//! Isolated subagents in real git repositories: a fresh worktree on its own
//! branch, removed when unchanged, kept and reported when changed, on every
//! exit path; a folder outside any repository fails the task.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use zr_caps::{AgentDefinition, AgentType, Isolation, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, Event, EventKind, ModelProvider, QueryOverrides, RuntimeEnvironment,
    TaskResult, TaskStatus, WorktreeInfo,
};
use zr_tools::BuiltinTools;

use crate::support::{
    Harness, Recording, finished, resume_warnings, run, sub_agent, task_call, tool_results,
};

/// Runs git in `dir` (with the test's environment), requires success,
/// returns stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A repository in `dir` with one commit: `README` and `sub/file`.
fn repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README"), "readme\n").unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/file"), "file\n").unwrap();
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.name=zr",
            "-c",
            "user.email=zr@example.invalid",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    );
}

/// The folders of the repository's worktrees, the main one first.
fn worktrees(dir: &Path) -> Vec<PathBuf> {
    git(dir, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

fn branches(dir: &Path) -> Vec<String> {
    git(dir, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn isolated(name: &str) -> AgentDefinition {
    let mut definition = sub_agent(name, AgentType::GeneralPurpose);
    definition.isolation = Isolation::Worktree;
    definition
}

fn root_with(definitions: Vec<AgentDefinition>) -> AgentConfig {
    definitions
        .into_iter()
        .fold(AgentConfig::new("root"), AgentConfig::with_sub_agent)
}

/// A harness whose folder is a fresh repository (also its real path).
fn in_repo(script: &Value) -> (Harness, PathBuf) {
    let h = Harness::new(script);
    repo(h.dir.path());
    let top = std::fs::canonicalize(h.dir.path()).unwrap();
    (h, top)
}

/// Where the worktree of `agent` goes, and its branch.
fn expected(top: &Path, agent: &Agent, id: &str) -> (PathBuf, String) {
    let session = agent.session_id().as_str();
    (
        top.join(".zr/worktrees").join(session).join(id),
        format!("zr/{session}/{id}"),
    )
}

fn by_index(events: &[Event]) -> Vec<TaskResult> {
    let mut results = finished(events);
    results.sort_by_key(|r| r.index);
    results
}

fn bash(command: &str) -> Value {
    json!({"name": "Bash", "input": {"command": command}})
}

fn write(path: &str, content: &str) -> Value {
    json!({"name": "Write", "input": {"file_path": path, "content": content}})
}

#[tokio::test]
async fn an_isolated_subagent_that_changes_nothing_leaves_no_worktree_or_branch() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "done"}]}],
        "iso": [{"turns": [{"tool_calls": [bash("pwd; git status --porcelain; cat README")]}, {"text": "looked"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let (path, branch) = expected(&top, &agent, "root.0001-iso");
    assert_eq!(
        tool_results(&h.provider.of_type("iso")[1]),
        vec![(false, format!("{}\nreadme\n[exit code 0]", path.display()))],
        "the agent worked in a clean checkout of HEAD"
    );
    let results = finished(&events);
    assert_eq!(results[0].status, TaskStatus::Completed);
    assert_eq!(
        results[0].worktree,
        Some(WorktreeInfo {
            path: path.clone(),
            branch,
            changed: false,
            kept: false,
            files: Vec::new(),
            ignored: Vec::new(),
        })
    );
    assert_eq!(worktrees(&top), vec![top.clone()]);
    assert_eq!(branches(&top), vec!["main"]);
    assert!(
        !path.parent().unwrap().exists(),
        "the session's folder is gone"
    );
    assert_eq!(
        git(&top, &["status", "--porcelain", "--untracked-files=all"]),
        "",
        "nothing of the worktrees shows in the user's checkout"
    );
}

#[tokio::test]
async fn an_isolated_subagent_that_writes_keeps_its_worktree_and_reports_it() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "done"}]}],
        "iso": [{"turns": [{"tool_calls": [write("notes.txt", "from the worktree\n")]}, {"text": "wrote"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let (path, branch) = expected(&top, &agent, "root.0001-iso");
    let info = WorktreeInfo {
        path: path.clone(),
        branch: branch.clone(),
        changed: true,
        kept: true,
        files: vec!["?? notes.txt".to_owned()],
        ignored: Vec::new(),
    };
    assert_eq!(finished(&events)[0].worktree, Some(info));
    assert_eq!(
        std::fs::read_to_string(path.join("notes.txt")).unwrap(),
        "from the worktree\n"
    );
    assert!(!top.join("notes.txt").exists(), "not in the main checkout");
    assert_eq!(worktrees(&top), vec![top.clone(), path.clone()]);
    assert_eq!(branches(&top), vec!["main".to_owned(), branch.clone()]);
    assert_eq!(
        git(&top, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    // The model gets path and branch in the result; people in the report.
    let answer = &tool_results(&h.provider.of_type("root")[1])[0].1;
    let answer: Value = serde_json::from_str(answer).unwrap();
    assert_eq!(
        answer["worktree"],
        json!({"path": path.to_str().unwrap(), "branch": branch, "changed": true, "kept": true, "files": ["?? notes.txt"]})
    );
    let display = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCallFinished { tool, summary, .. } if tool == "Task" => {
                Some(summary.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(
        display.contains(&format!(
            "\n    worktree kept with its changes: {} (branch {branch}): ?? notes.txt\n",
            path.display()
        )),
        "{display}"
    );
}

#[tokio::test]
async fn a_cancelled_isolated_subagent_leaves_no_unchanged_worktree() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "never"}]}],
        "iso": [{"turns": [{"tool_calls": [bash("pwd")]}, {"delay_ms": 600_000, "text": "never"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let mut query = agent.query("go", QueryOverrides::default());
    let worked = async {
        while let Some(event) = query.next().await {
            if event.agent_type.as_ref() == "iso"
                && matches!(event.kind, EventKind::ToolCallFinished { .. })
            {
                return true;
            }
        }
        false
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(60), worked)
            .await
            .unwrap()
    );
    let (path, _) = expected(&top, &agent, "root.0001-iso");
    assert_eq!(
        worktrees(&top),
        vec![top.clone(), path],
        "it runs in its worktree"
    );
    query.cancel().await;
    assert_eq!(worktrees(&top), vec![top.clone()]);
    assert_eq!(branches(&top), vec!["main"]);
}

#[tokio::test]
async fn a_dropped_query_keeps_what_an_isolated_subagent_wrote() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "never"}]}],
        "iso": [{"turns": [{"tool_calls": [write("sub/new", "new\n")]}, {"delay_ms": 600_000, "text": "never"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let mut query = agent.query("go", QueryOverrides::default());
    while let Some(event) = query.next().await {
        if event.agent_type.as_ref() == "iso"
            && matches!(event.kind, EventKind::ToolCallFinished { .. })
        {
            break;
        }
    }
    drop(query);
    // Nobody waits for a dropped query's cleanup: let it run.
    let (path, branch) = expected(&top, &agent, "root.0001-iso");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(worktrees(&top), vec![top.clone(), path.clone()]);
    assert_eq!(branches(&top), vec!["main".to_owned(), branch]);
    assert_eq!(
        std::fs::read_to_string(path.join("sub/new")).unwrap(),
        "new\n"
    );
}

#[tokio::test]
async fn a_folder_outside_any_repository_fails_the_task_before_the_agent_runs() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "reported"}]}],
        "iso": [{"turns": [{"tool_calls": [write("stray.txt", "x")]}, {"text": "never"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let results = finished(&events);
    assert_eq!(results[0].status, TaskStatus::Failed);
    assert_eq!(results[0].worktree, None);
    let error = results[0].error.clone().unwrap();
    let prefix = format!(
        "agent root.0001-iso cannot run in a git worktree: {} is not inside a git work tree: fatal: not a git repository",
        h.dir.path().display()
    );
    assert!(error.starts_with(&prefix), "{error}");
    assert!(h.provider.of_type("iso").is_empty(), "the agent never ran");
    assert!(!h.dir.path().join("stray.txt").exists());
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::SubagentRunning)),
        "it never ran"
    );
}

/// An agent over `script` whose runtime works in `cwd` with `env`.
fn agent_in(
    script: &Value,
    cwd: &Path,
    env: &[(&str, String)],
    config: AgentConfig,
) -> (Arc<Recording>, Agent) {
    let provider = Recording::new(script);
    let settings = RuntimeSettings {
        model: "scripted-model".to_owned(),
        cwd: cwd.to_path_buf(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    };
    let runtime = RuntimeEnvironment::new(
        Arc::clone(&provider) as Arc<dyn ModelProvider>,
        settings,
        BuiltinTools::new(cwd.join(".zr/cron.json")),
    );
    (provider, Agent::new(Arc::new(runtime), config))
}

#[tokio::test]
async fn without_git_the_task_fails_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let empty = tempfile::tempdir().unwrap();
    let script = json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "reported"}]}],
        "iso": [{"turns": [{"text": "never"}]}]
    }});
    let path = empty.path().display().to_string();
    let (provider, agent) = agent_in(
        &script,
        dir.path(),
        &[("PATH", path)],
        root_with(vec![isolated("iso")]),
    );
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let results = finished(&events);
    assert_eq!(results[0].status, TaskStatus::Failed);
    assert!(
        results[0].error.as_deref().unwrap().starts_with(
            "agent root.0001-iso cannot run in a git worktree: cannot run git (is it installed and on the PATH of the runtime's environment?): "
        ),
        "{results:?}"
    );
    assert!(provider.of_type("iso").is_empty());
}

#[tokio::test]
async fn the_agent_starts_in_the_same_sub_folder_of_its_worktree() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let script = json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "done"}]}],
        "iso": [{"turns": [{"tool_calls": [bash("pwd; cat file")]}, {"text": "looked"}]}]
    }});
    let (provider, agent) = agent_in(
        &script,
        &dir.path().join("sub"),
        &[("PATH", std::env::var("PATH").unwrap())],
        root_with(vec![isolated("iso")]),
    );
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let (path, _) = expected(&top, &agent, "root.0001-iso");
    assert_eq!(
        tool_results(&provider.of_type("iso")[1]),
        vec![(
            false,
            format!("{}\nfile\n[exit code 0]", path.join("sub").display())
        )]
    );
    assert!(!finished(&events)[0].worktree.as_ref().unwrap().kept);
    assert_eq!(worktrees(&top), vec![top.clone()]);
}

/// Several isolated subagents at once, each ending another way: each gets
/// its own worktree; the changed ones are kept, the others removed.
#[tokio::test]
async fn simultaneous_isolated_subagents_each_get_a_worktree_settled_on_every_exit_path() {
    let task = |ty: &str, prompt: &str| json!({"description": prompt, "prompt": prompt, "subagent_type": ty});
    let tasks = vec![
        task("iso", "keep"),
        task("iso", "idle"),
        task("iso", "fail"),
        task("looper", "loop"),
        task("iso", "hang"),
        task("spender", "spend"),
        task("iso", "wait"),
    ];
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]}, {"text": "done"}]}],
        "iso": [
            {"match": "keep", "turns": [{"tool_calls": [write("keep.txt", "k")]}, {"text": "kept"}]},
            {"match": "idle", "turns": [{"tool_calls": [bash("true")]}, {"text": "idle"}]},
            {"match": "fail", "turns": [{"tool_calls": [bash("true")]}]},
            {"match": "wait", "turns": [{"tool_calls": [bash("true")]}, {"delay_ms": 600_000, "text": "never"}]},
            {"match": "hang", "turns": [{"tool_calls": [write("hang.txt", "h")]}, {"delay_ms": 600_000, "text": "never"}]}
        ],
        "looper": [{"turns": [{"tool_calls": [write("loop.txt", "l")]}, {"text": "never"}], "summary": "looped"}],
        "spender": [{"turns": [{"tool_calls": [write("spend.txt", "s"), bash("true")]}, {"text": "never"}]}]
    }}));
    let mut looper = isolated("looper");
    looper.max_turns = Some(1);
    let mut spender = isolated("spender");
    spender.budget.tool_calls = Some(1);
    let mut config = root_with(vec![isolated("iso"), looper, spender]);
    config.subagent.max_concurrent = 7;
    config.subagent.timeout = Duration::from_secs(12);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let results = by_index(&events);
    let seen: Vec<(TaskStatus, bool, bool)> = results
        .iter()
        .map(|r| {
            let w = r.worktree.as_ref().unwrap();
            (r.status, w.changed, w.kept)
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (TaskStatus::Completed, true, true),
            (TaskStatus::Completed, false, false),
            (TaskStatus::Failed, false, false),
            (TaskStatus::MaxTurns, true, true),
            (TaskStatus::TimedOut, true, true),
            (TaskStatus::BudgetExhausted, true, true),
            (TaskStatus::TimedOut, false, false),
        ]
    );
    let mut kept = vec![top.clone()];
    let mut kept_branches = vec!["main".to_owned()];
    for (r, file) in results.iter().zip([
        Some("keep.txt"),
        None,
        None,
        Some("loop.txt"),
        Some("hang.txt"),
        Some("spend.txt"),
        None,
    ]) {
        let w = r.worktree.as_ref().unwrap();
        let Some(file) = file else {
            assert!(!w.path.exists(), "{r:?}");
            continue;
        };
        let mut files: Vec<String> = std::fs::read_dir(&w.path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".git")
            .collect();
        files.sort();
        assert_eq!(files, vec!["README", file, "sub"], "only its own file");
        kept.push(w.path.clone());
        kept_branches.push(w.branch.clone());
    }
    let mut listed = worktrees(&top);
    listed.sort();
    kept.sort();
    assert_eq!(listed, kept);
    let mut listed = branches(&top);
    listed.sort();
    kept_branches.sort();
    assert_eq!(listed, kept_branches);
    assert!(!top.join("keep.txt").exists());
}

#[tokio::test]
async fn an_existing_branch_of_the_same_name_fails_the_task_and_is_left_alone() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "reported"}]}],
        "iso": [{"turns": [{"text": "never"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let (path, branch) = expected(&top, &agent, "root.0001-iso");
    git(&top, &["branch", &branch]);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let results = finished(&events);
    assert_eq!(results[0].status, TaskStatus::Failed);
    assert_eq!(
        results[0].error.as_deref(),
        Some(
            format!(
                "agent root.0001-iso cannot run in a git worktree: branch {branch} already exists in the repository at {}",
                top.display()
            )
            .as_str()
        )
    );
    assert!(h.provider.of_type("iso").is_empty());
    assert_eq!(branches(&top), vec!["main".to_owned(), branch]);
    assert_eq!(worktrees(&top), vec![top.clone()]);
    assert!(!path.exists());
}

#[tokio::test]
async fn a_failed_worktree_add_leaves_no_branch_behind() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("iso")]}, {"text": "reported"}]}],
        "iso": [{"turns": [{"text": "never"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("iso")]));
    let (path, branch) = expected(&top, &agent, "root.0001-iso");
    // A file where the session's folder of worktrees goes: git makes the
    // branch, then fails to make the folder.
    std::fs::create_dir_all(path.parent().unwrap().parent().unwrap()).unwrap();
    std::fs::write(path.parent().unwrap(), "in the way\n").unwrap();
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let results = finished(&events);
    assert_eq!(results[0].status, TaskStatus::Failed);
    let error = results[0].error.clone().unwrap();
    let prefix = format!(
        "agent root.0001-iso cannot run in a git worktree: `git worktree add --quiet -b {branch} {} ",
        path.display()
    );
    assert!(error.starts_with(&prefix), "{error}");
    assert!(
        error.contains(&format!(
            " in {} failed (exit code 128): fatal: ",
            top.display()
        )),
        "{error}"
    );
    assert!(h.provider.of_type("iso").is_empty());
    assert_eq!(branches(&top), vec!["main"]);
    assert_eq!(worktrees(&top), vec![top.clone()]);
    assert_eq!(
        std::fs::read_to_string(path.parent().unwrap()).unwrap(),
        "in the way\n"
    );
}

#[tokio::test]
async fn an_isolated_background_agent_reports_its_kept_worktree_and_removes_an_unchanged_one() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "Task", "input": {"description": "write", "prompt": "p", "subagent_type": "writer", "run_in_background": true}},
                {"name": "Task", "input": {"description": "look", "prompt": "p", "subagent_type": "looker", "run_in_background": true}}
            ]},
            {"text": "started"}
        ]}],
        "writer": [{"turns": [{"tool_calls": [write("new.txt", "from the background")]}, {"text": "wrote"}]}],
        "looker": [{"turns": [{"text": "looked"}]}]
    }}));
    let agent = h.agent(root_with(vec![isolated("writer"), isolated("looker")]));
    agent.prompt("go").await.unwrap();
    tokio::time::timeout(Duration::from_secs(60), agent.wait_background())
        .await
        .expect("both end");
    let all = agent.background_agents();
    let writer = all.iter().find(|a| a.agent_type == "writer").unwrap();
    let result = writer.result.clone().unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "wrote")
    );
    let (path, branch) = expected(&top, &agent, writer.id.as_str());
    let info = result.worktree.expect("the writer's worktree is reported");
    assert_eq!(
        (info.path.clone(), info.branch.clone()),
        (path.clone(), branch.clone())
    );
    assert!(info.changed && info.kept);
    assert_eq!(
        std::fs::read_to_string(path.join("new.txt")).unwrap(),
        "from the background"
    );
    assert!(!top.join("new.txt").exists());
    let looker = all.iter().find(|a| a.agent_type == "looker").unwrap();
    let (looker_path, looker_branch) = expected(&top, &agent, looker.id.as_str());
    assert!(!looker_path.exists());
    assert!(!branches(&top).contains(&looker_branch));
    assert!(branches(&top).contains(&branch));
    assert_eq!(worktrees(&top), vec![top.clone(), path]);
}

/// The header of `agent`'s transcript in the session of `root`.
fn header_of(dir: &Path, root: &Agent, agent: &str) -> Value {
    let path = dir.join(format!("sessions/{}/{agent}.jsonl", root.session_id()));
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[tokio::test]
async fn a_subagent_resumes_in_its_kept_worktree_and_in_its_parents_folder_once_removed() {
    let (h, top) = in_repo(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("iso"), task_call("look")]},
            {"text": "done"}
        ]}],
        "iso": [{"turns": [
            {"tool_calls": [bash("echo new > new.txt")]},
            {"text": "wrote"},
            {"tool_calls": [bash("pwd; cat new.txt")]},
            {"text": "resumed in the worktree"}
        ]}],
        "look": [{"turns": [
            {"tool_calls": [bash("pwd")]},
            {"text": "looked"},
            {"tool_calls": [bash("pwd")]},
            {"text": "resumed in the parent's folder"}
        ]}]
    }}));
    let mut config = root_with(vec![isolated("iso"), isolated("look")]);
    config.subagent.max_concurrent = 1;
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config.clone());
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let (kept, _) = expected(&top, &agent, "root.0001-iso");
    let (removed, _) = expected(&top, &agent, "root.0002-look");
    let results = by_index(&events);
    assert_eq!(
        results
            .iter()
            .map(|r| r.worktree.as_ref().map(|w| (w.changed, w.kept)))
            .collect::<Vec<_>>(),
        [Some((true, true)), Some((false, false))]
    );
    assert!(kept.is_dir() && !removed.exists());
    // Each header records the worktree the agent ran in.
    for (id, path) in [("root.0001-iso", &kept), ("root.0002-look", &removed)] {
        let header = header_of(h.dir.path(), &agent, id);
        // Exactly its path (no trailing separator).
        assert_eq!(header["cwd"], json!(path), "{id}");
        assert_eq!(header["worktree"], json!(path), "{id}");
    }
    let session = agent.session_id().clone();
    drop(agent);

    let resumed = Agent::resume(Arc::clone(&h.runtime), config, &session).unwrap();
    let iso: zr_types::AgentId = "root.0001-iso".parse().unwrap();
    let (events, result) = run(resumed.resume_subagent(&iso, Some("again".to_owned()))).await;
    assert_eq!(result.unwrap().output, "resumed in the worktree");
    assert_eq!(resume_warnings(&events), Vec::<String>::new());
    assert_eq!(
        tool_results(&h.provider.of_type("iso")[3]).pop(),
        Some((false, format!("{}\nnew\n[exit code 0]", kept.display())))
    );

    let look: zr_types::AgentId = "root.0002-look".parse().unwrap();
    let (events, result) = run(resumed.resume_subagent(&look, Some("again".to_owned()))).await;
    assert_eq!(result.unwrap().output, "resumed in the parent's folder");
    assert_eq!(
        resume_warnings(&events),
        [format!(
            "the agent's folder {} is gone; it resumes in its parent's, {}",
            removed.display(),
            h.dir.path().display()
        )]
    );
    assert_eq!(
        tool_results(&h.provider.of_type("look")[3]).pop(),
        Some((false, format!("{}\n[exit code 0]", h.dir.path().display())))
    );
    // Nothing of the removed worktree came back.
    assert!(!removed.exists());
    assert_eq!(worktrees(&top), [top.clone(), kept]);
}
