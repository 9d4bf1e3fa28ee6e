//! Finding and starting other programs the way the platform's shell would.
//!
//! `std::process::Command::new("npx")` finds `npx` on Unix, but on Windows it
//! only ever tries `npx.exe`, so the `.cmd` launchers that npm, uv and most
//! Windows installs put on `PATH` (`npx.cmd`, `pnpm.cmd`, …) are "not found".
//! This module resolves a program name against `PATH` (and on Windows
//! `PATHEXT`) first, then builds the [`std::process::Command`] that starts
//! it: a `.cmd` / `.bat` launcher through `cmd.exe`, with every argument
//! quoted so that `cmd.exe` passes it through unchanged.
//!
//! Everything that starts a program calls it:
//!
//! ```no_run
//! # use skillserve::program::{Platform, Program, SearchEnv};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let env = skillserve::config::Env::from_process()?;
//! let search = SearchEnv::from_env(&env);
//! let git = Program::find("git", &search)?;
//! let output = git.command(&["--version"])?.output()?;
//! # Ok(()) }
//! ```
//!
//! The rules take the environment as input ([`SearchEnv`], [`Platform`]), so
//! the Windows rules are tested on every platform:
//!
//! - A name without a path separator is looked for in each `PATH` folder in
//!   order. On Windows each folder is tried with every extension of `PATHEXT`
//!   that can be started (`.com`, `.exe`, `.bat`, `.cmd`), in `PATHEXT`'s
//!   order, before the next folder, as `cmd.exe` does; a name that already
//!   ends in one of them is tried as it is. On Unix a candidate must be an
//!   executable file.
//! - The current folder is not searched for a bare name (`cmd.exe` would):
//!   an `npx.cmd` in a cloned repository must not run because `import` was
//!   started there. Empty `PATH` entries, which mean the current folder on
//!   Unix, are skipped for the same reason.
//! - A name with a separator (`./server`, `bin\server.cmd`, `C:\tools\x`) is a
//!   path, relative to [`SearchEnv::cwd`]; on Windows it gets the same
//!   extensions when it has none of its own.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::config::{Env, Vars};
pub use crate::platform::Platform;

fn has_separator(name: &str, platform: Platform) -> bool {
    match platform {
        Platform::Unix => name.contains('/'),
        // `C:name` is relative to the drive's current folder: a path too.
        Platform::Windows => name.contains(['/', '\\', ':']),
    }
}

/// The extensions Windows starts without a shell (`.com`, `.exe`) or through
/// `cmd.exe` (`.bat`, `.cmd`). `PATHEXT` may list more (`.vbs`, `.ps1`, …),
/// but those need a script host and are skipped.
const STARTABLE: [&str; 4] = [".com", ".exe", ".bat", ".cmd"];
/// `PATHEXT` when it is not set: Windows' own default, narrowed to
/// [`STARTABLE`].
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";
/// `PATH` when it is not set, on Unix (what glibc's `execvp` uses).
const DEFAULT_UNIX_PATH: &str = "/bin:/usr/bin";

/// What a program search needs from the environment.
#[derive(Clone, Debug)]
pub struct SearchEnv {
    pub platform: Platform,
    /// `PATH` (`None`: not set).
    pub path: Option<OsString>,
    /// `PATHEXT` (Windows only; `None`: not set).
    pub pathext: Option<OsString>,
    /// `SystemRoot` (Windows only): where `cmd.exe` is, as
    /// `%SystemRoot%\System32\cmd.exe`.
    pub system_root: Option<OsString>,
    /// The folder relative program paths start from.
    pub cwd: PathBuf,
}

impl SearchEnv {
    /// The search of this process: its environment and working folder.
    pub fn from_env(env: &Env) -> SearchEnv {
        SearchEnv::from_vars(&env.vars, env.cwd.clone())
    }

