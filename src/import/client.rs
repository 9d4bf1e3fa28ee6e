//! One MCP server, started as a child process and spoken to over its stdio
//! with rmcp's client.
//!
//! Every wait is bounded: start-up (spawn and `initialize`) and each request
//! get the caller's timeout. The server's stderr is kept as a bounded tail (the
//! last [`TAIL_LINES`] lines, at most [`TAIL_BYTES`] bytes) to explain a failure.
//! The program is found the way the platform's shell would find it
//! ([`crate::program`]: on Windows `npx` is `npx.cmd`, started through
//! `cmd.exe`). The server and everything it starts are killed together when
//! the connection is dropped or times out, so that a wrapper such as `npx`
//! does not leave its `node` behind: on Unix the server leads a process group
//! of its own, on Windows it runs in a Job Object (which also holds the
//! `cmd.exe` of a `.cmd` launcher).

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, ProtocolVersion, Tool,
};
use rmcp::service::{ClientInitializeError, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;

use super::settings::Launch;
use crate::program::{Program, ProgramError, SearchEnv};

/// Lines of stderr kept to explain a failure.
pub const TAIL_LINES: usize = 20;
/// Bytes of stderr kept to explain a failure.
pub const TAIL_BYTES: usize = 4096;
/// How long a server may take to exit once its stdin is closed (rmcp then
/// sends SIGTERM, and later kills it).
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// How long to wait for the rest of stderr once a server has failed.
const TAIL_WAIT: Duration = Duration::from_secs(1);

/// Why a server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// The program was not found, or its arguments cannot reach it.
    #[error("cannot start `{command}`: {source}")]
    Program {
        command: String,
        #[source]
        source: ProgramError,
    },
    #[error("did not answer `initialize` within {} s (--timeout sets the limit)", .0.as_secs_f64())]
    StartTimeout(Duration),
    #[error("exited (or closed its stdout) before answering `initialize`")]
    ExitedEarly,
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    #[error("did not answer `{method}` within {} s (--timeout sets the limit)", .after.as_secs_f64())]
    Timeout {
        method: &'static str,
        after: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("`{method}` was refused: {message}")]
    Rpc {
        method: &'static str,
        message: String,
    },
    #[error("`{method}` failed: {message}")]
    Request {
        method: &'static str,
        message: String,
    },
}

/// A [`ServerError`] with the last lines the server wrote to stderr.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Failure {
    #[source]
    pub error: ServerError,
    /// The tail of stderr, control characters escaped; may be empty.
    pub stderr: String,
}

/// A running server with an initialized MCP session.
pub struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    stderr: Tail,
}

impl Connection {
    /// Starts `launch` in the current directory, with its `env` on top of the
    /// inherited environment, and performs the MCP handshake within `timeout`.
    /// The program is looked for in `programs` (with the `PATH` that `env`
    /// may set).
    pub async fn start(
        launch: &Launch,
        programs: &SearchEnv,
        timeout: Duration,
    ) -> Result<Connection, Failure> {
        let failure = |error| Failure {
            error,
            stderr: String::new(),
        };
        let program_error = |source| {
            failure(ServerError::Program {
                command: launch.command.clone(),
                source,
            })
        };
        let program = Program::find(&launch.command, &programs.with_overrides(&launch.env))
            .map_err(program_error)?;
        tracing::debug!(program = %program.path.display(), kind = ?program.kind, "found");
        let mut command = program.command(&launch.args).map_err(program_error)?;
        command.envs(launch.env.iter().cloned());
        let mut command = CommandWrap::from(tokio::process::Command::from(command));
        command.wrap(KillOnDrop);
        #[cfg(unix)]
        command.wrap(process_wrap::tokio::ProcessGroup::leader());
        #[cfg(windows)]
        command.wrap(process_wrap::tokio::JobObject);
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| {
                failure(ServerError::Spawn {
                    command: launch.command.clone(),
                    source,
                })
            })?;
        let mut tail = Tail::read(stderr);
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("skillserve", env!("CARGO_PKG_VERSION")),
        )
        // rmcp's default (2026-07-28) has no `initialize`; this is the newest
        // version that has one, and servers answer with theirs when they do
        // not know it.
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        // On a timeout the handshake future, and with it the child, is
        // dropped: the process group (the Job Object) is killed then.
        let error = match tokio::time::timeout(timeout, client.serve(transport)).await {
            Ok(Ok(service)) => {
                return Ok(Connection {
                    service,
                    stderr: tail,
                });
            }
            // Whether the server was gone when `initialize` was sent or
            // when its answer was awaited, it exited (stderr says why).
            Ok(Err(
                ClientInitializeError::ConnectionClosed(_)
                | ClientInitializeError::TransportError { .. },
            )) => ServerError::ExitedEarly,
            Ok(Err(ClientInitializeError::JsonRpcError(error))) => {
                ServerError::Handshake(format!("`initialize` was refused: {}", error.message))
            }
            Ok(Err(error)) => ServerError::Handshake(error.to_string()),
            Err(_) => ServerError::StartTimeout(timeout),
        };
        Err(Failure {
            error,
            stderr: tail.finish().await,
        })
    }

    /// Every tool the server has (`tools/list`, all pages), within `timeout`.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<Tool>, ServerError> {
        bounded("tools/list", timeout, self.service.list_all_tools()).await
    }

    /// Calls `tool` with `arguments` within `timeout`.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        timeout: Duration,
    ) -> Result<CallToolResult, ServerError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        bounded("tools/call", timeout, self.service.call_tool(params)).await
    }

    /// Closes the session: the server's stdin is closed and it gets a few
    /// seconds to exit before it is terminated.
    pub async fn close(mut self) {
        let _ = self.service.close_with_timeout(CLOSE_WAIT).await;
    }

    /// Ends the session after `error` and returns it with the stderr tail.
    /// The server is killed rather than asked to exit: it already misbehaved.
    pub async fn fail(self, error: ServerError) -> Failure {
        let Connection {
            service,
            mut stderr,
        } = self;
        drop(service);
        Failure {
            error,
            stderr: stderr.finish().await,
        }
    }
}

