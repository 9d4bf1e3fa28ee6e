//! `config.toml`: where it is, and what it says (behaviour.md §17.1).
//!
//! Every key is checked here, with the line it is on: an unknown key or a
//! bad value is an error naming the file, the line and the key, never
//! ignored. Paths are expanded (`~`, `$VAR`) and made absolute against the
//! file's own folder; patterns are parsed. What the file says is then merged
//! with the flags and the environment by `settings`.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml_edit::{Document, Item, Key, TableLike, Value};

use super::expand::expand_path;
use super::log::{self, FilterError, LOG_LEVELS};
use super::pattern::{self, Glob, Pattern, Selector, Unexpanded};
use super::{Env, MAX_REFRESH_SECS, MIN_DESCRIPTION_BUDGET, Origin, Placement};
use crate::disk::{self, ReadError};
use crate::similarity;

/// The file's name in the config folder.
pub const FILE_NAME: &str = "config.toml";

/// A settings file larger than this is refused: it is read whole, at every
/// change while serving.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The keys of the file's top level, in the order `skillserve config` shows them.
pub const KEYS: [&str; 21] = [
    "skills_dirs",
    "project_dir",
    "project",
    "user",
    "plugins",
    "max_file_bytes",
    "log_level",
    "refresh_interval",
    "watch",
    "description_budget",
    "prompts",
    "resources",
    "usage",
    "include",
    "exclude",
    "disabled",
    "clients",
    "sources",
    "trusted_signers",
    "revoked_signers",
    "require_signature",
];

/// The keys of a `[clients."..."]` profile.
pub const PROFILE_KEYS: [&str; 8] = [
    "include",
    "exclude",
    "disabled",
    "description_budget",
    "prompts",
    "resources",
    "native",
    "catalog",
];

/// The keys of a `[sources.ID]` table.
pub const SOURCE_KEYS: [&str; 1] = ["auto_update"];

/// `[sources.ID] auto_update`: `serve --http` fetches the installed source
/// ID again on this schedule and installs what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoUpdate {
    /// The source's id in `sources.lock`.
    pub id: String,
    pub every: std::time::Duration,
    pub origin: Origin,
}

/// Where the settings file is, and who said so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    /// `--config` or `SKILLSERVE_CONFIG` when the user named the file (it
    /// must then exist); `None` for the default place (it may be absent).
    pub given_by: Option<&'static str>,
}

/// A value of the file and the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At<T> {
    pub value: T,
    pub line: usize,
}

/// `include`, `exclude` and `disabled`, of the top level or of a profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    pub include: Vec<Pattern>,
    pub exclude: Vec<Pattern>,
    /// Names (not globs), each with where it was written.
    pub disabled: Vec<Named>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty() && self.disabled.is_empty()
    }
}

/// One name of `disabled`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub origin: Origin,
}

/// A `[clients."<glob>"]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The glob as written (`cursor*`).
    pub text: String,
    pub glob: Glob,
    /// The line of the table's header.
    pub origin: Origin,
    pub filters: Filters,
    pub description_budget: Option<At<usize>>,
    pub prompts: Option<At<bool>>,
    pub resources: Option<At<bool>>,
    /// `native = false` turns the built-in native profile off.
    pub native: Option<At<bool>>,
    /// `catalog = "tool" | "instructions" | "both"`: where the client is
    /// shown the catalog, whatever its row of the native table says.
    pub catalog: Option<At<Placement>>,
}

impl Profile {
    /// `[clients."cursor*"]`, as the header would be written.
    pub fn header(&self) -> String {
        format!("[clients.{}]", quoted(&self.text))
    }
}

