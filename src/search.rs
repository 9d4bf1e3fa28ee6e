//! Search on a miss (behaviour.md §14): a name that resolves to nothing is
//! also read as a few words describing the task, and the skills whose names
//! and descriptions match them best are listed.
//!
//! Two signals are added up:
//!
//! - **words** (0 to 1): BM25 over an index of the words of every skill's
//!   (served or shadowed: a client's view may show a shadowed one) names (full, short and folder name; each word counts
//!   [`NAME_WEIGHT`] times) and description, scaled by the best score
//!   possible for the query and by the share of the query's words the skill
//!   has. A query word matches itself, at a discount its other forms
//!   (`files`, `filing` for `file`: [`stem`]) and the longer words it begins
//!   (`build` → `builder`), and, when none of those exist, the words one edit
//!   away (`spredsheet` → `spreadsheet`);
//! - **names** (0.75 to 1): the name similarity of behaviour.md §5.3
//!   ([`similarity::similarity`]) of the names within two edits of the query:
//!   typos, transpositions and `_`/`-` mix-ups (`pfd` → `pdf`), which no word
//!   lookup can see.
//!
//! So a typo of a name comes first, and a description of a task ranks by its
//! words. A skill is listed only for a similar name or for words that tell
//! skills apart ([`MIN_WORDS_SCORE`]): nonsense finds nothing.
//!
//! The index is built once per snapshot ([`SearchIndex::build`]), on first
//! use (the server asks for it on a blocking thread after start-up and after
//! each refresh), and shared with the snapshots of the same skills, like the
//! name index. Every step of a
//! search is bounded whatever the query (behaviour.md §14): at most
//! [`MAX_QUERY_WORDS`] words, [`MAX_EXPANSIONS`] prefix or fuzzy matches per
//! word, [`MAX_POSTINGS`] postings visited; the name similarity only for
//! queries of at most [`MAX_NAME_QUERY`] characters, and only with names that
//! can be two edits away.
//!
//! The weights were chosen with `benches/search_eval.py --seed 7` (queries of
//! description words, with typos and other word forms); its reported figures
//! use another seed.

use std::collections::HashMap;
use std::ops::Range;

use crate::parallel;
use crate::similarity;
use crate::skill::Skill;

/// How many matches a "not found" answer lists at most.
pub const MAX_MATCHES: usize = 5;

/// A word of a skill's names counts as this many words of its description.
const NAME_WEIGHT: u32 = 3;
/// BM25's term-frequency saturation and length normalisation. A low `K1`:
/// in a description of a sentence or two, saying a word twice means little
/// (the evaluation agrees: 0.6 found more targets than the usual 1.2).
const K1: f32 = 0.6;
const B: f32 = 0.75;
/// A query word matches its other forms (the words with its stem) at this
/// weight; looking at most at [`MAX_FORM_SCAN`] words that begin with the stem.
const FORM_WEIGHT: f32 = 0.5;
const MAX_FORM_SCAN: usize = 64;
/// Query words of at least this many characters also match the longer words
/// they begin, at this weight.
const PREFIX_MIN_CHARS: usize = 4;
const PREFIX_WEIGHT: f32 = 0.5;
/// Query words of at least this many characters that have no form in the
/// index match the words one edit away (optimal string alignment: a
/// substitution, an insertion, a deletion or two swapped neighbours), at this
/// weight.
const FUZZY_MIN_CHARS: usize = 5;
const FUZZY_WEIGHT: f32 = 0.7;
/// Query words looked up one edit away, at most (the first ones): each such
/// lookup reads every index word of about its length.
const MAX_FUZZY_WORDS: usize = 8;
/// Distinct query words looked up, at most (the first ones).
const MAX_QUERY_WORDS: usize = 32;
/// Prefix or fuzzy matches per query word, at most.
const MAX_EXPANSIONS: usize = 16;
/// Postings visited per search, at most; the most telling words are visited
/// first, so what the budget leaves out are common words that weigh least.
const MAX_POSTINGS: usize = 1 << 21;
/// Longer queries (normalised) describe a task; they are not compared with
/// names.
const MAX_NAME_QUERY: usize = 64;
/// Names are compared with the query when they can be this many edits from
/// it: a typo, as behaviour.md §5.3 counts one.
const NAME_EDITS: usize = 2;
/// A skill is listed for its words only when their BM25 score reaches this:
/// about one match of a word that fewer than a third of the skills have.
const MIN_WORDS_SCORE: f32 = 1.0;
/// Word lengths above this share one bucket of the fuzzy lookup.
const MAX_BUCKET: usize = 32;
/// The index is built on several threads from this many skills on.
const PARALLEL_FROM: usize = 2_000;

