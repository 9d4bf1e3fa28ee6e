//! One MCP tool → one skill: its name and the text of its `SKILL.md`.
//!
//! Names follow the Agent Skills rule (1–64 lowercase letters, digits and
//! single hyphens): `{server}-{tool}` in kebab-case, where every character but
//! an ASCII letter or digit becomes a hyphen (`Get_User.Profile` →
//! `get-user-profile`; letters outside ASCII are not transliterated). A name
//! over 64 characters is cut and ends with `-` and six hex digits of the
//! SHA-256 of `{server}-{tool}`, so that two long names rarely meet; names that
//! do meet get `-2`, `-3`, ….
//!
//! The frontmatter's strings are written as JSON string literals, which are
//! valid YAML double-quoted scalars, so no tool text can break the YAML.
//! Everywhere else a server's text (names, titles, descriptions, parameter
//! names, values, schemas) has its control characters escaped (`\u{1b}`): a
//! `SKILL.md` is read by models and shown on terminals, and an escape
//! sequence or a carriage return must not drive either.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::digest::hex;
use crate::parse::one_line;
use crate::spec::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
use crate::text::{printable_line, printable_lines};

/// `metadata.generated-by` of every skill `import` writes: only folders
/// carrying it are ever overwritten or removed.
pub const GENERATED_BY: &str = "skillserve import";

/// Nested parameters are listed down to this depth.
const MAX_SCHEMA_DEPTH: usize = 6;
/// Enum values listed per parameter before "… (N more)".
const MAX_ENUM_VALUES: usize = 20;
/// Longest default or enum value shown in the parameter table.
const MAX_VALUE_CHARS: usize = 80;

/// The skill name for `tool` of `server`, before collisions are resolved.
pub fn base_name(server: &str, tool: &str) -> String {
    let full = format!("{server}-{tool}");
    let name = kebab(&full);
    let hash = || hex(&Sha256::digest(full.as_bytes()))[..6].to_owned();
    if name.is_empty() {
        // Nothing ASCII to keep (a name in another script, say).
        return format!("tool-{}", hash());
    }
    if name.len() <= MAX_NAME_CHARS {
        return name;
    }
    let keep = MAX_NAME_CHARS - 7;
    format!("{}-{}", name[..keep].trim_end_matches('-'), hash())
}

/// `base`, or `base-2`, `base-3`, … (within 64 characters), whichever is not
/// in `taken` (lowercase names).
pub fn unique_name(base: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_owned();
    }
    (2..)
        .map(|n| {
            let suffix = format!("-{n}");
            let keep = base.len().min(MAX_NAME_CHARS - suffix.len());
            format!("{}{suffix}", base[..keep].trim_end_matches('-'))
        })
        .find(|name| !taken.contains(name))
        .unwrap_or_else(|| base.to_owned())
}

/// Lowercase ASCII letters and digits kept, every run of anything else one
/// hyphen, no hyphen at either end.
fn kebab(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            continue;
        }
        // camelCase and PascalCase words: `getTinyImage` → `get-tiny-image`,
        // `HTTPServer` → `http-server`.
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next_is_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
        let starts_word = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next_is_lower)
            });
        if starts_word && !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// The skill's `description`: the first sentence of the tool's (up to the
/// first `. ` or line break), on one line, at most 1,024 characters.
pub fn description(server: &str, tool: &Tool) -> String {
    let text = tool.description.as_deref().unwrap_or("").trim_start();
    let mut end = text.find('\n').unwrap_or(text.len());
    if let Some(stop) = text[..end].find(". ") {
        end = stop + 1;
    }
    let sentence = one_line(&text[..end]);
    if sentence.is_empty() {
        return format!("Call the {} tool of the {server} MCP server.", tool.name);
    }
    match sentence.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some(_) => {
            let cut: String = sentence.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
            format!("{}…", cut.trim_end())
        }
        None => sentence,
    }
}

/// The full `SKILL.md` of skill `name` for `tool` of `server`, whose `invoke`
/// line names the settings file `settings`.
pub fn skill_md(name: &str, server: &str, tool: &Tool, settings: &Path) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_skill(&mut out, name, server, tool, settings);
    out
}

