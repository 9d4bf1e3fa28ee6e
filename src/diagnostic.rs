//! Diagnostics: what went wrong (or looks wrong) with a file or folder, as data.
//!
//! The scan and the parser produce diagnostics; they never print them. The server
//! logs them, `skillserve check` renders them for people or as JSON, and `list` /
//! `show` summarise them. Every diagnostic names the file, says what is wrong and
//! what to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The skill (or root) could not be loaded, or breaks a rule clients rely on.
    Error,
    /// Loaded, but not the way the author probably intended.
    Warning,
    /// Worth knowing; most clients do not care.
    Note,
}

impl Severity {
    /// The lowercase word used in logs and in `check` output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A finding about one place on disk, before it is tied to that place.
///
/// The parser works on text and does not know the file name; it yields findings,
/// and the scan turns them into [`Diagnostic`]s with [`Finding::at`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// A stable kebab-case identifier (`yaml-invalid`, `shadowed`, ...).
    pub code: &'static str,
    /// 1-based line in the file, when the finding is about one line.
    pub line: Option<usize>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it, in one sentence.
    pub hint: String,
}

impl Finding {
    pub fn new(
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            code,
            line: None,
            message: message.into(),
            hint: hint.into(),
        }
    }

    pub fn error(code: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Finding::new(Severity::Error, code, message, hint)
    }

    pub fn warning(
        code: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Finding::new(Severity::Warning, code, message, hint)
    }

    pub fn note(code: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Finding::new(Severity::Note, code, message, hint)
    }

    /// The same finding, about `line`.
    pub fn on_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Ties the finding to `path`.
    pub fn at(self, path: impl Into<PathBuf>) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            severity: self.severity,
            code: self.code,
            line: self.line,
            message: self.message,
            hint: self.hint,
        }
    }
}

/// A finding about a file or directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Diagnostic {
    pub path: PathBuf,
    pub severity: Severity,
    pub code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
    pub hint: String,
}

impl Diagnostic {
    /// Logs the diagnostic to stderr: errors and warnings at `warn`, notes
    /// at `debug`.
    pub fn log(&self) {
        match self.severity {
            Severity::Error | Severity::Warning => tracing::warn!("{self}"),
            Severity::Note => tracing::debug!("{self}"),
        }
    }

    /// `path:line` (or just `path`), the way compilers name a place.
    pub fn location(&self) -> String {
        location(&self.path, self.line)
    }
}

/// `path:line`, or `path` when there is no line.
pub fn location(path: &Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

impl fmt::Display for Diagnostic {
    /// One line, for logs: `warning[shadowed] path:3: message (hint)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}] {}: {}",
            self.severity,
            self.code,
            self.location(),
            self.message
        )?;
        if !self.hint.is_empty() {
            write!(f, " ({})", self.hint)?;
        }
        Ok(())
    }
}