/// Everything `config.toml` says; `None` for keys it does not set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSettings {
    pub path: Arc<Path>,
    /// Each folder expanded and absolute, with its line.
    pub skills_dirs: Vec<At<PathBuf>>,
    pub project_dir: Option<At<PathBuf>>,
    pub project: Option<At<bool>>,
    pub user: Option<At<bool>>,
    pub plugins: Option<At<bool>>,
    pub max_file_bytes: Option<At<u64>>,
    pub log_level: Option<At<String>>,
    pub refresh_interval: Option<At<u64>>,
    pub watch: Option<At<bool>>,
    pub description_budget: Option<At<usize>>,
    pub prompts: Option<At<bool>>,
    pub resources: Option<At<bool>>,
    pub usage: Option<At<bool>>,
    pub filters: Filters,
    pub profiles: Vec<Profile>,
    /// `[sources.ID] auto_update`, in file order.
    pub auto_update: Vec<AutoUpdate>,
    /// `trusted_signers` and `revoked_signers`: files of SSH keys, expanded
    /// and absolute.
    pub trusted_signers: Option<At<PathBuf>>,
    pub revoked_signers: Option<At<PathBuf>>,
    pub require_signature: Option<At<bool>>,
}

/// Why the settings file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    #[error("{}: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Reads and checks the file at `location`. `Ok(None)` when the default file
/// does not exist; a file the user named must exist.
pub fn load(location: &Location, env: &Env) -> Result<Option<FileSettings>, FileError> {
    let path = &location.path;
    let text = match disk::read_text(path, MAX_BYTES) {
        Ok(text) => text,
        Err(ReadError::Io(err)) if disk::is_gone(&err) && location.given_by.is_none() => {
            return Ok(None);
        }
        Err(err) => {
            let reason = match (&err, location.given_by) {
                (ReadError::Io(io), Some(by)) if disk::is_gone(io) => {
                    format!("no such file (named by {by})")
                }
                _ => format!("cannot read the settings file: {err}"),
            };
            return Err(FileError::Unreadable {
                path: path.clone(),
                reason,
            });
        }
    };
    parse(&text, path, env).map(Some)
}

/// Checks `text`, the contents of the settings file at `path`.
pub fn parse(text: &str, path: &Path, env: &Env) -> Result<FileSettings, FileError> {
    let reader = Reader {
        path,
        text,
        env,
        base: path.parent().unwrap_or(Path::new("/")),
        file: Arc::from(path),
    };
    let document = Document::parse(text).map_err(|err| {
        let line = err.span().map_or(1, |span| reader.line_at(span.start));
        let message = err.message().trim_end().to_owned();
        reader.error(line, format!("not valid TOML: {message}"))
    })?;
    let mut out = FileSettings {
        path: Arc::clone(&reader.file),
        skills_dirs: Vec::new(),
        project_dir: None,
        project: None,
        user: None,
        plugins: None,
        max_file_bytes: None,
        log_level: None,
        refresh_interval: None,
        watch: None,
        description_budget: None,
        prompts: None,
        resources: None,
        usage: None,
        filters: Filters::default(),
        profiles: Vec::new(),
        auto_update: Vec::new(),
        trusted_signers: None,
        revoked_signers: None,
        require_signature: None,
    };
    let table = document.as_table();
    for (key, item) in table.iter() {
        let line = reader.key_line(table.key(key), item);
        let field = Field {
            key,
            line,
            item,
            table: None,
        };
        reader.top(&field, &mut out)?;
    }
    Ok(out)
}

/// A key and its value, where they are, and the profile they belong to.
struct Field<'a> {
    key: &'a str,
    line: usize,
    item: &'a Item,
    /// The profile's glob, for keys of `[clients."..."]`.
    table: Option<&'a str>,
}

impl Field<'_> {
    /// `description_budget` or `description_budget` in `[clients."x"]`.
    fn name(&self) -> String {
        match self.table {
            None => format!("`{}`", self.key),
            Some(glob) => format!("`{}` in [clients.{}]", self.key, quoted(glob)),
        }
    }
}

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
    env: &'a Env,
    /// The folder relative paths are relative to.
    base: &'a Path,
    file: Arc<Path>,
}

