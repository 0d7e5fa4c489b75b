//! Tests of the token store: the user folder, private files keyed by URL, damaged files.
use std::os::unix::fs::PermissionsExt as _;

use rmcp::transport::auth::{CredentialStore as _, StoredCredentials};
use zr_types::ServerName;

use super::TokenStore;

fn name(text: &str) -> ServerName {
    text.parse().expect("a valid name")
}

#[test]
fn the_user_folder_comes_from_zr_config_dir_then_xdg_then_home() {
    let vars = |set: &'static [(&'static str, &'static str)]| {
        move |n: &str| {
            set.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let all = vars(&[
        ("ZR_CONFIG_DIR", "/z"),
        ("XDG_CONFIG_HOME", "/x"),
        ("HOME", "/h"),
    ]);
    assert_eq!(
        TokenStore::for_user(&all).unwrap().dir(),
        std::path::Path::new("/z/mcp-auth")
    );
    let xdg = vars(&[
        ("ZR_CONFIG_DIR", ""),
        ("XDG_CONFIG_HOME", "/x"),
        ("HOME", "/h"),
    ]);
    assert_eq!(
        TokenStore::for_user(&xdg).unwrap().dir(),
        std::path::Path::new("/x/zr/mcp-auth")
    );
    let home = vars(&[("HOME", "/h")]);
    assert_eq!(
        TokenStore::for_user(&home).unwrap().dir(),
        std::path::Path::new("/h/.config/zr/mcp-auth")
    );
    assert!(TokenStore::for_user(&vars(&[])).is_none());
}

#[tokio::test]
async fn a_saved_login_is_private_keyed_by_url_and_removable() {
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path().join("mcp-auth"));
    let server = name("tracker");
    let tokens = store.server(&server, "https://a.example/mcp");
    tokens.set_client(
        Some("http://127.0.0.1:1/callback".to_owned()),
        Some("s3cret".to_owned()),
    );
    tokens
        .save(StoredCredentials::new(
            "client-1".to_owned(),
            None,
            vec!["read".to_owned()],
            Some(1),
        ))
        .await
        .unwrap();
    let path = store.path(&server, "https://a.example/mcp");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert!(store.contains(&server, "https://a.example/mcp"));
    // Another URL under the same name is another server.
    assert!(!store.contains(&server, "https://b.example/mcp"));

    let again = store.server(&server, "https://a.example/mcp");
    let (record, credentials) = again.read().unwrap().expect("a stored login");
    assert_eq!(record.client_secret.as_deref(), Some("s3cret"));
    assert_eq!(credentials.client_id, "client-1");
    assert_eq!(credentials.granted_scopes, ["read"]);
    // Its Debug form does not show the secret.
    assert!(!format!("{record:?}").contains("s3cret"));

    assert!(store.remove(&server, "https://a.example/mcp").unwrap());
    assert!(!store.remove(&server, "https://a.example/mcp").unwrap());
    assert!(again.load().await.unwrap().is_none());
}

#[test]
fn a_damaged_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::new(dir.path());
    let server = name("tracker");
    std::fs::write(store.path(&server, "https://a.example/mcp"), "{not json").unwrap();
    let error = store
        .server(&server, "https://a.example/mcp")
        .read()
        .unwrap_err();
    assert!(error.to_string().contains("is damaged"), "{error}");
    assert!(error.to_string().contains("tracker-"), "{error}");
}

fn credentials() -> StoredCredentials {
    StoredCredentials::new(
        "client-1".to_owned(),
        None,
        vec!["read".to_owned()],
        Some(1),
    )
}

#[tokio::test]
async fn an_existing_folder_open_to_others_is_made_private() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mcp-auth");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let store = TokenStore::new(&folder);
    let server = name("tracker");
    store
        .server(&server, "https://a.example/mcp")
        .save(credentials())
        .await
        .unwrap();
    let mode = std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[tokio::test]
async fn a_planted_link_at_the_temporary_name_redirects_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mcp-auth");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let store = TokenStore::new(&folder);
    let server = name("tracker");
    let path = store.path(&server, "https://a.example/mcp");
    // Another file of the user's, and a link to it where the old code
    // wrote its temporary file.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, path.with_extension("json.tmp")).unwrap();
    store
        .server(&server, "https://a.example/mcp")
        .save(credentials())
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(std::fs::read_to_string(&path).unwrap().contains("client-1"));
    // No temporary file of zr's is left beside it.
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && !n.ends_with(".json.tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
