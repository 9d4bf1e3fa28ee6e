//! Exit codes of the `skillserve` binary.

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Served until the client left or a signal arrived; a command succeeded.
    Success,
    /// `check` found errors, `show` could not load the skill, the server
    /// failed, or a command such as `add` stopped (nothing was changed).
    Failure,
    /// Bad flags or an unusable configuration; nothing was started.
    Usage,
    /// `update --check`: updates are available (nothing was changed).
    UpdatesAvailable,
    /// `sync --check`: the store does not hold exactly what the locks pin
    /// (nothing was changed).
    StoreDiffers,
}

impl ExitCode {
    /// The process's exit status. The two `--check` outcomes share 10: a
    /// script asks one command at a time whether something is to do.
    pub fn code(self) -> i32 {
        match self {
            ExitCode::Success => 0,
            ExitCode::Failure => 1,
            ExitCode::Usage => 2,
            ExitCode::UpdatesAvailable | ExitCode::StoreDiffers => 10,
        }
    }
}
