//! Every crate wired together as the `zr` command does it: tools of a real
//! MCP server (zr-mcp), skills and agent types from real files
//! (zr-skills) and the builtins (zr-tools) reach the engine only as
//! definitions plus handlers, and the engine runs them.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AgentObserver, EventKind, QueryOverrides, RuntimeEnvironment,
    ScriptedProvider,
};
use zr_mcp::{HubOptions, McpConfig, McpHub, ServerConfig, StdioConfig, TransportConfig};
use zr_resolve::ResolvedPool;
use zr_skills::{AgentRegistry, Roots, SkillRegistry, SkillTool};
use zr_tools::BuiltinTools;
use zr_types::{AgentId, SessionId, ToolDefinition};

use crate::support::everything_js;

/// Grants each agent the skills of its resolved pool, as the CLI does.
#[derive(Debug)]
struct Grants(Arc<SkillTool>);

impl AgentObserver for Grants {
    fn agent_started(&self, _: &SessionId, agent: &AgentId, pool: &ResolvedPool) {
        self.0.grant(agent.clone(), pool.skills().iter().cloned());
    }

    fn agent_finished(&self, _: &SessionId, agent: &AgentId) {
        self.0.revoke(agent);
    }
}

fn write(path: PathBuf, text: &str) {
    let parent = path.parent().expect("the path has a folder");
    std::fs::create_dir_all(parent).expect("folder created");
    std::fs::write(&path, text).expect("file written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tool_a_skill_and_a_file_agent_type_run_through_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    write(
        project.join(".zr/skills/greeting/SKILL.md"),
        "---\nname: greeting\ndescription: How to greet people.\n---\nSay hello with both hands.\n",
    );
    write(
        project.join(".zr/agents/greeter.md"),
        "---\nname: greeter\ndescription: Greets.\nskills: [greeting]\nmcpServers: [everything]\n---\nYou greet.\n",
    );

    // zr-skills: the registries.
    let skills = SkillRegistry::new(Roots::skills(project, None));
    let skills_view = skills.view();
    assert!(
        skills_view.diagnostics().is_empty(),
        "{:?}",
        skills_view.diagnostics()
    );
    let agents = AgentRegistry::new(Roots::agents(project, None)).view();
    let greeter = agents.get("greeter").expect("the file's agent type");

    // zr-mcp: a real server over stdio.
    let server = ServerConfig::new(
        "everything".parse().unwrap(),
        TransportConfig::Stdio(
            StdioConfig::new("node")
                .with_args([everything_js().display().to_string(), "stdio".to_owned()]),
        ),
    );
    let hub = McpHub::new(McpConfig::from_servers([server]), HubOptions::new(project));
    let lease = hub.acquire("everything").await.unwrap();
    let mcp_tools = lease.tools().await.unwrap();
    assert!(
        mcp_tools
            .iter()
            .any(|t| t.definition.name.as_str() == "mcp__everything__echo"),
        "server-everything lists echo"
    );

    // The runtime: builtins, the Skill tool, the MCP handlers.
    let script = json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__everything__echo"}}]},
            {"tool_calls": [{"name": "mcp__everything__echo", "input": {"message": "hi"}}]},
            {"tool_calls": [{"name": "Task", "input": {"description": "greet", "prompt": "greet the user", "subagent_type": "greeter"}}]},
            {"text": "done"}
        ]}],
        "greeter": [{"turns": [
            {"tool_calls": [{"name": "Skill", "input": {"skill": "greeting"}}]},
            {"text": "hello with both hands"}
        ]}]
    }});
    let provider = Arc::new(ScriptedProvider::from_json(&script.to_string()).unwrap());
    let skill_tool = Arc::new(SkillTool::with_roots(skills.roots().clone()));
    let settings = RuntimeSettings {
        model: "scripted".to_owned(),
        cwd: project.to_path_buf(),
        env: Default::default(),
    };
    let mut runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(project.join(".zr/cron.json")),
    )
    .with_skill_tool(Arc::new(SkillTool::definition()), skill_tool.clone())
    .with_observer(Arc::new(Grants(skill_tool.clone())));
    for tool in &mcp_tools {
        runtime = runtime.with_tool(Arc::clone(&tool.definition), tool.handler.clone());
    }

    // The agent types: the file's definition, with its MCP servers' tools
    // materialised into its connection tools (C6 `mcpServers`).
    let mut greeter_definition = (*greeter.definition).clone();
    let definitions: Vec<Arc<ToolDefinition>> = mcp_tools
        .iter()
        .map(|t| Arc::clone(&t.definition))
        .collect();
    greeter_definition.capabilities.connection_tools = Some(definitions.clone());
    let mut config = AgentConfig::new("You are the root.").with_sub_agent(greeter_definition);
    config.options.mcp_tools = definitions;
    config.skills = skills_view.definitions().to_vec();
    let agent = Agent::new(Arc::new(runtime), config);

    let mut query = agent.query("go", QueryOverrides::default());
    let mut finished = Vec::new();
    use futures_util::StreamExt as _;
    while let Some(event) = query.next().await {
        if let EventKind::ToolCallFinished {
            tool,
            is_error,
            summary,
            ..
        } = event.kind
        {
            finished.push((event.agent.to_string(), tool, is_error, summary));
        }
    }
    let result = query.finish().await.unwrap();
    assert_eq!(result.output, "done");
    let find = |tool: &str| {
        finished
            .iter()
            .find(|(_, t, _, _)| t == tool)
            .unwrap_or_else(|| panic!("no call of {tool}: {finished:?}"))
    };
    let (who, _, is_error, summary) = find("mcp__everything__echo");
    assert_eq!(
        (who.as_str(), *is_error, summary.as_str()),
        ("root", false, "Echo: hi")
    );
    let (who, _, is_error, summary) = find("Skill");
    assert_eq!(
        (who.as_str(), *is_error, summary.as_str()),
        ("root.0001-greeter", false, "loaded skill greeting")
    );
    let (_, _, is_error, _) = find("Task");
    assert!(!is_error);
    // The greeter's grant ended with it.
    assert!(
        skill_tool
            .granted(&"root.0001-greeter".parse().unwrap())
            .is_empty()
    );
}
