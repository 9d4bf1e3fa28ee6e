//! OAuth 2.1 resource server (behaviour.md §16): JWT access tokens checked
//! against the issuer's published keys.
//!
//! The keys (JWKS) are found through the issuer's metadata:
//! `/.well-known/oauth-authorization-server` (RFC 8414), else
//! `/.well-known/openid-configuration`. They are cached; an unknown `kid`, or
//! a cache older than an hour, fetches them again, at most once per
//! `--oauth-refetch-interval` (30 s by default) so that tokens with made-up
//! key ids cannot make the server hammer the issuer. Fetches are blocking
//! HTTP requests on a blocking thread (a few an hour).
//!
//! The signature is `jws`'s business; the claims are checked here: `exp`
//! (required) and `nbf` with [`LEEWAY`], `iss` a string equal to the
//! issuer, `aud` the audience or a list holding it. A refusal says which
//! rule failed in the documented words, never a parser's message.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::Deserialize;
use serde_json::Value;

use crate::config::OAuth;
use crate::server::http::jws::{Invalid, Key, Token};

/// The OAuth scope that makes a JWT's holder an admin.
pub const ADMIN_SCOPE: &str = "skills:admin";

/// Keys older than this are fetched again on next use (rotation).
const MAX_KEY_AGE: Duration = Duration::from_secs(3600);
/// A metadata document or key set larger than this is refused.
const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;
/// One fetch takes at most this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// A checked token is taken as checked for at most this long (and never past
/// its `exp`): a client sends the same token with every request, and
/// checking an ES256 signature costs more than answering the request
/// (measured: 870 against 2,795 calls/s with bearer tokens).
const CHECKED_FOR: Duration = Duration::from_secs(300);
/// Tokens remembered as checked; the memory is emptied when it is full.
const MAX_CHECKED: usize = 10_000;

/// Clocks may differ by this much: a token is taken this long past its
/// `exp`, and this long before its `nbf`.
const LEEWAY: Duration = Duration::from_secs(60);
/// A token is taken as valid for at most this long (its streams end then).
const MAX_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// Checks access tokens of one issuer for one audience.
pub struct Verifier {
    oauth: OAuth,
    /// The cached keys: held only to read or replace them, never across a
    /// fetch, so tokens signed with known keys are checked while the issuer
    /// is slow or down.
    keys: std::sync::Mutex<Keys>,
    /// Held by the one fetch under way.
    fetching: tokio::sync::Mutex<()>,
    /// Tokens checked lately, by SHA-256: what they grant and until when
    /// they may be taken as checked.
    checked: std::sync::Mutex<HashMap<[u8; 32], (Grant, Instant)>>,
}

/// What a valid token grants.
#[derive(Clone, Debug)]
pub struct Grant {
    /// Who it names: `sub`, else `client_id`.
    pub subject: String,
    /// Whether its `scope` (or `scp`) holds [`ADMIN_SCOPE`].
    pub admin: bool,
    /// When it stops being accepted (`exp` and the leeway).
    pub valid_until: Instant,
}

