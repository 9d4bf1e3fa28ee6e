//! Exit codes of the `skillserve` binary.

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Served until the client left or a signal arrived; a command succeeded.
    Success = 0,
    /// `check` found errors, `show` could not load the skill, the server
    /// failed, or a command such as `add` stopped (nothing was changed).
    Failure = 1,
    /// Bad flags or an unusable configuration; nothing was started.
    Usage = 2,
    /// `update --check`: updates are available (nothing was changed).
    UpdatesAvailable = 10,
}

impl ExitCode {
    pub fn code(self) -> i32 {
        self as i32
    }
}
