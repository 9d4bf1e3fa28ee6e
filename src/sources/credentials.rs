//! The secrets of a private index, read when a command fetches and held
//! only as long as the fetch (behaviour.md, "Private sources"): the values
//! of the `--header` templates the lock records (`$VAR` from the
//! environment) and, with `--netrc`, the host's login and password from
//! `~/.netrc` (or `$NETRC`) as HTTP Basic authentication. They are sent
//! only to the index's own origin (scheme, host and port: a redirect or an
//! artifact elsewhere gets none, as curl does) and appear in no error, log,
//! plan or lock: errors name the variable, the header or the file, never a
//! value. git sources need none of this: the user's `git` uses its own
//! credential helpers and SSH agent.

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::config::Vars;
use crate::lock::Access;

use super::SourceError;

/// A netrc larger than this is refused (one is a few hundred bytes).
const MAX_NETRC_BYTES: u64 = 1024 * 1024;

/// Headers with their secret values, for one origin.
#[derive(Clone, Default)]
pub struct Credentials {
    /// `scheme://host[:port]`, lowercase: where the headers may go.
    origin: String,
    headers: Vec<(String, String)>,
}

// Never prints a value: a `{:?}` in a log line must not leak a token.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Credentials")
            .field("origin", &self.origin)
            .field("headers", &names)
            .finish()
    }
}

impl Credentials {
    /// What `access` asks for the index at `url`, its secrets read now from
    /// `vars` and the netrc file (`$NETRC`, else `home/.netrc`).
    pub fn read(
        access: &Access,
        url: &str,
        vars: &Vars,
        home: Option<&Path>,
    ) -> Result<Credentials, SourceError> {
        let mut out = Credentials {
            origin: origin(url).unwrap_or_default(),
            headers: Vec::new(),
        };
        for header in &access.headers {
            let value = header
                .expand(|name| vars.get(name).and_then(|v| v.to_str()).map(str::to_owned))
                .map_err(|missing| {
                    SourceError::Usage(format!(
                        "header `{}` of {url} names ${missing}, which is not set (or not UTF-8): set it in the environment of this command (of the server, for auto_update); its value is read when fetching and never stored",
                        header.name
                    ))
                })?;
            if !value
                .bytes()
                .all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic())
            {
                return Err(SourceError::Usage(format!(
                    "header `{}` of {url}: the value of its variables holds a character a header cannot carry (a line break, a control character or one outside ASCII)",
                    header.name
                )));
            }
            out.headers.push((header.name.clone(), value));
        }
        if access.netrc {
            let path = netrc_path(vars, home).ok_or_else(|| {
                SourceError::Usage(
                    "--netrc: there is no home folder to find .netrc in; set NETRC to the file"
                        .into(),
                )
            })?;
            let host = host(url).unwrap_or_default();
            let (login, password) = netrc_entry(&path, &host)?;
            let basic = STANDARD.encode(format!("{login}:{password}"));
            out.headers
                .push(("Authorization".into(), format!("Basic {basic}")));
        }
        Ok(out)
    }

    /// The headers to send with a request for `url`: none unless it is on
    /// the origin they were given for.
    pub fn for_url(&self, url: &str) -> &[(String, String)] {
        if !self.headers.is_empty() && origin(url).as_deref() == Some(self.origin.as_str()) {
            &self.headers
        } else {
            &[]
        }
    }
}

/// `scheme://host[:port]` of `url`, lowercase, without user information
/// or a default port.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?.to_ascii_lowercase();
    let scheme = scheme.to_ascii_lowercase();
    let host_port = match (scheme.as_str(), host_port.rsplit_once(':')) {
        ("https", Some((host, "443"))) | ("http", Some((host, "80"))) => host.to_owned(),
        _ => host_port,
    };
    Some(format!("{scheme}://{host_port}"))
}

/// The host of `url` (no port, no brackets), lowercase.
fn host(url: &str) -> Option<String> {
    let origin = origin(url)?;
    let host_port = origin.split_once("://")?.1;
    let host = match host_port.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next()?,
        None => host_port.split(':').next()?,
    };
    Some(host.to_owned())
}

