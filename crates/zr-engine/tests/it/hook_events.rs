//! Hooks with Claude Code's semantics, end to end on the request bodies:
//! Stop and SubagentStop blocks keep an agent working (`stop_hook_active`
//! after the first, bounded), PostToolUse feedback and context reach the
//! model with the result, UserPromptSubmit and SessionStart refuse or
//! add to the prompt, `halt` stops an agent, a hook's `allow` stays below
//! the deny rules and the effects boundary while its `ask` asks, a
//! rewritten input is checked again, Notification and PreCompact fire,
//! and the hooks of an agent type run for its agents only.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, AgentDefinition, AgentType, PermissionMode};
use zr_engine::{
    AgentConfig, CompactTrigger, CompactionConfig, Decision, EngineError, EventKind, Hook,
    HookAgent, HookReply, Hooks, Notice, PermissionConfig, PermissionHandler, PermissionRequest,
    QueryOverrides, SessionEndReason, SessionSource, TaskStatus, TypeHooks,
};
use zr_types::{AgentId, BoxFuture, ContentBlock, MessageRole, ToolCall, ToolOutput};

use crate::support::{
    Echo, Harness, Policy, custom, denials_of, finished, run, sub_agent, task_call,
    text_of_last_user, tool_results, write_call,
};

/// What a [`Scripted`] hook answers at a call of a tool.
type OnTool = Box<dyn Fn(&ToolCall) -> HookReply + Send + Sync>;

/// A hook that logs every event it gets and answers as set: the Stop
/// answers in turn (then `proceed`), the others always the same.
#[derive(Default)]
struct Scripted {
    log: Mutex<Vec<String>>,
    stops: Mutex<VecDeque<HookReply>>,
    prompt: HookReply,
    start: HookReply,
    pre: Option<OnTool>,
    post: Option<OnTool>,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripted").finish_non_exhaustive()
    }
}

impl Scripted {
    fn note(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn stopping(replies: impl IntoIterator<Item = HookReply>) -> Self {
        Self {
            stops: Mutex::new(replies.into_iter().collect()),
            ..Self::default()
        }
    }
}

impl Hook for Scripted {
    fn session_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        source: SessionSource,
    ) -> BoxFuture<'a, HookReply> {
        self.note(format!("SessionStart {} {}", agent.agent, source.as_str()));
        Box::pin(async { self.start.clone() })
    }

    fn user_prompt_submit<'a>(
        &'a self,
        agent: &'a HookAgent,
        prompt: &'a str,
    ) -> BoxFuture<'a, HookReply> {
        self.note(format!("UserPromptSubmit {} {prompt}", agent.agent));
        Box::pin(async { self.prompt.clone() })
    }

    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        self.note(format!("PreToolUse {} {}", agent.agent, call.name));
        let reply = self
            .pre
            .as_ref()
            .map_or_else(HookReply::proceed, |f| f(call));
        Box::pin(async move { reply })
    }

    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        _: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        self.note(format!("PostToolUse {} {}", agent.agent, call.name));
        let reply = self
            .post
            .as_ref()
            .map_or_else(HookReply::proceed, |f| f(call));
        Box::pin(async move { reply })
    }

    fn stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        answer: &'a str,
        active: bool,
    ) -> BoxFuture<'a, HookReply> {
        let event = if agent.is_root() {
            "Stop"
        } else {
            "SubagentStop"
        };
        self.note(format!(
            "{event} {} {answer:?} active={active}",
            agent.agent
        ));
        let reply = self.stops.lock().unwrap().pop_front().unwrap_or_default();
        Box::pin(async move { reply })
    }

    fn pre_compact<'a>(
        &'a self,
        agent: &'a HookAgent,
        trigger: CompactTrigger,
    ) -> BoxFuture<'a, ()> {
        self.note(format!("PreCompact {} {}", agent.agent, trigger.as_str()));
        Box::pin(async {})
    }

    fn notification<'a>(&'a self, agent: &'a HookAgent, notice: &'a Notice) -> BoxFuture<'a, ()> {
        self.note(format!(
            "Notification {} {} {}",
            agent.agent,
            notice.kind.as_str(),
            notice.message
        ));
        Box::pin(async {})
    }

    fn session_end<'a>(
        &'a self,
        agent: &'a HookAgent,
        reason: SessionEndReason,
    ) -> BoxFuture<'a, ()> {
        self.note(format!("SessionEnd {} {}", agent.agent, reason.as_str()));
        Box::pin(async {})
    }
}

