//! `serve --http`: MCP over Streamable HTTP for a team (behaviour.md §16).
//!
//! rmcp's tower service does the protocol work at `/mcp`: sessions of
//! 2025-11-25 clients (`Mcp-Session-Id`, POST answered as SSE, GET for the
//! session's stream, DELETE), and the stateless requests of 2026-07-28
//! clients (answered as JSON, `subscriptions/listen` as SSE). This module is
//! the HTTP server around it, on bare hyper: connections (header read
//! timeout, a write deadline: `stall`), the routes (`/mcp`, `/healthz`,
//! `/metrics`, the OAuth resource metadata), the origin check (`origin`),
//! authentication (`auth`, `oauth`), the bounds (body size, sessions:
//! `sessions`, requests in flight), one access-log line per request and the
//! counters of `/metrics` (`metrics`), and the stop on a signal.
//!
//! One registry (one snapshot, one watcher) serves every session. The server
//! listens before the first scan is done: `/healthz` says 503 and `/mcp`
//! answers 503 until then.

pub mod auth;
mod connections;
mod jws;
mod launch;
mod metrics;
mod oauth;
mod origin;
mod sessions;
mod stall;

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio_util::sync::CancellationToken;

use crate::config::{Env, Flags, HttpOptions, Settings};
use crate::render::Base;
use crate::server::handler::SkillServer;
use crate::server::malformed::{self, Malformed};
use crate::server::registry::Registry;
use crate::server::rescan;
use crate::server::{Stop, auto_update, log_startup, shutdown_signal, watch as file_watch};
use crate::sources;
use crate::usage;

use auth::{Auth, Denied, Lease, Who};
use connections::{Connection, Connections, Slot};
use metrics::{Gauges, Metrics};
use origin::Origins;
use sessions::Sessions;

/// The largest request body: rmcp's default, and the stdio line limit.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// A client must send its request headers within this time (slowloris).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A client must send a request's body within this time once its headers
/// have arrived: 4 MiB at 3.4 Mbit/s, and any body MCP clients send at
/// once.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// An SSE stream with nothing to say sends a comment this often, so that
/// proxies keep it open and a client that has gone is noticed.
const SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// After SIGTERM, requests in flight get this long to be answered.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Then the uses recorded since the last write get this long to be written.
const USAGE_PATIENCE: Duration = Duration::from_secs(1);

/// Every response body.
type Body = BoxBody<Bytes, Infallible>;

/// The MCP service once the first scan is done.
struct Ready {
    registry: Arc<Registry>,
    mcp: StreamableHttpService<SkillServer, Sessions>,
}

/// What every request handler shares.
struct State {
    http: HttpOptions,
    origins: Origins,
    auth: Arc<Auth>,
    /// Listening on a loopback address: the `Host` header must name a
    /// loopback host (DNS rebinding).
    loopback: bool,
    metrics: Metrics,
    sessions: Arc<Sessions>,
    ready: OnceLock<Ready>,
    /// Requests being answered (streams excluded): SIGTERM waits for none.
    in_flight: watch::Sender<usize>,
    connections: Arc<Connections>,
    /// Cancelled to end every session and SSE stream.
    stop_mcp: CancellationToken,
    /// `skillserve ui`: when its page last asked something.
    activity: Option<launch::Activity>,
    /// The skills app's state (its plans hold fetched files until the
    /// server stops).
    app: Arc<crate::server::app::App>,
    /// A signal arrived: `/healthz` answers 503 and every answer closes its
    /// connection, while the server answers for `--drain` more.
    draining: AtomicBool,
}

