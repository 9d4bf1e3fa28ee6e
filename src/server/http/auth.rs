//! Who may call `/mcp` (behaviour.md §16): bearer tokens from the token file
//! (`--auth-tokens`), JWT access tokens of an OAuth issuer (`--oauth-issuer`),
//! or, on a loopback address without either, anyone.
//!
//! The token file is watched (a `stat` every [`RELOAD_EVERY`]) and read again
//! when it changes, so a token is revoked by deleting its line, without a
//! restart. A file that becomes unreadable or invalid keeps the tokens read
//! before, and the error is logged once per change.
//!
//! Each request that passes carries its [`Caller`] to the MCP handler (in
//! the HTTP request's extensions, which rmcp hands on in the request
//! context): who it is, and whether it may change the catalog (an admin
//! token, or an OAuth token with the `skills:admin` scope).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use http::HeaderMap;
use rmcp::RoleServer;
use rmcp::service::RequestContext;

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
    /// `skillserve ui`'s own token, by its SHA-256.
    launch: Option<[u8; 32]>,
}

/// Who made a request: logged with it, and the owner of the sessions it
/// opens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Who {
    /// No credentials needed (a loopback address without authentication).
    Anyone,
    /// A bearer token from the token file, by its label.
    Token(String),
    /// An OAuth access token, by its subject.
    Subject(String),
    /// The token `skillserve ui` was started with: the person who started it.
    Launch,
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Anyone => f.write_str("-"),
            Who::Token(label) => write!(f, "token:{label}"),
            Who::Subject(subject) => write!(f, "oauth:{}", crate::text::printable(subject)),
            Who::Launch => f.write_str("ui"),
        }
    }
}

/// The authenticated caller of an MCP request over HTTP, as the handler
/// sees it: [`Caller::of`] a request's context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub who: Who,
    /// Whether the caller may change the catalog: an admin token (`token
    /// new LABEL --admin`) or an OAuth token with the [`ADMIN_SCOPE`] scope.
    /// Without authentication (a loopback address) nobody is admin.
    pub admin: bool,
}

impl Caller {
    /// The caller of the request `context` belongs to: `None` when it did
    /// not come over HTTP (stdio: the user who started the server).
    pub fn of(context: &RequestContext<RoleServer>) -> Option<&Caller> {
        context
            .extensions
            .get::<http::request::Parts>()?
            .extensions
            .get::<Caller>()
    }

    /// The caller's name as the access log gives it: `token:LABEL`,
    /// `oauth:SUBJECT`, or `-` without authentication.
    pub fn label(&self) -> String {
        self.who.to_string()
    }
}

/// How long what let a request in stays valid: until its token's line
/// changes or goes, or until a JWT expires. Streams end with it.
#[derive(Clone, Debug)]
pub enum Lease {
    /// No credentials needed.
    Forever,
    /// A token of the token file, by its hash, and its holder then.
    Token {
        hash: [u8; 32],
        label: String,
        admin: bool,
    },
    /// A JWT: valid until then.
    Until(Instant),
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
            launch: http
                .launch
                .as_ref()
                .map(|launch| tokens::sha256(&launch.token)),
        })
    }

    /// Whether requests need credentials.
    pub fn required(&self) -> bool {
        self.tokens.is_some() || self.oauth.is_some() || self.launch.is_some()
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

    /// Who sent a request with these headers and for how long that holds,
    /// or why it is refused.
    pub async fn check(&self, headers: &HeaderMap) -> Result<(Caller, Lease), Denied> {
        if !self.required() {
            let caller = Caller {
                who: Who::Anyone,
                admin: false,
            };
            return Ok((caller, Lease::Forever));
        }
        let token = bearer(headers).ok_or(Denied::Missing)?;
        if let Some(launch) = &self.launch {
            use subtle::ConstantTimeEq;
            return if bool::from(tokens::sha256(token).ct_eq(launch)) {
                let caller = Caller {
                    who: Who::Launch,
                    admin: true,
                };
                Ok((caller, Lease::Forever))
            } else {
                Err(Denied::Invalid("the token is not valid".to_owned()))
            };
        }
        let is_ours = token.starts_with(tokens::PREFIX);
        if let Some(store) = &self.tokens
            && (is_ours || self.oauth.is_none())
        {
            let hash = tokens::sha256(token);
            return match store.current.load().holder_by_hash(&hash) {
                Some(holder) => Ok((
                    Caller {
                        who: Who::Token(holder.label.to_owned()),
                        admin: holder.admin,
                    },
                    Lease::Token {
                        hash,
                        label: holder.label.to_owned(),
                        admin: holder.admin,
                    },
                )),
                None => Err(Denied::Invalid("the token is not valid".to_owned())),
            };
        }
        let Some(oauth) = &self.oauth else {
            return Err(Denied::Invalid("the token is not valid".to_owned()));
        };
        let grant = oauth
            .verify(token)
            .await
            .map_err(|refusal: Refusal| Denied::Invalid(refusal.to_string()))?;
        let caller = Caller {
            who: Who::Subject(grant.subject),
            admin: grant.admin,
        };
        Ok((caller, Lease::Until(grant.valid_until)))
    }

    /// Resolves once `lease` no longer holds: its token's line was removed
    /// or changed, or its JWT expired. Never, for [`Lease::Forever`].
    pub async fn ended(&self, lease: &Lease) {
        match lease {
            Lease::Forever => std::future::pending().await,
            Lease::Until(at) => tokio::time::sleep_until((*at).into()).await,
            Lease::Token { hash, label, admin } => {
                let Some(store) = &self.tokens else {
                    return;
                };
                let mut changes = store.changes.subscribe();
                loop {
                    let holds = store
                        .current
                        .load()
                        .holder_by_hash(hash)
                        .is_some_and(|holder| holder.label == label && holder.admin == *admin);
                    if !holds || changes.changed().await.is_err() {
                        return;
                    }
                }
            }
        }
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
    /// Told each time the file was read again.
    changes: tokio::sync::watch::Sender<()>,
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
            changes: tokio::sync::watch::Sender::new(()),
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
                    self.changes.send_replace(());
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

/// Who asks for a change of the skills manager over HTTP: the caller's
/// label, and whether it is admin (an admin token, or the `skills:admin`
/// scope).
pub fn app_caller(
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> crate::server::app::Caller {
    match Caller::of(context) {
        Some(caller) => crate::server::app::Caller::Http {
            who: caller.label(),
            admin: caller.admin,
        },
        None => crate::server::app::Caller::Http {
            who: Who::Anyone.to_string(),
            admin: false,
        },
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
