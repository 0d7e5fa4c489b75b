//! The current span: set for each poll of a future in a span, restored
//! after it, nested as the futures are; a span started inside is the
//! current one's child, and a child process started inside gets its
//! trace context.

use std::pin::pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use futures_util::task::noop_waker_ref;

use super::*;
use crate::telemetry::in_span::in_span;

/// A span that knows its name and its parent's.
#[derive(Debug)]
struct Named {
    name: String,
    parent: Option<String>,
}

impl TraceSpan for Named {
    fn set(&self, _: &[Attribute<'_>]) {}
    fn add_event(&self, _: &'static str, _: &[Attribute<'_>]) {}
    fn set_error(&self, _: Option<&str>) {}
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn context(&self) -> Option<TraceContext> {
        Some(TraceContext {
            traceparent: format!("00-{}", self.name),
            tracestate: if self.name == "stateful" {
                "k=v".to_owned()
            } else {
                String::new()
            },
        })
    }
}

/// Names each span after its first attribute's value.
#[derive(Debug, Default)]
struct Naming(Mutex<Vec<(String, Option<String>)>>);

impl Tracer for Naming {
    fn capture_content(&self) -> bool {
        false
    }

    fn start(
        &self,
        parent: Option<&Arc<dyn TraceSpan>>,
        start: &SpanStart<'_>,
    ) -> Arc<dyn TraceSpan> {
        let name = match start.attributes.first().map(|a| a.value) {
            Some(AttributeValue::Str(name)) => name.to_owned(),
            other => panic!("a test span is named by a string: {other:?}"),
        };
        let parent = parent.map(|p| {
            p.as_any()
                .downcast_ref::<Named>()
                .expect("this tracer's span")
                .name
                .clone()
        });
        self.0.lock().unwrap().push((name.clone(), parent.clone()));
        Arc::new(Named { name, parent })
    }
}

fn span(tracer: &Arc<dyn Tracer>, name: &str) -> Traced {
    Traced::start(
        tracing::Span::none(),
        Some(tracer),
        current_export().as_ref(),
        "test",
        SpanKind::Internal,
        || [str("name", name)],
    )
}

fn current_name() -> Option<String> {
    current_export().map(|s| s.as_any().downcast_ref::<Named>().unwrap().name.clone())
}

fn poll_once<F: std::future::Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(noop_waker_ref()))
}

#[test]
fn spans_started_in_a_poll_are_children_of_the_polled_futures_span() {
    let naming = Arc::new(Naming::default());
    let tracer: Arc<dyn Tracer> = naming.clone();
    let outer = span(&tracer, "outer");
    let tracer_in = Arc::clone(&tracer);
    let mut future = pin!(in_span(
        async move {
            let inner = span(&tracer_in, "inner");
            let tracer_deeper = Arc::clone(&tracer_in);
            in_span(
                async move {
                    assert_eq!(current_name().as_deref(), Some("inner"));
                    tokio::task::yield_now().await;
                    let _leaf = span(&tracer_deeper, "leaf");
                },
                inner,
            )
            .await;
            // Back in the outer future's span.
            assert_eq!(current_name().as_deref(), Some("outer"));
            let _sibling = span(&tracer_in, "sibling");
        },
        outer,
    ));
    assert_eq!(poll_once(future.as_mut()), Poll::Pending);
    assert_eq!(current_name(), None, "restored between polls");
    assert_eq!(poll_once(future.as_mut()), Poll::Ready(()));
    assert_eq!(current_name(), None);
    assert_eq!(
        *naming.0.lock().unwrap(),
        [
            ("outer".to_owned(), None),
            ("inner".to_owned(), Some("outer".to_owned())),
            ("leaf".to_owned(), Some("inner".to_owned())),
            ("sibling".to_owned(), Some("outer".to_owned())),
        ]
    );
}

#[test]
fn without_a_tracer_nothing_is_current_and_nothing_is_made() {
    let mut traced = session_span(None, &SessionId::from_parts(1, 2));
    assert!(traced.export.is_none());
    let _entered = traced.enter();
    assert!(current_export().is_none());
    let current = Traced::current();
    assert!(current.export.is_none());
}

#[test]
fn the_current_span_is_kept_by_the_parent_handle_it_was_taken_from() {
    let tracer: Arc<dyn Tracer> = Arc::new(Naming::default());
    let mut outer = span(&tracer, "outer");
    let taken = {
        let _entered = outer.enter();
        Traced::current()
    };
    drop(outer);
    let kept = taken.export.expect("the current span, taken");
    let named = kept.as_any().downcast_ref::<Named>().unwrap();
    assert_eq!(
        (named.name.as_str(), named.parent.as_deref()),
        ("outer", None)
    );
}

#[test]
fn a_child_process_gets_the_current_spans_trace_context() {
    let tracer: Arc<dyn Tracer> = Arc::new(Naming::default());
    let host: std::collections::BTreeMap<String, String> = [
        (TRACEPARENT_VAR.to_owned(), "00-host".to_owned()),
        (TRACESTATE_VAR.to_owned(), "host=1".to_owned()),
        ("PATH".to_owned(), "/bin".to_owned()),
    ]
    .into_iter()
    .collect();

    // Outside any span the environment is left as it is.
    let mut env = host.clone();
    pass_trace_context(&mut env);
    assert_eq!(env, host);

    let mut call = span(&tracer, "call");
    {
        let _entered = call.enter();
        let mut env = host.clone();
        pass_trace_context(&mut env);
        assert_eq!(env[TRACEPARENT_VAR], "00-call");
        assert!(!env.contains_key(TRACESTATE_VAR), "the span has no state");
        assert_eq!(env["PATH"], "/bin");
    }
    let mut stateful = span(&tracer, "stateful");
    let _entered = stateful.enter();
    let mut env = host.clone();
    pass_trace_context(&mut env);
    assert_eq!(env[TRACEPARENT_VAR], "00-stateful");
    assert_eq!(env[TRACESTATE_VAR], "k=v");
}
