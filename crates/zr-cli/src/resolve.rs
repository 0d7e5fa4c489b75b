//! `zr resolve`: every agent's resolved tool pool, from a scenario file or
//! from the project itself.

use std::sync::Arc;

use zr_caps::PermissionRules;
use zr_engine::{
    Agent, AnthropicConfig, AnthropicProvider, BoundaryPreview, ModelProvider, OpenAiConfig,
    OpenAiProvider, RequestCost, ResponsesProvider, Script, ScriptedProvider,
};
use zr_resolve::{Scenario, ScenarioReport};

use crate::ask::Asking;
use crate::cli::{Format, ProviderKind, ResolveArgs};
use crate::error::CliError;
use crate::project::Project;
use crate::session::Workspace;

/// `zr resolve --scenario FILE`.
///
/// # Errors
///
/// [`CliError::Usage`] for a file that cannot be read or an unknown
/// `--agent`, [`CliError::Scenario`] for a bad file.
pub(crate) fn scenario(args: &ResolveArgs, path: &std::path::Path) -> Result<String, CliError> {
    tracing::debug!(scenario = %path.display(), "reading scenario");
    // A file named on the command line that cannot be read is a usage
    // error (exit 2), as a missing --script is.
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::usage(
            format!("cannot read scenario file {}: {e}", path.display()),
            "check the path (relative to the current folder)",
        )
    })?;
    let report = Scenario::from_json(&text)
        .and_then(|s| s.resolve())
        .map_err(|source| CliError::Scenario {
            path: path.to_path_buf(),
            source: Box::new(source),
        })?;
    tracing::debug!(agents = report.agents.len(), "resolved every agent");
    print_report(report, args, &path.display().to_string())
}

/// The report restricted to `--agent` and printed in `--format`.
pub(crate) fn print_report(
    mut report: ScenarioReport,
    args: &ResolveArgs,
    source: &str,
) -> Result<String, CliError> {
    if let Some(agent) = &args.agent {
        let names: Vec<&str> = report.agents.iter().map(|a| a.agent.as_str()).collect();
        let Some(only) = report.only(agent) else {
            return Err(CliError::usage(
                format!("no agent '{agent}' in {source}"),
                format!("agents: {}", names.join(", ")),
            ));
        };
        report = only;
    }
    Ok(match args.format {
        Format::Table => report.to_string(),
        Format::Json => crate::inspect::json_text(&report),
    })
}

/// `zr resolve` on the project: its MCP servers started as `zr run` starts
/// them, then every agent's pool as the engine resolves it (root, each
/// agent type, fork). No model is asked. Servers that fail to start and
/// broken agent or skill files are warnings on standard error; the pools
/// are resolved without them.
///
/// # Errors
///
/// [`CliError::Config`] for a value of `zr.toml` the engine refuses,
/// [`CliError::Engine`] when the resolver refuses an agent's tool sources,
/// [`CliError::Usage`] for an unknown `--agent`.
pub(crate) async fn project(project: &Project, args: &ResolveArgs) -> Result<String, CliError> {
    crate::run::warn_diagnostics(project);
    // Nothing is sent to a model: an empty script stands in for one.
    let provider = Arc::new(ScriptedProvider::new(Script::default()));
    let model = project
        .config
        .model
        .name
        .clone()
        .unwrap_or_else(|| "unset".to_owned());
    let kind = crate::model_aliases::assumed_kind(project, &|v| project.var(v));
    let family = crate::model_aliases::family(kind);
    let workspace = Workspace::open(project, provider, model, family, Asking::OnTerminal).await?;
    for failed in &workspace.failed_servers {
        eprintln!(
            "warning: MCP server '{}' did not start, its tools are left out: {}\n  help: {}; `zr mcp list` shows every server's status",
            failed.name, failed.summary, failed.help
        );
    }
    let mut config = workspace.config.clone();
    config.sessions_dir = None;
    let agent = Agent::new(Arc::clone(&workspace.runtime), config);
    let report = agent.preview_pools()?;
    tracing::debug!(agents = report.agents.len(), "resolved every agent");
    let boundaries = agent.preview_boundaries()?;
    let (wire, wire_name) = wire(kind);
    let costs = agent.preview_request_costs(wire.as_deref())?;
    let shown = print_report(report, args, "this project")?;
    let chosen = |agent: &String| args.agent.as_ref().is_none_or(|a| a == agent);
    let boundaries: Vec<&BoundaryPreview> =
        boundaries.iter().filter(|b| chosen(&b.agent)).collect();
    let costs: Vec<&RequestCost> = costs.iter().filter(|c| chosen(&c.agent)).collect();
    Ok(match args.format {
        Format::Table => format!(
            "{shown}\n{}\n{}\n{}",
            boundary_table(
                &boundaries,
                &workspace.config.permissions.rules,
                &project.root
            ),
            crate::instructions::table(project),
            cost_table(&costs, wire_name)
        ),
        Format::Json => {
            let mut value: serde_json::Value =
                serde_json::from_str(&shown).unwrap_or(serde_json::Value::Null);
            if let Some(map) = value.as_object_mut() {
                map.insert("boundary".to_owned(), boundary_json(&boundaries));
                map.insert(
                    "instructions".to_owned(),
                    crate::instructions::json(project),
                );
                map.insert("request_cost".to_owned(), cost_json(&costs, wire_name));
            }
            crate::inspect::json_text(&value)
        }
    })
}

