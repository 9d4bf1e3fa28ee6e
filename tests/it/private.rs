//! Private sources (behaviour.md, "Private sources"), through the real
//! binary: an index behind a token (`--header 'NAME: … $VAR'`) or a netrc
//! password, a git repository behind HTTP Basic authentication reached
//! with the user's credential helper. Every command's output, the server's
//! log and every file skillserve wrote are searched for the secret.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::common::Fixture;
use crate::common::http::HttpServer;
use crate::sources::{
    StaticHost, entries, expect, http_call, lock_text, locked_digest, skill_md, sources_env,
    team_skills,
};

const TOKEN: &str = "s3cret-7f1d0c2a-token";

/// Runs skillserve with `vars` set besides the usual ones; its exit code
/// must be `code`. Returns stdout and stderr together.
fn run_with(fixture: &Fixture, vars: &[(&str, &str)], args: &[&str], code: i32) -> String {
    let mut command = fixture.command(args);
    sources_env(fixture, &mut command);
    for (name, value) in vars {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        output.status.code(),
        Some(code),
        "skillserve {args:?}:\n{text}"
    );
    text
}

/// Every file below `dir` whose bytes hold `secret`.
fn files_holding(dir: &Path, secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_holding(&path, secret));
        } else if let Ok(bytes) = std::fs::read(&path)
            && String::from_utf8_lossy(&bytes).contains(secret)
        {
            out.push(path.display().to_string());
        }
    }
    out
}

/// Nothing skillserve keeps (its config and data folders) holds `secret`.
fn nothing_holds(fixture: &Fixture, secret: &str) {
    for dir in ["config", "data"] {
        assert_eq!(
            files_holding(&fixture.path(dir), secret),
            Vec::<String>::new(),
            "{dir} holds the secret"
        );
    }
}

