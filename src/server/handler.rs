//! The rmcp handler: the `skill` tool (behaviour.md §5) and the answers to
//! every MCP request. It turns answers into tool results, and keeps protocol
//! errors for requests that are not valid calls at all.
//!
//! Every request is answered from the view of the client that sent it
//! (behaviour.md §17): the client's name is `clientInfo.name` from
//! `initialize`, or on 2026-07-28 the client info in the request's own
//! `_meta`. Prompts and resources may be off for one client and on for
//! another: `initialize` and `server/discover` declare what the asking client
//! gets, and `get_info` (which rmcp asks when no client is known) what any
//! client may get.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ConstString, ContentBlock, CustomRequest, CustomResult, DiscoverResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    MetaObject, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::{CancellationToken, DropGuard};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64_STANDARD;

use crate::answer::{Answer, FileAnswer};
use crate::config::ServeOptions;
use crate::profiles::{Surfaces, View, ViewId};
use crate::render;
use crate::server::app::{self, App};
use crate::server::registry::{Changes, Registry};
use crate::server::rescan::Caller;
use crate::server::{page, prompts, resources, skills};
use crate::usage::{Surface, Use};

/// The one tool's name.
pub const TOOL_NAME: &str = "skill";
/// The one tool's title.
pub const TOOL_TITLE: &str = "Load skill";
/// What the `name` argument is, for the input schema.
pub const NAME_ARGUMENT_DESCRIPTION: &str = "Name of the skill to load, exactly as listed (e.g. `pdf` or `document-skills:pdf`); case does not matter.";
/// What the `file` argument is, for the input schema.
pub const FILE_ARGUMENT_DESCRIPTION: &str = "A file inside the skill's folder, as listed when the skill is loaded (e.g. `references/forms.md`); omit it to load the skill itself.";
/// Lets Claude Code pass a long SKILL.md through uncut (its default cap is 25k tokens).
pub const MAX_RESULT_SIZE_CHARS: u64 = 500_000;

/// The `skill` tool with the given description.
pub fn tool(description: &str) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": NAME_ARGUMENT_DESCRIPTION },
            "file": { "type": "string", "description": FILE_ARGUMENT_DESCRIPTION }
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

/// The rmcp handler: one for the stdio connection; over HTTP, one per
/// session and one per stateless request, all sharing the registry and the
/// caller (whose rescans on a miss are rate-limited across clients).
pub struct SkillServer {
    registry: Arc<Registry>,
    caller: Arc<Caller>,
    /// The skills manager (MCP App), shared by every handler of the server.
    app: Arc<App>,
    /// Served over HTTP: the instructions say how to read files remotely.
    remote: bool,
    /// Cancelled when the handler is dropped (its session ended): ends the
    /// session's list-changed task.
    ended: CancellationToken,
    /// The changes since the handler was made (before the client's
    /// `initialized` arrives, so none is missed), for its list-changed task.
    changes: std::sync::Mutex<Option<Changes>>,
    /// The `skills/list` page after the last one answered, made while the
    /// client reads that one.
    ahead: std::sync::Mutex<Option<Ahead>>,
    _end_on_drop: DropGuard,
}

/// A `skills/list` page made ahead, on stdio: a client that walks the list
/// asks for the page after the one it has, and it reads each page (72 MB of
/// JSON in all at 100,000 skills) while the server would wait. It is served to a request
/// for its cursor in the same view within [`AHEAD_FOR`] of when it was
/// started, else made again.
struct Ahead {
    view: ViewId,
    cursor: String,
    started: std::time::Instant,
    page: tokio::task::JoinHandle<Result<ListSkillsResult, ErrorData>>,
}

/// How long a page made ahead is served: its listings and digests are as
/// they were when it was made, at most this long before the request (the
/// page itself tells clients they may keep it for [`skills::TTL_MS`]).
const AHEAD_FOR: std::time::Duration = std::time::Duration::from_secs(1);

/// The `_meta` key of a 2026-07-28 request's client info.
const CLIENT_INFO_META: &str = "io.modelcontextprotocol/clientInfo";

