//! SSH signatures (`sshsig`, as `ssh-keygen -Y sign` makes them): checked
//! and made by the user's `ssh-keygen` (OpenSSH, which git runs for its own
//! SSH signatures too), with an allowed-signers file saying whose keys
//! count. Nothing cryptographic is done here: the signature's armor is only
//! opened to name its key (the fingerprint `ssh-keygen -l` prints) when
//! `ssh-keygen` will not, and revoked-key lists are read for the same
//! reason.

use std::path::Path;
use std::process::Stdio;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest, Sha256};

use crate::lock::{SignatureFormat, SignedObject, Signer};
use crate::program::{Program, ProgramError, SearchEnv};

use super::{Check, Policy, Untrusted};
use crate::sources::SourceError;

/// The namespace of an index's signature (`ssh-keygen -Y sign -n`): a
/// signature made for something else (a git commit is signed in the
/// namespace `git`) is not one of an index.
pub const INDEX_NAMESPACE: &str = "agent-skills-index";

const BEGIN: &str = "-----BEGIN SSH SIGNATURE-----";
const END: &str = "-----END SSH SIGNATURE-----";

/// Finds the user's `ssh-keygen`.
pub fn find(search: &SearchEnv) -> Result<Program, SourceError> {
    Program::find("ssh-keygen", search).map_err(|err| match err {
        ProgramError::NotInPath { .. } | ProgramError::NoPath => SourceError::Usage(
            "the `ssh-keygen` program (OpenSSH) was not found: install OpenSSH (it comes with git for Windows and with Windows itself) and make sure it is on PATH".into(),
        ),
        other => SourceError::Usage(format!("cannot run ssh-keygen: {other}")),
    })
}

/// The key of an armored SSH signature: its fingerprint (`SHA256:…`) and
/// type (`ssh-ed25519`); `None` when the text holds no readable signature.
pub fn key_of(armored: &str) -> Option<(String, String)> {
    let start = armored.find(BEGIN)? + BEGIN.len();
    let end = start + armored[start..].find(END)?;
    let text: String = armored[start..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let blob = STANDARD.decode(text).ok()?;
    let rest = blob.strip_prefix(b"SSHSIG")?;
    let (_version, rest) = rest.split_at_checked(4)?;
    let (key, _) = string(rest)?;
    let (kind, _) = string(key)?;
    Some((fingerprint(key), String::from_utf8_lossy(kind).into_owned()))
}

/// `SHA256:` and the unpadded base64 of the SHA-256 of a public key's
/// blob, as `ssh-keygen -l` prints it.
pub fn fingerprint(blob: &[u8]) -> String {
    format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(blob)))
}

/// One SSH `string` (a 32-bit length, then the bytes) and what follows.
fn string(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_at_checked(4)?;
    let len = u32::from_be_bytes(len.try_into().ok()?) as usize;
    rest.split_at_checked(len)
}

/// The fingerprints of the public keys a revoked-keys file lists (one
/// `TYPE BASE64 [COMMENT]` per line, as `.pub` files hold them). A KRL
/// (binary) lists none here; `ssh-keygen` still reads it.
pub fn revoked_keys(path: &Path) -> Vec<String> {
    let Ok(text) = crate::disk::read_text(path, 4 * 1024 * 1024) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if let Ok(blob) = STANDARD.decode(pair[1])
                && string(&blob).is_some_and(|(kind, _)| kind == pair[0].as_bytes())
            {
                out.push(fingerprint(&blob));
            }
        }
    }
    out
}

/// The principal and fingerprint in `ssh-keygen`'s `Good "NS" signature
/// for PRINCIPAL with TYPE key SHA256:…` line (git prints the same with
/// `--raw`); the principal is `None` in the line of a key no principal
/// matched (`Good "NS" signature with …`).
pub fn good_line(output: &str) -> Option<(Option<String>, String)> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("Good \"")?;
        let rest = &rest[rest.find("\" signature ")? + "\" signature ".len()..];
        let key = rest[rest.rfind(" key ")? + " key ".len()..]
            .trim()
            .to_owned();
        let principal = rest
            .strip_prefix("for ")
            .and_then(|r| r.rfind(" with ").map(|at| r[..at].to_owned()));
        key.starts_with("SHA256:").then_some((principal, key))
    })
}

