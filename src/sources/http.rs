//! Downloads for index sources: `GET` with a size cap, over HTTPS (plain
//! `http://` only to this machine), following redirects by hand so that
//! every hop obeys the same rule; and resolving an index's relative URLs.
//!
//! No server can hold a download for long: connecting, the answer's head
//! and every read of its body must each come within [`STALL`] (30 s), and
//! the whole download within four times that (2 min), so a server that
//! stalls or drips a byte at a time fails in minutes, named. Tests scale the
//! bounds down with `SKILLSERVE_HTTP_STALL_SECS` (seconds, fractions allowed).

use std::time::Duration;

use super::SourceError;
use super::credentials::Credentials;

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 10;
/// How long connecting, the answer's head, or any one read of its body may
/// take.
const STALL: Duration = Duration::from_secs(30);
/// How many [`STALL`]s one download (with its redirects) may take in all.
const TOTAL_STALLS: u32 = 4;
/// Overrides [`STALL`] (seconds), for tests of stalling servers.
const STALL_VARIABLE: &str = "SKILLSERVE_HTTP_STALL_SECS";

/// The bounds in force: [`STALL`], unless [`STALL_VARIABLE`] says otherwise
/// (git's fetches are bound by it too).
pub(super) fn stall() -> Duration {
    std::env::var(STALL_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .map_or(STALL, Duration::from_secs_f64)
}

/// A blocking HTTP client with skillserve's settings. The proxy comes from
/// the usual variables (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`).
pub struct Client {
    agent: ureq::Agent,
    stall: Duration,
    /// A private index's headers, sent to its origin only.
    credentials: Credentials,
}

impl Default for Client {
    fn default() -> Client {
        let stall = stall();
        let config = ureq::Agent::config_builder()
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_connect(Some(stall))
            .timeout_send_request(Some(stall))
            .timeout_recv_response(Some(stall))
            .timeout_per_read(Some(stall))
            .timeout_global(Some(stall * TOTAL_STALLS))
            .user_agent(concat!("skillserve/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent: ureq::Agent::new_with_config(config),
            stall,
            credentials: Credentials::default(),
        }
    }
}

impl Client {
    /// A client that sends `credentials` to their origin (each hop of a
    /// redirect is judged on its own).
    pub fn with_credentials(credentials: Credentials) -> Client {
        Client {
            credentials,
            ..Client::default()
        }
    }

    /// The body of `url` (after redirects), at most `limit` bytes.
    pub fn get(&self, url: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        self.get_if_present(url, limit)?
            .ok_or_else(|| SourceError::Http {
                url: url.to_owned(),
                message: "the server answered 404 Not Found".into(),
            })
    }

    /// [`get`](Client::get), but `None` when the server answers 404 (or
    /// 410): the file is not there.
    pub fn get_if_present(&self, url: &str, limit: u64) -> Result<Option<Vec<u8>>, SourceError> {
        let mut current = url.to_owned();
        for _ in 0..=MAX_REDIRECTS {
            check_scheme(&current)?;
            let failed = |message: String| SourceError::Http {
                url: current.clone(),
                message,
            };
            let mut request = self.agent.get(&current);
            for (name, value) in self.credentials.for_url(&current) {
                request = request.header(name, value);
            }
            let mut response = request
                .call()
                .map_err(|err| failed(self.describe(&current, err)))?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| failed(format!("{status} without a Location")))?;
                current = resolve(&current, location);
                continue;
            }
            if status == 404 || status == 410 {
                return Ok(None);
            }
            if status == 401 || status == 403 {
                let hint = if self.credentials.for_url(&current).is_empty() {
                    "it is private: give its credentials with --header 'NAME: VALUE' naming an environment variable ($TOKEN), or --netrc"
                } else {
                    "the credentials sent were not accepted: check the variables the source's headers name, or the netrc entry"
                };
                return Err(failed(format!("the server answered {status}; {hint}")));
            }
            if !status.is_success() {
                return Err(failed(format!("the server answered {status}")));
            }
            return response
                .body_mut()
                .with_config()
                .limit(limit)
                .read_to_vec()
                .map(Some)
                .map_err(|err| match err {
                    ureq::Error::BodyExceedsLimit(_) => {
                        failed(format!("it is larger than {limit} bytes"))
                    }
                    other => failed(self.describe(&current, other)),
                });
        }
        Err(SourceError::Http {
            url: url.to_owned(),
            message: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }
}

impl Client {
    /// What went wrong, in words: a timeout names the host and the bound.
    fn describe(&self, url: &str, err: ureq::Error) -> String {
        use ureq::Timeout;
        let host = host(url);
        let secs = |d: Duration| {
            let secs = d.as_secs_f64();
            if secs.fract() == 0.0 {
                format!("{secs:.0} s")
            } else {
                format!("{secs} s")
            }
        };
        match err {
            ureq::Error::Timeout(Timeout::Resolve | Timeout::Connect) => {
                format!("could not connect to {host} within {}", secs(self.stall))
            }
            ureq::Error::Timeout(Timeout::Global | Timeout::PerCall | Timeout::RecvBody) => {
                format!(
                    "{host} did not send it all within {} (it sends too slowly)",
                    secs(self.stall * TOTAL_STALLS)
                )
            }
            ureq::Error::Timeout(_) => {
                format!("no answer from {host} within {}", secs(self.stall))
            }
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                format!("no answer from {host} within {}", secs(self.stall))
            }
            other => other.to_string(),
        }
    }
}

/// The host (and port) of `url`, without any user information.
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.rsplit('@').next().unwrap_or("")
}