/// The words of every skill of a snapshot, served or shadowed, in the
/// order of `Snapshot::candidates`.
#[derive(Debug, Default)]
#[cfg_attr(test, derive(PartialEq))]
pub struct SearchIndex {
    /// Every distinct word, sorted, concatenated.
    text: String,
    /// One entry per word in sorted order, then a sentinel: where its text
    /// and its postings start (each ends where the next one starts).
    terms: Vec<Term>,
    /// Word numbers ordered by length in characters; the words of `n`
    /// characters are `by_length[length_starts[n]..length_starts[n + 1]]`.
    by_length: Vec<u32>,
    length_starts: Vec<u32>,
    /// Postings: the skill (its index in display order) and its weighted
    /// term frequency, parallel.
    docs: Vec<u32>,
    frequencies: Vec<u8>,
    /// Each skill's weighted number of words.
    lengths: Vec<u16>,
    average_length: f32,
    /// The names each skill can be called by, for the fuzzy name pass.
    names: Vec<NameKey>,
}

#[derive(Debug, Clone, Copy)]
#[cfg_attr(test, derive(PartialEq))]
struct Term {
    text_start: u32,
    postings_start: u32,
    /// [`char_mask`] of the word.
    mask: u64,
}

/// One of the names a skill answers to: its full name, its short name or its
/// folder name (each only when it differs from those before it).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(test, derive(PartialEq))]
struct NameKey {
    mask: u64,
    skill: u32,
    chars: u16,
    variant: Variant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Full,
    Short,
    Folder,
}

impl SearchIndex {
    /// Indexes the names and descriptions of `skills`: in parts, one per
    /// thread (up to [`parallel::threads`]) from [`PARALLEL_FROM`] skills on, then
    /// merged. Reading the words is most of the cost: at 10,000 skills the
    /// build takes 18 ms on one thread and 10 ms on two (`benches/scan.rs`,
    /// `search_index`), and a miss right after a change waits for it.
    pub fn build(skills: &[Skill]) -> SearchIndex {
        let threads = if skills.len() < PARALLEL_FROM {
            1
        } else {
            parallel::threads()
        };
        SearchIndex::build_on(skills, threads)
    }

    fn build_on(skills: &[Skill], threads: usize) -> SearchIndex {
        SearchIndex::merge(parallel::chunks(skills, threads, Part::read))
    }

    /// One index from the parts of [`SearchIndex::build`], in skill order.
    fn merge(parts: Vec<Part>) -> SearchIndex {
        let Words {
            text,
            mut terms,
            renumber,
        } = Words::number(&parts);
        let Postings {
            docs,
            frequencies,
            lengths,
            names,
        } = Postings::group(parts, &renumber, &mut terms);
        let (by_length, length_starts) = by_length(&text, &terms);
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        SearchIndex {
            text,
            terms,
            by_length,
            length_starts,
            docs,
            frequencies,
            average_length: total as f32 / lengths.len().max(1) as f32,
            lengths,
            names,
        }
    }

    /// The indexes in `skills` (the skills this index was built from) of up
    /// to `limit` skills for which `keep` holds that match `query` best,
    /// best first; among equal scores, in index order. A skill's score is
    /// its words' score (0 to 1) plus, when one of its names is a typo of the
    /// query, that name's similarity (0.75 to 1). `keep` leaves out the
    /// skills a client is not shown (`profiles`): the word statistics stay
    /// those of every indexed skill, so one index serves every client.
    pub fn search(
        &self,
        skills: &[Skill],
        query: &str,
        limit: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        let query = query.trim();
        let mut words = self.score_words(query);
        let named = self.score_names(skills, query);
        let mut top = Top::new(limit);
        for &(doc, similarity) in &named {
            let doc = doc as usize;
            if keep(doc) {
                top.offer(words.score(doc) + similarity, doc);
            }
            words.bm25[doc] = 0.0;
        }
        for (doc, &bm25) in words.bm25.iter().enumerate() {
            if bm25 >= MIN_WORDS_SCORE && keep(doc) {
                top.offer(words.score(doc), doc);
            }
        }
        top.into_docs().collect()
    }

    /// Every skill's BM25 score for the words of `query`, and which of them
    /// it matched.
    fn score_words(&self, query: &str) -> WordScores {
        let mut query_words: Vec<String> = Vec::new();
        let mut buffer = String::new();
        words(query, &mut buffer, |word| {
            let known = query_words.iter().any(|w| w == word);
            if query_words.len() < MAX_QUERY_WORDS && !known && !is_stop_word(word) {
                query_words.push(word.to_owned());
            }
        });
        let documents = self.lengths.len() as f32;
        // (weight × inverse document frequency, index word, query word's bit)
        let mut lookups: Vec<(f32, u32, u32)> = Vec::new();
        let mut best_possible = 0.0;
        let mut matches = Vec::new();
        let mut fuzzy_left = MAX_FUZZY_WORDS;
        for (number, word) in query_words.iter().enumerate() {
            matches.clear();
            self.matches(word, &mut matches, &mut fuzzy_left);
            let mut best: f32 = 0.0;
            for &(weight, term) in &matches {
                let frequency = self.postings(term as usize).len() as f32;
                let idf = (1.0 + (documents - frequency + 0.5) / (frequency + 0.5)).ln();
                best = best.max(weight * idf);
                lookups.push((weight * idf, term, 1 << number));
            }
            best_possible += best * (K1 + 1.0);
        }
        // The most telling words first, so that the budget cuts the least.
        lookups.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut scores = WordScores {
            bm25: vec![0.0; self.lengths.len()],
            matched: vec![0; self.lengths.len()],
            words: query_words.len() as f32,
            best_possible: best_possible.max(1.0),
        };
        let mut budget = MAX_POSTINGS;
        for (weighted_idf, term, bit) in lookups {
            let postings = self.postings(term as usize);
            let Some(left) = budget.checked_sub(postings.len()) else {
                continue;
            };
            budget = left;
            for i in postings {
                let doc = self.docs[i] as usize;
                let frequency = f32::from(self.frequencies[i]);
                let length = f32::from(self.lengths[doc]);
                let saturation = frequency * (K1 + 1.0)
                    / (frequency + K1 * (1.0 - B + B * length / self.average_length));
                scores.bm25[doc] += weighted_idf * saturation;
                scores.matched[doc] |= bit;
            }
        }
        scores
    }

