//! Provider profiles named by agent types (`model: NAME:model-id`): the
//! load-time warning for a `NAME` that `zr.toml` has no `[providers.NAME]`
//! for, and the engine's [`ModelCheck`] that fails a Task call for such a
//! type (or a call's own `model`) with the same words.
//!
//! Only where the session's provider is Anthropic's (or scripted): its
//! model ids never hold a colon, so `NAME:id` can only mean a profile. On
//! an OpenAI-compatible server a colon belongs to ids (`llama3:8b` on
//! Ollama, fine-tunes' `ft:...`), and such a model is sent as written.

use std::collections::BTreeMap;
use std::sync::Arc;

use zr_caps::{AgentDefinition, ModelAliases, ModelFamily, ModelResolution};
use zr_engine::ModelCheck;
use zr_skills::{AgentSource, AgentTypesView};
use zr_types::AgentName;

use crate::project::Project;

/// What is wrong with `model` (resolved) when it names a profile that
/// is not among `known`: `None` when it names none, or a known one.
/// `place`: where the type's file is, for the message.
fn unknown_profile(known: &[String], model: &str, place: Option<&str>) -> Option<String> {
    let (name, _) = model.split_once(':')?;
    if known.iter().any(|k| k == name) {
        return None;
    }
    let defined = if known.is_empty() {
        "zr.toml defines none".to_owned()
    } else {
        format!("zr.toml defines {}", known.join(", "))
    };
    let place = place.map(|at| format!(" ({at})")).unwrap_or_default();
    Some(format!(
        "model '{model}'{place} names the provider profile '{name}', and {defined}; set [providers.{name}] in zr.toml (kind, base_url, api_key_env) or name a defined profile"
    ))
}

/// A `warning: FILE:LINE: ...` line for each agent type whose `model`
/// names a provider profile `zr.toml` does not define.
pub(crate) fn warnings(
    project: &Project,
    view: &AgentTypesView,
    aliases: &ModelAliases,
    family: ModelFamily,
) -> Vec<String> {
    if family == ModelFamily::OpenAiCompatible {
        return Vec::new();
    }
    view.types()
        .iter()
        .filter_map(|entry| {
            let ModelResolution::Id(model) = aliases.resolve(&entry.definition.model) else {
                return None;
            };
            let known: Vec<String> = project.config.providers.keys().cloned().collect();
            let why = unknown_profile(&known, model, None)?;
            Some(format!(
                "warning: {}: agent '{}': {why}; a Task call for it fails until then",
                at(project, &entry.source),
                entry.definition.name
            ))
        })
        .collect()
}

/// `FILE:LINE` of a type's `model:` key, or `FILE`, or where it came from.
fn at(project: &Project, source: &AgentSource) -> String {
    match source {
        AgentSource::File { path, .. } => {
            let shown = crate::inspect::shown_path(path, &project.root);
            crate::model_aliases::model_line(path)
                .map_or(shown.clone(), |line| format!("{shown}:{line}"))
        }
        AgentSource::Builtin => "built into zr".to_owned(),
    }
}

/// The engine's check of the profiles (`None` on an OpenAI-compatible
/// session provider, where a colon is part of ids).
pub(crate) fn check(project: &Project, family: ModelFamily) -> Option<Arc<dyn ModelCheck>> {
    if family == ModelFamily::OpenAiCompatible {
        return None;
    }
    let places: BTreeMap<AgentName, String> = project
        .agents
        .types()
        .iter()
        .map(|entry| (entry.definition.name.clone(), at(project, &entry.source)))
        .collect();
    Some(Arc::new(Profiles {
        known: project.config.providers.keys().cloned().collect(),
        places,
    }))
}

/// The profiles `zr.toml` defines, and where each type was read.
#[derive(Debug)]
struct Profiles {
    known: Vec<String>,
    places: BTreeMap<AgentName, String>,
}

impl ModelCheck for Profiles {
    fn check(&self, definition: &AgentDefinition, model: &str) -> Result<(), String> {
        let place = self.places.get(&definition.name).map(String::as_str);
        match unknown_profile(&self.known, model, place) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }
}