    /// The search with the variables `vars` and the working folder `cwd`.
    pub fn from_vars(vars: &Vars, cwd: PathBuf) -> SearchEnv {
        let var = |name: &str| vars.get(name).map(OsStr::to_os_string);
        SearchEnv {
            platform: Platform::CURRENT,
            path: var("PATH"),
            pathext: var("PATHEXT"),
            system_root: var("SystemRoot"),
            cwd,
        }
    }

    /// The search a child with `overrides` on top of this environment sees:
    /// a `PATH` (or `PATHEXT`) that a server's `env` sets is where its
    /// program is looked for, as `std` does on both platforms.
    pub fn with_overrides(&self, overrides: &[(String, String)]) -> SearchEnv {
        let mut search = self.clone();
        for (name, value) in overrides {
            if self.platform.same_variable(name, "PATH") {
                search.path = Some(value.into());
            } else if self.platform.same_variable(name, "PATHEXT") {
                search.pathext = Some(value.into());
            }
        }
        search
    }

    /// The folders of `PATH`, in order, empty entries skipped.
    fn path_dirs(&self) -> Vec<PathBuf> {
        match (&self.path, self.platform) {
            (Some(list), platform) => split_path_list(list, platform),
            (None, Platform::Unix) => {
                split_path_list(OsStr::new(DEFAULT_UNIX_PATH), Platform::Unix)
            }
            (None, Platform::Windows) => Vec::new(),
        }
    }

    /// The extensions to try, lower-case, in `PATHEXT`'s order (Windows), or
    /// none (Unix).
    fn extensions(&self) -> Vec<String> {
        if self.platform == Platform::Unix {
            return Vec::new();
        }
        let list = self
            .pathext
            .as_deref()
            .map(OsStr::to_string_lossy)
            .filter(|list| !list.trim().is_empty())
            .unwrap_or(DEFAULT_PATHEXT.into());
        let mut extensions: Vec<String> = Vec::new();
        for ext in list.split(';').map(|e| e.trim().to_ascii_lowercase()) {
            if STARTABLE.contains(&ext.as_str()) && !extensions.contains(&ext) {
                extensions.push(ext);
            }
        }
        extensions
    }
}

/// Splits a `PATH`-style list: `:` on Unix; `;` on Windows, where a `"…"`
/// part may hold a `;` and the quotes are dropped (as `std::env::split_paths`
/// does there).
fn split_path_list(list: &OsStr, platform: Platform) -> Vec<PathBuf> {
    let bytes = list.as_encoded_bytes();
    let mut dirs = Vec::new();
    let mut current = Vec::new();
    let mut quoted = false;
    let mut finish = |current: &mut Vec<u8>| {
        if !current.is_empty() {
            dirs.push(PathBuf::from(os_from_bytes(std::mem::take(current))));
        }
    };
    for &byte in bytes {
        match (platform, byte) {
            (Platform::Unix, b':') => finish(&mut current),
            (Platform::Windows, b'"') => quoted = !quoted,
            (Platform::Windows, b';') if !quoted => finish(&mut current),
            _ => current.push(byte),
        }
    }
    finish(&mut current);
    dirs
}

/// Bytes of an `OsStr` (`as_encoded_bytes`) cut at ASCII characters, back
/// into an `OsString`.
fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    // SAFETY: `bytes` is a run of `OsStr::as_encoded_bytes` output cut only
    // before or after ASCII bytes (`:`, `;`, `"`) and with `"` bytes removed;
    // the encoding is self-synchronizing, so such pieces are valid encoded
    // bytes (the rule `from_encoded_bytes_unchecked` documents).
    unsafe { OsString::from_encoded_bytes_unchecked(bytes) }
}

/// How a found program is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Started directly.
    Binary,
    /// A `.bat` / `.cmd` file (Windows): started through `cmd.exe`.
    Batch,
}

/// A program found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The file, as found (a `PATH` folder joined with the name).
    pub path: PathBuf,
    pub kind: Kind,
    /// `%SystemRoot%`, to find `cmd.exe` for a [`Kind::Batch`] program.
    system_root: Option<OsString>,
}