#[test]
fn a_private_index_is_reached_with_a_header_naming_an_environment_variable() {
    let fixture = Fixture::empty();
    team_skills(&fixture);
    expect(&fixture, &["publish", "team", "--out", "site"], 0);
    let host = StaticHost::start(fixture.path("site"));
    host.require(&format!("authorization: Bearer {TOKEN}"));
    let mut said = String::new();

    // Without credentials: the host's 401, and what to do.
    let out = run_with(&fixture, &[], &["add", &host.url(), "--yes"], 1);
    assert!(
        out.contains("the server answered 401 Unauthorized; it is private: give its credentials with --header 'NAME: VALUE' naming an environment variable ($TOKEN), or --netrc"),
        "{out}"
    );
    // A secret written on the command line would be written to the lock.
    let out = run_with(
        &fixture,
        &[],
        &[
            "add",
            &host.url(),
            "--header",
            &format!("Authorization: Bearer {TOKEN}"),
            "--yes",
        ],
        2,
    );
    assert!(
        out.contains("the value of header `Authorization` must name the environment variable that holds it, as in `Authorization: Bearer $SKILLS_TOKEN`"),
        "{out}"
    );
    said.push_str(&out);
    let header = ["--header", "Authorization: Bearer $SKILLS_TOKEN"];
    let out = run_with(
        &fixture,
        &[],
        &[&["add", &host.url()][..], &header, &["--yes"]].concat(),
        1,
    );
    assert!(
        out.contains("header `Authorization` of ")
            && out.contains(" names $SKILLS_TOKEN, which is not set"),
        "{out}"
    );
    said.push_str(&out);
    // A wrong token: the host's 401, said as such.
    let out = run_with(
        &fixture,
        &[("SKILLS_TOKEN", "wrong")],
        &[&["add", &host.url()][..], &header, &["--yes"]].concat(),
        1,
    );
    assert!(
        out.contains("the credentials sent were not accepted"),
        "{out}"
    );

    let env = [("SKILLS_TOKEN", TOKEN)];
    said.push_str(&run_with(
        &fixture,
        &env,
        &[
            &["add", &host.url(), "--id", "team"][..],
            &header,
            &["--yes"],
        ]
        .concat(),
        0,
    ));
    let lock = lock_text(&fixture).unwrap();
    assert!(
        lock.contains("headers = [\"Authorization: Bearer $SKILLS_TOKEN\"]"),
        "{lock}"
    );
    // The header went to the index's host only with the token.
    assert!(
        host.received()
            .contains(&format!("authorization: Bearer {TOKEN}"))
    );

    // sync and update reuse what add was told, the token read again.
    let digest = locked_digest(&fixture, "hello");
    let entry = fixture
        .path("data/skillserve/store")
        .join(&digest["sha256:".len()..]);
    std::process::Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&entry)
        .status()
        .unwrap();
    std::fs::remove_dir_all(&entry).unwrap();
    let out = run_with(&fixture, &[], &["sync"], 1);
    assert!(
        out.contains("names $SKILLS_TOKEN, which is not set"),
        "{out}"
    );
    said.push_str(&out);
    said.push_str(&run_with(&fixture, &env, &["sync"], 0));
    assert!(entry.is_dir());
    fixture.write(
        "team/hello/SKILL.md",
        &skill_md("hello", "Say hello the team's new way.", "# Hello 2"),
    );
    expect(&fixture, &["publish", "team", "--out", "site"], 0);
    said.push_str(&run_with(&fixture, &env, &["update", "--check"], 10));
    said.push_str(&run_with(&fixture, &env, &["update", "--yes"], 0));
    said.push_str(&run_with(&fixture, &env, &["sources", "--json"], 0));
    said.push_str(&run_with(&fixture, &env, &["sources"], 0));
    said.push_str(&run_with(
        &fixture,
        &[("SKILLS_TOKEN", TOKEN), ("SKILLSERVE_LOG", "trace")],
        &["update", "--yes"],
        0,
    ));

    // auto_update of a team server, the token in the server's environment.
    fixture.write(
        "team/hello/SKILL.md",
        &skill_md("hello", "Say hello the team's third way.", "# Hello 3"),
    );
    expect(&fixture, &["publish", "team", "--out", "site"], 0);
    fixture.write(
        "config/skillserve/config.toml",
        "[sources.team]\nauto_update = \"1s\"\n",
    );
    let mut command = HttpServer::command(&fixture, &["--no-project", "--no-user", "--no-plugins"]);
    sources_env(&fixture, &mut command);
    command
        .env("SKILLS_TOKEN", TOKEN)
        .env("SKILLSERVE_LOG", "debug");
    let server = HttpServer::start_command(command);
    server.wait_until(|server| server.get("/healthz", &[]).status == 200);
    server.wait_until(|server| http_call(server, "hello").contains("third way"));
    said.push_str(&server.log());
    drop(server);

    assert!(!said.contains(TOKEN), "a secret was shown:\n{said}");
    nothing_holds(&fixture, TOKEN);
    assert_eq!(entries(&fixture).len(), 2);
}

#[test]
fn netrc_gives_an_index_its_password_and_a_netrc_others_can_read_is_refused() {
    use base64::Engine;
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::empty();
    team_skills(&fixture);
    expect(&fixture, &["publish", "team", "--out", "site"], 0);
    let host = StaticHost::start(fixture.path("site"));
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("ann:{TOKEN}"));
    host.require(&format!("authorization: Basic {basic}"));
    let netrc = fixture.write(
        "home/.netrc",
        &format!("machine other.example login x password y\nmachine 127.0.0.1\n  login ann\n  password {TOKEN}\n"),
    );
    std::fs::set_permissions(&netrc, std::fs::Permissions::from_mode(0o644)).unwrap();

    let out = run_with(&fixture, &[], &["add", &host.url(), "--netrc", "--yes"], 1);
    assert!(
        out.contains(&format!(
            "--netrc: {} may be read or changed by others (mode 644), so its passwords are not used: run `chmod 600 {}`",
            netrc.display(),
            netrc.display()
        )),
        "{out}"
    );
    let mut said = out;
    std::fs::set_permissions(&netrc, std::fs::Permissions::from_mode(0o600)).unwrap();
    said.push_str(&run_with(
        &fixture,
        &[],
        &["add", &host.url(), "--netrc", "--yes"],
        0,
    ));
    let lock = lock_text(&fixture).unwrap();
    assert!(lock.contains("netrc = true"), "{lock}");
    said.push_str(&run_with(&fixture, &[], &["update", "--yes"], 0));
    // No entry for the host: said, naming the file.
    std::fs::write(&netrc, "machine other.example login x password y\n").unwrap();
    let out = run_with(&fixture, &[], &["update", "--yes"], 1);
    assert!(
        out.contains(&format!(
            "--netrc: {} has no `machine 127.0.0.1` entry (nor a `default` one) with a login and a password",
            netrc.display()
        )),
        "{out}"
    );
    said.push_str(&out);
    assert!(!said.contains(TOKEN), "{said}");
    assert!(!said.contains(&basic), "{said}");
    nothing_holds(&fixture, TOKEN);
    nothing_holds(&fixture, &basic);
}