/// The name the client that sent a request gives: the client info of the
/// request's own `_meta` (2026-07-28), else `clientInfo` of the
/// connection's `initialize`. The one place the handler learns who is
/// asking; only the name is read (not the whole client info, as
/// [`RequestContext::client_info`] would), since every request asks.
pub fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    let meta = &context.meta.0.0;
    let from_meta = meta
        .get(CLIENT_INFO_META)
        .and_then(|info| info.get("name"))
        .and_then(Value::as_str);
    let name = match from_meta {
        Some(name) => Some(name.to_owned()),
        None => context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone()),
    };
    name.filter(|name| !name.is_empty())
}

/// The capabilities of a client that is offered prompts and resources as
/// given.
fn capabilities(prompts: bool, resources: bool) -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .build();
    if prompts {
        let with_prompts = ServerCapabilities::builder()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        capabilities.prompts = with_prompts.prompts;
    }
    if resources {
        let with_resources = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills_with_directory_read()
            .build();
        capabilities.resources = with_resources.resources;
        capabilities.extensions = with_resources.extensions;
    }
    if prompts || resources {
        capabilities.completions = ServerCapabilities::builder()
            .enable_completions()
            .build()
            .completions;
    }
    capabilities
}

impl SkillServer {
    /// A handler over `registry`; `options` says whether it is served over
    /// HTTP (prompts, resources and the budget are each client's, from the
    /// registry's settings).
    pub fn new(
        registry: Arc<Registry>,
        caller: Arc<Caller>,
        app: Arc<App>,
        options: &ServeOptions,
    ) -> SkillServer {
        let ended = CancellationToken::new();
        SkillServer {
            changes: std::sync::Mutex::new(Some(registry.changes())),
            ahead: std::sync::Mutex::default(),
            caller,
            app,
            registry,
            remote: options.http.is_some(),
            _end_on_drop: ended.clone().drop_guard(),
            ended,
        }
    }

    /// The view and surfaces of the client called `client`, of the current
    /// snapshot.
    async fn seen(&self, client: Option<&str>) -> (View, Surfaces) {
        let served = self.registry.current();
        self.registry.view_and_surfaces(&served, client).await
    }

    /// The server's description for the client called `client`, which
    /// declares the UI extension or not (`ui`): its capabilities and its
    /// instructions (which may carry the catalog, so its view is computed
    /// now if it is not yet, and its first request finds it ready).
    async fn info_for(&self, client: Option<&str>, ui: bool) -> ServerConfig {
        let (view, surfaces) = self.seen(client).await;
        let mut capabilities = capabilities(surfaces.prompts, surfaces.resources);
        if ui {
            with_app(&mut capabilities);
        }
        server_config(capabilities, view.instructions())
    }

    /// Who asks for a change of the skills manager.
    fn app_caller(&self, context: &RequestContext<RoleServer>) -> app::Caller {
        if self.remote {
            crate::server::http::auth::app_caller(context)
        } else {
            app::Caller::Stdio
        }
    }

    /// Prompts answer -32601 when they are off for the client.
    fn prompts_offered<M: ConstString>(&self, surfaces: Surfaces) -> Result<(), ErrorData> {
        let flag = self.registry.settings().rules.prompts_flag;
        offered::<M>(surfaces.prompts, flag, "--no-prompts", "prompts")
    }

    /// Resources (and the skills extension) answer -32601 when they are off
    /// for the client.
    fn resources_offered<M: ConstString>(&self, surfaces: Surfaces) -> Result<(), ErrorData> {
        let flag = self.registry.settings().rules.resources_flag;
        offered::<M>(surfaces.resources, flag, "--no-resources", "resources")
    }

    /// Starts making the `skills/list` page at `cursor` in `view`, for the
    /// request a client walking the list sends next ([`Ahead`]).
    fn make_ahead(&self, view: View, cursor: String) {
        let registry = Arc::clone(&self.registry);
        // Only the view's identity is kept with the page: a page made ahead
        // and never asked for must not keep a replaced snapshot alive.
        let id = view.id();
        let at = cursor.clone();
        let page = tokio::task::spawn_blocking(move || {
            let request = PaginatedRequestParams::default().with_cursor(Some(at));
            skills::list(&view, registry.files(), Some(&request))
        });
        *self
            .ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Ahead {
            view: id,
            cursor,
            started: std::time::Instant::now(),
            page,
        });
    }

    /// Runs `work` on the client's view on a blocking thread: listings and
    /// digests read folders and whole files.
    async fn blocking<T: Send + 'static>(
        &self,
        view: View,
        work: impl FnOnce(&View, &crate::files::Files) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let registry = Arc::clone(&self.registry);
        joined(tokio::task::spawn_blocking(move || {
            work(&view, registry.files())
        }))
        .await
    }
}

