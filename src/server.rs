//! The MCP server: one tool, `skill`, over stdio (design §5, §7).
//!
//! This module is the only place that knows rmcp's server types. It turns the
//! registry's answers into tool results, keeps protocol errors for requests that
//! are not valid calls at all, and runs the stdio loop until the client goes
//! away or a signal arrives.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::config::{Config, ServeOptions};
use crate::diagnostic::Severity;
use crate::registry::Registry;
use crate::render;
use crate::stdio;
use crate::watch;

/// The one tool's name.
pub const TOOL_NAME: &str = "skill";
/// The one tool's title.
pub const TOOL_TITLE: &str = "Load skill";
/// What the `name` argument is, for the input schema.
pub const NAME_ARGUMENT_DESCRIPTION: &str = "Name of the skill to load, exactly as listed (e.g. `pdf` or `document-skills:pdf`); case does not matter.";
/// Lets Claude Code pass a long SKILL.md through uncut (its default cap is 25k tokens).
pub const MAX_RESULT_SIZE_CHARS: u64 = 500_000;

/// Server `instructions`: tell the model plainly when to call the tool.
pub const INSTRUCTIONS: &str = "This server provides Agent Skills: tested instructions (with scripts and reference files) for specialised tasks. Whenever a task matches a skill listed in the `skill` tool's description, call `skill` with that name before starting and follow the instructions it returns. Paths mentioned in a skill are relative to the `Base directory` line of the answer.";

/// The `skill` tool with the given description.
pub fn tool(description: &str) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": NAME_ARGUMENT_DESCRIPTION }
        },
        "required": ["name"]
    });
    let Value::Object(schema) = schema else {
        unreachable!("the schema literal is an object")
    };
    let mut meta = JsonObject::new();
    meta.insert(
        "anthropic/maxResultSizeChars".into(),
        MAX_RESULT_SIZE_CHARS.into(),
    );
    Tool::new(TOOL_NAME, description.to_owned(), Arc::new(schema))
        .with_title(TOOL_TITLE)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
        .with_meta(MetaObject(meta))
}

/// The rmcp handler.
#[derive(Clone)]
pub struct SkillServer {
    registry: Arc<Registry>,
}

impl SkillServer {
    pub fn new(registry: Arc<Registry>) -> SkillServer {
        SkillServer { registry }
    }
}

/// The `name` argument, or why it is unusable.
fn name_argument(request: &CallToolRequestParams) -> Result<&str, &'static str> {
    let value = request
        .arguments
        .as_ref()
        .and_then(|arguments| arguments.get("name"));
    match value {
        None | Some(Value::Null) => Err("it is missing"),
        Some(Value::String(name)) if name.trim().is_empty() => Err("it is empty"),
        Some(Value::String(name)) => Ok(name),
        Some(Value::Number(_)) => Err("got a number"),
        Some(Value::Bool(_)) => Err("got a boolean"),
        Some(Value::Array(_)) => Err("got an array"),
        Some(Value::Object(_)) => Err("got an object"),
    }
}

impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("skillserve", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let loaded = self.registry.current();
        Ok(ListToolsResult::with_all_items(vec![tool(
            &loaded.description,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool '{}': this server has one tool, `{TOOL_NAME}`",
                    request.name
                ),
                None,
            ));
        }
        let name = match name_argument(&request) {
            Ok(name) => name,
            Err(problem) => {
                let message = render::invalid_params(problem);
                let mut result = CallToolResult::error(vec![ContentBlock::text(message.clone())]);
                result.structured_content = Some(json!({
                    "error": { "code": ErrorCode::INVALID_PARAMS.0, "message": message }
                }));
                return Ok(result.into());
            }
        };
        let answer = self.registry.call(name).await;
        let is_error = answer.is_error();
        let content = vec![ContentBlock::text(answer.into_text())];
        Ok(if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }

    /// rmcp routes a request of a known method whose params do not deserialize
    /// here; answer those with -32602 (the params are wrong, the method exists)
    /// and truly unknown methods with -32601.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // Params that were not an object at all (renamed by `stdio`).
        if request.method == stdio::INVALID_PARAMS_METHOD {
            let field = |name| {
                let value = request.params.as_ref().and_then(|p| p.get(name));
                value.and_then(Value::as_str).unwrap_or("?").to_owned()
            };
            return Err(ErrorData::invalid_params(
                format!(
                    "invalid params for {}: {}",
                    field("method"),
                    field("problem")
                ),
                None,
            ));
        }
        let problem = match request.method.as_str() {
            "tools/call" => request.params_as::<CallToolRequestParams>().err(),
            "tools/list" => request.params_as::<PaginatedRequestParams>().err(),
            "initialize" | "ping" => None,
            _ => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: {}", request.method),
                    None,
                ));
            }
        };
        let detail = problem.map_or_else(|| "malformed params".to_owned(), |e| e.to_string());
        Err(ErrorData::invalid_params(
            format!("invalid params for {}: {detail}", request.method),
            None,
        ))
    }
}

