//! What the root's and a subagent's first model requests cost, whatever
//! is installed: the bytes of their Anthropic bodies with 0 to 1,000
//! generated agent types and 0 to 1,000 generated skills besides zr's
//! built-in types stay within twice the bodies with the built-ins only
//! (issue 39). The subagent is a `general-purpose` one the root starts
//! with `Task`, its type naming every installed skill (the largest
//! listing a subagent's `Skill` tool carries; at depth 1 it has no `Task`
//! and so no type listing). The root has zr's
//! default system prompt and the engine's builtin tools. The body is the one the provider sends to a loopback
//! server (`replay.rs`); nothing leaves the machine. `--nocapture` prints
//! the table BENCHMARKS.md holds.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zr_caps::AgentDefinition;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, ModelProvider, RuntimeEnvironment,
};
use zr_tools::BuiltinTools;
use zr_types::{Annotations, SkillDefinition, ToolDefinition, ToolOrigin};

use crate::support::Echo;
use zr_test_support::replay::{Replay, Reply, fast_retry};

/// A stand-in for zr-skills' `Skill` tool (which the engine may not
/// depend on): its name, description and schema, copied.
fn skill_tool() -> Arc<ToolDefinition> {
    let spec = zr_types::builtin_spec("Skill").unwrap();
    Arc::new(
        ToolDefinition::new(
            "Skill".parse().unwrap(),
            "Load a skill: its instructions, and the folder that holds its other files. Call it when the task matches one of your skills' descriptions.",
            ToolOrigin::Builtin,
        )
        .with_schema(json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name, e.g. \"pdf-tools\"."},
                "args": {"type": "string", "description": "Optional arguments for the skill."}
            },
            "required": ["skill"],
            "additionalProperties": false
        }))
        .with_annotations(Annotations {
            read_only: spec.read_only,
            ..Annotations::default()
        })
        .with_defer(spec.deferred.then_some(true)),
    )
}

/// Stand-ins for zr's built-in agent types (zr-skills' `builtin.rs`,
/// which the engine may not depend on): their names and descriptions.
const BUILTIN: [(&str, &str); 5] = [
    (
        "general-purpose",
        "General-purpose agent for researching complex questions, searching code and carrying out multi-step tasks. Use it when a task takes several steps, or when a search may not find the right match in the first few tries.",
    ),
    (
        "explore",
        "Fast read-only agent for exploring a codebase: finds files by pattern, searches code for keywords and answers questions about how the code works. Say how thorough it should be: quick, medium or very thorough.",
    ),
    (
        "plan",
        "Read-only software architect: explores the code and returns a step-by-step implementation plan with the files to change, the tests to write and the risks.",
    ),
    (
        "verification",
        "Adversarial checker: give it finished work and what it was meant to do; it tries to break it (tests, edge cases, failure paths) and reports PASS or FAIL with reproducible evidence. It never fixes anything.",
    ),
    (
        "guide",
        "Answers questions about zr itself: subagent types, tools and tool pools, skills, MCP servers, permission modes and configuration files. Use it when the user asks how to do something with zr.",
    ),
];

/// Agent type `i`, its description about 200 characters as public Claude
/// Code agent files have them.
fn agent_type(i: usize) -> AgentDefinition {
    AgentDefinition::new(
        format!("generated-agent-{i:04}").parse().unwrap(),
        format!(
            "Use this agent when the user asks for work of kind {i}: it reviews the relevant files, plans the change, makes it with care and reports what it did. Examples: 'fix kind {i}', 'explain kind {i}'."
        ),
        format!("You are generated agent {i}. Work carefully."),
    )
}

/// Skill `i`, its description about 150 characters.
fn skill(i: usize) -> Arc<SkillDefinition> {
    Arc::new(SkillDefinition::inline(
        format!("generated-skill-{i:04}").parse().unwrap(),
        format!(
            "Use when the task involves format {i}: reading, converting and validating such files, with the scripts in this skill's folder."
        ),
        "The body (never listed).",
    ))
}

/// A root over `server`, in `dir`, with zr's built-in types,
/// `types` generated agent types and `skills` generated skills.
fn root_over(server: &Replay, dir: &Path, types: usize, skills: usize) -> Agent {
    let mut config = AnthropicConfig::new("test-key")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    config.http.idle_timeout = Duration::from_secs(30);
    let provider: Arc<dyn ModelProvider> = Arc::new(AnthropicProvider::new(config).unwrap());
    let settings = zr_caps::RuntimeSettings {
        model: "claude-test".to_owned(),
        cwd: dir.to_path_buf(),
        env: Default::default(),
    };
    let runtime =
        RuntimeEnvironment::new(provider, settings, BuiltinTools::new(dir.join("cron.json")))
            .with_skill_tool(skill_tool(), Arc::new(Echo));
    let mut config = AgentConfig::new(
        "You are zr's root agent, working in the user's project folder. Delegate self-contained pieces of work to subagents with Task (one) or MultiTask (several at once): each gets its own context and returns only its conclusion. Answer the user concisely.",
    );
    for (name, description) in BUILTIN {
        let mut definition =
            AgentDefinition::new(name.parse().unwrap(), description, "A built-in.");
        if name == "general-purpose" && skills > 0 {
            // The subagent measured names every installed skill: the
            // largest listing a subagent's `Skill` tool can carry.
            definition.capabilities.skills =
                Some((0..skills).map(|i| skill(i).name.clone()).collect());
        }
        config = config.with_sub_agent(definition);
    }
    for i in 0..types {
        config = config.with_sub_agent(agent_type(i));
    }
    config.skills = (0..skills).map(skill).collect();
    Agent::new(Arc::new(runtime), config)
}

