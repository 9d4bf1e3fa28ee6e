//! The signature of a JWT access token (RFC 7515's compact form), checked
//! against a key of the issuer's JWKS (RFC 7517) with `ring`, the one
//! cryptography library the binary ships (rustls already brings it).
//!
//! Accepted: RS256/384/512 and PS256/384/512 (RSA keys of 2,048 to 8,192
//! bits), ES256 (P-256), ES384 (P-384), EdDSA (Ed25519). Never `none` or a
//! shared secret: a server holding one could mint tokens. A key serves only
//! the algorithms of its type and curve, and only the one its JWK names in
//! `alg` when it names one, so a token cannot pick how a key is read. A
//! header with `crit` is refused: this server understands no extension
//! (RFC 7515 §4.1.11).
//!
//! What the token claims is `oauth`'s business; this module only tells a
//! signed token from a forged one.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey, VerificationAlgorithm};
use serde::Deserialize;

/// A signature algorithm this server accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    RS256,
    RS384,
    RS512,
    PS256,
    PS384,
    PS512,
    ES256,
    ES384,
    EdDSA,
}

impl Alg {
    /// The algorithm named `name` in a header or a JWK, if accepted.
    fn named(name: &str) -> Option<Alg> {
        Some(match name {
            "RS256" => Alg::RS256,
            "RS384" => Alg::RS384,
            "RS512" => Alg::RS512,
            "PS256" => Alg::PS256,
            "PS384" => Alg::PS384,
            "PS512" => Alg::PS512,
            "ES256" => Alg::ES256,
            "ES384" => Alg::ES384,
            "EdDSA" => Alg::EdDSA,
            _ => return None,
        })
    }
}

/// Why a token's signature does not check out.
#[derive(Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not three base64url parts, or a header that is not a JSON object of
    /// the registered shape.
    Malformed,
    /// `none`, a shared secret, or anything else not accepted.
    Algorithm,
    /// A `crit` header parameter (an extension this server does not know).
    Critical,
    /// The key cannot check this algorithm.
    KeyMismatch,
    Signature,
}

/// A token split into its parts, its header read.
pub struct Token<'a> {
    pub alg: Alg,
    pub kid: Option<String>,
    /// `header.payload`, the bytes the signature covers.
    signed: &'a str,
    payload: &'a str,
    signature: &'a str,
}

/// The header parameters read. `serde` refuses a parameter given twice.
#[derive(Deserialize)]
struct Header {
    alg: String,
    kid: Option<String>,
    crit: Option<serde_json::Value>,
}

impl<'a> Token<'a> {
    /// Splits `token` and reads its header. Its signature is not checked yet.
    pub fn parse(token: &'a str) -> Result<Token<'a>, Invalid> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Invalid::Malformed);
        };
        let header: Header =
            serde_json::from_slice(&decode(header)?).map_err(|_| Invalid::Malformed)?;
        let alg = Alg::named(&header.alg).ok_or(Invalid::Algorithm)?;
        if header.crit.is_some() {
            return Err(Invalid::Critical);
        }
        Ok(Token {
            alg,
            kid: header.kid,
            signed: &token[..token.len() - signature.len() - 1],
            payload,
            signature,
        })
    }

    /// The payload (the claims' JSON), once `key` checked the signature.
    pub fn verify(&self, key: &Key) -> Result<Vec<u8>, Invalid> {
        let algorithm = key.algorithm(self.alg).ok_or(Invalid::KeyMismatch)?;
        let signature = decode(self.signature).map_err(|_| Invalid::Signature)?;
        let message = self.signed.as_bytes();
        let checked = match (&key.material, algorithm) {
            (Material::Rsa { n, e }, Check::Rsa(params)) => {
                RsaPublicKeyComponents { n, e }.verify(params, message, &signature)
            }
            (Material::Ec { point, .. } | Material::Ed25519 { point }, Check::Point(algorithm)) => {
                UnparsedPublicKey::new(algorithm, point).verify(message, &signature)
            }
            _ => return Err(Invalid::KeyMismatch),
        };
        checked.map_err(|_| Invalid::Signature)?;
        decode(self.payload).map_err(|_| Invalid::Malformed)
    }
}

/// A public key of the issuer, read from its JWK.
pub struct Key {
    /// The one algorithm the JWK allows (`alg`), if it names one.
    only: Option<Alg>,
    material: Material,
}

enum Material {
    /// Big-endian modulus (without leading zeros) and exponent.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point (`04 || x || y`) on P-256 or P-384.
    Ec {
        p384: bool,
        point: Vec<u8>,
    },
    Ed25519 {
        point: Vec<u8>,
    },
}

/// A JWK's members, as far as they matter here.
#[derive(Deserialize)]
struct Jwk {
    kty: String,
    #[serde(rename = "use")]
    usage: Option<String>,
    alg: Option<String>,
    crv: Option<String>,
    n: Option<String>,
    e: Option<String>,
    x: Option<String>,
    y: Option<String>,
}

