//! Resolving the name a model typed to a skill (behaviour.md §5.2).
//!
//! All comparisons are case-insensitive. Order: exact full name, then short name
//! or folder name (ambiguous when several skills share it). Rescanning on a miss
//! is the registry's job, and searching the `search` module's; this module
//! only looks at one client's view of one snapshot.

use crate::profiles::View;
use crate::skill::Skill;

/// What a name resolves to in one snapshot.
#[derive(Debug)]
pub enum Resolution<'a> {
    Found(&'a Skill),
    /// Several skills share this short name; their full names are needed.
    Ambiguous(Vec<&'a Skill>),
    NotFound,
}

/// Resolves `query` among the skills `view` shows.
pub fn resolve<'a>(view: &'a View, query: &str) -> Resolution<'a> {
    let key = query.trim().to_lowercase();
    if let Some(skill) = view.by_name(&key) {
        return Resolution::Found(skill);
    }
    let mut matches = view.by_short_name(&key);
    match matches.len() {
        0 => Resolution::NotFound,
        1 => Resolution::Found(matches.remove(0)),
        _ => Resolution::Ambiguous(matches),
    }
}