fn config_with(hook: &Arc<Scripted>) -> AgentConfig {
    let mut config = AgentConfig::new("root");
    config.hooks = Hooks::new().with(Arc::clone(hook) as _);
    config
}

/// The texts of every user message of a request, in order.
fn user_texts(request: &zr_engine::ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::User)
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_stop_hook_that_blocks_twice_keeps_the_root_working_two_more_turns() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"text": "done, I think"},
        {"text": "fixed the first test"},
        {"text": "all tests pass"}
    ]}]}}));
    let hook = Arc::new(Scripted::stopping([
        HookReply::block("2 tests fail: fix them"),
        HookReply::block("1 test fails: fix it"),
    ]));
    let agent = h.agent(config_with(&hook));
    let (_, result) = run(agent.query("make the tests pass", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.output, "all tests pass");
    assert_eq!(result.status, TaskStatus::Completed);
    assert_eq!(result.turns, 3, "two more turns");
    let requests = h.provider.of_type("root");
    assert_eq!(requests.len(), 3);
    assert_eq!(
        text_of_last_user(&requests[1]),
        "Stop hook feedback:\n2 tests fail: fix them"
    );
    assert_eq!(
        text_of_last_user(&requests[2]),
        "Stop hook feedback:\n1 test fails: fix it"
    );
    assert_eq!(
        hook.log()
            .into_iter()
            .filter(|l| l.starts_with("Stop"))
            .collect::<Vec<_>>(),
        [
            r#"Stop root "done, I think" active=false"#,
            r#"Stop root "fixed the first test" active=true"#,
            r#"Stop root "all tests pass" active=true"#,
        ]
    );
    // The conversation keeps the feedback, as the model saw it.
    let history = agent.history();
    assert_eq!(history.len(), 6);
}

#[tokio::test]
async fn a_hook_that_always_blocks_is_followed_only_so_many_times() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}
    ]}]}}));
    let hook = Arc::new(Scripted::stopping(
        std::iter::repeat_with(|| HookReply::block("again")).take(10),
    ));
    let mut config = config_with(&hook);
    config.hooks = config.hooks.with_max_stop_blocks(2);
    let agent = h.agent(config);
    let result = agent.prompt("go").await.unwrap();
    assert_eq!(result.output, "three", "the third stop is not blocked");
    assert_eq!(result.status, TaskStatus::Completed);
    assert_eq!(h.provider.of_type("root").len(), 3);
}

#[tokio::test]
async fn a_subagent_stop_block_keeps_the_subagent_working_and_its_parent_gets_the_last_answer() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{"turns": [{"text": "half done"}, {"text": "all done"}]}]
    }}));
    let hook = Arc::new(Scripted::stopping([HookReply::block(
        "finish the other half",
    )]));
    let mut config = config_with(&hook);
    config = config.with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    assert_eq!(finished(&events)[0].output, "all done");
    let worker = h.provider.of_type("worker");
    assert_eq!(worker.len(), 2);
    assert_eq!(
        text_of_last_user(&worker[1]),
        "SubagentStop hook feedback:\nfinish the other half"
    );
    let stops: Vec<String> = hook
        .log()
        .into_iter()
        .filter(|l| l.contains("Stop "))
        .collect();
    assert_eq!(
        stops,
        [
            r#"SubagentStop root.0001-worker "half done" active=false"#,
            r#"SubagentStop root.0001-worker "all done" active=true"#,
            r#"Stop root "root done" active=false"#,
        ]
    );
}

#[tokio::test]
async fn post_tool_use_feedback_and_context_reach_the_model_with_the_result() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.none"}}]},
        {"text": "done"}
    ]}]}}));
    let hook = Arc::new(Scripted {
        post: Some(Box::new(|_| {
            HookReply::block("lint failed: fix src/a.rs").with_context("the linter is clippy")
        })),
        ..Scripted::default()
    });
    let agent = h.agent(config_with(&hook));
    assert_eq!(agent.prompt("go").await.unwrap().output, "done");
    let results = tool_results(&h.provider.of_type("root")[1]);
    assert_eq!(results.len(), 1);
    let (error, text) = &results[0];
    assert!(!error, "the tool itself succeeded");
    assert!(
        text.starts_with("No files match"),
        "the result comes first: {text}"
    );
    assert!(
        text.ends_with(
            "PostToolUse hook feedback:\nlint failed: fix src/a.rs\n\
             PostToolUse hook additional context:\nthe linter is clippy"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_user_prompt_submit_block_refuses_the_prompt_before_the_model_sees_it() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [{"text": "never"}]}]}}));
    let hook = Arc::new(Scripted {
        prompt: HookReply::block("no secrets in prompts"),
        ..Scripted::default()
    });
    let agent = h.agent(config_with(&hook));
    let error = agent.prompt("my password is hunter2").await.unwrap_err();
    assert!(
        matches!(&error, EngineError::PromptBlocked { event, reason }
            if event == "UserPromptSubmit" && reason == "no secrets in prompts"),
        "{error:?}"
    );
    assert!(h.provider.of_type("root").is_empty(), "no request was made");
    assert!(agent.history().is_empty(), "the prompt is not kept");
}

