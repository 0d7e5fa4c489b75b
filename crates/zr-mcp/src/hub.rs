//! The connection hub: leases that share one connection per configuration, a grace period, reconnects.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use zr_types::ServerName;

use crate::client::ClientIdentity;
use crate::connection::Connection;
use crate::lease::{Lease, McpTool};
use crate::{McpConfig, McpError, ServerConfig, child};

/// The default of [`HubOptions::call_timeout`].
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The default of [`HubOptions::max_result_bytes`].
pub(crate) const DEFAULT_MAX_RESULT_BYTES: usize = 100 * 1024;

/// How the hub connects, shares and bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HubOptions {
    /// How long a connection stays open after its last lease is dropped;
    /// an acquire inside this window reuses it. Default 30 s.
    pub grace: Duration,
    /// The time limit of the handshake. Default 5 s.
    pub connect_timeout: Duration,
    /// The time limit of a tool call (and of `tools/list`) when the server
    /// sets no `timeout_ms`. Default 120 s.
    pub call_timeout: Duration,
    /// The largest tool result handed to the model, in bytes; the rest is
    /// cut with a note. Default 100 KiB.
    pub max_result_bytes: usize,
    /// The largest single MCP message read from a stdio server. A longer
    /// one ends the session: waiting calls fail with
    /// [`McpError::MessageTooLarge`] and the next acquire restarts the
    /// server. Over HTTP the SDK applies the same limit to each event or
    /// response. Default 64 MiB.
    pub max_message_bytes: usize,
    /// The folder relative `cwd` settings are resolved against, and the
    /// working folder of servers without one.
    pub cwd: PathBuf,
    /// The variables every child process gets besides its configured ones.
    /// [`HubOptions::new`] takes `PATH`, `HOME` and `LANG` from the host.
    pub base_env: BTreeMap<String, String>,
    /// The client name announced in the handshake. Default `zr`.
    pub client_name: String,
    /// The client version announced. Default this crate's version.
    pub client_version: String,
}

impl HubOptions {
    /// The defaults, with servers working in `cwd` and the base environment
    /// taken from the host's `PATH`, `HOME` and `LANG`.
    #[must_use]
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let base_env = child::BASE_ENV
            .iter()
            .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
            .collect();
        Self {
            grace: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            max_message_bytes: 64 * 1024 * 1024,
            cwd: cwd.into(),
            base_env,
            client_name: "zr".to_owned(),
            client_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// Sets the grace period.
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets the handshake time limit.
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the default call time limit.
    #[must_use]
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the result size limit.
    #[must_use]
    pub fn with_max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// Sets the message size limit.
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// Sets the client name and version announced to servers.
    #[must_use]
    pub fn with_client(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_name = name.into();
        self.client_version = version.into();
        self
    }

    pub(crate) fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            name: self.client_name.clone(),
            version: self.client_version.clone(),
        }
    }
}

/// The MCP connection hub: starts servers on demand and shares their
/// connections.
///
/// - [`McpHub::acquire`] returns a [`Lease`]. Leases of the same
///   configuration (see [`ServerConfig::connection_key`]) share one
///   connection and are counted.
/// - When the last lease is dropped, the connection closes after the grace
///   period; an acquire inside that window reuses it.
/// - A failed connection is not kept: the next acquire tries again. A
///   connection whose server exited is replaced on the next acquire.
/// - Dropping the last handle of the hub stops every server at once (their
///   process groups are killed), even while leases remain; calls through
///   those leases then fail with [`McpError::HubDropped`].
///
/// The hub is a cheap handle: clones share the same connections. It needs
/// a Tokio runtime.
#[derive(Debug, Clone)]
pub struct McpHub {
    inner: Arc<HubInner>,
}

#[derive(Debug)]
pub(crate) struct HubInner {
    config: McpConfig,
    pub(crate) options: HubOptions,
    slots: Mutex<HashMap<u64, Slot>>,
    generations: AtomicU64,
}

#[derive(Debug, Default)]
struct Slot {
    /// Held while connecting, so that concurrent acquires share one start.
    connecting: Arc<tokio::sync::Mutex<()>>,
    live: Option<Live>,
}

