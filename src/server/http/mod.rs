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

mod auth;
mod metrics;
mod oauth;
mod origin;
mod sessions;
mod stall;

use std::borrow::Cow;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
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
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_util::sync::CancellationToken;

use crate::config::{Env, Flags, HttpOptions, Settings};
use crate::render::Base;
use crate::server::handler::SkillServer;
use crate::server::registry::Registry;
use crate::server::rescan::Caller;
use crate::server::{Stop, auto_update, log_startup, shutdown_signal, watch as file_watch};
use crate::sources;

use auth::{Auth, Denied, Who};
use metrics::{Gauges, Metrics};
use origin::Origins;
use sessions::Sessions;

/// The largest request body: rmcp's default, and the stdio line limit.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// A client must send its request headers within this time (slowloris).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections beyond this wait to be accepted (each is a file descriptor).
const MAX_CONNECTIONS: usize = 4096;
/// An SSE stream with nothing to say sends a comment this often, so that
/// proxies keep it open and a client that has gone is noticed.
const SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// After SIGTERM, requests in flight get this long to be answered.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

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
    metrics: Metrics,
    sessions: Arc<Sessions>,
    ready: OnceLock<Ready>,
    /// Requests being answered (streams excluded): SIGTERM waits for none.
    in_flight: watch::Sender<usize>,
    connections: AtomicUsize,
    /// Cancelled to end every session and SSE stream.
    stop_mcp: CancellationToken,
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
        "listening on http://{local}/mcp; {}",
        describe_auth(&http, local)
    );
    auth.start();
    let state = Arc::new(State {
        origins: Origins::new(&http.allowed_origins, local.ip().is_loopback()),
        sessions: Arc::new(Sessions::new(http.max_sessions, http.session_idle)),
        http,
        auth,
        metrics: Metrics::default(),
        ready: OnceLock::new(),
        in_flight: watch::Sender::new(0),
        connections: AtomicUsize::new(0),
        stop_mcp: CancellationToken::new(),
    });
    tokio::spawn(start(Arc::clone(&state), settings, flags, env, local));

    let mut shutdown = std::pin::pin!(shutdown_signal());
    let stopping = CancellationToken::new();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut accept_failed = false;
    let signal = loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot?,
            signal = &mut shutdown => break signal,
        };
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
            signal = &mut shutdown => break signal,
        };
        accept_failed = false;
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
    Ok(Stop::Signal(signal))
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
    state.stop_mcp.cancel();
    // Let the last answers leave: connections close once written.
    while state.connections.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The first scan, then the refreshes and the watcher, as on stdio; then
/// `/mcp` opens.
async fn start(state: Arc<State>, settings: Settings, flags: Flags, env: Env, local: SocketAddr) {
    let options = settings.serve.clone();
    let sources =
        (!options.auto_update.is_empty()).then(|| sources::Context::new(&settings.config, &env));
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
    let caller = Arc::new(Caller::new(Arc::clone(&registry), Base::Uri));
    let app = Arc::new(crate::server::app::App::default());
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

/// Who asks for a change of the skills manager over HTTP: the token's
/// label. Admin tokens are not read yet, so no HTTP caller may change
/// anything.
pub(crate) fn app_caller(
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> crate::server::app::Caller {
    let who = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Who>())
        .map_or_else(|| "anyone".to_owned(), ToString::to_string);
    crate::server::app::Caller::Http { who, admin: false }
}

/// The log line's account of who may connect.
fn describe_auth(http: &HttpOptions, local: SocketAddr) -> String {
    let mut ways = Vec::new();
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
    _slot: OwnedSemaphorePermit,
    stopping: CancellationToken,
) {
    state.connections.fetch_add(1, Ordering::Relaxed);
    let io = TokioIo::new(stall::Stalling::new(stream));
    let service = {
        let state = Arc::clone(&state);
        hyper::service::service_fn(move |request| {
            let state = Arc::clone(&state);
            async move { Ok::<_, Infallible>(handle(state, request).await) }
        })
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        () = stopping.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
    state.connections.fetch_sub(1, Ordering::Relaxed);
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
async fn handle(state: Arc<State>, request: Request<Incoming>) -> Response<Body> {
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
    let mut response = route(&state, request, &mut entry, &mut held).await;
    if let Some(origin) = origin
        && response.status() != StatusCode::FORBIDDEN
    {
        allow_cross_origin(response.headers_mut(), origin);
    }
    let status = response.status();
    response.map(|body| {
        Tracked {
            body,
            done: Some(Done {
                state,
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
    let path = request.uri().path();
    let method = request.method();
    match path {
        // A browser's preflight, from an origin allowed above.
        "/mcp" if method == Method::OPTIONS => preflight(),
        "/mcp" => mcp(state, request, entry, held).await,
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
    request: Request<Incoming>,
    entry: &mut Entry,
    held: &mut Held,
) -> Response<Body> {
    match state.auth.check(request.headers()).await {
        Ok(who) => entry.who = who,
        Err(denied) => return unauthorized(state, request.headers(), &denied),
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
    // The handler learns who asks from here (the skills app's log line).
    parts.extensions.insert(entry.who.clone());
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
    let mut response = ready
        .mcp
        .handle(Request::from_parts(parts, Full::new(body)))
        .await;
    // rmcp answers an ended session with 202; clients (the Python SDK) expect
    // a success without content.
    if ending && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
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
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
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
/// of skills served.
fn health(state: &State) -> Response<Body> {
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
        connections: state.connections.load(Ordering::Relaxed),
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

/// A response body that logs its request once it has been sent (or the
/// client has gone).
struct Tracked {
    body: Body,
    done: Option<Done>,
}

struct Done {
    state: Arc<State>,
    entry: Entry,
    status: StatusCode,
    _held: Held,
}

impl Drop for Done {
    fn drop(&mut self) {
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
