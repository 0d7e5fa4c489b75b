//! Structured answers: an output schema from the subagent type or the
//! Task call, the answer checked, repaired once, then `failed`; the
//! values merged by the root; a revived task answers in its call's schema
//! and a recorded one keeps its value. With the scripted provider, and on
//! each provider's wire against a loopback server (request bodies
//! asserted).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_caps::AgentType;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, EngineError, ModelProvider,
    OpenAiConfig, OpenAiProvider, QueryOverrides, ResponsesProvider, TaskStatus,
};
use zr_types::{AgentId, ContentBlock, ToolResultContent};

use crate::resume::{records, run_and_kill_at, scripted};
use crate::support::{Harness, finished, run, runtime_in, sub_agent};
use zr_test_support::replay::{Recorded, Replay, Reply, fast_retry};
use zr_test_support::sse::ResponsesAnswer;

/// `{"part": integer, "count": integer}`, both required, nothing else.
fn count_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"part": {"type": "integer"}, "count": {"type": "integer"}},
        "required": ["part", "count"],
        "additionalProperties": false
    })
}

/// `{"names": [string]}`: the schema a Task call passes instead of the
/// counter's.
fn names_schema() -> Value {
    json!({"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
           "required": ["names"], "additionalProperties": false})
}

/// A `counter` type whose answers must match [`count_schema`].
fn counter() -> zr_caps::AgentDefinition {
    let mut counter = sub_agent("counter", AgentType::GeneralPurpose);
    counter.output_schema = Some(count_schema());
    counter
}

/// The JSON tool result of the root's `n`th request (0-based) whose
/// results it carries.
fn delegated(h: &Harness, n: usize) -> Value {
    result_value(&h.provider.of_type("root")[n])
}

#[tokio::test]
async fn ten_parallel_answers_come_back_as_values_the_root_can_merge() {
    // Part 9 passes its own schema in the call: a list of names.
    let names = names_schema();
    let tasks: Vec<Value> = (0..10)
        .map(|i| {
            let mut task = json!({"description": format!("count part {i}"),
                                  "prompt": format!("Count the notes of part {i}."),
                                  "subagent_type": "counter"});
            if i == 9 {
                task["output_schema"] = names.clone();
            }
            task
        })
        .collect();
    let counters: Vec<Value> = (0..10)
        .map(|i| {
            let text = if i == 9 {
                json!({"names": ["a.md", "b.md"]}).to_string()
            } else {
                // Fenced, as models often write it.
                format!("```json\n{}\n```", json!({"part": i, "count": i * 2}))
            };
            json!({"match": format!("part {i}."), "turns": [{"text": text}]})
        })
        .collect();
    let script = json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]},
            {"text": "Counted."}
        ]}],
        "counter": counters
    }});
    let h = Harness::new(&script);
    let agent = h.agent(AgentConfig::new("You are the root.").with_sub_agent(counter()));
    let (events, result) = run(agent.query("Count every part.", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "Counted.");
    assert!(
        finished(&events)
            .iter()
            .all(|r| r.status == TaskStatus::Completed)
    );

    let results = delegated(&h, 1)["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 10);
    assert!(
        results.iter().all(|r| r.get("output").is_none()),
        "the model gets the value, not its text too"
    );
    let total: i64 = results[..9]
        .iter()
        .map(|r| r["value"]["count"].as_i64().unwrap())
        .sum();
    let parts: Vec<i64> = results[..9]
        .iter()
        .map(|r| r["value"]["part"].as_i64().unwrap())
        .collect();
    assert_eq!(
        (total, parts),
        (72, (0..9).collect::<Vec<_>>()),
        "in input order"
    );
    assert_eq!(results[9]["value"], json!({"names": ["a.md", "b.md"]}));
    // Each counter's requests carried its schema (the call's for part 9).
    for request in h.provider.of_type("counter") {
        let prompt = crate::support::text_of_last_user(&request);
        let output = request
            .output
            .expect("every request of a counter has the format");
        let expected = if prompt.contains("part 9.") {
            names.clone()
        } else {
            count_schema()
        };
        assert_eq!(output.schema, expected, "{prompt}");
    }
    assert!(
        h.provider
            .of_type("root")
            .iter()
            .all(|r| r.output.is_none()),
        "the root has no schema"
    );
}

#[tokio::test]
async fn a_wrong_answer_gets_one_repair_turn_then_the_task_fails_with_the_error() {
    let script = json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
                {"description": "fixed", "prompt": "part 0.", "subagent_type": "counter"},
                {"description": "broken", "prompt": "part 1.", "subagent_type": "counter"}
            ]}}]},
            {"text": "One failed."}
        ]}],
        "counter": [
            {"match": "part 0.", "turns": [{"text": "{\"part\": 0, \"count\": \"two\"}"},
                                            {"text": "{\"part\": 0, \"count\": 2}"}]},
            {"match": "part 1.", "turns": [{"text": "There are two notes."},
                                            {"text": "{\"part\": 1}"}]}
        ]
    }});
    let h = Harness::new(&script);
    let agent = h.agent(AgentConfig::new("You are the root.").with_sub_agent(counter()));
    let (_, result) = run(agent.query("Count.", QueryOverrides::default())).await;
    result.unwrap();
    let results = delegated(&h, 1)["results"].as_array().unwrap().clone();
    assert_eq!(
        (
            results[0]["status"].as_str(),
            &results[0]["value"],
            &results[0]["turns"]
        ),
        (
            Some("completed"),
            &json!({"part": 0, "count": 2}),
            &json!(2)
        ),
        "repaired on the second turn"
    );
    assert_eq!(results[1]["status"], "failed");
    let error = results[1]["error"].as_str().unwrap();
    assert!(
        error.contains("does not match the output schema")
            && error.contains("\"count\" is a required property"),
        "{error}"
    );
    assert_eq!(results[1].get("value"), None);
    // The repair turn told the model what was wrong.
    let counters = h.provider.of_type("counter");
    let repair = counters
        .iter()
        .find(|r| {
            r.messages[0].content
                == vec![ContentBlock::Text {
                    text: "part 0.".into(),
                }]
                && r.origin.turn == 2
        })
        .expect("the repair request of part 0");
    let told = crate::support::text_of_last_user(repair);
    assert!(
        told.contains("Your answer was refused") && told.contains("at /count"),
        "{told}"
    );
    assert_eq!(repair.tool_choice, zr_engine::ToolChoice::Answer);
}

