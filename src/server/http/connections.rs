//! The open connections under a cap (`--max-connections`, each is a file
//! descriptor), and which one makes room at the cap: the one that has been
//! idle between requests, or sending its request, the longest. Connections
//! answering a request or holding a stream are never closed to make room,
//! so clients that open connections and send nothing (or trickle a body)
//! cannot keep health checks and new clients out; while every connection is
//! busy, a new one waits to be served.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The open connections.
pub struct Connections {
    max: usize,
    open: Mutex<HashMap<u64, Arc<Connection>>>,
    next: AtomicU64,
    /// Told when a connection closes.
    freed: Notify,
    /// Connections closed to make room, for `/metrics`.
    shed: AtomicU64,
    /// Whether the cap was reached (logged once).
    cap_reached: AtomicBool,
}

/// One open connection, as the cap sees it.
pub struct Connection {
    state: Mutex<(State, Instant)>,
    /// Cancelled to close the connection.
    pub close: CancellationToken,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between requests, or sending one (headers, body): may be closed to
    /// make room.
    Waiting,
    /// Its request is being answered.
    Busy,
    /// It holds a stream.
    Streaming,
}

/// A connection's place under the cap, freed when dropped.
pub struct Slot {
    connections: Arc<Connections>,
    id: u64,
    pub connection: Arc<Connection>,
}

impl Connections {
    pub fn new(max: usize) -> Connections {
        Connections {
            max,
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            freed: Notify::new(),
            shed: AtomicU64::new(0),
            cap_reached: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of open connections.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether every open connection holds a stream (none is answering or
    /// waiting for a request).
    pub fn only_streams(&self) -> bool {
        self.lock()
            .values()
            .all(|connection| connection.lock().0 == State::Streaming)
    }

    /// The number of connections closed to make room.
    pub fn shed(&self) -> u64 {
        self.shed.load(Ordering::Relaxed)
    }

    /// A place for a connection just accepted: at once below the cap; at
    /// the cap, once the connection waiting longest was closed for it, or
    /// else once one closes.
    pub async fn admit(self: &Arc<Self>) -> Slot {
        loop {
            let freed = self.freed.notified();
            if let Some(slot) = self.try_admit() {
                return slot;
            }
            freed.await;
        }
    }

    fn try_admit(self: &Arc<Self>) -> Option<Slot> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let victim = open
                .iter()
                .filter_map(|(id, connection)| {
                    let (state, since) = *connection.lock();
                    (state == State::Waiting).then_some((since, *id))
                })
                .min()?;
            // Its place is taken now; the connection closes on its own task.
            if let Some(connection) = open.remove(&victim.1) {
                connection.close.cancel();
            }
            self.shed.fetch_add(1, Ordering::Relaxed);
            if !self.cap_reached.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "{} connections are open (--max-connections): each new one closes the connection idle or slow to send its request longest",
                    self.max
                );
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            state: Mutex::new((State::Waiting, Instant::now())),
            close: CancellationToken::new(),
        });
        open.insert(id, Arc::clone(&connection));
        Some(Slot {
            connections: Arc::clone(self),
            id,
            connection,
        })
    }
}

impl Connection {
    fn lock(&self) -> std::sync::MutexGuard<'_, (State, Instant)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, state: State) {
        *self.lock() = (state, Instant::now());
    }

    /// Its request is being answered.
    pub fn busy(&self) {
        self.set(State::Busy);
    }

    /// It holds a stream.
    pub fn streaming(&self) {
        self.set(State::Streaming);
    }

    /// Its answer was sent: it waits for the next request.
    pub fn waiting(&self) {
        self.set(State::Waiting);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.lock().remove(&self.id);
        self.connections.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_the_cap_the_connection_waiting_longest_makes_room() {
        let connections = Arc::new(Connections::new(3));
        let oldest = connections.admit().await;
        let busy = connections.admit().await;
        busy.connection.busy();
        let streaming = connections.admit().await;
        streaming.connection.streaming();
        oldest.connection.waiting();
        let newest = connections.admit().await;
        assert!(oldest.connection.close.is_cancelled());
        assert!(!busy.connection.close.is_cancelled());
        assert!(!streaming.connection.close.is_cancelled());
        assert_eq!(connections.len(), 3);
        assert_eq!(connections.shed(), 1);
        drop(oldest);
        assert_eq!(connections.len(), 3, "its place was already given");
        // Now none waits: the next one waits for a place.
        newest.connection.busy();
        let admitted = {
            let connections = Arc::clone(&connections);
            tokio::spawn(async move { connections.admit().await })
        };
        tokio::task::yield_now().await;
        assert!(!admitted.is_finished());
        drop(busy);
        let slot = admitted.await.unwrap();
        assert!(!slot.connection.close.is_cancelled());
        assert_eq!(connections.len(), 3);
    }
}
