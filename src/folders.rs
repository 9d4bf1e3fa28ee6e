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
    /// The variable each folder was found from (`XDG_CONFIG_HOME`, `HOME`,
    /// `APPDATA`, ...), for `skillserve config`.
    pub config_from: Option<&'static str>,
    pub data_from: Option<&'static str>,
}

impl Folders {
    /// The folders for this platform, given the home directory (and the
    /// variable it came from) and a lookup of environment variables.
    pub fn of<'a>(
        home: Option<(&Path, &'static str)>,
        var: impl Fn(&str) -> Option<&'a OsStr>,
    ) -> Folders {
        Folders::for_platform(Platform::CURRENT, home, var)
    }

    fn for_platform<'a>(
        platform: Platform,
        home: Option<(&Path, &'static str)>,
        var: impl Fn(&str) -> Option<&'a OsStr>,
    ) -> Folders {
        // The variable if it holds an absolute path of this platform, else
        // the home directory joined with `below`.
        let pick = |name: &'static str, below: &str| match var(name)
            .filter(|value| platform.is_absolute(value))
        {
            Some(dir) => Some((PathBuf::from(dir), name)),
            None => home.map(|(home, from)| (home.join(below), from)),
        };
        let (config, data) = if platform == Platform::Windows {
            (
                pick("APPDATA", "AppData/Roaming"),
                pick("LOCALAPPDATA", "AppData/Local"),
            )
        } else {
            (
                pick("XDG_CONFIG_HOME", ".config"),
                pick("XDG_DATA_HOME", ".local/share"),
            )
        };
        Folders {
            config: config.as_ref().map(|(dir, _)| dir.join(APP)),
            data: data.as_ref().map(|(dir, _)| dir.join(APP)),
            config_from: config.map(|(_, from)| from),
            data_from: data.map(|(_, from)| from),
        }
    }
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
        Folders::for_platform(platform, home.map(|h| (Path::new(h), "HOME")), var)
    }

    #[test]
    fn unix_folders_follow_xdg_with_home_defaults() {
        let found = folders(Platform::Unix, Some("/home/u"), &[]);
        assert_eq!(found.config, Some("/home/u/.config/skillserve".into()));
        assert_eq!(found.data, Some("/home/u/.local/share/skillserve".into()));
        assert_eq!(
            (found.config_from, found.data_from),
            (Some("HOME"), Some("HOME"))
        );
        let found = folders(
            Platform::Unix,
            Some("/home/u"),
            &[("XDG_CONFIG_HOME", "/c"), ("XDG_DATA_HOME", "relative")],
        );
        assert_eq!(found.config, Some("/c/skillserve".into()));
        assert_eq!(found.data, Some("/home/u/.local/share/skillserve".into()));
        assert_eq!(
            (found.config_from, found.data_from),
            (Some("XDG_CONFIG_HOME"), Some("HOME"))
        );
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
