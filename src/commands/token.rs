//! `skillserve token new LABEL` (behaviour.md, "Bearer tokens"): a new
//! token added to the token file ([`crate::tokens`]), shown once.

use std::io::{self, Write};
use std::path::Path;

use crate::exit_codes::ExitCode;
use crate::tokens;

/// Adds a token labelled `label` (`admin`: one that may also change the
/// catalog) to the token file at `path`: the token alone on `out` (for
/// scripts), what was done and how clients use it on `err`.
pub fn token_new(
    path: &Path,
    label: &str,
    admin: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<ExitCode> {
    match tokens::add(path, label, admin) {
        Ok(token) => {
            writeln!(out, "{token}")?;
            out.flush()?;
            writeln!(
                err,
                "Added {}token `{label}` to {} (only its SHA-256 is kept: copy the token now, it is not shown again).\nClients send it as `Authorization: Bearer <token>`; delete its line to revoke it.",
                if admin { "admin " } else { "" },
                path.display()
            )?;
            Ok(ExitCode::Success)
        }
        Err(error) => {
            writeln!(err, "skillserve: {error}")?;
            Ok(ExitCode::Failure)
        }
    }
}
