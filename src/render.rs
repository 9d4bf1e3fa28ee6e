//! Text the model reads: the `skill` tool description (behaviour.md §5.1) and the
//! answers to calls (behaviour.md §5.2, §5.3, §13). The server and `skillserve show` both
//! use these functions, so the CLI prints exactly what a client receives.

use std::fmt::Write;

use crate::config::MAX_NAME_CHARS;
use crate::diagnostic::Diagnostic;
use crate::snapshot::Skill;

/// The first lines of the tool description.
pub const DESCRIPTION_HEADER: &str =
    "Load a skill by name to get specialized instructions.\n\nAvailable skills:";

/// The list line when there are no skills at all.
pub const NO_SKILLS_LINE: &str = "(none yet: no SKILL.md files were found)";

/// Descriptions are never cut shorter than this many characters; below it they
/// are dropped altogether (a name alone says more than a stub).
const MIN_CUT: usize = 16;

/// A match of a "not found" answer shows this much of its description.
const MATCH_DESCRIPTION_CHARS: usize = 100;

/// A "not found" answer echoes at most this much of the name it was given.
const ECHO_CHARS: usize = 80;

/// The `skill` tool description: the header, then `- name: description` per
/// skill, in at most `budget` characters (Unicode scalar values).
///
/// When everything does not fit, descriptions are shortened longest first (all
/// cut to one common length, ending in `…`); if even [`MIN_CUT`] characters each
/// do not fit, only names are listed; if the names alone do not fit, trailing
/// entries are replaced by one line saying how many more skills exist. The
/// header always stays, so `budget` must be at least
/// [`crate::config::MIN_DESCRIPTION_BUDGET`] for the limit to hold.
pub fn tool_description(skills: &[Skill], budget: usize) -> String {
    if skills.is_empty() {
        return format!("{DESCRIPTION_HEADER}\n{NO_SKILLS_LINE}");
    }
    let entries: Vec<Entry> = skills
        .iter()
        .map(|s| Entry {
            name: &s.name,
            description: s.description(),
            name_chars: s.name.chars().count(),
            description_chars: s.description().chars().count(),
        })
        .collect();
    let header = DESCRIPTION_HEADER.chars().count();
    let names_only: usize = header + entries.iter().map(Entry::name_cost).sum::<usize>();
    let cost = |cap: usize| -> usize {
        names_only
            + entries
                .iter()
                .map(|e| e.description_cost(cap))
                .sum::<usize>()
    };
    let longest = entries
        .iter()
        .map(|e| e.description_chars)
        .max()
        .unwrap_or(0);

    if cost(longest) <= budget {
        return render(&entries, entries.len(), Some(longest));
    }
    if cost(MIN_CUT) <= budget {
        // Largest cap in [MIN_CUT, longest) that fits: cost is monotonic in cap.
        let (mut fits, mut too_big) = (MIN_CUT, longest);
        while too_big - fits > 1 {
            let mid = fits + (too_big - fits) / 2;
            if cost(mid) <= budget {
                fits = mid;
            } else {
                too_big = mid;
            }
        }
        return render(&entries, entries.len(), Some(fits));
    }
    if names_only <= budget {
        return render(&entries, entries.len(), None);
    }
    // Names alone do not fit: keep as many leading names as leave room for the
    // "N more" line.
    let mut used = header;
    let mut kept = 0;
    for (index, entry) in entries.iter().enumerate() {
        let rest = entries.len() - index - 1;
        let more = if rest == 0 {
            0
        } else {
            more_line(rest).chars().count() + 1
        };
        if used + entry.name_cost() + more > budget {
            break;
        }
        used += entry.name_cost();
        kept += 1;
    }
    render(&entries, kept, None)
}

struct Entry<'a> {
    name: &'a str,
    description: &'a str,
    name_chars: usize,
    description_chars: usize,
}

impl Entry<'_> {
    /// `\n- name`
    fn name_cost(&self) -> usize {
        3 + self.name_chars
    }

    /// `: description`, cut to `cap` characters.
    fn description_cost(&self, cap: usize) -> usize {
        match self.description_chars {
            0 => 0,
            n => 2 + n.min(cap),
        }
    }
}

