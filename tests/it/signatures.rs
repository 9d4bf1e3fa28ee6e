//! Signatures of sources (behaviour.md, "Signatures"), through the real
//! binary, with real keys made here: SSH keys (`ssh-keygen -t ed25519`)
//! signing git commits and tags and a published index (`publish --sign`),
//! checked against allowed-signers files; OpenPGP keys (`gpg
//! --quick-gen-key` in a temporary `GNUPGHOME`) checked against the
//! keyring. The signer is recorded in the lock, shown wherever provenance
//! is, and a change of signer needs `--allow-signer-change`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Fixture, Server, text};
use crate::sources::{
    StaticHost, commit, expect, git, lock_text, nothing_written, run, sources_env, team_skills,
    upstream,
};

/// An SSH key made for the test: its private key file, public key line
/// and fingerprint as `ssh-keygen -l` prints it.
pub(crate) struct Key {
    pub(crate) private: PathBuf,
    pub(crate) public: String,
    pub(crate) fingerprint: String,
}

impl Key {
    /// A new ed25519 key without a passphrase, in `keys/NAME`.
    pub(crate) fn new(fixture: &Fixture, name: &str) -> Key {
        let dir = fixture.path("keys");
        std::fs::create_dir_all(&dir).unwrap();
        let private = dir.join(name);
        tool(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                .arg(&private),
        );
        let public = std::fs::read_to_string(private.with_extension("pub"))
            .unwrap()
            .trim()
            .to_owned();
        let listed = tool(
            Command::new("ssh-keygen")
                .arg("-lf")
                .arg(private.with_extension("pub")),
        );
        let fingerprint = listed.split_whitespace().nth(1).unwrap().to_owned();
        assert!(fingerprint.starts_with("SHA256:"), "{listed}");
        Key {
            private,
            public,
            fingerprint,
        }
    }

    /// `principal [options] key`: a line of an allowed-signers file.
    pub(crate) fn allowed(&self, principal: &str, options: &str) -> String {
        let key = self
            .public
            .rsplit_once(' ')
            .map_or(&*self.public, |(k, _)| k);
        if options.is_empty() {
            format!("{principal} {key}\n")
        } else {
            format!("{principal} {options} {key}\n")
        }
    }
}

