//! Permissions end to end: denial limits, background agents and bubbling,
//! the mode clamp across the lattice, plan mode, and `Ask` through the
//! ask-user service. Real `Write` calls into a temporary folder.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, AgentDefinition, AgentType, PermissionMode, RuntimeSettings};
use zr_engine::{
    AgentConfig, Decision, Event, EventKind, Hook, HookAgent, HookReply, Hooks, ModelProvider,
    PermissionConfig, QueryOverrides, RuntimeEnvironment, TaskStatus,
};
use zr_tools::{AskUserService, BuiltinTools, Question, ServiceError, UserAnswer};
use zr_types::{BoxFuture, ToolCall};

use crate::check::check;
use crate::support::{
    Echo, Harness, Policy, Recording, assert_all_requests_valid, custom, denials_of, finished,
    notification, run, run_and_wait, sub_agent, task_call, tool_results, write_call,
};

/// A subagent type that runs in the background.
fn background(name: &str) -> AgentDefinition {
    let mut definition = sub_agent(name, AgentType::GeneralPurpose);
    definition.background = true;
    definition
}

fn with_policy(config: AgentConfig, policy: &Arc<Policy>) -> AgentConfig {
    let mut config = config;
    config.permissions = PermissionConfig::with_handler(Arc::clone(policy) as _);
    config
}

