//! The hot-reload check that `zr run` makes before each model request of
//! the root: a view of the agent-type registry and of the skill registry,
//! each compared by pointer with the one seen before. Measured on
//! unchanged folders (the case of almost every turn) for a typical project
//! (20 agent types, 40 skills) and a large one (200 types, 1,000 skills).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fs;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use zr_skills::{AgentRegistry, Roots, SkillRegistry};
use zr_test_support::files::age;

fn project(agents: usize, skills: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..skills {
        let folder = dir.path().join(format!(".zr/skills/skill-{i:04}"));
        fs::create_dir_all(&folder).unwrap();
        fs::write(
            folder.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:04}\ndescription: Does task number {i}.\n---\nStep one.\n"
            ),
        )
        .unwrap();
    }
    let folder = dir.path().join(".zr/agents");
    fs::create_dir_all(&folder).unwrap();
    for i in 0..agents {
        fs::write(
            folder.join(format!("agent-{i:03}.md")),
            format!("---\nname: agent-{i:03}\ndescription: Agent number {i}.\ntools: Read, Grep\n---\nYou review code.\n"),
        )
        .unwrap();
    }
    age(dir.path());
    dir
}

fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("hot_reload_check");
    group.sample_size(30);
    for (agents, skills) in [(20, 40), (200, 1_000)] {
        let dir = project(agents, skills);
        let agent_registry = AgentRegistry::new(Roots::agents(dir.path(), None));
        let skill_registry = SkillRegistry::new(Roots::skills(dir.path(), None));
        let (seen_agents, seen_skills) = (agent_registry.view(), skill_registry.view());
        assert_eq!(seen_skills.skills().len(), skills);
        let id = BenchmarkId::from_parameter(format!("{agents}_types_{skills}_skills"));
        group.bench_function(id, |b| {
            b.iter(|| {
                let changed = !Arc::ptr_eq(&agent_registry.view(), &seen_agents)
                    || !Arc::ptr_eq(&skill_registry.view(), &seen_skills);
                assert!(!changed, "nothing changed");
                black_box(changed)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, check);
criterion_main!(benches);
