//! Which browser origins may call the server (DNS rebinding): a request with
//! an `Origin` header is let in only when that origin is allowed by
//! `--allowed-origin`, or is a loopback origin while the server listens on a
//! loopback address. Requests without `Origin` (every non-browser client) are
//! not concerned.
//!
//! On a loopback address, the `Host` header must also name a loopback host
//! ([`is_loopback_host`]), on every route: rmcp applies the same rule to
//! `/mcp` with the same hosts.

/// The origins a server allows.
pub struct Origins {
    allowed: Vec<String>,
    loopback: bool,
}

impl Origins {
    /// `allowed` as `--allowed-origin` gives them (lowercase, no trailing
    /// `/`); `loopback` when the server listens on a loopback address.
    pub fn new(allowed: &[String], loopback: bool) -> Origins {
        Origins {
            allowed: allowed.iter().map(|origin| normalize(origin)).collect(),
            loopback,
        }
    }

    /// Whether a request with this `Origin` header value may go on.
    pub fn allows(&self, origin: &str) -> bool {
        let origin = normalize(origin);
        if self.allowed.contains(&origin) {
            return true;
        }
        self.loopback && is_loopback(&origin)
    }
}

/// Lowercase, without a trailing `/` and without the scheme's default port.
fn normalize(origin: &str) -> String {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    for (scheme, port) in [("http://", ":80"), ("https://", ":443")] {
        if origin.starts_with(scheme)
            && let Some(bare) = origin.strip_suffix(port)
        {
            return bare.to_owned();
        }
    }
    origin
}

/// Whether a request's `Host` names `localhost`, `127.0.0.1` or `[::1]`
/// (any port): the hosts rmcp allows on a loopback address.
pub fn is_loopback_host(headers: &http::HeaderMap) -> bool {
    let Some(host) = headers
        .get(http::header::HOST)
        .and_then(|host| host.to_str().ok())
        .and_then(|host| host.parse::<http::uri::Authority>().ok())
    else {
        return false;
    };
    let host = host.host().trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "::1"
}

/// `http(s)://localhost`, `127.x.x.x` or `[::1]`, any port.
fn is_loopback(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => return v6.starts_with("::1]"),
        None => rest.split(':').next().unwrap_or(rest),
    };
    host == "localhost"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_only_on_a_loopback_address() {
        let local = Origins::new(&[], true);
        for origin in [
            "http://localhost:6274",
            "http://127.0.0.1",
            "https://[::1]:8443",
        ] {
            assert!(local.allows(origin), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "http://localhost.evil.example",
            "null",
        ] {
            assert!(!local.allows(origin), "{origin}");
        }
        assert!(!Origins::new(&[], false).allows("http://localhost:6274"));
    }

    #[test]
    fn loopback_hosts_are_those_rmcp_allows() {
        let host = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(http::header::HOST, value.parse().unwrap());
            is_loopback_host(&headers)
        };
        for ok in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1:9",
            "[::1]:80",
            "[::1]",
        ] {
            assert!(host(ok), "{ok}");
        }
        for refused in [
            "evil.example",
            "localhost.evil.example",
            "127.0.0.2",
            "0.0.0.0:80",
            "[::2]",
        ] {
            assert!(!host(refused), "{refused}");
        }
        assert!(!is_loopback_host(&http::HeaderMap::new()));
    }

    #[test]
    fn allowed_origins_match_with_default_ports_and_any_case() {
        let origins = Origins::new(&["https://App.example.com".to_owned()], false);
        assert!(origins.allows("https://app.example.com"));
        assert!(origins.allows("https://app.example.com:443"));
        assert!(!origins.allows("https://app.example.com:8443"));
        assert!(!origins.allows("http://app.example.com"));
    }
}