/// Why a program cannot be found or started.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProgramError {
    #[error("not found in PATH ({})", searched(.dirs, .extensions))]
    NotInPath {
        dirs: usize,
        /// The extensions tried (Windows), e.g. `.exe, .cmd`.
        extensions: Vec<String>,
    },
    #[error("PATH is not set, so it cannot be looked for; give its full path")]
    NoPath,
    #[error("{} does not exist or is not a program", .0.display())]
    NoSuchFile(PathBuf),
    #[error("{} cannot be started through cmd.exe: {reason}", path.display())]
    BadScriptPath { path: PathBuf, reason: &'static str },
    /// An argument `cmd.exe` cannot pass to a `.bat` / `.cmd` file unchanged.
    #[error("argument {index} ({arg:?}) cannot be passed to the batch file {}: it holds a line break or NUL, which cmd.exe cannot pass on", path.display())]
    UnsafeArgument {
        path: PathBuf,
        /// Counted from 0, as in the settings file's `args`.
        index: usize,
        arg: String,
    },
}

fn searched(dirs: &usize, extensions: &[String]) -> String {
    let folders = format!("{dirs} folder{}", if *dirs == 1 { "" } else { "s" });
    if extensions.is_empty() {
        format!("{folders} searched")
    } else {
        format!("{folders} searched, with {}", extensions.join(", "))
    }
}

impl Program {
    /// Finds `name` the way the platform's shell would (see the module
    /// documentation).
    pub fn find(name: &str, search: &SearchEnv) -> Result<Program, ProgramError> {
        let platform = search.platform;
        let extensions = search.extensions();
        let found = |path: PathBuf| Program {
            kind: kind_of(&path, platform),
            path,
            system_root: search.system_root.clone(),
        };
        if has_separator(name, platform) {
            let path = if platform.is_absolute(OsStr::new(name)) {
                PathBuf::from(name)
            } else {
                search.cwd.join(name)
            };
            return candidates(&path, &extensions)
                .into_iter()
                .find(|candidate| is_program(candidate, platform))
                .map(found)
                .ok_or(ProgramError::NoSuchFile(path));
        }
        if search.path.is_none() && platform == Platform::Windows {
            return Err(ProgramError::NoPath);
        }
        let dirs = search.path_dirs();
        let first = dirs
            .iter()
            .flat_map(|dir| candidates(&dir.join(name), &extensions))
            .find(|candidate| is_program(candidate, platform));
        first.map(found).ok_or(ProgramError::NotInPath {
            dirs: dirs.len(),
            extensions,
        })
    }

    /// The command that starts this program with `args`: the program itself,
    /// or for a batch file `cmd.exe` with a command line quoted by
    /// [`cmd_line`]. The caller adds environment, stdio and wrappers.
    pub fn command<S: AsRef<str>>(
        &self,
        args: &[S],
    ) -> Result<std::process::Command, ProgramError> {
        match self.kind {
            Kind::Binary => {
                let mut command = std::process::Command::new(&self.path);
                command.args(args.iter().map(AsRef::as_ref));
                Ok(command)
            }
            Kind::Batch => self.batch_command(args),
        }
    }

    #[cfg(windows)]
    fn batch_command<S: AsRef<str>>(
        &self,
        args: &[S],
    ) -> Result<std::process::Command, ProgramError> {
        use std::os::windows::process::CommandExt;
        let line = cmd_line(&self.path, args)?;
        let mut command = std::process::Command::new(cmd_exe(self.system_root.as_deref()));
        command.raw_arg(line);
        Ok(command)
    }

    /// Batch files are found only by the Windows rules, which only a
    /// Windows build uses; elsewhere the file is started as it is.
    #[cfg(not(windows))]
    fn batch_command<S: AsRef<str>>(
        &self,
        args: &[S],
    ) -> Result<std::process::Command, ProgramError> {
        let mut command = std::process::Command::new(&self.path);
        command.args(args.iter().map(AsRef::as_ref));
        Ok(command)
    }
}

