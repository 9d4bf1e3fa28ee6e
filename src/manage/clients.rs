//! Who sees what: the clients the manager tells apart (any other client,
//! the built-in profiles of clients that load skills themselves, the
//! profiles of `config.toml`) against a page of skills, each cell with the
//! reason a client is not shown the skill, as `list --all --client` gives
//! it.

use serde::Serialize;

use super::catalog::{ClientColumn, Entry, Of, Query, Row};
use crate::profiles::{Profiles, Verdict};

/// The clients × skills matrix of one page of the catalog.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    pub clients: Vec<ClientColumn>,
    /// Skills shown to each client, in the order of `clients`.
    pub shown: Vec<usize>,
    pub total: usize,
    pub matched: usize,
    pub offset: usize,
    pub rows: Vec<MatrixRow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MatrixRow {
    #[serde(flatten)]
    pub row: Row,
    /// One per client, in the order of [`Matrix::clients`].
    pub cells: Vec<Cell>,
}

/// Whether one client is shown one skill, and why not.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub shown: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The matrix of the page `query` selects: one decision per client
/// (O(skills × clients)); call it off the async runtime.
pub fn matrix(catalog: &Of, profiles: &Profiles, query: &Query) -> Matrix {
    let snapshot = catalog.snapshot();
    let (entries, matched) = catalog.select(query);
    let columns = profiles.columns();
    let decisions: Vec<_> = columns
        .iter()
        .map(|column| profiles.decide(snapshot, column.key))
        .collect();
    let shown = decisions
        .iter()
        .map(|d| {
            d.verdicts
                .iter()
                .filter(|v| matches!(v, Verdict::Shown))
                .count()
        })
        .collect();
    let rows = entries
        .into_iter()
        .map(|entry| {
            let row = catalog.row_of(entry);
            let cells = decisions
                .iter()
                .map(|decision| match entry {
                    Entry::Candidate(c) => {
                        let verdict = &decision.verdicts[c];
                        Cell {
                            shown: matches!(verdict, Verdict::Shown),
                            reason: verdict.reason(snapshot),
                        }
                    }
                    _ => Cell {
                        shown: false,
                        reason: row.reason.clone(),
                    },
                })
                .collect();
            MatrixRow { row, cells }
        })
        .collect();
    Matrix {
        clients: catalog.columns().to_vec(),
        shown,
        total: catalog.len(),
        matched,
        offset: query.offset,
        rows,
    }
}