    /// The index words the query word `word` matches, with the weight of
    /// each match: itself; its other forms (the words with the same
    /// [`stem`]: `files` for `file`, `creating` for `create`); the words it
    /// begins (`build` → `builder`); and, when none of those exist, the words
    /// one edit away (`spredsheet` → `spreadsheets`), as long as `fuzzy_left`
    /// words may still be looked up that way.
    fn matches(&self, word: &str, out: &mut Vec<(f32, u32)>, fuzzy_left: &mut usize) {
        let position = self.find(word);
        let exact = position.ok();
        out.extend(exact.map(|term| (1.0, term as u32)));
        // Every form of the word begins with its stem.
        let stemmed = stem(word);
        let from = self.find(stemmed).unwrap_or_else(|insert| insert);
        let forms = (from..self.terms.len() - 1)
            .take_while(|&term| self.word(term).starts_with(stemmed))
            .take(MAX_FORM_SCAN)
            .filter(|&term| Some(term) != exact && stem(self.word(term)) == stemmed);
        out.extend(forms.map(|term| (FORM_WEIGHT, term as u32)));
        let chars = word.chars().count();
        if chars >= PREFIX_MIN_CHARS {
            let from = position.map_or_else(|insert| insert, |term| term + 1);
            let known = out.len();
            let longer = (from..self.terms.len() - 1)
                .take_while(|&term| self.word(term).starts_with(word))
                .filter(|&term| !out[..known].iter().any(|&(_, t)| t as usize == term))
                .take(MAX_EXPANSIONS)
                .map(|term| (PREFIX_WEIGHT, term as u32))
                .collect::<Vec<_>>();
            out.extend(longer);
        }
        if !out.is_empty() || chars < FUZZY_MIN_CHARS || *fuzzy_left == 0 {
            return;
        }
        *fuzzy_left -= 1;
        // A word one edit away, or whose stem is one edit from the query
        // word's (`spredsheet` → `spreadsheets`): its stem has at most one
        // character the word lacks, and the word is at most one character
        // shorter than that stem, or longer by a suffix and one character.
        let stem_chars = stemmed.chars().count();
        let stem_mask = char_mask(stemmed);
        let lengths = (stem_chars - 1).clamp(1, MAX_BUCKET)
            ..(chars + 1)
                .max(stem_chars + 1 + MAX_STEM_CUT)
                .min(MAX_BUCKET)
                + 1;
        let near = self.by_length[self.length_range(lengths)]
            .iter()
            .filter(|&&term| (stem_mask & !self.terms[term as usize].mask).count_ones() <= 1)
            .filter(|&&term| {
                let candidate = self.word(term as usize);
                within_one_edit(word.chars(), candidate.chars())
                    || within_one_edit(stemmed.chars(), stem(candidate).chars())
            })
            .take(MAX_EXPANSIONS);
        out.extend(near.map(|&term| (FUZZY_WEIGHT, term)));
    }

    /// The position of `word` among the sorted words, or where it would go.
    fn find(&self, word: &str) -> Result<usize, usize> {
        let (mut low, mut high) = (0, self.terms.len() - 1);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.word(mid).cmp(word) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(low)
    }

    fn word(&self, term: usize) -> &str {
        let start = self.terms[term].text_start as usize;
        let end = self.terms[term + 1].text_start as usize;
        &self.text[start..end]
    }

    fn postings(&self, term: usize) -> Range<usize> {
        self.terms[term].postings_start as usize..self.terms[term + 1].postings_start as usize
    }

    /// The positions in `by_length` of the words whose bucket is in `buckets`.
    fn length_range(&self, buckets: Range<usize>) -> Range<usize> {
        self.length_starts[buckets.start] as usize..self.length_starts[buckets.end] as usize
    }

