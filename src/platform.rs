//! The platform whose rules apply: how paths and environment variables are
//! read on Unix and on Windows.
//!
//! Code that interprets the environment takes a [`Platform`] instead of
//! asking `cfg!(windows)`, so that the Windows rules (a `HOME` from Git Bash,
//! `PATHEXT`, `Path` spelled in any case) are tested on every platform;
//! production passes [`Platform::CURRENT`].

use std::ffi::OsStr;

/// Which platform's rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    Unix,
    Windows,
}

impl Platform {
    /// The platform this binary runs on.
    pub const CURRENT: Platform = if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Unix
    };

    /// Whether `path` is absolute on this platform, judged by its text alone:
    /// on Windows a drive letter with a separator (`C:\`, `C:/`) or a UNC or
    /// device path (`\\server\share`, `\\?\C:\`); on Unix a leading `/`.
    /// `/c/Users/me` (the form Git Bash, MSYS and Cygwin use) is not an
    /// absolute Windows path.
    pub fn is_absolute(self, path: &OsStr) -> bool {
        let bytes = path.as_encoded_bytes();
        match self {
            Platform::Unix => bytes.first() == Some(&b'/'),
            Platform::Windows => match bytes {
                [drive, b':', sep, ..] => drive.is_ascii_alphabetic() && is_separator(*sep),
                [a, b, rest @ ..] if is_separator(*a) && is_separator(*b) => {
                    // `\\server\share` (or `\\?\…`, `\\.\…`): a host and more.
                    rest.iter()
                        .position(|&c| is_separator(c))
                        .is_some_and(|i| i > 0)
                }
                _ => false,
            },
        }
    }

    /// Whether environment variable names `a` and `b` are the same variable:
    /// on Windows they compare case-insensitively (`Path` is `PATH`).
    pub fn same_variable(self, a: &str, b: &str) -> bool {
        match self {
            Platform::Windows => a.eq_ignore_ascii_case(b),
            Platform::Unix => a == b,
        }
    }
}

fn is_separator(byte: u8) -> bool {
    byte == b'/' || byte == b'\\'
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn absolute_paths_by_platform() {
        let windows = |p: &str| Platform::Windows.is_absolute(OsStr::new(p));
        assert!(windows(r"C:\Users\me") && windows("c:/Users/me"));
        assert!(windows(r"\\server\share\x") && windows(r"\\?\C:\x"));
        for relative in [
            "/c/Users/me",
            r"\Users\me",
            "C:Users",
            "relative",
            r"\\",
            "",
        ] {
            assert!(!windows(relative), "{relative}");
        }
        let unix = |p: &str| Platform::Unix.is_absolute(OsStr::new(p));
        assert!(unix("/home/me") && !unix("home/me") && !unix(r"C:\Users"));
        // The rule agrees with the platform's own.
        for sample in [
            "/c/Users/me",
            r"C:\x",
            "C:/x",
            r"\\host\share",
            "rel",
            "/abs",
        ] {
            assert_eq!(
                Platform::CURRENT.is_absolute(OsStr::new(sample)),
                Path::new(sample).is_absolute(),
                "{sample}"
            );
        }
    }

    #[test]
    fn variable_names_compare_by_platform() {
        assert!(Platform::Windows.same_variable("Path", "PATH"));
        assert!(!Platform::Unix.same_variable("Path", "PATH"));
        assert!(Platform::Unix.same_variable("PATH", "PATH"));
    }
}
