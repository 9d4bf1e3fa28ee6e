//! What the SOURCE of `skillserve add` names: a git repository (GitHub
//! shorthand, a URL git accepts, or a local checkout) or a published index
//! (behaviour.md, "Sources"), and the id a source gets when `--id` is not given.

use std::path::Path;

use crate::config::absolute;
use crate::lock::SourceKind;

use super::SourceError;

/// Where skills are fetched from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub kind: SourceKind,
    /// For git: what `git fetch` is given (a URL, or an absolute path). For
    /// an index: the URL of its `index.json`.
    pub url: String,
}

/// Hosts whose `https://host/owner/repo` URLs are repositories, not sites
/// that publish an index.
const GIT_HOSTS: [&str; 4] = ["github.com", "gitlab.com", "bitbucket.org", "codeberg.org"];

/// The path of the discovery index below a site.
pub const WELL_KNOWN: &str = ".well-known/agent-skills/";

impl Location {
    /// Reads SOURCE; relative paths are taken from `cwd`.
    ///
    /// - `owner/repo` is a GitHub repository (write `./owner/repo` for a
    ///   folder of that name);
    /// - `https://host`, and URLs whose path holds `.well-known/agent-skills`
    ///   or ends in `index.json`, are indexes (`http://` only to this
    ///   machine);
    /// - other `http(s)://` URLs, `ssh://`, `git://`, `file://` URLs and
    ///   `user@host:path` are git repositories;
    /// - anything else must be a folder: a local checkout.
    pub fn parse(source: &str, cwd: &Path) -> Result<Location, SourceError> {
        let unknown = || SourceError::UnknownSource(source.to_owned());
        let source = source.trim();
        if source.is_empty() {
            return Err(unknown());
        }
        if let Some((scheme, rest)) = source.split_once("://") {
            let scheme = scheme.to_ascii_lowercase();
            return match scheme.as_str() {
                "http" | "https" => Ok(web(source, &scheme, rest)),
                "ssh" | "git" | "file" => Ok(git(source)),
                _ => Err(unknown()),
            };
        }
        if is_github_shorthand(source) {
            return Ok(git(&format!("https://github.com/{source}.git")));
        }
        if is_scp_like(source) {
            return Ok(git(source));
        }
        let path = absolute(Path::new(source), cwd);
        if path.is_dir() {
            return Ok(git(&path.to_string_lossy()));
        }
        if path.exists() {
            return Err(SourceError::Usage(format!(
                "{} is a file; give the folder of a git checkout, a git URL, owner/repo or https://host",
                path.display()
            )));
        }
        Err(unknown())
    }

    /// Whether the URL carries a password (`https://user:secret@host/…`),
    /// which a lock must not keep.
    pub fn has_password(&self) -> bool {
        self.userinfo().is_some_and(|info| info.contains(':'))
    }

    /// The URL with its user information (a password) left out, for
    /// messages.
    pub fn redacted(&self) -> String {
        match (self.userinfo(), self.url.split_once("://")) {
            (Some(info), Some((scheme, rest))) => {
                format!("{scheme}://{}", &rest[info.len() + 1..])
            }
            _ => self.url.clone(),
        }
    }

    /// `user[:password]` of a `scheme://user[:password]@host/…` URL.
    fn userinfo(&self) -> Option<&str> {
        let (_, rest) = self.url.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next()?;
        authority.rsplit_once('@').map(|(info, _)| info)
    }

    /// Whether it is a folder of this machine (a local checkout), which
    /// only this machine can fetch.
    pub fn is_local_path(&self) -> bool {
        self.kind == SourceKind::Git && !self.url.contains("://") && !is_scp_like(&self.url)
    }

    /// The id a source gets without `--id`: the repository's name (the last
    /// part of its URL or path, without `.git`), or the index's host with
    /// dots as dashes; lowercase letters, digits, `-` and `_` only.
    pub fn default_id(&self) -> String {
        let raw = match self.kind {
            SourceKind::Git => {
                let trimmed = self.url.trim_end_matches(['/', '\\']);
                let last = trimmed.rsplit(['/', '\\', ':']).next().unwrap_or(trimmed);
                last.strip_suffix(".git").unwrap_or(last).to_owned()
            }
            SourceKind::Index => host_of(&self.url).unwrap_or_default().to_owned(),
        };
        let mut id: String = raw
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        id = id.trim_matches('-').to_owned();
        id.truncate(64);
        if id.is_empty() { "source".into() } else { id }
    }
}