    /// The skills with a name within [`NAME_EDITS`] edits of `query`, with
    /// the best similarity (behaviour.md §5.3) of such names; sorted by
    /// skill. Only names that can be that close are compared: at most
    /// [`NAME_EDITS`] characters longer or shorter, and with a set of
    /// characters that differs in at most two per edit. Names that hold the
    /// query, or that a query holds, are the words' business.
    fn score_names(&self, skills: &[Skill], query: &str) -> Vec<(u32, f32)> {
        let query = similarity::normalize(query);
        let chars = query.chars().count();
        if chars == 0 || chars > MAX_NAME_QUERY {
            return Vec::new();
        }
        let mask = char_mask(&query);
        let mut candidate = String::new();
        let mut named: Vec<(u32, f32)> = Vec::new();
        for key in &self.names {
            if chars.abs_diff(usize::from(key.chars)) > NAME_EDITS
                || (mask ^ key.mask).count_ones() as usize > 2 * NAME_EDITS
            {
                continue;
            }
            let skill = &skills[key.skill as usize];
            candidate.clear();
            match key.variant {
                Variant::Full => candidate.extend(similarity::normalized_chars(&skill.name)),
                Variant::Short => {
                    candidate.extend(similarity::normalized_chars(skill.short_name()))
                }
                Variant::Folder => candidate.extend(similarity::normalized_chars(&skill.folder())),
            }
            let score = similarity::similarity(&query, &candidate);
            if score < similarity::THRESHOLD {
                continue;
            }
            match named.last_mut() {
                Some((doc, best)) if *doc == key.skill => *best = best.max(score as f32),
                _ => named.push((key.skill, score as f32)),
            }
        }
        named
    }
}

/// The distinct words of all parts, numbered in sorted order.
struct Words {
    /// The words, sorted, concatenated.
    text: String,
    /// One per word, then a sentinel; postings not yet placed.
    terms: Vec<Term>,
    /// `renumber[part][id]`: the number of the word a part calls `id`.
    renumber: Vec<Vec<u32>>,
}

impl Words {
    fn number(parts: &[Part]) -> Words {
        let mut all: Vec<(&str, u32, u32)> = parts
            .iter()
            .enumerate()
            .flat_map(|(n, part)| {
                let words = part.words.iter().enumerate();
                words.map(move |(id, word)| (&**word, n as u32, id as u32))
            })
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut renumber: Vec<Vec<u32>> = parts.iter().map(|p| vec![0; p.words.len()]).collect();
        let mut text = String::new();
        let mut terms: Vec<Term> = Vec::new();
        let mut last = None;
        for (word, part, id) in all {
            if last != Some(word) {
                last = Some(word);
                terms.push(Term {
                    text_start: text.len() as u32,
                    postings_start: 0,
                    mask: char_mask(word),
                });
                text.push_str(word);
            }
            renumber[part as usize][id as usize] = terms.len() as u32 - 1;
        }
        terms.push(Term {
            text_start: text.len() as u32,
            postings_start: 0,
            mask: 0,
        });
        Words {
            text,
            terms,
            renumber,
        }
    }
}

/// The postings of all parts grouped by word, with each skill's length and
/// names in skill order.
struct Postings {
    docs: Vec<u32>,
    frequencies: Vec<u8>,
    lengths: Vec<u16>,
    names: Vec<NameKey>,
}

