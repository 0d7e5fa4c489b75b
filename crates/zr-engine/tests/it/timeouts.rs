//! Nothing waits forever: a hook or a permission handler that does not
//! answer within its timeout is a denial with the reason (HookReply, the
//! handler) or is logged and passed over (the other hooks); a person asked
//! through `PermissionHandler::prompt` has no timeout. Also a hook's
//! `Allow` and the Stop hook.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use zr_engine::{
    AgentConfig, Decision, Hook, HookAgent, HookReply, Hooks, PermissionConfig, PermissionHandler,
    PermissionRequest, QueryOverrides,
};
use zr_types::{AgentId, BoxFuture, ToolCall, ToolOutput};

use crate::support::{
    Harness, denials_of, root_with_worker, run, task_call, tool_results, write_call,
};

const SHORT: Duration = Duration::from_millis(200);

/// Sets its flag when dropped: shows that a timed-out hook's future was
/// dropped (how a hook that runs a process stops it).
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A hook whose every call waits forever.
#[derive(Debug, Default)]
struct Hangs {
    dropped: Arc<AtomicBool>,
    calls: AtomicUsize,
}

impl Hangs {
    fn forever<'a, T: Send + 'a>(&'a self) -> BoxFuture<'a, T> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let flag = DropFlag(Arc::clone(&self.dropped));
        Box::pin(async move {
            let _flag = flag;
            std::future::pending::<T>().await
        })
    }
}

impl Hook for Hangs {
    fn subagent_start<'a>(&'a self, _: &'a HookAgent, _: &'a AgentId) -> BoxFuture<'a, ()> {
        self.forever()
    }
    fn pre_tool_use<'a>(
        &'a self,
        _: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        if call.name == "Write" {
            self.forever()
        } else {
            Box::pin(async { HookReply::proceed() })
        }
    }
    fn post_tool_use<'a>(
        &'a self,
        _: &'a HookAgent,
        _: &'a ToolCall,
        _: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        self.forever()
    }
    fn subagent_stop<'a>(
        &'a self,
        _: &'a HookAgent,
        _: &'a zr_engine::TaskResult,
    ) -> BoxFuture<'a, ()> {
        self.forever()
    }
    fn stop<'a>(&'a self, _: &'a HookAgent, _: &'a str, _: bool) -> BoxFuture<'a, HookReply> {
        self.forever()
    }
}

#[tokio::test]
async fn a_hook_that_never_answers_denies_the_call_at_its_timeout_and_the_others_are_passed_over() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [write_call("a.txt", "a")]},
            {"tool_calls": [task_call("worker")]},
            {"text": "root done"}]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]},
            {"text": "worker done"}]}]
    }}));
    let hook = Arc::new(Hangs::default());
    let mut config = root_with_worker();
    config.hooks = Hooks::new().with_timeout(Arc::clone(&hook) as _, SHORT);
    let agent = h.agent(config);
    let start = Instant::now();
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    let reason =
        "tool 'Write' was not run: the PreToolUse hook did not answer within 0.2 s (its timeout)";
    assert_eq!(denials_of(&events, "root"), [reason]);
    assert_eq!(
        tool_results(&h.provider.of_type("root")[1]),
        [(true, reason.to_owned())],
        "the model is told why"
    );
    assert!(!h.dir.path().join("a.txt").exists());
    assert!(
        hook.dropped.load(Ordering::SeqCst),
        "the hook's future was dropped"
    );
    // PreToolUse(Write) hangs, PreToolUse(Task) is answered; then
    // SubagentStart, PostToolUse(Glob), the worker's stop (SubagentStop,
    // which may keep it working), SubagentStop as it ended,
    // PostToolUse(Task), the root's Stop hang.
    assert_eq!(hook.calls.load(Ordering::SeqCst), 7);
    let took = start.elapsed();
    assert!(
        took >= SHORT * 7 && took < Duration::from_secs(20),
        "each hanging hook waited its timeout, no more: {took:?}"
    );
}

/// A handler that takes `delay` for every answer, then answers `answer`;
/// its prompt (when `prompt` is set) takes `delay` too and answers that.
#[derive(Debug)]
struct Slow {
    delay: Duration,
    answer: Decision,
    prompt: Option<Decision>,
    prompted: Mutex<Vec<String>>,
}

impl PermissionHandler for Slow {
    fn can_use_tool<'a>(&'a self, _: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.answer.clone()
        })
    }

    fn prompt<'a>(&'a self, request: &'a PermissionRequest) -> Option<BoxFuture<'a, Decision>> {
        let answer = self.prompt.clone()?;
        Some(Box::pin(async move {
            self.prompted.lock().unwrap().push(request.tool.to_string());
            tokio::time::sleep(self.delay).await;
            answer
        }))
    }
}

