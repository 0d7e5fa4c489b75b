//! Model aliases of agent types (`model: sonnet`): zr-caps' table for the
//! session's provider plus `zr.toml`'s `[model.aliases]`, and the load-time
//! warning for an alias the provider cannot serve.

use std::path::Path;

use zr_caps::{AgentDefinition, ModelAliases, ModelFamily, ModelResolution};
use zr_skills::{AgentSource, AgentTypesView};

use crate::cli::ProviderKind;
use crate::error::CliError;
use crate::project::Project;

/// Which column of the alias table `kind` uses. The scripted provider
/// answers any model name, so it takes the Anthropic ids (what `zr agents`
/// shows for a project without a provider).
pub(crate) fn family(kind: Option<ProviderKind>) -> ModelFamily {
    match kind {
        Some(ProviderKind::Openai | ProviderKind::OpenaiResponses) => ModelFamily::OpenAiCompatible,
        Some(ProviderKind::Anthropic | ProviderKind::Scripted) | None => ModelFamily::Anthropic,
    }
}

/// The provider `zr agents` and `zr resolve` assume: `zr.toml`'s, else the
/// environment's as `zr run` would choose it.
pub(crate) fn assumed_kind(
    project: &Project,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ProviderKind> {
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    project.config.model.provider.or_else(|| {
        if set("ANTHROPIC_API_KEY") || set("ANTHROPIC_AUTH_TOKEN") {
            Some(ProviderKind::Anthropic)
        } else if set("OPENAI_API_KEY") || set("OPENAI_BASE_URL") {
            Some(ProviderKind::Openai)
        } else {
            None
        }
    })
}

/// Claude Code's variables that map an alias on the Anthropic provider,
/// the first set winning: `small` (Claude Code's small/fast model, the
/// older name first), then the tiers.
const ALIAS_VARS: [(&str, &[&str]); 4] = [
    (
        "small",
        &[
            "ANTHROPIC_SMALL_FAST_MODEL",
            "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        ],
    ),
    ("haiku", &["ANTHROPIC_DEFAULT_HAIKU_MODEL"]),
    ("sonnet", &["ANTHROPIC_DEFAULT_SONNET_MODEL"]),
    ("opus", &["ANTHROPIC_DEFAULT_OPUS_MODEL"]),
];

/// The aliases of a session on `family`: the table's; on Anthropic,
/// Claude Code's variables ([`ALIAS_VARS`], through the project's lookup,
/// so the settings files' `env` counts); on OpenAI's own API (no base URL
/// of its own), `small` is [`OPENAI_SMALL_MODEL`]; then `[model.aliases]`,
/// which wins over all of them. A `[model.aliases] haiku` also moves
/// `small` when nothing names `small` itself.
///
/// # Errors
///
/// [`CliError::Config`] naming file, line and key for a blank model id.
///
/// [`OPENAI_SMALL_MODEL`]: crate::provider::OPENAI_SMALL_MODEL
pub(crate) fn table(project: &Project, family: ModelFamily) -> Result<ModelAliases, CliError> {
    let mut aliases = ModelAliases::for_family(family);
    let set = |name: &str| {
        project
            .var(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let own = &project.config.model.aliases;
    match family {
        ModelFamily::Anthropic => {
            for (alias, vars) in ALIAS_VARS {
                if let Some(id) = vars.iter().find_map(|v| set(v)) {
                    aliases.set(alias, id);
                }
            }
            let small_named = ALIAS_VARS[0].1.iter().any(|v| set(v).is_some());
            if let (Some(haiku), false) = (own.get("haiku"), small_named) {
                aliases.set("small", haiku.trim());
            }
        }
        ModelFamily::OpenAiCompatible => {
            let own_api =
                project.config.model.base_url.is_none() && set("OPENAI_BASE_URL").is_none();
            if own_api {
                aliases.set("small", crate::provider::OPENAI_SMALL_MODEL);
            }
        }
    }
    for (alias, id) in own {
        if id.trim().is_empty() {
            return Err(crate::config_key::config_key_error(
                project,
                &format!("model.aliases.{alias}"),
                format!("the alias '{alias}' maps to a blank model id"),
                "give the model id it stands for, e.g. sonnet = \"claude-sonnet-4-5\"",
            ));
        }
        aliases.set(alias.clone(), id.trim().to_owned());
    }
    Ok(aliases)
}

/// The model `zr agents` shows for `definition`: the id it runs on, or
/// `inherit`.
pub(crate) fn shown(aliases: &ModelAliases, definition: &AgentDefinition) -> String {
    match aliases.resolve(&definition.model) {
        ModelResolution::Inherit => "inherit".to_owned(),
        ModelResolution::Id(id) => id.to_owned(),
        ModelResolution::Unmapped { .. } => "inherit (alias unmapped)".to_owned(),
    }
}

/// A `warning: FILE:LINE: ...` line for each agent type whose model is an
/// alias the session's provider has no id for.
pub(crate) fn warnings(
    project: &Project,
    view: &AgentTypesView,
    aliases: &ModelAliases,
) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in view.types() {
        let ModelResolution::Unmapped { alias } = aliases.resolve(&entry.definition.model) else {
            continue;
        };
        let AgentSource::File { path, .. } = &entry.source else {
            continue;
        };
        let shown = crate::inspect::shown_path(path, &project.root);
        let at = model_line(path).map_or(shown.clone(), |line| format!("{shown}:{line}"));
        lines.push(format!(
            "warning: {at}: model '{alias}' is a Claude alias with no id on this provider; agent '{}' runs on the session's model\n  help: map it under [model.aliases] in zr.toml, e.g. {alias} = \"MODEL-ID\", or set `model` to one of the server's models",
            entry.definition.name
        ));
    }
    lines
}

/// The line of the `model:` key in the front matter of `path`.
pub(crate) fn model_line(path: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .enumerate()
        .skip(1)
        .take_while(|(_, line)| line.trim_end() != "---")
        .find(|(_, line)| line.starts_with("model:"))
        .map(|(index, _)| index + 1)
}

#[cfg(test)]
mod tests;
