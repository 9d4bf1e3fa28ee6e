//! The page of the skills manager: one self-contained HTML document (inline
//! CSS and script, no external origin) assembled from `ui/` at build time,
//! with the nonce of its render when the MCP App resource is read. The same
//! page is `serve --http`'s `/`, without a nonce.

use std::sync::OnceLock;

const TEMPLATE: &str = include_str!("../../../ui/app.html");
const STYLE: &str = include_str!("../../../ui/app.css");
const SCRIPT: &str = include_str!("../../../ui/app.js");

/// Where the nonce's `<meta>` goes in the template.
const NONCE_MARK: &str = "<!--NONCE-->";

/// The template with the style and script in place, made once.
fn assembled() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        TEMPLATE
            .replace("/*STYLE*/", STYLE)
            .replace("/*SCRIPT*/", SCRIPT)
    })
}

/// The Content Security Policy of the page at `/`: its own inline script
/// and style (by their SHA-256), images only from `data:` (a skill's own
/// image files), requests only to its own origin.
pub fn content_security_policy() -> &'static str {
    static POLICY: OnceLock<String> = OnceLock::new();
    POLICY.get_or_init(|| {
        use base64::Engine;
        use sha2::Digest;
        let hash = |text: &str| {
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(text.as_bytes()))
        };
        format!(
            "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            hash(SCRIPT),
            hash(STYLE)
        )
    })
}

/// The page, with `nonce` in a `<meta name="skillserve-nonce">` when given.
pub fn html(nonce: Option<&str>) -> String {
    let page = assembled();
    let meta = match nonce {
        // The nonce is 64 hex digits: nothing in it needs escaping.
        Some(nonce) => format!(r#"<meta name="skillserve-nonce" content="{nonce}">"#),
        None => String::new(),
    };
    page.replacen(NONCE_MARK, &meta, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained_and_small() {
        let page = html(Some(&"ab".repeat(32)));
        assert!(page.len() <= 250 * 1024, "{} bytes", page.len());
        assert!(page.contains(&format!(r#"content="{}""#, "ab".repeat(32))));
        assert!(!page.contains("/*STYLE*/") && !page.contains("/*SCRIPT*/"));
        for external in [
            "src=\"http",
            "href=\"http",
            "@import",
            "url(http",
            "src='http",
        ] {
            assert!(!page.contains(external), "the page loads {external}");
        }
        assert!(!html(None).contains("skillserve-nonce\" content"));
        // The script and style are hashed for the CSP exactly as inlined.
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
        assert!(!SCRIPT.contains("</script") && !STYLE.contains("</style"));
    }
}
