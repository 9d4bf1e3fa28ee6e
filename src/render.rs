//! Text the model reads: the `skill` tool description (behaviour.md §5.1) and the
//! answers to calls (behaviour.md §5.2, §5.3, §9, §14). The server and `skillserve show` both
//! use these functions, so the CLI prints exactly what a client receives.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::fmt::Write;

use crate::config::{MAX_QUERY_CHARS, Placement};
use crate::diagnostic::Diagnostic;
use crate::gate::FileError;
use crate::listing::{self, Limit, Listing};
use crate::security::{self, Report};
use crate::skill::Skill;
use crate::spec;
use crate::text::{plural, printable};

/// The first lines of the tool description.
pub const DESCRIPTION_HEADER: &str =
    "Load a skill by name to get specialized instructions.\n\nAvailable skills:";

/// The list line when there are no skills at all.
pub const NO_SKILLS_LINE: &str = "(none yet: no SKILL.md files were found)";

/// The `skill` tool's description when the catalog is in the server's
/// `instructions` (behaviour.md §5.4): one line saying where it is.
pub const TOOL_POINTER: &str = "Load a skill by name to get specialized instructions. The skills are listed in this server's instructions; call `skill` with a skill's name, or with a few words describing the task to search them.";

/// Server `instructions` when the catalog is in the tool description: tell
/// the model plainly when to call the tool.
pub const INSTRUCTIONS: &str = "This server provides Agent Skills: tested instructions (with scripts and reference files) for specialised tasks. Whenever a task matches a skill listed in the `skill` tool's description, call `skill` with that name before starting and follow the instructions it returns. Paths mentioned in a skill are relative to the `Base directory` line of the answer.";

/// [`INSTRUCTIONS`] of a server reached over HTTP, whose paths the client
/// cannot open.
pub const REMOTE_INSTRUCTIONS: &str = "This server provides Agent Skills: tested instructions (with scripts and reference files) for specialised tasks. Whenever a task matches a skill listed in the `skill` tool's description, call `skill` with that name before starting and follow the instructions it returns. This server is remote: read a file a skill mentions by calling `skill` again with the skill's name and the file's path (relative to the skill's folder) as `file`.";

/// The first lines of the server `instructions` that carry the catalog; the
/// list follows, as in the tool description.
pub const INSTRUCTIONS_HEADER: &str = "This server provides Agent Skills: tested instructions (with scripts and reference files) for specialised tasks. Whenever a task matches one of the skills listed below, call the `skill` tool with that name before starting and follow the instructions it returns. Paths mentioned in a skill are relative to the `Base directory` line of the answer.\n\nAvailable skills:";

/// [`INSTRUCTIONS_HEADER`] of a server reached over HTTP.
pub const REMOTE_INSTRUCTIONS_HEADER: &str = "This server provides Agent Skills: tested instructions (with scripts and reference files) for specialised tasks. Whenever a task matches one of the skills listed below, call the `skill` tool with that name before starting and follow the instructions it returns. This server is remote: read a file a skill mentions by calling `skill` again with the skill's name and the file's path (relative to the skill's folder) as `file`.\n\nAvailable skills:";

/// The server `instructions`: with the catalog (in `budget` characters,
/// the header included) when `placement` puts it there, else the text that
/// points at the tool description. `remote`: served over HTTP.
pub fn instructions<'a>(
    skills: impl IntoIterator<Item = &'a Skill>,
    placement: Placement,
    remote: bool,
    budget: usize,
    uses: &dyn Fn(&Skill) -> u32,
) -> String {
    match (placement.in_instructions(), remote) {
        (false, false) => INSTRUCTIONS.to_owned(),
        (false, true) => REMOTE_INSTRUCTIONS.to_owned(),
        (true, false) => catalog(INSTRUCTIONS_HEADER, skills, budget, uses),
        (true, true) => catalog(REMOTE_INSTRUCTIONS_HEADER, skills, budget, uses),
    }
}

