//! The nonces of the skills manager's renders: each `resources/read` of the
//! app gets a fresh one, embedded in the page, and a change over stdio must
//! carry one of the last [`KEPT`]. The model never receives the resource's
//! body (the host renders it), so a change it makes up carries none.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use subtle::ConstantTimeEq;

/// Nonces accepted at most: the renders of the last few openings of the
/// manager (a host may keep several views open, or prefetch one).
pub const KEPT: usize = 16;

/// Random bytes in a nonce.
const BYTES: usize = 32;

/// The nonces of the last [`KEPT`] renders.
#[derive(Default)]
pub struct Nonces {
    recent: Mutex<VecDeque<[u8; BYTES]>>,
}

impl Nonces {
    /// A fresh nonce (64 lowercase hex digits), remembered in place of the
    /// oldest; `None` when the OS gives no random bytes.
    pub fn issue(&self) -> Option<String> {
        let mut bytes = [0u8; BYTES];
        getrandom::fill(&mut bytes).ok()?;
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == KEPT {
            recent.pop_front();
        }
        recent.push_back(bytes);
        Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Whether `nonce` is one of the remembered ones. Each is compared in
    /// constant time, so the time taken says nothing about how close a
    /// guess came.
    pub fn accepts(&self, nonce: &str) -> bool {
        let Some(bytes) = parse(nonce) else {
            return false;
        };
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found = subtle::Choice::from(0);
        for kept in recent.iter() {
            found |= kept.ct_eq(&bytes);
        }
        found.into()
    }
}

fn parse(hex: &str) -> Option<[u8; BYTES]> {
    if hex.len() != BYTES * 2 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; BYTES];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_nonce_is_accepted_and_a_made_up_one_is_not() {
        let nonces = Nonces::default();
        let nonce = nonces.issue().unwrap();
        assert_eq!(nonce.len(), 64);
        assert!(nonces.accepts(&nonce));
        assert!(!nonces.accepts(&"0".repeat(64)));
        assert!(!nonces.accepts(""));
        assert!(!nonces.accepts(&nonce[..63]));
        assert!(!nonces.accepts(&format!("{nonce}0")));
    }

    #[test]
    fn only_the_last_renders_are_remembered() {
        let nonces = Nonces::default();
        let first = nonces.issue().unwrap();
        for _ in 0..KEPT - 1 {
            nonces.issue().unwrap();
        }
        assert!(nonces.accepts(&first));
        nonces.issue().unwrap();
        assert!(!nonces.accepts(&first), "the oldest is forgotten");
    }
}
