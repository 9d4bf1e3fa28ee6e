//! The sessions of 2025-11-25 clients (`Mcp-Session-Id`), held by rmcp's
//! in-memory session manager under two bounds: at most `--max-sessions` open
//! at once (one more ends the session idle longest), and each ends after
//! `--session-idle` without a request (rmcp's keep-alive). Each session also
//! has its own bound on requests in flight, as the stdio connection has.
//!
//! A session belongs to whoever opened it (the token's label, the JWT's
//! subject): [`Sessions::owner`] lets the server answer anyone else as if
//! the session did not exist. rmcp creates a session without telling who
//! asked, so the opener is handed down the task that answers `initialize`
//! ([`OPENER`]).
//!
//! 2026-07-28 clients have no sessions: their requests never come here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionManager};
use tokio::sync::Semaphore;

use crate::server::http::auth::Who;
use crate::server::transport::MAX_IN_FLIGHT;

tokio::task_local! {
    /// Who sent the request being handed to rmcp: the owner of a session
    /// it creates.
    pub static OPENER: Who;
}

/// How long ending an evicted session may take before it is left to end on
/// its own (its worker may be waiting on a client that reads nothing).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// rmcp's session manager with a cap and per-session bounds.
pub struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    open: Mutex<HashMap<SessionId, Entry>>,
    /// Sessions ended to make room, for `/metrics`.
    evicted: AtomicU64,
    /// Whether the cap was reached (logged once).
    cap_reached: AtomicBool,
}

struct Entry {
    owner: Who,
    last_used: Instant,
    /// Requests of this session in flight.
    permits: Arc<Semaphore>,
}

impl Sessions {
    pub fn new(max: usize, idle: Duration) -> Sessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Sessions {
            inner,
            max,
            open: Mutex::new(HashMap::new()),
            evicted: AtomicU64::new(0),
            cap_reached: AtomicBool::new(false),
        }
    }

    /// The number of open sessions.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// The number of sessions ended to make room for new ones.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Who opened session `id`; `None` when no such session is open.
    pub fn owner(&self, id: &str) -> Option<Who> {
        self.lock().get(id).map(|entry| entry.owner.clone())
    }

    /// The bound on requests in flight of session `id`, which counts as used
    /// now; `None` for a session that does not exist (rmcp answers 404).
    pub fn permits(&self, id: &str) -> Option<Arc<Semaphore>> {
        let mut open = self.lock();
        let entry = open.get_mut(id)?;
        entry.last_used = Instant::now();
        Some(Arc::clone(&entry.permits))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Entry>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes room for one more session: ends the one idle longest when the
    /// cap is reached.
    async fn make_room(&self) {
        let victim = {
            let mut open = self.lock();
            if open.len() < self.max {
                return;
            }
            let Some(id) = open
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(id, _)| id.clone())
            else {
                return;
            };
            open.remove(&id);
            id
        };
        if !self.cap_reached.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{} sessions are open (--max-sessions): each new one ends the session idle longest, whose client must start a new one",
                self.max
            );
        }
        self.evicted.fetch_add(1, Ordering::Relaxed);
        // rmcp forgets the session first, then tells its worker, which may be
        // stuck on a client that reads nothing: it then ends with that
        // connection.
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, self.inner.close_session(&victim)).await;
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        // Always set by the server; without it, the session belongs to
        // nobody who can authenticate.
        let owner = OPENER.try_with(Who::clone).unwrap_or(Who::Anyone);
        let (id, transport) = self.inner.create_session().await?;
        self.lock().insert(
            id.clone(),
            Entry {
                owner,
                last_used: Instant::now(),
                permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.lock().contains_key(id) && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}