/// Runs a tool that must succeed; its stdout.
fn tool(command: &mut Command) -> String {
    let output = command.output().expect("the tool runs");
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Signs the upstream repository's next commits (and tags) with `key`
/// (`None`: no signature).
fn sign_with(fixture: &Fixture, key: Option<&Key>) {
    let repo = fixture.path("upstream");
    git(fixture, &repo, &["config", "gpg.format", "ssh"]);
    match key {
        Some(key) => {
            git(
                fixture,
                &repo,
                &["config", "user.signingkey", key.private.to_str().unwrap()],
            );
            git(fixture, &repo, &["config", "commit.gpgsign", "true"]);
        }
        None => {
            git(fixture, &repo, &["config", "commit.gpgsign", "false"]);
        }
    }
}

/// An upstream repository (see `sources::upstream`) whose first commit
/// `key` signed; its URL and commit.
fn signed_upstream(fixture: &Fixture, key: Option<&Key>) -> (String, String) {
    let repo = fixture.path("upstream");
    std::fs::create_dir_all(&repo).unwrap();
    git(
        fixture,
        &repo,
        &["init", "--quiet", "--initial-branch", "main"],
    );
    sign_with(fixture, key);
    let url = upstream(fixture);
    let head = git(fixture, &repo, &["rev-parse", "HEAD"]);
    (url, head)
}

fn read(fixture: &Fixture, relative: &str) -> String {
    std::fs::read_to_string(fixture.path(relative)).unwrap()
}

#[tokio::test]
async fn a_signed_commit_is_recorded_and_its_signer_shown_wherever_provenance_is() {
    let fixture = Fixture::empty();
    let alice = Key::new(&fixture, "alice");
    let allowed = fixture.write(
        "keys/allowed_signers",
        &alice.allowed("alice@example.com", ""),
    );
    let (url, head) = signed_upstream(&fixture, Some(&alice));
    let signed_by = format!("alice@example.com ({})", alice.fingerprint);

    let out = expect(
        &fixture,
        &[
            "add",
            &url,
            "--trusted-signers",
            "keys/allowed_signers",
            "--require-signature",
            "--yes",
        ],
        0,
    );
    assert!(
        out.stdout.starts_with(&format!(
            "Source: {url} (the default branch, commit {})\nSigned-by: {signed_by}\n\n2 skills to install",
            &head[..12]
        )),
        "{}",
        out.stdout
    );
    let lock = lock_text(&fixture).unwrap();
    for line in [
        format!("trusted_signers = \"{}\"\n", allowed.display()),
        "require_signature = true\n".to_owned(),
        format!(
            "signed_by = {{ format = \"ssh\", key = \"{}\", principal = \"alice@example.com\", object = \"commit\" }}\n",
            alice.fingerprint
        ),
    ] {
        assert!(lock.contains(&line), "{line} in\n{lock}");
    }

    let out = expect(&fixture, &["sources"], 0);
    assert!(
        out.stdout.contains(&format!("  {signed_by}  20")),
        "{}",
        out.stdout
    );
    let out = expect(&fixture, &["sources", "--json"], 0);
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        listed[0]["signed_by"],
        serde_json::json!({"format": "ssh", "key": alice.fingerprint,
                           "principal": "alice@example.com", "object": "commit"})
    );
    assert_eq!(listed[0]["require_signature"], true);
    let bare = ["--no-project", "--no-user", "--no-plugins"];
    let out = expect(&fixture, &[&["list"][..], &bare].concat(), 0);
    assert!(
        out.stdout.contains(&format!(
            "    from source 'upstream': {url}@{head} (skills/pdf), signed by {signed_by}\n"
        )),
        "{}",
        out.stdout
    );
    let out = expect(&fixture, &[&["list", "--json"][..], &bare].concat(), 0);
    let list: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        list[0]["installed"]["signed_by"]["key"],
        alice.fingerprint.as_str()
    );

    // The `skill` tool's header and `skills/list`, on both protocols.
    for v2026 in [false, true] {
        let mut command = fixture.command(&bare);
        sources_env(&fixture, &mut command);
        let server = if v2026 {
            Server::start_2026(command).await
        } else {
            Server::start(command).await
        };
        let answer = server.call("pdf").await;
        assert!(
            text(&answer).contains(&format!(
                "\nSource: {url}@{head}\nSigned-by: {signed_by}\n\n---\n"
            )),
            "{}",
            text(&answer)
        );
        let skills = server.client.list_skills(None).await.unwrap();
        let pdf = skills.skills.iter().find(|s| s.name() == "pdf").unwrap();
        let meta = serde_json::to_value(pdf.meta.as_ref().unwrap()).unwrap();
        assert_eq!(
            meta["io.github.skillserve/source"]["signed_by"],
            serde_json::json!({"format": "ssh", "key": alice.fingerprint,
                               "principal": "alice@example.com", "object": "commit"}),
            "{meta}"
        );
        server.stop().await;
    }

    // The skills app's catalog: the same signer in the row's provenance.
    let mut command = fixture.command(&bare);
    sources_env(&fixture, &mut command);
    let server = Server::start_ui(command, true).await;
    let page = server
        .client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("app_catalog".to_owned())
                .with_arguments(serde_json::Map::new()),
        )
        .await
        .unwrap();
    let page = page.structured_content.expect("a catalog page");
    let pdf = page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pdf")
        .unwrap_or_else(|| panic!("{page}"));
    assert_eq!(
        pdf["provenance"]["signed_by"],
        serde_json::json!({"format": "ssh", "key": alice.fingerprint,
                           "principal": "alice@example.com", "object": "commit"}),
        "{pdf}"
    );
    server.stop().await;
}

