//! A small stdio MCP server for the integration tests of `skillserve import`
//! and `skillserve invoke` (`tests/it/import.rs`). Its first argument chooses
//! what it does:
//!
//! - `varied`: tools with varied schemas (nested objects, enums, defaults, no
//!   parameters, an output schema, annotations, a name that needs kebab-casing,
//!   one that always answers `isError`), listed three per page;
//! - `fail`: writes a message to stderr and exits 1 before `initialize`;
//! - `hang [PIDFILE]`: never answers `initialize` (and writes its process id
//!   to PIDFILE, so that a test can check it was killed);
//! - `from-file PATH`: serves the tools in the JSON file PATH (a list of MCP
//!   tool objects), so that a test can change them between runs; every call
//!   answers `called NAME`;
//! - `argv [ARG...]`: serves one tool, `argv`, which answers the server's
//!   arguments after `argv` as a JSON list, so that a test can check that
//!   arguments reach a server unchanged (through a Windows `.cmd` launcher in
//!   `packaging/wine/check.py`).
//!
//! `cargo run --example mcp_test_server -- varied` starts it by hand.

#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "a test server reads and writes its mode files with std::fs and talks on stderr"
)]

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// Tools per `tools/list` page, so that the client has to follow cursors.
const PAGE: usize = 3;

struct TestServer {
    tools: Vec<Tool>,
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mcp-test-server", "1.0.0"))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&start| start <= self.tools.len())
                .ok_or_else(|| ErrorData::invalid_params("unknown cursor", None))?,
            None => 0,
        };
        let end = (start + PAGE).min(self.tools.len());
        let mut page = ListToolsResult::with_all_items(self.tools[start..end].to_vec());
        if end < self.tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let text = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(text("text"))]),
            "getenv" => {
                let value = std::env::var(text("name")).unwrap_or_else(|_| "(unset)".to_owned());
                CallToolResult::success(vec![ContentBlock::text(value)])
            }
            "fail" => CallToolResult::error(vec![ContentBlock::text("something went wrong")]),
            "search" => {
                let mut result = CallToolResult::success(vec![
                    ContentBlock::text(format!("3 hits for {}", text("query"))),
                    ContentBlock::image("aGVsbG8=", "image/png"),
                ]);
                result.structured_content = Some(json!({"hits": 3}));
                result
            }
            "argv" => {
                let args: Vec<String> = std::env::args().skip(2).collect();
                CallToolResult::success(vec![ContentBlock::text(json!(args).to_string())])
            }
            "stats" => {
                let mut result = CallToolResult::success(Vec::new());
                result.structured_content = Some(json!({"count": 42}));
                result
            }
            name => CallToolResult::success(vec![ContentBlock::text(format!("called {name}"))]),
        };
        Ok(result.into())
    }
}

/// The tools of `varied`.
fn varied() -> Value {
    json!([
        {
            "name": "search",
            "title": "Search the index",
            "description": "Search the index for documents. Results are ranked by relevance.\n\nUse `options` to tune it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "options": {
                        "type": "object",
                        "description": "How to search.",
                        "properties": {
                            "depth": {"type": "integer", "description": "Links to follow.", "default": 2, "minimum": 0},
                            "mode": {"type": "string", "enum": ["fast", "thorough"]}
                        },
                        "required": ["mode"]
                    },
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Only documents with these tags."}
                },
                "required": ["query"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"hits": {"type": "integer"}},
                "required": ["hits"]
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {"name": "ping", "inputSchema": {"type": "object"}},
        {
            "name": "Get_User.Profile",
            "description": "Fetch a user's profile by id.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
        },
        {"name": "fail", "description": "Always reports an error.", "inputSchema": {"type": "object"}},
        {
            "name": "echo",
            "description": "Echo the text back.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        },
        {
            "name": "getenv",
            "description": "Read an environment variable of the server.",
            "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        },
        {
            "name": "delete_item",
            "description": "Delete an item for good.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true}
        },
        {
            "name": "stats",
            "description": "Counts, as structured content only.",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}
        }
    ])
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tools = match args.first().map(String::as_str) {
        Some("varied") => varied(),
        Some("fail") => {
            eprintln!("mcp-test-server: starting");
            eprintln!("fatal: cannot open database /nowhere/db.sqlite");
            std::process::exit(1);
        }
        Some("hang") => {
            if let Some(path) = args.get(1) {
                std::fs::write(path, std::process::id().to_string())?;
            }
            eprintln!("mcp-test-server: warming up, this takes forever");
            loop {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        }
        Some("from-file") => {
            let path = args.get(1).ok_or("from-file needs a PATH")?;
            serde_json::from_str(&std::fs::read_to_string(path)?)?
        }
        Some("argv") => json!([{
            "name": "argv",
            "description": "The server's arguments, as a JSON list.",
            "inputSchema": {"type": "object"}
        }]),
        _ => {
            return Err(
                "usage: mcp_test_server varied | fail | hang [PIDFILE] | from-file PATH | argv [ARG...]"
                    .into(),
            );
        }
    };
    let tools: Vec<Tool> = serde_json::from_value(tools)?;
    let running = TestServer { tools }.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
