//! Resolving the name a model typed to a skill, and suggesting names when
//! nothing matches (behaviour.md §5.2).
//!
//! All comparisons are case-insensitive. Order: exact full name, then short name
//! or folder name (ambiguous when several skills share it). Rescanning on a miss
//! is the registry's job; this module only looks at one snapshot.

use crate::snapshot::{Skill, Snapshot};

/// What a name resolves to in one snapshot.
#[derive(Debug)]
pub enum Resolution<'a> {
    Found(&'a Skill),
    /// Several skills share this short name; their full names are needed.
    Ambiguous(Vec<&'a Skill>),
    NotFound,
}

/// Resolves `query` against `snapshot`.
pub fn resolve<'a>(snapshot: &'a Snapshot, query: &str) -> Resolution<'a> {
    let key = query.trim().to_lowercase();
    if let Some(skill) = snapshot.by_name(&key) {
        return Resolution::Found(skill);
    }
    let mut matches = snapshot.by_short_name(&key);
    match matches.len() {
        0 => Resolution::NotFound,
        1 => Resolution::Found(matches.remove(0)),
        _ => Resolution::Ambiguous(matches),
    }
}

/// How many names a "not found" answer suggests at most.
pub const MAX_SUGGESTIONS: usize = 5;

/// Below this similarity a name is not worth suggesting.
pub(crate) const THRESHOLD: f64 = 0.75;

/// Up to `limit` skills whose names are most like `query`, best first.
///
/// Each skill is compared by its full name, short name and folder name; the best
/// of the three counts. Similarity is the largest of Jaro-Winkler (good at typos
/// and shared prefixes), normalised optimal-string-alignment distance (good at
/// transpositions)
/// and a containment score (for `pdf` vs `pdf-tools`), after treating `_`, space
/// and `-` as the same character.
pub fn suggest<'a>(snapshot: &'a Snapshot, query: &str, limit: usize) -> Vec<&'a Skill> {
    let query = normalize(query.trim());
    if query.is_empty() {
        return Vec::new();
    }
    // One buffer for every candidate: this runs over all skills on each miss.
    let mut candidate = String::new();
    let mut scored: Vec<(f64, usize)> = Vec::new();
    for (index, skill) in snapshot.skills().iter().enumerate() {
        let name = skill.name.as_str();
        let short = skill.short_name();
        let folder = skill.folder();
        // The short name and the folder name often repeat the name.
        let texts = [
            Some(name),
            (short != name).then_some(short),
            (folder != name && folder != short).then_some(folder.as_ref()),
        ];
        let mut score: f64 = 0.0;
        for text in texts.into_iter().flatten() {
            candidate.clear();
            candidate.extend(normalized_chars(text));
            score = score.max(similarity(&query, &candidate));
        }
        if score >= THRESHOLD {
            scored.push((score, index));
        }
    }
    // Best score first; among equals, display order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, index)| &snapshot.skills()[index])
        .collect()
}

fn normalize(name: &str) -> String {
    normalized_chars(name).collect()
}

/// Lowercase, with `_` and whitespace read as `-`.
fn normalized_chars(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars().flat_map(char::to_lowercase).map(|c| {
        if c == '_' || c.is_whitespace() {
            '-'
        } else {
            c
        }
    })
}

/// How alike two names are, from 0 to 1; both already lowercased (and, for
/// skill names, with separators normalised).
pub(crate) fn similarity(query: &str, candidate: &str) -> f64 {
    if query == candidate {
        return 1.0;
    }
    // Ratios punish short names: `pfd` vs `pdf` is one transposition but only
    // 67% similar. One or two edits are a typo, whatever the length. Optimal
    // string alignment counts adjacent transpositions like Damerau-Levenshtein
    // without its per-call hash map (a miss at 10,000 skills: 43 ms before).
    let edits = strsim::osa_distance(query, candidate);
    let longest = query.chars().count().max(candidate.chars().count());
    let typo = match edits {
        1 if longest >= 3 => 0.85,
        2 if longest >= 6 => 0.78,
        _ => 0.0,
    };
    let ratio = 1.0 - edits as f64 / longest.max(1) as f64;
    let mut score = strsim::jaro_winkler(query, candidate).max(ratio).max(typo);
    let (short, long) = if query.len() <= candidate.len() {
        (query, candidate)
    } else {
        (candidate, query)
    };
    if short.chars().count() >= 3 && long.contains(short) {
        let ratio = short.chars().count() as f64 / long.chars().count() as f64;
        score = score.max(0.8 + 0.15 * ratio);
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_do_not_matter() {
        assert_eq!(
            similarity(&normalize("pdf_tools"), &normalize("pdf-tools")),
            1.0
        );
        assert_eq!(
            similarity(&normalize("PDF Tools"), &normalize("pdf-tools")),
            1.0
        );
    }

    #[test]
    fn typos_and_transpositions_score_high() {
        assert!(similarity("pdf-tols", "pdf-tools") >= THRESHOLD);
        assert!(similarity("pfd", "pdf") >= THRESHOLD);
        assert!(similarity("skil-creator", "skill-creator") >= THRESHOLD);
        assert!(similarity("cnavas-design", "canvas-design") >= THRESHOLD);
    }

    #[test]
    fn containment_scores_high() {
        assert!(similarity("canvas", "canvas-design") >= THRESHOLD);
    }

    #[test]
    fn unrelated_names_score_low() {
        assert!(similarity("git", "pdf") < THRESHOLD);
        assert!(similarity("docx", "kubernetes-helper") < THRESHOLD);
        assert!(similarity("xlsx", "brand-guidelines") < THRESHOLD);
        assert!(similarity("pdf", "pptx") < THRESHOLD);
    }
}
