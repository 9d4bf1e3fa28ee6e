//! `skillserve invoke`: calls one tool of one server in the settings file, for
//! an agent (or a script) with a shell. This is the call path the skills that
//! `import` writes point to.
//!
//! Output: the result's text blocks on stdout, a blank line between two;
//! other blocks as one line each (`[image image/png, 1234 bytes]`); the
//! `structuredContent` as JSON when there is no text; `--json` prints the whole
//! result. A result with `isError` goes to stderr instead, with exit code 1, as
//! does a JSON-RPC error (`skillserve: <the server's message>`) or a server
//! that fails to start (with the end of its stderr). Configuration mistakes
//! (settings, server name, arguments) are [`InvokeError`]s: exit code 2,
//! nothing started.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ResourceContents};
use serde_json::Value;

use super::client::{self, Connection, Failure, ServerError};
use super::settings::{EntryError, EntryKind, Launch, Settings, SettingsError};
use crate::exit_codes::ExitCode;

/// What `skillserve invoke` was asked to do.
#[derive(Debug, Clone)]
pub struct InvokeOptions {
    /// The `mcpServers` settings file, absolute.
    pub settings: PathBuf,
    pub server: String,
    pub tool: String,
    /// The arguments as JSON text; `-` reads them from stdin.
    pub arguments: String,
    /// Print the whole result as JSON.
    pub json: bool,
    /// The longest wait for the server to start, and then for the result.
    pub timeout: Duration,
    /// The environment, for `$VAR` in `command` and `args`.
    pub vars: crate::config::Vars,
    /// Where server programs are looked for (`PATH`, `PATHEXT`).
    pub programs: crate::program::SearchEnv,
}

/// A mistake in what `invoke` was given: nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("no server named {name:?} in {}; the servers are: {}", settings.display(), known.join(", "))]
    UnknownServer {
        name: String,
        settings: PathBuf,
        known: Vec<String>,
    },
    #[error("server {name:?} is disabled in {}", settings.display())]
    Disabled { name: String, settings: PathBuf },
    #[error("server {name:?} in {} is not a stdio server; only stdio servers can be invoked", settings.display())]
    NotStdio { name: String, settings: PathBuf },
    #[error("{}: {error}", settings.display())]
    Entry {
        settings: PathBuf,
        error: EntryError,
    },
    #[error("cannot read JSON_ARGS from stdin: {0}")]
    Stdin(#[source] io::Error),
    #[error("JSON_ARGS is not valid JSON ({0}); give an object such as '{{\"path\": \"/tmp\"}}'")]
    BadJson(String),
    #[error("JSON_ARGS must be a JSON object such as '{{\"path\": \"/tmp\"}}', not {0}")]
    NotAnObject(&'static str),
    /// Writing the result failed (a closed pipe, say).
    #[error(transparent)]
    Output(#[from] io::Error),
}

impl InvokeError {
    /// 2 for a mistake in the input, 1 when the output could not be written.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            InvokeError::Output(_) => ExitCode::Failure,
            _ => ExitCode::Usage,
        }
    }
}

/// `skillserve invoke` from the command line: [`run`] on a runtime of its
/// own, its error one line on `err`; SIGINT or SIGTERM stop it. A failure
/// to write `out` is returned.
pub fn command(
    options: &InvokeOptions,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    match super::block_on(run(options, stdin, out, err))? {
        Err(signal) => {
            writeln!(err, "skillserve: stopped by {signal}")?;
            Ok(ExitCode::Failure)
        }
        Ok(Ok(code)) => Ok(code),
        Ok(Err(InvokeError::Output(error))) => Err(error),
        Ok(Err(error)) => {
            writeln!(err, "skillserve: {error}")?;
            Ok(error.exit_code())
        }
    }
}

