//! The signature of a fetched commit or tag, checked by the user's `git`
//! (`verify-commit` / `verify-tag --raw`): SSH signatures against an
//! allowed-signers file (the policy's, passed with `-c
//! gpg.ssh.allowedSignersFile=…` so that the user's config is not
//! edited; else the user's own), OpenPGP signatures against the user's
//! keyring. git's exit code is the verdict; what it printed says who
//! signed, or why the signer is not trusted.

use std::path::Path;
use std::process::Stdio;

use crate::lock::{SignatureFormat, SignedObject, Signer};
use crate::program::Program;
use crate::sources::SourceError;

use super::{Check, Policy, Untrusted, ssh};

/// Checks the signature of what `git fetch` left in `FETCH_HEAD` of the
/// repository `dir`: a signed annotated tag's, else the commit's
/// (`commit`, its full id).
pub fn check(
    git: &Program,
    dir: &Path,
    commit: &str,
    policy: &Policy,
) -> Result<Check, SourceError> {
    let (is_tag, _) = run(git, dir, &["cat-file", "-t", "FETCH_HEAD"], policy, false)?;
    if is_tag.trim() == "tag" {
        let (tag, _) = run(git, dir, &["cat-file", "tag", "FETCH_HEAD"], policy, false)?;
        if let Some(signature) = tag_signature(&tag) {
            return verify(
                git,
                dir,
                "FETCH_HEAD",
                SignedObject::Tag,
                &signature,
                policy,
            );
        }
    }
    let (object, _) = run(git, dir, &["cat-file", "commit", commit], policy, false)?;
    match commit_signature(&object) {
        Some(signature) => verify(git, dir, commit, SignedObject::Commit, &signature, policy),
        None => Ok(Check::Unsigned {
            object: SignedObject::Commit,
        }),
    }
}

/// The armored signature at the end of a tag object's message.
fn tag_signature(tag: &str) -> Option<String> {
    let at = [
        "-----BEGIN SSH SIGNATURE-----",
        "-----BEGIN PGP SIGNATURE-----",
        "-----BEGIN SIGNED MESSAGE-----",
    ]
    .iter()
    .filter_map(|begin| tag.find(begin))
    .min()?;
    Some(tag[at..].to_owned())
}

/// The `gpgsig` (or `gpgsig-sha256`) header of a commit object: its first
/// line, and the lines after it that start with a space.
fn commit_signature(commit: &str) -> Option<String> {
    let headers = commit.split("\n\n").next()?;
    let mut lines = headers.lines();
    let first = lines.find_map(|line| {
        line.strip_prefix("gpgsig ")
            .or_else(|| line.strip_prefix("gpgsig-sha256 "))
    })?;
    let mut out = format!("{first}\n");
    for line in lines {
        let Some(more) = line.strip_prefix(' ') else {
            break;
        };
        out.push_str(more);
        out.push('\n');
    }
    Some(out)
}

/// `git verify-commit` / `verify-tag` of `object`, and what it said.
fn verify(
    git: &Program,
    dir: &Path,
    object: &str,
    kind: SignedObject,
    signature: &str,
    policy: &Policy,
) -> Result<Check, SourceError> {
    let command = match kind {
        SignedObject::Tag => "verify-tag",
        _ => "verify-commit",
    };
    let (output, ok) = run(git, dir, &[command, "--raw", object], policy, true)?;
    if signature.contains("-----BEGIN SSH SIGNATURE-----") {
        let own_key = ssh::key_of(signature).map(|(key, _)| key);
        let good = ssh::good_line(&output);
        let key = good
            .as_ref()
            .map(|(_, key)| key.clone())
            .or(own_key)
            .unwrap_or_default();
        if ok && let Some((Some(principal), _)) = good {
            return Ok(Check::Trusted(Signer {
                format: SignatureFormat::Ssh,
                key,
                principal,
                object: kind,
            }));
        }
        let why = ssh::why_not(&output, &key, policy);
        let why = match (why, policy.trusted.is_none()) {
            // git checked against the user's own allowed-signers file.
            (Untrusted::Unknown, true) => Untrusted::UnknownToGit,
            (why, _) => why,
        };
        return Ok(Check::Untrusted {
            format: SignatureFormat::Ssh,
            key,
            principal: None,
            object: kind,
            why,
        });
    }
    if signature.contains("-----BEGIN PGP SIGNATURE-----") {
        return Ok(openpgp(&output, ok, kind));
    }
    Ok(Check::Untrusted {
        format: SignatureFormat::Openpgp,
        key: String::new(),
        principal: None,
        object: kind,
        why: Untrusted::Unsupported("an X.509 (gpgsm) signature".into()),
    })
}

