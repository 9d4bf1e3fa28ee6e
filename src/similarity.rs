//! How alike two skill names are (behaviour.md §5.3): the fuzzy part of the
//! search on a miss (`search`) and of the suggestions for a missing file
//! (`files`). Names are compared [`normalize`]d, so `_`, space and `-` are
//! the same character and case does not matter.

/// Below this similarity a name is not like the query.
pub const THRESHOLD: f64 = 0.75;

/// `name` lowercased, with `_` and whitespace read as `-`.
pub fn normalize(name: &str) -> String {
    normalized_chars(name).collect()
}

/// Lowercase, with `_` and whitespace read as `-`.
pub fn normalized_chars(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars().flat_map(char::to_lowercase).map(|c| {
        if c == '_' || c.is_whitespace() {
            '-'
        } else {
            c
        }
    })
}

/// The name similarity of behaviour.md §5.3, used by the search on a miss
/// (`search`): the largest of Jaro-Winkler (good at typos and shared
/// prefixes), normalised optimal-string-alignment distance (good at
/// transpositions) and a containment score (for `pdf` vs `pdf-tools`), on
/// names [`normalize`]d so that `_`, space and `-` are the same character.
pub fn similarity(query: &str, candidate: &str) -> f64 {
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
    strsim::jaro_winkler(query, candidate)
        .max(ratio)
        .max(typo)
        .max(containment(query, candidate))
}

/// 0.8 to 0.95 when one name holds the other (of at least three
/// characters), the more the closer their lengths; 0 otherwise.
fn containment(query: &str, candidate: &str) -> f64 {
    let (short, long) = if query.len() <= candidate.len() {
        (query, candidate)
    } else {
        (candidate, query)
    };
    if short.chars().count() >= 3 && long.contains(short) {
        let ratio = short.chars().count() as f64 / long.chars().count() as f64;
        0.8 + 0.15 * ratio
    } else {
        0.0
    }
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