/// Why `ssh-keygen` (or git running it) did not accept a signature by
/// `key`, from what it said.
pub fn why_not(output: &str, key: &str, policy: &Policy) -> Untrusted {
    if let Some(revoked) = &policy.revoked
        && revoked_keys(&revoked.path).iter().any(|k| k == key)
    {
        return Untrusted::Revoked;
    }
    let lower = output.to_ascii_lowercase();
    if lower.contains("allowedsignersfile needs to be configured") {
        return Untrusted::NoSigners;
    }
    if let Some(line) = output
        .lines()
        .find(|l| l.contains("key has expired") || l.contains("key is not yet valid"))
    {
        // `FILE:LINE: key has expired: verify time … > valid-before …`
        let reason = line.find("key ").map_or(line, |at| &line[at..]);
        return Untrusted::Expired(reason.trim().to_owned());
    }
    if lower.contains("no principal matched") {
        return Untrusted::Unknown;
    }
    let reason = output
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("Good "))
        .unwrap_or("ssh-keygen did not accept it")
        .to_owned();
    Untrusted::Bad(reason)
}

/// Checks `signature` (armored `sshsig`) over the file `data` with
/// `ssh-keygen`, in the namespace [`INDEX_NAMESPACE`], against the
/// policy's allowed signers: who signed it, or why they are not trusted.
pub fn check_index(
    keygen: &Program,
    data: &Path,
    signature: &Path,
    armored: &str,
    policy: &Policy,
) -> Result<Check, SourceError> {
    let Some((key, _)) = key_of(armored) else {
        return Ok(Check::Untrusted {
            format: SignatureFormat::Ssh,
            key: String::new(),
            principal: None,
            object: SignedObject::Index,
            why: Untrusted::Bad("index.json.sig is not an SSH signature".into()),
        });
    };
    let untrusted = |principal: Option<String>, why| Check::Untrusted {
        format: SignatureFormat::Ssh,
        key: key.clone(),
        principal,
        object: SignedObject::Index,
        why,
    };
    let sig = path_arg(signature);
    // Whether the signature is good at all, whoever made it.
    let novalidate = run(
        keygen,
        &["-Y", "check-novalidate", "-n", INDEX_NAMESPACE, "-s", &sig],
        Some(data),
    )?;
    if !novalidate.0 {
        return Ok(untrusted(None, why_not(&novalidate.1, &key, policy)));
    }
    let Some(trusted) = &policy.trusted else {
        return Ok(untrusted(None, Untrusted::NoSigners));
    };
    let signers = path_arg(&trusted.path);
    let found = run(
        keygen,
        &["-Y", "find-principals", "-s", &sig, "-f", &signers],
        None,
    )?;
    let principals: Vec<&str> = if found.0 {
        found
            .1
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    } else {
        Vec::new()
    };
    if principals.is_empty() {
        let why = match why_not(&found.1, &key, policy) {
            Untrusted::Bad(_) => Untrusted::Unknown,
            other => other,
        };
        return Ok(untrusted(None, why));
    }
    let mut last = String::new();
    for principal in &principals {
        let mut args = vec![
            "-Y",
            "verify",
            "-f",
            &signers,
            "-I",
            principal,
            "-n",
            INDEX_NAMESPACE,
            "-s",
            &sig,
        ];
        let revoked = policy.revoked.as_ref().map(|r| path_arg(&r.path));
        if let Some(revoked) = &revoked {
            args.extend(["-r", revoked]);
        }
        let (ok, output) = run(keygen, &args, Some(data))?;
        if ok {
            let key = good_line(&output).map_or(key.clone(), |(_, key)| key);
            return Ok(Check::Trusted(Signer {
                format: SignatureFormat::Ssh,
                key,
                principal: (*principal).to_owned(),
                object: SignedObject::Index,
            }));
        }
        last = output;
    }
    Ok(untrusted(
        principals.first().map(|p| (*p).to_owned()),
        why_not(&last, &key, policy),
    ))
}

