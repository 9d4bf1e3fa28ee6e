//! How a private index is reached, as the lock keeps it: the HTTP headers
//! `add --header` was given, each value naming the environment variables
//! it is made of (`$TOKEN`), and whether `~/.netrc` gives the password.
//! The lock holds the names, never the secrets: those are read when a
//! command fetches (`sources::credentials`).

use serde::Serialize;

/// `NAME: VALUE`, where VALUE names at least one environment variable
/// (`$VAR` or `${VAR}`) and holds nothing else but printable ASCII.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HeaderTemplate {
    pub name: String,
    pub value: String,
}

/// Why a header was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("`{0}` is not `NAME: VALUE`")]
    NoColon(String),
    #[error("`{0}` is not a header name (letters, digits and !#$%&'*+-.^_`|~)")]
    BadName(String),
    #[error(
        "the value of header `{0}` must name the environment variable that holds it, as in `{0}: Bearer $SKILLS_TOKEN`: a secret written on the command line would be written to the lock"
    )]
    NoVariable(String),
    #[error(
        "the value of header `{0}` holds a character a header cannot carry (a control character, or one outside ASCII)"
    )]
    BadValue(String),
    #[error("the value of header `{0}` has a `$` that starts no variable name")]
    BadVariable(String),
}

/// One part of a value: text as it is, or a variable's name.
enum Part<'a> {
    Text(&'a str),
    Variable(&'a str),
}

impl HeaderTemplate {
    /// Reads `NAME: VALUE` (spaces around both trimmed).
    pub fn parse(text: &str) -> Result<HeaderTemplate, HeaderError> {
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| HeaderError::NoColon(text.to_owned()))?;
        let (name, value) = (name.trim(), value.trim());
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return Err(HeaderError::BadName(name.to_owned()));
        }
        if !value.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) {
            return Err(HeaderError::BadValue(name.to_owned()));
        }
        let template = HeaderTemplate {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        let parts = template
            .parts()
            .ok_or_else(|| HeaderError::BadVariable(name.to_owned()))?;
        if !parts.iter().any(|p| matches!(p, Part::Variable(_))) {
            return Err(HeaderError::NoVariable(name.to_owned()));
        }
        Ok(template)
    }

    /// The names of the variables the value is made of.
    pub fn variables(&self) -> Vec<&str> {
        self.parts()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| match p {
                Part::Variable(name) => Some(name),
                Part::Text(_) => None,
            })
            .collect()
    }

    /// The value with each variable replaced by `lookup`'s answer; the
    /// first variable it has no answer for is the error.
    pub fn expand(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut out = String::new();
        for part in self.parts().unwrap_or_default() {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Variable(name) => out.push_str(&lookup(name).ok_or(name.to_owned())?),
            }
        }
        Ok(out)
    }

    /// `NAME: VALUE`, as given and as the lock writes it.
    pub fn text(&self) -> String {
        format!("{}: {}", self.name, self.value)
    }

    /// The value cut at its variables; `None` when a `$` starts no name.
    fn parts(&self) -> Option<Vec<Part<'_>>> {
        let mut parts = Vec::new();
        let mut rest = self.value.as_str();
        while let Some(at) = rest.find('$') {
            if at > 0 {
                parts.push(Part::Text(&rest[..at]));
            }
            let after = &rest[at + 1..];
            let (name, next) = match after.strip_prefix('{') {
                Some(braced) => {
                    let end = braced.find('}')?;
                    (&braced[..end], &braced[end + 1..])
                }
                None => {
                    let end = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    (&after[..end], &after[end..])
                }
            };
            let valid = name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return None;
            }
            parts.push(Part::Variable(name));
            rest = next;
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest));
        }
        Some(parts)
    }
}

/// How an index source is reached: what `add` was told.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Access {
    /// `--header`, in the order given.
    pub headers: Vec<HeaderTemplate>,
    /// `--netrc`: the login and password of the host's `machine` entry of
    /// `~/.netrc` (or `$NETRC`) are sent as HTTP Basic authentication.
    pub netrc: bool,
}

impl Access {
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty() && !self.netrc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_names_its_variables_and_expands_them() {
        let header = HeaderTemplate::parse(" Authorization :  Bearer $TOKEN").unwrap();
        assert_eq!(header.text(), "Authorization: Bearer $TOKEN");
        assert_eq!(header.variables(), ["TOKEN"]);
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(header.expand(lookup).unwrap(), "Bearer s3cret");
        let braced = HeaderTemplate::parse("X-Key: ${A}-${B_2}x").unwrap();
        assert_eq!(braced.variables(), ["A", "B_2"]);
        assert_eq!(braced.expand(lookup).unwrap_err(), "A");
    }

    #[test]
    fn a_secret_or_a_broken_header_is_refused() {
        let err = |text: &str| HeaderTemplate::parse(text).unwrap_err().to_string();
        assert!(err("Authorization: Bearer abc").contains("must name the environment variable"));
        assert_eq!(err("Authorization"), "`Authorization` is not `NAME: VALUE`");
        assert!(err("Bad Name: $X").starts_with("`Bad Name` is not a header name"));
        assert!(err("X: $1abc").contains("starts no variable name"));
        assert!(err("X: ${OPEN").contains("starts no variable name"));
        assert!(err("X: $A\u{7f}").contains("cannot carry"));
    }
}
