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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use crate::config::OAuth;

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

/// The signature algorithms accepted: asymmetric only (a shared secret would
/// let the server mint tokens; `none` is never accepted).
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Checks access tokens of one issuer for one audience.
pub struct Verifier {
    oauth: OAuth,
    /// The cached keys: held only to read or replace them, never across a
    /// fetch, so tokens signed with known keys are checked while the issuer
    /// is slow or down.
    keys: std::sync::Mutex<Keys>,
    /// Held by the one fetch under way.
    fetching: tokio::sync::Mutex<()>,
    /// Tokens checked lately, by SHA-256: who they name and until when they
    /// may be taken as checked.
    checked: std::sync::Mutex<HashMap<[u8; 32], (String, Instant)>>,
}

#[derive(Default)]
struct Keys {
    by_id: HashMap<String, Arc<DecodingKey>>,
    /// Keys without a `kid`, tried in turn for tokens without one.
    anonymous: Vec<Arc<DecodingKey>>,
    fetched: Option<Instant>,
    jwks_uri: Option<String>,
}

/// Why a token was refused; the text goes into `error_description`.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("the token is not a JWT")]
    Malformed,
    #[error("the token's algorithm is not accepted")]
    Algorithm,
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
    #[error("the token is invalid: {0}")]
    Claims(String),
}

/// The claims the server reads (the library checks `exp`, `nbf`, `iss`,
/// `aud`).
#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    client_id: Option<String>,
    exp: u64,
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

    /// Checks `token`; on success, who it names (`sub`, else `client_id`).
    pub async fn verify(&self, token: &str) -> Result<String, Refusal> {
        use sha2::Digest;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let remembered = self.remembered().get(&digest).cloned();
        if let Some((subject, until)) = remembered
            && Instant::now() < until
        {
            return Ok(subject);
        }
        let (subject, expires) = self.check(token).await?;
        let until = Instant::now() + CHECKED_FOR.min(expires);
        let mut checked = self.remembered();
        if checked.len() >= MAX_CHECKED {
            checked.clear();
        }
        checked.insert(digest, (subject.clone(), until));
        Ok(subject)
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (String, Instant)>> {
        self.checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks `token`'s signature and claims; who it names, and how long
    /// until it expires.
    async fn check(&self, token: &str) -> Result<(String, Duration), Refusal> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Refusal::Malformed)?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refusal::Algorithm);
        }
        let key = self.key(header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.oauth.issuer]);
        validation.set_audience(&[&self.oauth.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|err| {
            use jsonwebtoken::errors::ErrorKind;
            match err.kind() {
                ErrorKind::ExpiredSignature => Refusal::Expired,
                ErrorKind::ImmatureSignature => Refusal::NotYetValid,
                ErrorKind::InvalidAudience => Refusal::Audience,
                ErrorKind::InvalidIssuer => Refusal::Issuer,
                ErrorKind::InvalidSignature => Refusal::Signature,
                ErrorKind::InvalidAlgorithm => Refusal::Algorithm,
                ErrorKind::MissingRequiredClaim(claim) => {
                    Refusal::Claims(format!("no `{claim}` claim"))
                }
                _ => Refusal::Claims(err.to_string()),
            }
        })?;
        let claims = data.claims;
        let now = jsonwebtoken::get_current_timestamp();
        let expires = Duration::from_secs(claims.exp.saturating_sub(now));
        let subject = claims
            .sub
            .or(claims.client_id)
            .unwrap_or_else(|| "(no subject)".to_owned());
        Ok((subject, expires))
    }

    /// The key a token with this `kid` was signed with: from the cache, or
    /// after fetching the keys again when allowed.
    /// A key older than [`MAX_KEY_AGE`] is still used, while a fetch runs.
    async fn key(&self, kid: Option<&str>) -> Result<Arc<DecodingKey>, Refusal> {
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
            Ok::<_, String>((jwks_uri, set))
        })
        .await
        .map_err(|err| err.to_string())??;
        let (mut by_id, mut anonymous) = (HashMap::new(), Vec::new());
        for jwk in &set.keys {
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let key = Arc::new(key);
            match &jwk.common.key_id {
                Some(kid) => {
                    by_id.insert(kid.clone(), key);
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

impl Keys {
    fn find(&self, kid: Option<&str>) -> Option<Arc<DecodingKey>> {
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
