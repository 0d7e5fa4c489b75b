//! Tool benchmarks through the public handlers, on a generated tree built
//! outside the timed loop:
//!
//! - `read_2000_lines`: Read of the first 2,000 lines of a 20,000-line file
//!   (about 1 MiB), numbered and returned;
//! - `grep_files_with_matches` and `grep_content`: Grep over 600 files of
//!   200 lines (about 2.6 MiB in 30 folders; every 7th file holds the
//!   needle once);
//! - `glob_all_rs`: Glob `**/*.rs` over the same tree (newest first, 100
//!   results returned of 600);
//! - `bash_true`: Bash `true` (spawn, process group, wait, group kill);
//! - `bash/true/plain`, `bash/true/sandboxed_writable` and
//!   `bash/true/sandboxed_read_only`: the same call without a confinement,
//!   confined to writing beneath the tree, and confined to a read-only file
//!   system, the network off in both (Landlock and seccomp built in the
//!   parent, applied in the child before `exec`): what the OS sandbox adds
//!   to a Bash call (issue 33; the system must be able to confine, else
//!   the benchmark stops rather than time an unconfined call);
//!   `ZR_BENCH_INTERLEAVED=bash:N` times the three instead in N rounds of
//!   one call each, in rotating order (a shared machine's slow spell lands
//!   on all three), and prints their medians as a JSON line, without
//!   criterion;
//! - `edit_tolerant`: Read then an indentation-tolerant Edit and its undo
//!   in a 2,000-line file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use zr_tools::BuiltinTools;
use zr_types::{AgentId, Confinement, SessionId, ToolCall, ToolContext, ToolHandler, ToolOutput};

struct Bench {
    rt: tokio::runtime::Runtime,
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
    ctx: ToolContext,
    _dir: tempfile::TempDir,
}

impl Bench {
    fn call(&self, tool: &str, input: Value) -> ToolOutput {
        self.call_in(&self.ctx, tool, input)
    }

    /// The call in `ctx` (the bench's context with a confinement).
    fn call_in(&self, ctx: &ToolContext, tool: &str, input: Value) -> ToolOutput {
        let h = &self.handlers[tool];
        let call = ToolCall {
            id: "b".to_owned(),
            name: tool.to_owned(),
            input,
        };
        let out = self.rt.block_on(h.call(&call, ctx.clone())).unwrap();
        assert!(!out.is_error, "{out:?}");
        out
    }
}

fn setup() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut big = String::new();
    for i in 0..20_000 {
        writeln!(
            big,
            "line {i}: the quick brown fox jumps over the lazy dog {i}"
        )
        .unwrap();
    }
    std::fs::write(root.join("big.txt"), big).unwrap();
    for f in 0..600 {
        let folder = root.join(format!("src/m{:02}", f % 30));
        std::fs::create_dir_all(&folder).unwrap();
        let mut body = String::new();
        for l in 0..200 {
            if f % 7 == 0 && l == 100 {
                body.push_str("    let needle = compute(value);\n");
            } else {
                writeln!(body, "    let x{l} = y{l} + {f}; // filler text").unwrap();
            }
        }
        std::fs::write(folder.join(format!("f{f}.rs")), body).unwrap();
    }
    let mut edit = String::from("fn main() {\n");
    for i in 0..2000 {
        writeln!(edit, "        call_{i}();").unwrap();
    }
    edit.push_str("}\n");
    std::fs::write(root.join("edit.rs"), edit).unwrap();
    let tools = BuiltinTools::new(root.join("cron.json"));
    let handlers = tools
        .tools()
        .into_iter()
        .map(|(d, h)| (d.name.as_str().to_owned(), h))
        .collect();
    let mut env = BTreeMap::new();
    env.insert("PATH".to_owned(), "/usr/bin:/bin".to_owned());
    let ctx = ToolContext::new(
        SessionId::from_parts(1, 1),
        AgentId::root(),
        root.to_path_buf(),
        env,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    Bench {
        rt,
        handlers,
        ctx,
        _dir: dir,
    }
}