/// The header, the first `kept` entries (descriptions cut to `cap`, or left out
/// with `None`), and the "N more" line when entries were left out.
fn render(entries: &[Entry], kept: usize, cap: Option<usize>) -> String {
    let mut out = String::from(DESCRIPTION_HEADER);
    for entry in &entries[..kept] {
        out.push_str("\n- ");
        out.push_str(entry.name);
        let Some(cap) = cap else { continue };
        if entry.description_chars == 0 {
            continue;
        }
        out.push_str(": ");
        push_cut(&mut out, entry.description, entry.description_chars, cap);
    }
    if kept < entries.len() {
        out.push('\n');
        out.push_str(&more_line(entries.len() - kept));
    }
    out
}

/// Appends `text` (of `chars` characters), or its first `cap - 1`
/// characters and `…` when it is longer than `cap`.
fn push_cut(out: &mut String, text: &str, chars: usize, cap: usize) {
    if chars <= cap {
        out.push_str(text);
    } else {
        let end = text
            .char_indices()
            .nth(cap - 1)
            .map_or(text.len(), |(i, _)| i);
        out.push_str(text[..end].trim_end());
        out.push('…');
    }
}

fn more_line(count: usize) -> String {
    format!(
        "- … and {count} more skill{} not listed here; call `skill` with a skill's name, or with a few words describing the task to search them",
        if count == 1 { "" } else { "s" }
    )
}

/// The answer to a successful call: the header, a blank line, then SKILL.md
/// exactly as read.
pub fn loading(skill: &Skill, content: &str) -> String {
    format!(
        "Loading: {}\nBase directory: {}\n\n{content}",
        skill.name,
        skill.dir.display()
    )
}

/// The answer when no skill has the name: the skills that match it best,
/// each with the start of its description, or how many skills there are.
/// A name longer than [`ECHO_CHARS`] is shown cut.
pub fn not_found(query: &str, matches: &[&Skill], total: usize) -> String {
    let mut out = String::from("Skill '");
    push_cut(&mut out, query, query.chars().count(), ECHO_CHARS);
    out.push_str("' not found.");
    if matches.is_empty() {
        match total {
            0 => out.push_str(" No skills are installed."),
            1 => out.push_str(" There is 1 skill; the `skill` tool description lists it."),
            n => {
                let _ = write!(
                    out,
                    " There are {n} skills; the `skill` tool description lists them."
                );
            }
        }
        return out;
    }
    out.push_str(" Did you mean one of these?");
    for skill in matches {
        out.push_str("\n- ");
        out.push_str(&skill.name);
        let description = skill.description();
        if !description.is_empty() {
            out.push_str(": ");
            let chars = description.chars().count();
            push_cut(&mut out, description, chars, MATCH_DESCRIPTION_CHARS);
        }
    }
    out.push_str("\nCall `skill` again with one of these names.");
    out
}

/// The answer when a short name matches several skills.
pub fn ambiguous(query: &str, matches: &[&Skill]) -> String {
    let mut out = format!(
        "Skill name '{query}' is ambiguous: {} skills match it.",
        matches.len()
    );
    for skill in matches {
        out.push_str("\n- ");
        out.push_str(&skill.name);
    }
    out.push_str("\nCall `skill` again with one of these full names.");
    out
}

/// The answer when the skill's folder exists but its `SKILL.md` could not be
/// loaded: where and why, so that the model can tell the user.
pub fn broken(query: &str, diagnostic: &Diagnostic) -> String {
    format!(
        "Skill '{query}' could not be loaded: {}: {}. The file must be fixed before the skill can be used (`skillserve check` shows how); tell the user.",
        diagnostic.location(),
        diagnostic.message
    )
}

/// The answer when the `name` argument is missing, empty or not a string;
/// `problem` says which.
pub fn invalid_params(problem: &str) -> String {
    format!(
        "Invalid params: the string argument `name` is required ({problem}). Example: {{\"name\": \"pdf\"}}"
    )
}

/// The answer when the `name` argument is longer than [`MAX_NAME_CHARS`].
pub fn name_too_long() -> String {
    format!(
        "Invalid params: the argument `name` is longer than {MAX_NAME_CHARS} characters. Call `skill` with a skill's name, or with a few words describing the task."
    )
}

