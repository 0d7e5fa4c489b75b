//! What `zr run` reads before anything starts, checked together: `zr.toml`
//! (its syntax and shape, then its values), `.mcp.json` and the scripted
//! provider's script. Every problem found is reported at once, each with
//! its file, line and column; nothing starts while one remains.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cli::{ProviderArgs, ProviderKind};
use crate::error::CliError;
use crate::project::Project;
use crate::provider::{read_script, script_path};

/// The project at `root`, loaded and checked for a run with `provider`.
///
/// # Errors
///
/// Every problem of the files above: one as itself, more as
/// [`CliError::Several`] (zr.toml's, then .mcp.json's, then the
/// script's).
pub(crate) fn load(root: PathBuf, provider: &ProviderArgs) -> Result<Project, CliError> {
    let project = Project::load(root);
    let mut problems = Vec::new();
    let script = match &project {
        Ok(project) => {
            // The values zr.toml's shape allows but the engine refuses (a
            // bad pattern, mode or hook); the same build runs again later.
            if let Err(e) = crate::session::root_config(project, &BTreeMap::new(), Vec::new()) {
                problems.push(e);
            }
            let scripted = provider.script.is_some()
                || provider.provider.or(project.config.model.provider)
                    == Some(ProviderKind::Scripted);
            scripted.then(|| script_path(project, provider)).flatten()
        }
        Err(_) => provider.script.clone(),
    };
    if let Some(path) = script
        && let Err(e) = read_script(&path, provider.script.is_some())
    {
        problems.push(e);
    }
    match project {
        Ok(project) => CliError::all(problems).map(|()| project),
        Err(e) => Err(CliError::all(e.into_list().into_iter().chain(problems))
            .expect_err("the project's own error is among them")),
    }
}