#[tokio::test]
async fn three_automatic_denials_stop_a_background_agent_with_status_denied() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("bg")]}, {"text": "root done"}, {"text": "noted"}]}],
        "bg": [{"turns": [
            {"tool_calls": [write_call("a.txt", "a")]},
            {"tool_calls": [write_call("b.txt", "b")]},
            {"tool_calls": [write_call("c.txt", "c"), write_call("d.txt", "d")]},
            {"text": "never asked for"}
        ]}]
    }}));
    let policy = Policy::new(|_| Decision::Ask);
    let config = with_policy(
        AgentConfig::new("root").with_sub_agent(background("bg")),
        &policy,
    );
    let agent = h.agent(config);
    // The background agent's events come through the session.
    let (_, result, events) = run_and_wait(&agent, "go").await;
    assert_eq!(result.unwrap().output, "root done");

    let automatic = "permission to run 'Write' was denied: agent root.0001-bg runs in the background, where permission prompts are unavailable";
    let results = finished(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status, TaskStatus::Denied);
    assert_eq!(
        results[0].error.as_deref(),
        Some(
            format!("stopped after 3 consecutive permission denials; the last: {automatic}")
                .as_str()
        )
    );
    assert_eq!(results[0].turns, 3);
    // Nothing was written; the fourth call of the agent was not run.
    for file in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        assert!(!h.dir.path().join(file).exists(), "{file} must not exist");
    }
    assert_eq!(denials_of(&events, "root.0001-bg"), vec![automatic; 3]);
    let summaries: Vec<String> = events
        .iter()
        .filter(|e| e.agent.as_str() == "root.0001-bg")
        .filter_map(|e| match &e.kind {
            EventKind::ToolCallFinished {
                summary,
                is_error: true,
                ..
            } => Some(summary.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        summaries.last().map(String::as_str),
        Some(format!("not run: agent root.0001-bg was stopped after 3 consecutive permission denials; the last: {automatic}").as_str())
    );
    // The model saw the first two refusals, and was not asked again after
    // the third.
    let requests = h.provider.of_type("bg");
    assert_eq!(requests.len(), 3);
    assert_eq!(
        tool_results(&requests[2]),
        vec![(true, automatic.to_owned()), (true, automatic.to_owned())]
    );
    // The host was asked each time, for the background agent, unbubbled.
    let seen = policy.seen();
    assert_eq!(seen.len(), 3);
    for request in &seen {
        assert_eq!(
            (
                request.agent.as_str(),
                request.agent_type.as_str(),
                request.tool.as_str()
            ),
            ("root.0001-bg", "bg", "Write")
        );
        assert!(request.background && !request.bubbled);
        assert_eq!(request.mode, PermissionMode::Default);
    }
    // The call returned at once; the root's model got status `denied`
    // with the reason at its next turn.
    let root = h.provider.of_type("root");
    let (_, text) = &tool_results(&root[1])[0];
    let launched: Value = serde_json::from_str(text).unwrap();
    assert_eq!(launched["status"], "background");
    assert_eq!(agent.prompt("next").await.unwrap().output, "noted");
    let value = notification(&h.provider.of_type("root")[2]);
    assert_eq!(value["status"], "denied");
    assert_eq!(
        value["error"],
        format!("stopped after 3 consecutive permission denials; the last: {automatic}")
    );
    assert_all_requests_valid(&h);
}

#[tokio::test]
async fn twenty_denials_in_total_stop_the_root_even_with_allowed_calls_between() {
    // Each turn: denied, allowed, denied, allowed. Never three in a row,
    // but the twentieth denial comes at the third call of turn 10.
    let turns: Vec<Value> = (1..=10)
        .map(|t| {
            json!({"tool_calls": [
                write_call(&format!("deny-{t}-a.txt"), "x"),
                write_call(&format!("ok-{t}-a.txt"), "x"),
                write_call(&format!("deny-{t}-b.txt"), "x"),
                write_call(&format!("ok-{t}-b.txt"), "x"),
            ]})
        })
        .chain([json!({"text": "never asked for"})])
        .collect();
    let h = Harness::new(&json!({"agents": {"root": [{"turns": turns}]}}));
    let policy = Policy::new(|request| {
        if request.input["file_path"]
            .as_str()
            .unwrap()
            .starts_with("deny")
        {
            Decision::Deny("files named deny-* are off limits".to_owned())
        } else {
            Decision::Allow
        }
    });
    let agent = h.agent(with_policy(AgentConfig::new("root"), &policy));
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.status, TaskStatus::Denied);
    assert_eq!(result.turns, 10);
    let reason = "permission to run 'Write' was denied: files named deny-* are off limits";
    assert_eq!(denials_of(&events, "root"), vec![reason; 20]);
    let mut written: Vec<String> = std::fs::read_dir(h.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    written.sort();
    let mut expected: Vec<String> = (1..=9)
        .flat_map(|t| [format!("ok-{t}-a.txt"), format!("ok-{t}-b.txt")])
        .chain(["ok-10-a.txt".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(
        written, expected,
        "19 allowed writes ran; the call after the 20th denial did not"
    );
    // The host was asked 39 times: the 40th call was not run at all.
    assert_eq!(policy.seen().len(), 39);
    assert_eq!(h.provider.of_type("root").len(), 10);
    // The root's conversation was kept and stays valid.
    crate::support::assert_valid(&agent.history(), "the root's history");
    let last = agent.history().last().cloned().unwrap();
    let texts: Vec<String> = last
        .content
        .iter()
        .filter_map(|b| match b {
            zr_types::ContentBlock::ToolResult { content, .. } => {
                Some(crate::support::text(content))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        texts.last().map(String::as_str),
        Some(format!("not run: agent root was stopped after 20 permission denials in total; the last: {reason}").as_str())
    );
}

/// The root starts the background agent `bg`, which writes `writes`
/// (file, content) one call a turn, under `policy` with bubbling on; runs
/// it all to its end and checks the root answers `root done`. The harness
/// and the background agents' events.
async fn bubbled_writes(writes: &[(&str, &str)], policy: &Arc<Policy>) -> (Harness, Vec<Event>) {
    let mut turns: Vec<Value> = writes
        .iter()
        .map(|(file, content)| json!({"tool_calls": [write_call(file, content)]}))
        .collect();
    turns.push(json!({"text": "bg done"}));
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("bg")]}, {"text": "root done"}]}],
        "bg": [{"turns": turns}]
    }}));
    let mut config = with_policy(
        AgentConfig::new("root").with_sub_agent(background("bg")),
        policy,
    );
    config.permissions.bubble_background = true;
    let agent = h.agent(config);
    let (_, result, events) = run_and_wait(&agent, "go").await;
    assert_eq!(result.unwrap().output, "root done");
    (h, events)
}