#[tokio::test]
async fn a_schema_that_is_not_one_is_refused_before_anything_starts() {
    let script = json!({"agents": {"root": [{"turns": [
        {"tool_calls": [{"name": "Task", "input": {"description": "d", "prompt": "p",
                                                     "output_schema": {"type": "objekt"}}}]},
        {"text": "ok"}
    ]}]}});
    let h = Harness::new(&script);
    let agent = h.agent(AgentConfig::new("You are the root."));
    let (events, result) = run(agent.query("Go.", QueryOverrides::default())).await;
    result.unwrap();
    assert!(finished(&events).is_empty(), "nothing started");
    let results = crate::support::tool_results(&h.provider.of_type("root")[1]);
    assert!(results[0].0, "an error result");
    assert!(
        results[0]
            .1
            .starts_with("Task.output_schema: not a valid JSON Schema"),
        "{}",
        results[0].1
    );
}

#[tokio::test]
async fn the_roots_answer_is_the_query_results_value() {
    let script =
        json!({"agents": {"root": [{"turns": [{"text": "{\"part\": 3, \"count\": 1}"}]}]}});
    let h = Harness::new(&script);
    let mut config = AgentConfig::new("You are the root.");
    config.output_schema = Some(count_schema());
    let result = h.agent(config).prompt("Count part 3.").await.unwrap();
    assert_eq!(result.value, Some(json!({"part": 3, "count": 1})));

    let script = json!({"agents": {"root": [{"turns": [{"text": "no"}, {"text": "still no"}]}]}});
    let h = Harness::new(&script);
    let overrides = QueryOverrides {
        output_schema: Some(count_schema()),
        ..QueryOverrides::default()
    };
    let (_, result) = run(h.agent(AgentConfig::new("r")).query("Count.", overrides)).await;
    assert!(
        matches!(&result, Err(EngineError::InvalidAnswer { message, .. }) if message.contains("not one JSON value")),
        "{result:?}"
    );
}

// ---- After a resume ------------------------------------------------------

/// The root of the resume tests: the `counter` type, transcripts under
/// `dir`.
pub(crate) fn resumable(dir: &Path) -> AgentConfig {
    let mut config = AgentConfig::new("You are the root.").with_sub_agent(counter());
    config.sessions_dir = Some(dir.join("sessions"));
    config
}