/// `https://` anywhere; `http://` only to this machine (a download that
/// anyone on the way could change is refused).
pub fn check_scheme(url: &str) -> Result<(), SourceError> {
    let refuse = |why: &str| SourceError::Http {
        url: url.to_owned(),
        message: why.to_owned(),
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(refuse("not an http(s) URL"));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(()),
        "http" if is_loopback(rest) => Ok(()),
        "http" => Err(refuse(
            "plain http:// is refused (only this machine may be reached without TLS); use https://",
        )),
        _ => Err(refuse("only https:// URLs are fetched")),
    }
}

/// Whether the authority at the start of `rest` (after `scheme://`) is
/// this machine: `localhost`, `127.x.x.x` or `[::1]`.
fn is_loopback(rest: &str) -> bool {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(bracketed) = host.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// `reference` resolved against `base` (RFC 3986, section 5): absolute
/// URLs as they are, `//host/…` with the base's scheme, `/path` on the
/// base's origin, anything else relative to the base's folder. Dot
/// segments are removed; a fragment is dropped.
pub fn resolve(base: &str, reference: &str) -> String {
    let reference = reference.split('#').next().unwrap_or("");
    if has_scheme(reference) {
        return reference.to_owned();
    }
    let (scheme, rest) = base.split_once("://").unwrap_or(("https", base));
    if let Some(network) = reference.strip_prefix("//") {
        return format!("{scheme}://{network}");
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, base_path) = rest.split_at(authority_end);
    let base_path = base_path.split(['?', '#']).next().unwrap_or("");
    let (path, query) = match reference.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (reference, None),
    };
    let merged = if path.starts_with('/') {
        path.to_owned()
    } else if path.is_empty() {
        base_path.to_owned()
    } else {
        let folder = base_path.rfind('/').map_or("/", |at| &base_path[..=at]);
        format!("{folder}{path}")
    };
    let mut out = format!("{scheme}://{authority}{}", remove_dots(&merged));
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

fn has_scheme(text: &str) -> bool {
    match text.find(':') {
        Some(at) if at > 0 => {
            let scheme = &text[..at];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !text[..at].contains('/')
        }
        _ => false,
    }
}

/// A path without `.` and `..` segments (`..` never climbs above `/`).
fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            other => out.push(other),
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "https://example.com/team/.well-known/agent-skills/index.json";

    #[test]
    fn artifact_urls_resolve_against_the_index() {
        assert_eq!(
            resolve(INDEX, "pdf/SKILL.md"),
            "https://example.com/team/.well-known/agent-skills/pdf/SKILL.md"
        );
        assert_eq!(
            resolve(INDEX, "/.well-known/agent-skills/pdf.tar.gz"),
            "https://example.com/.well-known/agent-skills/pdf.tar.gz"
        );
        assert_eq!(
            resolve(INDEX, "../../x.zip?v=2#frag"),
            "https://example.com/team/x.zip?v=2"
        );
        assert_eq!(
            resolve(INDEX, "//cdn.example.net/a"),
            "https://cdn.example.net/a"
        );
        assert_eq!(
            resolve(INDEX, "https://cdn.example.net/a/./b/../c"),
            "https://cdn.example.net/a/./b/../c"
        );
        assert_eq!(resolve("http://h:1/a/b", "../../../c"), "http://h:1/c");
    }

    #[test]
    fn plain_http_reaches_only_this_machine() {
        assert!(check_scheme("https://example.com/x").is_ok());
        for loopback in [
            "http://localhost:8000/x",
            "http://127.0.0.1/x",
            "http://127.1.2.3:9/",
            "http://[::1]:8000/x",
        ] {
            assert!(check_scheme(loopback).is_ok(), "{loopback}");
        }
        for refused in [
            "http://example.com/x",
            "http://127.0.0.1.example.com/x",
            "http://localhost@example.com/x",
            "ftp://example.com/x",
        ] {
            assert!(check_scheme(refused).is_err(), "{refused}");
        }
    }
}