/// What gpg's status lines (`[GNUPG:] …`, printed by `--raw`) say.
fn openpgp(output: &str, ok: bool, object: SignedObject) -> Check {
    let mut key = String::new();
    let mut principal = None;
    let mut why = None;
    for line in output.lines() {
        let Some(status) = line.trim().strip_prefix("[GNUPG:] ") else {
            continue;
        };
        let fields: Vec<&str> = status.split(' ').collect();
        let uid = || (fields.len() > 2).then(|| fields[2..].join(" "));
        match fields[0] {
            "GOODSIG" => principal = uid(),
            // VALIDSIG FPR DATE TS EXPIRE VERSION RESERVED PKALGO HASHALGO
            // CLASS PRIMARY-FPR: the primary key names the signer.
            "VALIDSIG" => {
                key = fields
                    .get(10)
                    .or(fields.get(1))
                    .map_or(key, |k| (*k).to_owned());
            }
            "EXPKEYSIG" => {
                principal = uid();
                why = Some(Untrusted::Expired("key has expired".into()));
            }
            "EXPSIG" => {
                principal = uid();
                why = Some(Untrusted::Expired("signature has expired".into()));
            }
            "REVKEYSIG" => {
                principal = uid();
                why = Some(Untrusted::Revoked);
            }
            "BADSIG" => {
                principal = uid();
                why = Some(Untrusted::Bad(
                    "the signature does not match what it signs".into(),
                ));
            }
            // ERRSIG KEYID PKALGO HASHALGO CLASS TIME RC [FPR]
            "ERRSIG" => {
                if let Some(fpr) = fields.get(7) {
                    key = (*fpr).to_owned();
                } else if key.is_empty() {
                    key = fields.get(1).map_or(String::new(), |k| (*k).to_owned());
                }
                why.get_or_insert(Untrusted::Unknown);
            }
            "NO_PUBKEY" => {
                if key.is_empty() {
                    key = fields.get(1).map_or(String::new(), |k| (*k).to_owned());
                }
                why = Some(Untrusted::Unknown);
            }
            _ => {}
        }
        if key.is_empty()
            && let Some(keyid) = matches!(
                fields[0],
                "GOODSIG" | "EXPKEYSIG" | "EXPSIG" | "REVKEYSIG" | "BADSIG"
            )
            .then(|| fields.get(1))
            .flatten()
        {
            key = (*keyid).to_owned();
        }
    }
    match (ok, why, principal) {
        (true, None, Some(principal)) if !key.is_empty() => Check::Trusted(Signer {
            format: SignatureFormat::Openpgp,
            key,
            principal,
            object,
        }),
        (_, why, principal) => Check::Untrusted {
            format: SignatureFormat::Openpgp,
            key,
            principal,
            object,
            why: why.unwrap_or_else(|| Untrusted::Bad("git did not accept it".into())),
        },
    }
}