#[tokio::test]
async fn bubbling_reaches_the_host_with_the_agents_path_and_a_session_approval_is_remembered() {
    let policy = Policy::new(|request| {
        if request.bubbled {
            Decision::AllowForSession
        } else {
            Decision::Ask
        }
    });
    let (h, events) = bubbled_writes(&[("one.txt", "1"), ("two.txt", "2")], &policy).await;
    assert_eq!(finished(&events)[0].status, TaskStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("one.txt")).unwrap(),
        "1"
    );
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("two.txt")).unwrap(),
        "2"
    );
    // Asked, then bubbled with the agent's path; the second call was not
    // asked about at all.
    let seen: Vec<(String, bool, bool, Value)> = policy
        .seen()
        .into_iter()
        .map(|r| (r.agent.to_string(), r.background, r.bubbled, r.input))
        .collect();
    let input = json!({"file_path": "one.txt", "content": "1"});
    assert_eq!(
        seen,
        vec![
            ("root.0001-bg".to_owned(), true, false, input.clone()),
            ("root.0001-bg".to_owned(), true, true, input),
        ]
    );
    assert!(denials_of(&events, "root.0001-bg").is_empty());
}

#[tokio::test]
async fn a_bubbled_approval_for_once_is_asked_again_and_a_bubbled_ask_is_denied() {
    let policy =
        Policy::new(
            |request| match (request.bubbled, request.input["file_path"].as_str()) {
                (false, _) => Decision::Ask,
                (true, Some("three.txt")) => Decision::Ask,
                (true, _) => Decision::Allow,
            },
        );
    let (h, events) = bubbled_writes(
        &[("one.txt", "1"), ("two.txt", "2"), ("three.txt", "3")],
        &policy,
    )
    .await;
    assert!(h.dir.path().join("one.txt").exists() && h.dir.path().join("two.txt").exists());
    assert!(!h.dir.path().join("three.txt").exists());
    let bubbled: Vec<bool> = policy.seen().iter().map(|r| r.bubbled).collect();
    assert_eq!(bubbled, [false, true, false, true, false, true]);
    assert_eq!(
        denials_of(&events, "root.0001-bg"),
        [
            "permission to run 'Write' was denied: the host answered the bubbled request with Ask, and nobody else can be asked for a background agent"
        ]
    );
}

/// Subagent types `d-none` (no declared mode) and `d-<mode>` for every mode,
/// each able to run the custom tool `probe`.
fn mode_types(config: AgentConfig, probe: &Arc<zr_types::ToolDefinition>) -> AgentConfig {
    let capabilities = AgentCapabilities {
        custom_tools: Some(vec![Arc::clone(probe)]),
        ..AgentCapabilities::default()
    };
    let declared = PermissionMode::ALL.into_iter().map(Some).chain([None]);
    declared.fold(config, |config, mode| {
        let name = mode.map_or("d-none".to_owned(), |m| {
            format!("d-{}", m.as_str().to_lowercase())
        });
        let mut definition =
            sub_agent(&name, AgentType::GeneralPurpose).with_capabilities(capabilities.clone());
        definition.permission_mode = mode;
        config.with_sub_agent(definition)
    })
}

/// Records the mode each agent's PreToolUse saw.
#[derive(Debug, Default)]
struct Modes(Mutex<Vec<(String, PermissionMode)>>);

impl Hook for Modes {
    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        _: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        self.0
            .lock()
            .unwrap()
            .push((agent.agent_type.clone(), agent.mode));
        Box::pin(async { HookReply::proceed() })
    }
}