#[test]
fn an_unsigned_source_or_an_unknown_signer_is_refused_naming_the_key() {
    let fixture = Fixture::empty();
    let alice = Key::new(&fixture, "alice");
    let bob = Key::new(&fixture, "bob");
    let allowed = fixture.write(
        "keys/allowed_signers",
        &alice.allowed("alice@example.com", ""),
    );
    let (url, head) = signed_upstream(&fixture, None);
    let add = [
        "add",
        &url,
        "--trusted-signers",
        "keys/allowed_signers",
        "--require-signature",
        "--yes",
    ];

    let out = expect(&fixture, &add, 1);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {url} at commit {}: the commit is not signed; a signature by a trusted signer is required (require_signature of source 'upstream'); ask its publisher to sign it; nothing was changed\n",
            &head[..12]
        )
    );
    nothing_written(&fixture);

    // Signed by bob, whom the allowed signers do not list.
    sign_with(&fixture, Some(&bob));
    fixture.write("upstream/skills/pdf/more.md", "more\n");
    let second = commit(&fixture, "by bob");
    let out = expect(&fixture, &add, 1);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {url} at commit {}: the commit is signed by {}, a key {} does not list; a signature by a trusted signer is required (require_signature of source 'upstream'); if you trust this key, add a line for it to {} (trusted_signers of source 'upstream'); nothing was changed\n",
            &second[..12],
            bob.fingerprint,
            allowed.display(),
            allowed.display()
        )
    );
    nothing_written(&fixture);

    // The same, required by config.toml for every source.
    fixture.write(
        "config/skillserve/config.toml",
        &format!(
            "trusted_signers = \"{}\"\nrequire_signature = true\n",
            allowed.display()
        ),
    );
    let out = expect(&fixture, &["add", &url, "--yes"], 1);
    assert!(
        out.stderr.contains(&format!(
            "the commit is signed by {}, a key {} does not list; a signature by a trusted signer is required (require_signature at config.toml:2); if you trust this key, add a line for it to {} (trusted_signers at config.toml:1)",
            bob.fingerprint,
            allowed.display(),
            allowed.display()
        )),
        "{}",
        out.stderr
    );
    nothing_written(&fixture);
    let out = expect(&fixture, &["config"], 0);
    assert!(
        out.stdout
            .contains("\n  require_signature    true                         config.toml:2\n"),
        "{}",
        out.stdout
    );

    // Without a requirement it is installed; the plan says who signed, and
    // the lock records no signer.
    std::fs::remove_file(fixture.path("config/skillserve/config.toml")).unwrap();
    let out = expect(
        &fixture,
        &[
            "add",
            &url,
            "--trusted-signers",
            "keys/allowed_signers",
            "--yes",
        ],
        0,
    );
    assert!(
        out.stdout.contains(&format!(
            "\nSignature: the commit is signed by {}, a key {} does not list (not required)\n",
            bob.fingerprint,
            allowed.display()
        )),
        "{}",
        out.stdout
    );
    assert!(!lock_text(&fixture).unwrap().contains("signed_by"));
}