impl Reader<'_> {
    fn top(&self, field: &Field, out: &mut FileSettings) -> Result<(), FileError> {
        let line = field.line;
        match field.key {
            "skills_dirs" => {
                out.skills_dirs = self.paths(field)?;
            }
            "project_dir" => {
                let text = self.string(field)?;
                let dir = self.path(field, &text, line)?;
                if !dir.is_dir() {
                    return Err(self.error(
                        line,
                        format!("`project_dir` {} is not a folder", dir.display()),
                    ));
                }
                out.project_dir = Some(At { value: dir, line });
            }
            "project" => out.project = Some(self.flag(field)?),
            "user" => out.user = Some(self.flag(field)?),
            "plugins" => out.plugins = Some(self.flag(field)?),
            "max_file_bytes" => {
                let bytes = self.integer(field, "a number of bytes", 0, u64::MAX)?;
                out.max_file_bytes = Some(bytes);
            }
            "log_level" => {
                let level = self.string(field)?;
                match log::log_filter(&level) {
                    Ok(_) => {}
                    Err(FilterError::NotALevel) => {
                        return Err(self.error(
                            line,
                            format!(
                                "`log_level` \"{level}\" is not a log level: use one of {}, or a filter such as \"skillserve=debug,rmcp=info\"",
                                LOG_LEVELS.join(", ")
                            ),
                        ));
                    }
                    Err(FilterError::Invalid(reason)) => {
                        return Err(self.error(
                            line,
                            format!("`log_level` \"{level}\" is not a valid log filter: {reason}"),
                        ));
                    }
                }
                out.log_level = Some(At { value: level, line });
            }
            "refresh_interval" => {
                let secs = self.integer(field, "a number of seconds", 0, MAX_REFRESH_SECS)?;
                out.refresh_interval = Some(secs);
            }
            "watch" => out.watch = Some(self.flag(field)?),
            "usage" => out.usage = Some(self.flag(field)?),
            "description_budget" => out.description_budget = Some(self.budget(field)?),
            "prompts" => out.prompts = Some(self.flag(field)?),
            "resources" => out.resources = Some(self.flag(field)?),
            "include" | "exclude" | "disabled" => self.filter(field, &mut out.filters)?,
            "clients" => out.profiles = self.profiles(field)?,
            "sources" => out.auto_update = self.sources(field)?,
            "trusted_signers" | "revoked_signers" => {
                let text = self.string(field)?;
                let value = Some(At {
                    value: self.path(field, &text, line)?,
                    line,
                });
                if field.key == "trusted_signers" {
                    out.trusted_signers = value;
                } else {
                    out.revoked_signers = value;
                }
            }
            "require_signature" => out.require_signature = Some(self.flag(field)?),
            unknown => return Err(self.unknown(unknown, line, &KEYS, None)),
        }
        Ok(())
    }

    /// The `[sources.ID]` tables: what a team server keeps up to date.
    fn sources(&self, field: &Field) -> Result<Vec<AutoUpdate>, FileError> {
        let tables = self.tables(
            field,
            "`sources` must hold tables such as [sources.skills]",
            |id| {
                format!(
                    "`sources.{}` must be a table such as [sources.{}] with `auto_update = \"10m\"`",
                    quoted(id),
                    quoted(id)
                )
            },
        )?;
        let mut out = Vec::new();
        for (id, _, table) in tables {
            for (key, item) in table.iter() {
                let line = self.key_line(table.key(key), item);
                if key != "auto_update" {
                    return Err(self.error(
                        line,
                        format!(
                            "unknown key `{key}` in [sources.{}]; the keys are {}",
                            quoted(id),
                            SOURCE_KEYS.join(", ")
                        ),
                    ));
                }
                let every = interval(item).ok_or_else(|| {
                    self.error(
                        line,
                        format!(
                            "`auto_update` in [sources.{}] must be a time such as \"30s\", \"10m\", \"2h\" or \"1d\" (at least 1 second, at most {MAX_REFRESH_SECS} seconds), not {}",
                            quoted(id),
                            kind(item)
                        ),
                    )
                })?;
                out.push(AutoUpdate {
                    id: id.to_owned(),
                    every,
                    origin: self.origin(line),
                });
            }
        }
        Ok(out)
    }

    /// The `[clients."<glob>"]` tables, in file order.
    fn profiles(&self, field: &Field) -> Result<Vec<Profile>, FileError> {
        let tables = self.tables(
            field,
            "`clients` must hold tables such as [clients.\"cursor*\"]",
            |glob| {
                format!(
                    "`clients.{}` must be a table of settings for the clients it matches",
                    quoted(glob)
                )
            },
        )?;
        tables
            .into_iter()
            .map(|(glob, line, table)| self.profile(glob, line, table))
            .collect()
    }

    /// The tables `field` holds (`[sources.ID]`, `[clients."<glob>"]`), in
    /// file order, each with its key and line. Anything else is an error:
    /// `not_tables` says what `field` must hold, `not_a_table` what the
    /// entry with that key must be (each followed by what was found).
    fn tables<'f>(
        &self,
        field: &Field<'f>,
        not_tables: &str,
        not_a_table: impl Fn(&str) -> String,
    ) -> Result<Vec<(&'f str, usize, &'f dyn TableLike)>, FileError> {
        let Some(tables) = field.item.as_table_like() else {
            return Err(self.error(
                field.line,
                format!("{not_tables}, not {}", kind(field.item)),
            ));
        };
        let mut out = Vec::new();
        for (key, item) in tables.iter() {
            let line = self.key_line(tables.key(key), item);
            let Some(table) = item.as_table_like() else {
                return Err(self.error(line, format!("{}, not {}", not_a_table(key), kind(item))));
            };
            out.push((key, line, table));
        }
        Ok(out)
    }

    fn profile(
        &self,
        glob: &str,
        line: usize,
        table: &dyn TableLike,
    ) -> Result<Profile, FileError> {
        if glob.trim().is_empty() {
            return Err(self.error(
                line,
                "a client profile needs a name or glob: [clients.\"cursor*\"]".into(),
            ));
        }
        let mut profile = Profile {
            text: glob.to_owned(),
            glob: Glob::new(glob),
            origin: self.origin(line),
            filters: Filters::default(),
            description_budget: None,
            prompts: None,
            resources: None,
            native: None,
            catalog: None,
        };
        for (key, item) in table.iter() {
            let field = Field {
                key,
                line: self.key_line(table.key(key), item),
                item,
                table: Some(glob),
            };
            match key {
                "include" | "exclude" | "disabled" => self.filter(&field, &mut profile.filters)?,
                "description_budget" => profile.description_budget = Some(self.budget(&field)?),
                "prompts" => profile.prompts = Some(self.flag(&field)?),
                "resources" => profile.resources = Some(self.flag(&field)?),
                "native" => profile.native = Some(self.flag(&field)?),
                "catalog" => profile.catalog = Some(self.placement(&field)?),
                unknown => {
                    return Err(self.unknown(unknown, field.line, &PROFILE_KEYS, Some(glob)));
                }
            }
        }
        Ok(profile)
    }

    /// `include`, `exclude` (patterns) or `disabled` (names) into `filters`.
    fn filter(&self, field: &Field, filters: &mut Filters) -> Result<(), FileError> {
        let entries = self.strings(field)?;
        match field.key {
            "disabled" => {
                for At { value, line } in entries {
                    if value.trim().is_empty() {
                        return Err(
                            self.error(line, format!("{} holds an empty name", field.name()))
                        );
                    }
                    filters.disabled.push(Named {
                        name: value,
                        origin: self.origin(line),
                    });
                }
            }
            list => {
                let patterns = entries
                    .into_iter()
                    .map(|entry| self.pattern(field, entry))
                    .collect::<Result<Vec<_>, _>>()?;
                if list == "include" {
                    filters.include = patterns;
                } else {
                    filters.exclude = patterns;
                }
            }
        }
        Ok(())
    }

    fn pattern(&self, field: &Field, entry: At<String>) -> Result<Pattern, FileError> {
        let At { value: text, line } = entry;
        let problem =
            |why: String| self.error(line, format!("{} entry \"{text}\": {why}", field.name()));
        let selects = match pattern::parse_selector(&text).map_err(|p| problem(p.to_string()))? {
            Unexpanded::Selector(selector) => selector,
            Unexpanded::Dir(dir) => {
                let what = format!("{} entry", field.name());
                let dir = expand_path(&what, &dir, self.env, self.base)
                    .map_err(|e| self.error(line, e.to_string()))?;
                Selector::Dir(dir)
            }
        };
        Ok(Pattern {
            text: text.clone(),
            selects,
            origin: self.origin(line),
        })
    }

    fn budget(&self, field: &Field) -> Result<At<usize>, FileError> {
        let At { value, line } = self.integer(field, "a number of characters", 0, u64::MAX)?;
        let value = usize::try_from(value).unwrap_or(usize::MAX);
        if value < MIN_DESCRIPTION_BUDGET {
            return Err(self.error(
                line,
                format!(
                    "{} must be at least {MIN_DESCRIPTION_BUDGET} characters, not {value}",
                    field.name()
                ),
            ));
        }
        Ok(At { value, line })
    }

    fn paths(&self, field: &Field) -> Result<Vec<At<PathBuf>>, FileError> {
        self.strings(field)?
            .into_iter()
            .map(|At { value, line }| {
                let path = self.path(field, &value, line)?;
                Ok(At { value: path, line })
            })
            .collect()
    }

    fn path(&self, field: &Field, value: &str, line: usize) -> Result<PathBuf, FileError> {
        expand_path(&field.name(), value, self.env, self.base)
            .map_err(|e| self.error(line, e.to_string()))
    }

    fn placement(&self, field: &Field) -> Result<At<Placement>, FileError> {
        match field.item.as_str().map(Placement::parse) {
            Some(Some(value)) => Ok(At {
                value,
                line: field.line,
            }),
            _ => Err(self.wrong(field, "\"tool\", \"instructions\" or \"both\"")),
        }
    }

    fn flag(&self, field: &Field) -> Result<At<bool>, FileError> {
        match field.item.as_bool() {
            Some(value) => Ok(At {
                value,
                line: field.line,
            }),
            None => Err(self.wrong(field, "true or false")),
        }
    }

    fn string(&self, field: &Field) -> Result<String, FileError> {
        field
            .item
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.wrong(field, "a string"))
    }

    /// A list of strings, each with its own line.
    fn strings(&self, field: &Field) -> Result<Vec<At<String>>, FileError> {
        let Some(array) = field.item.as_array() else {
            return Err(self.wrong(field, "a list of strings, such as [\"pdf*\"]"));
        };
        array
            .iter()
            .map(|value| match value.as_str() {
                Some(text) => Ok(At {
                    value: text.to_owned(),
                    line: value.span().map_or(field.line, |s| self.line_at(s.start)),
                }),
                None => Err(self.error(
                    value.span().map_or(field.line, |s| self.line_at(s.start)),
                    format!(
                        "{} must hold only strings, not {}",
                        field.name(),
                        value_kind(value)
                    ),
                )),
            })
            .collect()
    }

    fn integer(&self, field: &Field, what: &str, min: u64, max: u64) -> Result<At<u64>, FileError> {
        let expected = if max == u64::MAX {
            format!("{what} (a whole number, at least {min})")
        } else {
            format!("{what} from {min} to {max}")
        };
        match field.item.as_integer().map(u64::try_from) {
            Some(Ok(value)) if (min..=max).contains(&value) => Ok(At {
                value,
                line: field.line,
            }),
            _ => Err(self.wrong(field, &expected)),
        }
    }

    /// "`key` must be EXPECTED, not WHAT IT IS".
    fn wrong(&self, field: &Field, expected: &str) -> FileError {
        self.error(
            field.line,
            format!(
                "{} must be {expected}, not {}",
                field.name(),
                kind(field.item)
            ),
        )
    }

    fn unknown(&self, key: &str, line: usize, known: &[&str], table: Option<&str>) -> FileError {
        let place = table.map_or(String::new(), |glob| {
            format!(" in [clients.{}]", quoted(glob))
        });
        let best = known
            .iter()
            .map(|k| (similarity::similarity(&key.to_lowercase(), k), *k))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .filter(|(score, _)| *score >= similarity::THRESHOLD);
        let help = match best {
            Some((_, suggestion)) => format!(" (did you mean `{suggestion}`?)"),
            None => format!("; the keys are {}", known.join(", ")),
        };
        self.error(line, format!("unknown key `{key}`{place}{help}"))
    }

    fn origin(&self, line: usize) -> Origin {
        Origin::File {
            path: Arc::clone(&self.file),
            line,
        }
    }

    fn error(&self, line: usize, message: String) -> FileError {
        FileError::Invalid {
            path: self.path.to_path_buf(),
            line,
            message,
        }
    }

    /// The line of a key (or, without a span, of its value).
    fn key_line(&self, key: Option<&Key>, item: &Item) -> usize {
        let span: Option<Range<usize>> = key.and_then(Key::span).or_else(|| item.span());
        span.map_or(1, |span| self.line_at(span.start))
    }

    fn line_at(&self, offset: usize) -> usize {
        disk::line_of(self.text.as_bytes(), offset.min(self.text.len()))
    }
}

