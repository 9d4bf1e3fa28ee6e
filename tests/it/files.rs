//! A skill is a folder (behaviour.md §9): `skillserve show NAME [FILE]` through
//! the real binary, on `fixtures/files` plus what git cannot hold (a `.git`
//! folder, a FIFO, a skill of 600 files).

use crate::common::{
    FILES_ARGS as ARGS, Fixture, Output, assert_no_secret, files_fixture as fixture,
};

fn show(fixture: &Fixture, rest: &[&str]) -> Output {
    let mut args = vec!["show"];
    args.extend(rest);
    args.extend(ARGS);
    let out = fixture.run(&args);
    let context = format!("{rest:?}");
    assert_no_secret(&context, &out.stdout);
    assert_no_secret(&context, &out.stderr);
    out
}

const PDF_SKILL_MD: &str = "\
---
name: pdf
description: Fill PDF forms; a skill with references, scripts and assets.
---

# PDF forms

Read `references/forms.md` first, then run `scripts/fill_form.py`.
";

#[test]
fn a_plain_load_lists_the_other_files_after_skill_md() {
    let fixture = fixture();
    let out = show(&fixture, &["pdf"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        format!(
            "Loading: pdf\nBase directory: <T>/files/pdf\n\n{PDF_SKILL_MD}\n\
Files in this skill (call skill with {{\"name\": \"pdf\", \"file\": \"assets/data.bin\"}} to read one):
- assets/data.bin (1.0 KB)
- assets/logo.png (69 B)
- links/forms.md (63 B)
- links/refs/forms.md (63 B)
- links/refs/nested/deep.md (38 B)
- references/forms.md (63 B)
- references/nested/deep.md (38 B)
- scripts/fill_form.py (76 B)
"
        )
    );
}

#[test]
fn a_skill_without_other_files_has_no_files_block() {
    let fixture = fixture();
    let out = show(&fixture, &["plain"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Loading: plain\nBase directory: <T>/files/plain\n\n---\nname: plain\ndescription: A skill with no other files.\n---\n\nNothing else here.\n"
    );
}

#[test]
fn a_text_file_comes_back_verbatim_under_its_own_header() {
    let fixture = fixture();
    for file in ["references/forms.md", "./references//forms.md"] {
        let out = show(&fixture, &["pdf", file]);
        assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
        assert_eq!(
            fixture.anonymize(&out.stdout),
            "Loading: pdf/references/forms.md\nBase directory: <T>/files/pdf\n\n# Forms\n\nFields are listed with `scripts/fill_form.py --list`.\n"
        );
    }
    // Through a symlink that stays inside: named as asked.
    let out = show(&fixture, &["pdf", "links/refs/nested/deep.md"]);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Loading: pdf/links/refs/nested/deep.md\nBase directory: <T>/files/pdf\n\n# Deep\n\nA reference two folders down.\n"
    );
    let out = show(&fixture, &["pdf", "SKILL.md"]);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        format!("Loading: pdf/SKILL.md\nBase directory: <T>/files/pdf\n\n{PDF_SKILL_MD}")
    );
}