/// What the blocking task `task` answered; an internal error if it panicked.
async fn joined<T>(task: tokio::task::JoinHandle<Result<T, ErrorData>>) -> Result<T, ErrorData> {
    task.await
        .map_err(|err| ErrorData::internal_error(format!("the request failed: {err}"), None))?
}

/// What a client with the UI extension is offered besides: the resource of
/// the app (readable even where other resources are off for the client) and
/// the extension itself.
fn with_app(capabilities: &mut ServerCapabilities) {
    if capabilities.resources.is_none() {
        capabilities.resources = ServerCapabilities::builder()
            .enable_resources()
            .build()
            .resources;
    }
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(app::EXTENSION.to_owned(), JsonObject::new());
}

/// The server's description with `capabilities` and `instructions`.
fn server_config(capabilities: ServerCapabilities, instructions: &str) -> ServerConfig {
    ServerConfig::new(capabilities)
        .with_server_info(Implementation::new("skillserve", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions)
}

/// Sends the client called `client` the list-changed notifications (tools,
/// and prompts and resources when they are offered to it) whenever those
/// lists change for it, until `ended` is cancelled or the client has gone.
/// A 2026-07-28 client hears of changes only on the `subscriptions/listen`
/// streams it opens (`listen`).
fn notify_changes(
    mut changes: Changes,
    peer: Peer<RoleServer>,
    client: Option<String>,
    ended: CancellationToken,
) {
    tokio::spawn(async move {
        loop {
            let changed = tokio::select! {
                () = ended.cancelled() => return,
                changed = changes.next(client.as_deref()) => match changed {
                    Some(changed) => changed,
                    None => return,
                },
            };
            let sent = async {
                if changed.tools {
                    peer.notify_tool_list_changed().await?;
                }
                if changed.prompts {
                    peer.notify_prompt_list_changed().await?;
                }
                if changed.resources {
                    peer.notify_resource_list_changed().await?;
                }
                Ok::<(), rmcp::service::ServiceError>(())
            };
            match sent.await {
                Ok(()) => tracing::debug!("sent list-changed notifications: {changed:?}"),
                Err(rmcp::service::ServiceError::TransportClosed) => return,
                Err(err) => tracing::debug!("could not send list-changed notifications: {err}"),
            }
        }
    });
}

/// -32601 naming the method and what switched it off: the flag, or the
/// settings file (for every client, or for this one).
fn offered<M: ConstString>(
    on: bool,
    by_flag: bool,
    flag: &str,
    what: &str,
) -> Result<(), ErrorData> {
    if on {
        return Ok(());
    }
    let why = if by_flag {
        format!("skillserve runs with {flag}")
    } else {
        format!("{what} are off for this client in skillserve's config.toml")
    };
    Err(ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {} ({why})", M::VALUE),
        None,
    ))
}

/// The `file` argument, if given, or why it is unusable (`null` counts as
/// not given).
fn file_argument(request: &CallToolRequestParams) -> Result<Option<&str>, String> {
    match request.arguments.as_ref().and_then(|a| a.get("file")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(file)) => Ok(Some(file)),
        Some(_) => Err(render::invalid_file_argument()),
    }
}

/// The content blocks of an answer with a `file`: text, or text and the image.
fn file_blocks(answer: FileAnswer) -> Vec<ContentBlock> {
    match answer {
        FileAnswer::File { text, .. }
        | FileAnswer::Text(text)
        | FileAnswer::Refused { text, .. } => {
            vec![ContentBlock::text(text)]
        }
        FileAnswer::Image {
            text, mime, bytes, ..
        } => vec![
            ContentBlock::text(text),
            ContentBlock::image(BASE64_STANDARD.encode(bytes), mime),
        ],
        FileAnswer::Skill(answer) => text_blocks(answer),
    }
}