#[tokio::test]
async fn session_start_and_prompt_contexts_surround_the_first_prompt_and_session_end_runs_once() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"text": "first"}, {"text": "second"}
    ]}]}}));
    let hook = Arc::new(Scripted {
        start: HookReply::proceed().with_context("branch: main"),
        prompt: HookReply::proceed().with_context("it is Friday"),
        ..Scripted::default()
    });
    let agent = h.agent(config_with(&hook));
    agent.prompt("hello").await.unwrap();
    agent.prompt("again").await.unwrap();
    agent.end(SessionEndReason::Other).await;
    agent.end(SessionEndReason::Other).await;
    let requests = h.provider.of_type("root");
    assert_eq!(
        user_texts(&requests[0]),
        ["branch: main", "hello", "it is Friday"]
    );
    assert_eq!(
        user_texts(&requests[1])[3..],
        ["again".to_owned(), "it is Friday".to_owned()],
        "SessionStart runs once"
    );
    assert_eq!(
        hook.log(),
        [
            "SessionStart root startup",
            "UserPromptSubmit root hello",
            r#"Stop root "first" active=false"#,
            "UserPromptSubmit root again",
            r#"Stop root "second" active=false"#,
            "SessionEnd root other",
        ]
    );
}

#[tokio::test]
async fn a_halt_at_post_tool_use_stops_the_agent_after_its_calls() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task_call("worker")]}, {"text": "root done"}]}],
        "worker": [{"turns": [
            {"tool_calls": [
                {"name": "Glob", "input": {"pattern": "a"}},
                {"name": "Grep", "input": {"pattern": "b"}}
            ]},
            {"text": "never"}
        ]}]
    }}));
    let hook = Arc::new(Scripted {
        post: Some(Box::new(|call| {
            if call.name == "Glob" {
                HookReply::halt("the build is broken: stop")
            } else {
                HookReply::proceed()
            }
        })),
        ..Scripted::default()
    });
    let config = config_with(&hook).with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    let task = &finished(&events)[0];
    assert_eq!(task.status, TaskStatus::Stopped);
    assert_eq!(
        task.error.as_deref(),
        Some("stopped by a PostToolUse hook: the build is broken: stop")
    );
    assert_eq!(h.provider.of_type("worker").len(), 1, "no request after it");
    assert!(events.iter().any(|e| matches!(&e.kind,
        EventKind::HookStopped { reason } if reason.contains("the build is broken"))));
    // The Glob's PostToolUse ran. The Grep runs beside it: whether it
    // starts before the halt lands depends on timing (a call that starts
    // after it is refused as stopped), so the test does not ask.
    assert!(
        hook.log()
            .contains(&"PostToolUse root.0001-worker Glob".to_owned())
    );
}

#[tokio::test]
async fn a_halt_at_pre_tool_use_refuses_the_call_and_stops_the_root() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a"), write_call("b.txt", "b")]},
        {"text": "never"}
    ]}]}}));
    let hook = Arc::new(Scripted {
        pre: Some(Box::new(|_| HookReply::halt("maintenance window"))),
        ..Scripted::default()
    });
    let agent = h.agent(config_with(&hook));
    let result = agent.prompt("go").await.unwrap();
    assert_eq!(result.status, TaskStatus::Stopped);
    assert_eq!(h.provider.of_type("root").len(), 1);
    assert!(!h.dir.path().join("a.txt").exists());
    assert!(!h.dir.path().join("b.txt").exists());
    assert_eq!(
        hook.log()
            .iter()
            .filter(|l| l.starts_with("PreToolUse"))
            .count(),
        1,
        "the second call is not put to the hooks"
    );
}