/// `path`, then (Windows) `path` + each extension, unless it already ends
/// in one that can be started.
fn candidates(path: &Path, extensions: &[String]) -> Vec<PathBuf> {
    let name = path.as_os_str().to_string_lossy().to_ascii_lowercase();
    if extensions.is_empty() || STARTABLE.iter().any(|ext| name.ends_with(ext)) {
        return vec![path.to_path_buf()];
    }
    extensions
        .iter()
        .map(|ext| {
            let mut candidate = path.as_os_str().to_owned();
            candidate.push(ext);
            PathBuf::from(candidate)
        })
        .collect()
}

fn kind_of(path: &Path, platform: Platform) -> Kind {
    let batch = platform == Platform::Windows
        && path
            .extension()
            .and_then(OsStr::to_str)
            .is_some_and(|ext| ext.eq_ignore_ascii_case("bat") || ext.eq_ignore_ascii_case("cmd"));
    if batch { Kind::Batch } else { Kind::Binary }
}

/// A file that can be started: on Unix a regular file with an executable
/// bit (symlinks followed), on Windows any file.
fn is_program(path: &Path, platform: Platform) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    if !metadata.is_file() {
        return false;
    }
    match platform {
        Platform::Windows => true,
        #[cfg(unix)]
        Platform::Unix => {
            use std::os::unix::fs::PermissionsExt;
            metadata.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        Platform::Unix => true,
    }
}

/// `%SystemRoot%\System32\cmd.exe`, as `std` starts batch files (by the
/// system folder, never a `cmd.exe` found on `PATH` or in the current folder).
#[cfg(windows)]
fn cmd_exe(system_root: Option<&OsStr>) -> PathBuf {
    let root = system_root
        .filter(|root| Platform::Windows.is_absolute(root))
        .unwrap_or(OsStr::new(r"C:\Windows"));
    Path::new(root).join("System32").join("cmd.exe")
}

/// The arguments of `cmd.exe` that run the batch file `script` with `args`,
/// each reaching the script (`%1`, `%*`) and the program it starts exactly as
/// given:
///
/// `/e:ON /v:OFF /d /c ""C:\path\npx.cmd" -y "two words" "say ""hi"""`
///
/// The rules are those of Rust's `std` for batch files since the fix of
/// CVE-2024-24576 (1.77), which starts `.bat` / `.cmd` files this way; they
/// are kept here so that they can be tested on every platform and the error
/// names the argument:
///
/// - `/d`: no AutoRun commands; `/e:ON` and `/v:OFF`: command extensions on
///   (the `%` escape below needs them) and delayed `!VAR!` expansion off.
/// - `/c` strips the outer pair of quotes; inside, each part is quoted when it
///   holds anything but ASCII letters, digits and `#$*+-./:?@\_` (or is empty,
///   or ends with `\`), so `&`, `|`, `<`, `>`, `^`, `(`, `)`, spaces and the
///   like are literal text to `cmd.exe`.
/// - `"` is doubled (`""`), with the backslashes before it doubled too: a
///   program reading its arguments the usual way (`CommandLineToArgvW`, the C
///   runtime, Node, Python, Rust) reads back one `"`.
/// - `%` becomes `%%cd:~,%`: `%cd:~,%` is an empty slice of the variable `CD`,
///   so `cmd.exe` prints one `%` and never sees `%VAR%`.
/// - A line break or NUL cannot be passed at all: the argument is refused.
///
/// The script path gets the same quoting (it cannot hold `"` or end with `\`).
pub fn cmd_line<S: AsRef<str>>(script: &Path, args: &[S]) -> Result<String, ProgramError> {
    let script_text = script.to_string_lossy();
    let bad_script = |reason| ProgramError::BadScriptPath {
        path: script.to_path_buf(),
        reason,
    };
    if script_text.contains('"') {
        return Err(bad_script("its path holds a `\"`"));
    }
    if script_text.ends_with('\\') {
        return Err(bad_script("its path ends with `\\`"));
    }
    let mut line = String::from("/e:ON /v:OFF /d /c \"");
    append_quoted(&mut line, &script_text, true);
    for (index, arg) in args.iter().enumerate() {
        let arg = arg.as_ref();
        if arg.contains(['\r', '\n', '\0']) {
            return Err(ProgramError::UnsafeArgument {
                path: script.to_path_buf(),
                index,
                arg: arg.to_owned(),
            });
        }
        line.push(' ');
        append_quoted(&mut line, arg, false);
    }
    line.push('"');
    Ok(line)
}

