//! `skillserve disable NAME` and `enable NAME`: one name added to or removed
//! from a `disabled` list of `config.toml` (the top level's, or a client
//! profile's), keeping every comment, blank line and the layout of the rest
//! (behaviour.md §17.2). The file is replaced in one rename, so a server
//! watching it never reads half a file, and the edit holds the lock of the
//! file's editors from the read to the rename, so that two edits at once
//! (the CLI's and the app's) both land.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};

use super::file::{MAX_BYTES, quoted};
use crate::disk::{self, ReadError};

/// What an edit changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The name was added to (or removed from) the list.
    Done {
        /// Whether the file was created.
        created: bool,
    },
    /// Nothing to do: the name was already in (or not in) the list.
    Unchanged,
}

/// Why the file could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{}: cannot read the settings file: {error}", path.display())]
    Read { path: PathBuf, error: ReadError },
    #[error("{}: not valid TOML, so it is left as it is: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{}: {what} is not a list of names, so it is left as it is", path.display())]
    NotAList { path: PathBuf, what: String },
    #[error("{}: cannot write the settings file: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Adds `name` to (`disable`) or removes it from (`!disable`) the
/// `disabled` list of the top level, or of `[clients."<client>"]`; names
/// compare case-insensitively. Creates the file (and its folder) when it
/// does not exist and there is something to add.
pub fn set_disabled(
    path: &Path,
    name: &str,
    client: Option<&str>,
    disable: bool,
) -> Result<Change, EditError> {
    // Most calls find nothing to do: they read without the lock (a file is
    // only ever replaced whole) and leave no lock file behind.
    if new_text(path, name, client, disable)?.is_none() {
        return Ok(Change::Unchanged);
    }
    let write_error = |error| EditError::Write {
        path: path.to_path_buf(),
        error,
    };
    let _editing = disk::lock_editors(path).map_err(write_error)?;
    // Read again under the lock: another edit may have landed meanwhile.
    let Some((text, created)) = new_text(path, name, client, disable)? else {
        return Ok(Change::Unchanged);
    };
    disk::write_atomic(path, text.as_bytes(), disk::NewFile::Shared).map_err(write_error)?;
    Ok(Change::Done { created })
}

/// The file's new text and whether it is a new file, or `None` when there
/// is nothing to change.
fn new_text(
    path: &Path,
    name: &str,
    client: Option<&str>,
    disable: bool,
) -> Result<Option<(String, bool)>, EditError> {
    let (text, exists) = match disk::read_text(path, MAX_BYTES) {
        Ok(text) => (text, true),
        Err(ReadError::Io(err)) if disk::is_gone(&err) => (String::new(), false),
        Err(error) => {
            return Err(EditError::Read {
                path: path.to_path_buf(),
                error,
            });
        }
    };
    let mut document: DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| EditError::Syntax {
                path: path.to_path_buf(),
                message: e.message().trim_end().to_owned(),
            })?;
    let what = match client {
        None => "`disabled`".to_owned(),
        Some(client) => format!("`disabled` in [clients.{}]", quoted(client)),
    };
    let not_a_list = || EditError::NotAList {
        path: path.to_path_buf(),
        what: what.clone(),
    };
    let Some(table) = table_for(&mut document, client, disable) else {
        return Ok(None);
    };
    let position = |list: &Array| {
        list.iter().position(|v| {
            v.as_str()
                .is_some_and(|n| n.to_lowercase() == name.to_lowercase())
        })
    };
    if disable {
        let item = table
            .entry("disabled")
            .or_insert(Item::Value(Value::Array(Array::new())));
        let list = item.as_array_mut().ok_or_else(not_a_list)?;
        if position(list).is_some() {
            return Ok(None);
        }
        push_like_the_others(list, name);
    } else {
        let Some(item) = table.get_mut("disabled") else {
            return Ok(None);
        };
        let list = item.as_array_mut().ok_or_else(not_a_list)?;
        let Some(index) = position(list) else {
            return Ok(None);
        };
        remove_keeping_comments(list, index);
    }
    Ok(Some((document.to_string(), !exists)))
}

/// The table holding the `disabled` list to edit; with `create`, made when
/// missing (`[clients."x"]` goes at the end of the file).
fn table_for<'a>(
    document: &'a mut DocumentMut,
    client: Option<&str>,
    create: bool,
) -> Option<&'a mut dyn toml_edit::TableLike> {
    let root = document.as_table_mut();
    let Some(client) = client else {
        return Some(root);
    };
    if !create && root.get("clients").and_then(|c| c.get(client)).is_none() {
        return None;
    }
    let clients = root.entry("clients").or_insert_with(|| {
        let mut clients = Table::new();
        clients.set_implicit(true);
        Item::Table(clients)
    });
    let clients = clients.as_table_like_mut()?;
    clients
        .entry(client)
        .or_insert(Item::Table(Table::new()))
        .as_table_like_mut()
}

