//! The hub's shared connections: one slot per connection key, counted
//! shares, the grace period, reconnects; and [`HubRef`], the narrow handle
//! through which a lease reaches them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use zr_types::ServerName;

use crate::config::ServerConfig;
use crate::connection::Connection;
use crate::error::McpError;
use crate::host::Host;
use crate::options::{DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_BYTES, HubOptions};

/// Every connection of one hub, by connection key. Dropping it stops every
/// server at once.
#[derive(Debug)]
pub(crate) struct Pool {
    options: HubOptions,
    host: Arc<Host>,
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

/// One counted share of a live connection, already counted in its slot:
/// what a new lease is made of.
#[derive(Debug)]
pub(crate) struct Grant {
    /// The pool that counted it.
    pub(crate) hub: HubRef,
    /// The slot's connection key.
    pub(crate) key: u64,
    /// The connection's generation within the slot.
    pub(crate) generation: u64,
    /// The connection.
    pub(crate) conn: Arc<Connection>,
}

impl Pool {
    /// An empty pool connecting with `options`.
    pub(crate) fn new(options: HubOptions) -> Self {
        Self {
            host: Arc::new(Host::new(options.roots.clone())),
            options,
            slots: Mutex::new(HashMap::new()),
            generations: AtomicU64::new(0),
        }
    }

    /// The options.
    pub(crate) fn options(&self) -> &HubOptions {
        &self.options
    }

    /// The host's side every connection reads.
    pub(crate) fn host(&self) -> &Arc<Host> {
        &self.host
    }

    /// The live connections, in no particular order.
    pub(crate) fn live(&self) -> Vec<Arc<Connection>> {
        self.slots()
            .values()
            .filter_map(|slot| slot.live.as_ref().map(|l| Arc::clone(&l.conn)))
            .collect()
    }

    /// A share of the connection of `config`'s key, connecting if needed
    /// (concurrent acquires of one key share one start).
    ///
    /// # Errors
    ///
    /// As [`Connection::connect`].
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        config: &ServerConfig,
    ) -> Result<Grant, McpError> {
        let key = config.connection_key();
        let connecting = {
            let mut slots = self.slots();
            let slot = slots.entry(key).or_default();
            if let Some(grant) = self.try_grant(slot, key, config) {
                return Ok(grant);
            }
            Arc::clone(&slot.connecting)
        };
        let _connecting = connecting.lock().await;
        if let Some(grant) = {
            let mut slots = self.slots();
            let slot = slots.entry(key).or_default();
            self.try_grant(slot, key, config)
        } {
            return Ok(grant);
        }
        let conn = Arc::new(Connection::connect(config, &self.options, &self.host).await?);
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        let replaced = {
            let mut slots = self.slots();
            let slot = slots.entry(key).or_default();
            slot.live.replace(Live {
                conn: Arc::clone(&conn),
                generation,
                leases: 1,
                epoch: 0,
            })
        };
        drop(replaced);
        Ok(Grant {
            hub: HubRef(Arc::downgrade(self)),
            key,
            generation,
            conn,
        })
    }

    /// How many leases share the live connection of `key` (0 when there is
    /// none).
    pub(crate) fn lease_count(&self, key: u64) -> usize {
        let slots = self.slots();
        slots
            .get(&key)
            .and_then(|slot| slot.live.as_ref())
            .map_or(0, |live| live.leases)
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<u64, Slot>> {
        // The map stays consistent even if a holder panicked: every update
        // is a single assignment.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new share of the slot's connection if it is alive; a dead one is
    /// taken out so the caller connects again.
    fn try_grant(
        self: &Arc<Self>,
        slot: &mut Slot,
        key: u64,
        config: &ServerConfig,
    ) -> Option<Grant> {
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
        Some(Grant {
            hub: HubRef(Arc::downgrade(self)),
            key,
            generation: live.generation,
            conn: Arc::clone(&live.conn),
        })
    }

    /// One more lease of an existing generation (a cloned lease).
    fn retain(&self, key: u64, generation: u64) {
        let mut slots = self.slots();
        if let Some(live) = slots.get_mut(&key).and_then(|s| s.live.as_mut())
            && live.generation == generation
        {
            live.add_lease();
        }
    }

    /// A lease was dropped; the last one starts the grace period.
    fn release(self: &Arc<Self>, key: u64, generation: u64, server: &ServerName) {
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

impl Drop for Pool {
    fn drop(&mut self) {
        let slots = self.slots.get_mut().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.values() {
            if let Some(live) = &slot.live {
                live.conn.stop_now();
            }
        }
    }
}

/// The hub as a lease sees it: a weak reference, so a lease never keeps
/// servers alive after the hub is gone, with only what a lease asks of it.
#[derive(Debug, Clone)]
pub(crate) struct HubRef(Weak<Pool>);

impl HubRef {
    /// The hub's default call time limit ([`DEFAULT_CALL_TIMEOUT`] once the
    /// hub is gone).
    pub(crate) fn call_timeout(&self) -> Duration {
        self.0
            .upgrade()
            .map_or(DEFAULT_CALL_TIMEOUT, |hub| hub.options.call_timeout)
    }

    /// The hub's result size limit ([`DEFAULT_MAX_RESULT_BYTES`] once the
    /// hub is gone).
    pub(crate) fn max_result_bytes(&self) -> usize {
        self.0
            .upgrade()
            .map_or(DEFAULT_MAX_RESULT_BYTES, |hub| hub.options.max_result_bytes)
    }

    /// Counts one more lease of `generation` (a cloned lease).
    pub(crate) fn retain(&self, key: u64, generation: u64) {
        if let Some(hub) = self.0.upgrade() {
            hub.retain(key, generation);
        }
    }

    /// A lease of `generation` was dropped; the last one starts the grace
    /// period.
    pub(crate) fn release(&self, key: u64, generation: u64, server: &ServerName) {
        if let Some(hub) = self.0.upgrade() {
            hub.release(key, generation, server);
        }
    }

    /// A new share of `config`'s connection from the hub, connecting if
    /// needed, as [`Pool::acquire`]. `None` when the hub was dropped.
    pub(crate) async fn acquire(&self, config: &ServerConfig) -> Option<Result<Grant, McpError>> {
        let hub = self.0.upgrade()?;
        Some(hub.acquire(config).await)
    }
}