/// A time between fetches: `"30s"`, `"10m"`, `"2h"`, `"1d"`, or a number of
/// seconds; from 1 second to a day.
fn interval(item: &Item) -> Option<std::time::Duration> {
    let secs = match item.as_integer() {
        Some(secs) => u64::try_from(secs).ok()?,
        None => {
            let text = item.as_str()?.trim();
            let unit_at = text.find(|c: char| !c.is_ascii_digit())?;
            let count: u64 = text[..unit_at].parse().ok()?;
            let unit = match text[unit_at..].trim() {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                "d" => 86_400,
                _ => return None,
            };
            count.checked_mul(unit)?
        }
    };
    (1..=MAX_REFRESH_SECS)
        .contains(&secs)
        .then(|| std::time::Duration::from_secs(secs))
}

/// What a TOML item is, in words, with its value when it is short.
fn kind(item: &Item) -> String {
    match item {
        Item::Value(value) => value_kind(value),
        Item::Table(_) => "a table".to_owned(),
        Item::ArrayOfTables(_) => "an array of tables".to_owned(),
        Item::None => "nothing".to_owned(),
    }
}

fn value_kind(value: &Value) -> String {
    let shown = value.to_string();
    let shown = shown.trim();
    let with = |what: &str| {
        if shown.chars().count() <= 40 {
            format!("{what} ({shown})")
        } else {
            what.to_owned()
        }
    };
    match value {
        Value::String(_) => with("a string"),
        Value::Integer(_) => with("an integer"),
        Value::Float(_) => with("a number with a fraction"),
        Value::Boolean(_) => with("a boolean"),
        Value::Datetime(_) => with("a date"),
        Value::Array(_) => "a list".to_owned(),
        Value::InlineTable(_) => "a table".to_owned(),
    }
}

