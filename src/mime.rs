//! Content types: what a skill's file is (text, an image, or anything else)
//! and its MIME type, by extension from a table of the types skills carry,
//! confirmed by the first bytes for images.
//!
//! A table of our own rather than the `mime_guess` crate: its table (about
//! 1,500 types, built by a build script) answers `.ts` with a video type and
//! `.py` with `text/plain`, and skills need a few dozen types right.

/// A file's contents, as they can be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Valid UTF-8 without NUL bytes, verbatim (a leading BOM removed).
    Text { text: String, mime: &'static str },
    /// A PNG, JPEG, GIF or WebP file: by its extension and its first bytes.
    Image { bytes: Vec<u8>, mime: &'static str },
    /// Anything else: described, never shown.
    Binary { size: u64, mime: &'static str },
}

/// How many bytes of a file over the size cap are read to tell whether it is
/// text (then it is too large to show) or binary (then it is described).
pub const SNIFF_BYTES: usize = 8 * 1024;

/// What `bytes` (the whole file, or with `partial` its first bytes) are.
pub fn classify(rel: &str, mut bytes: Vec<u8>, size: u64, partial: bool) -> Content {
    let known = known_type(rel);
    if let Some(mime) = image_type(rel, &bytes) {
        return Content::Image { bytes, mime };
    }
    let utf8 = match std::str::from_utf8(&bytes) {
        Ok(_) => true,
        // A cut in the middle of a character at the end of a prefix.
        Err(err) => partial && err.error_len().is_none(),
    };
    if utf8 && !bytes.contains(&0) {
        let mime = known.filter(|t| t.text).map_or("text/plain", |t| t.mime);
        if bytes.starts_with(b"\xef\xbb\xbf") {
            bytes.drain(..3);
        }
        // Checked just above (a partial read never gets here as text).
        let text = String::from_utf8(bytes).unwrap_or_default();
        return Content::Text { text, mime };
    }
    // An image type whose first bytes disagree says nothing about the file.
    let mime = known
        .filter(|t| !t.text && !IMAGES.contains(&t.mime))
        .map_or("application/octet-stream", |t| t.mime);
    Content::Binary { size, mime }
}

/// A file's bytes as `resources/read` carries them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Raw {
    /// UTF-8 without NUL bytes, of a type that is not binary by its
    /// extension: every byte kept (a BOM too), so the text's UTF-8 is the
    /// file.
    Text(String),
    Blob(Vec<u8>),
}

/// The file `rel`'s `bytes` as text or as a blob, and its MIME type: by
/// extension, else `text/plain` or `application/octet-stream`.
pub fn raw(rel: &str, bytes: Vec<u8>) -> (Raw, &'static str) {
    let known = known_type(rel);
    let bytes = if known.is_none_or(|t| t.text) && !bytes.contains(&0) {
        match String::from_utf8(bytes) {
            Ok(text) => return (Raw::Text(text), known.map_or("text/plain", |t| t.mime)),
            Err(err) => err.into_bytes(),
        }
    } else {
        bytes
    };
    let mime = known.map_or("application/octet-stream", |t| t.mime);
    (Raw::Blob(bytes), mime)
}

/// The types an image content block may hold.
const IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The image type of a file named `rel` whose contents start with `head`:
/// only when its extension says PNG, JPEG, GIF or WebP and its first bytes
/// agree. A `.png` that is not a PNG is not an image.
fn image_type(rel: &str, head: &[u8]) -> Option<&'static str> {
    let mime = known_type(rel)?.mime;
    let agrees = match mime {
        "image/png" => head.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => head.starts_with(b"\xff\xd8\xff"),
        "image/gif" => head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a"),
        "image/webp" => head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP",
        _ => false,
    };
    agrees.then_some(mime)
}

/// A MIME type known by extension, and whether files of that type are text.
#[derive(Clone, Copy, Debug)]
struct Type {
    mime: &'static str,
    text: bool,
}

/// The MIME type of a file named `path`, from its extension (case does not
/// matter), when the extension is one skills commonly carry. `None` for
/// other extensions: then only the contents can tell ([`classify`] says
/// `text/plain` or `application/octet-stream`).
pub fn mime(path: &str) -> Option<&'static str> {
    known_type(path).map(|t| t.mime)
}

/// Whether a file named `path` is of a type known to be binary by its
/// extension (images, archives, fonts, office documents): not worth
/// opening to look for text (the security scan).
pub fn is_binary_type(path: &str) -> bool {
    known_type(path).is_some_and(|t| !t.text)
}

