//! The stdio transport: JSON-RPC lines in, JSON-RPC lines out, with bounds
//! (behaviour.md §12).
//!
//! rmcp's own stdio transport (3.11) reads stdin as fast as it can and queues
//! every answer: a client that writes requests but never reads stdout drove the
//! server to gigabytes, and with stdout closed it never exited. It also drops
//! lines it cannot parse without an answer (invalid JSON, params that are not
//! an object), and a second request with an id already in flight. This one:
//!
//! - keeps at most [`MAX_IN_FLIGHT`] requests between handing them to rmcp
//!   and writing their answers; requests read meanwhile wait in a queue of at
//!   most [`MAX_QUEUED`] requests ([`MAX_QUEUED_BYTES`] of their lines), in
//!   order, and a request read while that queue is full is answered at once
//!   with -32000 "server busy" (the client sends it again later);
//! - keeps reading stdin whatever is in flight or queued, so that the end of
//!   stdin is seen at once, also behind a backlog: the requests still queued
//!   then are answered -32000 without being started, and the server exits;
//!   it stops reading only while [`MAX_REPLIES`] of its own error answers wait
//!   to be written — a client that does not read stdout stops the server
//!   reading, and memory stays bounded;
//! - answers every line that is not a notification: invalid JSON with -32700,
//!   an invalid request with -32600 (both with `"id": null`), params that are
//!   not an object with -32602, an id already in flight with -32600, a
//!   `cursor` that is not a string with -32602 (rmcp would drop it and
//!   serve the first page);
//! - reports a write failure (stdout closed), and the end of stdin, through
//!   [`Link`], so that the server exits instead of answering into the void or
//!   waiting on streams that only end when they are cancelled
//!   (`subscriptions/listen`);
//! - refuses lines longer than [`MAX_LINE`] bytes without buffering them.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, ErrorData, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use crate::server::malformed::{self, Malformed};

/// Requests handed to rmcp and not yet answered, at most.
pub const MAX_IN_FLIGHT: usize = 32;
/// Requests read while [`MAX_IN_FLIGHT`] are in flight wait in a queue of at
/// most this many; one more is answered "server busy".
pub const MAX_QUEUED: usize = 256;
/// The lines of the queued requests hold at most this many bytes in all.
pub const MAX_QUEUED_BYTES: usize = 8 * 1024 * 1024;
/// The transport's own error answers (to invalid lines, to requests past
/// [`MAX_IN_FLIGHT`]) waiting to be written, at most: past it, stdin is not
/// read until one is written.
pub const MAX_REPLIES: usize = 32;
/// The JSON-RPC code of the answer to a request the queue has no room for,
/// and to one still queued when stdin ends (the range -32000 to -32099 is
/// the server's own).
pub const SERVER_BUSY: i32 = -32000;
/// `subscriptions/listen` streams open at once, at most (they last as long as
/// the client wants, so they are not counted as requests in flight).
pub const MAX_LISTENERS: usize = 8;
/// The longest line read; longer ones are answered -32600 and skipped.
pub const MAX_LINE: usize = 4 * 1024 * 1024;
/// Bytes read from stdin at a time.
const READ_CHUNK: usize = 64 * 1024;

/// stdin and stdout as a bounded JSON-RPC transport for rmcp.
pub struct StdioTransport<R, W> {
    lines: Lines<R>,
    stdin_ended: Flag,
    out: Arc<Output<W>>,
    flight: Arc<InFlight>,
    /// Whether a request has started the MCP lifecycle (anything but `ping`
    /// and `server/discover`). Until then rmcp gives up on any notification
    /// or response, so those are dropped here.
    started: bool,
    /// Requests read while [`MAX_IN_FLIGHT`] were in flight, oldest first,
    /// with the length of their lines.
    queue: std::collections::VecDeque<(ClientJsonRpcMessage, usize)>,
    queued_bytes: usize,
}

/// A flag that can be waited for.
#[derive(Clone, Default)]
struct Flag(Arc<(AtomicBool, Notify)>);

impl Flag {
    fn set(&self) {
        self.0.0.store(true, Ordering::SeqCst);
        self.0.1.notify_waiters();
    }

    fn is_set(&self) -> bool {
        self.0.0.load(Ordering::SeqCst)
    }

