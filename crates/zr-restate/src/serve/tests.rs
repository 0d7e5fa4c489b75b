//! Tests of `authority`: the `HOST:PORT` of a worker's advertised `http://` URL.

use super::authority;

#[test]
fn an_endpoint_url_is_http_host_and_port() {
    assert_eq!(
        authority("http://127.0.0.1:9080").ok(),
        Some("127.0.0.1:9080")
    );
    assert_eq!(
        authority("http://127.0.0.1:9080/").ok(),
        Some("127.0.0.1:9080")
    );
    for bad in [
        "https://x:1",
        "127.0.0.1:9080",
        "http://",
        "http://h:1/path",
    ] {
        let error = authority(bad).expect_err(bad).to_string();
        assert!(error.contains(bad), "{error}");
    }
}