#[derive(Debug)]
struct Live {
    conn: Arc<Connection>,
    generation: u64,
    leases: usize,
    /// Bumped whenever the lease count leaves or reaches zero: a close timer
    /// started at another epoch does nothing.
    epoch: u64,
}

impl Live {
    /// Counts one more lease; the first after none ends the grace period
    /// (a close timer of the old epoch then does nothing).
    fn add_lease(&mut self) {
        self.leases += 1;
        if self.leases == 1 {
            self.epoch += 1;
        }
    }
}

impl McpHub {
    /// A hub for the servers of `config`.
    #[must_use]
    pub fn new(config: McpConfig, options: HubOptions) -> Self {
        Self {
            inner: Arc::new(HubInner {
                config,
                options,
                slots: Mutex::new(HashMap::new()),
                generations: AtomicU64::new(0),
            }),
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &McpConfig {
        &self.inner.config
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &HubOptions {
        &self.inner.options
    }

    /// A lease on the configured server `server`, connecting if needed.
    ///
    /// # Errors
    ///
    /// [`McpError::UnknownServer`] for a name not in the configuration,
    /// else as [`McpHub::acquire_config`].
    pub async fn acquire(&self, server: &str) -> Result<Lease, McpError> {
        let config = self
            .inner
            .config
            .get(server)
            .ok_or_else(|| McpError::UnknownServer {
                server: server.to_owned(),
            })?
            .clone();
        self.acquire_config(config).await
    }

    /// A lease on a server given by its configuration (an agent's own
    /// `mcpServers` entry, say); shared with every lease of the same
    /// transport settings.
    ///
    /// # Errors
    ///
    /// The server could not be started ([`McpError::Spawn`]), did not
    /// complete the handshake in time ([`McpError::ConnectTimeout`]), failed
    /// it ([`McpError::Initialize`]) or exited during it
    /// ([`McpError::Exited`]).
    pub async fn acquire_config(&self, config: ServerConfig) -> Result<Lease, McpError> {
        let key = config.connection_key();
        let connecting = {
            let mut slots = self.inner.slots();
            let slot = slots.entry(key).or_default();
            if let Some(lease) = self.inner.try_lease(slot, key, &config) {
                return Ok(lease);
            }
            Arc::clone(&slot.connecting)
        };
        let _connecting = connecting.lock().await;
        if let Some(lease) = {
            let mut slots = self.inner.slots();
            let slot = slots.entry(key).or_default();
            self.inner.try_lease(slot, key, &config)
        } {
            return Ok(lease);
        }
        let conn = Arc::new(Connection::connect(&config, &self.inner.options).await?);
        let generation = self.inner.generations.fetch_add(1, Ordering::Relaxed);
        let replaced = {
            let mut slots = self.inner.slots();
            let slot = slots.entry(key).or_default();
            slot.live.replace(Live {
                conn: Arc::clone(&conn),
                generation,
                leases: 1,
                epoch: 0,
            })
        };
        drop(replaced);
        Ok(Lease::new(
            Arc::downgrade(&self.inner),
            key,
            generation,
            conn,
            config,
        ))
    }

    /// The hub behind a lease's weak reference, while it exists.
    pub(crate) fn upgrade(hub: &HubRef) -> Option<Self> {
        hub.upgrade().map(|inner| Self { inner })
    }

    /// The tools of the configured server `server`, connecting if needed.
    /// Each tool's handler holds a lease, so the connection stays open
    /// while any of them is kept.
    ///
    /// # Errors
    ///
    /// As [`McpHub::acquire`] and [`Lease::tools`].
    pub async fn tools(&self, server: &str) -> Result<Vec<McpTool>, McpError> {
        self.acquire(server).await?.tools().await
    }

    /// How many leases share the connection of `server`'s configuration
    /// (0 when there is no live connection). Every tool handler from
    /// [`Lease::tools`] holds one.
    #[must_use]
    pub fn lease_count(&self, server: &str) -> usize {
        let Some(config) = self.inner.config.get(server) else {
            return 0;
        };
        let slots = self.inner.slots();
        slots
            .get(&config.connection_key())
            .and_then(|slot| slot.live.as_ref())
            .map_or(0, |live| live.leases)
    }
}

impl HubInner {
    fn slots(&self) -> MutexGuard<'_, HashMap<u64, Slot>> {
        // The map stays consistent even if a holder panicked: every update
        // is a single assignment.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new lease on the slot's connection if it is alive; a dead one is
    /// taken out so the caller connects again.
    fn try_lease(
        self: &Arc<Self>,
        slot: &mut Slot,
        key: u64,
        config: &ServerConfig,
    ) -> Option<Lease> {
        let live = slot.live.as_mut()?;
        if !live.conn.is_alive() {
            tracing::info!(server = %config.name, "MCP connection is gone; reconnecting");
            // Leases of it may live on, but nothing can go through it any
            // more: what is left of its process group (a wrapper that
            // outlived the session) is stopped now, not when they go.
            live.conn.abandon();
            slot.live = None;
            return None;
        }
        live.add_lease();
        Some(Lease::new(
            Arc::downgrade(self),
            key,
            live.generation,
            Arc::clone(&live.conn),
            config.clone(),
        ))
    }

    /// One more lease of an existing generation (a cloned lease).
    pub(crate) fn retain(&self, key: u64, generation: u64) {
        let mut slots = self.slots();
        if let Some(live) = slots.get_mut(&key).and_then(|s| s.live.as_mut())
            && live.generation == generation
        {
            live.add_lease();
        }
    }

    /// A lease was dropped; the last one starts the grace period.
    pub(crate) fn release(self: &Arc<Self>, key: u64, generation: u64, server: &ServerName) {
        let mut slots = self.slots();
        let Some(slot) = slots.get_mut(&key) else {
            return;
        };
        let Some(live) = slot.live.as_mut().filter(|l| l.generation == generation) else {
            return;
        };
        live.leases = live.leases.saturating_sub(1);
        if live.leases > 0 {
            return;
        }
        live.epoch += 1;
        let epoch = live.epoch;
        let runtime = tokio::runtime::Handle::try_current();
        match runtime {
            Ok(runtime) if !self.options.grace.is_zero() => {
                let hub = Arc::downgrade(self);
                let grace = self.options.grace;
                let server = server.clone();
                drop(slots);
                runtime.spawn(async move {
                    tokio::time::sleep(grace).await;
                    // The hub is not held while the server exits: dropping
                    // it meanwhile still stops its other servers at once.
                    let idle = hub
                        .upgrade()
                        .and_then(|hub| hub.expire(key, generation, epoch));
                    if let Some(conn) = idle {
                        tracing::debug!(server = %server, "grace period over; closing MCP connection");
                        conn.close().await;
                    }
                });
            }
            Ok(runtime) => {
                let conn = slot.live.take().map(|l| l.conn);
                drop(slots);
                if let Some(conn) = conn {
                    runtime.spawn(conn.close());
                }
            }
            // No runtime to close politely: the last reference kills it.
            Err(_) => {
                let live = slot.live.take();
                drop(slots);
                drop(live);
            }
        }
    }

    /// Takes the connection out of its slot if it is still the idle one
    /// the timer was started for.
    fn expire(&self, key: u64, generation: u64, epoch: u64) -> Option<Arc<Connection>> {
        let mut slots = self.slots();
        let slot = slots.get_mut(&key)?;
        let idle = slot
            .live
            .as_ref()
            .is_some_and(|l| l.generation == generation && l.epoch == epoch && l.leases == 0);
        if !idle {
            return None;
        }
        slot.live.take().map(|l| l.conn)
    }
}

impl Drop for HubInner {
    fn drop(&mut self) {
        let slots = self.slots.get_mut().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.values() {
            if let Some(live) = &slot.live {
                live.conn.stop_now();
            }
        }
    }
}

/// Weak reference to the hub held by leases: a lease never keeps servers
/// alive after the hub is gone.
pub(crate) type HubRef = Weak<HubInner>;