/// Appends `arg` for `cmd.exe` (see [`cmd_line`]).
fn append_quoted(line: &mut String, arg: &str, force_quotes: bool) {
    const UNQUOTED: &str = r"#$*+-./:?@\_";
    let quote = force_quotes
        || arg.is_empty()
        || arg.ends_with('\\')
        || arg.chars().any(|c| {
            (c.is_ascii() && !(c.is_ascii_alphanumeric() || UNQUOTED.contains(c))) || c.is_control()
        });
    if quote {
        line.push('"');
    }
    let mut backslashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // n backslashes before a quote become 2n, and the quote is doubled.
                line.extend(std::iter::repeat_n('\\', backslashes));
                line.push('"');
                backslashes = 0;
            }
            '%' => {
                line.push_str("%%cd:~,");
                backslashes = 0;
            }
            _ => backslashes = 0,
        }
        line.push(c);
    }
    if quote {
        // Backslashes before the closing quote are doubled, so that it stays a quote.
        line.extend(std::iter::repeat_n('\\', backslashes));
        line.push('"');
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "tests build and inspect their files with std::fs"
)]
mod tests {
    use super::*;

    /// A temporary folder with the named files (executable on Unix).
    fn folder(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        dir
    }

    fn windows(path: &[&Path], pathext: Option<&str>, cwd: &Path) -> SearchEnv {
        let path: Vec<String> = path.iter().map(|p| p.display().to_string()).collect();
        SearchEnv {
            platform: Platform::Windows,
            path: Some(path.join(";").into()),
            pathext: pathext.map(OsString::from),
            system_root: None,
            cwd: cwd.to_path_buf(),
        }
    }

    /// Only the tests that run on Unix use it (a dead function elsewhere).
    #[cfg(unix)]
    fn unix(path: &[&Path], cwd: &Path) -> SearchEnv {
        let path: Vec<String> = path.iter().map(|p| p.display().to_string()).collect();
        SearchEnv {
            platform: Platform::Unix,
            path: Some(path.join(":").into()),
            pathext: None,
            system_root: None,
            cwd: cwd.to_path_buf(),
        }
    }

    fn found(name: &str, search: &SearchEnv) -> (PathBuf, Kind) {
        let program = Program::find(name, search).unwrap();
        (program.path, program.kind)
    }

    #[test]
    fn windows_finds_launchers_in_pathext_order_folder_by_folder() {
        let first = folder(&["npx.cmd", "npx.exe", "node.exe"]);
        let later = folder(&["npx.exe", "uvx.bat"]);
        let dirs = [first.path(), later.path()];
        let cwd = Path::new("/");

        let default = windows(&dirs, None, cwd);
        assert_eq!(
            found("npx", &default),
            (first.path().join("npx.exe"), Kind::Binary),
            ".EXE comes before .CMD in the default PATHEXT"
        );
        let cmd_first = windows(&dirs, Some(".CMD;.EXE"), cwd);
        assert_eq!(
            found("npx", &cmd_first),
            (first.path().join("npx.cmd"), Kind::Batch)
        );
        // A folder is searched with every extension before the next folder.
        let swapped = windows(&[later.path(), first.path()], Some(".CMD;.EXE"), cwd);
        assert_eq!(
            found("npx", &swapped),
            (later.path().join("npx.exe"), Kind::Binary)
        );
        assert_eq!(
            found("uvx", &default),
            (later.path().join("uvx.bat"), Kind::Batch)
        );
        // Extensions that need a script host are never tried.
        let scripts = windows(&dirs, Some(".VBS;.JS;.CMD"), cwd);
        assert_eq!(scripts.extensions(), [".cmd"]);
        assert_eq!(
            Program::find("node", &scripts),
            Err(ProgramError::NotInPath {
                dirs: 2,
                extensions: vec![".cmd".to_owned()]
            })
        );
        assert_eq!(
            Program::find("node", &scripts).unwrap_err().to_string(),
            "not found in PATH (2 folders searched, with .cmd)"
        );
    }