fn write_skill(
    out: &mut String,
    name: &str,
    server: &str,
    tool: &Tool,
    settings: &Path,
) -> std::fmt::Result {
    let tool_name: &str = &tool.name;
    writeln!(out, "---")?;
    writeln!(out, "name: {name}")?;
    writeln!(
        out,
        "description: {}",
        yaml_string(&description(server, tool))
    )?;
    writeln!(out, "metadata:")?;
    writeln!(out, "  generated-by: {}", yaml_string(GENERATED_BY))?;
    writeln!(out, "  mcp-server: {}", yaml_string(server))?;
    writeln!(out, "  mcp-tool: {}", yaml_string(tool_name))?;
    writeln!(out, "---")?;

    let annotation_title = tool.annotations.as_ref().and_then(|a| a.title.as_deref());
    let heading = [tool.title.as_deref(), annotation_title]
        .into_iter()
        .flatten()
        .map(printable_line)
        .find(|title| !title.is_empty())
        .unwrap_or_else(|| printable_line(tool_name));
    writeln!(out, "\n# {heading}")?;
    if let Some(text) = tool.description.as_deref().map(str::trim)
        && !text.is_empty()
    {
        writeln!(out, "\n{}", printable_lines(text))?;
    }

    writeln!(out, "\n## Parameters\n")?;
    write_parameters(out, &tool.input_schema)?;

    if let Some(schema) = &tool.output_schema {
        writeln!(out, "\n## Output\n")?;
        writeln!(
            out,
            "The result's `structuredContent` follows this JSON Schema:\n"
        )?;
        write_json_block(out, &Value::Object(schema.as_ref().clone()))?;
    }

    if let Some(annotations) = &tool.annotations {
        let lines = annotation_lines(annotations, &heading);
        if !lines.is_empty() {
            writeln!(out, "\n## Annotations\n")?;
            writeln!(
                out,
                "The server describes this tool as follows (hints, not guarantees):\n"
            )?;
            for line in lines {
                writeln!(out, "- {line}")?;
            }
        }
    }

    let example = json_text(&Value::Object(example_arguments(&tool.input_schema)), false);
    writeln!(out, "\n## How to call it\n")?;
    writeln!(
        out,
        "If the {} MCP server is connected to your client, call its tool {} directly.\n",
        code(&printable_line(server)),
        code(&printable_line(tool_name))
    )?;
    writeln!(out, "Otherwise, from a shell:\n")?;
    writeln!(out, "```sh")?;
    writeln!(
        out,
        "skillserve invoke --mcp-settings {} {} {} {}",
        quote(&settings.to_string_lossy()),
        shell_word(server),
        shell_word(tool_name),
        quote(&example)
    )?;
    writeln!(out, "```\n")?;
    writeln!(
        out,
        "The last argument is a JSON object of the parameters above (`-` reads it from stdin). \
         The command prints the text the tool returns (`--json`: the whole result) and exits \
         with 1 when the tool reports an error."
    )
}

/// A JSON string literal, which YAML reads as a double-quoted scalar. The
/// characters JSON leaves alone but YAML does not allow unescaped (DEL, C1
/// controls, U+FFFE, U+FFFF) are escaped as well.
fn yaml_string(text: &str) -> String {
    json_text(&Value::from(text), false)
}

/// `value` as JSON (`pretty`: indented) with no control character left
/// raw: serde_json escapes those below U+0020, and DEL, the C1 controls,
/// U+FFFE and U+FFFF (which JSON allows raw, and which can only appear
/// inside strings) are escaped here.
fn json_text(value: &Value, pretty: bool) -> String {
    let json = if pretty {
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    } else {
        value.to_string()
    };
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if matches!(c, '\u{7f}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}') {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// A row of the parameter table.
struct Row {
    name: String,
    kind: String,
    required: bool,
    description: String,
    values: String,
}

fn write_parameters(out: &mut String, schema: &Map<String, Value>) -> std::fmt::Result {
    let mut rows = Vec::new();
    collect_rows(schema, "", 0, &mut rows);
    if rows.is_empty() {
        // Anything beyond an empty object schema still tells the model
        // something: show it as it is.
        const PLAIN: [&str; 6] = [
            "type",
            "properties",
            "required",
            "$schema",
            "title",
            "description",
        ];
        let plain = schema.iter().all(|(key, value)| {
            PLAIN.contains(&key.as_str())
                || (key == "additionalProperties" && *value == Value::Bool(false))
        });
        if plain {
            return writeln!(out, "This tool takes no parameters.");
        }
        writeln!(out, "The arguments follow this JSON Schema:\n")?;
        return write_json_block(out, &Value::Object(schema.clone()));
    }
    writeln!(
        out,
        "| Name | Type | Required | Description | Allowed values / default |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    for row in rows {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&code(&row.name)),
            cell(&row.kind),
            if row.required { "yes" } else { "no" },
            cell(&row.description),
            cell(&row.values)
        )?;
    }
    Ok(())
}

/// The properties of `schema` as rows, nested objects flattened (`options.depth`)
/// and objects inside arrays too (`files[].path`).
fn collect_rows(schema: &Map<String, Value>, prefix: &str, depth: usize, rows: &mut Vec<Row>) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    let required: HashSet<&str> = match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => HashSet::new(),
    };
    for (name, property) in properties {
        let path = format!("{prefix}{name}");
        let empty = Map::new();
        let property = property.as_object().unwrap_or(&empty);
        rows.push(Row {
            name: path.clone(),
            kind: type_of(property),
            required: required.contains(name.as_str()),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(printable_line)
                .unwrap_or_default(),
            values: allowed_values(property),
        });
        if depth + 1 >= MAX_SCHEMA_DEPTH {
            continue;
        }
        collect_rows(property, &format!("{path}."), depth + 1, rows);
        if let Some(Value::Object(items)) = property.get("items") {
            collect_rows(items, &format!("{path}[]."), depth + 1, rows);
        }
    }
}