/// The `skill` tool's description: the catalog (in `budget` characters)
/// when `placement` puts it there, else [`TOOL_POINTER`].
pub fn description<'a>(
    skills: impl IntoIterator<Item = &'a Skill>,
    placement: Placement,
    budget: usize,
    uses: &dyn Fn(&Skill) -> u32,
) -> String {
    if placement.in_tool() {
        catalog(DESCRIPTION_HEADER, skills, budget, uses)
    } else {
        TOOL_POINTER.to_owned()
    }
}

/// Descriptions are never cut shorter than this many characters; below it they
/// are dropped altogether (a name alone says more than a stub).
const MIN_CUT: usize = 16;

/// A match of a "not found" answer shows this much of its description.
const MATCH_DESCRIPTION_CHARS: usize = 100;

/// A "not found" answer echoes at most this much of the name it was given.
const ECHO_CHARS: usize = 80;

/// The `skill` tool description with the catalog: [`catalog`] under
/// [`DESCRIPTION_HEADER`], no skill used before.
pub fn tool_description<'a>(skills: impl IntoIterator<Item = &'a Skill>, budget: usize) -> String {
    catalog(DESCRIPTION_HEADER, skills, budget, &|_| 0)
}

/// The catalog: `header`, then `- name: description` per skill, in at most
/// `budget` characters (Unicode scalar values), `header` included.
/// `uses(skill)` is how often the skill was loaded lately (0: not at all).
///
/// When everything fits, the skills are listed in the order given. When it
/// does not, the skills used lately come first (most used first, then by
/// name), the others after them in the order given, and room is taken from
/// the unused ones first: their descriptions are shortened (all cut to one
/// common length, ending in `…`), then dropped (names only); only then are
/// the used ones' descriptions shortened, then dropped. Descriptions are
/// never cut shorter than [`MIN_CUT`] characters. If the names alone do not
/// fit, trailing entries are replaced by one line saying how many more
/// skills exist. The header always stays, so `budget` must be at least
/// [`crate::config::MIN_DESCRIPTION_BUDGET`] (for the tool description) for
/// the limit to hold.
pub fn catalog<'a>(
    header: &str,
    skills: impl IntoIterator<Item = &'a Skill>,
    budget: usize,
    uses: &dyn Fn(&Skill) -> u32,
) -> String {
    let skills: Vec<&Skill> = skills.into_iter().collect();
    if skills.is_empty() {
        return format!("{header}\n{NO_SKILLS_LINE}");
    }
    let header_chars = header.chars().count();
    let names_only: usize = header_chars
        + skills
            .iter()
            .map(|s| 3 + s.name.chars().count())
            .sum::<usize>();
    // When the names alone do not fit, no description is shown: none is put
    // on one line and counted (2% of the start-up's CPU at 100,000 skills,
    // measured with `perf`).
    let with_descriptions = names_only <= budget;
    let mut entries: Vec<Entry> = skills
        .iter()
        .map(|s| {
            let description = if with_descriptions {
                s.description()
            } else {
                Cow::Borrowed("")
            };
            Entry {
                name: &s.name,
                description_chars: description.chars().count(),
                description,
                name_chars: s.name.chars().count(),
                uses: 0,
            }
        })
        .collect();
    let cost = |entries: &[Entry], cap: Cap| -> usize {
        entries
            .iter()
            .map(|e| e.description_cost(cap))
            .sum::<usize>()
    };
    if names_only + cost(&entries, Cap::Full) <= budget {
        let listed = Listed::new(&entries, 0, Cap::Full, Cap::Full);
        return render(header, &entries, listed);
    }
    // Over budget: the skills used lately first, most used first.
    for (entry, skill) in entries.iter_mut().zip(&skills) {
        entry.uses = uses(skill);
    }
    let used = entries.iter().filter(|e| e.uses > 0).count();
    if used > 0 {
        // Only the used ones are sorted (a stable sort: ties keep the order
        // given); the others keep theirs, behind them.
        let (mut lately, others): (Vec<Entry>, Vec<Entry>) =
            entries.into_iter().partition(|e| e.uses > 0);
        lately.sort_by_cached_key(|e| (Reverse(e.uses), e.name.to_lowercase()));
        lately.extend(others);
        entries = lately;
    }
    let (lately, others) = entries.split_at(used);
    let longest = |entries: &[Entry]| entries.iter().map(|e| e.description_chars).max();
    // The largest cap in [MIN_CUT, longest) under which `fits` holds, when
    // it holds at MIN_CUT: cost is monotonic in the cap.
    let largest_cap = |longest: usize, fits: &dyn Fn(Cap) -> bool| -> Option<usize> {
        if !fits(Cap::Cut(MIN_CUT)) {
            return None;
        }
        let (mut fits_at, mut too_big) = (MIN_CUT, longest.max(MIN_CUT + 1));
        while too_big - fits_at > 1 {
            let mid = fits_at + (too_big - fits_at) / 2;
            if fits(Cap::Cut(mid)) {
                fits_at = mid;
            } else {
                too_big = mid;
            }
        }
        Some(fits_at)
    };
    if with_descriptions {
        let full_lately = names_only + cost(lately, Cap::Full);
        // The others' descriptions shortened, the used ones' kept whole.
        if let Some(longest_other) = longest(others) {
            let fits = |cap: Cap| full_lately + cost(others, cap) <= budget;
            if let Some(cap) = largest_cap(longest_other, &fits) {
                let listed = Listed::new(&entries, used, Cap::Full, Cap::Cut(cap));
                return render(header, &entries, listed);
            }
        }
        // The others by name only.
        if used > 0 && full_lately <= budget {
            let listed = Listed::new(&entries, used, Cap::Full, Cap::Name);
            return render(header, &entries, listed);
        }
        // The used ones' descriptions shortened too.
        if let Some(longest_lately) = longest(lately) {
            let fits = |cap: Cap| names_only + cost(lately, cap) <= budget;
            if let Some(cap) = largest_cap(longest_lately, &fits) {
                let listed = Listed::new(&entries, used, Cap::Cut(cap), Cap::Name);
                return render(header, &entries, listed);
            }
        }
    }
    if names_only <= budget {
        let listed = Listed::new(&entries, used, Cap::Name, Cap::Name);
        return render(header, &entries, listed);
    }
    // Names alone do not fit: keep as many leading names as leave room for the
    // "N more" line.
    let mut chars = header_chars;
    let mut kept = 0;
    for (index, entry) in entries.iter().enumerate() {
        let rest = entries.len() - index - 1;
        let more = if rest == 0 {
            0
        } else {
            more_line(rest).chars().count() + 1
        };
        if chars + entry.name_cost() + more > budget {
            break;
        }
        chars += entry.name_cost();
        kept += 1;
    }
    let listed = Listed {
        kept,
        ..Listed::new(&entries, used, Cap::Name, Cap::Name)
    };
    render(header, &entries, listed)
}

