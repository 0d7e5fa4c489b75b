//! Snapshots of the views of the fixture folders (`tests/fixtures`): a
//! project with every skill and agent root, and a home folder.

use std::path::{Path, PathBuf};

use zr_skills::{AgentRegistry, Roots, SkillRegistry};

/// `tests/fixtures`, canonical so that paths shown relative to it match.
fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    dir.canonicalize().unwrap_or(dir)
}

#[test]
fn fixture_skills() {
    let base = fixtures();
    let registry = SkillRegistry::new(Roots::skills(
        &base.join("project"),
        Some(&base.join("home")),
    ));
    let view = registry.view();
    insta::assert_snapshot!(view.display_relative(&base).to_string());
}

#[test]
fn fixture_agent_types() {
    let base = fixtures();
    let registry = AgentRegistry::new(Roots::agents(
        &base.join("project"),
        Some(&base.join("home")),
    ));
    let view = registry.view();
    insta::assert_snapshot!(view.display_relative(&base).to_string());
}
