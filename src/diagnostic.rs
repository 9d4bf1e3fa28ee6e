//! Diagnostics: what went wrong (or looks wrong) with a file or folder, as data.
//!
//! The scan and the parser produce diagnostics; they never print them. The server
//! logs them, `skillserve check` renders them for people or as JSON, and `list` /
//! `show` summarise them. Every diagnostic names the file, says what is wrong and
//! what to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

/// Declares [`Code`]: each variant with its stable kebab-case text.
macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// What a diagnostic is about: a stable identifier, shown in logs and
        /// `check` output as kebab-case text (`yaml-invalid`). Code decides on
        /// the variants, never on the text, so renaming a text cannot change
        /// behaviour; the README's table of codes lists every one.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &[Code] = &[$(Code::$variant,)*];

            /// The kebab-case text of the code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    // Reading and parsing a SKILL.md.
    InvalidUtf8 = "invalid-utf8",
    FrontmatterUnterminated = "frontmatter-unterminated",
    YamlInvalid = "yaml-invalid",
    FrontmatterNotAMap = "frontmatter-not-a-map",
    EmptyFile = "empty-file",
    FileTooLarge = "file-too-large",
    NotAFile = "not-a-file",
    Unreadable = "unreadable",
    YamlRecovered = "yaml-recovered",
    FrontmatterMissing = "frontmatter-missing",
    NameFallback = "name-fallback",
    NameControl = "name-control",
    DescriptionMissing = "description-missing",
    DescriptionNotText = "description-not-text",
    // Walking roots.
    DanglingSymlink = "dangling-symlink",
    SymlinkAsText = "symlink-as-text",
    FileLeftOut = "file-left-out",
    DirUnreadable = "dir-unreadable",
    RootUnreadable = "root-unreadable",
    RootNotADirectory = "root-not-a-directory",
    RootMissing = "root-missing",
    SkillMissing = "skill-missing",
    SymlinkLoop = "symlink-loop",
    SymlinkOutsideProject = "symlink-outside-project",
    PathUnusable = "path-unusable",
    WalkLimit = "walk-limit",
    DepthLimit = "depth-limit",
    SameFile = "same-file",
    HiddenSkills = "hidden-skills",
    // Names.
    Shadowed = "shadowed",
    // The Agent Skills rules `check` adds.
    DescriptionEmpty = "description-empty",
    NameMissing = "name-missing",
    NameInvalid = "name-invalid",
    NameLength = "name-length",
    NameFolderMismatch = "name-folder-mismatch",
    DescriptionTooLong = "description-too-long",
    CompatibilityTooLong = "compatibility-too-long",
    CompatibilityInvalid = "compatibility-invalid",
    MetadataInvalid = "metadata-invalid",
    FieldNotText = "field-not-text",
    UnknownField = "unknown-field",
    LongFile = "long-file",
    NotInSkillsList = "not-in-skills-list",
    // Claude Code plugin files.
    JsonInvalid = "json-invalid",
    JsonUnreadable = "json-unreadable",
    ManifestInvalid = "manifest-invalid",
    ManifestEntryInvalid = "manifest-entry-invalid",
    SettingsInvalid = "settings-invalid",
    PluginMissing = "plugin-missing",
    PluginDisabled = "plugin-disabled",
    PluginPathOutside = "plugin-path-outside",
    // Installed skills (`skillserve add`): the lock and the store.
    LockInvalid = "lock-invalid",
    StoreMissing = "store-missing",
    StoreTampered = "store-tampered",
    /// A published index names a skill otherwise than its `SKILL.md` does
    /// (a plan's warning, never a served skill's).
    IndexNameMismatch = "index-name-mismatch",
    // The security scan (`check --security`, and every skill of a folder
    // that is not the user's own before it is served).
    HiddenUnicode = "hidden-unicode",
    BidiControl = "bidi-control",
    ZeroWidthInWord = "zero-width-in-word",
    HtmlCommentInstructions = "html-comment-instructions",
    HiddenHtml = "hidden-html",
    HostShellExpansion = "host-shell-expansion",
    DownloadToShell = "download-to-shell",
    Base64Exec = "base64-exec",
    CredentialAccess = "credential-access",
    ShellStartupWrite = "shell-startup-write",
    RemoteShell = "remote-shell",
    ConfusableText = "confusable-text",
    ConfusableName = "confusable-name",
    UnrestrictedShellTool = "unrestricted-shell-tool",
    DescriptionFlood = "description-flood",
    ScanIncomplete = "scan-incomplete",
    // Quarantine and approvals.
    Quarantined = "quarantined",
    ApprovalsInvalid = "approvals-invalid",
}

impl Code {
    /// Whether `list` names diagnostics of this code in full: those about a
    /// skills folder as a whole (missing, unreadable, a file, skills in a
    /// hidden folder of it), and skills a checkout lost (symbolic links git
    /// wrote as text), which would otherwise just be absent from the list.
    pub fn is_listed(self) -> bool {
        matches!(
            self,
            Code::RootMissing
                | Code::RootNotADirectory
                | Code::RootUnreadable
                | Code::HiddenSkills
                | Code::SymlinkAsText
        )
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

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
    pub code: Code,
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
        code: Code,
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

    pub fn error(code: Code, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Finding::new(Severity::Error, code, message, hint)
    }

    pub fn warning(code: Code, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Finding::new(Severity::Warning, code, message, hint)
    }

    pub fn note(code: Code, message: impl Into<String>, hint: impl Into<String>) -> Self {
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
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    pub severity: Severity,
    pub code: Code,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
    pub hint: String,
}

/// A path as JSON text: bytes that are not UTF-8 become U+FFFD, so that JSON
/// output is valid whatever the file names.
fn serialize_path<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
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

    /// [`Diagnostic::location`] with only the file's folder and name
    /// (`pdf/SKILL.md:3`): for a remote client, which must not learn where
    /// the server keeps its files.
    pub fn location_in_folder(&self) -> String {
        let name = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned());
        let short: PathBuf = [self.path.parent().and_then(name), name(&self.path)]
            .into_iter()
            .flatten()
            .collect();
        location(&short, self.line)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's tables of diagnostic codes (the security rules have a
    /// table of their own) name every code, and nothing else that looks
    /// like one.
    #[test]
    fn the_readme_documents_every_code() {
        let readme = include_str!("../README.md");
        let tables: Vec<&str> = readme
            .split("| code | severity | meaning |")
            .skip(1)
            .collect();
        assert!(!tables.is_empty(), "the README has a table of codes");
        let mut documented = std::collections::BTreeSet::new();
        for table in tables {
            let rows = table.lines().skip(1).take_while(|l| l.starts_with('|'));
            for row in rows.filter(|l| !l.starts_with("|---")) {
                let first_cell = row.split('|').nth(1).unwrap_or_default();
                for code in first_cell.split(',') {
                    documented.insert(code.trim().trim_matches('`').to_owned());
                }
            }
        }
        let known: std::collections::BTreeSet<String> =
            Code::ALL.iter().map(|c| c.as_str().to_owned()).collect();
        assert_eq!(documented, known, "README table vs Code::ALL");
    }

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "{text} twice");
            assert!(
                text.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{text}"
            );
        }
    }
}
