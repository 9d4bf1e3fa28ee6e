//! Who signed a source, and what its lock asks of signatures: the parts
//! of a `[sources.ID]` table that `add --trusted-signers …
//! --require-signature` and a verified signature write (behaviour.md,
//! "Signatures"). Checking a signature is `sources`' job (it runs `git`
//! and `ssh-keygen`); this module only holds what was found and asked, so
//! that `serve` can show the signer without knowing how it was checked.

use serde::Serialize;

/// How a signature was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureFormat {
    /// An SSH signature (`sshsig`, as `ssh-keygen -Y sign` and git's
    /// `gpg.format = ssh` make), checked against an allowed-signers file.
    Ssh,
    /// An OpenPGP signature, checked against the user's keyring.
    Openpgp,
}

impl SignatureFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureFormat::Ssh => "ssh",
            SignatureFormat::Openpgp => "openpgp",
        }
    }

    pub(super) fn parse(text: &str) -> Option<SignatureFormat> {
        match text {
            "ssh" => Some(SignatureFormat::Ssh),
            "openpgp" => Some(SignatureFormat::Openpgp),
            _ => None,
        }
    }
}

/// What carried the signature that counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignedObject {
    /// The commit installed.
    Commit,
    /// The annotated tag `ref` names, which points at the commit installed.
    Tag,
    /// The index's `index.json` (its detached `index.json.sig`).
    Index,
}

impl SignedObject {
    pub fn as_str(self) -> &'static str {
        match self {
            SignedObject::Commit => "commit",
            SignedObject::Tag => "tag",
            SignedObject::Index => "index",
        }
    }

    pub(super) fn parse(text: &str) -> Option<SignedObject> {
        match text {
            "commit" => Some(SignedObject::Commit),
            "tag" => Some(SignedObject::Tag),
            "index" => Some(SignedObject::Index),
            _ => None,
        }
    }
}

/// The key whose good signature, by a trusted signer, was checked when the
/// source was installed or last updated.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Signer {
    pub format: SignatureFormat,
    /// The key's fingerprint: `SHA256:…` (SSH, as `ssh-keygen -l` prints
    /// it) or the primary key's 40 hex digits (OpenPGP).
    pub key: String,
    /// Who the key belongs to: the principal of the allowed-signers file
    /// (SSH) or the key's user id (OpenPGP).
    pub principal: String,
    pub object: SignedObject,
}

impl Signer {
    /// `principal (key)`: what the `Signed-by:` lines show.
    pub fn label(&self) -> String {
        format!("{} ({})", self.principal, self.key)
    }
}

/// Whether `key` is a fingerprint as [`Signer::key`] holds it.
pub fn is_fingerprint(key: &str) -> bool {
    if let Some(b64) = key.strip_prefix("SHA256:") {
        return b64.len() == 43
            && b64
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    }
    matches!(key.len(), 40 | 64)
        && key
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

/// What a source asks of signatures, as `add` was told (`--trusted-signers`,
/// `--revoked-signers`, `--require-signature`); `update`, `sync` and
/// `auto_update` ask the same. Paths are absolute in the user's lock and
/// relative to the project's folder in a project's `skills.lock`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Trust {
    /// The allowed-signers file (OpenSSH's format) that says whose SSH
    /// signatures count; `None`: the global `trusted_signers`, else git's
    /// own `gpg.ssh.allowedSignersFile`.
    pub trusted_signers: Option<String>,
    /// Revoked SSH keys (a list of public keys or a KRL), as
    /// `ssh-keygen -Y verify -r` reads it.
    pub revoked_signers: Option<String>,
    /// Refuse the source unless it is signed by a trusted signer.
    pub require_signature: bool,
}

impl Trust {
    pub fn is_empty(&self) -> bool {
        *self == Trust::default()
    }
}