/// Serves MCP over HTTP on `options.http`'s address until SIGINT or SIGTERM.
pub async fn run(settings: Settings, flags: Flags, env: Env) -> anyhow::Result<Stop> {
    let http = settings
        .serve
        .http
        .clone()
        .ok_or_else(|| anyhow::anyhow!("serve --http without an address"))?;
    let auth = Arc::new(Auth::new(&http)?);
    let listener = TcpListener::bind(http.addr)
        .await
        .map_err(|err| anyhow::anyhow!("cannot listen on {}: {err}", http.addr))?;
    let local = listener.local_addr()?;
    tracing::info!(
        "listening on http://{local}/mcp; {}; {} thread{}",
        describe_auth(&http, local),
        http.threads,
        if http.threads == 1 { "" } else { "s" }
    );
    auth.start();
    let max_connections = http.max_connections;
    let activity = http.launch.as_ref().map(|_| launch::Activity::new());
    let state = Arc::new(State {
        origins: Origins::new(&http.allowed_origins, local.ip().is_loopback()),
        sessions: Arc::new(Sessions::new(http.max_sessions, http.session_idle)),
        http,
        auth,
        loopback: local.ip().is_loopback(),
        metrics: Metrics::default(),
        ready: OnceLock::new(),
        in_flight: watch::Sender::new(0),
        connections: Arc::new(Connections::new(max_connections)),
        stop_mcp: CancellationToken::new(),
        activity,
        app: Arc::default(),
        draining: AtomicBool::new(false),
    });
    tokio::spawn(start(Arc::clone(&state), settings, flags, env, local));

    let mut shutdown = Shutdown::new(Arc::clone(&state));
    let stopping = CancellationToken::new();
    let mut accept_failed = false;
    let closed = async {
        match &state.activity {
            Some(activity) => activity.closed(launch::CLOSED_FOR).await,
            None => std::future::pending().await,
        }
    };
    let mut closed = std::pin::pin!(closed);
    let stopped = loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, say: wait, and say so once.
                    if !std::mem::replace(&mut accept_failed, true) {
                        tracing::error!("cannot accept connections: {err}");
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            signal = shutdown.wait() => break Stop::Signal(signal),
            () = &mut closed => break Stop::PageClosed,
        };
        accept_failed = false;
        // At the cap, a connection waiting for nothing makes room, or this
        // one waits (and no other is accepted meanwhile).
        let slot = tokio::select! {
            slot = state.connections.admit() => slot,
            signal = shutdown.wait() => break Stop::Signal(signal),
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(
            Arc::clone(&state),
            stream,
            peer,
            slot,
            stopping.clone(),
        ));
    };
    drop(listener);
    stop(&state, &stopping).await;
    state.app.close();
    if let Some(ready) = state.ready.get() {
        let registry = Arc::clone(&ready.registry);
        let finished = tokio::task::spawn_blocking(move || registry.usage().flush(USAGE_PATIENCE));
        let _ = finished.await;
    }
    Ok(stopped)
}

/// When the server stops accepting connections: at the first SIGINT or
/// SIGTERM, or with `--drain`, that long after it (or at a second signal).
/// From the first signal on, the server is draining.
struct Shutdown {
    signal: Pin<Box<dyn Future<Output = &'static str> + Send>>,
    state: Arc<State>,
    /// The first signal, and when draining ends.
    draining: Option<(&'static str, tokio::time::Instant)>,
}

impl Shutdown {
    fn new(state: Arc<State>) -> Shutdown {
        Shutdown {
            signal: Box::pin(shutdown_signal()),
            state,
            draining: None,
        }
    }

