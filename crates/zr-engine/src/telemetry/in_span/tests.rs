//! The span tree under [`InSpan`] is `Instrumented`'s: spans made while
//! the future runs, and while it is dropped (finished or cancelled), are
//! children of its span; a finished future's drop enters the span no
//! more.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_util::task::noop_waker_ref;
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use super::*;

/// Each span's parent (by name), and how often each span was entered.
#[derive(Debug, Default)]
struct Seen {
    parents: BTreeMap<&'static str, Option<String>>,
    enters: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Default)]
struct Record(Arc<Mutex<Seen>>);

impl<S> tracing_subscriber::Layer<S> for Record
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.name().to_owned());
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.parents.insert(attrs.metadata().name(), parent);
    }

    fn on_enter(&self, id: &Id, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut seen = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *seen.enters.entry(span.name().to_owned()).or_default() += 1;
        }
    }
}

/// Makes a span called `inside_drop` when dropped.
struct SpanOnDrop;

impl Drop for SpanOnDrop {
    fn drop(&mut self) {
        let _made = tracing::info_span!("inside_drop").entered();
    }
}

/// Runs `f` with a subscriber that records into the returned [`Seen`].
fn recorded(f: impl FnOnce()) -> Seen {
    let record = Record::default();
    // tokio-rs/tracing#3611: with one dispatcher registered, a callsite's
    // first hit asks only the thread's default; a second live one makes
    // every first hit ask the registered ones (as the engine's span test).
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    let subscriber = tracing_subscriber::registry().with(record.clone());
    tracing::subscriber::with_default(subscriber, f);
    std::mem::take(
        &mut *record
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

fn poll_once<F: std::future::Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(noop_waker_ref()))
}

#[test]
fn a_finished_future_and_what_it_held_are_dropped_in_its_span_entered_once_a_poll() {
    let seen = recorded(|| {
        let held = SpanOnDrop;
        let mut future = std::pin::pin!(in_span(
            async move {
                let _held = held;
                let _made = tracing::info_span!("inside_poll").entered();
                tokio::task::yield_now().await;
                7
            },
            Traced::log_only(tracing::info_span!("outer_finished")),
        ));
        assert_eq!(poll_once(future.as_mut()), Poll::Pending);
        assert_eq!(poll_once(future.as_mut()), Poll::Ready(7));
    });
    assert_eq!(
        seen.parents["inside_poll"].as_deref(),
        Some("outer_finished")
    );
    assert_eq!(
        seen.parents["inside_drop"].as_deref(),
        Some("outer_finished")
    );
    assert_eq!(
        seen.enters["outer_finished"], 2,
        "two polls, no enter to drop"
    );
}

#[test]
fn a_cancelled_future_is_dropped_in_its_span() {
    let seen = recorded(|| {
        let held = SpanOnDrop;
        let mut future = Box::pin(in_span(
            async move {
                let _held = held;
                std::future::pending::<()>().await;
            },
            Traced::log_only(tracing::info_span!("outer_cancelled")),
        ));
        assert_eq!(poll_once(future.as_mut()), Poll::Pending);
        drop(future);
    });
    assert_eq!(
        seen.parents["inside_drop"].as_deref(),
        Some("outer_cancelled")
    );
    assert_eq!(seen.enters["outer_cancelled"], 2, "one poll, one drop");
}

#[test]
fn a_future_never_polled_is_dropped_in_its_span() {
    let seen = recorded(|| {
        let held = SpanOnDrop;
        drop(in_span(
            async move {
                let _held = held;
            },
            Traced::log_only(tracing::info_span!("outer_unpolled")),
        ));
    });
    assert_eq!(
        seen.parents["inside_drop"].as_deref(),
        Some("outer_unpolled")
    );
}
