//! Pagination of the lists clients fetch (`prompts/list`, `resources/list`,
//! `skills/list`, `resources/directory/read`; `tools/list` and
//! `resources/templates/list` have one page), behaviour.md §11.
//!
//! A cursor is opaque to clients, and only a cursor this server could have
//! issued is accepted: anything else (`"0"`, `"+100"`, a number, garbage)
//! is invalid params. It names the position by the last item of the page
//! before and its offset, and carries a check of both and of the list it
//! belongs to, so it needs no table of issued cursors: any skillserve
//! serving the same skills accepts it (replicas behind a load balancer, a
//! restarted server). When the list changed between pages, the next page
//! starts after that last item wherever it now is (or at the same offset
//! when it is gone): each item is seen at most once more or less, never an
//! error.
//!
//! The format (version 1): base64url without padding of
//! `1 NUL {offset} NUL {last} NUL {check}`, where `offset` is the decimal
//! index of the first item of the next page, `last` the key of the item
//! before it (a skill or prompt name, a file's URI), and `check` the first
//! 16 hex digits of the SHA-256 of
//! `skillserve cursor 1 NUL {list} NUL {offset} NUL {last}`, `list` naming
//! the list (`prompts/list`, or `resources/directory/read` and the folder's
//! URI). The check is not a secret: it tells the server's own cursors from
//! anything else, it does not authenticate them (a cursor only ever names
//! a place in a list the client may read whole).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::PaginatedRequestParams;
use sha2::{Digest, Sha256};

/// Items per page.
pub const PAGE_SIZE: usize = 100;
/// A longer cursor is refused before it is decoded.
const MAX_CURSOR_CHARS: usize = 4096;

/// One page of items, and the cursor of the next page.
#[derive(Debug)]
pub struct Page<'a, T> {
    pub items: &'a [T],
    pub next_cursor: Option<String>,
}

/// The page of `items` (the list named `list`, each item known by `key`)
/// that `request`'s cursor asks for; a cursor this server did not issue for
/// this list is invalid params.
pub fn page<'a, T>(
    items: &'a [T],
    request: Option<&PaginatedRequestParams>,
    list: &str,
    key: impl Fn(&'a T) -> &'a str,
) -> Result<Page<'a, T>, ErrorData> {
    page_at(items, request.and_then(|r| r.cursor.as_deref()), list, key)
}

/// [`page`] with the cursor itself.
pub fn page_at<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    list: &str,
    key: impl Fn(&'a T) -> &'a str,
) -> Result<Page<'a, T>, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let (offset, last) = decode(cursor, list).ok_or_else(|| invalid(list))?;
            resume(items, offset, &last, &key)
        }
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let next_cursor = (end < items.len()).then(|| encode(list, end, key(&items[end - 1])));
    Ok(Page {
        items: &items[start..end],
        next_cursor,
    })
}

/// A list of one page: any cursor is invalid params (none was issued).
pub fn single(request: Option<&PaginatedRequestParams>, list: &str) -> Result<(), ErrorData> {
    match request.and_then(|r| r.cursor.as_deref()) {
        None => Ok(()),
        Some(_) => Err(ErrorData::invalid_params(
            format!(
                "invalid cursor: {list} has one page, so no cursor is ever given for it; ask again without one"
            ),
            None,
        )),
    }
}

fn invalid(list: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "invalid cursor: it is not one this server gave as `nextCursor` for {list}; start again without a cursor"
        ),
        None,
    )
}

/// Where the page after `last` (at `offset` when the cursor was issued)
/// starts in `items` now.
fn resume<'a, T>(
    items: &'a [T],
    offset: usize,
    last: &str,
    key: &impl Fn(&'a T) -> &'a str,
) -> usize {
    if let Some(before) = offset.checked_sub(1).and_then(|i| items.get(i))
        && key(before) == last
    {
        return offset;
    }
    match items.iter().position(|item| key(item) == last) {
        Some(at) => at + 1,
        None => offset.min(items.len()),
    }
}

/// The check of a cursor: 16 hex digits of the SHA-256 of what it names.
fn check(list: &str, offset: usize, last: &str) -> String {
    let sum = Sha256::digest(format!("skillserve cursor 1\0{list}\0{offset}\0{last}"));
    crate::digest::hex(&sum[..8])
}

fn encode(list: &str, offset: usize, last: &str) -> String {
    let check = check(list, offset, last);
    URL_SAFE_NO_PAD.encode(format!("1\0{offset}\0{last}\0{check}"))
}

/// The offset and last key of a cursor issued for `list`, or `None`.
fn decode(cursor: &str, list: &str) -> Option<(usize, String)> {
    if cursor.len() > MAX_CURSOR_CHARS {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let mut parts = text.split('\0');
    let (Some("1"), Some(offset), Some(last), Some(sum), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let offset: usize = offset.parse().ok()?;
    (sum == check(list, offset, last)).then(|| (offset, last.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i:04}")).collect()
    }

    fn at<'a>(items: &'a [String], cursor: Option<&str>) -> Result<Page<'a, String>, ErrorData> {
        page_at(items, cursor, "prompts/list", String::as_str)
    }

    #[test]
    fn pages_follow_each_other_by_issued_cursors_only() {
        let items = names(250);
        let first = at(&items, None).unwrap();
        assert_eq!(first.items.len(), 100);
        let second = at(&items, first.next_cursor.as_deref()).unwrap();
        assert_eq!(second.items[0], "s0100");
        let last = at(&items, second.next_cursor.as_deref()).unwrap();
        assert_eq!((last.items, last.next_cursor), (&items[200..], None));
        let issued = first.next_cursor.unwrap();
        // Another list's cursor, offsets, and anything else.
        let other = page_at(&items, Some(&issued), "resources/list", String::as_str);
        assert_eq!(other.unwrap_err().code.0, -32602);
        let forged = URL_SAFE_NO_PAD.encode("1\u{0}100\u{0}s0099\u{0}0000000000000000");
        let long = "A".repeat(MAX_CURSOR_CHARS + 1);
        let mut tampered = issued.clone();
        tampered.push('A');
        for bad in [
            "0", "+100", "50", "100", "-1", "abc", "", "null", &forged, &long, &tampered,
        ] {
            let error = at(&items, Some(bad)).expect_err(bad);
            assert_eq!(error.code.0, -32602, "{bad}");
            assert_eq!(
                error.message,
                "invalid cursor: it is not one this server gave as `nextCursor` for prompts/list; start again without a cursor"
            );
        }
    }

    #[test]
    fn a_list_that_changed_between_pages_resumes_after_the_last_item_seen() {
        let items = names(250);
        let cursor = at(&items, None).unwrap().next_cursor.unwrap();
        // Two items before the cursor's place were removed.
        let mut fewer = items.clone();
        fewer.drain(10..12);
        assert_eq!(at(&fewer, Some(&cursor)).unwrap().items[0], "s0100");
        // The last item seen was removed: the same offset.
        let mut without = items.clone();
        without.remove(99);
        assert_eq!(at(&without, Some(&cursor)).unwrap().items[0], "s0101");
        // Shrunk below the offset: an empty last page.
        let short = names(50);
        let page = at(&short, Some(&cursor)).unwrap();
        assert!(page.items.is_empty() && page.next_cursor.is_none());
    }

    #[test]
    fn a_list_of_one_page_takes_no_cursor() {
        assert!(single(None, "tools/list").is_ok());
        let request = PaginatedRequestParams::default().with_cursor(Some("x".into()));
        assert_eq!(
            single(Some(&request), "tools/list").unwrap_err().code.0,
            -32602
        );
    }
}