    /// Resolves with the first signal's name when the server must stop
    /// accepting. Dropping it loses nothing: a signal or a deadline that
    /// has passed is kept for the next call.
    async fn wait(&mut self) -> &'static str {
        loop {
            let drained = async {
                match self.draining {
                    Some((_, end)) => tokio::time::sleep_until(end).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                signal = &mut self.signal => {
                    self.signal = Box::pin(shutdown_signal());
                    if let Some((first, _)) = self.draining {
                        tracing::info!("received {signal} while draining; stopping now");
                        return first;
                    }
                    self.state.draining.store(true, Ordering::Relaxed);
                    let drain = self.state.http.drain;
                    if drain.is_zero() {
                        return signal;
                    }
                    tracing::info!(
                        "received {signal}; draining for {} s: /healthz answers 503 and every answer closes its connection, then the server stops accepting",
                        drain.as_secs()
                    );
                    self.draining = Some((signal, tokio::time::Instant::now() + drain));
                }
                () = drained => {
                    if let Some((first, _)) = self.draining {
                        return first;
                    }
                }
            }
        }
    }
}

/// Stops after a signal: no new requests, those in flight answered (for up
/// to [`SHUTDOWN_GRACE`]), then every stream and session ended.
async fn stop(state: &State, stopping: &CancellationToken) {
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    stopping.cancel();
    let waiting = state.in_flight.borrow().to_owned();
    if waiting > 0 {
        tracing::info!("stopping: waiting for {waiting} requests in flight");
    }
    let mut in_flight = state.in_flight.subscribe();
    if tokio::time::timeout_at(deadline, in_flight.wait_for(|&n| n == 0))
        .await
        .is_err()
    {
        tracing::warn!(
            "stopping: {} requests still in flight after {} s",
            *in_flight.borrow(),
            SHUTDOWN_GRACE.as_secs()
        );
    }
    // A request whose head was still arriving when the connections were
    // told to close is answered too: sessions and streams end only once
    // every connection left holds a stream.
    while !state.connections.only_streams() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    state.stop_mcp.cancel();
    // Let the last answers leave: connections close once written.
    while state.connections.len() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The first scan, then the refreshes and the watcher, as on stdio; then
/// `/mcp` opens.
async fn start(state: Arc<State>, settings: Settings, flags: Flags, env: Env, local: SocketAddr) {
    let options = settings.serve.clone();
    let sources = (!options.auto_update.is_empty()).then(|| sources::Context::new(&settings, &env));
    let started = Instant::now();
    let registry =
        match tokio::task::spawn_blocking(move || Registry::new(settings, flags, env)).await {
            Ok(registry) => Arc::new(registry),
            Err(err) => {
                tracing::error!("the first scan failed: {err}");
                return;
            }
        };
    log_startup(&registry, &options, started.elapsed());
    registry.prepare_search();
    if state.http.metrics {
        // The skills used most lately keep a label of their own.
        let used = registry.current().profiles.ranks().top(usage::MAX_LABELS);
        registry
            .usage()
            .count_loads_in(Arc::new(usage::Tally::new(used)));
    }
    // As on stdio: the start-up scan checked installed skills by their
    // `SKILL.md` alone; a refresh off the request path checks the rest.
    if registry.has_installed() && !options.watch {
        registry.request_refresh();
    }
    if let Some(every) = options.refresh_interval {
        registry.spawn_interval(every);
    }
    match sources {
        Some(Ok(context)) => auto_update::spawn(&registry, context, &options.auto_update),
        Some(Err(err)) => tracing::error!("auto_update: {err}; no source is updated"),
        None => {}
    }
    if options.watch {
        tokio::spawn(file_watch::run(
            Arc::clone(&registry),
            options.refresh_interval,
        ));
    }
    let caller = Arc::new(rescan::Caller::new(Arc::clone(&registry), Base::Uri));
    let app = Arc::clone(&state.app);
    let factory = {
        let registry = Arc::clone(&registry);
        move || {
            Ok(SkillServer::new(
                Arc::clone(&registry),
                Arc::clone(&caller),
                Arc::clone(&app),
                &options,
            ))
        }
    };
    let mut config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(SSE_KEEP_ALIVE))
        .with_json_response(true)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(state.stop_mcp.clone());
    if !local.ip().is_loopback() {
        // Host names are the deployment's business (a proxy, an ingress);
        // requests are authenticated instead.
        config = config.disable_allowed_hosts();
    }
    let mcp = StreamableHttpService::new(factory, Arc::clone(&state.sessions), config);
    let _ = state.ready.set(Ready { registry, mcp });
}

/// The log line's account of who may connect.
fn describe_auth(http: &HttpOptions, local: SocketAddr) -> String {
    let mut ways = Vec::new();
    if http.launch.is_some() {
        ways.push("the one-time token of `skillserve ui`".to_owned());
    }
    if let Some(path) = &http.tokens {
        ways.push(format!("bearer tokens from {}", path.display()));
    }
    if let Some(oauth) = &http.oauth {
        ways.push(format!(
            "OAuth access tokens of {} for {}",
            oauth.issuer, oauth.audience
        ));
    }
    match (ways.is_empty(), local.ip().is_loopback()) {
        (false, _) => format!("requests need {}", ways.join(" or ")),
        (true, true) => "no authentication (loopback only)".to_owned(),
        (true, false) => "NO AUTHENTICATION (--insecure-no-auth)".to_owned(),
    }
}

/// Serves one connection until it closes, or until the server stops (then
/// the request under way is answered first).
async fn connection(
    state: Arc<State>,
    stream: tokio::net::TcpStream,
    _peer: SocketAddr,
    slot: Slot,
    stopping: CancellationToken,
) {
    let io = TokioIo::new(stall::Stalling::new(stream));
    let service = {
        let state = Arc::clone(&state);
        let connection = Arc::clone(&slot.connection);
        hyper::service::service_fn(move |request| {
            let state = Arc::clone(&state);
            let connection = Arc::clone(&connection);
            async move { Ok::<_, Infallible>(handle(state, connection, request).await) }
        })
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        // Closed to make room for another (`connections`).
        () = slot.connection.close.cancelled() => {}
        () = stopping.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// What the access log says of a request.
struct Entry {
    method: Method,
    path: String,
    /// The JSON-RPC method of a POST to `/mcp`.
    rpc: Option<String>,
    who: Who,
    started: Instant,
    /// A stream (GET `/mcp`, `subscriptions/listen`): not an answer whose
    /// latency counts.
    stream: bool,
}

/// Answers one request, and logs it when its response has been sent.
async fn handle(
    state: Arc<State>,
    connection: Arc<Connection>,
    request: Request<Incoming>,
) -> Response<Body> {
    // A POST to `/mcp` is still arriving until its body has been read.
    if !(request.method() == Method::POST && request.uri().path() == "/mcp") {
        connection.busy();
    }
    let mut entry = Entry {
        method: request.method().clone(),
        path: request.uri().path().to_owned(),
        rpc: None,
        who: Who::Anyone,
        started: Instant::now(),
        stream: false,
    };
    let mut held = Held::default();
    let origin = request.headers().get(header::ORIGIN).cloned();
    let mut response = route(&state, &connection, request, &mut entry, &mut held).await;
    if entry.stream && response.status() == StatusCode::OK {
        connection.streaming();
    }
    if let Some(origin) = origin
        && response.status() != StatusCode::FORBIDDEN
    {
        allow_cross_origin(response.headers_mut(), origin);
    }
    if state.draining.load(Ordering::Relaxed) {
        // The client (a load balancer) sends its next request over a new
        // connection, which finds another replica once this one is out.
        response
            .headers_mut()
            .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
    }
    let status = response.status();
    response.map(|body| {
        Tracked {
            body,
            done: Some(Done {
                state,
                connection,
                entry,
                status,
                _held: held,
            }),
        }
        .boxed()
    })
}

/// What a request holds until its response has been sent.
#[derive(Default)]
struct Held {
    in_flight: Option<InFlight>,
    permit: Option<OwnedSemaphorePermit>,
}

async fn route(
    state: &Arc<State>,
    connection: &Connection,
    request: Request<Incoming>,
    entry: &mut Entry,
    held: &mut Held,
) -> Response<Body> {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !state.origins.allows(origin) {
            return text(
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: requests from the origin {:?} are not allowed (see --allowed-origin)",
                    crate::text::printable(origin)
                ),
            );
        }
    }
    // Every route, before anything else: a page of a rebound DNS name gets
    // nothing, and no answer echoes a foreign host.
    if state.loopback && !origin::is_loopback_host(request.headers()) {
        return text(
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed".to_owned(),
        );
    }
    let path = request.uri().path();
    let method = request.method();
    match path {
        // A browser's preflight, from an origin allowed above.
        "/mcp" if method == Method::OPTIONS => preflight(),
        "/mcp" => mcp(state, connection, request, entry, held).await,
        // The skills manager's page; it talks to `/mcp` with the user's token.
        "/" if method == Method::GET || method == Method::HEAD => app_page(),
        "/healthz" if method == Method::GET || method == Method::HEAD => health(state),
        "/metrics" if state.http.metrics && method == Method::GET => metrics(state),
        "/.well-known/oauth-protected-resource" | "/.well-known/oauth-protected-resource/mcp"
            if method == Method::GET && state.auth.issuer().is_some() =>
        {
            resource_metadata(state, request.headers())
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "Not Found: skillserve serves MCP at /mcp".to_owned(),
        ),
    }
}

/// `/mcp`: authenticated, bounded, then handed to rmcp.
async fn mcp(
    state: &Arc<State>,
    connection: &Connection,
    request: Request<Incoming>,
    entry: &mut Entry,
    held: &mut Held,
) -> Response<Body> {
    let (caller, lease) = match state.auth.check(request.headers()).await {
        Ok(checked) => checked,
        Err(denied) => return unauthorized(state, request.headers(), &denied),
    };
    entry.who = caller.who.clone();
    if let Some(activity) = &state.activity {
        activity.touch();
    }
    // A session is answered only to whoever opened it; to anyone else, and
    // to a DELETE of a session that is not open, as if it did not exist.
    if let Some(id) = request
        .headers()
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
    {
        match state.sessions.owner(id) {
            Some(owner) if owner != caller.who => return session_not_found(),
            None if request.method() == Method::DELETE => return session_not_found(),
            _ => {}
        }
    }
    if state.stop_mcp.is_cancelled() {
        // rmcp would answer 500 (its sessions have ended); a load balancer
        // takes 503 as "try another replica".
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: the server is stopping".to_owned(),
        );
    }
    let Some(ready) = state.ready.get() else {
        let mut response = text(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: the skill folders are still being scanned".to_owned(),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
        return response;
    };
    let (mut parts, body) = request.into_parts();
    // The handler reads it back (`Caller::of`; the skills app's rule and
    // log line): rmcp hands the request's parts on in the request context.
    parts.extensions.insert(caller);
    // A request is in flight from here: SIGTERM waits for it, also while
    // its body is still arriving.
    let in_flight = InFlight::enter(state);
    let body = if parts.method == Method::POST {
        match read_body(&parts.headers, body).await {
            Ok(body) => body,
            Err(response) => return response,
        }
    } else {
        Bytes::new()
    };
    connection.busy();
    entry.rpc = rpc_method(&body);
    entry.stream =
        parts.method == Method::GET || entry.rpc.as_deref() == Some("subscriptions/listen");
    if !entry.stream {
        held.in_flight = Some(in_flight);
        // A session's requests in flight are bounded as on stdio: one more
        // waits for an answer to leave.
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|id| id.to_str().ok());
        if let Some(permits) = session.and_then(|id| state.sessions.permits(id)) {
            held.permit = permits.acquire_owned().await.ok();
        }
    }
    let ending = parts.method == Method::DELETE;
    let sent_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    let kept = body.clone();
    let mut response = sessions::OPENER
        .scope(
            entry.who.clone(),
            ready
                .mcp
                .handle(Request::from_parts(parts, Full::new(body))),
        )
        .await;
    // rmcp answers a JSON body it cannot read as a message with 415 and a
    // text; the answer is the one stdio gives the same line.
    if sent_json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return malformed_answer(&kept);
    }
    // rmcp answers an ended session with 202; clients (the Python SDK) expect
    // a success without content.
    if ending && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    if entry.stream && response.status() == StatusCode::OK {
        return end_with_lease(state, lease, &entry.who, response);
    }
    response
}

