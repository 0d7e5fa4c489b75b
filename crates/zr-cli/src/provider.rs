//! Which model answers: the command line, then `zr.toml`'s `[model]`, then
//! the environment (`ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`,
//! `OPENAI_API_KEY`, `OPENAI_BASE_URL`), read through the project's
//! lookup (the settings files' `env` first, as Claude Code applies it).
//!
//! The root's model on the Anthropic provider: `--model`, else `[model]
//! name`, else `ANTHROPIC_MODEL`, else the settings files' `model`, else
//! [`DEFAULT_ANTHROPIC_MODEL`] (Claude Code's order: the variable before
//! the settings key); an alias (`opus`) is read through the model aliases.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zr_engine::{
    AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider,
    ResponsesProvider, Router, Script, ScriptedProvider,
};

use crate::cli::{ProviderArgs, ProviderKind};
use crate::config::ProfileConfig;
use crate::error::CliError;
use crate::project::Project;

/// The default model of each provider.
pub(crate) const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The default model of the OpenAI provider.
pub(crate) const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// The `small` model alias on OpenAI's own API (the built-in `explore`
/// type runs on it): the mini model of [`DEFAULT_OPENAI_MODEL`].
pub(crate) const OPENAI_SMALL_MODEL: &str = "gpt-4.1-mini";

/// The chosen provider and model.
#[derive(Debug)]
pub(crate) struct Chosen {
    /// Which provider.
    pub(crate) kind: ProviderKind,
    /// The provider.
    pub(crate) provider: Arc<dyn ModelProvider>,
    /// The model name sent with each request.
    pub(crate) model: String,
}

/// What to tell a user who set no provider.
pub(crate) const NO_PROVIDER_HELP: &str = "set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (Anthropic), OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a local server speaking the OpenAI API), or `provider` under [model] in zr.toml; to run offline: --provider scripted --script FILE";

