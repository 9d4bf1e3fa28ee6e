//! Paths as people write them in flags, variables and `config.toml`: a
//! leading `~` and `$VAR` / `${VAR}` expanded (MCP clients start servers
//! without a shell), then made absolute. Shared by the command line
//! (`cli`), the merge (`settings`) and the file (`file`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Env, absolute};

/// Why a path given in a flag, a variable or `config.toml` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{what} `{value}`: environment variable {var} is not set")]
    UnsetVariable {
        what: String,
        value: String,
        var: String,
    },
    #[error("{what} is empty; give a folder")]
    EmptyPath { what: String },
    #[error("{what} `{value}` starts with `~`, but there is no home folder: {why}")]
    NoHome {
        what: String,
        value: String,
        /// Why, e.g. "HOME is not set".
        why: String,
    },
}

/// Expands a leading `~` and `$VAR` / `${VAR}` (MCP clients start servers
/// without a shell), then makes the path absolute against `base` (the
/// current directory for flags, the settings file's folder for its paths).
pub fn expand_path(what: &str, value: &str, env: &Env, base: &Path) -> Result<PathBuf, PathError> {
    // An empty path would silently mean the current directory, which for a
    // server started by a client is often `/` or the home directory.
    if value.trim().is_empty() {
        return Err(PathError::EmptyPath {
            what: what.to_owned(),
        });
    }
    if value.starts_with('~') && env.home.dir.is_none() {
        return Err(PathError::NoHome {
            what: what.to_owned(),
            value: value.to_owned(),
            why: env.home.why_none(),
        });
    }
    let home = || {
        env.home
            .dir
            .as_ref()
            .map(|h| h.to_string_lossy().into_owned())
    };
    let lookup = |var: &str| env.vars.lookup(var).map(Some).ok_or(());
    let expanded = shellexpand::full_with_context(value, home, lookup).map_err(|e| {
        PathError::UnsetVariable {
            what: what.to_owned(),
            value: value.to_owned(),
            var: e.var_name,
        }
    })?;
    if expanded.trim().is_empty() {
        return Err(PathError::EmptyPath {
            what: what.to_owned(),
        });
    }
    Ok(absolute(OsStr::new(expanded.as_ref()).as_ref(), base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_errors_name_the_value() {
        let err = expand_path(
            "--skills-dir",
            "$SKILLSERVE_TEST_SURELY_UNSET/x",
            &Env::for_tests(),
            Path::new("/"),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--skills-dir `$SKILLSERVE_TEST_SURELY_UNSET/x`: environment variable SKILLSERVE_TEST_SURELY_UNSET is not set"
        );
        assert_eq!(
            expand_path("x", "rel", &Env::for_tests(), Path::new("/cfg")).unwrap(),
            Path::new("/cfg/rel")
        );
    }
}
