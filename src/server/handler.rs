//! The rmcp handler: the `skill` tool (behaviour.md §5) and the answers to
//! every MCP request. It turns answers into tool results, and keeps protocol
//! errors for requests that are not valid calls at all.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::answer::Answer;
use crate::render;
use crate::server::registry::Registry;
use crate::server::rescan::Caller;

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
pub struct SkillServer {
    registry: Arc<Registry>,
    caller: Caller,
}

impl SkillServer {
    pub fn new(registry: Arc<Registry>) -> SkillServer {
        SkillServer {
            caller: Caller::new(Arc::clone(&registry)),
            registry,
        }
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
        let served = self.registry.current();
        Ok(ListToolsResult::with_all_items(vec![tool(
            &served.description,
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
            Err(problem) => return Ok(invalid_params(render::invalid_params(problem)).into()),
        };
        let answer = match self.caller.call(name).await {
            Answer::Invalid(message) => return Ok(invalid_params(message).into()),
            answer => answer,
        };
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
