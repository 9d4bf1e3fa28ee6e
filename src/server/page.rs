//! Pagination of the lists clients fetch (`prompts/list`, `resources/list`,
//! `skills/list`). A cursor is the decimal offset of the next item in the
//! current snapshot's order: simple to check, and a client that pages while
//! skills change sees each skill at most once more or less, never an error.

use rmcp::ErrorData;
use rmcp::model::PaginatedRequestParams;

/// Items per page.
pub const PAGE_SIZE: usize = 100;

/// One page of items, and the cursor of the next page.
pub struct Page<'a, T> {
    pub items: &'a [T],
    pub next_cursor: Option<String>,
}

/// The page of `items` that `request`'s cursor asks for; a cursor that is not
/// one this server gave out is invalid params.
pub fn page<'a, T>(
    items: &'a [T],
    request: Option<&PaginatedRequestParams>,
) -> Result<Page<'a, T>, ErrorData> {
    let start = match request.and_then(|r| r.cursor.as_deref()) {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&start| start <= items.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("invalid cursor `{cursor}`: start again without one"),
                    None,
                )
            })?,
    };
    let end = (start + PAGE_SIZE).min(items.len());
    Ok(Page {
        items: &items[start..end],
        next_cursor: (end < items.len()).then(|| end.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(cursor: &str) -> PaginatedRequestParams {
        PaginatedRequestParams::default().with_cursor(Some(cursor.to_owned()))
    }

    #[test]
    fn pages_follow_each_other_and_bad_cursors_are_refused() {
        let items: Vec<usize> = (0..250).collect();
        let first = page(&items, None).unwrap();
        assert_eq!(
            (first.items.len(), first.next_cursor.as_deref()),
            (100, Some("100"))
        );
        let last = page(&items, Some(&cursor("200"))).unwrap();
        assert_eq!((last.items, last.next_cursor), (&items[200..], None));
        for bad in ["-1", "abc", "251", ""] {
            assert!(page(&items, Some(&cursor(bad))).is_err(), "{bad}");
        }
    }
}
