//! [`InSpan`]: a future run inside a span of the engine ([`Traced`]: its
//! `tracing` span and its exported one), as `tracing`'s `Instrumented`
//! runs a future in a span (the span entered for every poll, and for
//! dropping the future), except that a future that has finished is
//! dropped at once, inside the poll that finished it, so that dropping
//! the wrapper afterwards does not enter the span a second time.
//!
//! The span tree is the same as with `Instrumented`: whatever the future
//! does, and whatever its drop does (finished or cancelled), happens with
//! the span entered. With a subscriber, an enter and an exit are each a
//! call through it (the registry's span stack, a slot lookup per layer
//! filter); `Instrumented`'s drop made half of the fan-out's enters.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use crate::telemetry::Traced;

pin_project_lite::pin_project! {
    /// See the module's documentation; made by [`in_span`].
    #[derive(Debug)]
    pub(crate) struct InSpan<F> {
        span: Traced,
        #[pin]
        state: State<F>,
    }

    impl<F> PinnedDrop for InSpan<F> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            if let StateProj::Running { .. } = this.state.as_mut().project() {
                // Cancelled: dropped inside the span, as `Instrumented` does.
                let _entered = this.span.enter();
                this.state.project_replace(State::Done);
            }
        }
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    #[project_replace = StateReplace]
    #[derive(Debug)]
    enum State<F> {
        Running { #[pin] future: F },
        Done,
    }
}

/// `future`, run inside `span`.
pub(crate) fn in_span<F: Future>(future: F, span: Traced) -> InSpan<F> {
    InSpan {
        span,
        state: State::Running { future },
    }
}

impl<F: Future> Future for InSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let mut this = self.project();
        let _entered = this.span.enter();
        match this.state.as_mut().project() {
            StateProj::Running { future } => {
                let output = ready!(future.poll(cx));
                // Dropped here, with the span entered.
                this.state.project_replace(State::Done);
                Poll::Ready(output)
            }
            // As an `async fn` resumed after it returned.
            StateProj::Done => panic!("InSpan polled after it finished"),
        }
    }
}

#[cfg(test)]
mod tests;
