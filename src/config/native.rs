//! Which MCP clients load which of skillserve's skills folders by themselves:
//! the table in `data/native-clients.toml` (researched, each row with its
//! sources; `docs/clients.md` explains it), built into the binary and read
//! once. `profiles` turns a row into the folders of this machine and leaves
//! their skills out of that client's view.

use std::sync::LazyLock;

use toml_edit::{Document, Item, Table, Value};

use super::pattern::Glob;

/// The table as written in the repository.
pub const TABLE: &str = include_str!("../../data/native-clients.toml");

/// One client that loads skills folders natively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeClient {
    /// Stable id (`claude-code`); profiles may be keyed by it.
    pub id: String,
    /// The product's name, for messages (`Claude Code`).
    pub title: String,
    /// Globs on the `clientInfo.name` the client sends.
    pub matches: Vec<Glob>,
    /// The same, as written (for `skillserve config`).
    pub match_text: Vec<String>,
    /// Project folders it reads (`.claude/skills`), relative to a level.
    pub project: Vec<String>,
    /// Whether it reads `project` folders in every level up to the
    /// repository root (else only in the project directory itself).
    pub walks_up: bool,
    /// User folders it reads, spelled as skillserve's user roots
    /// (`~/.claude/skills`).
    pub user: Vec<String>,
    /// Whether it loads the skills of enabled Claude Code plugins.
    pub plugins: bool,
    /// Whether it keeps MCP tool definitions out of the model's context
    /// until the model searches for them, showing the model the tools'
    /// names and the servers' `instructions` instead: the catalog then goes
    /// to the `instructions` (behaviour.md §5.4).
    pub defers_tools: bool,
    /// How many characters of a tool description, and of a server's
    /// `instructions`, the client passes on (it cuts the rest without a
    /// word); the catalog's budget for it, unless set for it.
    pub text_limit: Option<usize>,
}

impl NativeClient {
    /// Whether the client called `name` is this one.
    pub fn is(&self, name: &str) -> bool {
        self.matches.iter().any(|glob| glob.matches(name))
    }
}

/// Every row, in the file's order (by id).
pub fn clients() -> &'static [NativeClient] {
    static CLIENTS: LazyLock<Vec<NativeClient>> = LazyLock::new(|| {
        parse(TABLE).expect("data/native-clients.toml is valid: a unit test parses it")
    });
    &CLIENTS
}

/// The row for the client called `name`: the first whose globs match.
pub fn client_named(name: &str) -> Option<(usize, &'static NativeClient)> {
    clients().iter().enumerate().find(|(_, row)| row.is(name))
}

/// Reads the table; `Err` says which row and field is wrong.
fn parse(text: &str) -> Result<Vec<NativeClient>, String> {
    let document = Document::parse(text).map_err(|e| e.to_string())?;
    let rows = document
        .get("client")
        .and_then(Item::as_array_of_tables)
        .ok_or("no [[client]] rows")?;
    rows.iter()
        .enumerate()
        .map(|(number, row)| {
            row_of(row).map_err(|field| format!("[[client]] number {}: {field}", number + 1))
        })
        .collect()
}

fn row_of(row: &Table) -> Result<NativeClient, String> {
    let text = |key: &str| -> Result<String, String> {
        row.get(key)
            .and_then(Item::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("`{key}` must be a string"))
    };
    let list = |key: &str| -> Result<Vec<String>, String> {
        let array = row
            .get(key)
            .and_then(Item::as_array)
            .ok_or_else(|| format!("`{key}` must be an array of strings"))?;
        array
            .iter()
            .map(|v| Value::as_str(v).map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| format!("`{key}` must hold only strings"))
    };
    let flag = |key: &str| -> Result<bool, String> {
        row.get(key)
            .and_then(Item::as_bool)
            .ok_or_else(|| format!("`{key}` must be true or false"))
    };
    let text_limit = match row.get("text_limit") {
        None => None,
        Some(item) => Some(
            item.as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n > 0)
                .ok_or("`text_limit` must be a positive number of characters")?,
        ),
    };
    let (id, title, match_text) = (text("id")?, text("title")?, list("match")?);
    Ok(NativeClient {
        id,
        title,
        matches: match_text.iter().map(|m| Glob::new(m)).collect(),
        match_text,
        project: list("project")?,
        walks_up: flag("walks_up")?,
        user: list("user")?,
        plugins: flag("plugins")?,
        defers_tools: flag("defers_tools")?,
        text_limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_sorted_by_unique_ids() {
        let rows = parse(TABLE).unwrap();
        assert!(rows.len() >= 10, "{} rows", rows.len());
        let mut ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let listed = ids.clone();
        ids.sort_unstable();
        assert_eq!(ids, listed, "rows are sorted by id");
        ids.dedup();
        assert_eq!(ids.len(), rows.len(), "ids are unique");
        assert!(rows.iter().all(|row| !row.matches.is_empty()));
        assert!(clients().iter().any(|r| r.id == "claude-code" && r.plugins));
        let deferring: Vec<&str> = rows
            .iter()
            .filter(|r| r.defers_tools)
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(deferring, ["claude-code"]);
        let claude = rows.iter().find(|r| r.id == "claude-code").unwrap();
        assert_eq!(claude.text_limit, Some(2048));
    }

    #[test]
    fn clients_are_found_by_the_name_they_send() {
        let id = |name: &str| client_named(name).map(|(_, row)| row.id.as_str());
        assert_eq!(id("claude-code"), Some("claude-code"));
        assert_eq!(id("Claude-Code"), Some("claude-code"));
        assert_eq!(id("codex-mcp-client"), Some("codex"));
        assert_eq!(id("cursor-vscode"), Some("cursor"));
        assert_eq!(id("Visual Studio Code - Insiders"), Some("vscode"));
        assert_eq!(id("claude-ai"), Some("claude-desktop"));
        assert_eq!(id("my-agent"), None);
        let desktop = clients().iter().find(|r| r.id == "claude-desktop").unwrap();
        assert!(desktop.project.is_empty() && desktop.user.is_empty() && !desktop.plugins);
    }

    #[test]
    fn a_broken_row_is_named() {
        let err = parse("[[client]]\nid = \"x\"\ntitle = 1\n").unwrap_err();
        assert_eq!(err, "[[client]] number 1: `title` must be a string");
    }
}