impl Key {
    /// The signing key a JWK describes; `None` for one this server cannot
    /// use (an encryption key, a secret, an unknown type, curve or
    /// algorithm, or a malformed one).
    pub fn from_jwk(jwk: &serde_json::Value) -> Option<Key> {
        let jwk = Jwk::deserialize(jwk).ok()?;
        if jwk.usage.as_deref().is_some_and(|usage| usage != "sig") {
            return None;
        }
        let only = match &jwk.alg {
            Some(alg) => Some(Alg::named(alg)?),
            None => None,
        };
        let field = |value: &Option<String>| decode(value.as_deref()?).ok();
        let material = match (jwk.kty.as_str(), jwk.crv.as_deref()) {
            ("RSA", _) => {
                let n = field(&jwk.n)?;
                let start = n.iter().position(|&b| b != 0)?;
                Material::Rsa {
                    n: n[start..].to_vec(),
                    e: field(&jwk.e)?,
                }
            }
            ("EC", Some(crv @ ("P-256" | "P-384"))) => {
                let size = if crv == "P-256" { 32 } else { 48 };
                let (x, y) = (field(&jwk.x)?, field(&jwk.y)?);
                if x.len() != size || y.len() != size {
                    return None;
                }
                let mut point = Vec::with_capacity(1 + 2 * size);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                Material::Ec {
                    p384: crv == "P-384",
                    point,
                }
            }
            ("OKP", Some("Ed25519")) => {
                let point = field(&jwk.x)?;
                if point.len() != 32 {
                    return None;
                }
                Material::Ed25519 { point }
            }
            _ => return None,
        };
        let key = Key { only, material };
        // A JWK whose `alg` does not fit its type is of no use.
        if let Some(alg) = only {
            key.algorithm(alg)?;
        }
        Some(key)
    }

    /// How this key checks a signature of `alg`, if it may.
    fn algorithm(&self, alg: Alg) -> Option<Check> {
        use signature::*;
        if self.only.is_some_and(|only| only != alg) {
            return None;
        }
        Some(match (&self.material, alg) {
            (Material::Rsa { .. }, Alg::RS256) => Check::Rsa(&RSA_PKCS1_2048_8192_SHA256),
            (Material::Rsa { .. }, Alg::RS384) => Check::Rsa(&RSA_PKCS1_2048_8192_SHA384),
            (Material::Rsa { .. }, Alg::RS512) => Check::Rsa(&RSA_PKCS1_2048_8192_SHA512),
            (Material::Rsa { .. }, Alg::PS256) => Check::Rsa(&RSA_PSS_2048_8192_SHA256),
            (Material::Rsa { .. }, Alg::PS384) => Check::Rsa(&RSA_PSS_2048_8192_SHA384),
            (Material::Rsa { .. }, Alg::PS512) => Check::Rsa(&RSA_PSS_2048_8192_SHA512),
            (Material::Ec { p384: false, .. }, Alg::ES256) => {
                Check::Point(&ECDSA_P256_SHA256_FIXED)
            }
            (Material::Ec { p384: true, .. }, Alg::ES384) => Check::Point(&ECDSA_P384_SHA384_FIXED),
            (Material::Ed25519 { .. }, Alg::EdDSA) => Check::Point(&ED25519),
            _ => return None,
        })
    }
}