#[tokio::test]
async fn a_child_never_gets_a_wider_mode_than_its_parent_across_the_lattice() {
    let probe = custom("probe", false);
    let mut tasks: Vec<Value> = PermissionMode::ALL
        .iter()
        .map(|m| format!("d-{}", m.as_str().to_lowercase()))
        .chain(["d-none".to_owned()])
        .map(|t| json!({"description": t, "prompt": "probe", "subagent_type": t}))
        .collect();
    tasks.push(json!({"description": "fork", "prompt": "probe"}));
    for root_mode in PermissionMode::ALL {
        let h = Harness::with_runtime(
            &json!({"agents": {
                "root": [{"turns": [
                    {"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]},
                    {"text": "root done"}
                ]}],
                "*": [{"turns": [{"tool_calls": [{"name": "probe"}]}, {"text": "probed"}]}]
            }}),
            |r| r.with_tool(Arc::clone(&probe), Arc::new(Echo)),
        );
        let modes = Arc::new(Modes::default());
        let policy = Policy::new(|_| Decision::Allow);
        let mut config = with_policy(mode_types(AgentConfig::new("root"), &probe), &policy);
        config.capabilities.custom_tools = Some(vec![Arc::clone(&probe)]);
        config.permission_mode = root_mode;
        config.subagent.max_concurrent = 8;
        config.hooks = Hooks::new().with(Arc::clone(&modes) as _);
        let agent = h.agent(config);
        let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
        assert_eq!(result.unwrap().output, "root done", "root mode {root_mode}");
        let mut seen: Vec<(String, PermissionMode)> = modes.0.lock().unwrap().clone();
        seen.sort();
        let mut expected: Vec<(String, PermissionMode)> = PermissionMode::ALL
            .into_iter()
            .map(|d| (format!("d-{}", d.as_str().to_lowercase()), d.min(root_mode)))
            .chain([
                ("d-none".to_owned(), root_mode),
                ("fork".to_owned(), root_mode),
                ("root".to_owned(), root_mode),
            ])
            .collect();
        expected.sort();
        assert_eq!(seen, expected, "root mode {root_mode}");
        for (agent_type, mode) in &seen {
            assert!(*mode <= root_mode, "{agent_type} is wider than its root");
        }
        // The host's callback saw the same modes for the calls it was
        // asked about (plan refuses and bypassPermissions runs without it).
        for request in policy.seen() {
            assert!(seen.contains(&(request.agent_type.clone(), request.mode)));
            assert!(!matches!(
                request.mode,
                PermissionMode::Plan | PermissionMode::BypassPermissions
            ));
        }
        // Plan-mode agents were refused the non-read-only probe; the others ran it.
        let refused: Vec<String> = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::PermissionDenied { .. }))
            .map(|e| e.agent_type.to_string())
            .collect();
        let mut plan: Vec<String> = seen
            .iter()
            .filter(|(t, m)| *m == PermissionMode::Plan && t != "root")
            .map(|(t, _)| t.clone())
            .collect();
        let mut refused_sorted = refused.clone();
        refused_sorted.sort();
        plan.sort();
        assert_eq!(refused_sorted, plan, "root mode {root_mode}");
    }
}

#[tokio::test]
async fn plan_mode_refuses_a_write_and_runs_read_only_tools() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("planner")]}, {"text": "root done"}]}],
        "planner": [{"turns": [
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.md"}}, write_call("plan.txt", "the plan")]},
            {"text": "here is the plan"}
        ]}]
    }}));
    std::fs::write(h.dir.path().join("README.md"), "hello").unwrap();
    let policy = Policy::new(|_| Decision::Allow);
    // A general-purpose type (the resolver leaves it Write) declared plan:
    // the mode refuses the call, not the pool.
    let mut planner = sub_agent("planner", AgentType::GeneralPurpose);
    planner.permission_mode = Some(PermissionMode::Plan);
    let config = with_policy(AgentConfig::new("root").with_sub_agent(planner), &policy);
    // The snapshot: Glob runs, Write is refused (denied event and error
    // result naming plan mode), the planner completes, the root answers.
    let run = check(&h, config, "plan it").await;
    insta::assert_snapshot!(run.text);
    assert!(!h.dir.path().join("plan.txt").exists());
    assert!(policy.seen().is_empty(), "plan mode does not ask the host");
}

/// An ask-user service with canned answers that records the questions.
#[derive(Debug)]
struct Answers {
    answers: Mutex<VecDeque<Result<Vec<String>, ServiceError>>>,
    asked: Mutex<Vec<Question>>,
}

