//! Tests of reading `WWW-Authenticate` parameters.
use super::parameter;

#[test]
fn parameters_of_a_challenge_are_read_quoted_or_bare() {
    let header = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#;
    assert_eq!(
        parameter(header, "scope").as_deref(),
        Some("mcp:basic mcp:write")
    );
    assert_eq!(
        parameter(header, "error").as_deref(),
        Some("insufficient_scope")
    );
    assert_eq!(
        parameter("Bearer scope=read, realm=x", "scope").as_deref(),
        Some("read")
    );
    // `error_description` is not `error`, and `xscope` is not `scope`.
    assert_eq!(parameter(r#"Bearer error_description="no""#, "error"), None);
    assert_eq!(parameter(r#"Bearer xscope="a""#, "scope"), None);
    assert_eq!(parameter("Bearer", "scope"), None);
}