/// Signs `file` with `key` (a private key, or a public key whose private
/// half the SSH agent holds) into `file.sig`, in the index's namespace.
/// ssh-keygen may ask for the key's passphrase on the terminal.
pub fn sign(keygen: &Program, key: &Path, file: &Path) -> Result<(), SourceError> {
    let mut command = keygen
        .command(&[
            "-Y",
            "sign",
            "-q",
            "-f",
            &path_arg(key),
            "-n",
            INDEX_NAMESPACE,
            &path_arg(file),
        ])
        .map_err(|err| SourceError::Usage(format!("cannot run ssh-keygen: {err}")))?;
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    let output = command
        .output()
        .map_err(|err| SourceError::Usage(format!("cannot run ssh-keygen: {err}")))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Err(SourceError::Usage(format!(
        "--sign {}: ssh-keygen could not sign the index: {}",
        key.display(),
        if said.is_empty() {
            format!("it exited with {}", output.status)
        } else {
            said
        }
    )))
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Runs ssh-keygen with `args` (and `stdin` from a file): whether it
/// succeeded, and what it printed (stdout, then stderr).
fn run(
    keygen: &Program,
    args: &[&str],
    stdin: Option<&Path>,
) -> Result<(bool, String), SourceError> {
    let cannot = |err: String| SourceError::Usage(format!("cannot run ssh-keygen: {err}"));
    let mut command = keygen.command(args).map_err(|e| cannot(e.to_string()))?;
    let input = match stdin {
        Some(path) => Stdio::from(
            crate::disk::open_regular(path, u64::MAX)
                .map_err(|e| cannot(e.to_string()))?
                .0,
        ),
        None => Stdio::null(),
    };
    command
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = command.output().map_err(|e| cannot(e.to_string()))?;
    let mut said = String::from_utf8_lossy(&output.stdout).into_owned();
    said.push_str(&String::from_utf8_lossy(&output.stderr));
    Ok((output.status.success(), said))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A git tag's signature (`ssh-keygen -Y sign -n git`, through git).
    const SIGNATURE: &str = "-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgvAmptBwkd1Ec6+0HY4SPMwLZCA
sRRQh71CdCaE6HMDMAAAADZ2l0AAAAAAAAAAZzaGE1MTIAAABTAAAAC3NzaC1lZDI1NTE5
AAAAQMNitsZk6IPYgwcytLmMhMF4iqvWIakTGjzjv1EdeZWphudqYaxwwv8kGutdEw+mw+
PNwbr4BS23wWzfPqn0YgE=
-----END SSH SIGNATURE-----
";

    #[test]
    fn a_signature_names_its_key_as_ssh_keygen_does() {
        assert_eq!(
            key_of(SIGNATURE),
            Some((
                "SHA256:Urfzw/a4Gz01I8Qthzw9h//DH3nDbXPw+RyDeEvRUYs".to_owned(),
                "ssh-ed25519".to_owned()
            ))
        );
        assert_eq!(
            key_of("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----"),
            None
        );
        assert_eq!(key_of("no signature"), None);
    }

    #[test]
    fn good_lines_give_principal_and_key() {
        assert_eq!(
            good_line("Good \"git\" signature for alice@example.com with ED25519 key SHA256:abc\n"),
            Some((Some("alice@example.com".into()), "SHA256:abc".into()))
        );
        assert_eq!(
            good_line(
                "Good \"git\" signature with ED25519 key SHA256:abc\nNo principal matched.\n"
            ),
            Some((None, "SHA256:abc".into()))
        );
        assert_eq!(good_line("Could not verify signature.\n"), None);
    }
}