/// The bytes of the root's first request body and of its subagent's
/// (a `general-purpose` one, started by the root's `Task` call) with
/// `types` generated agent types and `skills` generated skills.
async fn first_bodies(types: usize, skills: usize) -> (usize, usize) {
    let task = json!({"description": "look", "prompt": "Look around.", "subagent_type": "general-purpose"});
    let server = Replay::start(vec![
        Reply::anthropic(None, &[("toolu_task", "Task", task)]),
        Reply::anthropic(Some("looked"), &[]),
        Reply::anthropic(Some("ok"), &[]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = root_over(&server, dir.path(), types, skills);
    agent.prompt("Hello.").await.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "root, subagent, root");
    assert!(
        requests[1].json()["system"][0]["text"] == "A built-in.",
        "the second request is the subagent's"
    );
    (requests[0].body.len(), requests[1].body.len())
}

/// The table of `bodies` (types, skills, bytes) against `bare`, and the
/// largest cell.
fn table(
    what: &str,
    bare: usize,
    bodies: &[(usize, usize, usize)],
) -> (String, (usize, usize, usize)) {
    let mut table = format!(
        "{what} builtin-only: {bare} bytes (~{} tokens, bytes / 4)\n| types \\ skills | 0 | 200 | 1,000 |\n|---|---|---|---|\n",
        bare.div_ceil(4)
    );
    let mut worst = (0, 0, 0);
    for row in bodies.chunks(3) {
        table.push_str(&format!("| {} |", row[0].0));
        for &(types, skills, bytes) in row {
            table.push_str(&format!(
                " {bytes} B, ~{} tokens ({:.2}x) |",
                bytes.div_ceil(4),
                bytes as f64 / bare as f64
            ));
            if bytes > worst.0 {
                worst = (bytes, types, skills);
            }
        }
        table.push('\n');
    }
    (table, worst)
}

#[tokio::test]
async fn the_roots_and_a_subagents_first_requests_stay_within_twice_the_builtin_only_ones() {
    let mut roots = Vec::new();
    let mut subagents = Vec::new();
    for types in [0, 50, 350, 1_000] {
        for skills in [0, 200, 1_000] {
            let (root, subagent) = first_bodies(types, skills).await;
            roots.push((types, skills, root));
            subagents.push((types, skills, subagent));
        }
    }
    for (what, line, bodies) in [
        ("root's first request,", "request-size worst", &roots),
        (
            "subagent's first request,",
            "request-size subagent worst",
            &subagents,
        ),
    ] {
        let bare = bodies[0].2;
        let (table, worst) = table(what, bare, bodies);
        eprintln!("\n{table}");
        // The figure `cargo xtask bench` reports (one line it reads).
        eprintln!(
            "{line}: {} bytes at {} types and {} skills, builtin-only {bare} bytes",
            worst.0, worst.1, worst.2
        );
        assert!(
            worst.0 <= 2 * bare,
            "{what} {} types and {} skills: {} bytes, over twice {bare}\n{table}",
            worst.1,
            worst.2,
            worst.0
        );
    }
}

/// Where `needle` first occurs in `body`.
fn find(body: &[u8], needle: &[u8]) -> usize {
    body.windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{} in the body", String::from_utf8_lossy(needle)))
}

#[tokio::test]
async fn each_agents_fixed_cost_is_the_system_and_tools_its_requests_send() {
    let server = Replay::start(vec![Reply::anthropic(Some("ok"), &[])]).await;
    let dir = tempfile::tempdir().unwrap();
    let agent = root_over(&server, dir.path(), 50, 200);
    let costs = agent.preview_request_costs(None).unwrap();
    agent.prompt("Hello.").await.unwrap();
    let body = &server.requests()[0].body;
    // The bytes the system prompt and the tools take in the body the root
    // sent: from `"system"` to `"messages"`.
    let sent = find(body, br#""messages":"#) - find(body, br#""system":"#);
    let root = &costs[0];
    assert_eq!(
        (root.agent.as_str(), root.bytes, root.measured),
        ("root", sent, true)
    );
    assert_eq!(root.estimated_tokens(), sent.div_ceil(4));
    // Built-ins, 50 generated types, then a fork, which sends its
    // parent's prompt and tools.
    assert_eq!(costs.len(), 1 + 5 + 50 + 1);
    let fork = costs.last().unwrap();
    assert_eq!((fork.agent.as_str(), fork.bytes), ("fork", root.bytes));
    // A typed subagent at the last level has no Task (and so no type
    // listing): it costs less.
    let typed = costs
        .iter()
        .find(|c| c.agent == "generated-agent-0000")
        .unwrap();
    assert!(
        typed.measured && typed.bytes < root.bytes,
        "{typed:?} against {root:?}"
    );
}

#[tokio::test]
async fn without_a_wire_the_fixed_cost_is_estimated_and_says_so() {
    let h = crate::support::Harness::new(&json!({"agents": {}}));
    let agent = h.agent(AgentConfig::new("You are the root."));
    let costs = agent.preview_request_costs(None).unwrap();
    assert_eq!(costs[0].agent, "root");
    assert!(!costs[0].measured, "the scripted provider sends no body");
    assert!(costs[0].bytes > "You are the root.".len());
}