/// Runs git in `dir` (with the policy's files for SSH signatures when
/// `signers`): its stdout (or, with `signers`, stdout and stderr: what
/// `--raw` prints) and whether it succeeded. Only a failure to run git at
/// all, or a failing command without `signers`, is an error.
fn run(
    git: &Program,
    dir: &Path,
    args: &[&str],
    policy: &Policy,
    signers: bool,
) -> Result<(String, bool), SourceError> {
    let mut full: Vec<String> = Vec::new();
    if signers {
        if let Some(trusted) = &policy.trusted {
            full.push("-c".into());
            full.push(format!(
                "gpg.ssh.allowedSignersFile={}",
                trusted.path.display()
            ));
        }
        if let Some(revoked) = &policy.revoked {
            full.push("-c".into());
            full.push(format!("gpg.ssh.revocationFile={}", revoked.path.display()));
        }
    }
    full.extend(args.iter().map(|a| (*a).to_owned()));
    let cannot = |message: String| SourceError::Git {
        url: dir.display().to_string(),
        message,
        hint: String::new(),
    };
    let mut command = git
        .command(&full)
        .map_err(|err| cannot(format!("cannot run git: {err}")))?;
    command
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = command
        .output()
        .map_err(|err| cannot(format!("cannot run git: {err}")))?;
    let mut said = String::from_utf8_lossy(&output.stdout).into_owned();
    if signers {
        said.push_str(&String::from_utf8_lossy(&output.stderr));
    } else if !output.status.success() {
        return Err(cannot(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok((said, output.status.success()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_s_signature_is_its_gpgsig_header() {
        let commit = "tree 1\nparent 2\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NI\n \n -----END SSH SIGNATURE-----\n\nmessage\n";
        assert_eq!(
            commit_signature(commit).as_deref(),
            Some("-----BEGIN SSH SIGNATURE-----\nU1NI\n\n-----END SSH SIGNATURE-----\n")
        );
        assert_eq!(commit_signature("tree 1\n\ngpgsig in the message\n"), None);
        assert!(
            tag_signature(
                "object 1\ntype commit\ntag v1\n\nv1\n-----BEGIN PGP SIGNATURE-----\nx\n"
            )
            .is_some()
        );
        assert_eq!(tag_signature("object 1\ntype commit\ntag v1\n\nv1\n"), None);
    }

    #[test]
    fn gpg_status_lines_name_the_signer_or_say_why_not() {
        let good = "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 4B7B50831032EEFA Carol <carol@example.com>\n[GNUPG:] VALIDSIG 356F1D5C18B9EA04CAE0E27D4B7B50831032EEFA 2026-11-28 1795845136 0 4 0 22 8 00 356F1D5C18B9EA04CAE0E27D4B7B50831032EEFA\n";
        assert_eq!(
            openpgp(good, true, SignedObject::Commit),
            Check::Trusted(Signer {
                format: SignatureFormat::Openpgp,
                key: "356F1D5C18B9EA04CAE0E27D4B7B50831032EEFA".into(),
                principal: "Carol <carol@example.com>".into(),
                object: SignedObject::Commit,
            })
        );
        let unknown = "[GNUPG:] ERRSIG 4B7B50831032EEFA 22 8 00 1795845136 9 356F1D5C18B9EA04CAE0E27D4B7B50831032EEFA\n[GNUPG:] NO_PUBKEY 4B7B50831032EEFA\n";
        let Check::Untrusted { key, why, .. } = openpgp(unknown, false, SignedObject::Commit)
        else {
            panic!("an unknown key is not trusted");
        };
        assert_eq!(key, "356F1D5C18B9EA04CAE0E27D4B7B50831032EEFA");
        assert_eq!(why, Untrusted::Unknown);
        let revoked = "[GNUPG:] REVKEYSIG 4B7B50831032EEFA Carol <carol@example.com>\n[GNUPG:] VALIDSIG 356F 2026 1 0 4 0 22 8 00 356F1D5C18B9EA04CAE0E27D4B7B50831032EEFA\n";
        let Check::Untrusted { why, principal, .. } = openpgp(revoked, false, SignedObject::Tag)
        else {
            panic!("a revoked key is not trusted");
        };
        assert_eq!(why, Untrusted::Revoked);
        assert_eq!(principal.as_deref(), Some("Carol <carol@example.com>"));
    }
}
