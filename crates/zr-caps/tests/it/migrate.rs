//! C5: every `fixtures/v2/*.json` migrated, snapshot of the result or error.

#[test]
fn v2_migrations() {
    insta::glob!("../fixtures/v2", "*.json", |path| {
        let json = std::fs::read_to_string(path).unwrap();
        let shown = match zr_caps::migrate_v2(&json) {
            Ok(migration) => migration.to_string(),
            Err(err) => format!("error: {err}\n"),
        };
        insta::assert_snapshot!(shown);
    });
}
