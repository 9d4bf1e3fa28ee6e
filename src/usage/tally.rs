//! [`Tally`]: loads per skill since the server started, for `/metrics`,
//! with a bounded label set: at most [`MAX_LABELS`] skills have a label of
//! their own (those used most lately, from the usage file, then the first
//! ones loaded), every other skill counts under `other`. A label, once
//! given, is kept, so every series only grows, as Prometheus counters must.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Skills with a label of their own, at most.
pub const MAX_LABELS: usize = 100;

/// Loads per skill name.
#[derive(Debug, Default)]
pub struct Tally {
    inner: Mutex<Labels>,
}

#[derive(Debug, Default)]
struct Labels {
    index: HashMap<Arc<str>, usize>,
    counts: Vec<(Arc<str>, u64)>,
    other: u64,
}

impl Tally {
    /// A tally whose first labels are `seed`'s names (the skills used most
    /// lately), each at 0.
    pub fn new(seed: impl IntoIterator<Item = Arc<str>>) -> Tally {
        let tally = Tally::default();
        {
            let mut labels = tally.lock();
            for name in seed {
                labels.label(&name);
            }
        }
        tally
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Labels> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one load of the skill called `name`.
    pub fn add(&self, name: &Arc<str>) {
        let mut labels = self.lock();
        match labels.label(name) {
            Some(index) => labels.counts[index].1 += 1,
            None => labels.other += 1,
        }
    }

    /// The labelled counts, by name, and the count of `other`.
    pub fn counts(&self) -> (Vec<(Arc<str>, u64)>, u64) {
        let labels = self.lock();
        let mut counts = labels.counts.clone();
        counts.sort_by(|a, b| a.0.cmp(&b.0));
        (counts, labels.other)
    }
}

impl Labels {
    /// The label of `name`, given now if there is room.
    fn label(&mut self, name: &Arc<str>) -> Option<usize> {
        if let Some(&index) = self.index.get(name) {
            return Some(index);
        }
        if self.counts.len() >= MAX_LABELS {
            return None;
        }
        let index = self.counts.len();
        self.counts.push((Arc::clone(name), 0));
        self.index.insert(Arc::clone(name), index);
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_hundred_skills_keep_a_label_and_the_rest_count_as_other() {
        let name = |n: usize| -> Arc<str> { format!("skill-{n:03}").into() };
        let tally = Tally::new([name(500)]);
        for n in 0..150 {
            tally.add(&name(n));
            tally.add(&name(n));
        }
        tally.add(&name(500));
        let (counts, other) = tally.counts();
        assert_eq!(counts.len(), MAX_LABELS);
        assert!(counts.contains(&(name(500), 1)));
        assert!(counts.contains(&(name(0), 2)));
        assert!(!counts.iter().any(|(n, _)| *n == name(99)));
        assert_eq!(other, 2 * 51);
    }
}