#[test]
fn bad_signatures_and_expired_or_revoked_keys_are_refused() {
    let fixture = Fixture::empty();
    let alice = Key::new(&fixture, "alice");
    fixture.write(
        "keys/allowed_signers",
        &alice.allowed("alice@example.com", ""),
    );
    fixture.write(
        "keys/expired_signers",
        &alice.allowed("alice@example.com", "valid-before=\"20200101\""),
    );
    let revoked = fixture.write("keys/revoked", &format!("{}\n", alice.public));
    let (url, head) = signed_upstream(&fixture, Some(&alice));
    let repo = fixture.path("upstream");

    // Expired in the allowed-signers file: refused where a signature is
    // required, named with the reason ssh-keygen gives.
    let out = expect(
        &fixture,
        &[
            "add",
            &url,
            "--trusted-signers",
            "keys/expired_signers",
            "--require-signature",
            "--yes",
        ],
        1,
    );
    assert!(
        out.stderr.starts_with(&format!(
            "skillserve: {url} at commit {}: the commit is signed by {}, but the key has expired: verify time ",
            &head[..12],
            alice.fingerprint
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("> valid-before 2020-01-01T00:00:00"),
        "{}",
        out.stderr
    );
    nothing_written(&fixture);

    // Revoked: refused even where no signature is required.
    let out = expect(
        &fixture,
        &[
            "add",
            &url,
            "--trusted-signers",
            "keys/allowed_signers",
            "--revoked-signers",
            "keys/revoked",
            "--yes",
        ],
        1,
    );
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {url} at commit {}: the commit is signed by {}, a key revoked in {}; the key may no longer be used; ask the publisher which key signs now; nothing was changed\n",
            &head[..12],
            alice.fingerprint,
            revoked.display()
        )
    );
    nothing_written(&fixture);

    // A signature made over other bytes: alice's signature of the first
    // commit on a commit whose message was changed afterwards.
    let object = git(&fixture, &repo, &["cat-file", "commit", &head]);
    let forged = object.replace("\n\nfirst", "\n\nfirst, changed");
    fixture.write("forged.txt", &format!("{forged}\n"));
    let forged_id = git(
        &fixture,
        &repo,
        &[
            "hash-object",
            "-t",
            "commit",
            "-w",
            fixture.path("forged.txt").to_str().unwrap(),
        ],
    );
    git(
        &fixture,
        &repo,
        &["update-ref", "refs/heads/main", &forged_id],
    );
    let out = expect(
        &fixture,
        &[
            "add",
            &url,
            "--trusted-signers",
            "keys/allowed_signers",
            "--yes",
        ],
        1,
    );
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {url} at commit {}: the signature by {} does not verify (Signature verification failed: incorrect signature): it was not made over these bytes; the signed bytes were changed after signing, or the signature is damaged; nothing was changed\n",
            &forged_id[..12],
            alice.fingerprint
        )
    );
    nothing_written(&fixture);
}