/// A Write to `zr.toml`, which the effects boundary protects.
fn write_protected() -> Value {
    json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("zr.toml", "[permissions]\nmode = \"bypassPermissions\"\n")]},
        {"text": "done"}
    ]}]}})
}

#[tokio::test]
async fn a_hooks_allow_does_not_let_an_accept_edits_agent_rewrite_zr_toml_without_a_question() {
    let h = Harness::new(&write_protected());
    let hook = Arc::new(Scripted {
        pre: Some(Box::new(|_| HookReply::allow())),
        ..Scripted::default()
    });
    let policy = Policy::new(|r| match &r.crossing {
        Some(_) => Decision::Deny("the user said no".to_owned()),
        None => Decision::Allow,
    });
    let mut config = config_with(&hook);
    config.permission_mode = PermissionMode::AcceptEdits;
    config.permissions = PermissionConfig::with_handler(Arc::clone(&policy) as _);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert!(!h.dir.path().join("zr.toml").exists(), "not written");
    let seen = policy.seen();
    assert_eq!(seen.len(), 1, "the crossing was asked about");
    assert!(
        seen[0]
            .crossing
            .as_deref()
            .is_some_and(|c| c.contains("zr.toml")),
        "{:?}",
        seen[0].crossing
    );
    assert_eq!(
        denials_of(&events, "root"),
        ["permission to run 'Write' was denied: the user said no"]
    );
}

#[tokio::test]
async fn a_hooks_allow_does_not_pass_a_deny_rule_and_a_rewritten_input_is_checked_again() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("secret.txt", "x"), write_call("notes.txt", "y")]},
        {"text": "done"}
    ]}]}}));
    // The first call is allowed by the hook but denied by a rule; the
    // second is rewritten to the protected zr.toml and allowed.
    let hook = Arc::new(Scripted {
        pre: Some(Box::new(|call| {
            if call.input["file_path"] == "notes.txt" {
                HookReply::allow().with_input(json!({"file_path": "zr.toml", "content": "x"}))
            } else {
                HookReply::allow()
            }
        })),
        ..Scripted::default()
    });
    let mut config = config_with(&hook);
    config.permission_mode = PermissionMode::AcceptEdits;
    config.permissions.rules.deny = vec!["Write(secret.txt)".parse().unwrap()];
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert!(!h.dir.path().join("secret.txt").exists());
    assert!(!h.dir.path().join("zr.toml").exists());
    assert!(!h.dir.path().join("notes.txt").exists());
    let denials = denials_of(&events, "root");
    assert_eq!(denials.len(), 2, "{denials:?}");
    assert!(denials[0].contains("Write(secret.txt)"), "{}", denials[0]);
    assert!(denials[1].contains("zr.toml"), "{}", denials[1]);
}

/// A handler that asks a person about everything, and a person who
/// allows.
#[derive(Debug)]
struct AsksAPerson;

impl PermissionHandler for AsksAPerson {
    fn can_use_tool<'a>(&'a self, _: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Ask })
    }

    fn prompt<'a>(&'a self, _: &'a PermissionRequest) -> Option<BoxFuture<'a, Decision>> {
        Some(Box::pin(async { Decision::Allow }))
    }
}

#[tokio::test]
async fn a_hooks_ask_asks_in_accept_edits_and_a_notification_comes_first() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a")]},
        {"text": "done"}
    ]}]}}));
    let hook = Arc::new(Scripted {
        pre: Some(Box::new(|_| HookReply::ask("writes need a look"))),
        ..Scripted::default()
    });
    let mut config = config_with(&hook);
    config.permission_mode = PermissionMode::AcceptEdits;
    config.permissions = PermissionConfig::with_handler(Arc::new(AsksAPerson));
    let agent = h.agent(config);
    assert_eq!(agent.prompt("go").await.unwrap().output, "done");
    assert!(h.dir.path().join("a.txt").exists(), "the person allowed it");
    let log = hook.log();
    assert_eq!(
        log[2..4],
        [
            "PreToolUse root Write".to_owned(),
            "Notification root permission_prompt zr needs your permission to use Write".to_owned(),
        ]
    );
}