/// How much of a description is listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cap {
    /// All of it.
    Full,
    /// At most this many characters.
    Cut(usize),
    /// None: the name alone.
    Name,
}

struct Entry<'a> {
    name: &'a str,
    description: Cow<'a, str>,
    name_chars: usize,
    description_chars: usize,
    /// How often the skill was loaded lately.
    uses: u32,
}

impl Entry<'_> {
    /// `\n- name`
    fn name_cost(&self) -> usize {
        3 + self.name_chars
    }

    /// `: description`, cut to `cap`.
    fn description_cost(&self, cap: Cap) -> usize {
        match (self.description_chars, cap) {
            (0, _) | (_, Cap::Name) => 0,
            (n, Cap::Full) => 2 + n,
            (n, Cap::Cut(cap)) => 2 + n.min(cap),
        }
    }
}

/// What [`render`] lists: the first `kept` entries, the first `used` of
/// them with their descriptions to `lately`, the rest to `others`.
struct Listed {
    kept: usize,
    used: usize,
    lately: Cap,
    others: Cap,
}

impl Listed {
    fn new(entries: &[Entry], used: usize, lately: Cap, others: Cap) -> Listed {
        Listed {
            kept: entries.len(),
            used,
            lately,
            others,
        }
    }
}

/// The header, the entries `listed` says, and the "N more" line when
/// entries were left out.
fn render(header: &str, entries: &[Entry], listed: Listed) -> String {
    let mut out = String::from(header);
    for (index, entry) in entries[..listed.kept].iter().enumerate() {
        out.push_str("\n- ");
        out.push_str(entry.name);
        let cap = if index < listed.used {
            listed.lately
        } else {
            listed.others
        };
        let cap = match cap {
            Cap::Name => continue,
            Cap::Full => usize::MAX,
            Cap::Cut(cap) => cap,
        };
        if entry.description_chars == 0 {
            continue;
        }
        out.push_str(": ");
        push_cut(&mut out, &entry.description, entry.description_chars, cap);
    }
    if listed.kept < entries.len() {
        out.push('\n');
        out.push_str(&more_line(entries.len() - listed.kept));
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

/// How answers name a skill's folder (the `Base directory` line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Base {
    /// Its path on this machine: the client runs here (stdio, `show`).
    #[default]
    Path,
    /// Its `skill://` URI, and how to read its files: the client is remote
    /// (`serve --http`) and cannot open this machine's paths, so no answer
    /// names one.
    Uri,
}

/// The `Base directory` line's value for a remote client, given the skill
/// folder's `skill://` URI.
pub fn remote_base_directory(uri: &str) -> String {
    format!(
        "{uri}/ (this server is remote: read the skill's files with the skill tool's \"file\" argument)"
    )
}

/// The answer to a successful call: the header, a blank line, then SKILL.md
/// exactly as read. `base` is the `Base directory` line's value.
pub fn loading(skill: &Skill, content: &str, base: &str) -> String {
    with_text(skill, "", base, content)
}

/// The header of every answer that loads something of `skill` (`file` is
/// "" for the skill itself): `Loading:`, `Base directory:` (`base`), and
/// for an installed skill `Source: url@version` (and `Signed-by: principal
/// (key)` when a trusted signer signed it), each line ending with a line
/// break; then a blank line and `text`. Made in one allocation: a
/// `SKILL.md` of many kilobytes appended bit by bit was reallocated (and
/// copied) a dozen times, and a header grown to fit it was copied once more.
fn with_text(skill: &Skill, file: &str, base: &str, text: &str) -> String {
    let origin = skill.origin().map(|origin| origin.label());
    let signed_by = skill.origin().and_then(|origin| origin.signed_by());
    let source = origin
        .as_deref()
        .map_or(0, |label| "Source: \n".len() + label.len())
        + signed_by
            .as_deref()
            .map_or(0, |label| "Signed-by: \n".len() + label.len());
    let mut out = String::with_capacity(
        "Loading: /\nBase directory: \n\n".len()
            + skill.name.len()
            + file.len()
            + base.len()
            + source
            + text.len(),
    );
    out.push_str("Loading: ");
    out.push_str(&skill.name);
    if !file.is_empty() {
        out.push('/');
        out.push_str(file);
    }
    out.push_str("\nBase directory: ");
    out.push_str(base);
    out.push('\n');
    if let Some(label) = origin {
        out.push_str("Source: ");
        out.push_str(&label);
        out.push('\n');
    }
    if let Some(label) = signed_by {
        out.push_str("Signed-by: ");
        out.push_str(&label);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(text);
    out
}

/// The answer when no skill has the name: the skills that match it best,
/// each with the start of its description, or how many skills there are
/// and where they are listed (`placement`: the tool description, else the
/// instructions). A name longer than [`ECHO_CHARS`] is shown cut.
pub fn not_found(query: &str, matches: &[&Skill], total: usize, placement: Placement) -> String {
    let mut out = String::from("Skill '");
    push_cut(&mut out, query, query.chars().count(), ECHO_CHARS);
    out.push_str("' not found.");
    if matches.is_empty() {
        let lists = if placement.in_tool() {
            "the `skill` tool description lists"
        } else {
            "this server's instructions list"
        };
        match total {
            0 => out.push_str(" No skills are installed."),
            1 => {
                let _ = write!(out, " There is 1 skill; {lists} it.");
            }
            n => {
                let _ = write!(out, " There are {n} skills; {lists} them.");
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
            push_cut(&mut out, &description, chars, MATCH_DESCRIPTION_CHARS);
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
pub fn broken(query: &str, diagnostic: &Diagnostic, base: Base) -> String {
    let location = match base {
        Base::Path => diagnostic.location(),
        // The folder and file names only: `pdf/SKILL.md:3`.
        Base::Uri => diagnostic.location_in_folder(),
    };
    format!(
        "Skill '{query}' could not be loaded: {location}: {}. The file must be fixed before the skill can be used (`skillserve check` shows how); tell the user.",
        diagnostic.message
    )
}

/// The answer when the skill is loaded but quarantined (`report` holds
/// its error-level findings): what was found, and that only the user can
/// release it.
pub fn quarantined(skill: &Skill, report: &Report) -> String {
    // The rule and where, never the evidence: the finding's message quotes
    // the attacker's text, which must not reach the model this way.
    let mut errors = report.errors();
    let reason = errors.next().map_or_else(String::new, |f| {
        format!(
            ": {} ({})",
            printable(&f.short()),
            security::rule(f.finding.code)
        )
    });
    let more = match errors.count() {
        0 => String::new(),
        n => format!(" (and {n} more finding{})", plural(n)),
    };
    format!(
        "Skill '{}' is quarantined{reason}{more}. It comes from a {} folder that is not the user's own, and is not served until the user reviews it and runs `skillserve trust {}`. Do not look for its files elsewhere; tell the user.",
        skill.name, skill.source, skill.name
    )
}

/// The answer when a file of a skill that is not the user's own is not
/// what its security scan read (changed since, or not scanned yet), and
/// is still not once the skill was scanned again.
pub fn unscanned(name: &str, file: &str) -> String {
    format!(
        "Skill '{name}' is not served right now: its file {} changed since the security scan read it, and a skill from a folder that is not the user's own is served only as it was scanned. It is being scanned again; call the skill again in a moment.",
        printable(file)
    )
}

/// The answer when the `name` argument is missing, empty or not a string;
/// `problem` says which.
pub fn invalid_params(problem: &str) -> String {
    format!(
        "Invalid params: the string argument `name` is required ({problem}). Example: {{\"name\": \"pdf\"}}"
    )
}

/// The answer when the `file` argument is given but is not a string.
pub fn invalid_file_argument() -> String {
    "Invalid params: `file`, when given, must be a string naming a file inside the skill's folder. Example: {\"name\": \"pdf\", \"file\": \"references/forms.md\"}".to_owned()
}

/// The answer when the `name` argument is longer than [`MAX_QUERY_CHARS`].
pub fn name_too_long() -> String {
    format!(
        "Invalid params: the argument `name` is longer than {MAX_QUERY_CHARS} characters. Call `skill` with a skill's name, or with a few words describing the task."
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

/// A listing shows at most this many files; the rest are counted.
pub const MAX_FILE_LINES: usize = 100;

/// The second block of a plain call (behaviour.md §9): the skill's files
/// other than its SKILL.md, how to read one, and where the listing stopped.
/// `None` when the skill has no other files.
pub fn files_block(skill: &Skill, listing: &Listing) -> Option<String> {
    let others: Vec<&listing::Entry> = listing
        .files
        .iter()
        .filter(|e| !skill.is_own_file(&e.path))
        .collect();
    let first = others.first()?;
    let mut out = format!(
        "Files in this skill ({} to read one):",
        how_to_read(&skill.name, &first.path)
    );
    file_lines(&mut out, &others, listing.truncated);
    Some(out)
}

/// The answer when `file` names a folder ("" for the skill folder itself):
/// the files below it, in the format of [`files_block`].
pub fn folder(skill: &Skill, folder: &str, listing: &Listing) -> String {
    let name = if folder.is_empty() {
        skill.name.to_string()
    } else {
        format!("{}/{folder}", skill.name)
    };
    let all: Vec<&listing::Entry> = listing.files.iter().collect();
    let Some(first) = all.first() else {
        let mut out = format!(
            "No files in {name}: hidden files and folders and `node_modules` are not listed."
        );
        if let Some(limit) = listing.truncated {
            out.push('\n');
            out.push_str(&limit_line(limit));
        }
        return out;
    };
    let mut out = format!(
        "Files in {name} ({} to read one):",
        how_to_read(&skill.name, &first.path)
    );
    file_lines(&mut out, &all, listing.truncated);
    out
}

/// `call skill with {"name": …, "file": …}`, the values as JSON strings.
fn how_to_read(name: &str, file: &str) -> String {
    let json = |text: &str| serde_json::Value::from(text).to_string();
    format!(
        "call skill with {{\"name\": {}, \"file\": {}}}",
        json(name),
        json(file)
    )
}

/// `- path (size)` lines, at most [`MAX_FILE_LINES`] then how many more, and
/// the line saying where the walk stopped.
fn file_lines(out: &mut String, entries: &[&listing::Entry], truncated: Option<Limit>) {
    for entry in entries.iter().take(MAX_FILE_LINES) {
        let _ = write!(out, "\n- {} ({})", entry.path, human_size(entry.size));
    }
    if entries.len() > MAX_FILE_LINES {
        let _ = write!(out, "\n- … and {} more", entries.len() - MAX_FILE_LINES);
    }
    if let Some(limit) = truncated {
        out.push('\n');
        out.push_str(&limit_line(limit));
    }
}

fn limit_line(limit: Limit) -> String {
    let folder = "name a folder as `file` to list the files in it.";
    match limit {
        Limit::Files => format!(
            "The listing stops at {} files; {folder}",
            spec::MAX_SKILL_FILES
        ),
        Limit::Bytes => format!(
            "The listing stops at {} MiB of files; {folder}",
            spec::MAX_SKILL_BYTES / (1024 * 1024)
        ),
        Limit::Folders => format!(
            "The listing stops after {} folders; {folder}",
            listing::MAX_DIRS
        ),
        Limit::Depth => format!(
            "Folders more than {} levels deep are not listed.",
            listing::MAX_DEPTH
        ),
    }
}

/// A size for people: bytes below 1 KB, else KB or MB (of 1024) with one
/// decimal.
pub fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = KB * KB;
    match bytes {
        0..KB => format!("{bytes} B"),
        KB..MB => format!("{:.1} KB", bytes as f64 / KB as f64),
        _ => format!("{:.1} MB", bytes as f64 / MB as f64),
    }
}

/// The answer for a text file: its own header, then the text exactly as read.
pub fn loading_file(skill: &Skill, file: &str, text: &str, base: &str) -> String {
    with_text(skill, file, base, text)
}

/// The text block of an image (the image itself is another block).
pub fn loading_image(skill: &Skill, file: &str, mime: &str, size: u64, base: &str) -> String {
    with_text(
        skill,
        file,
        base,
        &format!("{file} is an image ({mime}, {}).", human_size(size)),
    )
}

/// The answer for a file that is neither text nor an image.
pub fn binary_file(file: &str, mime: &str, size: u64) -> String {
    format!(
        "{file} is a binary file ({mime}, {}); it cannot be shown as text.",
        human_size(size)
    )
}

/// The answer when `file` cannot be served: `Skill 'pdf' has no file 'X'.`
/// with similar paths, or why it is refused.
pub fn file_error(name: &str, file: &str, error: &FileError) -> String {
    let file = shown(file);
    let FileError::NotFound { suggestions } = error else {
        return format!("Skill '{name}' cannot serve '{file}': {error}.");
    };
    let mut out = format!("Skill '{name}' has no file '{file}'.");
    if suggestions.is_empty() {
        let _ = write!(
            out,
            " Call `skill` with {{\"name\": {}}} to see its files.",
            serde_json::Value::from(name)
        );
        return out;
    }
    out.push_str(" Did you mean one of these?");
    for path in suggestions {
        out.push_str("\n- ");
        out.push_str(path);
    }
    out.push_str("\nCall `skill` again with one of these as `file`.");
    out
}

/// A requested path as an answer may quote it: control characters escaped
/// (a line break must not forge a line), at most 200 characters.
fn shown(file: &str) -> String {
    const MAX_CHARS: usize = 200;
    match file.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => format!("{}…", printable(&file[..end])),
        None => printable(file).into_owned(),
    }
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
    fn under_budget_the_order_stays_whatever_was_used() {
        let skills = [
            Skill::for_test("a", "first"),
            Skill::for_test("b", "second"),
        ];
        let uses = |s: &Skill| u32::from(&*s.name == "b");
        assert_eq!(
            catalog("H:", &skills, 8000, &uses),
            "H:\n- a: first\n- b: second"
        );
    }

    #[test]
    fn over_budget_used_skills_come_first_and_keep_their_descriptions() {
        let skills: Vec<Skill> = ["alpha", "beta", "gamma", "delta"]
            .iter()
            .map(|name| Skill::for_test(name, &format!("{name} {}", "word ".repeat(30))))
            .collect();
        // gamma used most, then beta; alpha and delta not at all.
        let uses = |s: &Skill| match &*s.name {
            "gamma" => 5,
            "beta" => 2,
            _ => 0,
        };
        let text = catalog(DESCRIPTION_HEADER, &skills, 500, &uses);
        assert!(text.chars().count() <= 500, "{}", text.chars().count());
        let lines: Vec<&str> = text.lines().skip(3).collect();
        let full = |name: &str| format!("- {name}: {name} {}", "word ".repeat(30).trim_end());
        assert_eq!(lines[0], full("gamma"));
        assert_eq!(lines[1], full("beta"));
        // The unused ones share what is left, cut to one length.
        assert!(lines[2].starts_with("- alpha: alpha word") && lines[2].ends_with('…'));
        assert!(lines[3].starts_with("- delta: delta word") && lines[3].ends_with('…'));
        // Without use, every description is cut alike, in the order given.
        let plain = tool_description(&skills, 500);
        assert!(plain.lines().nth(3).unwrap().starts_with("- alpha:"));
        assert!(
            plain
                .lines()
                .all(|l| !l.starts_with("- ") || l.ends_with('…'))
        );
    }

    #[test]
    fn unused_skills_lose_their_descriptions_before_used_ones_are_cut() {
        let skills: Vec<Skill> = (0..12)
            .map(|i| Skill::for_test(&format!("skill-{i:02}"), &"d".repeat(60)))
            .collect();
        let uses = |s: &Skill| u32::from(&*s.name == "skill-07");
        let text = catalog(DESCRIPTION_HEADER, &skills, 300, &uses);
        assert!(text.chars().count() <= 300, "{}", text.chars().count());
        let lines: Vec<&str> = text.lines().skip(3).collect();
        assert_eq!(lines[0], format!("- skill-07: {}", "d".repeat(60)));
        assert_eq!(lines[1], "- skill-00");
        assert_eq!(lines.len(), 12);
        // When even the names do not fit, the used skill is kept first.
        let many: Vec<Skill> = (0..30)
            .map(|i| Skill::for_test(&format!("skill-{i:02}"), "d"))
            .collect();
        let text = catalog(DESCRIPTION_HEADER, &many, 250, &uses);
        assert_eq!(text.lines().nth(3), Some("- skill-07"));
        assert_eq!(text.lines().nth(4), Some("- skill-00"));
        assert!(text.ends_with(&more_line(30 - (text.lines().count() - 4))));
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

    /// A listing of `entries` (path, size), in the order given.
    fn listing<P: AsRef<str>>(entries: &[(P, u64)]) -> Listing {
        Listing {
            files: entries
                .iter()
                .map(|(path, size)| listing::Entry {
                    path: path.as_ref().to_owned(),
                    size: *size,
                })
                .collect(),
            truncated: None,
        }
    }

    #[test]
    fn the_files_block_lists_the_other_files_and_how_to_read_one() {
        let pdf = Skill::for_test("pdf", "d");
        let files = listing(&[
            ("SKILL.md", 100),
            ("assets/big.bin", 3 * 1024 * 1024 + 1),
            ("references/forms.md", 12_595),
            ("scripts/fill_form.py", 4200),
        ]);
        assert_eq!(
            files_block(&pdf, &files).unwrap(),
            "Files in this skill (call skill with {\"name\": \"pdf\", \"file\": \"assets/big.bin\"} to read one):\n\
             - assets/big.bin (3.0 MB)\n\
             - references/forms.md (12.3 KB)\n\
             - scripts/fill_form.py (4.1 KB)"
        );
        assert_eq!(files_block(&pdf, &listing(&[("SKILL.md", 1)])), None);
    }

    #[test]
    fn a_long_listing_stops_at_100_lines_and_says_where_the_walk_stopped() {
        let pdf = Skill::for_test("pdf", "d");
        let mut files = listing(
            &(0..150)
                .map(|i| (format!("f{i:03}.md"), 1))
                .collect::<Vec<_>>(),
        );
        files.truncated = Some(Limit::Files);
        let text = files_block(&pdf, &files).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 100 + 2);
        assert_eq!(lines[100], "- f099.md (1 B)");
        assert_eq!(lines[101], "- … and 50 more");
        assert_eq!(
            lines[102],
            "The listing stops at 512 files; name a folder as `file` to list the files in it."
        );
    }

    #[test]
    fn a_folder_lists_its_files_or_says_it_has_none() {
        let pdf = Skill::for_test("pdf", "d");
        let files = listing(&[("references/forms.md", 63)]);
        assert_eq!(
            folder(&pdf, "references", &files),
            "Files in pdf/references (call skill with {\"name\": \"pdf\", \"file\": \"references/forms.md\"} to read one):\n- references/forms.md (63 B)"
        );
        assert_eq!(
            folder(&pdf, "empty", &Listing::default()),
            "No files in pdf/empty: hidden files and folders and `node_modules` are not listed."
        );
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1024), "1.0 KB");
        assert_eq!(human_size(49_357), "48.2 KB");
        assert_eq!(human_size(16 * 1024 * 1024), "16.0 MB");
    }

    #[test]
    fn file_errors_name_the_skill_the_file_and_the_problem() {
        assert_eq!(
            file_error(
                "pdf",
                "reference/form.md",
                &FileError::NotFound {
                    suggestions: vec!["references/forms.md".into()]
                }
            ),
            "Skill 'pdf' has no file 'reference/form.md'. Did you mean one of these?\n- references/forms.md\nCall `skill` again with one of these as `file`."
        );
        assert_eq!(
            file_error(
                "pdf",
                "x",
                &FileError::NotFound {
                    suggestions: vec![]
                }
            ),
            "Skill 'pdf' has no file 'x'. Call `skill` with {\"name\": \"pdf\"} to see its files."
        );
        assert_eq!(
            file_error("pdf", "a\nb", &FileError::Control),
            "Skill 'pdf' cannot serve 'a\\nb': the path holds a control character (a line break, say)."
        );
        let long = "x".repeat(300);
        assert!(
            file_error("pdf", &long, &FileError::TooLong)
                .contains(&format!("'{}…'", "x".repeat(200)))
        );
    }

    #[test]
    fn not_found_lists_matches_with_one_line_of_description() {
        let long = Skill::for_test("pdf", &format!("{} end", "word ".repeat(30)));
        let short = Skill::for_test("pdf-tools", "Split PDF pages.");
        let bare = Skill::for_test("empty", "");
        assert_eq!(
            not_found(
                "fill a pdf form",
                &[&long, &short, &bare],
                3,
                Placement::Tool
            ),
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
            not_found("zzz", &[], 0, Placement::Tool),
            "Skill 'zzz' not found. No skills are installed."
        );
        assert_eq!(
            not_found("zzz", &[], 1, Placement::Tool),
            "Skill 'zzz' not found. There is 1 skill; the `skill` tool description lists it."
        );
        assert_eq!(
            not_found("zzz", &[], 7, Placement::Tool),
            "Skill 'zzz' not found. There are 7 skills; the `skill` tool description lists them."
        );
        assert_eq!(
            not_found("zzz", &[], 7, Placement::Instructions),
            "Skill 'zzz' not found. There are 7 skills; this server's instructions list them."
        );
        assert_eq!(
            not_found("zzz", &[], 1, Placement::Instructions),
            "Skill 'zzz' not found. There is 1 skill; this server's instructions list it."
        );
    }

    #[test]
    fn not_found_echoes_at_most_80_characters_of_the_name() {
        let eighty = "é".repeat(80);
        assert!(
            not_found(&eighty, &[], 2, Placement::Tool)
                .starts_with(&format!("Skill '{eighty}' not found."))
        );
        let longer = "é".repeat(81);
        let cut = "é".repeat(79);
        assert!(
            not_found(&longer, &[], 2, Placement::Tool)
                .starts_with(&format!("Skill '{cut}…' not found."))
        );
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
