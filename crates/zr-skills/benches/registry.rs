//! Registry views: 1,000 skills and 200 agent types, cold (a new registry
//! reads everything) and unchanged (a warm registry only `stat`s).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fs;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use zr_skills::{AgentRegistry, Roots, SkillRegistry};
use zr_test_support::files::age;

const SKILLS: usize = 1_000;
const AGENTS: usize = 200;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join(".zr/skills");
    for i in 0..SKILLS {
        // A tenth of the skills sit one level down, in group folders.
        let folder = if i % 10 == 0 {
            skills
                .join(format!("group-{}", i / 100))
                .join(format!("skill-{i:04}"))
        } else {
            skills.join(format!("skill-{i:04}"))
        };
        fs::create_dir_all(&folder).unwrap();
        let body = "Step one. Step two. Read reference.md for details.\n".repeat(40);
        fs::write(
            folder.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:04}\ndescription: Does task number {i} when the user asks for it.\nallowed-tools: Read, Grep\nmetadata:\n  version: \"1.0\"\n---\n{body}"
            ),
        )
        .unwrap();
    }
    let agents = dir.path().join(".zr/agents");
    fs::create_dir_all(&agents).unwrap();
    for i in 0..AGENTS {
        let prompt = "You review code carefully and report bugs first.\n".repeat(20);
        fs::write(
            agents.join(format!("agent-{i:03}.md")),
            format!(
                "---\nname: agent-{i:03}\ndescription: Agent number {i}.\ntools: Read, Grep, Glob\nmaxTurns: 10\nskills: [skill-0001]\n---\n{prompt}"
            ),
        )
        .unwrap();
    }
    age(dir.path());
    dir
}

fn registry(c: &mut Criterion) {
    let dir = project();
    let skill_roots = Roots::skills(dir.path(), None);
    let agent_roots = Roots::agents(dir.path(), None);

    let mut group = c.benchmark_group("registry");
    group.sample_size(20);
    group.bench_function("skills_1000_cold", |b| {
        b.iter(|| {
            let view = SkillRegistry::new(skill_roots.clone()).view();
            assert_eq!(view.skills().len(), SKILLS);
            black_box(view)
        });
    });
    let skills = SkillRegistry::new(skill_roots.clone());
    assert_eq!(skills.view().skills().len(), SKILLS);
    // A second view of files that did not change parses none (checked
    // here, not after the bench: a filter may skip it).
    black_box(skills.view());
    assert_eq!(skills.last_scan().files_parsed, 0);
    group.bench_function("skills_1000_unchanged", |b| {
        b.iter(|| black_box(skills.view()));
    });

    // The floor of an unchanged view: one `lstat` per SKILL.md (plus one
    // per group folder and root), with nothing else.
    let files: Vec<_> = skills
        .view()
        .skills()
        .iter()
        .map(|s| s.file().to_path_buf())
        .collect();
    group.bench_function("baseline_1000_lstat", |b| {
        b.iter(|| {
            for file in &files {
                black_box(fs::symlink_metadata(file).unwrap());
            }
        });
    });

    group.bench_function("agents_200_cold", |b| {
        b.iter(|| {
            let view = AgentRegistry::new(agent_roots.clone()).view();
            assert_eq!(view.types().len(), AGENTS + 5);
            black_box(view)
        });
    });
    let agents = AgentRegistry::new(agent_roots.clone());
    assert_eq!(agents.view().types().len(), AGENTS + 5);
    // A second view of files that did not change parses none (checked
    // here, not after the bench: a filter may skip it).
    black_box(agents.view());
    assert_eq!(agents.last_scan().files_parsed, 0);
    group.bench_function("agents_200_unchanged", |b| {
        b.iter(|| black_box(agents.view()));
    });
    group.finish();
}

criterion_group!(benches, registry);
criterion_main!(benches);