/// Writes each line of `text` (a stderr tail) with `indent` before it.
pub fn write_indented(
    out: &mut dyn std::io::Write,
    indent: &str,
    text: &str,
) -> std::io::Result<()> {
    // A server's own output: it must not drive the terminal.
    for line in text.lines() {
        writeln!(out, "{indent}{}", crate::text::printable(line))?;
    }
    Ok(())
}

/// `request` (the request `method`) within `timeout`, its errors as
/// [`ServerError`]s.
async fn bounded<T>(
    method: &'static str,
    timeout: Duration,
    request: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, ServerError> {
    match tokio::time::timeout(timeout, request).await {
        Ok(result) => result.map_err(|e| request_error(method, e)),
        Err(_) => Err(ServerError::Timeout {
            method,
            after: timeout,
        }),
    }
}

fn request_error(method: &'static str, error: ServiceError) -> ServerError {
    match error {
        ServiceError::McpError(data) => ServerError::Rpc {
            method,
            message: data.message.into_owned(),
        },
        ServiceError::TransportClosed => ServerError::Request {
            method,
            message: "the server closed the connection (did it exit?)".to_owned(),
        },
        other => ServerError::Request {
            method,
            message: other.to_string(),
        },
    }
}

/// The end of a child's stderr: read in the background, never more than
/// [`TAIL_BYTES`] held.
struct Tail {
    buffer: Arc<Mutex<TailBuffer>>,
    reader: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct TailBuffer {
    bytes: VecDeque<u8>,
    /// Whether older bytes were dropped (the first line kept may be partial).
    cut: bool,
}

impl Tail {
    fn read(stderr: Option<ChildStderr>) -> Tail {
        let buffer = Arc::new(Mutex::new(TailBuffer::default()));
        let reader = stderr.map(|mut stderr| {
            let buffer = Arc::clone(&buffer);
            tokio::spawn(async move {
                let mut chunk = [0u8; 1024];
                while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
                    let mut buffer = buffer.lock().unwrap_or_else(PoisonError::into_inner);
                    buffer.push(&chunk[..n]);
                }
            })
        });
        Tail { buffer, reader }
    }

    /// Waits (briefly) for the server to close stderr, then renders the tail.
    async fn finish(&mut self) -> String {
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(TAIL_WAIT, reader).await;
        }
        let buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        buffer.render()
    }
}

impl TailBuffer {
    fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend(bytes);
        let excess = self.bytes.len().saturating_sub(TAIL_BYTES);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.cut = true;
        }
    }

    /// The last [`TAIL_LINES`] non-empty lines, control characters escaped (a
    /// server's output must not drive the terminal).
    fn render(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        let text = String::from_utf8_lossy(&[front, back].concat()).into_owned();
        let mut lines: Vec<&str> = text.lines().collect();
        if self.cut && !lines.is_empty() {
            lines.remove(0);
        }
        let lines: Vec<String> = lines
            .into_iter()
            .map(str::trim_end)
            .filter(|line| !line.is_empty())
            .map(|line| crate::text::printable(line).into_owned())
            .collect();
        let skip = lines.len().saturating_sub(TAIL_LINES);
        lines[skip..].join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_within_its_bounds() {
        let mut tail = TailBuffer::default();
        for i in 0..30 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        let text = tail.render();
        assert_eq!(text.lines().count(), TAIL_LINES);
        assert!(text.starts_with("line 10\n") && text.ends_with("line 29"));

        let mut tail = TailBuffer::default();
        tail.push(&vec![b'x'; 3 * TAIL_BYTES]);
        tail.push(b"\nlast words\x1b[31m\n");
        assert_eq!(tail.bytes.len(), TAIL_BYTES);
        assert_eq!(tail.render(), "last words\\u{1b}[31m");
    }
}