fn known_type(path: &str) -> Option<Type> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    let text = |mime| Some(Type { mime, text: true });
    let binary = |mime| Some(Type { mime, text: false });
    match ext.to_ascii_lowercase().as_str() {
        "md" | "markdown" => text("text/markdown"),
        "txt" | "text" | "log" | "ini" | "cfg" | "conf" => text("text/plain"),
        "py" => text("text/x-python"),
        "sh" | "bash" | "zsh" => text("text/x-shellscript"),
        "js" | "mjs" | "cjs" | "jsx" => text("text/javascript"),
        "ts" | "mts" | "cts" | "tsx" => text("text/x-typescript"),
        "json" => text("application/json"),
        "ipynb" => text("application/x-ipynb+json"),
        "yaml" | "yml" => text("application/yaml"),
        "toml" => text("application/toml"),
        "xml" | "xsd" | "xsl" => text("application/xml"),
        "html" | "htm" => text("text/html"),
        "css" => text("text/css"),
        "csv" => text("text/csv"),
        "tsv" => text("text/tab-separated-values"),
        "svg" => text("image/svg+xml"),
        "sql" => text("application/sql"),
        "rs" => text("text/x-rust"),
        "go" => text("text/x-go"),
        "java" => text("text/x-java"),
        "c" | "h" => text("text/x-c"),
        "cpp" | "cc" | "hpp" => text("text/x-c++"),
        "rb" => text("text/x-ruby"),
        "ps1" => text("text/x-powershell"),
        "tex" => text("application/x-tex"),
        "png" => binary("image/png"),
        "jpg" | "jpeg" => binary("image/jpeg"),
        "gif" => binary("image/gif"),
        "webp" => binary("image/webp"),
        "ico" => binary("image/vnd.microsoft.icon"),
        "bmp" => binary("image/bmp"),
        "pdf" => binary("application/pdf"),
        "zip" => binary("application/zip"),
        "gz" | "tgz" => binary("application/gzip"),
        "tar" => binary("application/x-tar"),
        "docx" => binary("application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        "xlsx" => binary("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        "pptx" => {
            binary("application/vnd.openxmlformats-officedocument.presentationml.presentation")
        }
        "ttf" => binary("font/ttf"),
        "otf" => binary("font/otf"),
        "woff2" => binary("font/woff2"),
        "mp3" => binary("audio/mpeg"),
        "wav" => binary("audio/wav"),
        "mp4" => binary("video/mp4"),
        "wasm" => binary("application/wasm"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_images_and_binaries_by_extension_and_first_bytes() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let whole =
            |rel: &str, bytes: &[u8]| classify(rel, bytes.to_vec(), bytes.len() as u64, false);
        assert_eq!(
            whole("notes.md", b"\xef\xbb\xbf# Notes\r\n\ttabs \n"),
            Content::Text {
                text: "# Notes\r\n\ttabs \n".into(),
                mime: "text/markdown"
            }
        );
        assert_eq!(
            whole("logo.png", png),
            Content::Image {
                bytes: png.to_vec(),
                mime: "image/png"
            }
        );
        // Text with an image's name is text; bytes that are not an image's
        // under an image's name are nothing known.
        assert_eq!(
            whole("fake.png", b"not a png at all"),
            Content::Text {
                text: "not a png at all".into(),
                mime: "text/plain"
            }
        );
        assert_eq!(
            whole("lying.png", b"\xff\xd8\xff\xe0 a JPEG named .png"),
            Content::Binary {
                size: 22,
                mime: "application/octet-stream"
            }
        );
        for (rel, bytes) in [
            ("data.bin", &b"\0\x01\x02"[..]),
            ("latin1.txt", b"caf\xe9"),
            ("nul.txt", b"a\0b"),
        ] {
            assert!(
                matches!(
                    whole(rel, bytes),
                    Content::Binary {
                        mime: "application/octet-stream",
                        ..
                    }
                ),
                "{rel}"
            );
        }
        assert_eq!(
            whole("report.pdf", b"%PDF-1.7\n\x00\xff"),
            Content::Binary {
                size: 11,
                mime: "application/pdf"
            }
        );
        assert_eq!(
            whole("Makefile", b"all:\n\ttrue\n"),
            Content::Text {
                text: "all:\n\ttrue\n".into(),
                mime: "text/plain"
            }
        );
        // A multi-byte character cut by a sniffed prefix is still text.
        let cut = &"é".as_bytes()[..1];
        assert!(matches!(
            classify("big.md", cut.to_vec(), 1 << 20, true),
            Content::Text { .. }
        ));
    }

    #[test]
    fn mime_types_by_extension() {
        for (path, mime) in [
            ("SKILL.md", "text/markdown"),
            ("scripts/fill_form.PY", "text/x-python"),
            ("run.sh", "text/x-shellscript"),
            ("app.ts", "text/x-typescript"),
            ("data.yml", "application/yaml"),
            ("logo.jpg", "image/jpeg"),
            (
                "template.docx",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            ),
        ] {
            assert_eq!(super::mime(path), Some(mime), "{path}");
        }
        for path in ["Makefile", ".env", "archive.xyz", "dir.d/noext"] {
            assert_eq!(super::mime(path), None, "{path}");
        }
    }
}
