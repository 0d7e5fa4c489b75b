//! The exporter against a loopback OTLP/HTTP receiver (zr-providers'
//! replay server): gzip, the configured headers, retries on 429 and 503
//! as the OTLP specification asks, HTTP/JSON; and a scripted session
//! given a host's `TRACEPARENT`, whose spans are the host's children and
//! whose Bash command sees its call's span as `TRACEPARENT`.

use std::io::Read as _;
use std::sync::Arc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::{Value, json};
use zr_caps::RuntimeSettings;
use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider, SpanKind, SpanStart};
use zr_telemetry::{Protocol, Telemetry, TelemetryConfig, TraceParent};
use zr_tools::BuiltinTools;

use zr_test_support::replay::{Recorded, Replay, Reply};

/// One span, `session`, exported with `config` and shut down.
async fn export_one_span(config: TelemetryConfig) {
    let telemetry = Telemetry::start(config).unwrap();
    drop(telemetry.tracer().start(
        None,
        &SpanStart {
            operation: "session",
            kind: SpanKind::Internal,
            attributes: &[],
        },
    ));
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .unwrap();
}

fn body(request: &Recorded) -> Vec<u8> {
    if request.header("content-encoding") == Some("gzip") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&request.body[..])
            .read_to_end(&mut out)
            .expect("a gzip body");
        out
    } else {
        request.body.clone()
    }
}

fn spans(request: &Recorded) -> Vec<Span> {
    ExportTraceServiceRequest::decode(&body(request)[..])
        .expect("an OTLP protobuf export request")
        .resource_spans
        .into_iter()
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn http_exports_are_gzipped_carry_the_headers_and_are_retried_on_429_and_503() {
    let server = Replay::start(vec![
        Reply::typed(429, "text/plain", "slow down").header("retry-after", "0"),
        Reply::typed(503, "text/plain", "unavailable"),
        Reply::typed(200, "application/x-protobuf", ""),
    ])
    .await;
    let mut config = TelemetryConfig::new(format!("{}/v1/traces", server.url()));
    config.gzip = true;
    config.headers = vec![("x-api-key".to_owned(), "secret".to_owned())];
    export_one_span(config).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "429 and 503 are retried: {requests:#?}");
    for request in &requests {
        assert_eq!(request.path, "/v1/traces");
        assert_eq!(
            request.header("content-type"),
            Some("application/x-protobuf")
        );
        assert_eq!(request.header("content-encoding"), Some("gzip"));
        assert_eq!(request.header("x-api-key"), Some("secret"));
        let names: Vec<String> = spans(request).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["session"]);
    }
}

#[tokio::test]
async fn a_400_is_not_retried() {
    let server = Replay::start(vec![
        Reply::typed(400, "text/plain", "bad"),
        Reply::typed(200, "application/x-protobuf", ""),
    ])
    .await;
    export_one_span(TelemetryConfig::new(format!("{}/v1/traces", server.url()))).await;
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn http_json_exports_are_otlp_json() {
    let server = Replay::start(vec![Reply::json(200, "{}")]).await;
    let mut config = TelemetryConfig::new(format!("{}/v1/traces", server.url()));
    config.protocol = Protocol::HttpJson;
    export_one_span(config).await;

    let [request] = &server.requests()[..] else {
        panic!("one request");
    };
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(
        request.header("content-encoding").is_none(),
        "no gzip unless asked"
    );
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(
        body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"],
        json!("session")
    );
}

const HOST_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HOST_SPAN: &str = "b7ad6b7169203331";

#[tokio::test]
async fn a_run_given_traceparent_is_its_child_and_its_bash_command_sees_its_call_span() {
    let server = Replay::start(vec![Reply::typed(200, "application/x-protobuf", ""); 4]).await;
    let mut config = TelemetryConfig::new(format!("{}/v1/traces", server.url()));
    config.parent = Some(TraceParent {
        traceparent: format!("00-{HOST_TRACE}-{HOST_SPAN}-01"),
        tracestate: Some("host=1".to_owned()),
    });
    let telemetry = Telemetry::start(config).unwrap();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    {
        let script = json!({"agents": {"root": [{"turns": [
            {"tool_calls": [{"name": "Bash", "input": {"command":
                "printf '%s %s' \"$TRACEPARENT\" \"$TRACESTATE\" > seen.txt"}}]},
            {"text": "done"}
        ]}]}});
        let provider = Arc::new(ScriptedProvider::from_json(&script.to_string()).unwrap());
        let settings = RuntimeSettings {
            model: "scripted-model".to_owned(),
            cwd: dir.path().to_path_buf(),
            env: [
                ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
                // What the host's environment had: replaced by the call's.
                ("TRACEPARENT".to_owned(), "00-stale".to_owned()),
            ]
            .into_iter()
            .collect(),
        };
        let runtime = RuntimeEnvironment::new(
            provider,
            settings,
            BuiltinTools::new(dir.path().join("cron.json")),
        )
        .with_tracer(telemetry.tracer());
        let agent = Agent::new(Arc::new(runtime), AgentConfig::new("root"));
        assert_eq!(agent.prompt("run it").await.unwrap().output, "done");
    }
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .unwrap();

    let spans: Vec<Span> = server.requests().iter().flat_map(spans).collect();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    for span in &spans {
        assert_eq!(
            hex(&span.trace_id),
            HOST_TRACE,
            "{}: the host's trace",
            span.name
        );
    }
    let session = spans
        .iter()
        .find(|s| s.name == "session")
        .unwrap_or_else(|| panic!("a session span in {names:?}"));
    assert_eq!(hex(&session.parent_span_id), HOST_SPAN, "the host's child");
    assert_eq!(session.trace_state, "host=1");
    let bash = spans
        .iter()
        .find(|s| s.name == "execute_tool Bash")
        .unwrap_or_else(|| panic!("a Bash call's span in {names:?}"));
    let seen = std::fs::read_to_string(dir.path().join("seen.txt")).unwrap();
    assert_eq!(
        seen,
        format!("00-{HOST_TRACE}-{}-01 host=1", hex(&bash.span_id)),
        "the command ran inside its call's span"
    );
}