/// The type in words: `string`, `integer or null`, `array of string`,
/// `string (uri)`.
fn type_of(schema: &Map<String, Value>) -> String {
    let mut kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => {
            let variants = ["anyOf", "oneOf"]
                .iter()
                .find_map(|key| schema.get(*key).and_then(Value::as_array));
            if let Some(variants) = variants {
                variants
                    .iter()
                    .filter_map(Value::as_object)
                    .map(type_of)
                    .collect::<Vec<_>>()
                    .join(" or ")
            } else if let Some(Value::String(reference)) = schema.get("$ref") {
                reference.rsplit('/').next().unwrap_or(reference).to_owned()
            } else if schema.contains_key("properties") {
                "object".to_owned()
            } else if schema.contains_key("items") {
                "array".to_owned()
            } else if let Some(value) = schema
                .get("const")
                .or_else(|| schema.get("enum").and_then(|e| e.get(0)))
            {
                json_type(value).to_owned()
            } else {
                "any".to_owned()
            }
        }
    };
    if kind == "array"
        && let Some(Value::Object(items)) = schema.get("items")
    {
        kind = format!("array of {}", type_of(items));
    }
    if let Some(Value::String(format)) = schema.get("format") {
        kind = format!("{kind} ({format})");
    }
    kind
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `enum`/`const` values, `default`, `minimum`/`maximum`.
fn allowed_values(schema: &Map<String, Value>) -> String {
    let mut parts = Vec::new();
    if let Some(Value::Array(values)) = schema.get("enum") {
        let mut shown: Vec<String> = values
            .iter()
            .take(MAX_ENUM_VALUES)
            .map(value_code)
            .collect();
        if values.len() > MAX_ENUM_VALUES {
            shown.push(format!("… ({} more)", values.len() - MAX_ENUM_VALUES));
        }
        parts.push(shown.join(", "));
    }
    if let Some(value) = schema.get("const") {
        parts.push(value_code(value));
    }
    if let Some(value) = schema.get("default") {
        parts.push(format!("default: {}", value_code(value)));
    }
    for key in ["minimum", "maximum"] {
        if let Some(value) = schema.get(key) {
            parts.push(format!("{key} {value}"));
        }
    }
    parts.join("; ")
}

/// A JSON value as inline code, shortened when long.
fn value_code(value: &Value) -> String {
    let text = json_text(value, false);
    let text = match text.char_indices().nth(MAX_VALUE_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    };
    code(&text)
}

