//! The `mcpServers` settings file of Claude Desktop, Cursor and Claude Code:
//!
//! ```json
//! { "mcpServers": { "github": { "command": "npx", "args": ["-y", "..."],
//!                                "env": { "TOKEN": "..." }, "disabled": false } } }
//! ```
//!
//! A file that cannot be used at all (missing, not JSON, no `mcpServers`
//! object) is a [`SettingsError`]. A single malformed server is not: it becomes
//! [`EntryKind::Invalid`], so that the other servers still go on. Keys other
//! than `command`, `args`, `env`, `disabled`, `type` and `url` are ignored, as
//! clients ignore the keys of other clients.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::text::json_kind;

/// Looks up an environment variable for `$VAR` expansion (`None`: unset).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A settings file, its servers in the order the file lists them.
#[derive(Debug)]
pub struct Settings {
    /// The file, absolute.
    pub path: PathBuf,
    pub servers: Vec<Entry>,
}

/// One entry of `mcpServers`.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub kind: EntryKind,
}

/// What an entry asks for.
#[derive(Debug)]
pub enum EntryKind {
    /// A local server started as a child process and spoken to over stdio.
    Stdio(StdioServer),
    /// `"disabled": true`: not started.
    Disabled,
    /// A server with a `url`, or a `type` other than `stdio` (HTTP, SSE).
    NotStdio,
    /// A malformed entry; the message names the JSON path.
    Invalid(EntryError),
}

/// A stdio server as written in the file, before `$VAR` expansion.
#[derive(Debug, Clone)]
pub struct StdioServer {
    pub command: String,
    pub args: Vec<String>,
    /// Set on top of the inherited environment.
    pub env: Vec<(String, String)>,
}

/// A stdio server ready to start: variables expanded.
#[derive(Debug, Clone)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// A settings file that cannot be used at all.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read MCP settings file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: crate::disk::ReadError,
    },
    #[error("MCP settings file {} is not valid JSON: {message} at line {line}, column {column}", path.display())]
    Json {
        path: PathBuf,
        message: String,
        line: usize,
        column: usize,
    },
    #[error("MCP settings file {}: {problem}", path.display())]
    Shape { path: PathBuf, problem: String },
}

/// A problem with one server's entry: the JSON path of the field and what is
/// wrong with it, e.g. `mcpServers.github.args[2] must be a string, not a number`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError {
    pub field: String,
    pub problem: String,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.field, self.problem)
    }
}

impl Settings {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        // A regular file only, capped: `import` may be pointed at any file.
        let text = crate::disk::read_settings(path).map_err(|source| SettingsError::Read {
            path: path.to_owned(),
            source,
        })?;
        Settings::parse(path, &text)
    }

    /// Parses the text of the file at `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Settings, SettingsError> {
        // Editors on Windows save JSON with a BOM, which serde_json refuses.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let shape = |problem: &str| SettingsError::Shape {
            path: path.to_owned(),
            problem: problem.to_owned(),
        };
        let json_error = |e: serde_json::Error| SettingsError::Json {
            path: path.to_owned(),
            message: json_message(&e),
            line: e.line(),
            column: e.column(),
        };
        let value: Value = serde_json::from_str(text).map_err(json_error)?;
        let Value::Object(top) = &value else {
            return Err(shape(&format!(
                "the top level must be an object with `mcpServers`, not {}",
                json_kind(&value)
            )));
        };
        match top.get("mcpServers") {
            Some(Value::Object(_)) => {}
            Some(other) => {
                return Err(shape(&format!(
                    "`mcpServers` must be an object of servers by name, not {}",
                    json_kind(other)
                )));
            }
            None if top.contains_key("servers") => {
                return Err(shape(
                    "there is no `mcpServers` object (VS Code's `servers` format is not read); \
                     write the servers as {\"mcpServers\": {\"name\": {\"command\": ...}}}",
                ));
            }
            None => {
                return Err(shape(
                    "there is no `mcpServers` object; write the servers as \
                     {\"mcpServers\": {\"name\": {\"command\": ...}}}",
                ));
            }
        }
        // `Value` sorts object keys; read the servers a second time to keep
        // the order the file gives them, which is the order of the output.
        let ordered: OrderProbe = serde_json::from_str(text).map_err(json_error)?;
        let servers = ordered
            .servers
            .0
            .into_iter()
            .map(|(name, value)| Entry {
                kind: entry_kind(&name, &value),
                name,
            })
            .collect();
        Ok(Settings {
            path: path.to_owned(),
            servers,
        })
    }

    /// The names of all servers, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name.as_str()).collect()
    }
}