/// A stream's response whose body ends once `lease` does: the token that
/// opened it was revoked (its line deleted or changed), or its JWT expired.
fn end_with_lease(
    state: &Arc<State>,
    lease: Lease,
    who: &Who,
    response: Response<Body>,
) -> Response<Body> {
    if matches!(lease, Lease::Forever) {
        return response;
    }
    let (mut ended, revoked) = tokio::sync::oneshot::channel();
    let auth = Arc::clone(&state.auth);
    let who = who.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = auth.ended(&lease) => {
                tracing::info!("{who}: its credentials are no longer valid; its stream ends");
                let _ = ended.send(());
            }
            // The stream ended first.
            () = ended.closed() => {}
        }
    });
    response.map(|body| {
        Leased {
            body,
            revoked: Some(revoked),
        }
        .boxed()
    })
}

/// The answer to a JSON body that is not a message rmcp can read: the
/// JSON-RPC error stdio answers the same line with, as 400 without an id
/// (Streamable HTTP: the input was not accepted) and 200 with one (an error
/// answer to that request, as rmcp sends them); 202 for a notification or
/// a response, which get no answer.
fn malformed_answer(body: &[u8]) -> Response<Body> {
    let judged = malformed::judge(body);
    let Some(message) = judged.to_json() else {
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::ACCEPTED;
        return response;
    };
    let status = match &judged {
        Malformed::Answer { id: Some(_), .. } => StatusCode::OK,
        _ => StatusCode::BAD_REQUEST,
    };
    json(status, &message)
}

