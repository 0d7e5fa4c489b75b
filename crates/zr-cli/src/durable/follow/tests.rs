//! Tests of the lines a followed journal shows.

use zr_restate::JournalEntry;

use super::Progress;

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
    assert_eq!(
        progress.lines(&journal),
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
        progress.lines(&journal),
        ["  ✓ background root.0002-worker"]
    );
    assert!(progress.lines(&journal).is_empty(), "no line twice");
}