fn slow(delay: Duration, answer: Decision, prompt: Option<Decision>) -> Arc<Slow> {
    Arc::new(Slow {
        delay,
        answer,
        prompt,
        prompted: Mutex::new(Vec::new()),
    })
}

fn two_writes() -> serde_json::Value {
    json!({"agents": {"root": [{"turns": [
        {"tool_calls": [write_call("a.txt", "a")]},
        {"tool_calls": [write_call("b.txt", "b")]},
        {"text": "done"}
    ]}]}})
}

#[tokio::test]
async fn a_permission_handler_slower_than_its_timeout_denies_with_the_reason() {
    let h = Harness::new(&two_writes());
    let handler = slow(Duration::from_secs(30), Decision::Allow, None);
    let mut config = AgentConfig::new("root");
    config.permissions = PermissionConfig {
        timeout: SHORT,
        ..PermissionConfig::with_handler(handler)
    };
    let agent = h.agent(config);
    let start = Instant::now();
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let reason = |tool: &str| {
        format!(
            "permission to run '{tool}' was denied: the permission handler did not answer within 0.2 s (its timeout)"
        )
    };
    assert_eq!(
        denials_of(&events, "root"),
        [reason("Write"), reason("Write")]
    );
    assert_eq!(
        tool_results(&h.provider.of_type("root")[1]),
        [(true, reason("Write"))]
    );
    assert!(!h.dir.path().join("a.txt").exists());
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(PermissionConfig::default().timeout, Duration::from_secs(60));
    assert_eq!(Hooks::DEFAULT_TIMEOUT, Duration::from_secs(60));
}

#[tokio::test]
async fn a_person_asked_through_the_prompt_has_no_timeout_and_decides() {
    let h = Harness::new(&two_writes());
    // The handler answers at once; the person takes longer than the
    // handler's timeout, and still decides: once, then for the session.
    let handler = slow(SHORT * 2, Decision::Ask, Some(Decision::Allow));
    let mut config = AgentConfig::new("root");
    config.permissions = PermissionConfig {
        timeout: SHORT * 3,
        ..PermissionConfig::with_handler(Arc::clone(&handler) as _)
    };
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert!(denials_of(&events, "root").is_empty());
    assert_eq!(*handler.prompted.lock().unwrap(), ["Write", "Write"]);
    assert!(h.dir.path().join("a.txt").exists() && h.dir.path().join("b.txt").exists());

    let h = Harness::new(&two_writes());
    let handler = slow(Duration::ZERO, Decision::Ask, Some(Decision::Ask));
    let agent = h.agent({
        let mut c = AgentConfig::new("root");
        c.permissions = PermissionConfig::with_handler(Arc::clone(&handler) as _);
        c
    });
    let (events, _) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(
        denials_of(&events, "root")[0],
        "permission to run 'Write' was denied: the host's prompt answered Ask, and nobody else can be asked"
    );
}

/// Allows Write without asking; records the Stop hook's answer.
#[derive(Debug, Default)]
struct AllowsWrites {
    stops: Mutex<Vec<(String, String)>>,
}

impl Hook for AllowsWrites {
    fn pre_tool_use<'a>(
        &'a self,
        _: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        let verdict = if call.input["file_path"] == "a.txt" {
            HookReply::allow()
        } else {
            HookReply::proceed()
        };
        Box::pin(async move { verdict })
    }

    fn stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        answer: &'a str,
        _: bool,
    ) -> BoxFuture<'a, HookReply> {
        self.stops
            .lock()
            .unwrap()
            .push((agent.agent.to_string(), answer.to_owned()));
        Box::pin(async { HookReply::proceed() })
    }
}

#[tokio::test]
async fn a_hooks_allow_skips_the_handler_and_the_stop_hook_gets_the_answer() {
    let h = Harness::new(&two_writes());
    let handler = slow(Duration::ZERO, Decision::Deny("no".to_owned()), None);
    let hook = Arc::new(AllowsWrites::default());
    let mut config = AgentConfig::new("root");
    config.permissions = PermissionConfig::with_handler(handler);
    config.hooks = Hooks::new().with(Arc::clone(&hook) as _);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert!(h.dir.path().join("a.txt").exists(), "allowed by the hook");
    assert!(!h.dir.path().join("b.txt").exists(), "left to the handler");
    assert_eq!(
        denials_of(&events, "root"),
        ["permission to run 'Write' was denied: no"]
    );
    assert_eq!(
        *hook.stops.lock().unwrap(),
        [("root".to_owned(), "done".to_owned())]
    );
}