/// A Task call to `counter` that passes [`names_schema`].
fn names_call() -> Value {
    json!({"name": "Task", "input": {"description": "list", "prompt": "List the notes.",
                                     "subagent_type": "counter", "output_schema": names_schema()}})
}

/// The killed child's script (`resume::child_runs_until_killed`, mode
/// `structured`): the root's Task call passes its own schema; the
/// counter's model is still thinking when the process is killed.
pub(crate) fn killed_in_a_structured_task() -> Value {
    json!({"agents": {
        "root": [{"turns": [{"tool_calls": [names_call()]}, {"text": "too late"}]}],
        "counter": [{"turns": [{"delay_ms": 60_000, "text": "too late"}]}]
    }})
}

/// The value in the first JSON tool result of `request`.
fn result_value(request: &zr_engine::ModelRequest) -> Value {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => content.iter().find_map(|c| match c {
                ToolResultContent::Json { value } => Some(value.clone()),
                _ => None,
            }),
            _ => None,
        })
        .expect("a JSON tool result")
}

#[tokio::test]
async fn a_task_revived_after_a_kill_answers_in_its_calls_schema_not_its_types() {
    let dir = tempfile::tempdir().unwrap();
    let id: AgentId = "root.0001-counter".parse().unwrap();
    // Its header and prompt are on disk; its model has not answered.
    let (session, _) = run_and_kill_at(dir.path(), "structured", id.as_str(), 2);
    let path = dir.path().join(format!("sessions/{session}/{id}.jsonl"));
    assert_eq!(
        records(&path)[0]["output_schema"],
        names_schema(),
        "the header keeps the call's schema"
    );
    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"text": "listed"}]}],
            "counter": [{"turns": [{"text": "{\"names\": [\"a.md\", \"b.md\"]}"}]}]
        }}),
    );
    let agent = Agent::resume(runtime, resumable(dir.path()), &session).unwrap();
    let (events, result) = run(agent.continue_interrupted(QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "listed");
    let names = json!({"names": ["a.md", "b.md"]});
    let results = finished(&events);
    assert_eq!(
        (
            results[0].agent_id.as_ref(),
            results[0].status,
            results[0].value.as_ref()
        ),
        (Some(&id), TaskStatus::Completed, Some(&names))
    );
    // Asked in the call's schema, once: no repair turn for the type's.
    let asked = provider.of_type("counter");
    assert_eq!(asked.len(), 1, "no repair turn");
    assert_eq!(asked[0].output.as_ref().unwrap().schema, names_schema());
    let root = provider.of_type("root");
    assert_eq!(result_value(&root[0])["value"], names);
}

#[tokio::test]
async fn a_finished_structured_task_taken_from_its_transcript_keeps_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let (_, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [names_call()]}, {"text": "listed"}]}],
            "counter": [{"turns": [{"text": "{\"names\": [\"c.md\"]}"}]}]
        }}),
    );
    let agent = Agent::new(runtime, resumable(dir.path()));
    assert_eq!(agent.prompt("List.").await.unwrap().output, "listed");
    let session = agent.session_id().clone();
    // As if killed after the counter finished and before the root wrote
    // its result: the root's transcript stops after the call.
    let root = dir.path().join(format!("sessions/{session}/root.jsonl"));
    let text = std::fs::read_to_string(&root).unwrap();
    let kept: String = text
        .split_inclusive('\n')
        .take_while(|line| !line.contains("\"tool_result\""))
        .collect();
    assert!(kept.contains("\"tool_use\""), "{kept}");
    std::fs::write(&root, kept).unwrap();

    let (provider, runtime) = scripted(
        dir.path(),
        &json!({"agents": {
            "root": [{"turns": [{"text": "listed again"}]}],
            "counter": [{"turns": [{"text": "never asked"}]}]
        }}),
    );
    let agent = Agent::resume(runtime, resumable(dir.path()), &session).unwrap();
    let (_, result) = run(agent.continue_interrupted(QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "listed again");
    assert!(provider.of_type("counter").is_empty(), "not run again");
    let result = result_value(&provider.of_type("root")[0]);
    assert_eq!(
        (&result["status"], &result["value"]),
        (&json!("completed"), &json!({"names": ["c.md"]}))
    );
    // And the subagent resumed on its own returns it too.
    let id: AgentId = "root.0001-counter".parse().unwrap();
    let (_, result) = run(agent.resume_subagent(&id, None)).await;
    assert_eq!(result.unwrap().value, Some(json!({"names": ["c.md"]})));
}

