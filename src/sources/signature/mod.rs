//! Who published a source (behaviour.md, "Signatures"): checked offline,
//! with keys people already have, beside fetching — a git commit's or
//! tag's signature by the user's `git` ([`git`]), an index's detached
//! `index.json.sig` by the user's `ssh-keygen` ([`ssh`]) — and what the
//! policy makes of it ([`Policy`], [`Check::decide`]): a trusted signer is
//! recorded in the lock; a bad signature or a revoked key is always
//! refused; an unsigned source or one signed by a key nobody trusts is
//! refused where a signature is required, and installed with a note in the
//! plan where it is not.

pub mod git;
pub mod ssh;

use std::path::{Path, PathBuf};

use crate::config::SignatureSettings;
use crate::lock::{Scope, SignatureFormat, SignedObject, Signer, Trust};

use super::SourceError;

/// A file of the policy: where it is, and who named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyFile {
    pub path: PathBuf,
    /// `--trusted-signers`, `config.toml:3`, `source 'team'`.
    pub named_by: String,
}

/// What a fetch asks of signatures: the source's own settings (recorded
/// in its lock) over the global ones of `config.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// Whose SSH signatures count (an allowed-signers file). `None`: for
    /// git, the user's own `gpg.ssh.allowedSignersFile`.
    pub trusted: Option<PolicyFile>,
    /// Revoked SSH keys.
    pub revoked: Option<PolicyFile>,
    /// Who asked that the source be signed by a trusted signer; `None`:
    /// a signature is checked and recorded, not required.
    pub required_by: Option<String>,
}

impl Policy {
    /// The policy for the source `id` whose lock says `trust`, in a lock
    /// of `scope` whose relative paths start at `base` (a project's
    /// folder), under the global `settings`.
    pub fn of(
        trust: &Trust,
        scope: Scope,
        base: &Path,
        settings: &SignatureSettings,
        id: &str,
    ) -> Policy {
        let file = |key: &str, own: &Option<String>, global: &Option<(PathBuf, String)>| match own {
            Some(path) => Some(PolicyFile {
                path: match scope {
                    Scope::User => PathBuf::from(path),
                    Scope::Project => base.join(path),
                },
                named_by: format!("{key} of source '{id}'"),
            }),
            None => global.as_ref().map(|(path, origin)| PolicyFile {
                path: path.clone(),
                named_by: format!("{key} at {origin}"),
            }),
        };
        Policy {
            trusted: file(
                "trusted_signers",
                &trust.trusted_signers,
                &settings.trusted_signers,
            ),
            revoked: file(
                "revoked_signers",
                &trust.revoked_signers,
                &settings.revoked_signers,
            ),
            required_by: if trust.require_signature {
                Some(format!("require_signature of source '{id}'"))
            } else {
                settings
                    .require_signature
                    .as_ref()
                    .map(|origin| format!("require_signature at {origin}"))
            },
        }
    }

    /// A policy file that cannot be read stops the command before
    /// anything is fetched, naming the file and who named it.
    pub fn check_files(&self) -> Result<(), SourceError> {
        for file in [&self.trusted, &self.revoked] {
            if let Some(file) = file
                && let Err(err) = crate::disk::read_text(&file.path, 4 * 1024 * 1024)
            {
                return Err(SourceError::Usage(format!(
                    "{}: cannot read it ({err}); it is the file of {}",
                    file.path.display(),
                    file.named_by
                )));
            }
        }
        Ok(())
    }
}

/// What checking a signature found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing is signed.
    Unsigned { object: SignedObject },
    /// A good signature by a trusted signer.
    Trusted(Signer),
    /// A signature, but not one that can be trusted.
    Untrusted {
        format: SignatureFormat,
        /// The key's fingerprint (empty when even that is unknown).
        key: String,
        principal: Option<String>,
        object: SignedObject,
        why: Untrusted,
    },
}

/// Why a signature is not trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Untrusted {
    /// The allowed-signers file does not list the key (SSH), or the key is
    /// not in the keyring (OpenPGP).
    Unknown,
    /// The user's own git allowed-signers file does not list the key.
    UnknownToGit,
    /// No allowed-signers file says whose SSH keys count.
    NoSigners,
    /// The key (or the signature) is past its validity, with the reason.
    Expired(String),
    Revoked,
    /// The signature does not verify (made over other bytes, or damaged).
    Bad(String),
    /// A kind of signature skillserve does not check.
    Unsupported(String),
    /// A signature that could not be checked on this machine (why).
    Unchecked(String),
}

/// A source's signature as a fetch found it: the signer to record, or
/// what the plan should say about a signature that is not trusted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    pub signer: Option<Signer>,
    /// Said in the plan when the source is installed without a trusted
    /// signer (`None` with a signer).
    pub note: Option<String>,
}