/// 404 to a request of a session that is not open (or not the caller's),
/// in rmcp's words for an unknown session.
fn session_not_found() -> Response<Body> {
    let mut response =
        Response::new(Full::new(Bytes::from("Not Found: Session not found")).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The headers a browser page needs to call `/mcp` from an allowed origin
/// (CORS), and to read the session id and the challenge.
fn allow_cross_origin(headers: &mut HeaderMap, origin: http::HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(header::VARY, http::HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        http::HeaderValue::from_static("Mcp-Session-Id, WWW-Authenticate"),
    );
}

/// 204 to a CORS preflight of `/mcp`: the methods and headers MCP uses.
fn preflight() -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        http::HeaderValue::from_static("GET, POST, DELETE"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        http::HeaderValue::from_static(
            "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID",
        ),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        http::HeaderValue::from_static("600"),
    );
    response
}

/// The body of a POST, at most [`MAX_BODY_BYTES`] (else 413).
async fn read_body(headers: &HeaderMap, body: Incoming) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request bodies are limited to {MAX_BODY_BYTES} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let reading = tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, MAX_BODY_BYTES).collect());
    let Ok(read) = reading.await else {
        let mut response = text(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "Request Timeout: the request body did not arrive within {} s",
                BODY_TIMEOUT.as_secs()
            ),
        );
        response
            .headers_mut()
            .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
        return Err(response);
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(err) => Err(text(
            StatusCode::BAD_REQUEST,
            format!("Bad Request: the request body could not be read: {err}"),
        )),
    }
}

