//! Tests of the lines a followed journal shows.

use serde_json::json;
use zr_restate::JournalEntry;

use super::{Line, Progress};

fn step(completion: u64, name: &str) -> JournalEntry {
    JournalEntry::Step {
        completion,
        name: name.to_owned(),
    }
}

fn done(completion: u64, failed: bool) -> JournalEntry {
    JournalEntry::Done { completion, failed }
}

#[test]
fn each_step_shows_once_when_it_ends() {
    let mut progress = Progress::default();
    let mut journal = vec![
        JournalEntry::Other,
        step(1, "model root #1"),
        step(2, "subagent s-001a2345dacb0-00f67346/root.0001-explore"),
    ];
    assert!(progress.lines(&journal).is_empty(), "nothing ended yet");
    journal.extend([
        done(2, false),
        JournalEntry::Call {
            target: "ZrAgent/k/run".to_owned(),
        },
        JournalEntry::Send {
            target: "ZrAgent/s-1/root.0002-worker/run".to_owned(),
            invocation: "inv_b".to_owned(),
        },
        JournalEntry::Attach {
            completion: 3,
            invocation: "inv_b".to_owned(),
        },
        done(1, true),
    ]);
    let lines = progress.lines(&journal);
    assert_eq!(
        lines.iter().map(Line::plain).collect::<Vec<_>>(),
        [
            "  ✓ subagent root.0001-explore",
            "  → ZrAgent/k/run",
            "  → ZrAgent/s-1/root.0002-worker/run (background)",
            "  ✗ model root #1"
        ]
    );
    // The background agent's end: its attach's completion.
    journal.push(done(3, false));
    assert_eq!(
        progress
            .lines(&journal)
            .iter()
            .map(Line::plain)
            .collect::<Vec<_>>(),
        ["  ✓ background root.0002-worker"]
    );
    assert!(progress.lines(&journal).is_empty(), "no line twice");
}

#[test]
fn json_lines_lead_with_type_time_and_agent() {
    let step = Line::Step {
        name: "tool toolu_01".to_owned(),
        failed: false,
    };
    assert_eq!(
        step.json(12),
        r#"{"type":"durable_step","at_ms":12,"agent":"root","name":"tool toolu_01","status":"ok"}"#
    );
    let failed = Line::Step {
        name: "model root #2".to_owned(),
        failed: true,
    };
    let failed: serde_json::Value = serde_json::from_str(&failed.json(3)).unwrap();
    assert_eq!(failed["status"], json!("failed"));
    let call = Line::Call {
        target: "ZrAgent/s/root.0001-explore/run".to_owned(),
    };
    assert_eq!(
        call.json(40),
        r#"{"type":"durable_call","at_ms":40,"agent":"root","target":"ZrAgent/s/root.0001-explore/run"}"#
    );
    let send = Line::Send {
        target: "ZrAgent/s/root.0002-worker/run".to_owned(),
    };
    assert_eq!(
        send.json(41),
        r#"{"type":"durable_send","at_ms":41,"agent":"root","target":"ZrAgent/s/root.0002-worker/run"}"#
    );
}