/// `skillserve invoke`: starts the server, calls the tool and prints the result.
pub async fn run(
    options: &InvokeOptions,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<ExitCode, InvokeError> {
    let (name, launch) = launch_of(options)?;
    let arguments = if options.arguments == "-" {
        let mut text = String::new();
        stdin
            .read_to_string(&mut text)
            .map_err(InvokeError::Stdin)?;
        parse_arguments(&text)?
    } else {
        parse_arguments(&options.arguments)?
    };

    let connection = match Connection::start(&launch, &options.programs, options.timeout).await {
        Ok(connection) => connection,
        Err(failure) => {
            write_failure(err, &name, &failure)?;
            return Ok(ExitCode::Failure);
        }
    };
    match connection
        .call_tool(&options.tool, arguments, options.timeout)
        .await
    {
        Ok(result) => {
            // The result first: a server may take seconds to exit.
            let code = write_result(&result, options.json, out, err)?;
            out.flush()?;
            connection.close().await;
            Ok(code)
        }
        Err(ServerError::Rpc { message, .. }) => {
            writeln!(err, "skillserve: {}", crate::text::printable(&message))?;
            write_known_tools(&connection, options, &name, err).await?;
            connection.close().await;
            Ok(ExitCode::Failure)
        }
        Err(error) => {
            let failure = connection.fail(error).await;
            write_failure(err, &name, &failure)?;
            Ok(ExitCode::Failure)
        }
    }
}

/// The server `options` names and how to start it, from the settings file;
/// an error when it is unknown, disabled, not a stdio server or invalid.
fn launch_of(options: &InvokeOptions) -> Result<(String, Launch), InvokeError> {
    let settings = Settings::load(&options.settings)?;
    let path = || settings.path.clone();
    let Some(entry) = settings.servers.iter().find(|e| e.name == options.server) else {
        return Err(InvokeError::UnknownServer {
            name: options.server.clone(),
            settings: path(),
            known: settings.names().into_iter().map(str::to_owned).collect(),
        });
    };
    let name = entry.name.clone();
    match &entry.kind {
        EntryKind::Stdio(server) => {
            let launch = server
                .expand(&name, &|var: &str| options.vars.lookup(var))
                .map_err(|error| InvokeError::Entry {
                    settings: path(),
                    error,
                })?;
            Ok((name, launch))
        }
        EntryKind::Disabled => Err(InvokeError::Disabled {
            name,
            settings: path(),
        }),
        EntryKind::NotStdio => Err(InvokeError::NotStdio {
            name,
            settings: path(),
        }),
        EntryKind::Invalid(error) => Err(InvokeError::Entry {
            settings: path(),
            error: error.clone(),
        }),
    }
}

/// After a call failed, the server's tools when the tool's name was the
/// problem (the server has no tool of that name).
async fn write_known_tools(
    connection: &Connection,
    options: &InvokeOptions,
    server: &str,
    err: &mut dyn Write,
) -> io::Result<()> {
    if let Ok(tools) = connection.list_tools(options.timeout).await
        && !tools.iter().any(|t| t.name == options.tool)
    {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        writeln!(
            err,
            "skillserve: {server} has no tool {:?}; its tools are: {}",
            options.tool,
            names.join(", ")
        )?;
    }
    Ok(())
}

/// The tool's arguments: a JSON object (`{}` when empty).
pub fn parse_arguments(text: &str) -> Result<JsonObject, InvokeError> {
    if text.trim().is_empty() {
        return Ok(JsonObject::new());
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(InvokeError::NotAnObject(crate::text::json_kind(&other))),
        Err(e) => Err(InvokeError::BadJson(e.to_string())),
    }
}

fn write_failure(err: &mut dyn Write, server: &str, failure: &Failure) -> io::Result<()> {
    let printable = crate::text::printable;
    writeln!(
        err,
        "skillserve: {}: {}",
        printable(server),
        printable(&failure.to_string())
    )?;
    client::write_indented(err, "  ", &failure.stderr)
}

/// Prints `result` (to `err` when it is an error) and returns the exit code.
fn write_result(
    result: &CallToolResult,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    let failed = result.is_error == Some(true);
    let code = if failed {
        ExitCode::Failure
    } else {
        ExitCode::Success
    };
    if json {
        serde_json::to_writer_pretty(&mut *out, result)?;
        writeln!(out)?;
        return Ok(code);
    }
    let target: &mut dyn Write = if failed { &mut *err } else { &mut *out };
    let mut blocks: Vec<String> = Vec::new();
    let mut has_text = false;
    for block in &result.content {
        let (text, is_text) = render_block(block);
        has_text |= is_text;
        blocks.push(text);
    }
    if !has_text && let Some(structured) = &result.structured_content {
        blocks.push(serde_json::to_string_pretty(structured)?);
    }
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            writeln!(target)?;
        }
        target.write_all(block.as_bytes())?;
        if !block.ends_with('\n') {
            writeln!(target)?;
        }
    }
    Ok(code)
}

/// A content block as text, and whether it was text to begin with.
fn render_block(block: &ContentBlock) -> (String, bool) {
    match block {
        ContentBlock::Text(text) => (text.text.clone(), true),
        ContentBlock::Image(image) => (
            format!(
                "[image {}, {} bytes]",
                image.mime_type,
                decoded_len(&image.data)
            ),
            false,
        ),
        ContentBlock::Audio(audio) => (
            format!(
                "[audio {}, {} bytes]",
                audio.mime_type,
                decoded_len(&audio.data)
            ),
            false,
        ),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => (text.clone(), true),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => (
                format!(
                    "[resource {uri} {}, {} bytes]",
                    mime_type.as_deref().unwrap_or("application/octet-stream"),
                    decoded_len(blob)
                ),
                false,
            ),
            _ => ("[resource]".to_owned(), false),
        },
        ContentBlock::ResourceLink(link) => (format!("[resource link {}]", link.uri), false),
        _ => (
            "[content of a kind skillserve does not know]".to_owned(),
            false,
        ),
    }
}

/// The size of base64 `data` once decoded.
fn decoded_len(data: &str) -> usize {
    let significant = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|&b| b == b'=')
        .count();
    (significant * 3 / 4).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(parse_arguments("").unwrap(), JsonObject::new());
        assert_eq!(parse_arguments(" {\"a\": 1} ").unwrap()["a"], 1);
        assert_eq!(
            parse_arguments("[1]").unwrap_err().to_string(),
            "JSON_ARGS must be a JSON object such as '{\"path\": \"/tmp\"}', not an array"
        );
        assert!(
            parse_arguments("{nope")
                .unwrap_err()
                .to_string()
                .starts_with(
                    "JSON_ARGS is not valid JSON (key must be a string at line 1 column 2)"
                )
        );
    }

    #[test]
    fn blocks_print_as_text_or_one_line() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::text("last\n"),
        ]);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = write_result(&result, false, &mut out, &mut err).unwrap();
        assert_eq!(code, ExitCode::Success);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "first\n\n[image image/png, 5 bytes]\n\nlast\n"
        );

        let mut result = CallToolResult::error(vec![ContentBlock::text("bad")]);
        result.structured_content = Some(serde_json::json!({"x": 1}));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = write_result(&result, false, &mut out, &mut err).unwrap();
        assert_eq!(code, ExitCode::Failure);
        assert_eq!(
            (out.len(), String::from_utf8(err).unwrap()),
            (0, "bad\n".to_owned())
        );
    }
}