impl StdioServer {
    /// Expands `$VAR` and `${VAR}` in `command` and `args` (clients start
    /// servers without a shell, so nothing else would); `$$` is a literal `$`.
    /// An unset variable is an error naming the field and the variable.
    pub fn expand(&self, name: &str, lookup: Lookup<'_>) -> Result<Launch, EntryError> {
        let expand = |field: String, value: &str| -> Result<String, EntryError> {
            shellexpand::env_with_context(value, |var: &str| lookup(var).map(Some).ok_or(()))
                .map(|expanded| expanded.into_owned())
                .map_err(|e| EntryError {
                    field,
                    problem: format!("uses ${}, which is not set", e.var_name),
                })
        };
        let command = expand(field_path(name, "command"), &self.command)?;
        let args = self
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| expand(format!("{}[{i}]", field_path(name, "args")), arg))
            .collect::<Result<_, _>>()?;
        Ok(Launch {
            command,
            args,
            env: self.env.clone(),
        })
    }
}

/// `mcpServers` with its servers in file order.
#[derive(Deserialize)]
struct OrderProbe {
    #[serde(rename = "mcpServers")]
    servers: Ordered,
}

/// A JSON object as a list of entries in file order; a repeated key keeps its
/// first place and its last value, as `JSON.parse` does.
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut entries: Vec<(String, Value)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    match entries.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => entries.push((key, value)),
                    }
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

fn entry_kind(name: &str, value: &Value) -> EntryKind {
    match stdio_entry(name, value) {
        Ok(kind) => kind,
        Err(error) => EntryKind::Invalid(error),
    }
}

fn stdio_entry(name: &str, value: &Value) -> Result<EntryKind, EntryError> {
    let wrong = |field: String, expected: &str, found: &Value| EntryError {
        field,
        problem: format!("must be {expected}, not {}", json_kind(found)),
    };
    let Value::Object(entry) = value else {
        return Err(wrong(server_path(name), "an object with `command`", value));
    };
    match entry.get("disabled") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => return Ok(EntryKind::Disabled),
        Some(other) => return Err(wrong(field_path(name, "disabled"), "true or false", other)),
    }
    match entry.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(kind)) if kind == "stdio" => {}
        Some(Value::String(_)) => return Ok(EntryKind::NotStdio),
        Some(other) => return Err(wrong(field_path(name, "type"), "a string", other)),
    }
    if entry.contains_key("url") && !entry.contains_key("command") {
        return Ok(EntryKind::NotStdio);
    }
    let command = match entry.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
        Some(Value::String(_)) => {
            return Err(EntryError {
                field: field_path(name, "command"),
                problem: "is empty; give the program to run, e.g. \"npx\"".to_owned(),
            });
        }
        Some(other) => return Err(wrong(field_path(name, "command"), "a string", other)),
        None => {
            return Err(EntryError {
                field: server_path(name),
                problem: "has no `command` (the program that starts the server)".to_owned(),
            });
        }
    };
    let args = match entry.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(arg) => Ok(arg.clone()),
                other => Err(wrong(
                    format!("{}[{i}]", field_path(name, "args")),
                    "a string",
                    other,
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(wrong(field_path(name, "args"), "a list of strings", other)),
    };
    let env = match entry.get("env") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(vars)) => env_vars(name, vars)?,
        Some(other) => {
            return Err(wrong(
                field_path(name, "env"),
                "an object of strings",
                other,
            ));
        }
    };
    Ok(EntryKind::Stdio(StdioServer { command, args, env }))
}

fn env_vars(name: &str, vars: &Map<String, Value>) -> Result<Vec<(String, String)>, EntryError> {
    vars.iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key.clone(), text.clone())),
            other => Err(EntryError {
                field: format!("{}{}", field_path(name, "env"), key_access(key)),
                problem: format!("must be a string, not {}", json_kind(other)),
            }),
        })
        .collect()
}

/// `mcpServers.github`, or `mcpServers["my server"]` for names that are not
/// plain identifiers.
fn server_path(name: &str) -> String {
    format!("mcpServers{}", key_access(name))
}

fn field_path(name: &str, field: &str) -> String {
    format!("{}.{field}", server_path(name))
}

fn key_access(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!(".{key}")
    } else {
        format!("[{}]", Value::from(key))
    }
}