fn git(url: &str) -> Location {
    Location {
        kind: SourceKind::Git,
        url: url.to_owned(),
    }
}

/// An `http(s)://` URL: an index or a repository.
fn web(source: &str, scheme: &str, rest: &str) -> Location {
    let (host, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let host_name = host.rsplit('@').next().unwrap_or(host).to_ascii_lowercase();
    let host_name = host_name.split(':').next().unwrap_or("");
    let is_repository = GIT_HOSTS.contains(&host_name) || path.ends_with(".git");
    let is_index = path.is_empty()
        || path == "/"
        || path.contains("/.well-known/agent-skills")
        || path.ends_with("/index.json");
    if is_repository || !is_index {
        return git(source);
    }
    // The index itself: `https://host` and `…/.well-known/agent-skills/`
    // name it by its folder.
    let base = format!("{scheme}://{host}");
    let url = if path.ends_with("index.json") {
        format!("{base}{path}")
    } else if path.is_empty() || path == "/" {
        format!("{base}/{WELL_KNOWN}index.json")
    } else {
        format!("{base}{}/index.json", path.trim_end_matches('/'))
    };
    Location {
        kind: SourceKind::Index,
        url,
    }
}

/// `owner/repo`: two names of letters, digits, `.`, `-` and `_`.
fn is_github_shorthand(source: &str) -> bool {
    let Some((owner, repo)) = source.split_once('/') else {
        return false;
    };
    let name = |part: &str| {
        !part.is_empty()
            && !part.starts_with('.')
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    };
    name(owner) && name(repo)
}

/// `user@host:path`, as git and ssh write it (no `//`, an `@` before the
/// first `:`).
fn is_scp_like(source: &str) -> bool {
    match (source.find('@'), source.find(':')) {
        (Some(at), Some(colon)) => at < colon && !source[..colon].contains('/'),
        _ => false,
    }
}

/// The host of an `http(s)://` URL (with its port, `:` as `-`).
pub fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit('@').next()?;
    Some(host.replace(':', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(source: &str) -> Location {
        Location::parse(source, Path::new("/nonexistent-cwd")).unwrap()
    }

    #[test]
    fn sources_are_read_as_the_user_means_them() {
        let github = parse("anthropics/skills");
        assert_eq!(github.kind, SourceKind::Git);
        assert_eq!(github.url, "https://github.com/anthropics/skills.git");
        assert_eq!(github.default_id(), "skills");
        for git in [
            "https://github.com/anthropics/skills",
            "https://example.com/team/skills.git",
            "https://example.com/team/skills",
            "ssh://git@example.com/team/skills.git",
            "git@github.com:anthropics/skills.git",
            "file:///srv/git/skills",
        ] {
            assert_eq!(parse(git).kind, SourceKind::Git, "{git}");
            assert_eq!(parse(git).url, git);
            assert_eq!(parse(git).default_id(), "skills", "{git}");
        }
        for (index, url) in [
            (
                "https://example.com",
                "https://example.com/.well-known/agent-skills/index.json",
            ),
            (
                "https://example.com/.well-known/agent-skills/",
                "https://example.com/.well-known/agent-skills/index.json",
            ),
            (
                "http://127.0.0.1:8080/team/.well-known/agent-skills/index.json",
                "http://127.0.0.1:8080/team/.well-known/agent-skills/index.json",
            ),
        ] {
            let location = parse(index);
            assert_eq!(location.kind, SourceKind::Index, "{index}");
            assert_eq!(location.url, url);
        }
        assert_eq!(
            parse("https://Skills.Example.com/").default_id(),
            "skills-example-com"
        );
        assert_eq!(
            parse("http://127.0.0.1:8080/").default_id(),
            "127-0-0-1-8080"
        );
    }

    #[test]
    fn a_local_checkout_is_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("My Skills");
        std::fs::create_dir(&checkout).unwrap();
        let location = Location::parse("My Skills", dir.path()).unwrap();
        assert_eq!(location.kind, SourceKind::Git);
        assert_eq!(location.url, checkout.to_string_lossy());
        assert_eq!(location.default_id(), "my-skills");
        assert!(matches!(
            Location::parse("nowhere", dir.path()),
            Err(SourceError::UnknownSource(_))
        ));
        assert!(matches!(
            Location::parse("gopher://x", dir.path()),
            Err(SourceError::UnknownSource(_))
        ));
    }
}
