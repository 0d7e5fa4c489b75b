//! FindTool: searching an agent's directory of deferred tools.

use serde_json::Value;
use zr_types::{ToolName, ToolOutput};

use crate::tools::AgentTools;

/// Results per search unless the model asks for another number.
const DEFAULT_MAX_RESULTS: usize = 5;
const MAX_MAX_RESULTS: usize = 50;

/// Runs one FindTool call against `tools`; returns what the model gets and
/// the names to load once the turn's calls are done.
pub(crate) fn find(tools: &AgentTools, input: &Value) -> (ToolOutput, Vec<ToolName>) {
    let Some(query) = input.get("query").and_then(Value::as_str) else {
        return (
            ToolOutput::error(
                "FindTool: 'query' (a string) is required: `select:Name1,Name2` or keywords",
            ),
            Vec::new(),
        );
    };
    let max_results = match input.get("max_results") {
        None | Some(Value::Null) => DEFAULT_MAX_RESULTS,
        Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n >= 1 => n.min(MAX_MAX_RESULTS),
            _ => {
                return (
                    ToolOutput::error(format!(
                        "FindTool: 'max_results' must be a positive integer, got {v}"
                    )),
                    Vec::new(),
                );
            }
        },
    };
    match query.trim().strip_prefix("select:") {
        Some(names) => select(tools, names),
        None => search(tools, query, max_results),
    }
}

fn select(tools: &AgentTools, names: &str) -> (ToolOutput, Vec<ToolName>) {
    let mut load = Vec::new();
    let mut lines = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match tools
            .directory()
            .iter()
            .find(|c| c.definition.name.as_str() == name)
        {
            Some(c) if tools.in_directory(name) => {
                lines.push(format!(
                    "loaded {name}: {}",
                    first_line(&c.definition.description)
                ));
                load.push(c.definition.name.clone());
            }
            Some(_) => lines.push(format!("{name} is already loaded")),
            None if tools.get(name).is_some() => {
                lines.push(format!("{name} is already available"));
            }
            None => lines.push(format!("no deferred tool named '{name}'")),
        }
    }
    if lines.is_empty() {
        return (
            ToolOutput::error("FindTool: `select:` needs at least one tool name"),
            Vec::new(),
        );
    }
    let tail = if load.is_empty() {
        ""
    } else {
        "\nLoaded tools can be called from your next turn on."
    };
    (
        ToolOutput::text(format!("{}{tail}", lines.join("\n"))),
        load,
    )
}

fn search(tools: &AgentTools, query: &str, max_results: usize) -> (ToolOutput, Vec<ToolName>) {
    let keywords: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if keywords.is_empty() {
        return (
            ToolOutput::error("FindTool: the query is empty; give keywords or `select:Name`"),
            Vec::new(),
        );
    }
    // Rank by the number of keywords that match, then by pool order.
    let mut hits: Vec<(usize, usize)> = tools
        .directory()
        .iter()
        .enumerate()
        .filter(|(_, c)| tools.in_directory(c.definition.name.as_str()))
        .filter_map(|(i, c)| {
            let name = c.definition.name.as_str().to_lowercase();
            let description = c.definition.description.to_lowercase();
            let score = keywords
                .iter()
                .filter(|k| name.contains(k.as_str()) || description.contains(k.as_str()))
                .count();
            (score > 0).then_some((score, i))
        })
        .collect();
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    hits.truncate(max_results);
    if hits.is_empty() {
        let available = tools
            .directory()
            .iter()
            .filter(|c| tools.in_directory(c.definition.name.as_str()))
            .count();
        return (
            ToolOutput::text(format!(
                "no deferred tool matches '{query}' ({available} not loaded yet); try other keywords"
            )),
            Vec::new(),
        );
    }
    let mut lines = Vec::new();
    let mut load = Vec::new();
    for (_, i) in hits {
        let c = &tools.directory()[i];
        lines.push(format!(
            "loaded {}: {}",
            c.definition.name,
            first_line(&c.definition.description)
        ));
        load.push(c.definition.name.clone());
    }
    (
        ToolOutput::text(format!(
            "{}\nLoaded tools can be called from your next turn on.",
            lines.join("\n")
        )),
        load,
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}