/// The text of a decoration (whitespace and comments), empty when none.
fn text(raw: Option<&toml_edit::RawString>) -> String {
    raw.and_then(toml_edit::RawString::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// `text` cut before its first line break, and the rest (`("", text)` when
/// there is none): what stays on the line it starts on.
fn split_line(text: &str) -> (&str, &str) {
    text.split_at(text.find('\n').unwrap_or(0))
}

/// Appends `name` so that a list written one entry per line stays so: the
/// new entry gets its own line, indented like the last one, and a comment
/// after the last entry stays on that entry's line.
fn push_like_the_others(list: &mut Array, name: &str) {
    let last_prefix = text(list.iter().last().and_then(|last| last.decor().prefix()));
    list.push(name);
    let Some(at) = last_prefix.rfind('\n') else {
        return;
    };
    let trailing = text(Some(list.trailing()));
    let (same_line, rest) = split_line(&trailing);
    let prefix = format!("{same_line}{}", &last_prefix[at..]);
    list.set_trailing(rest.to_owned());
    if let Some(added) = list.iter_mut().last() {
        added.decor_mut().set_prefix(prefix);
    }
}

/// Removes entry `index`, with the comment on its own line; a comment on
/// the line before it (the previous entry's) stays where it is.
fn remove_keeping_comments(list: &mut Array, index: usize) {
    let removed = list.remove(index);
    let prefix = text(removed.decor().prefix());
    let before = prefix.rfind('\n').map_or("", |at| &prefix[..at]);
    match list.get_mut(index) {
        Some(next) => {
            let next_prefix = text(next.decor().prefix());
            let (_, rest) = split_line(&next_prefix);
            next.decor_mut().set_prefix(format!("{before}{rest}"));
        }
        None => {
            let trailing = text(Some(list.trailing()));
            let (_, rest) = split_line(&trailing);
            list.set_trailing(format!("{before}{rest}"));
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    fn edited(text: &str, name: &str, client: Option<&str>, disable: bool) -> (Change, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        if !text.is_empty() {
            std::fs::write(&path, text).unwrap();
        }
        let change = set_disabled(&path, name, client, disable).unwrap();
        (change, std::fs::read_to_string(&path).unwrap_or_default())
    }

    #[test]
    fn disable_keeps_comments_and_the_layout_of_a_list() {
        let text = "# My settings\nuser = false # no home skills\n\n# Never these:\ndisabled = [\n  \"a\", # old\n  \"b\", # older\n]\n\n[clients.cursor]\nprompts = false\n";
        let (change, out) = edited(text, "pdf", None, true);
        assert_eq!(change, Change::Done { created: false });
        assert_eq!(
            out,
            "# My settings\nuser = false # no home skills\n\n# Never these:\ndisabled = [\n  \"a\", # old\n  \"b\", # older\n  \"pdf\",\n]\n\n[clients.cursor]\nprompts = false\n"
        );
        let (change, out) = edited(&out, "PDF", None, true);
        assert_eq!(change, Change::Unchanged);
        let (change, back) = edited(&out, "Pdf", None, false);
        assert_eq!(change, Change::Done { created: false });
        assert_eq!(back, text);
        // Removing an entry takes its own comment along, not its neighbours'.
        let (_, out) = edited(text, "a", None, false);
        assert_eq!(
            out,
            "# My settings\nuser = false # no home skills\n\n# Never these:\ndisabled = [\n  \"b\", # older\n]\n\n[clients.cursor]\nprompts = false\n"
        );
        let (_, out) = edited(text, "b", None, false);
        assert_eq!(
            out,
            "# My settings\nuser = false # no home skills\n\n# Never these:\ndisabled = [\n  \"a\", # old\n]\n\n[clients.cursor]\nprompts = false\n"
        );
    }

    #[test]
    fn a_missing_file_or_key_is_created() {
        let (change, out) = edited("", "pdf", None, true);
        assert_eq!(change, Change::Done { created: true });
        assert_eq!(out, "disabled = [\"pdf\"]\n");
        let (_, out) = edited(
            "user = false\n\n[clients.x]\nnative = false\n",
            "pdf",
            None,
            true,
        );
        assert_eq!(
            out,
            "user = false\ndisabled = [\"pdf\"]\n\n[clients.x]\nnative = false\n"
        );
        let (change, _) = edited("", "pdf", None, false);
        assert_eq!(change, Change::Unchanged);
    }

    #[test]
    fn a_client_profile_is_edited_or_added() {
        let (_, out) = edited(
            "# top\n[clients.\"cursor*\"]\nprompts = false\n",
            "pdf",
            Some("cursor*"),
            true,
        );
        assert_eq!(
            out,
            "# top\n[clients.\"cursor*\"]\nprompts = false\ndisabled = [\"pdf\"]\n"
        );
        let (_, out) = edited("user = false\n", "pdf", Some("codex"), true);
        assert_eq!(
            out,
            "user = false\n\n[clients.codex]\ndisabled = [\"pdf\"]\n"
        );
        let (change, _) = edited("user = false\n", "pdf", Some("codex"), false);
        assert_eq!(change, Change::Unchanged);
    }

    #[test]
    fn a_file_that_is_not_toml_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "user = \n").unwrap();
        let err = set_disabled(&path, "pdf", None, true).unwrap_err();
        assert!(matches!(err, EditError::Syntax { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "user = \n");
    }
}