/// serde_json's message without its own " at line L column C" suffix, which
/// the error states in its own words.
fn json_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Settings, SettingsError> {
        Settings::parse(Path::new("/s/mcp.json"), text)
    }

    fn invalid(text: &str) -> String {
        let settings = parse(text).unwrap();
        match &settings.servers[0].kind {
            EntryKind::Invalid(error) => error.to_string(),
            other => panic!("expected an invalid entry, got {other:?}"),
        }
    }

    #[test]
    fn servers_keep_file_order_and_kinds() {
        let settings = parse(
            r#"{"other": 1, "mcpServers": {
                "zeta": {"command": "z", "args": ["a", "b"], "env": {"K": "v"}},
                "alpha": {"command": "a", "disabled": true},
                "remote": {"url": "https://example.com/mcp"},
                "sse": {"type": "sse", "command": "x"},
                "typed": {"type": "stdio", "command": "t"}
            }}"#,
        )
        .unwrap();
        assert_eq!(
            settings.names(),
            ["zeta", "alpha", "remote", "sse", "typed"]
        );
        let EntryKind::Stdio(zeta) = &settings.servers[0].kind else {
            panic!("zeta is stdio")
        };
        assert_eq!(zeta.args, ["a", "b"]);
        assert_eq!(zeta.env, [("K".to_owned(), "v".to_owned())]);
        assert!(matches!(settings.servers[1].kind, EntryKind::Disabled));
        assert!(matches!(settings.servers[2].kind, EntryKind::NotStdio));
        assert!(matches!(settings.servers[3].kind, EntryKind::NotStdio));
        assert!(matches!(settings.servers[4].kind, EntryKind::Stdio(_)));
    }

    #[test]
    fn wrong_top_levels_are_errors_naming_the_file() {
        let err = parse("{\n  \"mcpServers\": {,}\n}").unwrap_err();
        assert_eq!(
            err.to_string(),
            "MCP settings file /s/mcp.json is not valid JSON: key must be a string at line 2, column 18"
        );
        let err = parse("[]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "MCP settings file /s/mcp.json: the top level must be an object with `mcpServers`, not an array"
        );
        let err = parse(r#"{"mcpServers": []}"#).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("`mcpServers` must be an object of servers by name, not an array")
        );
        let err = parse(r#"{"servers": {}}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("VS Code's `servers` format is not read")
        );
        let err = Settings::load(Path::new("/surely/not/here.json")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read MCP settings file /surely/not/here.json: ")
        );
    }

    #[test]
    fn malformed_entries_name_the_json_path() {
        assert_eq!(
            invalid(r#"{"mcpServers": {"gh": {"command": "x", "args": ["a", "b", 3]}}}"#),
            "mcpServers.gh.args[2] must be a string, not a number"
        );
        assert_eq!(
            invalid(r#"{"mcpServers": {"gh": {"args": []}}}"#),
            "mcpServers.gh has no `command` (the program that starts the server)"
        );
        assert_eq!(
            invalid(r#"{"mcpServers": {"my server": {"command": 7}}}"#),
            "mcpServers[\"my server\"].command must be a string, not a number"
        );
        assert_eq!(
            invalid(r#"{"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": true}}}}"#),
            "mcpServers.gh.env.TOKEN must be a string, not a boolean"
        );
        assert_eq!(
            invalid(r#"{"mcpServers": {"gh": {"command": "x", "args": "a b"}}}"#),
            "mcpServers.gh.args must be a list of strings, not a string"
        );
        assert_eq!(
            invalid(r#"{"mcpServers": {"gh": "npx"}}"#),
            "mcpServers.gh must be an object with `command`, not a string"
        );
    }

    #[test]
    fn variables_expand_in_command_and_args_only() {
        let settings = parse(
            r#"{"mcpServers": {"s": {"command": "${BIN}/server", "args": ["--root", "$ROOT", "$$"], "env": {"X": "$ROOT"}}}}"#,
        )
        .unwrap();
        let EntryKind::Stdio(server) = &settings.servers[0].kind else {
            panic!("stdio")
        };
        let lookup = |var: &str| match var {
            "BIN" => Some("/opt/bin".to_owned()),
            "ROOT" => Some("/data".to_owned()),
            _ => None,
        };
        let launch = server.expand("s", &lookup).unwrap();
        assert_eq!(launch.command, "/opt/bin/server");
        // `$$` is how a literal `$` is written.
        assert_eq!(launch.args, ["--root", "/data", "$"]);
        assert_eq!(launch.env, [("X".to_owned(), "$ROOT".to_owned())]);

        let error = server.expand("s", &|_: &str| None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "mcpServers.s.command uses $BIN, which is not set"
        );
    }
}
