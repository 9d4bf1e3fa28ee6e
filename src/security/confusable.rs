//! Letters that look like Latin ones: Cyrillic `р` for `p`, Greek `ο` for
//! `o`, fullwidth `ｃ`, mathematical `𝐢`. A word that mixes them with Latin
//! letters reads the same to a person and differently to a filter (an
//! injection spelled `Ignоre` escapes a rule looking for `ignore`), and a
//! skill named `рdf` beside `pdf` takes calls meant for it.
//!
//! The table is the part of Unicode's confusables (UTS #39) that maps to
//! single ASCII letters, for the scripts that have such twins: Cyrillic,
//! Greek, Armenian, Cherokee's few, and Latin's own look-alikes (dotless
//! `ı`, script `ɡ`); fullwidth and mathematical letters are folded by their
//! offsets.

/// The ASCII letter or digit `c` is drawn like, if it is a look-alike of one
/// from another block (never an ASCII character itself).
pub(super) fn twin(c: char) -> Option<char> {
    if c.is_ascii() {
        return None;
    }
    let code = u32::from(c);
    // Fullwidth ASCII.
    if (0xFF01..=0xFF5E).contains(&code) {
        return char::from_u32(code - 0xFEE0).filter(char::is_ascii_alphanumeric);
    }
    // Mathematical alphanumeric symbols: 13 alphabets of 52 letters, then
    // 5 sets of 10 digits.
    if (0x1D400..=0x1D6A3).contains(&code) {
        let index = (code - 0x1D400) % 52;
        let base = if index < 26 { b'A' } else { b'a' - 26 };
        return Some(char::from(base + index as u8));
    }
    if (0x1D7CE..=0x1D7FF).contains(&code) {
        return Some(char::from(b'0' + ((code - 0x1D7CE) % 10) as u8));
    }
    TWINS
        .binary_search_by_key(&c, |&(twin, _)| twin)
        .ok()
        .map(|at| TWINS[at].1)
}

/// Look-alikes and the ASCII letter each is drawn like, sorted by the
/// look-alike.
const TWINS: &[(char, char)] = &[
    ('ı', 'i'),
    ('ɑ', 'a'),
    ('ɡ', 'g'),
    ('ɩ', 'i'),
    ('ʏ', 'y'),
    ('Α', 'A'),
    ('Β', 'B'),
    ('Ε', 'E'),
    ('Ζ', 'Z'),
    ('Η', 'H'),
    ('Ι', 'I'),
    ('Κ', 'K'),
    ('Μ', 'M'),
    ('Ν', 'N'),
    ('Ο', 'O'),
    ('Ρ', 'P'),
    ('Τ', 'T'),
    ('Υ', 'Y'),
    ('Χ', 'X'),
    ('α', 'a'),
    ('γ', 'y'),
    ('ι', 'i'),
    ('κ', 'k'),
    ('ν', 'v'),
    ('ο', 'o'),
    ('ρ', 'p'),
    ('υ', 'u'),
    ('χ', 'x'),
    ('ϲ', 'c'),
    ('ϳ', 'j'),
    ('Ѕ', 'S'),
    ('І', 'I'),
    ('Ј', 'J'),
    ('А', 'A'),
    ('В', 'B'),
    ('Е', 'E'),
    ('К', 'K'),
    ('М', 'M'),
    ('Н', 'H'),
    ('О', 'O'),
    ('Р', 'P'),
    ('С', 'C'),
    ('Т', 'T'),
    ('У', 'Y'),
    ('Х', 'X'),
    ('а', 'a'),
    ('е', 'e'),
    ('о', 'o'),
    ('р', 'p'),
    ('с', 'c'),
    ('у', 'y'),
    ('х', 'x'),
    ('ѕ', 's'),
    ('і', 'i'),
    ('ј', 'j'),
    ('ѵ', 'v'),
    ('Ү', 'Y'),
    ('ү', 'y'),
    ('Ӏ', 'l'),
    ('ӏ', 'l'),
    ('ԁ', 'd'),
    ('ԛ', 'q'),
    ('ԝ', 'w'),
    ('հ', 'h'),
    ('ո', 'n'),
    ('ս', 'u'),
    ('ց', 'g'),
    ('օ', 'o'),
    ('Ꭺ', 'A'),
    ('Ꭼ', 'E'),
    ('Ꮃ', 'W'),
    ('Ꮇ', 'M'),
    ('Ꮋ', 'H'),
    ('Ꮪ', 'S'),
    ('Ꮯ', 'C'),
    ('Ꮲ', 'P'),
    ('Ꮶ', 'K'),
];

/// `text` as it looks: look-alikes as the ASCII letters they are drawn
/// like, lowercased, invisible characters dropped. Two names with the same
/// skeleton cannot be told apart by a person.
pub(super) fn skeleton(text: &str) -> String {
    text.chars()
        .filter(|&c| !super::invisible::is_invisible(c))
        .map(|c| twin(c).unwrap_or(c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `word` mixes Latin letters with look-alikes from another
/// script (`Ignоre` with a Cyrillic `о`, `рdf`): written so, it only serves
/// to look like one word and be another. Greek small letters other than
/// omicron do not count: science writes them beside Latin ones as symbols
/// (`Cα`, `FcγRIIIa`), and they are told apart from Latin letters; Greek
/// capitals that are Latin's twins and omicron have no such use.
pub(super) fn mixes_scripts(word: &str) -> bool {
    let mut latin = false;
    let mut other = false;
    for c in word.chars() {
        let greek_symbol = ('\u{3b1}'..='\u{3c9}').contains(&c) && c != '\u{3bf}';
        if c.is_ascii_alphabetic() {
            latin = true;
        } else if twin(c).is_some_and(|t| t.is_ascii_alphabetic())
            && !greek_symbol
            && !(0xFF01..=0xFF5E).contains(&u32::from(c))
            && !(0x1D400..=0x1D7FF).contains(&u32::from(c))
        {
            other = true;
        }
        if latin && other {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_for_its_binary_search() {
        assert!(TWINS.windows(2).all(|w| w[0].0 < w[1].0), "{TWINS:?}");
    }

    #[test]
    fn look_alikes_fold_to_what_they_look_like() {
        assert_eq!(skeleton("рdf"), "pdf");
        assert_eq!(skeleton("ＰＤＦ"), "pdf");
        assert_eq!(skeleton("𝐢𝐠𝐧𝐨𝐫𝐞"), "ignore");
        assert_eq!(skeleton("Ignоre"), "ignore");
        assert_eq!(skeleton("pd\u{200b}f"), "pdf");
        // Other letters stay as they are.
        assert_eq!(skeleton("привет"), "пpивeт");
        assert!(mixes_scripts("рdf"));
        assert!(mixes_scripts("Ignоre"));
        assert!(!mixes_scripts("привет"));
        assert!(!mixes_scripts("Ελληνικά"));
        assert!(!mixes_scripts("pdf"));
        assert!(!mixes_scripts("ＰＤＦfile"));
        // Greek letters as symbols in science.
        assert!(!mixes_scripts("FcγRIIIa"));
        assert!(!mixes_scripts("Cα"));
        assert!(mixes_scripts("Ιgnore"));
    }
}