impl Answers {
    fn new(answers: Vec<Result<Vec<&str>, ServiceError>>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(
                answers
                    .into_iter()
                    .map(|a| a.map(|words| words.into_iter().map(str::to_owned).collect()))
                    .collect(),
            ),
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl AskUserService for Answers {
    fn ask<'a>(
        &'a self,
        questions: Vec<Question>,
    ) -> BoxFuture<'a, Result<Vec<UserAnswer>, ServiceError>> {
        let question = questions[0].question.clone();
        self.asked.lock().unwrap().extend(questions);
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Err(ServiceError::NoAnswer));
        Box::pin(async move { answer.map(|answers| vec![UserAnswer { question, answers }]) })
    }
}

/// A harness whose builtin tools ask the user through `service`.
fn with_ask_user(script: &Value, service: Option<Arc<Answers>>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let provider = Recording::new(script);
    let settings = RuntimeSettings {
        model: "scripted-model".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: [("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]
            .into_iter()
            .collect(),
    };
    let mut tools = BuiltinTools::new(dir.path().join(".zr/cron.json"));
    if let Some(service) = service {
        tools = tools.with_ask_user(service);
    }
    let runtime = RuntimeEnvironment::new(
        Arc::clone(&provider) as Arc<dyn ModelProvider>,
        settings,
        tools,
    );
    Harness {
        dir,
        provider,
        runtime: Arc::new(runtime),
    }
}

#[tokio::test]
async fn ask_in_the_foreground_reaches_the_ask_user_service_and_its_answer_decides() {
    let script = json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("yes.txt", "y")]},
        {"tool_calls": [write_call("no.txt", "n")]},
        {"tool_calls": [write_call("own-words.txt", "w")]},
        {"tool_calls": [write_call("session.txt", "s")]},
        {"tool_calls": [write_call("again.txt", "a")]},
        {"text": "done"}
    ]}]}});
    let service = Answers::new(vec![
        Ok(vec!["Allow"]),
        Ok(vec!["Deny"]),
        Ok(vec!["not that file"]),
        Ok(vec!["Allow for this session"]),
    ]);
    let h = with_ask_user(&script, Some(Arc::clone(&service)));
    let policy = Policy::new(|_| Decision::Ask);
    let agent = h.agent(with_policy(AgentConfig::new("root"), &policy));
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let exists = |f: &str| h.dir.path().join(f).exists();
    assert_eq!(
        [
            "yes.txt",
            "no.txt",
            "own-words.txt",
            "session.txt",
            "again.txt"
        ]
        .map(exists),
        [true, false, false, true, true]
    );
    let asked = service.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 4, "the session approval covers the last call");
    assert_eq!(
        asked[0].question,
        r#"Agent root (root) wants to run Write with input {"content":"y","file_path":"yes.txt"}. Allow it?"#
    );
    let labels: Vec<&str> = asked[0].options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Allow", "Allow for this session", "Deny"]);
    assert_eq!(
        denials_of(&events, "root"),
        [
            "permission to run 'Write' was denied: the user said no",
            "permission to run 'Write' was denied: the user said no: not that file",
        ]
    );
    // The host was asked four times too; the fifth call was remembered.
    assert_eq!(policy.seen().len(), 4);
}

#[tokio::test]
async fn ask_without_an_ask_user_service_or_an_answer_is_denied_with_a_message() {
    let script = json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a")]},
        {"text": "done"}
    ]}]}});
    let policy = Policy::new(|_| Decision::Ask);
    for (service, reason) in [
        (
            None,
            "permission to run 'Write' was denied: it needs the user's approval, and no ask-user service is configured to ask",
        ),
        (
            Some(Answers::new(vec![Err(ServiceError::NoAnswer)])),
            "permission to run 'Write' was denied: the user did not answer",
        ),
    ] {
        let h = with_ask_user(&script, service);
        let agent = h.agent(with_policy(AgentConfig::new("root"), &policy));
        let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
        assert_eq!(result.unwrap().output, "done");
        assert!(!h.dir.path().join("a.txt").exists());
        assert_eq!(denials_of(&events, "root"), [reason]);
        assert_eq!(
            tool_results(&h.provider.of_type("root")[1]),
            [(true, reason.to_owned())]
        );
    }
}