    #[test]
    fn windows_takes_a_name_with_its_own_extension_as_it_is() {
        let dir = folder(&["npx.cmd", "npx.cmd.exe", "tool.v2.exe"]);
        let search = windows(&[dir.path()], None, Path::new("/"));
        assert_eq!(
            found("npx.cmd", &search),
            (dir.path().join("npx.cmd"), Kind::Batch)
        );
        assert_eq!(
            kind_of(Path::new(r"C:\bin\NPX.CMD"), Platform::Windows),
            Kind::Batch,
            "extensions compare case-insensitively"
        );
        assert_eq!(kind_of(Path::new("npx.cmd"), Platform::Unix), Kind::Binary);
        // A dot that is not a startable extension is part of the name.
        assert_eq!(
            found("tool.v2", &search),
            (dir.path().join("tool.v2.exe"), Kind::Binary)
        );
    }

    #[test]
    fn windows_resolves_paths_against_the_working_folder_without_path() {
        let cwd = folder(&["bin/server.cmd", "npx.cmd"]);
        let elsewhere = folder(&[]);
        let search = windows(&[elsewhere.path()], None, cwd.path());
        assert_eq!(
            found("bin/server", &search),
            (cwd.path().join("bin/server.cmd"), Kind::Batch)
        );
        assert_eq!(
            found("./bin/server.cmd", &search),
            (cwd.path().join("./bin/server.cmd"), Kind::Batch)
        );
        // A bare name is never looked for in the working folder.
        assert_eq!(
            Program::find("npx", &search),
            Err(ProgramError::NotInPath {
                dirs: 1,
                extensions: [".com", ".exe", ".bat", ".cmd"].map(str::to_owned).to_vec()
            })
        );
        assert_eq!(
            Program::find(r"C:\tools\npx", &search),
            Err(ProgramError::NoSuchFile(PathBuf::from(r"C:\tools\npx"))),
            "an absolute path is not joined to the working folder"
        );
    }