#[derive(Default)]
struct Keys {
    by_id: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`, tried in turn for tokens without one.
    anonymous: Vec<Arc<Key>>,
    fetched: Option<Instant>,
    jwks_uri: Option<String>,
}

/// Why a token was refused; the text goes into `error_description`, so it
/// is one of the documented texts (behaviour.md §16.2) and nothing else.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the token is not a JWT")]
    Malformed,
    #[error("the token's algorithm is not accepted")]
    Algorithm,
    #[error("the token has a critical header parameter the server does not understand")]
    Critical,
    #[error("the token was signed with an unknown key")]
    UnknownKey,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token is for another audience")]
    Audience,
    #[error("the token is from another issuer")]
    Issuer,
    #[error("the token's signature is invalid")]
    Signature,
    #[error("the token has no `{0}` claim")]
    Missing(&'static str),
    #[error("the token's `{0}` claim is malformed")]
    Claim(&'static str),
}

impl From<Invalid> for Refusal {
    fn from(invalid: Invalid) -> Refusal {
        match invalid {
            Invalid::Malformed => Refusal::Malformed,
            Invalid::Algorithm => Refusal::Algorithm,
            Invalid::Critical => Refusal::Critical,
            // The key the `kid` names is not one for this algorithm: as
            // good as a forged signature.
            Invalid::KeyMismatch | Invalid::Signature => Refusal::Signature,
        }
    }
}

/// The claims read. Each is a JSON value first, so that a claim of the
/// wrong type is named as such (and the claims are one JSON object: a
/// claim given twice is malformed).
#[derive(Deserialize)]
struct Claims {
    iss: Option<Value>,
    aud: Option<Value>,
    exp: Option<Value>,
    nbf: Option<Value>,
    sub: Option<Value>,
    client_id: Option<Value>,
    scope: Option<Value>,
    scp: Option<Value>,
}

/// The issuer's metadata, as far as it matters here.
#[derive(Deserialize)]
struct Metadata {
    issuer: Option<String>,
    jwks_uri: Option<String>,
}

impl Verifier {
    pub fn new(oauth: OAuth) -> Verifier {
        Verifier {
            oauth,
            keys: std::sync::Mutex::new(Keys::default()),
            fetching: tokio::sync::Mutex::new(()),
            checked: std::sync::Mutex::new(HashMap::new()),
        }
    }

    pub fn issuer(&self) -> &str {
        &self.oauth.issuer
    }

    /// Fetches the keys ahead of the first request; a failure is logged and
    /// retried when a token comes.
    pub async fn prefetch(&self) {
        let _fetching = self.fetching.lock().await;
        if let Err(err) = self.refetch().await {
            tracing::warn!("OAuth: {err}; retrying when a token comes");
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks `token`; on success, what it grants.
    pub async fn verify(&self, token: &str) -> Result<Grant, Refusal> {
        use sha2::Digest;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let remembered = self.remembered().get(&digest).cloned();
        if let Some((grant, until)) = remembered
            && Instant::now() < until
        {
            return Ok(grant);
        }
        let grant = self.check(token).await?;
        let until = grant.valid_until.min(Instant::now() + CHECKED_FOR);
        let mut checked = self.remembered();
        if checked.len() >= MAX_CHECKED {
            checked.clear();
        }
        checked.insert(digest, (grant.clone(), until));
        Ok(grant)
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (Grant, Instant)>> {
        self.checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks `token`'s signature, then its claims.
    async fn check(&self, token: &str) -> Result<Grant, Refusal> {
        let token = Token::parse(token)?;
        let key = self.key(token.kid.as_deref()).await?;
        let payload = token.verify(&key)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| Refusal::Malformed)?;
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let leeway = LEEWAY.as_secs_f64();
        let exp = seconds(claims.exp.as_ref(), "exp")?.ok_or(Refusal::Missing("exp"))?;
        if now > exp + leeway {
            return Err(Refusal::Expired);
        }
        if seconds(claims.nbf.as_ref(), "nbf")?.is_some_and(|nbf| now + leeway < nbf) {
            return Err(Refusal::NotYetValid);
        }
        match claims.iss {
            None => return Err(Refusal::Missing("iss")),
            Some(Value::String(iss)) if iss == self.oauth.issuer => {}
            Some(Value::String(_)) => return Err(Refusal::Issuer),
            Some(_) => return Err(Refusal::Claim("iss")),
        }
        let audience = self.oauth.audience.as_str();
        let for_us = match claims.aud {
            None => return Err(Refusal::Missing("aud")),
            Some(Value::String(aud)) => aud == audience,
            Some(Value::Array(auds)) => {
                if !auds.iter().all(Value::is_string) {
                    return Err(Refusal::Claim("aud"));
                }
                auds.iter().any(|aud| aud.as_str() == Some(audience))
            }
            Some(_) => return Err(Refusal::Claim("aud")),
        };
        if !for_us {
            return Err(Refusal::Audience);
        }
        let subject = match (claims.sub, claims.client_id) {
            (Some(Value::String(sub)), _) => sub,
            (Some(_), _) => return Err(Refusal::Claim("sub")),
            (None, Some(Value::String(client))) => client,
            (None, Some(_)) => return Err(Refusal::Claim("client_id")),
            (None, None) => "(no subject)".to_owned(),
        };
        let admin =
            has_scope(claims.scope.as_ref(), "scope")? || has_scope(claims.scp.as_ref(), "scp")?;
        // A lifetime past any that matters (an `exp` of 1e300, say) is a
        // year: an `Instant` cannot hold more than the clock can reach.
        let left = Duration::try_from_secs_f64(exp + leeway - now)
            .unwrap_or(MAX_LIFETIME)
            .min(MAX_LIFETIME);
        Ok(Grant {
            subject,
            admin,
            valid_until: Instant::now() + left,
        })
    }

    /// The key a token with this `kid` was signed with: from the cache, or
    /// after fetching the keys again when allowed.
    /// A key older than [`MAX_KEY_AGE`] is still used, while a fetch runs.
    async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, Refusal> {
        let (found, stale) = {
            let keys = self.cache();
            let stale = keys.fetched.is_none_or(|at| at.elapsed() > MAX_KEY_AGE);
            (keys.find(kid), stale)
        };
        if let Some(key) = found {
            if stale && let Ok(_fetching) = self.fetching.try_lock() {
                // This request goes on with the key it has; the next ones
                // find the new keys.
                self.refetch_if_allowed().await;
            }
            return Ok(key);
        }
        // Wait for a fetch under way, or fetch.
        let _fetching = self.fetching.lock().await;
        if let Some(key) = self.cache().find(kid) {
            return Ok(key);
        }
        self.refetch_if_allowed().await;
        self.cache().find(kid).ok_or(Refusal::UnknownKey)
    }

    /// Fetches the keys unless the last fetch was less than
    /// `refetch_interval` ago. Call it holding `fetching`.
    async fn refetch_if_allowed(&self) {
        let allowed = self
            .cache()
            .fetched
            .is_none_or(|at| at.elapsed() >= self.oauth.refetch_interval);
        if allowed && let Err(err) = self.refetch().await {
            tracing::warn!("OAuth: {err}");
        }
    }

    /// Fetches the metadata (once) and the key set; keeps the old keys when
    /// this fails.
    async fn refetch(&self) -> Result<(), String> {
        let known_uri = {
            let mut keys = self.cache();
            keys.fetched = Some(Instant::now());
            keys.jwks_uri.clone()
        };
        let issuer = self.oauth.issuer.clone();
        let (jwks_uri, set) = tokio::task::spawn_blocking(move || {
            let jwks_uri = match known_uri {
                Some(uri) => uri,
                None => discover(&issuer)?,
            };
            let set: JwkSet = serde_json::from_str(&fetch(&jwks_uri)?)
                .map_err(|err| format!("the key set at {jwks_uri} is not a JWKS: {err}"))?;
            if set.keys.is_empty() {
                return Err(format!("the key set at {jwks_uri} holds no key"));
            }
            Ok::<_, String>((jwks_uri, set))
        })
        .await
        .map_err(|err| err.to_string())??;
        let (mut by_id, mut anonymous) = (HashMap::new(), Vec::new());
        for jwk in &set.keys {
            let Some(key) = Key::from_jwk(jwk) else {
                continue;
            };
            let key = Arc::new(key);
            match jwk.get("kid").and_then(Value::as_str) {
                Some(kid) => {
                    by_id.insert(kid.to_owned(), key);
                }
                None => anonymous.push(key),
            }
        }
        tracing::info!(
            "OAuth: {} keys from {jwks_uri}",
            by_id.len() + anonymous.len()
        );
        let mut keys = self.cache();
        keys.by_id = by_id;
        keys.anonymous = anonymous;
        keys.jwks_uri = Some(jwks_uri);
        Ok(())
    }
}

/// A JWKS: its keys are read one by one, and those this server cannot use
/// are skipped.
#[derive(Deserialize)]
struct JwkSet {
    keys: Vec<Value>,
}

/// A NumericDate claim (seconds since the epoch, maybe with a fraction).
fn seconds(value: Option<&Value>, claim: &'static str) -> Result<Option<f64>, Refusal> {
    match value {
        None => Ok(None),
        Some(Value::Number(number)) => number
            .as_f64()
            .filter(|n| n.is_finite())
            .map(Some)
            .ok_or(Refusal::Claim(claim)),
        Some(_) => Err(Refusal::Claim(claim)),
    }
}

/// Whether a `scope` (a space-separated string, RFC 9068) or `scp` (that,
/// or a list, as some issuers write it) claim holds [`ADMIN_SCOPE`].
fn has_scope(value: Option<&Value>, claim: &'static str) -> Result<bool, Refusal> {
    match value {
        None => Ok(false),
        Some(Value::String(scopes)) => Ok(scopes.split(' ').any(|scope| scope == ADMIN_SCOPE)),
        Some(Value::Array(scopes)) if scopes.iter().all(Value::is_string) => Ok(scopes
            .iter()
            .any(|scope| scope.as_str() == Some(ADMIN_SCOPE))),
        Some(_) => Err(Refusal::Claim(claim)),
    }
}

impl Keys {
    fn find(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        match kid {
            Some(kid) => self.by_id.get(kid).cloned(),
            // Without a `kid`, only an unambiguous key will do.
            None => match (self.anonymous.as_slice(), self.by_id.len()) {
                ([only], 0) => Some(Arc::clone(only)),
                ([], 1) => self.by_id.values().next().cloned(),
                _ => None,
            },
        }
    }
}

/// The issuer's `jwks_uri`, from its OAuth metadata (RFC 8414: the
/// well-known path goes before the issuer's path) or else its OpenID
/// configuration (appended to the issuer). The metadata must name the same
/// issuer.
fn discover(issuer: &str) -> Result<String, String> {
    let (origin, path) = split_origin(issuer);
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer}/.well-known/openid-configuration"),
    ];
    let mut errors = Vec::new();
    for url in candidates {
        let metadata = match fetch(&url).and_then(|text| {
            serde_json::from_str::<Metadata>(&text)
                .map_err(|err| format!("{url} is not authorization server metadata: {err}"))
        }) {
            Ok(metadata) => metadata,
            Err(err) => {
                errors.push(err);
                continue;
            }
        };
        if metadata.issuer.as_deref().map(|i| i.trim_end_matches('/')) != Some(issuer) {
            return Err(format!(
                "{url} names the issuer {:?}, not {issuer}",
                metadata.issuer.unwrap_or_default()
            ));
        }
        return metadata
            .jwks_uri
            .ok_or_else(|| format!("{url} has no jwks_uri"));
    }
    Err(format!(
        "cannot find the keys of {issuer}: {}",
        errors.join("; ")
    ))
}

/// `https://host:port` and `/path` of a URL.
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(slash) => url.split_at(after_scheme + slash),
        None => (url, ""),
    }
}

/// The body of a GET of `url` (at most [`MAX_DOCUMENT_BYTES`]).
fn fetch(url: &str) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(FETCH_TIMEOUT))
        .max_redirects(3)
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header("Accept", "application/json")
        .call()
        .map_err(|err| format!("GET {url}: {err}"))?;
    response
        .body_mut()
        .with_config()
        .limit(MAX_DOCUMENT_BYTES)
        .read_to_string()
        .map_err(|err| format!("GET {url}: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_well_known_path_goes_before_the_issuer_path() {
        assert_eq!(
            split_origin("https://auth.example.com/tenant/1"),
            ("https://auth.example.com", "/tenant/1")
        );
        assert_eq!(
            split_origin("http://127.0.0.1:9000"),
            ("http://127.0.0.1:9000", "")
        );
    }
}
