//! Property tests: the parser, the description renderer and name resolution
//! hold their promises for arbitrary input.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use skillserve::config::MIN_DESCRIPTION_BUDGET;
use skillserve::parse::{self, DescriptionFrom, NameFrom, Parsed};
use skillserve::profiles::View;
use skillserve::render::{DESCRIPTION_HEADER, tool_description};
use skillserve::resolve::{Resolution, resolve};
use skillserve::roots::{Layout, Root, SkillFile, Source};
use skillserve::scan::{Found, Scan};
use skillserve::search;
use skillserve::skill::Skill;
use skillserve::snapshot::Snapshot;

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..max).prop_map(|chars| chars.into_iter().collect())
}

/// Text made of the characters that matter to frontmatter: delimiters,
/// quotes, colons, line breaks, a BOM, YAML indicators.
fn frontmatter_like() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "---",
        "\n",
        "\r\n",
        "name",
        "description",
        ": ",
        ":",
        "\"",
        "'",
        "#",
        "-",
        " ",
        "  ",
        "[",
        "]",
        "{",
        "}",
        "|",
        ">",
        "\u{feff}",
        "é",
        "中",
        "🎉",
        "\t",
        "&a",
        "*a",
        "!!str",
        "...",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|p| p.concat())
}

/// A skill as the scan would produce it: a name without control characters.
fn skill(index: usize, name: &str, description: &str) -> Skill {
    Skill {
        name: name.into(),
        dir: Path::new(&format!("/skills/{index}")).into(),
        file_name: SkillFile::Upper,
        source: Source::User,
        root: Arc::new(Root::new("/skills".into(), Source::User, Layout::Folders)),
        parsed: Arc::new(Parsed::new(
            name,
            NameFrom::Frontmatter,
            description,
            DescriptionFrom::Frontmatter,
        )),
        lone: None,
    }
}

fn names() -> impl Strategy<Value = Vec<(String, String)>> {
    // As the parser leaves them: trimmed, no control characters.
    let name = prop::collection::vec(any::<char>(), 1..30)
        .prop_map(|c| {
            let name: String = c
                .into_iter()
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            name.trim().to_owned()
        })
        .prop_filter("not blank", |n| !n.is_empty());
    prop::collection::vec((name, text(200)), 0..60).prop_map(|mut entries| {
        // Names are unique case-insensitively once the snapshot is built.
        let mut seen = HashSet::new();
        entries.retain(|(n, _)| seen.insert(n.to_lowercase()));
        entries
    })
}

/// Text mixing ASCII words and separators with accented letters, CJK,
/// capitals and punctuation outside ASCII.
fn mixed_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "pdf", "PDF", "Tools", "a", "x", " ", "-", "_", ":", ".", "é", "É", "ß", "İ", "中", "文",
        "の", "한", "—", "…", "，", "1", "v2", "\u{301}", "🎉", "\t",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|p| p.concat())
}

/// `search::words`, character by character: the words of `text` are its
/// runs of letters and digits, lowercased, each Chinese, Japanese or Korean
/// character on its own, and at least two characters long otherwise.
fn plain_words(text: &str) -> Vec<String> {
    let ideograph = |c: char| {
        matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}'
            | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{2FA1F}')
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if word.chars().count() >= 2 {
            words.push(std::mem::take(word));
        }
        word.clear();
    };
    for c in text.chars() {
        if ideograph(c) {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word, &mut words);
        }
    }
    flush(&mut word, &mut words);
    words
}

fn snapshot(entries: &[(String, String)]) -> Snapshot {
    let root = Root::new("/skills".into(), Source::User, Layout::Folders);
    let scan = Scan {
        skills: entries
            .iter()
            .enumerate()
            .map(|(i, (name, description))| {
                let skill = skill(i, name, description);
                Found {
                    dir: skill.dir,
                    file_name: skill.file_name,
                    root: 0,
                    parsed: skill.parsed,
                    lone: None,
                }
            })
            .collect(),
        ..Scan::default()
    };
    Snapshot::build(vec![root], scan, Vec::new(), None)
}

/// The view of every skill of [`snapshot`], as a client no setting concerns
/// sees it.
fn view(entries: &[(String, String)]) -> View {
    View::unfiltered(Arc::new(snapshot(entries)), 8000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic_the_parser(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(&path, &bytes).unwrap();
        let _ = parse::read_frontmatter(&path, "folder", 1 << 20);
        let _ = skillserve::disk::read_text(&path, 1 << 20);
        let _ = parse::parse_text(&String::from_utf8_lossy(&bytes), "folder");
    }

    #[test]
    fn frontmatter_like_text_never_panics_and_names_are_one_line(text in frontmatter_like()) {
        if let Ok(parsed) = parse::parse_text(&text, "folder") {
            prop_assert!(!parsed.name.is_empty());
            prop_assert!(!parsed.name.chars().any(char::is_control));
            prop_assert!(!parsed.one_line_description().chars().any(char::is_control));
        }
    }

    #[test]
    fn the_description_respects_the_budget_and_names_every_skill_when_names_fit(
        entries in names(),
        budget in MIN_DESCRIPTION_BUDGET..12_000usize,
    ) {
        let skills: Vec<Skill> = entries.iter().enumerate().map(|(i, (n, d))| skill(i, n, d)).collect();
        let description = tool_description(&skills, budget);
        prop_assert!(description.chars().count() <= budget, "{} > {budget}", description.chars().count());
        prop_assert!(description.starts_with(DESCRIPTION_HEADER));
        let names_only = DESCRIPTION_HEADER.chars().count()
            + skills.iter().map(|s| 3 + s.name.chars().count()).sum::<usize>();
        if names_only <= budget {
            let lines: Vec<&str> = description.lines().collect();
            for skill in &skills {
                let bare = format!("- {}", skill.name);
                let with = format!("- {}: ", skill.name);
                prop_assert!(
                    lines.iter().any(|l| *l == bare || l.starts_with(&with)),
                    "{} missing from:\n{description}", skill.name
                );
            }
        }
    }

    #[test]
    fn resolving_any_string_stays_inside_the_snapshot(entries in names(), query in text(40)) {
        let snapshot = view(&entries);
        let files: HashSet<PathBuf> = snapshot.skills().map(Skill::file).collect();
        match resolve(&snapshot, &query) {
            Resolution::Found(skill) => prop_assert!(files.contains(&skill.file())),
            Resolution::Ambiguous(skills) => {
                prop_assert!(skills.len() > 1);
                prop_assert!(skills.iter().all(|s| files.contains(&s.file())));
            }
            Resolution::NotFound => {}
        }
        let matches = snapshot.search(&query, 5);
        prop_assert!(matches.len() <= 5);
        prop_assert!(matches.iter().all(|s| files.contains(&s.file())));
    }

    #[test]
    fn the_words_of_any_text_are_those_of_a_plain_reading(text in mixed_text()) {
        let mut fast = Vec::new();
        search::words(&text, &mut String::new(), |w| fast.push(w.to_owned()));
        prop_assert_eq!(fast, plain_words(&text));
    }

    #[test]
    fn every_served_name_resolves_to_itself(entries in names()) {
        let snapshot = view(&entries);
        for skill in snapshot.skills() {
            match resolve(&snapshot, &skill.name) {
                Resolution::Found(found) => prop_assert_eq!(found.file(), skill.file()),
                other => prop_assert!(false, "{} resolved to {other:?}", skill.name),
            }
        }
    }
}