/// `tests/it/git_http.py`: git's http-backend behind Basic authentication.
struct GitHost {
    child: Child,
    port: u16,
}

impl GitHost {
    fn start(root: &Path, user: &str, password: &str) -> GitHost {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/git_http.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(root)
            .args([user, password])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        GitHost {
            child,
            port: line.trim().parse().expect("the host prints its port"),
        }
    }
}

impl Drop for GitHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_private_git_repository_is_fetched_with_the_user_s_credential_helper() {
    let fixture = Fixture::empty();
    crate::sources::upstream(&fixture);
    let repos = fixture.path("repos");
    std::fs::create_dir_all(&repos).unwrap();
    crate::sources::git(
        &fixture,
        fixture.root(),
        &[
            "clone",
            "--quiet",
            "--bare",
            fixture.path("upstream").to_str().unwrap(),
            repos.join("skills.git").to_str().unwrap(),
        ],
    );
    let host = GitHost::start(&repos, "ann", TOKEN);
    let url = format!("http://127.0.0.1:{}/skills.git", host.port);

    // No credentials: git's own refusal, at once (no prompt), nothing written.
    let out = run_with(&fixture, &[], &["add", &url, "--yes"], 1);
    assert!(
        out.contains(&format!("git could not fetch {url}: ")),
        "{out}"
    );
    assert!(
        out.contains("; the repository is private or your credentials were refused: skillserve fetches with your own git, so set up what `git clone URL` needs"),
        "{out}"
    );
    assert_eq!(lock_text(&fixture), None);
    let mut said = out;

    // The user's credential helper, in their git config, gives the password.
    let store = fixture.write(
        "home/.git-credentials",
        &format!("http://ann:{TOKEN}@127.0.0.1:{}\n", host.port),
    );
    fixture.write(
        "home/.gitconfig",
        &format!(
            "[credential]\n\thelper = store --file {}\n",
            store.display()
        ),
    );
    said.push_str(&run_with(&fixture, &[], &["add", &url, "--yes"], 0));
    let lock = lock_text(&fixture).unwrap();
    assert!(lock.contains(&format!("url = \"{url}\"")), "{lock}");
    said.push_str(&run_with(&fixture, &[], &["update", "--check"], 0));
    let digest = locked_digest(&fixture, "pdf");
    let entry = fixture
        .path("data/skillserve/store")
        .join(&digest["sha256:".len()..]);
    std::process::Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&entry)
        .status()
        .unwrap();
    std::fs::remove_dir_all(&entry).unwrap();
    said.push_str(&run_with(&fixture, &[], &["sync"], 0));
    assert!(entry.is_dir());

    // A URL holding the password is refused: the lock would keep it.
    let with_password = format!("http://ann:{TOKEN}@127.0.0.1:{}/skills.git", host.port);
    let out = run_with(
        &fixture,
        &[],
        &["add", &with_password, "--id", "again", "--yes"],
        1,
    );
    assert!(
        out.contains(&format!(
            "http://127.0.0.1:{}/skills.git: the URL holds a password, which the lock would keep",
            host.port
        )),
        "{out}"
    );
    said.push_str(&out);
    assert!(!said.contains(TOKEN), "{said}");
    nothing_holds(&fixture, TOKEN);
}