/// `$NETRC`, else `~/.netrc` (`~/_netrc` on Windows, as curl reads it,
/// when only that one exists).
fn netrc_path(vars: &Vars, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = vars.get("NETRC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let home = home?;
    let dotted = home.join(".netrc");
    if cfg!(windows) && !dotted.exists() {
        return Some(home.join("_netrc"));
    }
    Some(dotted)
}

/// The login and password of `host`'s `machine` entry (else the `default`
/// entry) of the netrc file at `path`, which only its owner may read.
fn netrc_entry(path: &Path, host: &str) -> Result<(String, String), SourceError> {
    let shown = path.display();
    check_private(path)?;
    let text = crate::disk::read_text(path, MAX_NETRC_BYTES)
        .map_err(|err| SourceError::Usage(format!("--netrc: cannot read {shown}: {err}")))?;
    parse_netrc(&text, host).ok_or_else(|| {
        SourceError::Usage(format!(
            "--netrc: {shown} has no `machine {host}` entry (nor a `default` one) with a login and a password"
        ))
    })
}

/// A netrc readable or writable by others is refused, as ssh and ftp do:
/// anyone who can read it has the password.
#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), SourceError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|err| {
            SourceError::Usage(format!("--netrc: cannot read {}: {err}", path.display()))
        })?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(SourceError::Usage(format!(
            "--netrc: {} may be read or changed by others (mode {:o}), so its passwords are not used: run `chmod 600 {}` (ssh and ftp refuse such a file too)",
            path.display(),
            mode & 0o777,
            path.display()
        )));
    }
    Ok(())
}

/// On Windows a file's readers are set by its folder's access list (a
/// profile folder is its owner's): nothing to check by mode.
#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<(), SourceError> {
    Ok(())
}

/// The login and password of `host` in a netrc text: tokens separated by
/// white space, `machine NAME` (or `default`) followed by `login`,
/// `password`, `account`; `macdef NAME` runs to the next empty line.
fn parse_netrc(text: &str, host: &str) -> Option<(String, String)> {
    let mut found: Option<(String, String)> = None;
    let mut default: Option<(String, String)> = None;
    // The entry being read: whether it is the host's (or the default), and
    // what it holds so far.
    let mut current: Option<(bool, bool, Option<String>, Option<String>)> = None;
    let mut finish = |entry: Option<(bool, bool, Option<String>, Option<String>)>| {
        if let Some((is_host, is_default, Some(login), Some(password))) = entry {
            if is_host && found.is_none() {
                found = Some((login.clone(), password.clone()));
            }
            if is_default && default.is_none() {
                default = Some((login, password));
            }
        }
    };
    let mut lines = text.lines();
    let mut tokens: Vec<String> = Vec::new();
    // Tokens, with macro bodies (up to an empty line) skipped.
    while let Some(line) = lines.next() {
        let mut words = line.split_whitespace();
        while let Some(word) = words.next() {
            if word == "macdef" {
                let _ = words.next();
                for body in lines.by_ref() {
                    if body.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            tokens.push(word.to_owned());
        }
    }
    let mut tokens = tokens.into_iter();
    while let Some(token) = tokens.next() {
        match token.as_str() {
            "machine" => {
                finish(current.take());
                let name = tokens.next().unwrap_or_default();
                current = Some((name.eq_ignore_ascii_case(host), false, None, None));
            }
            "default" => {
                finish(current.take());
                current = Some((false, true, None, None));
            }
            "login" => {
                if let Some(entry) = current.as_mut() {
                    entry.2 = tokens.next();
                }
            }
            "password" => {
                if let Some(entry) = current.as_mut() {
                    entry.3 = tokens.next();
                }
            }
            "account" => {
                let _ = tokens.next();
            }
            _ => {}
        }
    }
    finish(current.take());
    found.or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netrc_gives_the_host_s_entry_else_the_default() {
        let text = "machine other.example login o password op\n\
                    macdef init\ncd /\nquit\n\n\
                    machine skills.example.com\n  login ann\n  password s3cret account x\n\
                    default login anon password guest\n";
        assert_eq!(
            parse_netrc(text, "skills.example.com"),
            Some(("ann".into(), "s3cret".into()))
        );
        assert_eq!(
            parse_netrc(text, "elsewhere.example"),
            Some(("anon".into(), "guest".into()))
        );
        assert_eq!(parse_netrc("machine a login x\n", "a"), None);
    }

    #[test]
    fn headers_go_only_to_the_index_s_origin() {
        let credentials = Credentials {
            origin: origin("https://Skills.Example.com:443/.well-known/agent-skills/index.json")
                .unwrap(),
            headers: vec![("Authorization".into(), "Bearer t".into())],
        };
        assert_eq!(credentials.origin, "https://skills.example.com");
        assert_eq!(
            credentials
                .for_url("https://skills.example.com/a.tar.gz")
                .len(),
            1
        );
        assert!(
            credentials
                .for_url("https://cdn.example.com/a.tar.gz")
                .is_empty()
        );
        assert!(
            credentials
                .for_url("http://skills.example.com/a.tar.gz")
                .is_empty()
        );
        assert!(
            credentials
                .for_url("https://skills.example.com:8443/a")
                .is_empty()
        );
        assert_eq!(
            host("http://127.0.0.1:8080/x").as_deref(),
            Some("127.0.0.1")
        );
        assert!(!format!("{credentials:?}").contains("Bearer t"));
    }
}
