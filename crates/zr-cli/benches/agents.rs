//! `zr agents` over 400 agent-type files in nested category folders, as a
//! Claude Code collection lays them out: the registry's view (cold and
//! unchanged) and the whole command (`zr agents --format json`, a process
//! start included), against the same command in a project without files.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fs;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use zr_skills::{AgentRegistry, Roots};
use zr_test_support::files::age;

/// Agent files in all.
const AGENTS: usize = 400;
/// Category folders (`.claude/agents/<category>/`).
const CATEGORIES: usize = 20;
/// Built-in types every view also holds.
const BUILTINS: usize = 5;

/// One agent file in the shape of the common collections: a description
/// with an example block, Claude Code's keys, a prompt of about 1.5 KB.
fn agent_file(i: usize) -> String {
    let prompt = "You are a specialist. Read the code first, then answer with the file and line of each finding.\n"
        .repeat(16);
    format!(
        "---\nname: agent-{i:03}\ndescription: |\n  Use this agent for task number {i}.\n\n  <example>\n  user: \"Please handle case {i}.\"\n  assistant: \"I'll use the agent-{i:03} agent.\"\n  </example>\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\ncolor: blue\n---\n{prompt}"
    )
}

/// A project with [`AGENTS`] files under `.claude/agents/<category>/`,
/// every fourth one a level deeper (`<category>/more/`), and a README in
/// each category.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join(".claude/agents");
    for c in 0..CATEGORIES {
        let category = agents.join(format!("category-{c:02}"));
        fs::create_dir_all(category.join("more")).unwrap();
        fs::write(category.join("README.md"), "# A category\n").unwrap();
    }
    for i in 0..AGENTS {
        let category = agents.join(format!("category-{:02}", i % CATEGORIES));
        let folder = if i % 4 == 0 {
            category.join("more")
        } else {
            category
        };
        fs::write(folder.join(format!("agent-{i:03}.md")), agent_file(i)).unwrap();
    }
    age(dir.path());
    dir
}

/// `zr agents --format json` in `dir` with `home` as `$HOME`; checks that
/// it listed `expected` types.
fn zr_agents(dir: &Path, home: &Path, expected: usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_zr"))
        .args(["agents", "--format", "json"])
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("ZR_LOG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout)
        .matches("\"permission_mode\"")
        .count();
    assert_eq!(listed, expected);
    black_box(out);
}

fn agents(c: &mut Criterion) {
    let dir = project();
    let empty = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let roots = Roots::agents(dir.path(), None);

    let mut group = c.benchmark_group("zr_agents");
    group.sample_size(20);
    group.bench_function("registry_400_nested_cold", |b| {
        b.iter(|| {
            let view = AgentRegistry::new(roots.clone()).view();
            assert_eq!(view.types().len(), AGENTS + BUILTINS);
            assert!(view.diagnostics().is_empty());
            black_box(view)
        });
    });
    let registry = AgentRegistry::new(roots.clone());
    assert_eq!(registry.view().types().len(), AGENTS + BUILTINS);
    // A second view of files that did not change parses none (checked
    // here, not after the bench below: a filter may skip that).
    black_box(registry.view());
    assert_eq!(registry.last_scan().files_parsed, 0);
    group.bench_function("registry_400_nested_unchanged", |b| {
        b.iter(|| black_box(registry.view()));
    });
    group.bench_function("command_400_nested", |b| {
        b.iter(|| zr_agents(dir.path(), home.path(), AGENTS + BUILTINS));
    });
    group.bench_function("command_no_files", |b| {
        b.iter(|| zr_agents(empty.path(), home.path(), BUILTINS));
    });
    group.finish();
}

criterion_group!(benches, agents);
criterion_main!(benches);