#[tokio::test]
async fn each_mode_decides_before_the_host_and_dont_ask_denies_what_would_be_asked() {
    // Write, then Bash, then a read-only Glob, under each mode; the host
    // answers Ask (no ask-user service: a foreground Ask is denied).
    let script = json!({"agents": {"root": [{"turns": [
        {"tool_calls": [
            write_call("w.txt", "w"),
            {"name": "Bash", "input": {"command": "echo ran > b.txt"}},
            {"name": "Glob", "input": {"pattern": "*.none"}}
        ]},
        {"text": "done"}
    ]}]}});
    let no_service = "it needs the user's approval, and no ask-user service is configured to ask";
    let cases = [
        (PermissionMode::BypassPermissions, [true, true], vec![]),
        (PermissionMode::AcceptEdits, [true, false], vec![format!("permission to run 'Bash' was denied: {no_service}")]),
        (PermissionMode::Default, [false, false], vec![
            format!("permission to run 'Write' was denied: {no_service}"),
            format!("permission to run 'Bash' was denied: {no_service}"),
        ]),
        (PermissionMode::DontAsk, [false, false], vec![
            "permission to run 'Write' was denied: agent root is in dontAsk mode and this call needs approval".to_owned(),
            "permission to run 'Bash' was denied: agent root is in dontAsk mode and this call needs approval".to_owned(),
        ]),
    ];
    for (mode, ran, denials) in cases {
        let h = with_ask_user(&script, None);
        let policy = Policy::new(|_| Decision::Ask);
        let mut config = with_policy(AgentConfig::new("root"), &policy);
        config.permission_mode = mode;
        let agent = h.agent(config);
        let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
        assert_eq!(result.unwrap().output, "done", "{mode}");
        let exists = ["w.txt", "b.txt"].map(|f| h.dir.path().join(f).exists());
        assert_eq!(exists, ran, "{mode}");
        assert_eq!(denials_of(&events, "root"), denials, "{mode}");
        let asked: Vec<String> = policy.seen().iter().map(|r| r.tool.to_string()).collect();
        let expected: &[&str] = match mode {
            PermissionMode::BypassPermissions => &[],
            PermissionMode::AcceptEdits => &["Bash"],
            _ => &["Write", "Bash"],
        };
        assert_eq!(
            asked, expected,
            "{mode}: the read-only Glob is never asked about"
        );
    }
}

#[tokio::test]
async fn a_panicking_permission_handler_denies_the_call_and_the_engine_goes_on() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a")]},
        {"text": "still here"}
    ]}]}}));
    let policy = Policy::new(|_| panic!("the policy broke"));
    // The snapshot: the call is denied saying the handler panicked, and
    // the root goes on.
    let run = check(&h, with_policy(AgentConfig::new("root"), &policy), "go").await;
    insta::assert_snapshot!(run.text);
    assert!(!h.dir.path().join("a.txt").exists());
}

/// Denies every call with an empty reason.
#[derive(Debug)]
struct SilentHook;

impl Hook for SilentHook {
    fn pre_tool_use<'a>(
        &'a self,
        _: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        let verdict = if call.name == "Bash" {
            HookReply::block(" ")
        } else {
            HookReply::proceed()
        };
        Box::pin(async move { verdict })
    }
}

#[tokio::test]
async fn a_denial_without_a_reason_tells_the_model_that_none_was_given() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a"), {"name": "Bash", "input": {"command": "echo ran > b.txt"}}]},
        {"text": "done"}
    ]}]}}));
    let policy = Policy::new(|_| Decision::Deny(String::new()));
    let mut config = with_policy(AgentConfig::new("root"), &policy);
    config.hooks = Hooks::new().with(Arc::new(SilentHook));
    // The snapshot: both denials (events and error results) say no
    // reason was given.
    let run = check(&h, config, "go").await;
    insta::assert_snapshot!(run.text);
    assert!(!h.dir.path().join("a.txt").exists());
    assert!(!h.dir.path().join("b.txt").exists());
}

