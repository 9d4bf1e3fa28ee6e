//! Who may call `/mcp` (behaviour.md §16): bearer tokens from the token file
//! (`--auth-tokens`), JWT access tokens of an OAuth issuer (`--oauth-issuer`),
//! or, on a loopback address without either, anyone.
//!
//! The token file is watched (a `stat` every [`RELOAD_EVERY`]) and read again
//! when it changes, so a token is revoked by deleting its line, without a
//! restart. A file that becomes unreadable or invalid keeps the tokens read
//! before, and the error is logged once per change.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use http::HeaderMap;

use crate::config::HttpOptions;
use crate::disk::Stamp;
use crate::server::http::oauth::{Refusal, Verifier};
use crate::tokens::{self, TokenFile};

/// How often the token file is checked for changes.
const RELOAD_EVERY: Duration = Duration::from_secs(2);

/// The credentials a server accepts.
pub struct Auth {
    tokens: Option<Arc<TokenStore>>,
    oauth: Option<Verifier>,
}

/// Who made a request, for the access log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Who {
    /// No credentials needed (a loopback address without authentication).
    Anyone,
    /// A bearer token from the token file, by its label.
    Token(String),
    /// An OAuth access token, by its subject.
    Subject(String),
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Anyone => f.write_str("-"),
            Who::Token(label) => write!(f, "token:{label}"),
            Who::Subject(subject) => write!(f, "oauth:{}", crate::text::printable(subject)),
        }
    }
}

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Denied {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token that is not accepted, and why (said to the client: it names
    /// nothing about other tokens).
    Invalid(String),
}

impl Auth {
    /// The credentials `http` configures; the token file must be readable.
    pub fn new(http: &HttpOptions) -> Result<Auth, tokens::TokenError> {
        let tokens = match &http.tokens {
            Some(path) => Some(Arc::new(TokenStore::open(path.clone())?)),
            None => None,
        };
        Ok(Auth {
            tokens,
            oauth: http.oauth.clone().map(Verifier::new),
        })
    }

    /// Whether requests need credentials.
    pub fn required(&self) -> bool {
        self.tokens.is_some() || self.oauth.is_some()
    }

    /// The OAuth issuer, when tokens of one are accepted.
    pub fn issuer(&self) -> Option<&str> {
        self.oauth.as_ref().map(Verifier::issuer)
    }

    /// Starts watching the token file and fetching the issuer's keys.
    pub fn start(self: &Arc<Self>) {
        if let Some(store) = &self.tokens {
            tokio::spawn(Arc::clone(store).watch());
        }
        if self.oauth.is_some() {
            let auth = Arc::clone(self);
            tokio::spawn(async move {
                if let Some(oauth) = &auth.oauth {
                    oauth.prefetch().await;
                }
            });
        }
    }

    /// Who sent a request with these headers, or why it is refused.
    pub async fn check(&self, headers: &HeaderMap) -> Result<Who, Denied> {
        if !self.required() {
            return Ok(Who::Anyone);
        }
        let token = bearer(headers).ok_or(Denied::Missing)?;
        let is_ours = token.starts_with(tokens::PREFIX);
        if let Some(store) = &self.tokens
            && (is_ours || self.oauth.is_none())
        {
            return match store.current.load().label_of(token) {
                Some(label) => Ok(Who::Token(label.to_owned())),
                None => Err(Denied::Invalid("the token is not valid".to_owned())),
            };
        }
        let Some(oauth) = &self.oauth else {
            return Err(Denied::Invalid("the token is not valid".to_owned()));
        };
        oauth
            .verify(token)
            .await
            .map(Who::Subject)
            .map_err(|refusal: Refusal| Denied::Invalid(refusal.to_string()))
    }
}

/// The token of an `Authorization: Bearer TOKEN` header (the scheme in any
/// case).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The `WWW-Authenticate` value of a 401: RFC 6750's, with the protected
/// resource metadata's URL for OAuth clients (RFC 9728).
pub fn challenge(denied: &Denied, resource_metadata: Option<&str>) -> String {
    let mut value = String::from("Bearer realm=\"skillserve\"");
    if let Some(url) = resource_metadata {
        value.push_str(&format!(", resource_metadata=\"{url}\""));
    }
    if let Denied::Invalid(reason) = denied {
        let reason = reason.replace(['"', '\\'], "'");
        value.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{reason}\""
        ));
    }
    value
}

/// The token file, read again when it changes.
struct TokenStore {
    path: std::path::PathBuf,
    current: ArcSwap<TokenFile>,
}

impl TokenStore {
    fn open(path: std::path::PathBuf) -> Result<TokenStore, tokens::TokenError> {
        let file = TokenFile::read(&path)?;
        if file.is_empty() {
            tracing::warn!(
                "the token file {} holds no token yet: every request is refused until `skillserve token new LABEL --file {}` adds one",
                path.display(),
                path.display()
            );
        }
        Ok(TokenStore {
            current: ArcSwap::from_pointee(file),
            path,
        })
    }

    /// Reads the file again whenever its `stat` changes, until the process
    /// ends.
    async fn watch(self: Arc<Self>) {
        let stamp = |path: &std::path::Path| std::fs::metadata(path).ok().map(|m| Stamp::of(&m));
        let mut seen = stamp(&self.path);
        let mut ticks = tokio::time::interval(RELOAD_EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            ticks.tick().await;
            let now = stamp(&self.path);
            if now == seen {
                continue;
            }
            seen = now;
            let path = self.path.clone();
            match tokio::task::spawn_blocking(move || TokenFile::read(&path)).await {
                Ok(Ok(file)) => {
                    tracing::info!(
                        "token file {} read again: {} tokens",
                        self.path.display(),
                        file.len()
                    );
                    self.current.store(Arc::new(file));
                }
                Ok(Err(err)) => tracing::error!(
                    "{err}; the {} tokens read before stay valid until the file is fixed",
                    self.current.load().len()
                ),
                Err(err) => tracing::error!("reading the token file failed: {err}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_found_in_any_case_of_the_scheme() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert("authorization", "bearer ss_abc".parse().unwrap());
        assert_eq!(bearer(&headers), Some("ss_abc"));
        headers.insert("authorization", "Basic dXNlcjpwdw==".parse().unwrap());
        assert_eq!(bearer(&headers), None);
        headers.insert("authorization", "Bearer ".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn challenges_follow_rfc_6750_and_9728() {
        assert_eq!(
            challenge(&Denied::Missing, None),
            "Bearer realm=\"skillserve\""
        );
        assert_eq!(
            challenge(
                &Denied::Invalid("the token has expired".into()),
                Some("https://s.example/.well-known/oauth-protected-resource/mcp")
            ),
            "Bearer realm=\"skillserve\", resource_metadata=\"https://s.example/.well-known/oauth-protected-resource/mcp\", error=\"invalid_token\", error_description=\"the token has expired\""
        );
    }
}