    async fn wait(&self) {
        loop {
            let notified = self.0.1.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// What the server loop needs to know about the link to the client.
pub struct Link {
    stdout_closed: Flag,
    stdin_ended: Flag,
    flight: Arc<InFlight>,
}

impl Link {
    /// Whether a write to stdout failed.
    pub fn is_closed(&self) -> bool {
        self.stdout_closed.is_set()
    }

    /// Resolves once stdout is closed: nothing can be answered any more.
    pub async fn stdout_closed(&self) {
        self.stdout_closed.wait().await;
    }

    /// Resolves once stdin has ended and every request read before has been
    /// answered, or `grace` after stdin ended, whichever comes first (open
    /// `subscriptions/listen` streams aside: they last until cancelled, and a
    /// client that closed stdin cancels nothing any more). stdin is read
    /// whatever is in flight, so its end is seen as soon as it comes.
    pub async fn stdin_drained(&self, grace: std::time::Duration) {
        self.stdin_ended.wait().await;
        let _ = tokio::time::timeout(grace, self.flight.idle()).await;
    }
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> StdioTransport<R, W> {
    pub fn new(reader: R, writer: W) -> (Self, Link) {
        let link = Link {
            stdout_closed: Flag::default(),
            stdin_ended: Flag::default(),
            flight: Arc::new(InFlight::default()),
        };
        let transport = StdioTransport {
            lines: Lines::new(reader),
            stdin_ended: link.stdin_ended.clone(),
            out: Arc::new(Output {
                writer: tokio::sync::Mutex::new(writer),
                spare: Mutex::default(),
                closed: link.stdout_closed.clone(),
            }),
            flight: Arc::clone(&link.flight),
            started: false,
            queue: std::collections::VecDeque::new(),
            queued_bytes: 0,
        };
        (transport, link)
    }
}

/// Where answers go: stdout, one writer at a time.
struct Output<W> {
    writer: tokio::sync::Mutex<W>,
    /// The buffer the last answer was serialized into, kept for the next:
    /// an answer grown from empty to a whole `SKILL.md` was reallocated a
    /// dozen times, and copied each time.
    spare: Mutex<Vec<u8>>,
    closed: Flag,
}

/// A serialization buffer larger than this is not kept for the next answer.
const KEPT_BUFFER: usize = 1024 * 1024;

impl<W: AsyncWrite + Unpin> Output<W> {
    /// An empty buffer to serialize an answer into: the kept one, unless
    /// another answer is being serialized into it now.
    fn buffer(&self) -> Vec<u8> {
        std::mem::take(&mut *self.spare.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Keeps `buffer` for the next answer, unless it is too large to keep.
    fn keep(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() <= KEPT_BUFFER {
            buffer.clear();
            *self.spare.lock().unwrap_or_else(PoisonError::into_inner) = buffer;
        }
    }

    /// Writes one line. A failure means the client closed stdout: nothing
    /// can be answered any more, so the server is told to stop.
    async fn write_line(&self, bytes: &[u8]) -> io::Result<()> {
        let mut writer = self.writer.lock().await;
        let written = async {
            writer.write_all(bytes).await?;
            writer.flush().await
        }
        .await;
        if let Err(err) = &written {
            tracing::debug!("cannot write to stdout: {err}");
            self.closed.set();
        }
        written
    }
}

/// Requests between being read and being answered.
#[derive(Default)]
struct InFlight {
    state: Mutex<Flight>,
    /// Woken when an answer has been written.
    room: Notify,
}

#[derive(Default)]
struct Flight {
    /// Requests handed to rmcp and not answered yet, and whether each is a
    /// `subscriptions/listen` stream.
    requests: HashMap<RequestId, bool>,
    /// Error replies written by the transport itself, not written yet.
    replies: usize,
    listeners: usize,
}

impl Flight {
    /// Requests waiting for their answer, listen streams aside.
    fn requests(&self) -> usize {
        self.requests.len() - self.listeners
    }

    fn busy(&self) -> usize {
        self.requests() + self.replies
    }
}

/// Why a request is answered by the transport instead of being handed on.
#[derive(Debug)]
enum Refusal {
    /// Its id is in flight, or too many listen streams are open: -32600.
    Invalid(String),
    /// [`MAX_IN_FLIGHT`] requests are in flight.
    Busy,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Flight> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until no request (but `subscriptions/listen` streams) and no
    /// reply is waiting for its answer to be written.
    async fn idle(&self) {
        loop {
            let notified = self.room.notified();
            if self.lock().busy() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Waits until another line may be read: whatever it is, there is room
    /// to answer it (handed on, queued, or answered by the transport).
    async fn reply_room(&self) {
        loop {
            let notified = self.room.notified();
            if self.lock().replies < MAX_REPLIES {
                return;
            }
            notified.await;
        }
    }

    /// Waits until another request may be handed to rmcp.
    async fn request_room(&self) {
        loop {
            let notified = self.room.notified();
            if self.has_request_room() {
                return;
            }
            notified.await;
        }
    }

    fn has_request_room(&self) -> bool {
        self.lock().requests() < MAX_IN_FLIGHT
    }

    fn is_in_flight(&self, id: &RequestId) -> bool {
        self.lock().requests.contains_key(id)
    }

    /// Registers a request; `Err` with the reason when it cannot be taken.
    fn start(&self, id: &RequestId, listen: bool) -> Result<(), Refusal> {
        let mut flight = self.lock();
        if flight.requests.contains_key(id) {
            return Err(Refusal::Invalid(format!(
                "Invalid Request: id {} is already used by a request in flight",
                id_text(id)
            )));
        }
        if listen {
            if flight.listeners == MAX_LISTENERS {
                return Err(Refusal::Invalid(format!(
                    "Invalid Request: at most {MAX_LISTENERS} subscriptions/listen streams may be open at once"
                )));
            }
            flight.listeners += 1;
        } else if flight.requests() >= MAX_IN_FLIGHT {
            return Err(Refusal::Busy);
        }
        flight.requests.insert(id.clone(), listen);
        Ok(())
    }

    /// The request `id` is done: answered, or cancelled by the client (rmcp
    /// then drops its answer).
    fn finish(&self, id: &RequestId) {
        let mut flight = self.lock();
        if let Some(listen) = flight.requests.remove(id) {
            flight.listeners -= usize::from(listen);
            drop(flight);
            self.room.notify_waiters();
        }
    }

    fn reply_queued(&self) {
        self.lock().replies += 1;
    }

    fn reply_written(&self) {
        self.lock().replies -= 1;
        self.room.notify_waiters();
    }
}

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = Arc::clone(&self.out);
        let flight = Arc::clone(&self.flight);
        async move {
            let answers = match &item {
                ServerJsonRpcMessage::Response(response) => Some(response.id.clone()),
                ServerJsonRpcMessage::Error(error) => error.id.clone(),
                _ => None,
            };
            let mut bytes = out.buffer();
            match serde_json::to_writer(&mut bytes, &item) {
                Ok(()) => bytes.push(b'\n'),
                // Nothing the server sends fails to serialize; if something
                // did, its request is still answered, and leaves the count
                // of requests in flight.
                Err(err) => {
                    tracing::error!("cannot serialize an answer: {err}");
                    bytes = match &answers {
                        Some(id) => reply(
                            Some(id),
                            ErrorCode::INTERNAL_ERROR,
                            format!("Internal error: cannot serialize the answer: {err}"),
                        ),
                        None => return Ok(()),
                    };
                }
            }
            let written = out.write_line(&bytes).await;
            out.keep(bytes);
            if let Some(id) = answers {
                flight.finish(&id);
            }
            written
        }
    }

    /// Reads until a message for rmcp arrives (or a queued request's turn
    /// comes); answers what rmcp would drop. Cancel-safe: rmcp polls this
    /// inside a `select!`, so every await is one whose interruption loses
    /// nothing (the line state and the queue live in `self`).
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if let Some(message) = self.dequeue() {
                return Some(message);
            }
            let flight = Arc::clone(&self.flight);
            let queued = !self.queue.is_empty();
            let lines = &mut self.lines;
            // Queued requests first; stdin is read all the same, so that its
            // end is seen behind them.
            let read = tokio::select! {
                biased;
                () = flight.request_room(), if queued => continue,
                read = async {
                    flight.reply_room().await;
                    lines.next().await
                } => read,
            };
            let line = match read {
                Ok(Some(line)) => line,
                Ok(None) => return self.ended(),
                Err(err) => {
                    tracing::debug!("cannot read stdin: {err}");
                    return self.ended();
                }
            };
            let (verdict, len) = match line {
                Line::TooLong => (
                    Verdict::Reply(reply(
                        None,
                        ErrorCode::INVALID_REQUEST,
                        format!("Invalid Request: the message is longer than {MAX_LINE} bytes"),
                    )),
                    0,
                ),
                Line::Text(range) => (judge(self.lines.get(range.clone())), range.len()),
            };
            match verdict {
                Verdict::Skip => continue,
                Verdict::Reply(bytes) => self.reply(bytes),
                Verdict::Pass(message) => {
                    if let Some(message) = self.admit(message, len) {
                        return Some(message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.writer.lock().await.flush().await
    }
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Writes an error reply of the transport's own, counted as in flight
    /// until written. Written by a task, never by `receive` itself: a write
    /// interrupted half way would leave half a line on stdout.
    fn reply(&self, bytes: Vec<u8>) {
        self.flight.reply_queued();
        let out = Arc::clone(&self.out);
        let flight = Arc::clone(&self.flight);
        tokio::spawn(async move {
            let _ = out.write_line(&bytes).await;
            flight.reply_written();
        });
    }

    /// The end of stdin: requests still queued are answered without being
    /// started (the client is gone; the server exits once what is in flight
    /// is answered, or after a short grace).
    fn ended(&mut self) -> Option<ClientJsonRpcMessage> {
        self.stdin_ended.set();
        for (message, _) in std::mem::take(&mut self.queue) {
            if let ClientJsonRpcMessage::Request(request) = message {
                self.reply(reply(
                    Some(&request.id),
                    ErrorCode(SERVER_BUSY),
                    "Server stopping: stdin ended before this request was started".to_owned(),
                ));
            }
        }
        self.queued_bytes = 0;
        None
    }

    /// The oldest queued request, when another may be handed to rmcp.
    fn dequeue(&mut self) -> Option<ClientJsonRpcMessage> {
        if self.queue.is_empty() || !self.flight.has_request_room() {
            return None;
        }
        let (message, len) = self.queue.pop_front()?;
        self.queued_bytes -= len;
        self.start(message)
    }

    /// Whether a request of `id` is queued.
    fn is_queued(&self, id: &RequestId) -> bool {
        self.queue.iter().any(|(message, _)| {
            matches!(message, ClientJsonRpcMessage::Request(request) if request.id == *id)
        })
    }

    /// Decides what becomes of a message read from a line of `len` bytes:
    /// a request is handed to rmcp when there is room and nothing waits
    /// before it, else queued, else answered "server busy"; returns the
    /// message for rmcp, or `None` when it was queued, answered or dropped.
    fn admit(&mut self, message: ClientJsonRpcMessage, len: usize) -> Option<ClientJsonRpcMessage> {
        match &message {
            ClientJsonRpcMessage::Request(request) => {
                let listen = matches!(
                    request.request,
                    ClientRequest::SubscriptionsListenRequest(_)
                );
                if self.is_queued(&request.id) || (!listen && self.flight.is_in_flight(&request.id))
                {
                    self.reply(reply(
                        Some(&request.id),
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "Invalid Request: id {} is already used by a request in flight",
                            id_text(&request.id)
                        ),
                    ));
                    return None;
                }
                if listen || (self.queue.is_empty() && self.flight.has_request_room()) {
                    return self.start(message);
                }
                if self.queue.len() < MAX_QUEUED && self.queued_bytes + len <= MAX_QUEUED_BYTES {
                    self.queued_bytes += len;
                    self.queue.push_back((message, len));
                    return None;
                }
                self.reply(reply(
                    Some(&request.id),
                    ErrorCode(SERVER_BUSY),
                    format!(
                        "Server busy: {MAX_IN_FLIGHT} requests are in flight and {MAX_QUEUED} more wait; send this one again once one of them is answered"
                    ),
                ));
                return None;
            }
            _ if !self.started => {
                tracing::debug!("dropped a message that came before the first request");
                return None;
            }
            ClientJsonRpcMessage::Notification(notification) => {
                // rmcp drops the answer to a cancelled request; one still
                // queued is never started.
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.flight.finish(id);
                    if let Some(at) = self.queue.iter().position(|(message, _)| {
                        matches!(message, ClientJsonRpcMessage::Request(request) if request.id == *id)
                    }) && let Some((_, len)) = self.queue.remove(at)
                    {
                        self.queued_bytes -= len;
                    }
                }
            }
            ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_) => {}
        }
        Some(message)
    }

    /// Hands a request to rmcp, counted in flight; `None` when it is refused
    /// (a duplicate id, too many listen streams), answered here.
    fn start(&mut self, message: ClientJsonRpcMessage) -> Option<ClientJsonRpcMessage> {
        if let ClientJsonRpcMessage::Request(request) = &message {
            let listen = matches!(
                request.request,
                ClientRequest::SubscriptionsListenRequest(_)
            );
            if let Err(refusal) = self.flight.start(&request.id, listen) {
                let (code, message) = match refusal {
                    Refusal::Invalid(problem) => (ErrorCode::INVALID_REQUEST, problem),
                    Refusal::Busy => (
                        ErrorCode(SERVER_BUSY),
                        format!(
                            "Server busy: {MAX_IN_FLIGHT} requests are in flight; send this one again once one of them is answered"
                        ),
                    ),
                };
                self.reply(reply(Some(&request.id), code, message));
                return None;
            }
            self.started |= !matches!(
                request.request,
                ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
            );
        }
        Some(message)
    }
}

/// What to do with one line. Lives for one line on the stack: boxing the
/// message would cost an allocation per message for nothing.
#[allow(clippy::large_enum_variant)]
enum Verdict {
    /// Hand it to rmcp.
    Pass(ClientJsonRpcMessage),
    /// Answer it here with these bytes.
    Reply(Vec<u8>),
    /// Nothing: a blank line, or a notification rmcp cannot read.
    Skip,
}

/// Decides what a line is. Well-formed messages are parsed once, straight
/// into rmcp's types; only a line that fails that is looked at again.
fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        if let Some(problem) = cursor_problem(&message, line) {
            return Verdict::Reply(problem);
        }
        return Verdict::Pass(message);
    }
    match malformed::judge(line) {
        Malformed::Answer { id, code, message } => {
            Verdict::Reply(reply(id.as_ref(), code, message))
        }
        Malformed::Ignore => Verdict::Skip,
    }
}

/// The answer to a paginated request whose `cursor` rmcp dropped: its list
/// requests take their params whole or not at all, so `{"cursor": 5}` (or a
/// string cursor next to a malformed field) would serve the first page as if
/// no cursor had been given. `None` for everything else (most lines: the
/// line is looked at again only when it holds `"cursor"`).
fn cursor_problem(message: &ClientJsonRpcMessage, line: &[u8]) -> Option<Vec<u8>> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let parsed = match &request.request {
        ClientRequest::ListToolsRequest(r) => r.params.as_ref().map(|p| &p.cursor),
        ClientRequest::ListPromptsRequest(r) => r.params.as_ref().map(|p| &p.cursor),
        ClientRequest::ListResourcesRequest(r) => r.params.as_ref().map(|p| &p.cursor),
        ClientRequest::ListResourceTemplatesRequest(r) => r.params.as_ref().map(|p| &p.cursor),
        ClientRequest::ListSkillsRequest(r) => r.params.as_ref().map(|p| &p.cursor),
        ClientRequest::ReadResourceDirectoryRequest(r) => Some(&r.params.cursor),
        _ => return None,
    };
    if parsed.is_some_and(Option::is_some) || memchr::memmem::find(line, b"\"cursor\"").is_none() {
        return None;
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    let problem = match value.get("params")?.get("cursor")? {
        Value::Null => return None,
        Value::String(_) => "malformed params".to_owned(),
        other => format!(
            "`cursor` must be a string the server gave as `nextCursor`, not {}",
            crate::text::json_kind(other)
        ),
    };
    Some(reply(
        Some(&request.id),
        ErrorCode::INVALID_PARAMS,
        format!("invalid params for {}: {problem}", request.request.method()),
    ))
}

/// An error reply as one line: `id` when it is known, else `null`.
fn reply(id: Option<&RequestId>, code: ErrorCode, message: String) -> Vec<u8> {
    let error = ErrorData::new(code, message, None);
    let mut bytes = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": error,
    }))
    .unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// A line read from stdin: its place in the buffer, or that it was too long.
enum Line {
    Text(std::ops::Range<usize>),
    TooLong,
}

/// stdin split into lines, never holding more than [`MAX_LINE`] bytes of one.
/// All state lives here, so that a read interrupted by rmcp's `select!`
/// resumes where it stopped.
struct Lines<R> {
    reader: R,
    buffer: Vec<u8>,
    /// Where the next line starts in `buffer`.
    start: usize,
    /// How far past `start` is known to hold no newline.
    scanned: usize,
    /// Inside a line that was too long: drop bytes until its newline.
    skipping: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(reader: R) -> Self {
        Lines {
            reader,
            buffer: Vec::with_capacity(READ_CHUNK),
            start: 0,
            scanned: 0,
            skipping: false,
            eof: false,
        }
    }

    fn get(&self, range: std::ops::Range<usize>) -> &[u8] {
        &self.buffer[range]
    }

    /// The next line (without its newline), `None` at the end of stdin.
    async fn next(&mut self) -> io::Result<Option<Line>> {
        loop {
            if let Some(line) = self.take_line() {
                return Ok(Some(line));
            }
            if self.eof {
                return Ok(None);
            }
            // Drop the lines handed out before reading more, and the room a
            // long line left behind.
            if self.start > 0 {
                self.buffer.drain(..self.start);
                self.start = 0;
            }
            if self.buffer.capacity() > 4 * READ_CHUNK && self.buffer.len() < READ_CHUNK {
                self.buffer.shrink_to(2 * READ_CHUNK);
            }
            self.buffer.reserve(READ_CHUNK);
            let read = (&mut self.reader)
                .take(READ_CHUNK as u64)
                .read_buf(&mut self.buffer)
                .await?;
            if read == 0 {
                self.eof = true;
            }
        }
    }

    /// A whole line from the buffer, if there is one.
    fn take_line(&mut self) -> Option<Line> {
        let pending = &self.buffer[self.start + self.scanned..];
        match pending.iter().position(|&b| b == b'\n') {
            Some(at) => {
                let end = self.start + self.scanned + at;
                let range = self.start..end;
                self.start = end + 1;
                self.scanned = 0;
                if std::mem::take(&mut self.skipping) {
                    return self.take_line();
                }
                if range.len() > MAX_LINE {
                    return Some(Line::TooLong);
                }
                let range = match self.buffer[range.clone()].last() {
                    Some(b'\r') => range.start..range.end - 1,
                    _ => range,
                };
                Some(Line::Text(range))
            }
            None if self.skipping => {
                // Still inside a refused line: forget what came of it.
                self.buffer.truncate(self.start);
                self.scanned = 0;
                None
            }
            None if self.buffer.len() - self.start > MAX_LINE => {
                self.buffer.truncate(self.start);
                self.scanned = 0;
                self.skipping = true;
                Some(Line::TooLong)
            }
            None if self.eof && self.buffer.len() > self.start => {
                // The last line has no newline: take it as it is.
                let range = self.start..self.buffer.len();
                self.start = self.buffer.len();
                self.scanned = 0;
                Some(Line::Text(range))
            }
            None => {
                self.scanned = self.buffer.len() - self.start;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Reply(bytes) => serde_json::from_slice(&bytes).unwrap(),
            Verdict::Pass(message) => json!({ "passed": format!("{message:?}") }),
            Verdict::Skip => json!("skip"),
        }
    }

    #[test]
    fn every_broken_line_gets_an_error_with_a_null_id_unless_the_id_is_known() {
        let invalid_json = judged("{not json");
        assert_eq!(invalid_json["id"], Value::Null);
        assert_eq!(invalid_json["error"]["code"], -32700);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(judged(&deep)["error"]["code"], -32700);
        assert_eq!(
            judged(&deep)["error"]["message"],
            "Parse error: nested too deeply"
        );
        for invalid in [
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"42"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        ] {
            let answer = judged(invalid);
            assert_eq!(answer["error"]["code"], -32600, "{invalid}: {answer}");
            assert_eq!(answer["id"], Value::Null, "{invalid}");
            assert!(answer.as_object().unwrap().contains_key("id"));
        }
        let params = judged(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":5}"#);
        assert_eq!(params["id"], "x");
        assert_eq!(params["error"]["code"], -32602);
        assert_eq!(
            params["error"]["message"],
            "invalid params for tools/call: params must be an object, not a number"
        );
    }

    #[test]
    fn invalid_utf8_in_a_string_is_a_parse_error() {
        let mut line = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
        line.extend_from_slice(b"\xff\"}}");
        match judge(&line) {
            Verdict::Reply(bytes) => {
                let answer: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(answer["error"]["code"], -32700);
            }
            _ => panic!("answered"),
        }
    }

    #[test]
    fn notifications_and_blank_lines_get_nothing_and_good_lines_pass() {
        assert_eq!(judged(""), json!("skip"));
        assert_eq!(judged("  \t"), json!("skip"));
        assert_eq!(
            judged(r#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            json!("skip")
        );
        assert!(judged(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)["passed"].is_string());
        assert!(
            judged(
                "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":null}"
            )["passed"]
                .is_string()
        );
    }

    /// The reason the transport answers `-32602` itself. When this fails,
    /// rmcp has learnt to read such requests: `judge_value`'s params branch
    /// is then dead and can go.
    #[test]
    fn rmcp_still_rejects_params_that_are_not_an_object() {
        for params in ["5", "[\"skill\"]", "\"x\"", "true"] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{params}}}"#);
            assert!(
                serde_json::from_str::<ClientJsonRpcMessage>(&line).is_err(),
                "rmcp now reads `\"params\": {params}`"
            );
        }
    }

    #[tokio::test]
    async fn lines_are_split_bounded_and_resumed() {
        let mut input = b"one\r\ntwo\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend_from_slice(b"\nthree");
        let mut lines = Lines::new(&input[..]);
        let mut seen = Vec::new();
        while let Some(line) = lines.next().await.unwrap() {
            seen.push(match line {
                Line::Text(range) if range.len() < 10 => {
                    String::from_utf8(lines.get(range).to_vec()).unwrap()
                }
                Line::Text(range) => format!("<{} bytes>", range.len()),
                Line::TooLong => "<too long>".to_owned(),
            });
        }
        assert_eq!(seen, ["one", "two", "<too long>", "three"]);
        assert!(
            lines.buffer.capacity() <= 4 * READ_CHUNK,
            "the room is given back"
        );
    }

    #[test]
    fn a_duplicate_id_in_flight_is_refused_and_freed_when_answered() {
        let flight = InFlight::default();
        let id = RequestId::Number(7);
        flight.start(&id, false).unwrap();
        assert!(
            matches!(flight.start(&id, false), Err(Refusal::Invalid(problem)) if problem.contains("id 7"))
        );
        flight.finish(&id);
        flight.start(&id, false).unwrap();
    }

    #[test]
    fn past_the_bound_a_request_is_busy_and_listen_streams_do_not_count() {
        let flight = InFlight::default();
        for id in 0..MAX_IN_FLIGHT {
            flight.start(&RequestId::Number(id as i64), false).unwrap();
        }
        let next = RequestId::Number(1000);
        assert!(matches!(flight.start(&next, false), Err(Refusal::Busy)));
        flight.start(&RequestId::Number(2000), true).unwrap();
        flight.finish(&RequestId::Number(0));
        flight.start(&next, false).unwrap();
    }

    #[test]
    fn a_cursor_that_is_not_a_string_is_invalid_params_not_the_first_page() {
        for (params, problem) in [
            (
                r#"{"cursor":5}"#,
                "`cursor` must be a string the server gave as `nextCursor`, not a number",
            ),
            (
                r#"{"cursor":[1]}"#,
                "`cursor` must be a string the server gave as `nextCursor`, not an array",
            ),
            (
                r#"{"cursor":true}"#,
                "`cursor` must be a string the server gave as `nextCursor`, not a boolean",
            ),
            (r#"{"cursor":"x","_meta":5}"#, "malformed params"),
        ] {
            for method in [
                "tools/list",
                "prompts/list",
                "resources/list",
                "resources/templates/list",
                "skills/list",
            ] {
                let line =
                    format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{params}}}"#);
                let answer = judged(&line);
                assert_eq!(answer["error"]["code"], -32602, "{line}: {answer}");
                assert_eq!(answer["id"], 3);
                assert_eq!(
                    answer["error"]["message"],
                    format!("invalid params for {method}: {problem}"),
                    "{line}"
                );
            }
        }
        for fine in [
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":"abc"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"skill","arguments":{"name":"\"cursor\""}}}"#,
        ] {
            assert!(judged(fine)["passed"].is_string(), "{fine}");
        }
    }
}