/// Inline code that survives backticks in `text`.
fn code(text: &str) -> String {
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// A table cell: one line, control characters escaped, `|` escaped.
fn cell(text: &str) -> String {
    printable_line(text).replace('|', "\\|")
}

/// A fenced JSON block whose fence is longer than any backtick run inside.
fn write_json_block(out: &mut String, value: &Value) -> std::fmt::Result {
    let text = json_text(value, true);
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    writeln!(out, "{fence}json\n{text}\n{fence}")
}

fn annotation_lines(annotations: &ToolAnnotations, heading: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut hint = |value: Option<bool>, yes: &str, no: &str| {
        if let Some(value) = value {
            lines.push(if value { yes } else { no }.to_owned());
        }
    };
    hint(
        annotations.read_only_hint,
        "Read-only: it does not change its environment.",
        "Not read-only: it may change its environment.",
    );
    hint(
        annotations.destructive_hint,
        "Destructive: it may delete or overwrite data.",
        "Not destructive: it only adds or updates.",
    );
    hint(
        annotations.idempotent_hint,
        "Idempotent: calling it again with the same arguments has no further effect.",
        "Not idempotent: calling it again may have a further effect.",
    );
    hint(
        annotations.open_world_hint,
        "Open world: it reaches outside systems (the web, other services).",
        "Closed world: it works only within its own domain.",
    );
    if let Some(title) = annotations.title.as_deref().map(printable_line)
        && !title.is_empty()
        && title != heading
    {
        lines.push(format!("Title: {title}"));
    }
    lines
}

/// Arguments for the example call: each required parameter with its default,
/// its first allowed value, or a placeholder of its type.
fn example_arguments(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut example = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    let (Some(properties), Some(required)) = (properties, required) else {
        return example;
    };
    for name in required.iter().filter_map(Value::as_str) {
        let empty = Map::new();
        let property = properties
            .get(name)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        example.insert(name.to_owned(), placeholder(name, property));
    }
    example
}

fn placeholder(name: &str, schema: &Map<String, Value>) -> Value {
    if let Some(value) = schema
        .get("default")
        .or_else(|| schema.get("const"))
        .or_else(|| schema.get("enum").and_then(|e| e.get(0)))
    {
        return value.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("null"),
        _ => "string",
    };
    match kind {
        "integer" | "number" => Value::from(0),
        "boolean" => Value::Bool(false),
        "array" => Value::Array(Vec::new()),
        "object" => Value::Object(example_arguments(schema)),
        "null" => Value::Null,
        _ => Value::String(format!("<{name}>")),
    }
}

/// `text` in single quotes for a POSIX shell; with a control character in
/// it, in `$'…'` (bash, zsh, ksh) with that character escaped, so that no
/// control character is written raw.
fn quote(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if c.is_control() => {
                let mut bytes = [0; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    let _ = write!(out, "\\x{byte:02x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `text` as it is when a shell would not change it, else quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,:/@%+=".contains(c));
    if plain { text.to_owned() } else { quote(text) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: Option<&str>, schema: Value) -> Tool {
        let Value::Object(schema) = schema else {
            panic!("schema is an object")
        };
        Tool::new_with_raw(
            name.to_owned(),
            description.map(|d| d.to_owned().into()),
            schema,
        )
    }

    #[test]
    fn names_are_kebab_case_within_the_rule() {
        assert_eq!(
            base_name("varied", "Get_User.Profile"),
            "varied-get-user-profile"
        );
        assert_eq!(base_name("My Server!", "--x--"), "my-server-x");
        assert_eq!(
            base_name("everything", "getTinyImage"),
            "everything-get-tiny-image"
        );
        assert_eq!(base_name("web", "HTTPServer2Go"), "web-http-server2-go");
        assert_eq!(
            base_name("日本", "検索"),
            format!(
                "tool-{}",
                &hex(&Sha256::digest("日本-検索".as_bytes()))[..6]
            )
        );
        let long = base_name("server", &"a".repeat(100));
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("server-aaaa"));
        assert_ne!(long, base_name("server", &"a".repeat(101)));
    }

    #[test]
    fn collisions_get_numbers_within_64_characters() {
        let mut taken: HashSet<String> = ["a-b".to_owned(), "a-b-2".to_owned()].into();
        assert_eq!(unique_name("a-b", &taken), "a-b-3");
        assert_eq!(unique_name("c", &taken), "c");
        let long = "x".repeat(64);
        taken.insert(long.clone());
        let unique = unique_name(&long, &taken);
        assert_eq!(unique.len(), 64);
        assert!(unique.ends_with("x-2"));
    }

    #[test]
    fn description_is_the_first_sentence_on_one_line() {
        let described = |text: &str| description("s", &tool("t", Some(text), json!({})));
        assert_eq!(described("Search files. Then more."), "Search files.");
        assert_eq!(described("  Read a file.\nDetails follow"), "Read a file.");
        assert_eq!(described("No stop at all"), "No stop at all");
        assert_eq!(described("v1.2 is fine.  Next"), "v1.2 is fine.");
        assert_eq!(described("a\tb\u{7}c"), "a bc");
        let long = described(&"word ".repeat(400));
        assert_eq!(long.chars().count(), MAX_DESCRIPTION_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(
            description("srv", &tool("t", None, json!({}))),
            "Call the t tool of the srv MCP server."
        );
        assert_eq!(described("   "), "Call the t tool of the s MCP server.");
    }

    #[test]
    fn yaml_strings_escape_what_yaml_refuses() {
        assert_eq!(
            yaml_string("a \"b\"\n\u{7f}\u{85}"),
            r#""a \"b\"\n\u007f\u0085""#
        );
    }

    #[test]
    fn parameter_table_flattens_nested_objects_and_arrays() {
        let schema = json!({
            "type": "object",
            "properties": {
                "files": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string", "description": "a|b"}}, "required": ["path"]}},
                "mode": {"enum": ["a", "b"], "default": "a"},
                "n": {"type": ["integer", "null"], "minimum": 1},
                "url": {"type": "string", "format": "uri"}
            },
            "required": ["files"]
        });
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        let mut out = String::new();
        write_parameters(&mut out, &schema).unwrap();
        assert_eq!(
            out,
            "\
| Name | Type | Required | Description | Allowed values / default |
|---|---|---|---|---|
| `files` | array of object | yes |  |  |
| `files[].path` | string | yes | a\\|b |  |
| `mode` | string | no |  | `\"a\"`, `\"b\"`; default: `\"a\"` |
| `n` | integer or null | no |  | minimum 1 |
| `url` | string (uri) | no |  |  |
"
        );
        assert_eq!(
            Value::Object(example_arguments(&schema)).to_string(),
            r#"{"files":[]}"#
        );
    }

    #[test]
    fn schemas_without_properties() {
        let mut out = String::new();
        write_parameters(&mut out, json!({"type": "object"}).as_object().unwrap()).unwrap();
        assert_eq!(out, "This tool takes no parameters.\n");
        let mut out = String::new();
        let free = json!({"type": "object", "additionalProperties": {"type": "string"}});
        write_parameters(&mut out, free.as_object().unwrap()).unwrap();
        assert!(
            out.starts_with("The arguments follow this JSON Schema:\n\n```json\n{"),
            "{out}"
        );
    }

    #[test]
    fn hostile_tool_text_still_gives_a_clean_frontmatter() {
        let nasty = "x: \"y\" #z\n---\nname: evil\u{7f}\u{85}\u{fffe}\u{2028}' \\ \u{1b}[31m";
        let mut tool = tool(
            nasty,
            Some(&format!("{nasty}. {}", "long ".repeat(300))),
            json!({}),
        );
        tool.title = Some(nasty.to_owned());
        let text = skill_md("safe-name", nasty, &tool, Path::new("/s/it's.json"));
        let parsed = crate::parse::parse_text(&text, "safe-name").expect("the frontmatter parses");
        assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
        assert_eq!(parsed.name, "safe-name");
        assert!(parsed.description_chars <= MAX_DESCRIPTION_CHARS);
        let metadata = &parsed.fields["metadata"];
        assert_eq!(metadata["mcp-server"], nasty);
        assert_eq!(metadata["mcp-tool"], nasty);
        assert_eq!(metadata["generated-by"], GENERATED_BY);
        assert!(
            text.contains("--mcp-settings '/s/it'\\''s.json' "),
            "{text}"
        );
    }

    #[test]
    fn no_control_character_of_a_server_is_written_raw() {
        let nasty = "t\u{1b}[31m\r\u{7}x\u{85}";
        let mut tool = tool(
            nasty,
            Some(&format!("First {nasty}.\r\nSecond line\twith a tab.\n")),
            json!({
                "type": "object",
                "properties": {
                    nasty: {"type": "string", "description": nasty, "enum": [nasty], "default": nasty}
                },
                "required": [nasty]
            }),
        );
        tool.title = Some(nasty.to_owned());
        tool.output_schema = Some(std::sync::Arc::new(
            json!({"type": "object", "title": nasty})
                .as_object()
                .unwrap()
                .clone(),
        ));
        let text = skill_md("safe-name", nasty, &tool, Path::new("/s/mcp\u{7}.json"));
        for (i, line) in text.lines().enumerate() {
            assert!(
                !line.chars().any(|c| c.is_control() && c != '\t'),
                "line {}: {line:?}",
                i + 1
            );
        }
        assert!(text.contains("# t\\u{1b}[31m \\u{7}x\n"), "{text}");
        assert!(
            text.contains("\nFirst t\\u{1b}[31m\\r\\u{7}x\\u{85}.\nSecond line\twith a tab.\n"),
            "{text}"
        );
        assert!(
            text.contains("$'t\\x1b[31m\\x0d\\x07x\\xc2\\x85'"),
            "{text}"
        );
        assert!(crate::parse::parse_text(&text, "safe-name").is_ok());
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("github"), "github");
        assert_eq!(shell_word("my server"), "'my server'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