#[test]
fn a_folder_lists_the_files_below_it() {
    let fixture = fixture();
    let out = show(&fixture, &["pdf", "references/"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "Files in pdf/references (call skill with {\"name\": \"pdf\", \"file\": \"references/forms.md\"} to read one):
- references/forms.md (63 B)
- references/nested/deep.md (38 B)
"
    );
    // The skill folder itself, SKILL.md included; `links/self` (a link back
    // up) is not followed.
    let out = show(&fixture, &["pdf", "."]);
    assert_eq!(
        out.stdout.lines().take(3).collect::<Vec<_>>(),
        [
            "Files in pdf (call skill with {\"name\": \"pdf\", \"file\": \"SKILL.md\"} to read one):",
            "- SKILL.md (173 B)",
            "- assets/data.bin (1.0 KB)",
        ]
    );
    assert!(!out.stdout.contains("links/self"), "{}", out.stdout);
    let out = show(&fixture, &["pdf", "links"]);
    assert_eq!(
        out.stdout,
        "Files in pdf/links (call skill with {\"name\": \"pdf\", \"file\": \"links/forms.md\"} to read one):
- links/forms.md (63 B)
- links/refs/forms.md (63 B)
- links/refs/nested/deep.md (38 B)
"
    );
}

#[test]
fn binary_files_are_described_and_images_announced() {
    let fixture = fixture();
    let out = show(&fixture, &["pdf", "assets/data.bin"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "assets/data.bin is a binary file (application/octet-stream, 1.0 KB); it cannot be shown as text.\n"
    );
    // The CLI prints the image's text block; a client also gets the image.
    let out = show(&fixture, &["pdf", "assets/logo.png"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Loading: pdf/assets/logo.png\nBase directory: <T>/files/pdf\n\nassets/logo.png is an image (image/png, 69 B).\n"
    );
}

#[test]
fn a_missing_file_exits_1_with_similar_paths() {
    let fixture = fixture();
    let out = show(&fixture, &["pdf", "reference/form.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "Skill 'pdf' has no file 'reference/form.md'. Did you mean one of these?
- references/forms.md
- links/refs/forms.md
- links/forms.md
Call `skill` again with one of these as `file`.
"
    );
    let out = show(&fixture, &["pdf", "%2e%2e/outside.txt"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        out.stderr,
        "Skill 'pdf' has no file '%2e%2e/outside.txt'. Call `skill` with {\"name\": \"pdf\"} to see its files.\n"
    );
    // An unknown skill is answered as without `file`.
    let out = show(&fixture, &["pfd", "references/forms.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        out.stderr,
        "Skill 'pfd' not found. Did you mean one of these?\n- pdf: Fill PDF forms; a skill with references, scripts and assets.\nCall `skill` again with one of these names.\n"
    );
}

#[test]
fn nothing_outside_the_skill_hidden_or_not_regular_is_ever_read() {
    let fixture = fixture();
    const CLIMBS: &str = "`..` is not allowed; only files inside the skill's folder can be read";
    const ABSOLUTE: &str = "`file` must be relative to the skill's folder (like `references/forms.md`), not an absolute path";
    const OUTSIDE: &str =
        "it leads outside the skill's folder through a symlink, so it is not read";
    // Where a symlink leads is never named, hidden or not.
    const HIDDEN_TARGET: &str = "it leads to a hidden file or folder or `node_modules` under another name (a symlink, say), which are never served";
    let hidden = |name: &str| {
        format!("`{name}` is not served; hidden files and folders and `node_modules` never are")
    };
    let cases: Vec<(&str, String)> = vec![
        ("../outside.txt", CLIMBS.into()),
        ("references/../../outside.txt", CLIMBS.into()),
        ("references/../SKILL.md", CLIMBS.into()),
        ("/etc/passwd", ABSOLUTE.into()),
        ("C:\\x", ABSOLUTE.into()),
        ("//server/share", ABSOLUTE.into()),
        (
            "references\\forms.md",
            "use `/` to separate folders, not `\\`".into(),
        ),
        (".secret", hidden(".secret")),
        (".git/config", hidden(".git")),
        ("node_modules/x.js", hidden("node_modules")),
        ("links/secret", HIDDEN_TARGET.into()),
        ("links/escape", OUTSIDE.into()),
        ("links/passwd", OUTSIDE.into()),
        ("links/up/outside.txt", OUTSIDE.into()),
        (
            "pipe",
            "it is not a regular file (a FIFO, socket or device), so it is not read".into(),
        ),
        (
            "forms\n.md",
            "the path holds a control character (a line break, say)".into(),
        ),
    ];
    for (file, reason) in cases {
        let out = show(&fixture, &["pdf", file]);
        assert_eq!(out.status.code(), Some(1), "{file:?}: {}", out.stdout);
        assert_eq!(out.stdout, "", "{file:?}");
        let shown = file.replace('\n', "\\n");
        assert_eq!(
            out.stderr,
            format!("Skill 'pdf' cannot serve '{shown}': {reason}.\n"),
            "{file:?}"
        );
    }
    // Case tricks find nothing on a case-sensitive file system, and at most
    // the skill's own files elsewhere.
    for file in ["skill.MD", "REFERENCES/FORMS.MD"] {
        let out = show(&fixture, &["pdf", file]);
        assert!(out.stdout.is_empty() || out.stdout.starts_with("Loading: pdf/"));
    }
}

#[test]
fn a_skill_of_600_files_lists_512_and_says_so() {
    let fixture = fixture();
    fixture.write(
        "files/big/SKILL.md",
        "---\nname: big\ndescription: Many files.\n---\n",
    );
    for i in 0..600 {
        fixture.write(&format!("files/big/data/f{i:03}.txt"), "x");
    }
    let out = show(&fixture, &["big"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let block = out.stdout.split_once("\n\n").unwrap().1.split_once("\n\n");
    let files = block.map_or("", |(_, files)| files);
    let lines: Vec<&str> = files.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "Files in this skill (call skill with {\"name\": \"big\", \"file\": \"data/f000.txt\"} to read one):",
            "- data/f000.txt (1 B)",
        ]
    );
    // 512 files with SKILL.md: 511 others, 100 shown.
    assert_eq!(
        lines[100..],
        [
            "- data/f099.txt (1 B)",
            "- … and 411 more",
            "The listing stops at 512 files; name a folder as `file` to list the files in it.",
        ]
    );
    // The file past the listing's bound can still be read.
    let out = show(&fixture, &["big", "data/f599.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
}