/// A table key as TOML writes it: bare when it can be, else quoted.
pub fn quoted(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        key.to_owned()
    } else {
        format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<FileSettings, String> {
        parse(text, Path::new("/cfg/config.toml"), &Env::for_tests()).map_err(|e| e.to_string())
    }

    #[test]
    fn every_key_is_read_with_its_line() {
        let settings = parsed(
            "# skillserve\n\
             skills_dirs = [\"~/team\", \"local\"]\n\
             user = false\n\
             max_file_bytes = 2048\n\
             refresh_interval = 0\n\
             description_budget = 4000\n\
             log_level = \"debug\"\n\
             exclude = [\n  \"pdf-old\",\n  \"source:plugin\",\n]\n\
             disabled = [\"legacy\"]\n\
             \n\
             [clients.\"cursor*\"]\n\
             prompts = false\n\
             include = [\"dir:~/x\"]\n",
        )
        .unwrap();
        assert_eq!(
            settings.skills_dirs,
            vec![
                At {
                    value: PathBuf::from("/home/u/team"),
                    line: 2
                },
                At {
                    value: PathBuf::from("/cfg/local"),
                    line: 2
                },
            ]
        );
        assert_eq!(
            settings.user,
            Some(At {
                value: false,
                line: 3
            })
        );
        assert_eq!(
            settings.max_file_bytes,
            Some(At {
                value: 2048,
                line: 4
            })
        );
        assert_eq!(settings.refresh_interval, Some(At { value: 0, line: 5 }));
        assert_eq!(settings.log_level.unwrap().value, "debug");
        let lines: Vec<String> = settings
            .filters
            .exclude
            .iter()
            .map(|p| format!("{} {}", p.text, p.origin))
            .collect();
        assert_eq!(
            lines,
            ["pdf-old config.toml:9", "source:plugin config.toml:10"]
        );
        assert_eq!(settings.filters.disabled[0].name, "legacy");
        let profile = &settings.profiles[0];
        assert_eq!(profile.header(), "[clients.\"cursor*\"]");
        assert_eq!(profile.origin.to_string(), "config.toml:14");
        assert_eq!(
            profile.prompts,
            Some(At {
                value: false,
                line: 15
            })
        );
        assert_eq!(
            profile.filters.include[0].selects,
            Selector::Dir("/home/u/x".into())
        );
    }

    #[test]
    fn sources_tables_give_auto_update_intervals() {
        let settings =
            parsed("[sources.skills]\nauto_update = \"10m\"\n\n[sources.team]\nauto_update = 90\n")
                .unwrap();
        let got: Vec<(&str, u64)> = settings
            .auto_update
            .iter()
            .map(|a| (a.id.as_str(), a.every.as_secs()))
            .collect();
        assert_eq!(got, [("skills", 600), ("team", 90)]);
        for (text, secs) in [("\"30s\"", 30), ("\"2h\"", 7200), ("\"1d\"", 86_400)] {
            let settings = parsed(&format!("[sources.x]\nauto_update = {text}\n")).unwrap();
            assert_eq!(settings.auto_update[0].every.as_secs(), secs, "{text}");
        }
        for bad in ["\"10\"", "\"0s\"", "\"2d\"", "\"5 weeks\"", "true", "-1"] {
            let err = parsed(&format!("[sources.x]\nauto_update = {bad}\n")).unwrap_err();
            assert!(
                err.starts_with("/cfg/config.toml:2: `auto_update` in [sources.x] must be a time such as \"30s\""),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            parsed("[sources.x]\nauto_updates = \"1m\"\n").unwrap_err(),
            "/cfg/config.toml:2: unknown key `auto_updates` in [sources.x]; the keys are auto_update"
        );
    }

    #[test]
    fn sources_and_clients_hold_tables_and_nothing_else() {
        for (text, error) in [
            (
                "sources = 5\n",
                "/cfg/config.toml:1: `sources` must hold tables such as [sources.skills], not an integer (5)",
            ),
            (
                "[sources]\nskills = 1\n",
                "/cfg/config.toml:2: `sources.skills` must be a table such as [sources.skills] with `auto_update = \"10m\"`, not an integer (1)",
            ),
            (
                "clients = 5\n",
                "/cfg/config.toml:1: `clients` must hold tables such as [clients.\"cursor*\"], not an integer (5)",
            ),
            (
                "[clients]\n\"cur*\" = 2\n",
                "/cfg/config.toml:2: `clients.\"cur*\"` must be a table of settings for the clients it matches, not an integer (2)",
            ),
        ] {
            assert_eq!(parsed(text).unwrap_err(), error, "{text}");
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_name_file_line_and_key() {
        assert_eq!(
            parsed("user = true\nskills_dir = [\"x\"]\n").unwrap_err(),
            "/cfg/config.toml:2: unknown key `skills_dir` (did you mean `skills_dirs`?)"
        );
        assert_eq!(
            parsed("colour = 1\n").unwrap_err(),
            format!(
                "/cfg/config.toml:1: unknown key `colour`; the keys are {}",
                KEYS.join(", ")
            )
        );
        assert_eq!(
            parsed("[clients.cursor]\nnativ = false\n").unwrap_err(),
            "/cfg/config.toml:2: unknown key `nativ` in [clients.cursor] (did you mean `native`?)"
        );
        assert_eq!(
            parsed("max_file_bytes = \"1MB\"\n").unwrap_err(),
            "/cfg/config.toml:1: `max_file_bytes` must be a number of bytes (a whole number, at least 0), not a string (\"1MB\")"
        );
        assert_eq!(
            parsed("refresh_interval = 100000\n").unwrap_err(),
            "/cfg/config.toml:1: `refresh_interval` must be a number of seconds from 0 to 86400, not an integer (100000)"
        );
        assert_eq!(
            parsed("\n[clients.\"x\"]\ndescription_budget = 10\n").unwrap_err(),
            "/cfg/config.toml:3: `description_budget` in [clients.x] must be at least 300 characters, not 10"
        );
        assert_eq!(
            parsed("exclude = [\n  \"ok\",\n  \"source:users\",\n]\n").unwrap_err(),
            "/cfg/config.toml:3: `exclude` entry \"source:users\": `source:users` names no source; use one of source:custom, source:project, source:user, source:plugin, source:plugin:NAME@MARKETPLACE, source:installed, source:installed:ID"
        );
        assert_eq!(
            parsed("include = \"pdf\"\n").unwrap_err(),
            "/cfg/config.toml:1: `include` must be a list of strings, such as [\"pdf*\"], not a string (\"pdf\")"
        );
        assert_eq!(
            parsed("disabled = [\"a\", 3]\n").unwrap_err(),
            "/cfg/config.toml:1: `disabled` must hold only strings, not an integer (3)"
        );
        assert_eq!(
            parsed("watch = \"no\"\n").unwrap_err(),
            "/cfg/config.toml:1: `watch` must be true or false, not a string (\"no\")"
        );
        assert_eq!(
            parsed("clients = 3\n").unwrap_err(),
            "/cfg/config.toml:1: `clients` must hold tables such as [clients.\"cursor*\"], not an integer (3)"
        );
        assert_eq!(
            parsed("log_level = \"loud\"\n").unwrap_err(),
            "/cfg/config.toml:1: `log_level` \"loud\" is not a log level: use one of off, error, warn, info, debug, trace, or a filter such as \"skillserve=debug,rmcp=info\""
        );
        // The same filter parser as --log-level: what it refuses, the file
        // refuses with its line.
        assert_eq!(
            parsed("log_level = \"skillserve[scan]=debug\"\n").unwrap_err(),
            "/cfg/config.toml:1: `log_level` \"skillserve[scan]=debug\" is not a valid log filter: span and field filters are not supported; use `level` or `target=level`"
        );
        assert_eq!(
            parsed("skills_dirs = [\"$NOPE_UNSET/x\"]\n").unwrap_err(),
            "/cfg/config.toml:1: `skills_dirs` `$NOPE_UNSET/x`: environment variable NOPE_UNSET is not set"
        );
        let syntax = parsed("user = \n").unwrap_err();
        assert!(
            syntax.starts_with("/cfg/config.toml:1: not valid TOML: "),
            "{syntax}"
        );
    }

    #[test]
    fn a_named_file_must_exist_and_the_default_one_may_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let default = Location {
            path: path.clone(),
            given_by: None,
        };
        assert_eq!(load(&default, &Env::for_tests()), Ok(None));
        let named = Location {
            path: path.clone(),
            given_by: Some("--config"),
        };
        assert_eq!(
            load(&named, &Env::for_tests()).unwrap_err().to_string(),
            format!("{}: no such file (named by --config)", path.display())
        );
        std::fs::write(&path, "user = false\n").unwrap();
        assert!(
            !load(&named, &Env::for_tests())
                .unwrap()
                .unwrap()
                .user
                .unwrap()
                .value
        );
    }
}
