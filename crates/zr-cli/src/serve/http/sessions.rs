//! The MCP sessions of `zr mcp serve --http`: rmcp's local session
//! manager with a bound. A session nobody has used for the idle time
//! (no request open, no stream open) is closed and forgotten, so that its
//! id then gets 404 as the MCP specification says for an unknown session;
//! at the cap a new session closes the session idle the longest, and is
//! refused when every session is busy.
//!
//! rmcp's own keep-alive is off: it ends a session whose call runs longer
//! than the keep-alive without a notification, and leaves its handle in
//! the manager's map.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionId;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionManager};

/// How a session has been used.
#[derive(Debug, Clone, Copy)]
struct Use {
    /// When its last request or stream began or ended.
    last: Instant,
    /// Its requests and streams open now.
    open: usize,
}

/// The sessions' uses, shared with the guards of their open streams.
type Uses = Arc<Mutex<HashMap<SessionId, Use>>>;

/// rmcp's local sessions, closed when idle and capped in number.
#[derive(Debug)]
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    uses: Uses,
    idle: Duration,
    cap: usize,
}

/// Why a session was not made or used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    /// rmcp's.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// Every one of the `cap` sessions has a request or a stream open.
    #[error("all {cap} MCP sessions are busy; try again when one is done")]
    Full {
        /// The cap.
        cap: usize,
    },
}

impl Sessions {
    /// At most `cap` sessions, each closed after `idle` unused; the task
    /// that closes them runs while the manager lives.
    pub(crate) fn start(idle: Duration, cap: usize) -> Arc<Self> {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = None;
        let sessions = Arc::new(Self {
            inner,
            uses: Arc::default(),
            idle,
            cap: cap.max(1),
        });
        tokio::spawn(sweep(Arc::downgrade(&sessions)));
        sessions
    }

    fn uses(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Use>> {
        self.uses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The sessions idle for `idle` at `now`, taken out of the table.
    fn take_expired(&self, now: Instant) -> Vec<SessionId> {
        let mut uses = self.uses();
        let expired: Vec<SessionId> = uses
            .iter()
            .filter(|(_, u)| u.open == 0 && now.duration_since(u.last) >= self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            uses.remove(id);
        }
        expired
    }

    /// Room for one more session: the session idle the longest is taken
    /// out of the table when the cap is reached (to be closed).
    fn make_room(&self) -> Result<Option<SessionId>, SessionsError> {
        let mut uses = self.uses();
        if uses.len() < self.cap {
            return Ok(None);
        }
        let oldest = uses
            .iter()
            .filter(|(_, u)| u.open == 0)
            .min_by_key(|(_, u)| u.last)
            .map(|(id, _)| id.clone())
            .ok_or(SessionsError::Full { cap: self.cap })?;
        uses.remove(&oldest);
        Ok(Some(oldest))
    }

    /// Marks `id` as used now and busy until the guard is dropped.
    fn busy(&self, id: &SessionId) -> Busy {
        if let Some(u) = self.uses().get_mut(id) {
            u.open += 1;
            u.last = Instant::now();
        }
        Busy {
            uses: Arc::clone(&self.uses),
            id: id.clone(),
        }
    }

    async fn close(&self, id: &SessionId, why: &str) {
        tracing::debug!(session = %id, why, "closing an MCP session");
        if let Err(error) = self.inner.close_session(id).await {
            tracing::debug!(%error, "closing an MCP session failed");
        }
    }
}

/// A request or stream of a session, open while this lives.
#[derive(Debug)]
struct Busy {
    uses: Uses,
    id: SessionId,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut uses = self.uses.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(u) = uses.get_mut(&self.id) {
            u.open = u.open.saturating_sub(1);
            u.last = Instant::now();
        }
    }
}

/// `stream`, keeping `busy` until it is dropped.
fn holding<S>(stream: S, busy: Busy) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static
where
    S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
{
    stream.map(move |message| {
        let _open = &busy;
        message
    })
}

/// Closes the idle sessions of `sessions` until it is gone, checking a
/// few times per idle time.
async fn sweep(sessions: Weak<Sessions>) {
    let every = {
        let Some(s) = sessions.upgrade() else { return };
        (s.idle / 4).max(Duration::from_millis(50))
    };
    loop {
        tokio::time::sleep(every).await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        for id in sessions.take_expired(Instant::now()) {
            sessions.close(&id, "idle").await;
        }
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if let Some(oldest) = self.make_room()? {
            self.close(&oldest, "the session cap was reached").await;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.uses().insert(
            id.clone(),
            Use {
                last: Instant::now(),
                open: 0,
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _busy = self.busy(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.uses().contains_key(id) && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.uses().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(holding(stream, busy))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let _busy = self.busy(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(holding(stream, busy))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(holding(stream, busy))
    }
}