#[tokio::test]
async fn a_hooks_ask_with_nobody_to_ask_is_a_refusal() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a")]},
        {"text": "done"}
    ]}]}}));
    let hook = Arc::new(Scripted {
        pre: Some(Box::new(|_| HookReply::ask("writes need a look"))),
        ..Scripted::default()
    });
    let mut config = config_with(&hook);
    config.permission_mode = PermissionMode::AcceptEdits;
    let agent = h.agent(config);
    let (events, _) = run(agent.query("go", QueryOverrides::default())).await;
    assert!(!h.dir.path().join("a.txt").exists());
    assert_eq!(
        denials_of(&events, "root"),
        [
            "permission to run 'Write' was denied: a PreToolUse hook asks about it: writes need a look; no permission handler is there to approve it"
        ]
    );
}

#[tokio::test]
async fn pre_compact_runs_before_an_automatic_compaction() {
    let probe = custom("probe", true);
    let script = json!({"agents": {"root": [{"summary": "S", "turns": [
        {"text": "one", "tool_calls": [{"name": "probe", "input": {"n": 1}}],
         "usage": {"input_tokens": 1500, "output_tokens": 10}},
        {"text": "two", "tool_calls": [{"name": "probe", "input": {"n": 2}}],
         "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"text": "done"}
    ]}]}});
    let h = Harness::with_runtime(&script, |r| r.with_tool(Arc::clone(&probe), Arc::new(Echo)));
    let hook = Arc::new(Scripted::default());
    let mut config = config_with(&hook);
    config.capabilities = AgentCapabilities {
        custom_tools: Some(vec![probe]),
        ..AgentCapabilities::default()
    };
    config.compaction = CompactionConfig {
        threshold: 1000,
        keep_recent: 2,
        ..CompactionConfig::default()
    };
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Compacted { .. }))
    );
    let log = hook.log();
    let compact = log.iter().position(|l| l == "PreCompact root auto");
    let second_post = log
        .iter()
        .rposition(|l| l == "PostToolUse root probe")
        .unwrap();
    assert!(
        compact.is_some_and(|c| c > 1 && c <= second_post),
        "{log:?}"
    );
}

/// Gives the agents of a type with `hooks` in its definition a hook of
/// their own.
#[derive(Debug)]
struct OwnHooks(Arc<Scripted>);

impl TypeHooks for OwnHooks {
    fn hooks(&self, definition: &AgentDefinition) -> Hooks {
        assert_eq!(definition.hooks, Some(json!({"Stop": []})));
        Hooks::new().with(Arc::clone(&self.0) as _)
    }
}

#[tokio::test]
async fn the_hooks_of_an_agent_type_run_for_its_agents_only() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "x"}}, task_call("worker")]},
            {"text": "root done"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "y"}}]},
            {"text": "half"},
            {"text": "whole"}
        ]}]
    }}));
    let own = Arc::new(Scripted::stopping([HookReply::block("the other half")]));
    let mut worker = sub_agent("worker", AgentType::GeneralPurpose);
    worker.hooks = Some(json!({"Stop": []}));
    let mut config = AgentConfig::new("root").with_sub_agent(worker);
    config.type_hooks = Some(Arc::new(OwnHooks(Arc::clone(&own))));
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    assert_eq!(finished(&events)[0].output, "whole");
    let worker: AgentId = "root.0001-worker".parse().unwrap();
    assert!(
        own.log().iter().all(|l| l.contains(worker.as_str())),
        "only the worker's events: {:?}",
        own.log()
    );
    assert_eq!(
        own.log(),
        [
            "PreToolUse root.0001-worker Glob",
            "PostToolUse root.0001-worker Glob",
            r#"SubagentStop root.0001-worker "half" active=false"#,
            r#"SubagentStop root.0001-worker "whole" active=true"#,
        ]
    );
}

#[tokio::test]
async fn a_resumed_session_starts_again_as_resume() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"text": "first"}, {"text": "second"}
    ]}]}}));
    let hook = Arc::new(Scripted::default());
    let mut config = config_with(&hook);
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config.clone());
    agent.prompt("hello").await.unwrap();
    agent.end(SessionEndReason::Other).await;
    let session = agent.session_id().clone();
    drop(agent);
    let resumed =
        zr_engine::Agent::resume(std::sync::Arc::clone(&h.runtime), config, &session).unwrap();
    assert_eq!(resumed.prompt("again").await.unwrap().output, "second");
    let starts: Vec<String> = hook
        .log()
        .into_iter()
        .filter(|l| l.starts_with("Session"))
        .collect();
    assert_eq!(
        starts,
        [
            "SessionStart root startup",
            "SessionEnd root other",
            "SessionStart root resume"
        ]
    );
}
