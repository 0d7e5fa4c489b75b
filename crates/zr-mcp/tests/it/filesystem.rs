//! The MCP project's filesystem server: reading a real file, and an error the model should see.

use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_text_file_reads_a_real_file_and_reports_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "first line\nsecond line\n").unwrap();
    let marker = marker();
    let server = stdio(
        "fs",
        node(),
        vec![filesystem_js(), root.display().to_string(), marker.clone()],
    );
    let hub = hub(vec![server], options());
    let lease = hub.acquire("fs").await.unwrap();

    let tools = lease.tools().await.unwrap();
    let read = tools
        .iter()
        .find(|t| t.definition.name.as_str() == "mcp__fs__read_text_file")
        .expect("read_text_file is listed");
    assert!(read.definition.annotations.read_only);
    assert_eq!(read.definition.annotations.open_world, Some(false));
    let write = tools
        .iter()
        .find(|t| t.definition.name.as_str() == "mcp__fs__write_file")
        .expect("write_file is listed");
    assert!(!write.definition.annotations.read_only);

    let path = root.join("notes.txt").display().to_string();
    let out = lease
        .call("read_text_file", json!({"path": path}))
        .await
        .unwrap();
    assert!(!out.is_error, "{out:?}");
    assert!(text_of(&out).contains("first line\nsecond line"), "{out:?}");

    let missing = root.join("missing.txt").display().to_string();
    let out = lease
        .call("read_text_file", json!({"path": missing}))
        .await
        .unwrap();
    assert!(out.is_error, "{out:?}");
    assert!(
        text_of(&out).contains("missing.txt") || text_of(&out).contains("ENOENT"),
        "{out:?}"
    );

    // Outside the allowed folder: refused, as an error for the model.
    let out = lease
        .call("read_text_file", json!({"path": "/etc/hostname"}))
        .await
        .unwrap();
    assert!(out.is_error, "{out:?}");
    assert!(
        text_of(&out).contains("Access denied - path outside allowed directories"),
        "{out:?}"
    );
}