/// Why the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// stdin closed: the client went away.
    Eof,
    Signal(&'static str),
}

/// Runs the server on stdio until stdin closes or SIGINT/SIGTERM arrives.
///
/// The first scan runs on a blocking thread while signals are already being
/// listened for, so even a slow start-up can be interrupted cleanly.
pub async fn run(config: Config, options: ServeOptions) -> anyhow::Result<Stop> {
    let mut shutdown = std::pin::pin!(shutdown_signal());
    let budget = options.description_budget;
    let started = Instant::now();
    let registry = tokio::select! {
        registry = tokio::task::spawn_blocking(move || Registry::new(config, budget)) => Arc::new(registry?),
        signal = &mut shutdown => return Ok(Stop::Signal(signal)),
    };
    log_startup(&registry, &options, started.elapsed());

    let server = SkillServer::new(Arc::clone(&registry));
    let running = tokio::select! {
        running = server.serve(stdio::pipes()) => match running {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(Stop::Eof),
            Err(err) => return Err(anyhow::anyhow!("MCP handshake failed: {err}")),
        },
        signal = &mut shutdown => return Ok(Stop::Signal(signal)),
    };
    let mut background = vec![notify_changes(&registry, running.peer().clone())];
    if let Some(every) = options.refresh_interval {
        background.push(registry.spawn_interval(every));
    }
    if options.watch {
        let registry = Arc::clone(&registry);
        background.push(tokio::spawn(watch::run(registry, options.refresh_interval)));
    }

    // On a signal, stop at once: rmcp would let in-flight requests (a call
    // waiting for a rescan, say) finish first, for up to two seconds.
    let stop = tokio::select! {
        quit = running.waiting() => {
            quit?;
            Stop::Eof
        }
        signal = &mut shutdown => Stop::Signal(signal),
    };
    for task in background {
        task.abort();
    }
    Ok(stop)
}

/// Sends `notifications/tools/list_changed` whenever the description changes.
/// A client that has gone away makes sending fail; that is not an error.
fn notify_changes(registry: &Registry, peer: Peer<RoleServer>) -> tokio::task::JoinHandle<()> {
    let mut changes = registry.description_changes();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            match peer.notify_tool_list_changed().await {
                Ok(()) => tracing::debug!("sent notifications/tools/list_changed"),
                Err(err) => tracing::debug!("could not send tools/list_changed: {err}"),
            }
        }
    })
}

fn log_startup(registry: &Registry, options: &ServeOptions, elapsed: std::time::Duration) {
    let loaded = registry.current();
    let snapshot = &loaded.snapshot;
    for diagnostic in &snapshot.diagnostics {
        diagnostic.log();
    }
    let by_source = snapshot.count_by_source();
    let errors = snapshot
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let existing = snapshot.roots.len() - snapshot.missing_roots.len();
    tracing::info!(
        "skillserve {} serving {} skills ({}) from {existing} of {} folders in {:.1} ms; {} diagnostics ({errors} errors){}",
        env!("CARGO_PKG_VERSION"),
        snapshot.skills().len(),
        if by_source.is_empty() {
            "none"
        } else {
            &by_source
        },
        snapshot.roots.len(),
        elapsed.as_secs_f64() * 1e3,
        snapshot.diagnostics.len(),
        if snapshot.diagnostics.is_empty() {
            ""
        } else {
            "; run `skillserve check` for details"
        },
    );
    tracing::info!(
        "refresh: {}; file watching: {}",
        match options.refresh_interval {
            Some(every) => format!("every {} s", every.as_secs()),
            None => "off".to_owned(),
        },
        if options.watch {
            "on"
        } else {
            "off (--no-watch)"
        },
    );
    for (root, count) in snapshot.roots.iter().zip(&snapshot.per_root) {
        tracing::debug!(source = %root.source, skills = count, "scanned {}", root.path.display());
    }
}

/// Resolves with the name of the first SIGINT or SIGTERM.
pub async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(err) => {
                tracing::warn!("cannot listen for SIGTERM: {err}");
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