/// The provider whose request bodies the fixed costs are measured on,
/// never asked anything (no key is needed to build a body), and the wire
/// it speaks: the project's provider's, the Anthropic Messages API when
/// none is known or the model is scripted.
fn wire(kind: Option<ProviderKind>) -> (Option<Arc<dyn ModelProvider>>, &'static str) {
    let built: Result<(Arc<dyn ModelProvider>, &'static str), _> = match kind {
        Some(ProviderKind::Openai) => OpenAiProvider::new(OpenAiConfig::new("http://127.0.0.1:9"))
            .map(|p| {
                (
                    Arc::new(p) as Arc<dyn ModelProvider>,
                    "OpenAI Chat Completions",
                )
            }),
        Some(ProviderKind::OpenaiResponses) => {
            ResponsesProvider::new(OpenAiConfig::new("http://127.0.0.1:9"))
                .map(|p| (Arc::new(p) as Arc<dyn ModelProvider>, "OpenAI Responses"))
        }
        _ => AnthropicProvider::new(AnthropicConfig::new("unused"))
            .map(|p| (Arc::new(p) as Arc<dyn ModelProvider>, "Anthropic Messages")),
    };
    match built {
        Ok((provider, name)) => (Some(provider), name),
        Err(_) => (None, "none"),
    }
}

/// What each agent's requests cost before their messages, as `zr
/// resolve` prints it after what they may touch.
fn cost_table(costs: &[&RequestCost], wire: &str) -> String {
    let mut out = format!(
        "what each request costs before its messages (system prompt and tool definitions as the {wire} API receives them; tokens estimated as bytes / 4):\n"
    );
    for c in costs {
        let how = if c.measured {
            ""
        } else {
            ", estimated from the text"
        };
        out.push_str(&format!(
            "{}: {} bytes, about {} tokens{how}\n",
            c.agent,
            c.bytes,
            c.estimated_tokens()
        ));
    }
    out
}

fn cost_json(costs: &[&RequestCost], wire: &str) -> serde_json::Value {
    costs
        .iter()
        .map(|c| {
            serde_json::json!({
                "agent": c.agent,
                "bytes": c.bytes,
                "estimated_tokens": c.estimated_tokens(),
                "measured_on": if c.measured { wire } else { "text" },
            })
        })
        .collect()
}

/// What each agent may touch, as `zr resolve` prints it after the pools.
fn boundary_table(
    boundaries: &[&BoundaryPreview],
    rules: &PermissionRules,
    root: &std::path::Path,
) -> String {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut out = String::from("what each agent may touch:\n");
    for b in boundaries {
        let writes = if b.isolated {
            "its own worktree".to_owned()
        } else {
            b.writable
                .iter()
                .map(|p| {
                    if *p == root {
                        "the project folder".to_owned()
                    } else {
                        p.display().to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "{} ({}): writes {writes}; commands: {}\n",
            b.agent, b.mode, b.sandbox
        ));
    }
    out.push_str(&format!(
        "protected (asked about in every mode but bypassPermissions): {}\n",
        zr_engine::protected_names()
    ));
    for (list, rules) in [
        ("allow", &rules.allow),
        ("ask", &rules.ask),
        ("deny", &rules.deny),
    ] {
        if !rules.is_empty() {
            let texts: Vec<String> = rules.iter().map(ToString::to_string).collect();
            out.push_str(&format!("rules {list}: {}\n", texts.join(", ")));
        }
    }
    out
}

fn boundary_json(boundaries: &[&BoundaryPreview]) -> serde_json::Value {
    boundaries
        .iter()
        .map(|b| {
            serde_json::json!({
                "agent": b.agent,
                "mode": b.mode.as_str(),
                "writable": b.writable,
                "isolated": b.isolated,
                "sandbox": b.sandbox,
            })
        })
        .collect()
}