// ---- On the wire ---------------------------------------------------------

/// Runs a root that delegates one task to `counter` (effort high) over
/// `provider`, whose server replies as scripted and ends with the root's
/// `Done.`. Returns the counter's result as the root's model got it and
/// every request the server saw.
async fn delegate_over(
    provider: Arc<dyn ModelProvider>,
    server: &Replay,
) -> (Value, Vec<Recorded>) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime_in(dir.path(), "test-model", provider);
    let mut counter = counter();
    counter.effort = Some(zr_caps::Effort::High);
    let agent = Agent::new(
        runtime,
        AgentConfig::new("You are the root.").with_sub_agent(counter),
    );
    let result = tokio::time::timeout(Duration::from_secs(60), agent.prompt("Count part 0."))
        .await
        .expect("the query ends within a minute")
        .unwrap();
    assert_eq!(result.output, "Done.");
    let requests = server.requests();
    // The root's last request carries the result.
    let result = finished_result(&requests.last().unwrap().json());
    (result, requests)
}

/// The task result inside the root's last request, in any of the three
/// wire formats (a tool message, a function_call_output, a tool_result).
fn finished_result(body: &Value) -> Value {
    fn find(value: &Value) -> Option<String> {
        match value {
            Value::String(s) if s.contains("\"agent_type\":\"counter\"") => Some(s.clone()),
            Value::Object(map) => map.values().find_map(find),
            Value::Array(items) => items.iter().find_map(find),
            _ => None,
        }
    }
    let text = find(body).expect("a task result in the body");
    let text = text.strip_prefix("Error: ").unwrap_or(&text);
    serde_json::from_str(text).unwrap()
}

const TASK: &str = r#"{"description":"count","prompt":"Count part 0.","subagent_type":"counter"}"#;

const VALID: &str = r#"{"part":0,"count":2}"#;
const INVALID: &str = r#"{"part":0,"count":"two"}"#;

/// The OpenAI config of the wire tests: one attempt, a patient stream.
pub(crate) fn openai_config(server: &Replay) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(format!("{}/v1", server.url())).with_retry(fast_retry(1));
    config.http.idle_timeout = Duration::from_secs(30);
    config
}

/// The counter's requests: those whose system prompt is the counter's.
fn counter_requests(requests: &[Recorded]) -> Vec<Value> {
    requests
        .iter()
        .map(Recorded::json)
        .filter(|body| body.to_string().contains("You are the counter agent."))
        .collect()
}

/// Checks an OpenAI-style outcome: `answers` were the counter's replies.
fn check_openai(result: &Value, counters: &[Value], format_at: &str, answers: usize, valid: bool) {
    assert_eq!(counters.len(), answers);
    for body in counters {
        let format = body
            .pointer(format_at)
            .unwrap_or_else(|| panic!("no format at {format_at}: {body}"));
        assert_eq!(format["schema"], count_schema());
        assert_eq!(
            (format["name"].as_str(), format["strict"].as_bool()),
            (Some("StructuredOutput"), Some(true))
        );
    }
    if answers == 2 {
        assert_eq!(
            counters[1]["tool_choice"], "none",
            "the repair turn answers without tools"
        );
        assert!(counters[1].to_string().contains("Your answer was refused"));
    }
    if valid {
        assert_eq!(
            (result["status"].as_str(), &result["value"]),
            (Some("completed"), &json!({"part": 0, "count": 2}))
        );
    } else {
        assert_eq!(result["status"], "failed");
        assert!(
            result["error"].as_str().unwrap().contains("at /count"),
            "{result}"
        );
    }
}

#[tokio::test]
async fn openai_chat_answers_in_a_json_schema_response_format() {
    for (replies, valid) in [
        (vec![VALID], true),
        (vec![INVALID, VALID], true),
        (vec![INVALID, INVALID], false),
    ] {
        let mut script = vec![Reply::chat(None, Some(("call_1", "Task", TASK)))];
        script.extend(replies.iter().map(|text| Reply::chat(Some(text), None)));
        script.push(Reply::chat(Some("Done."), None));
        let server = Replay::start(script).await;
        let provider = Arc::new(OpenAiProvider::new(openai_config(&server)).unwrap());
        let (result, requests) = delegate_over(provider, &server).await;
        let counters = counter_requests(&requests);
        check_openai(
            &result,
            &counters,
            "/response_format/json_schema",
            replies.len(),
            valid,
        );
        assert_eq!(counters[0]["response_format"]["type"], "json_schema");
        assert_eq!(counters[0]["reasoning_effort"], "high");
        assert_eq!(
            requests[0].json().get("response_format"),
            None,
            "the root has no schema"
        );
    }
}

