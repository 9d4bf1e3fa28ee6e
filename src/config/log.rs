//! Log filters as `--log-level`, `SKILLSERVE_LOG` and `log_level` give
//! them (behaviour.md §7): levels and `target=level` pairs, checked before
//! `tracing` reads them. Shared by the command line (`cli`), the merge
//! (`settings`) and the file (`file`).

use tracing_subscriber::filter::{LevelFilter, Targets};

/// The log levels `--log-level`, `SKILLSERVE_LOG` and `log_level` accept.
pub const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// Why a log filter is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterError {
    /// A word that is not a level where a level belongs.
    NotALevel,
    /// A directive that is no `level` or `target=level`; why.
    Invalid(&'static str),
}

/// One of the levels `--log-level`, `SKILLSERVE_LOG` and `log_level` accept, in any case:
/// off, error, warn, info, debug, trace.
pub fn log_level(word: &str) -> Option<LevelFilter> {
    Some(match word.trim().to_ascii_lowercase().as_str() {
        "off" => LevelFilter::OFF,
        "error" => LevelFilter::ERROR,
        "warn" => LevelFilter::WARN,
        "info" => LevelFilter::INFO,
        "debug" => LevelFilter::DEBUG,
        "trace" => LevelFilter::TRACE,
        _ => return None,
    })
}

/// A log filter: levels and `target=level` pairs separated by commas
/// (`warn,skillserve=debug`), spaces around each ignored. A bare level applies
/// to every target; an event takes the level of the longest target that its
/// own target starts with.
///
/// A word that is not a level where a level belongs is refused first:
/// `tracing` would read `--log-level verbose` as "only the target `verbose`"
/// and silently log nothing. Then a target must start with a letter, digit,
/// `_`, `-` or `:` and hold no space; span and field filters
/// (`target[span{field}]=level`) are refused rather than read as a target
/// that matches nothing.
pub fn log_filter(filter: &str) -> Result<Targets, FilterError> {
    let mut directives = Vec::new();
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let (target, word) = match directive.rsplit_once('=') {
            Some((target, word)) => (Some(target.trim()), word),
            None => (None, directive),
        };
        let level = log_level(word).ok_or(FilterError::NotALevel)?;
        directives.push((target, level));
    }
    let mut targets = Targets::new();
    for (target, level) in directives {
        targets = match target {
            None => targets.with_default(level),
            Some(target) if target.contains(['[', ']', '{', '}']) => {
                return Err(FilterError::Invalid(
                    "span and field filters are not supported; use `level` or `target=level`",
                ));
            }
            Some(target)
                if target.starts_with(|c: char| c.is_alphanumeric() || "_-:".contains(c))
                    && !target.contains(|c: char| c.is_whitespace() || c == '=') =>
            {
                targets.with_target(target, level)
            }
            Some(_) => return Err(FilterError::Invalid("invalid filter directive")),
        };
    }
    Ok(targets)
}