impl Postings {
    /// Groups the postings by word (a counting sort; skills ascending within
    /// a word) and sets each term's `postings_start`.
    fn group(parts: Vec<Part>, renumber: &[Vec<u32>], terms: &mut [Term]) -> Postings {
        let words = terms.len() - 1;
        let mut counts = vec![0u32; words + 1];
        for (part, renumber) in parts.iter().zip(renumber) {
            for &(id, _) in &part.pairs {
                counts[renumber[id as usize] as usize + 1] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        for (term, &start) in terms.iter_mut().zip(&counts) {
            term.postings_start = start;
        }
        let postings = counts[words] as usize;
        let mut docs = vec![0u32; postings];
        let mut frequencies = vec![0u8; postings];
        let (mut lengths, mut names) = (Vec::new(), Vec::new());
        for (part, renumber) in parts.into_iter().zip(renumber) {
            let mut start = 0;
            for (doc, &end) in part.ends.iter().enumerate() {
                for &(id, frequency) in &part.pairs[start as usize..end as usize] {
                    let slot = &mut counts[renumber[id as usize] as usize];
                    docs[*slot as usize] = (part.first + doc) as u32;
                    frequencies[*slot as usize] = frequency.min(u32::from(u8::MAX)) as u8;
                    *slot += 1;
                }
                start = end;
            }
            lengths.extend(part.lengths);
            names.extend(part.names);
        }
        Postings {
            docs,
            frequencies,
            lengths,
            names,
        }
    }
}

/// Word numbers ordered by length bucket, and where each bucket starts (see
/// [`SearchIndex::by_length`]).
fn by_length(text: &str, terms: &[Term]) -> (Vec<u32>, Vec<u32>) {
    let words = terms.len() - 1;
    let word = |n: u32| {
        let (start, end) = (
            terms[n as usize].text_start,
            terms[n as usize + 1].text_start,
        );
        &text[start as usize..end as usize]
    };
    let mut by_length: Vec<u32> = (0..words as u32).collect();
    by_length.sort_by_key(|&n| bucket(word(n)));
    let mut starts = vec![0u32; MAX_BUCKET + 2];
    for &n in &by_length {
        starts[bucket(word(n)) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    (by_length, starts)
}

/// The words of some consecutive skills, numbered in the order they came.
struct Part {
    /// The index of the first skill.
    first: usize,
    /// The words, by number.
    words: Vec<Box<str>>,
    /// Per skill, its (word, weighted frequency) pairs, one after another;
    /// each skill's end in `pairs`.
    pairs: Vec<(u32, u32)>,
    ends: Vec<u32>,
    /// Per skill, its weighted number of words.
    lengths: Vec<u16>,
    names: Vec<NameKey>,
}

impl Part {
    /// The words and names of `skills`, the first of which is skill number
    /// `first`.
    fn read(skills: &[Skill], first: usize) -> Part {
        let mut numbering = Numbering::default();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut ends = Vec::with_capacity(skills.len());
        let mut lengths = Vec::with_capacity(skills.len());
        let mut names = Vec::with_capacity(skills.len());
        // Per word, the last skill that had it and where its pair is, so that
        // a skill's pairs are summed without sorting.
        let mut latest: Vec<(u32, u32)> = Vec::new();
        let mut buffer = String::new();
        let mut normalized = String::new();
        for (index, skill) in skills.iter().enumerate() {
            let doc = index as u32;
            // Adds `weight` to the frequency of `word` (only the first time
            // when `once`); whether the word is new to the skill, `None` for
            // a stop word.
            let mut add = |word: &str, weight: u32, once: bool| -> Option<bool> {
                let id = numbering.number(word)?;
                if id as usize == latest.len() {
                    latest.push((u32::MAX, 0));
                }
                let (last, slot) = &mut latest[id as usize];
                if *last != doc {
                    *last = doc;
                    *slot = pairs.len() as u32;
                    pairs.push((id, weight));
                    Some(true)
                } else {
                    if !once {
                        pairs[*slot as usize].1 += weight;
                    }
                    Some(false)
                }
            };
            let folder = skill.folder();
            let mut name_words = 0;
            for (variant, name) in name_variants(skill, &folder) {
                // A word in several names counts once.
                words(name, &mut buffer, |word| {
                    name_words += u32::from(add(word, NAME_WEIGHT, true) == Some(true));
                });
                normalized.clear();
                normalized.extend(similarity::normalized_chars(name));
                names.push(NameKey {
                    mask: char_mask(&normalized),
                    skill: (first + index) as u32,
                    chars: normalized.chars().count().min(usize::from(u16::MAX)) as u16,
                    variant,
                });
            }
            let mut length = name_words * NAME_WEIGHT;
            words(skill.description(), &mut buffer, |word| {
                length += u32::from(add(word, 1, false).is_some());
            });
            ends.push(pairs.len() as u32);
            lengths.push(length.min(u32::from(u16::MAX)) as u16);
        }
        Part {
            first,
            words: numbering.words,
            pairs,
            ends,
            lengths,
            names,
        }
    }
}

/// Numbers words in the order they come; stop words get none. Words of at
/// most eight bytes, most of them, are looked up as numbers ([`pack`]) in a
/// table of their own: this runs for every word of every description, and
/// a general hash map of strings took twice as long.
#[derive(Default)]
struct Numbering {
    /// Open addressing, linear probing, at most half full: (packed word,
    /// number), a packed word of 0 for an empty slot.
    short: Vec<(u64, u32)>,
    shorts: usize,
    long: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    /// The words, by number.
    words: Vec<Box<str>>,
}

/// The number of a stop word in [`Numbering`].
const STOP: u32 = u32::MAX;

impl Numbering {
    fn number(&mut self, word: &str) -> Option<u32> {
        let id = if word.len() <= 8 {
            if 2 * (self.shorts + 1) > self.short.len() {
                self.grow();
            }
            let packed = pack(word.as_bytes());
            let mut slot = self.slot(packed);
            loop {
                match self.short[slot] {
                    (0, _) => {
                        let id = self.new_number(word);
                        self.short[slot] = (packed, id);
                        self.shorts += 1;
                        break id;
                    }
                    (key, id) if key == packed => break id,
                    _ => slot = (slot + 1) & (self.short.len() - 1),
                }
            }
        } else if let Some(&id) = self.long.get(word) {
            id
        } else {
            let id = self.new_number(word);
            self.long.insert(word.into(), id);
            id
        };
        (id != STOP).then_some(id)
    }

    fn new_number(&mut self, word: &str) -> u32 {
        if is_stop_word(word) {
            return STOP;
        }
        self.words.push(word.into());
        self.words.len() as u32 - 1
    }

    fn slot(&self, packed: u64) -> usize {
        let bits = self.short.len().trailing_zeros();
        (packed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    fn grow(&mut self) {
        let size = (2 * self.short.len()).max(1024);
        let old = std::mem::replace(&mut self.short, vec![(0, 0); size]);
        for (packed, id) in old.into_iter().filter(|&(packed, _)| packed != 0) {
            let mut slot = self.slot(packed);
            while self.short[slot].0 != 0 {
                slot = (slot + 1) & (self.short.len() - 1);
            }
            self.short[slot] = (packed, id);
        }
    }
}

/// The words' side of a search.
struct WordScores {
    /// Per skill, its BM25 score.
    bm25: Vec<f32>,
    /// Per skill, the query words it matched (bit `n` for the `n`th).
    matched: Vec<u32>,
    /// The number of query words.
    words: f32,
    /// The BM25 score of a skill that would match each query word (that
    /// matches anything) as well as possible; at least 1.
    best_possible: f32,
}

impl WordScores {
    /// `doc`'s score from 0 to 1: its BM25 score over the best possible,
    /// times the share of the query words it matched, so that a skill that
    /// has every word of the query comes before one that has some of them
    /// many times.
    fn score(&self, doc: usize) -> f32 {
        if self.words == 0.0 {
            return 0.0;
        }
        let share = self.matched[doc].count_ones() as f32 / self.words;
        self.bm25[doc] / self.best_possible * share
    }
}

/// The names `skill` answers to, each once: full name, short name, folder
/// name.
fn name_variants<'a>(
    skill: &'a Skill,
    folder: &'a str,
) -> impl Iterator<Item = (Variant, &'a str)> {
    let name = skill.name.as_str();
    let short = skill.short_name();
    [
        Some((Variant::Full, name)),
        (short != name).then_some((Variant::Short, short)),
        (folder != name && folder != short).then_some((Variant::Folder, folder)),
    ]
    .into_iter()
    .flatten()
}

/// The best `limit` (score, skill) pairs offered, best score first, then the
/// lower skill index.
struct Top {
    limit: usize,
    entries: Vec<(f32, usize)>,
}

impl Top {
    fn new(limit: usize) -> Top {
        Top {
            limit,
            entries: Vec::with_capacity(limit + 1),
        }
    }

    fn offer(&mut self, score: f32, doc: usize) {
        let before = |entry: &(f32, usize)| entry.0 > score || (entry.0 == score && entry.1 < doc);
        let at = self.entries.partition_point(before);
        if at < self.limit {
            self.entries.insert(at, (score, doc));
            self.entries.truncate(self.limit);
        }
    }

    fn into_docs(self) -> impl Iterator<Item = usize> {
        self.entries.into_iter().map(|(_, doc)| doc)
    }
}

/// Calls `each` with every word of `text`: lowercase, split at anything that
/// is not a letter or a digit (so `pdf-tools`, `pdf_tools` and `PDF tools`
/// give the same words), each Chinese, Japanese or Korean character a word
/// of its own (those scripts do not separate words), other one-character
/// words dropped. Neither the index nor a query keeps [`STOP_WORDS`].
///
/// ASCII words, most of them, are read as bytes and passed on without a copy
/// unless they have capitals: this runs over every description at each index
/// build, where reading character by character took 11 ms at 10,000 skills.
pub fn words(text: &str, buffer: &mut String, mut each: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii() && !bytes[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i < bytes.len() && !bytes[i].is_ascii() {
            // Other characters follow (or start the word): one by one.
            i = other_words(text, start, buffer, &mut each);
            continue;
        }
        let word = &text[start..i];
        if word.len() < 2 {
            continue;
        }
        if word.bytes().any(|b| b.is_ascii_uppercase()) {
            buffer.clear();
            buffer.push_str(word);
            buffer.make_ascii_lowercase();
            each(buffer);
        } else {
            each(word);
        }
    }
}

/// [`words`] character by character from `start` until the first separator;
/// returns where to go on.
fn other_words(text: &str, start: usize, buffer: &mut String, each: &mut dyn FnMut(&str)) -> usize {
    buffer.clear();
    for (offset, c) in text[start..].char_indices() {
        if c.is_ascii_alphanumeric() {
            buffer.push(c.to_ascii_lowercase());
        } else if c.is_alphanumeric() && !is_ideograph(c) {
            buffer.extend(c.to_lowercase());
        } else {
            if buffer.chars().nth(1).is_some() {
                each(buffer);
            }
            buffer.clear();
            if is_ideograph(c) {
                each(c.encode_utf8(&mut [0; 4]));
            } else {
                return start + offset + c.len_utf8();
            }
        }
    }
    if buffer.chars().nth(1).is_some() {
        each(buffer);
    }
    text.len()
}

/// Chinese, Japanese and Korean characters, which are words (or syllables)
/// of their own.
fn is_ideograph(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}' // hiragana, katakana
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
        | '\u{20000}'..='\u{2FA1F}') // CJK extensions B–F, supplement
}

/// English words too common to tell skills apart (`fill a pdf form`: only
/// `fill`, `pdf`, `form` count). At most eight bytes each (see
/// [`is_stop_word`]).
const STOP_WORDS: [&str; 58] = [
    "about", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for",
    "from", "has", "have", "help", "how", "if", "in", "into", "is", "it", "its", "me", "my",
    "need", "of", "on", "or", "our", "please", "so", "some", "that", "the", "their", "them",
    "then", "these", "this", "those", "to", "us", "want", "was", "we", "what", "when", "which",
    "while", "who", "will", "with", "would", "you", "your",
];

/// [`STOP_WORDS`], [`pack`]ed, in a hash table with open addressing (zero
/// is an empty slot), built at compile time.
static STOP_TABLE: [u64; STOP_SLOTS] = {
    let mut table = [0; STOP_SLOTS];
    let mut i = 0;
    while i < STOP_WORDS.len() {
        let packed = pack(STOP_WORDS[i].as_bytes());
        let mut slot = stop_slot(packed);
        while table[slot] != 0 {
            slot = (slot + 1) % STOP_SLOTS;
        }
        table[slot] = packed;
        i += 1;
    }
    table
};
const STOP_SLOTS: usize = 128;

const fn stop_slot(packed: u64) -> usize {
    (packed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize
}

/// Whether `word` is a stop word: one multiplication and a comparison or
/// two.
fn is_stop_word(word: &str) -> bool {
    if word.len() > 8 {
        return false;
    }
    let packed = pack(word.as_bytes());
    let mut slot = stop_slot(packed);
    loop {
        match STOP_TABLE[slot] {
            0 => return false,
            entry if entry == packed => return true,
            _ => slot = (slot + 1) % STOP_SLOTS,
        }
    }
}

/// Up to eight bytes as a number, zero-padded (no word packs to zero).
const fn pack(bytes: &[u8]) -> u64 {
    let mut padded = [0; 8];
    padded.split_at_mut(bytes.len()).0.copy_from_slice(bytes);
    u64::from_be_bytes(padded)
}

/// The most [`stem`] removes from a word (`mapping` → `map`, and a final `e`
/// or `y`).
const MAX_STEM_CUT: usize = 5;

/// A light, predictable English stemmer that only ever removes a suffix, so
/// that the forms of a word have one stem: plurals (`forms`, `boxes`,
/// `libraries`), `-ing` and `-ed` (with a doubled last consonant undone:
/// `mapping` → `map`), a `y` after a consonant, and a final `e` (so that
/// `create`, `creates`, `creating` and `created` all become `creat`). A stem
/// keeps at least three characters; words with other letters than ASCII are
/// left alone.
///
/// The index keeps words as written; stems only lead a query word to its
/// other forms, which count less than the word itself. Indexing stems
/// instead found fewer targets in the evaluation (`benches/search_eval.py`),
/// (seed 7), whose descriptions use `file` and `files` as different words: 63% in the
/// top 3 at 10,000 skills against 66% without stems; the other forms at half
/// weight keep 66% and find 63% of the queries with a word in another form,
/// against 54% without.
fn stem(word: &str) -> &str {
    if !word.is_ascii() {
        return word;
    }
    let bytes = word.as_bytes();
    let ends = |suffix: &str| word.ends_with(suffix);
    let mut end = word.len();
    if end > 4 && (ends("ies") || ends("ied")) {
        end -= 3;
    } else if end > 4
        && (ends("sses") || ends("xes") || ends("ches") || ends("shes") || ends("zes"))
    {
        end -= 2;
    } else if end > 3 && ends("s") && !(ends("ss") || ends("us") || ends("is")) {
        end -= 1;
    } else if end >= 6 && ends("ing") {
        end = undouble(bytes, end - 3);
    } else if end >= 5 && ends("ed") {
        end = undouble(bytes, end - 2);
    }
    let last = bytes[end - 1];
    if end > 3 && (last == b'e' || last == b'y' && !is_vowel(bytes[end - 2])) {
        end -= 1;
    }
    &word[..end]
}

/// `end`, one shorter when the word up to `end` ends in a doubled consonant
/// other than `l`, `s` or `z` (`mapp` → `map`, but `fill` stays).
fn undouble(bytes: &[u8], end: usize) -> usize {
    let last = bytes[end - 1];
    if end > 3 && last == bytes[end - 2] && !is_vowel(last) && !matches!(last, b'l' | b's' | b'z') {
        end - 1
    } else {
        end
    }
}

fn is_vowel(byte: u8) -> bool {
    matches!(byte, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// Bucket of a word in the fuzzy lookup: its length in characters, capped.
fn bucket(word: &str) -> usize {
    word.chars().count().min(MAX_BUCKET)
}

/// The set of characters of `text` as bits: one per ASCII letter and digit,
/// the rest folded into the remaining bits. One edit changes at most two
/// bits, so words whose masks differ in more are not one edit apart.
fn char_mask(text: &str) -> u64 {
    text.chars().fold(0, |mask, c| {
        let bit = match c {
            'a'..='z' => c as u32 - 'a' as u32,
            '0'..='9' => 26 + c as u32 - '0' as u32,
            _ => 36 + c as u32 % 28,
        };
        mask | 1 << bit
    })
}

/// Whether `a` and `b` are at most one edit apart: a substitution, an
/// insertion, a deletion or two swapped neighbours (optimal string alignment
/// distance ≤ 1), without allocating.
fn within_one_edit<A, B>(mut a: A, mut b: B) -> bool
where
    A: Iterator<Item = char> + Clone,
    B: Iterator<Item = char> + Clone,
{
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(_), None) => return a.next().is_none(),
            (None, Some(_)) => return b.next().is_none(),
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                let (rest_a, rest_b) = (a.clone(), b.clone());
                // Substitution.
                if a.clone().eq(b.clone()) {
                    return true;
                }
                // Deletion from `a` (x is extra) or from `b` (y is extra).
                if std::iter::once(y).chain(rest_b.clone()).eq(rest_a.clone())
                    || std::iter::once(x).chain(rest_a.clone()).eq(rest_b.clone())
                {
                    return true;
                }
                // Swapped neighbours.
                let (mut a2, mut b2) = (rest_a, rest_b);
                return a2.next() == Some(y) && b2.next() == Some(x) && a2.eq(b2);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of `text` a query looks up.
    fn all_words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        words(text, &mut String::new(), |w| {
            if !is_stop_word(w) {
                out.push(w.to_owned());
            }
        });
        out
    }

    #[test]
    fn an_index_built_in_parts_is_the_index_built_at_once() {
        let words = [
            "pdf",
            "form",
            "Tables",
            "extracting",
            "documentation",
            "café",
            "提取",
        ];
        // Enough distinct words to grow the table of short words.
        let skills: Vec<Skill> = (0..50)
            .map(|i| {
                let mut description: Vec<String> = (0..i % 9)
                    .map(|k| words[(i + k) % words.len()].to_owned())
                    .collect();
                description.extend((0..40).map(|k| format!("w{}", i * 40 + k)));
                Skill::for_test(&format!("team:skill-{}", i % 17), &description.join(" "))
            })
            .collect();
        let whole = SearchIndex::build_on(&skills, 1);
        for threads in [2, 3, 7, 50, 60] {
            assert_eq!(
                SearchIndex::build_on(&skills, threads),
                whole,
                "{threads} threads"
            );
        }
        assert_eq!(SearchIndex::build_on(&[], 3), SearchIndex::build_on(&[], 1));
    }

    #[test]
    fn stop_words_are_found_and_nothing_else() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]), "sorted, unique");
        assert!(STOP_WORDS.iter().all(|w| w.len() <= 8));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        for word in [
            "pdf",
            "a",
            "abou",
            "abouts",
            "thes",
            "zzzzzzzzz",
            "yourselves",
        ] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn words_split_lowercase_and_drop_noise() {
        assert_eq!(all_words("Fill a PDF form"), ["fill", "pdf", "form"]);
        assert_eq!(
            all_words("pdf-tools PDF_Tools"),
            ["pdf", "tools", "pdf", "tools"]
        );
        assert_eq!(
            all_words("document-skills:pdf"),
            ["document", "skills", "pdf"]
        );
        assert_eq!(all_words("AI and UI, s3 v2 x"), ["ai", "ui", "s3", "v2"]);
        assert_eq!(all_words("Café Übersetzung"), ["café", "übersetzung"]);
        assert_eq!(all_words("naïve—résumé…ok"), ["naïve", "résumé", "ok"]);
        assert_eq!(all_words("提取PDF表格"), ["提", "取", "pdf", "表", "格"]);
    }

    #[test]
    fn stems_only_remove_suffixes_and_join_word_forms() {
        for (forms, expected) in [
            (&["create", "creates", "creating", "created"][..], "creat"),
            (&["form", "forms", "formed"], "form"),
            (&["file", "files", "filed"], "fil"),
            (&["map", "maps", "mapping", "mapped"], "map"),
            (&["fill", "fills", "filling", "filled"], "fill"),
            (&["library", "libraries"], "librar"),
            (&["box", "boxes"], "box"),
            (&["class", "classes"], "class"),
            (
                &["process", "processes", "processing", "processed"],
                "process",
            ),
            (&["deploy", "deploys", "deploying", "deployed"], "deploy"),
            (&["spreadsheet", "spreadsheets"], "spreadsheet"),
        ] {
            for form in forms {
                assert_eq!(stem(form), expected, "{form}");
            }
        }
        for kept in ["pdf", "use", "analysis", "status", "docx", "größe"] {
            assert_eq!(stem(kept), kept);
        }
    }

    #[test]
    fn one_edit_is_a_substitution_insertion_deletion_or_swap() {
        for (a, b) in [
            ("spreadsheet", "spreadsheet"),
            ("spredsheet", "spreadsheet"),
            ("spreadsheet", "spredsheet"),
            ("spreadshete", "spreadsheet"),
            ("spreadshoet", "spreadsheet"),
            ("xspreadsheet", "spreadsheet"),
            ("spreadsheetx", "spreadsheet"),
            ("größe", "grüße"),
        ] {
            assert!(within_one_edit(a.chars(), b.chars()), "{a} ~ {b}");
        }
        for (a, b) in [
            ("spredshet", "spreadsheet"),
            ("sperdsheet", "spreadsheet"),
            ("abcde", "edcba"),
            ("abc", "abcde"),
        ] {
            assert!(!within_one_edit(a.chars(), b.chars()), "{a} !~ {b}");
        }
    }

    #[test]
    fn masks_differ_in_at_most_two_bits_after_one_edit() {
        let base = char_mask("spreadsheet");
        for edited in ["spredsheet", "spreadshext", "sprxadsheet", "spraedsheet"] {
            assert!((char_mask(edited) ^ base).count_ones() <= 2, "{edited}");
        }
    }
}