fn benches(c: &mut Criterion) {
    let b = setup();
    c.bench_function("read_2000_lines", |bn| {
        bn.iter(|| b.call("Read", json!({"file_path": "big.txt"})));
    });
    c.bench_function("grep_files_with_matches", |bn| {
        bn.iter(|| {
            b.call(
                "Grep",
                json!({"pattern": "needle = compute", "path": "src"}),
            )
        });
    });
    c.bench_function("grep_content", |bn| {
        bn.iter(|| {
            b.call(
                "Grep",
                json!({"pattern": "needle", "path": "src", "output_mode": "content", "-C": 2}),
            )
        });
    });
    c.bench_function("glob_all_rs", |bn| {
        bn.iter(|| b.call("Glob", json!({"pattern": "**/*.rs"})));
    });
    c.bench_function("bash_true", |bn| {
        bn.iter(|| b.call("Bash", json!({"command": "true"})));
    });
    bash_sandboxed(c, &b);
    c.bench_function("edit_tolerant", |bn| {
        bn.iter(|| {
            b.call("Read", json!({"file_path": "edit.rs", "limit": 1}));
            b.call(
                "Edit",
                json!({"file_path": "edit.rs", "old_string": "call_1500();\ncall_1501();", "new_string": "renamed_1500();\ncall_1501();"}),
            );
            b.call(
                "Edit",
                json!({"file_path": "edit.rs", "old_string": "        renamed_1500();", "new_string": "        call_1500();"}),
            );
        });
    });
}

/// The three contexts of the `bash/true/*` benchmarks, each sandbox first
/// shown to hold.
fn bash_contexts(b: &Bench) -> [(&'static str, ToolContext); 3] {
    if let Some(missing) = zr_tools::sandbox_missing() {
        panic!("bash/true/sandboxed_*: this system cannot confine commands ({missing})");
    }
    let writable = Confinement {
        writable: vec![b.ctx.cwd.to_path_buf()],
        network: false,
    };
    let read_only = Confinement {
        writable: Vec::new(),
        network: false,
    };
    let contexts = [
        ("true/plain", b.ctx.clone()),
        (
            "true/sandboxed_writable",
            b.ctx.clone().with_confinement(Some(writable)),
        ),
        (
            "true/sandboxed_read_only",
            b.ctx.clone().with_confinement(Some(read_only)),
        ),
    ];
    // What is measured is confined: the same write outside the tree and
    // the temp folder (which a writable sandbox also holds), beside this
    // executable, works unconfined and fails in both sandboxes.
    let exe = std::env::current_exe().unwrap();
    let probe = tempfile::Builder::new()
        .prefix("zr-bench-probe")
        .tempdir_in(exe.parent().expect("an executable is in a folder"))
        .unwrap();
    let outside = probe.path().join("written");
    let touch = json!({"command": format!("touch {}", outside.display())});
    for (name, ctx) in &contexts {
        let _ = std::fs::remove_file(&outside);
        let out = b.call_in(ctx, "Bash", touch.clone());
        let wrote = outside.exists();
        assert_eq!(
            wrote,
            *name == "true/plain",
            "{name}: a write outside the tree {}: {out:?}",
            if wrote { "succeeded" } else { "failed" }
        );
    }
    let _ = std::fs::remove_file(&outside);
    contexts
}

/// Bash `true` without a sandbox, confined to writing beneath the tree,
/// and confined to a read-only file system (network off in both).
fn bash_sandboxed(c: &mut Criterion, b: &Bench) {
    let contexts = bash_contexts(b);
    let mut group = c.benchmark_group("bash");
    for (name, ctx) in &contexts {
        group.bench_function(*name, |bn| {
            bn.iter(|| b.call_in(ctx, "Bash", json!({"command": "true"})));
        });
    }
    group.finish();
}

/// `ZR_BENCH_INTERLEAVED=bash:N`: the `bash/true/*` calls in N rounds,
/// one of each per round in rotating order, after 20 rounds of warm-up;
/// their medians and means (ms) as a JSON line.
fn bash_interleaved(rounds: usize) {
    let b = setup();
    let contexts = bash_contexts(&b);
    let mut times: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds + 20 {
        for k in 0..3 {
            let k = (k + round) % 3;
            let start = std::time::Instant::now();
            b.call_in(&contexts[k].1, "Bash", json!({"command": "true"}));
            if round >= 20 {
                times[k].push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let stats = times.map(|mut xs| {
        xs.sort_by(f64::total_cmp);
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        (xs[xs.len() / 2], mean)
    });
    let mut line = serde_json::Map::new();
    line.insert("bench".to_owned(), json!("bash_true_interleaved"));
    line.insert("rounds".to_owned(), json!(rounds));
    for ((name, _), (median, mean)) in contexts.iter().zip(stats) {
        let name = name.trim_start_matches("true/");
        line.insert(format!("{name}_median_ms"), json!(median));
        line.insert(format!("{name}_mean_ms"), json!(mean));
    }
    println!("{}", Value::Object(line));
}

criterion_group!(tools, benches);

fn main() {
    if let Ok(spec) = std::env::var("ZR_BENCH_INTERLEAVED") {
        let rounds = spec
            .strip_prefix("bash:")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("ZR_BENCH_INTERLEAVED={spec}: expected bash:N"));
        return bash_interleaved(rounds);
    }
    tools();
    Criterion::default().configure_from_args().final_summary();
}