#[test]
fn a_signed_tag_counts_for_the_commit_it_names_and_its_signer_is_checked() {
    let fixture = Fixture::empty();
    let alice = Key::new(&fixture, "alice");
    let bob = Key::new(&fixture, "bob");
    fixture.write(
        "keys/allowed_signers",
        &alice.allowed("alice@example.com", ""),
    );
    // The commit is not signed; the tag v1 is, by alice.
    let (url, head) = signed_upstream(&fixture, None);
    let repo = fixture.path("upstream");
    sign_with(&fixture, Some(&alice));
    git(
        &fixture,
        &repo,
        &["-c", "commit.gpgsign=false", "tag", "-s", "-m", "v1", "v1"],
    );
    // v2 is signed by bob, on a commit alice signed: the tag counts.
    fixture.write("upstream/skills/docx/more.md", "more\n");
    let second = commit(&fixture, "by alice");
    sign_with(&fixture, Some(&bob));
    git(&fixture, &repo, &["tag", "-s", "-m", "v2", "v2"]);
    // v3 is a lightweight tag on that commit: the commit counts.
    git(&fixture, &repo, &["tag", "v3"]);

    let required = |reference: &str| {
        run(
            &fixture,
            &[
                "add",
                &url,
                "--ref",
                reference,
                "--id",
                reference,
                "--trusted-signers",
                "keys/allowed_signers",
                "--require-signature",
                "--yes",
            ],
        )
    };
    let out = required("v1");
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stdout.starts_with(&format!(
            "Source: {url} (v1, commit {})\nSigned-by: alice@example.com ({})\n",
            &head[..12],
            alice.fingerprint
        )),
        "{}",
        out.stdout
    );
    assert!(lock_text(&fixture).unwrap().contains("object = \"tag\""));

    let out = required("v2");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.starts_with(&format!(
            "skillserve: {url} at tag v2 (commit {}): the tag is signed by {}, a key ",
            &second[..12],
            bob.fingerprint
        )),
        "{}",
        out.stderr
    );

    let out = required("v3");
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "\nSigned-by: alice@example.com ({})\n",
            alice.fingerprint
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn update_refuses_a_new_signer_unless_told_the_publisher_changed_keys() {
    let fixture = Fixture::empty();
    let alice = Key::new(&fixture, "alice");
    let bob = Key::new(&fixture, "bob");
    fixture.write(
        "keys/allowed_signers",
        &format!(
            "{}{}",
            alice.allowed("alice@example.com", ""),
            bob.allowed("bob@example.com", "")
        ),
    );
    let (url, _) = signed_upstream(&fixture, Some(&alice));
    expect(
        &fixture,
        &[
            "add",
            &url,
            "--trusted-signers",
            "keys/allowed_signers",
            "--yes",
        ],
        0,
    );
    let before = lock_text(&fixture).unwrap();

    sign_with(&fixture, Some(&bob));
    fixture.write("upstream/skills/pdf/more.md", "more\n");
    commit(&fixture, "by bob");
    let out = expect(&fixture, &["update", "--check"], 10);
    assert!(
        out.stdout.contains(&format!(
            "  signer changed: bob@example.com ({}) (was alice@example.com ({}))\n",
            bob.fingerprint, alice.fingerprint
        )),
        "{}",
        out.stdout
    );
    let out = expect(&fixture, &["update", "--yes"], 1);
    assert!(
        out.stderr.ends_with(&format!(
            "skillserve: the new version of source 'upstream' is signed by bob@example.com ({}), but alice@example.com ({}) signed what is installed; nothing was changed: if its publisher changed keys, run `skillserve update upstream --allow-signer-change`\n",
            bob.fingerprint, alice.fingerprint
        )),
        "{}",
        out.stderr
    );
    assert_eq!(lock_text(&fixture).unwrap(), before);

    // An unsigned new version is a change of signer too.
    sign_with(&fixture, None);
    fixture.write("upstream/skills/pdf/more.md", "even more\n");
    commit(&fixture, "unsigned");
    let out = expect(&fixture, &["update", "--yes"], 1);
    assert!(
        out.stderr
            .contains("is not signed by a trusted signer, but alice@example.com"),
        "{}",
        out.stderr
    );
    sign_with(&fixture, Some(&bob));
    fixture.write("upstream/skills/pdf/more.md", "more, by bob\n");
    commit(&fixture, "by bob again");

    expect(&fixture, &["update", "--yes", "--allow-signer-change"], 0);
    let lock = lock_text(&fixture).unwrap();
    let bob_signed = format!(
        "key = \"{}\", principal = \"bob@example.com\"",
        bob.fingerprint
    );
    assert!(lock.contains(&bob_signed), "{lock}");

    // `sync` checks the signer the lock records too: a lock that says
    // alice signed what bob signed installs nothing.
    let alice_signed = format!(
        "key = \"{}\", principal = \"alice@example.com\"",
        alice.fingerprint
    );
    std::fs::write(
        fixture.path("config/skillserve/sources.lock"),
        lock.replace(&bob_signed, &alice_signed),
    )
    .unwrap();
    let digest = crate::sources::locked_digest(&fixture, "pdf");
    let entry = crate::sources::store(&fixture).join(&digest["sha256:".len()..]);
    Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&entry)
        .status()
        .unwrap();
    std::fs::remove_dir_all(&entry).unwrap();
    let out = expect(&fixture, &["sync"], 1);
    assert!(
        out.stdout.contains(&format!(
            "): refused skill 'pdf': the lock records alice@example.com ({}) as its signer, but what {url} serves now is signed by bob@example.com ({})\n",
            alice.fingerprint, bob.fingerprint
        )),
        "{}",
        out.stdout
    );
    assert!(!entry.exists());
}