/// How a signature is checked: ring reads RSA keys from their components,
/// the others from their point.
enum Check {
    Rsa(&'static signature::RsaParameters),
    Point(&'static dyn VerificationAlgorithm),
}

/// base64url without padding, as JWS uses it.
fn decode(text: &str) -> Result<Vec<u8>, Invalid> {
    URL_SAFE_NO_PAD.decode(text).map_err(|_| Invalid::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair,
        Ed25519KeyPair, KeyPair,
    };
    use serde_json::json;

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// `header.payload` for this header.
    fn signing_input(header: serde_json::Value) -> String {
        format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(br#"{"sub":"x"}"#)
        )
    }

    /// Signs a message.
    type Sign = Box<dyn Fn(&[u8]) -> Vec<u8>>;

    /// A signer per algorithm, and the JWK of its public key. RSA keys
    /// (which ring cannot make) are tested through the binary
    /// (tests/it/http_auth.rs), with a key from `fixtures/`.
    fn signer(alg: &str) -> (Sign, serde_json::Value) {
        let random = SystemRandom::new();
        match alg {
            "ES256" | "ES384" => {
                let (algorithm, crv) = if alg == "ES256" {
                    (&ECDSA_P256_SHA256_FIXED_SIGNING, "P-256")
                } else {
                    (&ECDSA_P384_SHA384_FIXED_SIGNING, "P-384")
                };
                let pkcs8 = EcdsaKeyPair::generate_pkcs8(algorithm, &random).unwrap();
                let key = EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref(), &random).unwrap();
                let point = key.public_key().as_ref().to_vec();
                let half = (point.len() - 1) / 2;
                let jwk = json!({"kty": "EC", "crv": crv, "x": b64(&point[1..=half]), "y": b64(&point[1 + half..])});
                let sign = move |message: &[u8]| {
                    key.sign(&SystemRandom::new(), message)
                        .unwrap()
                        .as_ref()
                        .to_vec()
                };
                (Box::new(sign), jwk)
            }
            _ => {
                let pkcs8 = Ed25519KeyPair::generate_pkcs8(&random).unwrap();
                let key = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
                let jwk =
                    json!({"kty": "OKP", "crv": "Ed25519", "x": b64(key.public_key().as_ref())});
                let sign = move |message: &[u8]| key.sign(message).as_ref().to_vec();
                (Box::new(sign), jwk)
            }
        }
    }

    #[test]
    fn elliptic_curve_signatures_are_checked_and_forgeries_refused() {
        for alg in ["ES256", "ES384", "EdDSA"] {
            let (sign, jwk) = signer(alg);
            let key = Key::from_jwk(&jwk).unwrap_or_else(|| panic!("{alg}: {jwk}"));
            let input = signing_input(json!({"alg": alg, "kid": "k"}));
            let token = format!("{input}.{}", b64(&sign(input.as_bytes())));
            let parsed = Token::parse(&token).unwrap();
            assert_eq!(parsed.kid.as_deref(), Some("k"));
            assert_eq!(parsed.verify(&key).unwrap(), br#"{"sub":"x"}"#, "{alg}");
            // Another payload under the same signature.
            let (head, _) = input.split_once('.').unwrap();
            let forged = format!(
                "{head}.{}.{}",
                b64(br#"{"sub":"y"}"#),
                b64(&sign(input.as_bytes()))
            );
            assert_eq!(
                Token::parse(&forged).unwrap().verify(&key),
                Err(Invalid::Signature),
                "{alg}"
            );
        }
    }

    #[test]
    fn a_key_serves_only_its_type_its_curve_and_its_alg() {
        let (sign, jwk) = signer("ES256");
        let key = Key::from_jwk(&jwk).unwrap();
        // The same bytes claimed as another algorithm.
        for alg in ["ES384", "RS256", "PS256", "EdDSA"] {
            let input = signing_input(json!({"alg": alg}));
            let token = format!("{input}.{}", b64(&sign(input.as_bytes())));
            assert_eq!(
                Token::parse(&token).unwrap().verify(&key),
                Err(Invalid::KeyMismatch),
                "{alg}"
            );
        }
        // A key whose JWK names its algorithm serves only that one.
        let (sign, mut jwk) = signer("ES256");
        jwk["alg"] = json!("ES256");
        let key = Key::from_jwk(&jwk).unwrap();
        let input = signing_input(json!({"alg": "ES256"}));
        let token = format!("{input}.{}", b64(&sign(input.as_bytes())));
        assert!(Token::parse(&token).unwrap().verify(&key).is_ok());
        jwk["alg"] = json!("ES384");
        assert!(Key::from_jwk(&jwk).is_none(), "a P-256 key cannot be ES384");
        let rsa =
            Key::from_jwk(&json!({"kty": "RSA", "n": b64(&[7; 256]), "e": "AQAB", "alg": "RS256"}))
                .unwrap();
        let input = signing_input(json!({"alg": "PS256"}));
        let token = format!("{input}.{}", b64(&[1; 256]));
        assert_eq!(
            Token::parse(&token).unwrap().verify(&rsa),
            Err(Invalid::KeyMismatch)
        );
        // Keys that are of no use here.
        for jwk in [
            json!({"kty": "oct", "k": "c2VjcmV0"}),
            json!({"kty": "EC", "crv": "P-521", "x": "AA", "y": "AA"}),
            json!({"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}),
            json!({"kty": "OKP", "crv": "Ed448", "x": "AA"}),
            json!({"kty": "RSA", "n": "AQAB", "e": "AQAB", "use": "enc"}),
            json!({"kty": "RSA", "n": "AQAB", "e": "AQAB", "alg": "HS256"}),
            json!({"kty": "EC", "crv": "P-256", "alg": "RS256", "x": b64(&[1; 32]), "y": b64(&[1; 32])}),
        ] {
            assert!(Key::from_jwk(&jwk).is_none(), "{jwk}");
        }
    }

    #[test]
    fn headers_are_read_strictly() {
        let parse = |header: &str| {
            Token::parse(&format!("{}.e30.AA", b64(header.as_bytes()))).map(|token| token.alg)
        };
        assert_eq!(parse(r#"{"alg":"ES256"}"#), Ok(Alg::ES256));
        for alg in ["none", "HS256", "es256", "RS1"] {
            assert_eq!(
                parse(&format!(r#"{{"alg":"{alg}"}}"#)),
                Err(Invalid::Algorithm),
                "{alg}"
            );
        }
        assert_eq!(
            parse(r#"{"alg":"ES256","crit":["b64"],"b64":false}"#),
            Err(Invalid::Critical)
        );
        assert_eq!(
            parse(r#"{"alg":"ES256","alg":"ES256"}"#),
            Err(Invalid::Malformed)
        );
        assert_eq!(parse(r#"{"kid":"k"}"#), Err(Invalid::Malformed));
        assert_eq!(parse("[]"), Err(Invalid::Malformed));
        assert!(Token::parse("a.b").is_err());
        assert!(Token::parse("a.b.c.d").is_err());
        assert!(Token::parse("*.e30.AA").is_err());
    }
}