#[tokio::test]
async fn the_responses_api_answers_in_a_json_schema_text_format() {
    for (replies, valid) in [
        (vec![VALID], true),
        (vec![INVALID, VALID], true),
        (vec![INVALID, INVALID], false),
    ] {
        let mut script = vec![Reply::responses(ResponsesAnswer::of(
            None,
            Some(("call_1", "Task", TASK)),
        ))];
        script.extend(
            replies
                .iter()
                .map(|text| Reply::responses(ResponsesAnswer::of(Some(text), None))),
        );
        script.push(Reply::responses(ResponsesAnswer::of(Some("Done."), None)));
        let server = Replay::start(script).await;
        let provider = Arc::new(ResponsesProvider::new(openai_config(&server)).unwrap());
        let (result, requests) = delegate_over(provider, &server).await;
        assert!(requests.iter().all(|r| r.path == "/v1/responses"));
        let counters = counter_requests(&requests);
        check_openai(&result, &counters, "/text/format", replies.len(), valid);
        assert_eq!(counters[0]["text"]["format"]["type"], "json_schema");
        assert_eq!(counters[0]["reasoning"], json!({"effort": "high"}));
        assert_eq!(
            requests[0].json().get("text"),
            None,
            "the root has no schema"
        );
    }
}

#[tokio::test]
async fn anthropic_answers_through_a_forced_final_tool() {
    // The counter's working turn ends in prose; then the forced answers.
    for (forced, valid) in [
        (vec![VALID], true),
        (vec![INVALID, VALID], true),
        (vec![INVALID, INVALID], false),
    ] {
        let mut script = vec![
            Reply::anthropic(
                None,
                &[("toolu_task", "Task", serde_json::from_str(TASK).unwrap())],
            ),
            Reply::anthropic(Some("There are two notes."), &[]),
        ];
        script.extend(forced.iter().map(|input| {
            Reply::anthropic(
                None,
                &[(
                    "toolu_answer",
                    "StructuredOutput",
                    serde_json::from_str(input).unwrap(),
                )],
            )
        }));
        script.push(Reply::anthropic(Some("Done."), &[]));
        let server = Replay::start(script).await;
        let mut config = AnthropicConfig::new("test-key")
            .with_base_url(server.url())
            .with_retry(fast_retry(1));
        config.http.idle_timeout = Duration::from_secs(30);
        let provider = Arc::new(AnthropicProvider::new(config).unwrap());
        let (result, requests) = delegate_over(provider, &server).await;
        let counters = counter_requests(&requests);
        assert_eq!(counters.len(), 1 + forced.len());
        // The working turn: thinking for effort high, no answer tool.
        let working = &counters[0];
        assert_eq!(working["thinking"]["type"], "enabled");
        assert_eq!(working.get("tool_choice"), None);
        assert!(!working.to_string().contains("StructuredOutput"));
        for (n, body) in counters[1..].iter().enumerate() {
            assert_eq!(
                body["tool_choice"],
                json!({"type": "tool", "name": "StructuredOutput"})
            );
            let tools = body["tools"].as_array().unwrap();
            let last = tools.last().unwrap();
            assert_eq!(
                (last["name"].as_str(), &last["input_schema"]),
                (Some("StructuredOutput"), &count_schema())
            );
            assert_eq!(body.get("thinking"), None, "no thinking with a forced tool");
            let asked = body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .to_string();
            let wanted = if n == 0 {
                "Give your final answer now"
            } else {
                "Your answer was refused"
            };
            assert!(asked.contains(wanted), "{asked}");
            // The answer before it went back as text, not as a tool call.
            assert!(!body["messages"].to_string().contains("toolu_answer"));
        }
        if valid {
            assert_eq!(
                (result["status"].as_str(), &result["value"]),
                (Some("completed"), &json!({"part": 0, "count": 2}))
            );
        } else {
            assert_eq!(result["status"], "failed");
            assert!(
                result["error"].as_str().unwrap().contains("at /count"),
                "{result}"
            );
        }
    }
}