#[test]
fn a_published_index_signed_with_publish_sign_is_checked_against_the_allowed_signers() {
    let fixture = Fixture::empty();
    let alice = Key::new(&fixture, "alice");
    let bob = Key::new(&fixture, "bob");
    fixture.write(
        "keys/allowed_signers",
        &alice.allowed("alice@example.com", ""),
    );
    team_skills(&fixture);
    let key = alice.private.to_str().unwrap().to_owned();
    let out = expect(
        &fixture,
        &["publish", "team", "--out", "site", "--sign", &key],
        0,
    );
    assert!(
        out.stdout.contains(&format!(
            "\nSigned index.json with {key} (index.json.sig); clients check it against their allowed signers (`add --trusted-signers FILE`).\n"
        )),
        "{}",
        out.stdout
    );
    let well_known = fixture.path("site/.well-known/agent-skills");
    // What ssh-keygen itself says of the signature.
    let verified = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-f"])
        .arg(fixture.path("keys/allowed_signers"))
        .args(["-I", "alice@example.com", "-n", "agent-skills-index", "-s"])
        .arg(well_known.join("index.json.sig"))
        .stdin(std::fs::File::open(well_known.join("index.json")).unwrap())
        .output()
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );

    let host = StaticHost::start(fixture.path("site"));
    let index_url = format!("{}/.well-known/agent-skills/index.json", host.url());
    let add = |extra: &[&str]| {
        let mut args = vec![
            "add",
            index_url.as_str(),
            "--trusted-signers",
            "keys/allowed_signers",
            "--require-signature",
            "--yes",
        ];
        args.extend_from_slice(extra);
        run(&fixture, &args)
    };
    let out = add(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "\nSigned-by: alice@example.com ({})\n",
            alice.fingerprint
        )),
        "{}",
        out.stdout
    );
    assert!(lock_text(&fixture).unwrap().contains("object = \"index\""));
    let id = format!("127-0-0-1-{}", host.url().rsplit(':').next().unwrap());
    expect(&fixture, &["remove", &id, "--yes"], 0);
    let unchanged = lock_text(&fixture);
    let nothing_written = |fixture: &Fixture| {
        assert_eq!(lock_text(fixture), unchanged);
        assert_eq!(crate::sources::entries(fixture), Vec::<String>::new());
    };

    // The index changed after signing: the signature is over other bytes.
    let index = read(&fixture, "site/.well-known/agent-skills/index.json");
    std::fs::write(
        well_known.join("index.json"),
        index.replace("Say hello", "Say hi"),
    )
    .unwrap();
    let out = add(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {index_url}: the signature by {} does not verify (Signature verification failed: incorrect signature): it was not made over these bytes; the signed bytes were changed after signing, or the signature is damaged; nothing was changed\n",
            alice.fingerprint
        )
    );
    nothing_written(&fixture);

    // Signed by bob, whom nobody trusts; then not signed at all.
    let bob_key = bob.private.to_str().unwrap().to_owned();
    expect(
        &fixture,
        &["publish", "team", "--out", "site", "--sign", &bob_key],
        0,
    );
    let out = add(&[]);
    assert!(
        out.stderr.contains(&format!(
            ": index.json is signed by {}, a key {} does not list;",
            bob.fingerprint,
            fixture.path("keys/allowed_signers").display()
        )),
        "{}",
        out.stderr
    );
    expect(&fixture, &["publish", "team", "--out", "site"], 0);
    assert!(!well_known.join("index.json.sig").exists());
    let out = add(&[]);
    assert_eq!(
        out.stderr,
        format!(
            "skillserve: {index_url}: index.json is not signed; a signature by a trusted signer is required (require_signature of source '{id}'); ask its publisher to sign it; nothing was changed\n"
        )
    );
    nothing_written(&fixture);
}

/// `gpg` with the keyring in `home`.
fn gpg(home: &Path, args: &[&str]) -> String {
    tool(
        Command::new("gpg")
            .env("GNUPGHOME", home)
            .args(["--batch", "--quiet"])
            .args(args),
    )
}

/// Whether a program is on the PATH.
fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Ends the gpg-agent a keyring started.
struct Agent(PathBuf);

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = Command::new("gpgconf")
            .env("GNUPGHOME", &self.0)
            .args(["--kill", "gpg-agent"])
            .output();
    }
}

