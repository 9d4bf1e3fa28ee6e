//! The user's own folders for skillserve's files: the config folder (settings,
//! approvals, the sources lock) and the data folder (the store of installed
//! skills). Worked out from the environment captured at start-up
//! (`config::Env`), never from the process, so tests can point them anywhere.
//!
//! | platform | config folder | data folder |
//! |---|---|---|
//! | Linux, macOS, other Unix | `$XDG_CONFIG_HOME/skillserve`, else `~/.config/skillserve` | `$XDG_DATA_HOME/skillserve`, else `~/.local/share/skillserve` |
//! | Windows | `%APPDATA%\skillserve` | `%LOCALAPPDATA%\skillserve` |
//!
//! macOS uses the XDG layout, as command-line tools there commonly do: users
//! look for dotfiles in `~/.config`, not in `~/Library/Application Support`.
//! A relative `XDG_*` value (or, on Windows, an `APPDATA` that is not an
//! absolute Windows path) is ignored, as the XDG specification asks.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::platform::Platform;

/// The folder name under the platform's config and data folders.
const APP: &str = "skillserve";

/// The user's config and data folders for skillserve; `None` when the
/// environment gives no way to find one (no home directory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folders {
    pub config: Option<PathBuf>,
    pub data: Option<PathBuf>,
}

impl Folders {
    /// The folders for this platform, given the home directory and a lookup
    /// of environment variables.
    pub fn of<'a>(home: Option<&Path>, var: impl Fn(&str) -> Option<&'a OsStr>) -> Folders {
        Folders::for_platform(Platform::CURRENT, home, var)
    }

    fn for_platform<'a>(
        platform: Platform,
        home: Option<&Path>,
        var: impl Fn(&str) -> Option<&'a OsStr>,
    ) -> Folders {
        let absolute = |name: &str| {
            var(name)
                .filter(|value| platform.is_absolute(value))
                .map(PathBuf::from)
        };
        let (config, data) = if platform == Platform::Windows {
            (
                absolute("APPDATA").or_else(|| home.map(|h| h.join("AppData/Roaming"))),
                absolute("LOCALAPPDATA").or_else(|| home.map(|h| h.join("AppData/Local"))),
            )
        } else {
            (
                xdg(absolute("XDG_CONFIG_HOME"), home, ".config"),
                xdg(absolute("XDG_DATA_HOME"), home, ".local/share"),
            )
        };
        Folders {
            config: config.map(|dir| dir.join(APP)),
            data: data.map(|dir| dir.join(APP)),
        }
    }
}

fn xdg(set: Option<PathBuf>, home: Option<&Path>, default: &str) -> Option<PathBuf> {
    set.or_else(|| home.map(|home| home.join(default)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folders(platform: Platform, home: Option<&str>, vars: &[(&str, &str)]) -> Folders {
        let var = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, value)| OsStr::new(*value))
        };
        Folders::for_platform(platform, home.map(Path::new), var)
    }

    #[test]
    fn unix_folders_follow_xdg_with_home_defaults() {
        let found = folders(Platform::Unix, Some("/home/u"), &[]);
        assert_eq!(found.config, Some("/home/u/.config/skillserve".into()));
        assert_eq!(found.data, Some("/home/u/.local/share/skillserve".into()));
        let found = folders(
            Platform::Unix,
            Some("/home/u"),
            &[("XDG_CONFIG_HOME", "/c"), ("XDG_DATA_HOME", "relative")],
        );
        assert_eq!(found.config, Some("/c/skillserve".into()));
        assert_eq!(found.data, Some("/home/u/.local/share/skillserve".into()));
    }

    #[test]
    fn no_home_and_no_variables_means_no_folders() {
        assert_eq!(folders(Platform::Unix, None, &[]), Folders::default());
        assert_eq!(folders(Platform::Windows, None, &[]), Folders::default());
    }

    #[test]
    fn windows_folders_are_appdata_and_localappdata() {
        let found = folders(
            Platform::Windows,
            None,
            &[
                ("APPDATA", r"C:\Users\u\AppData\Roaming"),
                ("LOCALAPPDATA", r"C:\Users\u\AppData\Local"),
            ],
        );
        // Joined with this platform's separator: `\` on Windows.
        let under = |dir: &str| Some(PathBuf::from(dir).join("skillserve"));
        assert_eq!(found.config, under(r"C:\Users\u\AppData\Roaming"));
        assert_eq!(found.data, under(r"C:\Users\u\AppData\Local"));
        let git_bash = folders(Platform::Windows, None, &[("APPDATA", "/c/Users/u")]);
        assert_eq!(git_bash.config, None);
    }
}