    #[test]
    fn windows_path_lists_keep_quoted_semicolons_and_need_path() {
        assert_eq!(
            split_path_list(OsStr::new(r#"C:\a;;"C:\b;c";C:\d"#), Platform::Windows),
            [r"C:\a", r"C:\b;c", r"C:\d"].map(PathBuf::from)
        );
        let mut search = windows(&[], None, Path::new("/"));
        search.path = None;
        assert_eq!(Program::find("npx", &search), Err(ProgramError::NoPath));
        // A server's `env` may set the PATH its program is found in, in any case.
        let dir = folder(&["npx.cmd"]);
        let overridden =
            search.with_overrides(&[("Path".to_owned(), dir.path().display().to_string())]);
        assert_eq!(found("npx", &overridden).0, dir.path().join("npx.cmd"));
    }

    /// Unix `PATH`s cannot hold the temporary folders of a Windows machine.
    #[cfg(unix)]
    #[test]
    fn unix_searches_path_for_executables_and_resolves_relative_paths() {
        let first = folder(&["tool"]);
        let second = folder(&["tool", "other", "bin/local"]);
        use std::os::unix::fs::PermissionsExt;
        let plain = std::fs::Permissions::from_mode(0o644);
        std::fs::set_permissions(first.path().join("tool"), plain).unwrap();
        let search = unix(&[first.path(), second.path()], second.path());
        assert_eq!(
            found("tool", &search),
            (second.path().join("tool"), Kind::Binary),
            "a file without an executable bit is skipped"
        );
        assert_eq!(
            found("bin/local", &search).0,
            second.path().join("bin/local")
        );
        assert_eq!(
            Program::find("missing", &search).unwrap_err().to_string(),
            "not found in PATH (2 folders searched)"
        );
    }

    #[test]
    fn unix_path_lists_skip_empty_entries_and_have_a_default() {
        assert_eq!(
            split_path_list(OsStr::new("/a::/b:"), Platform::Unix),
            [PathBuf::from("/a"), PathBuf::from("/b")],
            "empty entries (the current folder) are skipped"
        );
        let unset = SearchEnv {
            platform: Platform::Unix,
            path: None,
            pathext: Some(".CMD".into()),
            system_root: None,
            cwd: PathBuf::from("/"),
        };
        assert_eq!(
            unset.path_dirs(),
            [PathBuf::from("/bin"), PathBuf::from("/usr/bin")]
        );
        assert!(
            unset.extensions().is_empty(),
            "PATHEXT means nothing on Unix"
        );
    }

    #[test]
    fn cmd_line_quotes_what_cmd_exe_would_interpret() {
        let script = Path::new(r"C:\Program Files\nodejs\npx.cmd");
        let line = |args: &[&str]| cmd_line(script, args).unwrap();
        assert_eq!(
            line(&["-y", "@scope/server-x", r"C:\data\x.db"]),
            r#"/e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" -y @scope/server-x C:\data\x.db""#
        );
        assert_eq!(
            line(&["two words", "", "say \"hi\""]),
            r#"/e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" "two words" "" "say ""hi"""""#
        );
        assert_eq!(
            line(&[
                "a&b",
                "x|y",
                "<in>",
                "^caret",
                "(p)",
                "semi;colon",
                "eq=1",
                "bang!"
            ]),
            r#"/e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" "a&b" "x|y" "<in>" "^caret" "(p)" "semi;colon" "eq=1" "bang!"""#
        );
        assert_eq!(
            line(&["%PATH%", "100%"]),
            r#"/e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" "%%cd:~,%PATH%%cd:~,%" "100%%cd:~,%"""#
        );
        // Backslashes: literal unless they precede a quote, doubled then.
        assert_eq!(
            line(&[r"C:\dir\", r#"a\"b"#, r"\\server\share"]),
            r#"/e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" "C:\dir\\" "a\\""b" \\server\share""#
        );
        assert_eq!(
            line(&["é-ü"]),
            r#"/e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd" é-ü""#
        );
    }

    #[test]
    fn cmd_line_refuses_what_cmd_exe_cannot_pass() {
        let script = Path::new(r"C:\bin\x.cmd");
        assert_eq!(
            cmd_line(script, &["ok", "two\nlines"]),
            Err(ProgramError::UnsafeArgument {
                path: script.to_path_buf(),
                index: 1,
                arg: "two\nlines".to_owned(),
            })
        );
        assert!(cmd_line(script, &["a\rb"]).is_err());
        assert!(cmd_line(script, &["nul\0"]).is_err());
        assert!(matches!(
            cmd_line(Path::new(r"C:\bin\"), &["x"]),
            Err(ProgramError::BadScriptPath { .. })
        ));
        assert_eq!(
            cmd_line(Path::new(r"C:\50%\x.cmd"), &[] as &[&str]).unwrap(),
            r#"/e:ON /v:OFF /d /c ""C:\50%%cd:~,%\x.cmd"""#
        );
    }

    #[cfg(unix)]
    #[test]
    fn commands_start_binaries_directly() {
        let dir = folder(&["server"]);
        let program = Program::find("server", &unix(&[dir.path()], dir.path())).unwrap();
        let command = program.command(&["--flag", "two words"]).unwrap();
        assert_eq!(command.get_program(), dir.path().join("server"));
        let args: Vec<&OsStr> = command.get_args().collect();
        assert_eq!(args, [OsStr::new("--flag"), OsStr::new("two words")]);
    }
}