#[test]
fn an_openpgp_signed_commit_is_checked_against_the_user_s_keyring() {
    if !has("gpg") {
        // CI's Linux job installs gnupg (.ci/run); elsewhere it may be absent.
        if cfg!(target_os = "linux") {
            panic!("gpg is needed for this test on Linux");
        }
        eprintln!("gpg is not installed: OpenPGP signatures are not tested here");
        return;
    }
    let fixture = Fixture::empty();
    let keyring = fixture.path("gnupg");
    std::fs::create_dir_all(&keyring).unwrap();
    std::fs::set_permissions(
        &keyring,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let _agent = Agent(keyring.clone());
    gpg(
        &keyring,
        &[
            "--passphrase",
            "",
            "--quick-gen-key",
            "Carol <carol@example.com>",
            "ed25519",
            "sign",
            "never",
        ],
    );
    let listed = gpg(&keyring, &["--with-colons", "--list-secret-keys"]);
    let fingerprint = listed
        .lines()
        .find_map(|l| l.strip_prefix("fpr:"))
        .map(|l| l.trim_matches(':').to_owned())
        .unwrap();
    let repo = fixture.path("upstream");
    std::fs::create_dir_all(&repo).unwrap();
    git(
        &fixture,
        &repo,
        &["init", "--quiet", "--initial-branch", "main"],
    );
    git(&fixture, &repo, &["config", "gpg.format", "openpgp"]);
    git(
        &fixture,
        &repo,
        &["config", "user.signingkey", &fingerprint],
    );
    git(&fixture, &repo, &["config", "commit.gpgsign", "true"]);
    signing_keyring(&fixture, &keyring);
    let url = upstream(&fixture);
    let head = git(&fixture, &repo, &["rev-parse", "HEAD"]);

    let add = |home: &Path, extra: &[&str]| {
        let mut args = vec!["add", url.as_str(), "--require-signature", "--yes"];
        args.extend_from_slice(extra);
        let mut command = fixture.command(&args);
        sources_env(&fixture, &mut command);
        command.env("GNUPGHOME", home);
        command.output().unwrap()
    };
    // A keyring without the key: refused, naming its fingerprint.
    let empty = fixture.path("gnupg-empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::set_permissions(&empty, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let _empty_agent = Agent(empty.clone());
    let out = add(&empty, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "skillserve: {url} at commit {}: the commit is signed by OpenPGP key {fingerprint}, which is not in your keyring; a signature by a trusted signer is required (require_signature of source 'upstream'); if you trust this key, import it (gpg --import); nothing was changed\n",
            &head[..12]
        )
    );
    nothing_written(&fixture);

    let out = add(&keyring, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!(
            "\nSigned-by: Carol <carol@example.com> ({fingerprint})\n"
        )),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(lock_text(&fixture).unwrap().contains(&format!(
        "signed_by = {{ format = \"openpgp\", key = \"{fingerprint}\", principal = \"Carol <carol@example.com>\", object = \"commit\" }}"
    )));
    expect(&fixture, &["remove", "upstream", "--yes"], 0);

    // The key revoked in the keyring (its revocation certificate, which
    // gpg wrote when it made the key, imported).
    let certificate = read(
        &fixture,
        &format!("gnupg/openpgp-revocs.d/{fingerprint}.rev"),
    );
    let certificate = certificate.replacen(":-----BEGIN", "-----BEGIN", 1);
    fixture.write("revocation.asc", &certificate);
    gpg(
        &keyring,
        &["--import", fixture.path("revocation.asc").to_str().unwrap()],
    );
    let out = add(&keyring, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            ": the commit is signed by OpenPGP key {fingerprint} (Carol <carol@example.com>), a key revoked in your keyring; the key may no longer be used"
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes git sign the upstream repository's commits through the keyring
/// at `home`: the test's git helper passes no `GNUPGHOME`, so the
/// repository's config names a gpg wrapper that does.
fn signing_keyring(fixture: &Fixture, home: &Path) {
    let wrapper = fixture.write(
        "gpg-with-keyring",
        &format!(
            "#!/bin/sh\nexec env GNUPGHOME='{}' gpg \"$@\"\n",
            home.display()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    git(
        fixture,
        &fixture.path("upstream"),
        &["config", "gpg.openpgp.program", wrapper.to_str().unwrap()],
    );
}
