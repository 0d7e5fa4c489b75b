//! Tests of `zr init`'s templates: the zr.toml template shows the defaults
//! the code uses and every key there is; the examples load cleanly.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::*;
use crate::config::{ZrConfig, expected_names};
use crate::project::Project;

/// `# key = value` lines of the template.
fn default_line(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("# ")?;
    let (key, _) = rest.split_once(" = ")?;
    key.chars()
        .all(|c| c.is_ascii_lowercase() || c == '_')
        .then_some(rest)
}

/// The template with every `# key = value` line uncommented (and, with
/// `examples`, every `# e.g. key = value` line and every commented-out
/// table, `# [telemetry]`, too).
fn uncommented(examples: bool) -> (String, usize) {
    let mut count = 0;
    let text = CONFIG_TEMPLATE
        .lines()
        .map(|line| {
            let line = match line.strip_prefix("# e.g. ") {
                Some(rest) if examples => rest,
                _ if examples && line.starts_with("# [") && line.ends_with(']') => &line[2..],
                _ => line,
            };
            let line = if line.contains(" = ") && !line.starts_with('#') {
                count += 1;
                line
            } else if let Some(rest) = default_line(line) {
                count += 1;
                rest
            } else {
                line
            };
            format!("{line}\n")
        })
        .collect();
    (text, count)
}

/// The root's configuration as `zr run` builds it in `dir`, as text.
fn built(dir: &Path) -> (String, ZrConfig) {
    let project = Project::load(dir.to_path_buf()).unwrap();
    let config = crate::session::root_config(&project, &BTreeMap::new(), Vec::new()).unwrap();
    (format!("{config:#?}"), project.config)
}

#[test]
fn the_template_shows_the_defaults_the_code_uses() {
    let dir = tempfile::tempdir().unwrap();
    let (defaults, _) = built(dir.path());
    let (text, count) = uncommented(false);
    assert_eq!(count, 27, "the `# key = value` lines:\n{text}");
    std::fs::write(dir.path().join(CONFIG_FILE), &text).unwrap();
    let (from_template, file) = built(dir.path());
    assert_eq!(from_template, defaults);
    // Telemetry is off unless asked for: the defaults have no table.
    assert!(file.telemetry.is_none(), "{:?}", file.telemetry);
    assert_eq!(file.model.max_tokens, Some(zr_engine::DEFAULT_MAX_TOKENS));
    assert_eq!(
        (file.mcp.connect_timeout_secs, file.mcp.call_timeout_secs),
        (
            Some(crate::config::DEFAULT_CONNECT_TIMEOUT_SECS),
            Some(crate::config::DEFAULT_CALL_TIMEOUT_SECS)
        )
    );
}

#[test]
fn the_template_has_every_key_and_no_other() {
    let (text, count) = uncommented(true);
    assert_eq!(count, 67);
    let parsed: toml::Table = text.parse().unwrap();
    ZrConfig::parse(Path::new("zr.toml"), &text).unwrap();
    let known = |section: &str| -> BTreeSet<String> {
        let probe = if section.is_empty() {
            "zz_unknown = 1\n".to_owned()
        } else {
            format!("[{section}]\nzz_unknown = 1\n")
        };
        let err = toml::from_str::<ZrConfig>(&probe).unwrap_err();
        expected_names(err.message())
            .into_iter()
            .map(str::to_owned)
            .collect()
    };
    let tables: BTreeSet<String> = parsed.keys().cloned().collect();
    assert_eq!(tables, known(""));
    for (table, keys) in &parsed {
        let keys = keys.as_table().unwrap();
        if table == "providers" {
            // A table of named profiles: each profile's keys are checked.
            for (name, profile) in keys {
                let keys: BTreeSet<String> = profile.as_table().unwrap().keys().cloned().collect();
                assert_eq!(
                    keys,
                    known(&format!("providers.{name}")),
                    "[providers.{name}]"
                );
            }
            continue;
        }
        let keys: BTreeSet<String> = keys.keys().cloned().collect();
        assert_eq!(keys, known(table), "[{table}]");
    }
}

#[test]
fn init_writes_files_that_load_without_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let out = init(Some(dir.path()), &InitArgs { force: false }).unwrap();
    assert!(out.starts_with("created   zr.toml\n"), "{out}");
    let project = Project::load(dir.path().to_path_buf()).unwrap();
    let diagnostics: Vec<String> = project.diagnostics().map(|d| d.to_string()).collect();
    assert_eq!(diagnostics, Vec::<String>::new());
    assert!(project.agents.get("reviewer").is_some());
    assert!(project.skills_view.get("release-notes").is_some());
    assert_eq!(project.mcp.servers().len(), 0);
}
