//! Which characters are drawn as nothing: the one definition the rules
//! (`unicode`), the look-alike skeleton (`confusable`) and the command
//! reader share, kept apart so that neither of those needs the other.

/// Whether `c` is drawn as nothing (or as blank space that is no space):
/// zero-width characters, joiners, invisible operators, the soft hyphen,
/// bidirectional marks and controls, variation selectors, tag characters,
/// Hangul fillers.
pub(super) fn is_invisible(c: char) -> bool {
    // Most text is below the first of them.
    if c < '\u{ad}' {
        return false;
    }
    is_zero_width(c)
        || is_bidi(c)
        || is_tag(c)
        || is_variation_selector(c)
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Whether `text` holds an invisible character ([`is_invisible`]). Looks
/// only at the bytes that can start one (their UTF-8 forms start with
/// `C2`, `CD`, `D8`, `E1`, `E2`, `E3`, `EF`, `F0` or `F3`), so that most
/// non-ASCII text is passed over without decoding it.
pub(super) fn has_invisible(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Each of these bytes starts a character, so `at` is a char boundary.
    let invisible_at = |at: usize| text[at..].chars().next().is_some_and(is_invisible);
    memchr::memchr3_iter(0xe2, 0xef, 0xf3, bytes).any(invisible_at)
        || memchr::memchr3_iter(0xd8, 0xe1, 0xe3, bytes).any(invisible_at)
        || memchr::memchr3_iter(0xc2, 0xcd, 0xf0, bytes).any(invisible_at)
}

pub(super) fn is_tag(c: char) -> bool {
    ('\u{e0000}'..='\u{e007f}').contains(&c)
}

pub(super) fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
}

/// Zero-width characters, invisible operators and fillers: characters
/// with no glyph of their own.
pub(super) fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1d173}'..='\u{1d17a}'
    )
}

/// Bidirectional embeddings, overrides and isolates.
pub(super) fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