/// Chooses the provider for `args` in `project`, reading variables through
/// `env`.
///
/// # Errors
///
/// [`CliError::Usage`] when no provider is set, a key is missing or the
/// script cannot be read; [`CliError::Provider`] when the provider cannot
/// be built.
pub(crate) fn choose(
    project: &Project,
    args: &ProviderArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Chosen, CliError> {
    let mut chosen = choose_session(project, args, env)?;
    if project.config.providers.is_empty() {
        return Ok(chosen);
    }
    let mut router = Router::new(chosen.provider);
    for (name, profile) in &project.config.providers {
        router = router.with_aliases(
            name.clone(),
            profile_provider(name, profile, env)?,
            profile.aliases.clone(),
        );
    }
    chosen.provider = Arc::new(router);
    Ok(chosen)
}

/// The provider of the profile `[providers.NAME]`.
///
/// # Errors
///
/// [`CliError::Usage`] for a scripted profile, a name holding `:` or a
/// key variable that is not set; [`CliError::Provider`] when the provider
/// cannot be built.
fn profile_provider(
    name: &str,
    profile: &ProfileConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ModelProvider>, CliError> {
    if name.is_empty() || name.contains(':') {
        return Err(CliError::usage(
            format!(
                "zr.toml: [providers.\"{name}\"]: a provider's name cannot be empty or hold `:`"
            ),
            "rename the table (agents name it as `model: NAME:model-id`)",
        ));
    }
    let key = match &profile.api_key_env {
        Some(key_var) => Some(env(key_var).filter(|v| !v.is_empty()).ok_or_else(|| {
            CliError::usage(
                format!("zr.toml: [providers.{name}] needs an API key, and {key_var} is not set"),
                format!("export {key_var}=... (or remove `api_key_env` for a server without keys)"),
            )
        })?),
        None => None,
    };
    Ok(match profile.kind {
        ProviderKind::Anthropic => {
            let mut config = AnthropicConfig::new(key.unwrap_or_default());
            if let Some(url) = &profile.base_url {
                config = config.with_base_url(url.clone());
            }
            Arc::new(AnthropicProvider::new(config)?)
        }
        ProviderKind::Openai | ProviderKind::OpenaiResponses => {
            let mut config = OpenAiConfig::new(
                profile
                    .base_url
                    .clone()
                    .unwrap_or_else(|| OpenAiConfig::DEFAULT_BASE_URL.to_owned()),
            );
            if let Some(key) = key {
                config = config.with_api_key(key);
            }
            if profile.kind == ProviderKind::OpenaiResponses {
                Arc::new(ResponsesProvider::new(config)?)
            } else {
                Arc::new(OpenAiProvider::new(config)?)
            }
        }
        ProviderKind::Scripted => {
            return Err(CliError::usage(
                format!("zr.toml: [providers.{name}]: kind = \"scripted\" cannot be a profile"),
                "use kind = \"anthropic\", \"openai\" or \"openai-responses\"",
            ));
        }
    })
}

/// The session's own provider (`[model]`, the flags, the environment).
fn choose_session(
    project: &Project,
    args: &ProviderArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Chosen, CliError> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let model_config = &project.config.model;
    let kind = args
        .provider
        .or(model_config.provider)
        .or_else(|| {
            if args.script.is_some() {
                Some(ProviderKind::Scripted)
            } else if var("ANTHROPIC_API_KEY").is_some() || var("ANTHROPIC_AUTH_TOKEN").is_some() {
                Some(ProviderKind::Anthropic)
            } else if var("OPENAI_API_KEY").is_some() || var("OPENAI_BASE_URL").is_some() {
                Some(ProviderKind::Openai)
            } else {
                None
            }
        })
        .ok_or_else(|| CliError::usage("no model provider is set", NO_PROVIDER_HELP))?;
    let model = args.model.clone().or_else(|| model_config.name.clone());
    match kind {
        ProviderKind::Scripted => {
            let script = script_path(project, args).ok_or_else(|| {
                CliError::usage(
                    "the scripted provider needs a script",
                    "pass --script FILE, or set `script` under [model] in zr.toml",
                )
            })?;
            let provider = ScriptedProvider::new(read_script(&script, args.script.is_some())?);
            Ok(Chosen {
                kind,
                provider: Arc::new(provider),
                model: model.unwrap_or_else(|| "scripted".to_owned()),
            })
        }
        ProviderKind::Anthropic => {
            let mut config = match &model_config.api_key_env {
                Some(key_var) => AnthropicConfig::new(var(key_var).ok_or_else(|| {
                    CliError::usage(
                        format!(
                            "the Anthropic provider needs an API key, and {key_var} is not set"
                        ),
                        format!(
                            "export {key_var}=... (or set `api_key_env` under [model] in zr.toml)"
                        ),
                    )
                })?),
                // Claude Code's order: the key, else a bearer token (a
                // gateway's).
                None => match (var("ANTHROPIC_API_KEY"), var("ANTHROPIC_AUTH_TOKEN")) {
                    (Some(key), _) => AnthropicConfig::new(key),
                    (None, Some(token)) => AnthropicConfig::bearer(token),
                    (None, None) => {
                        return Err(CliError::usage(
                            "the Anthropic provider needs an API key, and neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set",
                            "export ANTHROPIC_API_KEY=... (or ANTHROPIC_AUTH_TOKEN=... for a gateway's bearer token, or set `api_key_env` under [model] in zr.toml)",
                        ));
                    }
                },
            };
            if let Some(url) = model_config
                .base_url
                .clone()
                .or_else(|| var("ANTHROPIC_BASE_URL"))
            {
                config = config.with_base_url(url);
            }
            let model = match model {
                Some(model) => model,
                None => anthropic_model(project, env)?,
            };
            Ok(Chosen {
                kind,
                provider: Arc::new(AnthropicProvider::new(config)?),
                model,
            })
        }
        ProviderKind::Openai | ProviderKind::OpenaiResponses => {
            let key_var = model_config
                .api_key_env
                .clone()
                .unwrap_or_else(|| "OPENAI_API_KEY".to_owned());
            let url = model_config
                .base_url
                .clone()
                .or_else(|| var("OPENAI_BASE_URL"));
            let key = var(&key_var);
            if key.is_none() && url.is_none() {
                return Err(CliError::usage(
                    format!(
                        "the OpenAI provider needs {key_var}, or OPENAI_BASE_URL for a local server"
                    ),
                    format!("export {key_var}=... or OPENAI_BASE_URL=http://127.0.0.1:PORT/v1"),
                ));
            }
            let mut config =
                OpenAiConfig::new(url.unwrap_or_else(|| OpenAiConfig::DEFAULT_BASE_URL.to_owned()));
            if let Some(key) = key {
                config = config.with_api_key(key);
            }
            // One config, two APIs: Chat Completions or Responses.
            let provider: Arc<dyn ModelProvider> = if kind == ProviderKind::OpenaiResponses {
                Arc::new(ResponsesProvider::new(config)?)
            } else {
                Arc::new(OpenAiProvider::new(config)?)
            };
            Ok(Chosen {
                kind,
                provider,
                model: model.unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned()),
            })
        }
    }
}

/// The Anthropic model when neither the command line nor `zr.toml` names
/// one: `ANTHROPIC_MODEL`, else the settings files' `model`, else
/// [`DEFAULT_ANTHROPIC_MODEL`]; an alias is read through the project's
/// model aliases (`opus` is `claude-opus-4-5`).
///
/// # Errors
///
/// As [`crate::model_aliases::table`].
pub(crate) fn anthropic_model(
    project: &Project,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, CliError> {
    let chosen = env("ANTHROPIC_MODEL")
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty())
        .or_else(|| project.settings.model().map(|m| m.value.clone()));
    let Some(chosen) = chosen else {
        return Ok(DEFAULT_ANTHROPIC_MODEL.to_owned());
    };
    let aliases = crate::model_aliases::table(project, zr_caps::ModelFamily::Anthropic)?;
    Ok(aliases.get(&chosen).unwrap_or(&chosen).to_owned())
}

/// The script the scripted provider would play: `--script`, else
/// `script` under `[model]` (relative to the project folder).
pub(crate) fn script_path(project: &Project, args: &ProviderArgs) -> Option<PathBuf> {
    args.script.clone().or_else(|| {
        project
            .config
            .model
            .script
            .as_ref()
            .map(|s| project.root.join(s))
    })
}

/// The largest model script read.
const SCRIPT_LIMIT: u64 = 64 * 1024 * 1024;

/// Reads and parses the script at `path` (`given`: named by `--script`,
/// else by zr.toml): a regular file of at most [`SCRIPT_LIMIT`] bytes.
///
/// # Errors
///
/// [`CliError::Usage`] when it cannot be read; [`CliError::Config`] with
/// the line, column and JSON path of what is wrong in it.
pub(crate) fn read_script(path: &Path, given: bool) -> Result<Script, CliError> {
    const FORMAT: &str = "see examples/research-team/script.json for the format";
    let text = zr_tools::read_regular_to_string(path, SCRIPT_LIMIT).map_err(|e| {
        let fix = if given {
            "pass the path of a script file (relative to the current folder)"
        } else {
            "fix `script` under [model] in zr.toml (relative to the project folder)"
        };
        CliError::usage(
            format!("cannot read script {}: {e}", path.display()),
            format!("{fix}; {FORMAT}"),
        )
    })?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." { String::new() } else { key };
        let inner = e.inner();
        let message = inner.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_owned();
        CliError::config(
            path,
            (inner.line(), inner.column()),
            key,
            format!("invalid script: {message}"),
            FORMAT,
        )
    })
}
