//! `isolation: remote` agent types in a session that runs here: with
//! `[durable] ingress`, the runtime's effects send them to the Restate
//! server's workers (`zr_restate::RemoteAgents`); without it, each such
//! file gets a warning naming its `isolation` line and the key to set
//! (the engine fails a Task call for the type: never a silent local run).

use std::path::Path;
use std::sync::Arc;

use zr_caps::Isolation;
use zr_engine::RuntimeEnvironment;
use zr_skills::AgentSource;

use crate::project::Project;

/// `runtime`, sending `project`'s remote agent types to its `[durable]`
/// server when it has one; the warnings for them when it has none.
pub(crate) fn wire(project: &Project, runtime: RuntimeEnvironment) -> RuntimeEnvironment {
    let remote: Vec<_> = project
        .agents
        .types()
        .iter()
        .filter(|t| t.definition.isolation == Isolation::Remote)
        .collect();
    if remote.is_empty() {
        return runtime;
    }
    if let Some(ingress) = &project.config.durable.ingress {
        // A local run's effects are the engine's defaults.
        let inner = Arc::new(zr_engine::LocalEffects);
        return runtime.with_effects(Arc::new(zr_restate::RemoteAgents::new(inner, ingress)));
    }
    for entry in remote {
        if let AgentSource::File { path, .. } = &entry.source {
            eprintln!("{}", warning(&project.root, path, entry.name().as_str()));
        }
    }
    runtime
}

/// The warning for the remote type `name` of the file `path` without
/// `[durable]`.
fn warning(root: &Path, path: &Path, name: &str) -> String {
    let line = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines()
                .position(|l| l.trim_start().starts_with("isolation:"))
        })
        .map_or(1, |i| i + 1);
    let shown = path.strip_prefix(root).unwrap_or(path);
    format!(
        "warning: {}:{line}: 'isolation: remote' needs a Restate server: set [durable] ingress = \"http://HOST:8080\" in zr.toml; until then a Task call for '{name}' fails",
        shown.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_the_line_and_the_key() {
        let dir = tempfile::tempdir().expect("a folder");
        let file = dir.path().join(".zr/agents/rem.md");
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
        std::fs::write(
            &file,
            "---\nname: rem\ndescription: remote\nisolation: remote\n---\nWork.\n",
        )
        .expect("the file");
        assert_eq!(
            warning(dir.path(), &file, "rem"),
            "warning: .zr/agents/rem.md:4: 'isolation: remote' needs a Restate server: set [durable] ingress = \"http://HOST:8080\" in zr.toml; until then a Task call for 'rem' fails"
        );
    }
}