fn text_blocks(answer: Answer) -> Vec<ContentBlock> {
    answer
        .into_blocks()
        .into_iter()
        .map(ContentBlock::text)
        .collect()
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

/// A bad `name` argument as a tool error (behaviour.md §5.3): the model
/// reads `message`, and clients that look for it find -32602.
fn invalid_params(message: String) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(message.clone())]);
    result.structured_content = Some(json!({
        "error": { "code": ErrorCode::INVALID_PARAMS.0, "message": message }
    }));
    result
}

impl ServerHandler for SkillServer {
    /// What any client may be offered: rmcp asks this before it knows who
    /// asks (and checks the skills extension's methods against it). The
    /// instructions are those of a client whose catalog is in the tool
    /// description: `initialize` and `server/discover` answer each client
    /// with its own.
    fn get_info(&self) -> ServerConfig {
        let (prompts, resources) = self.registry.current().profiles.any_surfaces();
        let instructions = if self.remote {
            render::REMOTE_INSTRUCTIONS
        } else {
            render::INSTRUCTIONS
        };
        server_config(capabilities(prompts, resources), instructions)
    }

    /// What this client is offered, by the name it gives: its capabilities
    /// and instructions.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let client = Some(request.client_info.name.as_str()).filter(|name| !name.is_empty());
        let mut result = self.negotiate_initialize(&request)?;
        let info = self.info_for(client, app::declared(&context)).await;
        result.capabilities = info.capabilities;
        result.instructions = info.instructions;
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let client = client_name(&context);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.info_for(client.as_deref(), app::declared(&context))
                .await,
        ))
    }

    /// A client that connected with `initialize` (2025-11-25 and older)
    /// hears of changes to what it is shown through notifications on its
    /// connection (stdio) or session stream (HTTP), until the session ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let client = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .filter(|name| !name.is_empty());
        if let Some(name) = &client {
            tracing::debug!(client = %crate::text::printable(name), "client initialized");
        }
        let changes = self
            .changes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(changes) = changes {
            notify_changes(changes, context.peer, client, self.ended.clone());
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        page::single(request.as_ref(), "tools/list")?;
        let (view, _) = self.seen(client_name(&context).as_deref()).await;
        let mut tools = vec![tool(view.description())];
        // App-only tools are listed too: the host hides them from the
        // model, and must know them to let the page call them.
        if app::declared(&context) {
            tools.extend(app::tools());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = client_name(&context);
        let caller = crate::server::http::auth::Caller::of(&context);
        tracing::trace!(
            client = %crate::text::printable(client.as_deref().unwrap_or("unknown")),
            caller = %caller.map_or_else(|| "stdio".to_owned(), |caller| caller.label()),
            admin = caller.is_some_and(|caller| caller.admin),
            "tools/call"
        );
        if request.name != TOOL_NAME {
            if app::is_app_tool(&request.name) && app::declared(&context) {
                let caller = self.app_caller(&context);
                return Ok(self
                    .app
                    .call(&self.registry, &request, caller)
                    .await?
                    .into());
            }
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool '{}': this server has one tool, `{TOOL_NAME}`",
                    request.name
                ),
                None,
            ));
        }
        let arguments = name_argument(&request)
            .map_err(render::invalid_params)
            .and_then(|name| Ok((name, file_argument(&request)?)));
        let (name, file) = match arguments {
            Ok(arguments) => arguments,
            Err(message) => return Ok(invalid_params(message).into()),
        };
        let client = client.as_deref();
        let usage = self.registry.usage();
        let (is_error, content) = match file {
            None => match self.caller.call(client, name).await {
                Answer::Invalid(message) => return Ok(invalid_params(message).into()),
                answer => {
                    if let Answer::Skill { skill, .. } = &answer {
                        usage.record(skill, client, Use::Load(Surface::Tool));
                    }
                    (answer.is_error(), text_blocks(answer))
                }
            },
            Some(file) => match self.caller.call_file(client, name, file).await {
                FileAnswer::Skill(Answer::Invalid(message)) => {
                    return Ok(invalid_params(message).into());
                }
                answer => {
                    if let FileAnswer::File { read, .. } | FileAnswer::Image { read, .. } = &answer
                    {
                        usage.record(&read.skill, client, Use::File(read.file.as_str().into()));
                    }
                    (answer.is_error(), file_blocks(answer))
                }
            },
        };
        Ok(if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (view, surfaces) = self.seen(client_name(&context).as_deref()).await;
        self.prompts_offered::<rmcp::model::ListPromptsRequestMethod>(surfaces)?;
        prompts::list(&view, request.as_ref())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let client = client_name(&context);
        let served = self.registry.current();
        let surfaces = self.registry.surfaces(&served, client.as_deref());
        self.prompts_offered::<rmcp::model::GetPromptRequestMethod>(surfaces)?;
        Ok(prompts::get(
            &self.caller,
            self.registry.usage(),
            client.as_deref(),
            &request,
        )
        .await?
        .into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let (view, surfaces) = self.seen(client_name(&context).as_deref()).await;
        let settings = self.registry.settings();
        let by_flag = settings.rules.prompts_flag && settings.rules.resources_flag;
        offered::<rmcp::model::CompleteRequestMethod>(
            surfaces.prompts || surfaces.resources,
            by_flag,
            "--no-prompts --no-resources",
            "prompts and resources",
        )?;
        let (prompts, resources) = (surfaces.prompts, surfaces.resources);
        // On a blocking thread: completion compares against every skill, and
        // a skill's files may have to be listed.
        self.blocking(view, move |view, files| {
            Ok(match &request.r#ref {
                Reference::Resource(_) if resources => {
                    resources::complete(view, files, &request).unwrap_or_default()
                }
                Reference::Prompt(_) if prompts => prompts::complete(view, &request),
                _ => CompleteResult::default(),
            })
        })
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (view, surfaces) = self.seen(client_name(&context).as_deref()).await;
        self.resources_offered::<rmcp::model::ListResourcesRequestMethod>(surfaces)?;
        resources::list(&view, request.as_ref())
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let client = client_name(&context);
        let served = self.registry.current();
        let surfaces = self.registry.surfaces(&served, client.as_deref());
        self.resources_offered::<rmcp::model::ListResourceTemplatesRequestMethod>(surfaces)?;
        page::single(request.as_ref(), "resources/templates/list")?;
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri == app::RESOURCE_URI && app::declared(&context) {
            return Ok(self.app.read()?.into());
        }
        let client = client_name(&context);
        let (view, surfaces) = self.seen(client.as_deref()).await;
        self.resources_offered::<rmcp::model::ReadResourceRequestMethod>(surfaces)?;
        let files = self.registry.files();
        let record = |(result, skill, rel): (
            rmcp::model::ReadResourceResult,
            &crate::skill::Skill,
            String,
        )| {
            let what = if skill.is_own_file(&rel) {
                Use::Load(Surface::Resource)
            } else {
                Use::File(rel.into())
            };
            self.registry.usage().record(skill, client.as_deref(), what);
            result
        };
        let read = match resources::read(&view, files, &request.uri) {
            // Not what the skill's security scan read: scanned again first,
            // then read once more.
            Err(resources::Unread {
                rescreen: Some(dir),
                ..
            }) => {
                self.registry.rescreen(&dir).await;
                let (view, _) = self.seen(client.as_deref()).await;
                resources::read(&view, files, &request.uri).map(record)
            }
            read => read.map(record),
        };
        Ok(read.map_err(|unread| unread.error)?.into())
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let (view, surfaces) = self.seen(client_name(&context).as_deref()).await;
        self.resources_offered::<rmcp::model::ReadResourceDirectoryRequestMethod>(surfaces)?;
        let page = PaginatedRequestParams::default().with_cursor(request.cursor.clone());
        self.blocking(view, move |view, files| {
            resources::read_directory(view, files, &request.uri, &page)
        })
        .await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let (view, surfaces) = self.seen(client_name(&context).as_deref()).await;
        self.resources_offered::<rmcp::model::ListSkillsRequestMethod>(surfaces)?;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let ahead = self
            .ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .filter(|ahead| {
                Some(ahead.cursor.as_str()) == cursor
                    && ahead.view.is(&view)
                    && ahead.started.elapsed() < AHEAD_FOR
            });
        let page = match ahead {
            Some(ahead) => {
                tracing::debug!("a skills/list page made ahead is served");
                joined(ahead.page).await
            }
            None => {
                let view = view.clone();
                self.blocking(view, move |view, files| {
                    skills::list(view, files, request.as_ref())
                })
                .await
            }
        }?;
        // Over HTTP a 2026-07-28 request is stateless, with a handler of its
        // own that would never be asked for the next page.
        if let Some(next) = page.next_cursor.as_ref().filter(|_| !self.remote) {
            self.make_ahead(view, next.clone());
        }
        Ok(page)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let client = client_name(&context);
        let (view, surfaces) = self.seen(client.as_deref()).await;
        self.resources_offered::<rmcp::model::GetSkillRequestMethod>(surfaces)?;
        let (result, skill) = self
            .blocking(view, move |view, files| {
                skills::get(view, files, &request.uri)
            })
            .await?;
        self.registry
            .usage()
            .record(&skill, client.as_deref(), Use::Load(Surface::SkillsGet));
        Ok(result)
    }

    /// 2026-07-28 clients hear of changes only on a `subscriptions/listen`
    /// stream (behaviour.md §13): tools, and prompts and resources when some
    /// client may be offered them (rmcp also keeps to what `get_info`
    /// declares); a stream only carries what its own client is offered.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let (prompts, resources) = self.registry.current().profiles.any_surfaces();
        let mut accepted = SubscriptionFilter::builder().tools_list_changed();
        if prompts {
            accepted = accepted.prompts_list_changed();
        }
        if resources {
            accepted = accepted.resources_list_changed();
        }
        Some(accepted.build())
    }

    /// Runs one listen stream: every change of what its client lists is
    /// sent on it, as far as the stream accepted it, until the client
    /// cancels it or goes away.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let client = client_name(context.request_context());
        let mut changes = self.registry.changes();
        let accepted = context.accepted().clone();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.next(client.as_deref()) => {
                    let Some(changed) = changed else {
                        return Ok(());
                    };
                    let sink = context.sink();
                    let sent = async {
                        if changed.tools && accepted.tools_list_changed == Some(true) {
                            sink.notify_tool_list_changed().await?;
                        }
                        if changed.prompts && accepted.prompts_list_changed == Some(true) {
                            sink.notify_prompt_list_changed().await?;
                        }
                        if changed.resources && accepted.resources_list_changed == Some(true) {
                            sink.notify_resource_list_changed().await?;
                        }
                        Ok::<(), rmcp::service::SubscriptionSendError>(())
                    };
                    if let Err(err) = sent.await {
                        tracing::debug!("listen stream closed: {err}");
                        return Ok(());
                    }
                }
            }
        }
    }

    /// rmcp routes a request of a known method whose params do not deserialize
    /// here; answer those with -32602 (the params are wrong, the method exists)
    /// and truly unknown methods with -32601.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // 2026-07-28 removed `initialize` and `ping`: a request of that era
        // for them names a method that does not exist.
        let stateless = context
            .meta
            .protocol_version()
            .is_some_and(|version| version >= rmcp::model::ProtocolVersion::V_2026_07_28);
        let problem = match request.method.as_str() {
            "initialize" | "ping" if stateless => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "method not found: {} (removed in protocol 2026-07-28)",
                        request.method
                    ),
                    None,
                ));
            }
            "tools/call" => request.params_as::<CallToolRequestParams>().err(),
            "tools/list" | "prompts/list" => request.params_as::<PaginatedRequestParams>().err(),
            "prompts/get" => request.params_as::<GetPromptRequestParams>().err(),
            "completion/complete" => request.params_as::<CompleteRequestParams>().err(),
            "resources/list" | "resources/templates/list" | "skills/list" => {
                request.params_as::<PaginatedRequestParams>().err()
            }
            "resources/read" => request.params_as::<ReadResourceRequestParams>().err(),
            "resources/directory/read" => request
                .params_as::<ReadResourceDirectoryRequestParams>()
                .err(),
            "skills/get" => request.params_as::<GetSkillRequestParams>().err(),
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
