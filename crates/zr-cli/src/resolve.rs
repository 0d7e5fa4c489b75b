//! `zr resolve`: every agent's resolved tool pool, from a scenario file or
//! from the project itself.

use crate::cli::{Format, ResolveArgs};
use crate::error::CliError;
use zr_resolve::{Scenario, ScenarioReport};

/// `zr resolve --scenario FILE`.
///
/// # Errors
///
/// [`CliError::Io`] or [`CliError::Scenario`] for a bad file,
/// [`CliError::Usage`] for an unknown `--agent`.
pub(crate) fn scenario(args: &ResolveArgs, path: &std::path::Path) -> Result<String, CliError> {
    tracing::debug!(scenario = %path.display(), "reading scenario");
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
        action: "read scenario file",
        path: path.to_path_buf(),
        source,
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
        Format::Json => {
            let mut json = serde_json::to_string_pretty(&report).unwrap_or_default();
            json.push('\n');
            json
        }
    })
}