impl Check {
    /// What the policy makes of this: the signature to record, or the
    /// refusal. `subject` names what was signed (`URL at commit …`).
    pub fn decide(self, policy: &Policy, subject: &str) -> Result<Signature, SourceError> {
        let problem = match &self {
            Check::Trusted(signer) => {
                return Ok(Signature {
                    signer: Some(signer.clone()),
                    note: None,
                });
            }
            Check::Unsigned { object } => format!("{} is not signed", object_words(*object)),
            Check::Untrusted { .. } => self.problem(policy),
        };
        let always = matches!(
            self,
            Check::Untrusted {
                why: Untrusted::Bad(_) | Untrusted::Revoked,
                ..
            }
        );
        match (&policy.required_by, always) {
            // Most sources are not signed: nothing to say unless asked.
            (None, false) if matches!(self, Check::Unsigned { .. }) => Ok(Signature::default()),
            (None, false) => Ok(Signature {
                signer: None,
                note: Some(problem),
            }),
            (required_by, _) => {
                let hint = match required_by {
                    Some(by) if !always => format!(
                        "a signature by a trusted signer is required ({by}); {}",
                        self.hint(policy)
                    ),
                    _ => self.hint(policy),
                };
                Err(SourceError::Signature {
                    subject: subject.to_owned(),
                    problem,
                    hint,
                })
            }
        }
    }

    /// What is wrong, in words, naming the key.
    fn problem(&self, policy: &Policy) -> String {
        let Check::Untrusted {
            format,
            key,
            principal,
            object,
            why,
        } = self
        else {
            return String::new();
        };
        let signed = match (format, principal) {
            (SignatureFormat::Ssh, Some(principal)) => {
                format!("{} is signed by {key} ({principal})", object_words(*object))
            }
            (SignatureFormat::Ssh, None) => format!("{} is signed by {key}", object_words(*object)),
            (SignatureFormat::Openpgp, Some(principal)) => format!(
                "{} is signed by OpenPGP key {key} ({principal})",
                object_words(*object)
            ),
            (SignatureFormat::Openpgp, None) => {
                format!("{} is signed by OpenPGP key {key}", object_words(*object))
            }
        };
        let trusted = policy.trusted.as_ref().map_or_else(
            || "the allowed-signers file".to_owned(),
            |f| f.path.display().to_string(),
        );
        match (why, format) {
            (Untrusted::Unknown, SignatureFormat::Ssh) => {
                format!("{signed}, a key {trusted} does not list")
            }
            (Untrusted::Unknown | Untrusted::UnknownToGit, SignatureFormat::Openpgp) => {
                format!("{signed}, which is not in your keyring")
            }
            (Untrusted::UnknownToGit, SignatureFormat::Ssh) => format!(
                "{signed}, a key your git allowed-signers file (gpg.ssh.allowedSignersFile) does not list"
            ),
            (Untrusted::NoSigners, _) => {
                format!("{signed}, but no allowed-signers file says whose SSH keys to trust")
            }
            (Untrusted::Expired(reason), _) => format!("{signed}, but the {reason}"),
            (Untrusted::Revoked, SignatureFormat::Ssh) => {
                let revoked = policy.revoked.as_ref().map_or_else(
                    || "the revoked-keys file".to_owned(),
                    |f| f.path.display().to_string(),
                );
                format!("{signed}, a key revoked in {revoked}")
            }
            (Untrusted::Revoked, SignatureFormat::Openpgp) => {
                format!("{signed}, a key revoked in your keyring")
            }
            (Untrusted::Bad(reason), _) if key.is_empty() => {
                format!("its signature does not verify: {reason}")
            }
            (Untrusted::Bad(reason), _) => format!(
                "the signature by {key} does not verify ({reason}): it was not made over these bytes"
            ),
            (Untrusted::Unsupported(what), _) => {
                format!(
                    "{} carries {what}, which skillserve does not check",
                    object_words(*object)
                )
            }
            (Untrusted::Unchecked(why), _) => {
                format!("{signed}, but the signature could not be checked: {why}")
            }
        }
    }

