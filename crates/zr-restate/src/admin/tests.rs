//! Tests of reading `sys_journal` rows (as restate-server 1.7 writes
//! them) and of quoting.

use serde_json::json;

use super::{JournalEntry, entry, literal};

#[test]
fn journal_rows_become_steps_calls_and_ends() {
    let run = json!({"index": 1, "entry_type": "Command: Run", "name": "model root #1",
        "entry_lite_json": "{\"Command\":{\"Run\":{\"completion_id\":1,\"name\":\"model root #1\"}}}"});
    assert_eq!(
        entry(&run),
        JournalEntry::Step {
            completion: 1,
            name: "model root #1".to_owned()
        }
    );
    let done = json!({"index": 2, "entry_type": "Notification: Run",
        "entry_lite_json": "{\"Notification\":{\"ty\":{\"Completion\":\"Run\"},\"id\":{\"CompletionId\":1},\"result\":\"Success\"}}"});
    assert_eq!(
        entry(&done),
        JournalEntry::Done {
            completion: 1,
            failed: false
        }
    );
    let failed = json!({"entry_type": "Notification: Run",
        "entry_lite_json": "{\"Notification\":{\"id\":{\"CompletionId\":4},\"result\":\"Failure\"}}"});
    assert_eq!(
        entry(&failed),
        JournalEntry::Done {
            completion: 4,
            failed: true
        }
    );
    let call = json!({"entry_type": "Command: Call", "invoked_target": "ZrAgent/s-1/run"});
    assert_eq!(
        entry(&call),
        JournalEntry::Call {
            target: "ZrAgent/s-1/run".to_owned()
        }
    );
    // As restate-server 1.7.12 writes it: `invoked_target` empty.
    let call = json!({"entry_type": "Command: Call", "invoked_target": "",
        "entry_lite_json": "{\"Command\":{\"Call\":{\"invocation_id\":\"inv_2\",\"invocation_target\":{\"VirtualObject\":{\"name\":\"ZrAgent\",\"key\":\"s-1/root.0001-explore\",\"handler\":\"run\",\"handler_ty\":\"Exclusive\",\"scope\":null}},\"invocation_id_completion_id\":2,\"result_completion_id\":3}}}"});
    assert_eq!(
        entry(&call),
        JournalEntry::Call {
            target: "ZrAgent/s-1/root.0001-explore/run".to_owned()
        }
    );
    let send = json!({"entry_type": "Command: OneWayCall", "invoked_target": null,
        "entry_lite_json": "{\"Command\":{\"OneWayCall\":{\"invocation_id\":\"inv_1\",\"invocation_target\":{\"VirtualObject\":{\"name\":\"ZrAgent\",\"key\":\"s-1/root.0001-worker\",\"handler\":\"run\",\"handler_ty\":\"Exclusive\",\"scope\":null}},\"invoke_time\":0,\"invocation_id_completion_id\":2}}}"});
    assert_eq!(
        entry(&send),
        JournalEntry::Send {
            target: "ZrAgent/s-1/root.0001-worker/run".to_owned(),
            invocation: "inv_1".to_owned()
        }
    );
    let attach = json!({"entry_type": "Command: AttachInvocation",
        "entry_lite_json": "{\"Command\":{\"AttachInvocation\":{\"target\":{\"InvocationId\":\"inv_1\"},\"completion_id\":3}}}"});
    assert_eq!(
        entry(&attach),
        JournalEntry::Attach {
            completion: 3,
            invocation: "inv_1".to_owned()
        }
    );
    let input =
        json!({"entry_type": "Command: Input", "entry_lite_json": "{\"Command\":{\"Input\":{}}}"});
    assert_eq!(entry(&input), JournalEntry::Other);
}

#[test]
fn a_literal_doubles_its_quotes() {
    assert_eq!(literal("s-1"), "'s-1'");
    assert_eq!(literal("a'; DROP"), "'a''; DROP'");
}