/// A fetch is asked about per host unless a `WebFetch(domain:..)` rule
/// allows it, though WebFetch only reads; an allowed host is not asked
/// about, and an approval "for the session" holds for that host only.
#[tokio::test]
async fn a_fetch_is_asked_about_per_host_unless_a_rule_allows_it() {
    let fetch = |url: &str| json!({"name": "WebFetch", "input": {"url": url, "prompt": "read"}});
    let script = json!({"agents": {"root": [
        {"turns": [
            {"tool_calls": [fetch("http://localhost:9/a"), fetch("http://localhost:9/b"), fetch("http://127.0.0.1:9/c")]},
            {"text": "done"}]}
    ]}});
    // No rule: the first fetch of each host is asked about; the session
    // grant covers the second fetch of `localhost` only.
    let h = Harness::new(&script);
    let policy = Policy::new(|_| Decision::AllowForSession);
    let agent = h.agent(with_policy(AgentConfig::new("root"), &policy));
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let asked: Vec<String> = policy
        .seen()
        .iter()
        .map(|r| format!("{} {}", r.tool, r.input["url"]))
        .collect();
    assert_eq!(
        asked,
        [
            "WebFetch \"http://localhost:9/a\"",
            "WebFetch \"http://127.0.0.1:9/c\""
        ]
    );
    // A rule for the host: nobody is asked about it.
    let h = Harness::new(&script);
    let policy = Policy::new(|_| Decision::Deny("no".to_owned()));
    let mut config = with_policy(AgentConfig::new("root"), &policy);
    config.permissions.rules.allow = vec!["WebFetch(domain:localhost)".parse().unwrap()];
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let asked: Vec<String> = policy
        .seen()
        .iter()
        .map(|r| r.input["url"].to_string())
        .collect();
    assert_eq!(asked, ["\"http://127.0.0.1:9/c\""]);
}

/// An embedder without a permission handler: ordinary calls run (the host
/// has no policy), but a call across the effects boundary is refused, since
/// nobody said yes to it; in `bypassPermissions` it runs.
#[tokio::test]
async fn without_a_handler_a_crossing_is_refused_and_an_ordinary_call_runs() {
    // A name of this process's own: the parent folder is shared.
    let name = format!("zr-test-outside-{}.txt", std::process::id());
    let script = json!({"agents": {"root": [
        {"turns": [
            {"tool_calls": [write_call("inside.txt", "in"), write_call(&format!("../{name}"), "out"), write_call("zr.toml", "mode = 1")]},
            {"text": "done"}]}
    ]}});
    let h = Harness::new(&script);
    let outside = h.dir.path().parent().unwrap().join(&name);
    let (events, result) = run(h
        .agent(AgentConfig::new("root"))
        .query("go", QueryOverrides::default()))
    .await;
    assert_eq!(result.unwrap().output, "done");
    assert!(h.dir.path().join("inside.txt").exists());
    assert!(!outside.exists());
    assert!(!h.dir.path().join("zr.toml").exists());
    let denials = denials_of(&events, "root");
    assert_eq!(denials.len(), 2, "{denials:?}");
    assert!(
        denials[0].contains("outside the agent's writable roots"),
        "{denials:?}"
    );
    assert!(denials[1].contains("a protected file"), "{denials:?}");
    assert!(
        denials
            .iter()
            .all(|d| d.contains("no permission handler is there to approve it"))
    );

    let h = Harness::new(&script);
    let outside = h.dir.path().parent().unwrap().join(&name);
    let mut config = AgentConfig::new("root");
    config.permission_mode = PermissionMode::BypassPermissions;
    let (_, result) = run(h.agent(config).query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert!(outside.exists() && h.dir.path().join("zr.toml").exists());
    std::fs::remove_file(outside).unwrap();
}