    /// What to do about it.
    fn hint(&self, policy: &Policy) -> String {
        let named = |file: &Option<PolicyFile>| {
            file.as_ref()
                .map(|f| format!("{} ({})", f.path.display(), f.named_by))
        };
        match self {
            Check::Trusted(_) => String::new(),
            Check::Unsigned { .. } => {
                "ask its publisher to sign it; nothing was changed".into()
            }
            Check::Untrusted { why, format, .. } => match (why, format) {
                (Untrusted::Unknown, SignatureFormat::Ssh) => format!(
                    "if you trust this key, add a line for it to {}; nothing was changed",
                    named(&policy.trusted).unwrap_or_else(|| "the allowed-signers file".into())
                ),
                (Untrusted::Unknown | Untrusted::UnknownToGit, SignatureFormat::Openpgp) => {
                    "if you trust this key, import it (gpg --import); nothing was changed".into()
                }
                (Untrusted::UnknownToGit, SignatureFormat::Ssh) => {
                    "if you trust this key, add it to that file, or name another with trusted_signers in config.toml or --trusted-signers FILE; nothing was changed".into()
                }
                (Untrusted::NoSigners, _) => {
                    "name an allowed-signers file with trusted_signers in config.toml or --trusted-signers FILE; nothing was changed".into()
                }
                (Untrusted::Expired(_) | Untrusted::Revoked, _) => {
                    "the key may no longer be used; ask the publisher which key signs now; nothing was changed".into()
                }
                (Untrusted::Bad(_), _) => {
                    "the signed bytes were changed after signing, or the signature is damaged; nothing was changed".into()
                }
                (Untrusted::Unsupported(_), _) => {
                    "ask the publisher for an SSH or OpenPGP signature; nothing was changed".into()
                }
                (Untrusted::Unchecked(_), _) => "nothing was changed".into(),
            },
        }
    }
}

/// `the commit`, `the tag`, `index.json`.
fn object_words(object: SignedObject) -> &'static str {
    match object {
        SignedObject::Commit => "the commit",
        SignedObject::Tag => "the tag",
        SignedObject::Index => "index.json",
    }
}

/// `update`'s rule: a source signed by one key is not installed from
/// another (or from no trusted key) unless `allow` (`--allow-signer-change`).
/// A source that was not signed may become signed.
pub fn check_change(
    id: &str,
    recorded: Option<&Signer>,
    now: Option<&Signer>,
    allow: bool,
) -> Result<(), SourceError> {
    let Some(recorded) = recorded else {
        return Ok(());
    };
    if allow || now.is_some_and(|now| now.key == recorded.key) {
        return Ok(());
    }
    let now = match now {
        Some(now) => format!("is signed by {}", now.label()),
        None => "is not signed by a trusted signer".to_owned(),
    };
    Err(SourceError::SignerChanged {
        id: id.to_owned(),
        recorded: recorded.label(),
        now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(key: &str) -> Signer {
        Signer {
            format: SignatureFormat::Ssh,
            key: key.into(),
            principal: "alice@example.com".into(),
            object: SignedObject::Commit,
        }
    }

    fn untrusted(why: Untrusted) -> Check {
        Check::Untrusted {
            format: SignatureFormat::Ssh,
            key: "SHA256:k".into(),
            principal: None,
            object: SignedObject::Commit,
            why,
        }
    }

    fn required() -> Policy {
        Policy {
            trusted: Some(PolicyFile {
                path: "/k/allowed".into(),
                named_by: "trusted_signers of source 's'".into(),
            }),
            revoked: None,
            required_by: Some("require_signature of source 's'".into()),
        }
    }

    #[test]
    fn without_a_requirement_only_bad_and_revoked_signatures_stop_an_install() {
        let free = Policy::default();
        let unsigned = Check::Unsigned {
            object: SignedObject::Commit,
        };
        assert_eq!(unsigned.decide(&free, "u").unwrap(), Signature::default());
        assert!(untrusted(Untrusted::Unknown).decide(&free, "u").is_ok());
        assert!(
            untrusted(Untrusted::Bad("x".into()))
                .decide(&free, "u")
                .is_err()
        );
        assert!(untrusted(Untrusted::Revoked).decide(&free, "u").is_err());
        assert_eq!(
            Check::Trusted(signer("SHA256:k"))
                .decide(&free, "u")
                .unwrap()
                .signer,
            Some(signer("SHA256:k"))
        );
    }

    #[test]
    fn a_requirement_refuses_what_is_not_signed_by_a_trusted_signer_naming_the_key() {
        let err = untrusted(Untrusted::Unknown)
            .decide(&required(), "file:///r at commit 0123456789ab")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "file:///r at commit 0123456789ab: the commit is signed by SHA256:k, a key /k/allowed does not list; a signature by a trusted signer is required (require_signature of source 's'); if you trust this key, add a line for it to /k/allowed (trusted_signers of source 's'); nothing was changed"
        );
    }

    #[test]
    fn a_new_signer_needs_allow_signer_change() {
        let (a, b) = (signer("SHA256:a"), signer("SHA256:b"));
        assert!(check_change("s", None, Some(&b), false).is_ok());
        assert!(check_change("s", Some(&a), Some(&a), false).is_ok());
        assert!(check_change("s", Some(&a), Some(&b), true).is_ok());
        assert!(check_change("s", Some(&a), Some(&b), false).is_err());
        assert!(check_change("s", Some(&a), None, false).is_err());
    }
}