/// The JSON-RPC method of a request body, for the log (and to tell a
/// `subscriptions/listen` stream from an answer); `None` when it has none.
fn rpc_method(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    let message: Message = serde_json::from_slice(body).ok()?;
    let method = message.method?;
    // Logged: a method name, not whatever a client sends.
    let plausible = method.len() <= 64
        && method
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '.'));
    Some(if plausible {
        method.into_owned()
    } else {
        "(unknown)".to_owned()
    })
}

/// 401 with the challenge of RFC 6750, pointing OAuth clients at the
/// resource metadata.
fn unauthorized(state: &State, headers: &HeaderMap, denied: &Denied) -> Response<Body> {
    let metadata = state
        .auth
        .issuer()
        .map(|_| metadata_url(&mcp_url(state, headers)));
    let mut response = text(
        StatusCode::UNAUTHORIZED,
        match denied {
            Denied::Missing => "Unauthorized: send `Authorization: Bearer TOKEN`".to_owned(),
            Denied::Invalid(reason) => format!("Unauthorized: {reason}"),
        },
    );
    if let Ok(value) = auth::challenge(denied, metadata.as_deref()).parse() {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The URL clients reach `/mcp` at: `--public-url`, else from the request's
/// `Host` (and `X-Forwarded-Proto`, as a proxy sets it).
fn mcp_url(state: &State, headers: &HeaderMap) -> String {
    if let Some(url) = &state.http.public_url {
        return url.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .filter(|host| {
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
        })
        .map_or_else(|| state.http.addr.to_string(), str::to_owned);
    let scheme = match headers
        .get("x-forwarded-proto")
        .and_then(|proto| proto.to_str().ok())
    {
        Some("https") => "https",
        _ => "http",
    };
    format!("{scheme}://{host}/mcp")
}

/// The protected resource metadata's URL for the resource at `resource`
/// (RFC 9728: the well-known path goes before the resource's path).
fn metadata_url(resource: &str) -> String {
    let after_scheme = resource.find("://").map_or(0, |i| i + 3);
    let (origin, path) = match resource[after_scheme..].find('/') {
        Some(slash) => resource.split_at(after_scheme + slash),
        None => (resource, ""),
    };
    format!("{origin}/.well-known/oauth-protected-resource{path}")
}

/// RFC 9728's protected resource metadata: which authorization server
/// issues tokens for this server.
fn resource_metadata(state: &State, headers: &HeaderMap) -> Response<Body> {
    let document = serde_json::json!({
        "resource": mcp_url(state, headers),
        "authorization_servers": [state.auth.issuer()],
        "bearer_methods_supported": ["header"],
        "resource_name": "skillserve",
    });
    json(StatusCode::OK, &document)
}

/// `/`: the skills manager's page, under a Content Security Policy that
/// lets it run its own inline script and style (by their hashes) and reach
/// `/mcp`, and nothing else: even a bug in its rendering of a skill could
/// load no remote image or script. No token is needed for the page itself;
/// it asks for one and sends it to `/mcp`.
fn app_page() -> Response<Body> {
    let mut response =
        Response::new(Full::new(Bytes::from(crate::server::app::page::html(None))).boxed());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(policy) =
        http::HeaderValue::from_str(crate::server::app::page::content_security_policy())
    {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        http::HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// `/healthz`: 503 until the first scan is done, then 200 and the number
/// of skills served; 503 again once a signal has arrived (draining).
fn health(state: &State) -> Response<Body> {
    if state.draining.load(Ordering::Relaxed) {
        return json(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"status": "draining"}),
        );
    }
    match state.ready.get() {
        None => json(
            StatusCode::SERVICE_UNAVAILABLE,
            &serde_json::json!({"status": "starting"}),
        ),
        Some(ready) => {
            let skills = ready.registry.current().snapshot.skills().len();
            json(
                StatusCode::OK,
                &serde_json::json!({"status": "ok", "skills": skills}),
            )
        }
    }
}

fn metrics(state: &State) -> Response<Body> {
    let gauges = Gauges {
        sessions: state.sessions.len(),
        evicted_sessions: state.sessions.evicted(),
        skills: state
            .ready
            .get()
            .map_or(0, |ready| ready.registry.current().snapshot.skills().len()),
        connections: state.connections.len(),
        shed_connections: state.connections.shed(),
        skill_loads: state
            .ready
            .get()
            .and_then(|ready| ready.registry.usage().tally())
            .map(|tally| tally.counts())
            .unwrap_or_default(),
    };
    let mut response = Response::new(Full::new(Bytes::from(state.metrics.render(&gauges))).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body + "\n")).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// One request being answered; counted until dropped.
struct InFlight(Arc<State>);

impl InFlight {
    fn enter(state: &Arc<State>) -> InFlight {
        state.in_flight.send_modify(|n| *n += 1);
        InFlight(Arc::clone(state))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.send_modify(|n| *n -= 1);
    }
}

/// A stream's body, ended when its credentials are.
struct Leased {
    body: Body,
    /// Fires when the credentials are no longer valid.
    revoked: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl hyper::body::Body for Leased {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(revoked) = &mut self.revoked
            && let Poll::Ready(fired) = Pin::new(revoked).poll(cx)
        {
            self.revoked = None;
            if fired.is_ok() {
                // The stream ends as if the server had closed it.
                self.body = Full::new(Bytes::new()).boxed();
                return Poll::Ready(None);
            }
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A response body that logs its request once it has been sent (or the
/// client has gone).
struct Tracked {
    body: Body,
    done: Option<Done>,
}

struct Done {
    state: Arc<State>,
    connection: Arc<Connection>,
    entry: Entry,
    status: StatusCode,
    _held: Held,
}

impl Drop for Done {
    fn drop(&mut self) {
        self.connection.waiting();
        let entry = &self.entry;
        let elapsed = entry.started.elapsed();
        self.state
            .metrics
            .record(self.status.as_u16(), (!entry.stream).then_some(elapsed));
        tracing::info!(
            target: "skillserve::access",
            "{} {}{} {} {:.1} ms {}",
            entry.method,
            entry.path,
            entry.rpc.as_deref().map(|rpc| format!(" {rpc}")).unwrap_or_default(),
            self.status.as_u16(),
            elapsed.as_secs_f64() * 1e3,
            entry.who,
        );
    }
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.done = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_first() {
        assert_eq!(
            metadata_url("https://skills.example.com/mcp"),
            "https://skills.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn the_rpc_method_is_read_and_only_if_plausible() {
        assert_eq!(
            rpc_method(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#),
            Some("tools/call".to_owned())
        );
        assert_eq!(rpc_method(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
        assert_eq!(rpc_method(b"not json"), None);
        assert_eq!(
            rpc_method(br#"{"method":"a b\nc"}"#),
            Some("(unknown)".to_owned())
        );
    }
}