/// The answer when the skill's file cannot be read at call time. `lasting`
/// says whether the file itself must be fixed (not UTF-8, too large, not a
/// regular file) or the failure may pass (an I/O error).
pub fn unreadable(name: &str, reason: &str, lasting: bool) -> String {
    let advice = if lasting {
        "The file must be fixed before the skill can be used (`skillserve check` shows how); do not retry, pick another skill or tell the user."
    } else {
        "This may be temporary; try again in a moment."
    };
    format!("Skill '{name}' could not be read: {reason}. {advice}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_text_when_it_fits() {
        let skills = [
            Skill::for_test("user", "用户的全局技能,必读!"),
            Skill::for_test("bun", "Docs for 'bun'"),
        ];
        assert_eq!(
            tool_description(&skills, 8000),
            "Load a skill by name to get specialized instructions.\n\nAvailable skills:\n- user: 用户的全局技能,必读!\n- bun: Docs for 'bun'"
        );
    }

    #[test]
    fn empty_list_says_so() {
        assert_eq!(
            tool_description(&[], 8000),
            format!("{DESCRIPTION_HEADER}\n{NO_SKILLS_LINE}")
        );
    }

    #[test]
    fn longest_descriptions_are_cut_first() {
        let skills = [
            Skill::for_test("a", &"x".repeat(300)),
            Skill::for_test("b", "short one"),
        ];
        let text = tool_description(&skills, 300);
        assert!(text.chars().count() <= 300, "{}", text.chars().count());
        assert!(text.contains("\n- b: short one"));
        assert!(text.contains("x…\n- b"));
    }

    #[test]
    fn names_only_when_cuts_would_be_stubs() {
        let skills: Vec<Skill> = (0..20)
            .map(|i| Skill::for_test(&format!("skill-{i}"), &"d".repeat(50)))
            .collect();
        let text = tool_description(&skills, 300);
        assert!(text.chars().count() <= 300);
        assert!(text.ends_with("\n- skill-19"), "{text}");
        assert!(!text.contains(": "));
    }

    #[test]
    fn not_found_lists_matches_with_one_line_of_description() {
        let long = Skill::for_test("pdf", &format!("{} end", "word ".repeat(30)));
        let short = Skill::for_test("pdf-tools", "Split PDF pages.");
        let bare = Skill::for_test("empty", "");
        assert_eq!(
            not_found("fill a pdf form", &[&long, &short, &bare], 3),
            format!(
                "Skill 'fill a pdf form' not found. Did you mean one of these?\n\
                 - pdf: {}…\n\
                 - pdf-tools: Split PDF pages.\n\
                 - empty\n\
                 Call `skill` again with one of these names.",
                "word ".repeat(20).trim_end()
            )
        );
    }

    #[test]
    fn not_found_without_matches_says_how_many_skills_there_are() {
        assert_eq!(
            not_found("zzz", &[], 0),
            "Skill 'zzz' not found. No skills are installed."
        );
        assert_eq!(
            not_found("zzz", &[], 1),
            "Skill 'zzz' not found. There is 1 skill; the `skill` tool description lists it."
        );
        assert_eq!(
            not_found("zzz", &[], 7),
            "Skill 'zzz' not found. There are 7 skills; the `skill` tool description lists them."
        );
    }

    #[test]
    fn not_found_echoes_at_most_80_characters_of_the_name() {
        let eighty = "é".repeat(80);
        assert!(not_found(&eighty, &[], 2).starts_with(&format!("Skill '{eighty}' not found.")));
        let longer = "é".repeat(81);
        let cut = "é".repeat(79);
        assert!(not_found(&longer, &[], 2).starts_with(&format!("Skill '{cut}…' not found.")));
    }

    #[test]
    fn the_more_line_invites_a_search() {
        assert_eq!(
            more_line(666),
            "- … and 666 more skills not listed here; call `skill` with a skill's name, or with a few words describing the task to search them"
        );
        assert!(more_line(1).starts_with("- … and 1 more skill not listed here;"));
    }

    #[test]
    fn more_line_when_names_do_not_fit() {
        let skills: Vec<Skill> = (0..100)
            .map(|i| Skill::for_test(&format!("skill-{i:03}"), "d"))
            .collect();
        let text = tool_description(&skills, 400);
        assert!(text.chars().count() <= 400, "{}", text.chars().count());
        assert!(text.starts_with(DESCRIPTION_HEADER));
        let listed = text.lines().filter(|l| l.starts_with("- skill-")).count();
        assert!(text.ends_with(&more_line(100 - listed)), "{text}");
    }
}
